"""The RoboMME tabletop: a ManiSkill env with the Franka Panda (wrist camera), a table, a front
camera, and the hooks every task fills in.

A task subclass defines, for its ``difficulty``:

- ``sample_layout()``: everything random about the episode (counts, colours, poses,
  repetitions, ...): RoboMME's own draws from the episode seed (``layouts/``), so a released
  seed and difficulty give the released scene;
- ``build()``: its actors (called at every reset: the scene is rebuilt so counts may vary);
- ``place()``: their initial poses;
- ``tick()``: scripted scene dynamics after each control step (containers sliding, cubes
  appearing, a button's effect), driven by ``self.t`` and the task's own event flags;
- ``check() -> (success, failure_reason | None)``, and ``online_entry()``: the task-list entry
  that check is at;
- ``goals()`` (the language goal's phrasings; ``goal()`` is the first) and ``plan()`` (the
  oracle: a generator of :class:`~dataforge.manip.executor.Subgoal` s, reading the scene
  between subgoals).

Everything a camera sees must be an actor pose (hidden actors are parked below the floor), so
replaying saved env states through the cameras reproduces every frame.

This module imports ManiSkill at import time: import it (and ``tasks``) only after
:func:`dataforge.pipelines.robomme.sim.require_sim` has checked the extra and chosen the Vulkan
driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import sapien
import torch
from mani_skill.envs.sapien_env import BaseEnv
from mani_skill.sensors.camera import CameraConfig
from mani_skill.utils import common, sapien_utils
from mani_skill.utils.scene_builder.table import TableSceneBuilder

from dataforge.manip.executor import Subgoal
from dataforge.manip.grasp import GraspSensor
from dataforge.manip.planner import ArmPlanner, PlanningFailed
from dataforge.pipelines.robomme.robots import ARM_ROBOT, STICK_ROBOT
from dataforge.pipelines.robomme.suites import STICK_TASKS

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor, Link


DIFFICULTIES = ("easy", "medium", "hard")
FRONT_CAMERA = "front_camera"
WRIST_CAMERA = "hand_camera"  # panda_wristcam's sensor (and robots.STICK_ROBOT's)
# RoboMME's cameras (every upstream task's ``_default_sensor_configs``): the front camera
# across the table looking down at the robot, 256 px (the pixels named in grounded subgoal
# texts are in this image), fov 90 degrees, far plane 100 m; the wrist camera is the robot's
# ``hand_camera`` (fov 90 degrees), at the same size.
FRONT_EYE, FRONT_TARGET = (0.3, 0.0, 0.4), (0.0, 0.0, -0.2)
FRONT_FOVY = np.pi / 2
FRONT_SIZE = 256
CAMERA_NEAR, CAMERA_FAR = 0.01, 100.0
# The arm's start (RoboMME ``utils/reset_panda.py``): joints 1-7 and both fingers open (the
# stick robot: the 7 joints).
START_QPOS = (0.0, 0.0, 0.0, -np.pi / 2, 0.0, np.pi / 2, np.pi / 4, 0.04, 0.04)
PARK_Z = -3.0  # hidden actors wait here, below the floor (z = -0.92)
TABLE_Z = 0.0


class RobommeEnv(BaseEnv):
    SUPPORTED_ROBOTS: ClassVar = [ARM_ROBOT, STICK_ROBOT]
    TASK: ClassVar[str] = ""
    SUITE: ClassVar[str] = ""
    VIDEO: ClassVar[bool] = False  # the episode starts with a conditioning video

    def __init__(self, *args: Any, difficulty: str = "easy", **kwargs: Any) -> None:
        if difficulty not in DIFFICULTIES:
            raise ValueError(f"difficulty must be one of {DIFFICULTIES}, got {difficulty!r}")
        self.difficulty = difficulty
        self.episode_seed = 0
        self.recovery = False  # RoboMME's recovery draw is part of this episode's layout
        self.recovery_mode: str | None = None  # and its kind: "z" (above) or "xy" (beside)
        self.layout: dict[str, Any] = {}
        self.t = 0
        self.failure_reason: str | None = None
        self._parked = 0
        self._grasp: GraspSensor | None = None
        self.state_dim = 0
        kwargs.setdefault("robot_uids", ARM_ROBOT if self.has_gripper else STICK_ROBOT)
        kwargs.setdefault("control_mode", "pd_joint_pos")
        kwargs.setdefault("sim_backend", "cpu")
        kwargs.setdefault("render_backend", "cpu")
        super().__init__(*args, **kwargs)

    # -- ManiSkill hooks -------------------------------------------------------------------
    @property
    def _default_sensor_configs(self) -> list[CameraConfig]:
        pose = sapien_utils.look_at(eye=list(FRONT_EYE), target=list(FRONT_TARGET))
        return [
            CameraConfig(
                FRONT_CAMERA, pose, FRONT_SIZE, FRONT_SIZE, FRONT_FOVY, CAMERA_NEAR, CAMERA_FAR
            )
        ]

    @property
    def _default_human_render_camera_configs(self) -> CameraConfig:
        pose = sapien_utils.look_at(eye=[0.7, 0.5, 0.6], target=[-0.1, 0.0, 0.05])
        return CameraConfig("render_camera", pose, 512, 512, 1.0, 0.01, 10)

    def _load_agent(self, options: dict) -> None:
        super()._load_agent(options, sapien.Pose(p=[-0.615, 0, 0]))

    def reset(self, seed: Any = None, options: dict | None = None) -> Any:
        options = dict(options or {})
        if seed is not None:
            first: Any = seed if np.isscalar(seed) else seed[0]
            self.episode_seed = int(first)
        # upstream draws the missed grasp's pick from the layout generator: with recovery on,
        # later draws of some tasks shift (pass 2 resets with the same option)
        mode = options.pop("recovery", None)
        self.recovery_mode = mode if isinstance(mode, str) else None
        self.recovery = bool(mode)
        self.layout = self.sample_layout()
        self.t = 0
        self.failure_reason = None
        self._grasp = None
        options["reconfigure"] = True
        return super().reset(seed=self.episode_seed, options=options)

    def _after_reconfigure(self, options: dict) -> None:
        """Every reset rebuilds the scene with the episode's own actors (their names carry
        colours, their number varies). ManiSkill's ``set_state`` splits a flat state vector by
        the actors in ``_init_raw_state``, which its constructor takes once, from the scene of
        seed 2022: take it again from the scene just built, or a replayed state lands on the
        wrong actors (a ``KeyError`` when names differ, silently when only their order does)."""
        super()._after_reconfigure(options)
        self._init_raw_state = common.to_cpu_tensor(self.get_state_dict())
        self.state_dim = sum(
            s.shape[-1] for group in self._init_raw_state.values() for s in group.values()
        )

    def state_keys(self) -> list[str]:
        """The actors and articulations whose states a flat state vector of this scene holds,
        in order (static actors have none)."""
        return [f"{group}/{name}" for group, d in self._init_raw_state.items() for name in d]

    def set_state(self, state: torch.Tensor, env_idx: torch.Tensor | None = None) -> None:
        if state.shape[-1] != self.state_dim:
            raise ValueError(
                f"a state vector of {state.shape[-1]} values for a {type(self).__name__} scene "
                f"of {self.state_dim} (seed {self.episode_seed}): the scene is not the one the "
                "states were saved from"
            )
        super().set_state(state, env_idx)

    def _load_scene(self, options: dict) -> None:
        self.table_scene = TableSceneBuilder(self, robot_init_qpos_noise=0)
        self.table_scene.build()
        self._parked = 0
        self.build()

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        with torch.device(self.device):
            self.table_scene.initialize(env_idx)
            qpos = START_QPOS if self.has_gripper else START_QPOS[:7]
            self.agent.reset(torch.tensor(qpos, dtype=torch.float32))
            self.done = False
            self.reset_events()
            self.place()

    def _after_control_step(self) -> None:
        self.t += 1
        if self._grasp is not None:
            self._grasp.invalidate()
        self.tick()

    def set_state_dict(self, state: dict, env_idx: torch.Tensor | None = None) -> None:
        super().set_state_dict(state, env_idx)
        if self._grasp is not None:
            self._grasp.invalidate()

    def evaluate(self) -> dict[str, torch.Tensor]:
        success, reason = self.check()
        if reason is not None and self.failure_reason is None:
            self.failure_reason = reason
        fail = self.failure_reason is not None
        out = {"success": torch.tensor([bool(success) and not fail]), "fail": torch.tensor([fail])}
        online = self.online_entry()
        if online is not None:
            out["subgoal_online"] = torch.tensor([online])
        return out

    def _get_obs_extra(self, info: dict) -> dict[str, Any]:
        return {"tcp_pose": self.agent.tcp.pose.raw_pose}

    def compute_dense_reward(self, obs: Any, action: Any, info: dict) -> torch.Tensor:
        return torch.zeros(1)

    def compute_normalized_dense_reward(self, obs: Any, action: Any, info: dict) -> torch.Tensor:
        return torch.zeros(1)

    # -- helpers for tasks -----------------------------------------------------------------
    def park_pose(self) -> sapien.Pose:
        """A distinct pose below the floor for a hidden actor."""
        self._parked += 1
        return sapien.Pose(p=[3.0 + 0.3 * self._parked, 3.0, PARK_Z])

    def tcp_position(self) -> np.ndarray:
        return self.agent.tcp.pose.p[0].cpu().numpy().astype(np.float64)

    def tcp_quat(self) -> np.ndarray:
        """The TCP's orientation now (wxyz)."""
        return self.agent.tcp.pose.q[0].cpu().numpy().astype(np.float64)

    @property
    def has_gripper(self) -> bool:
        """False for the tasks RoboMME runs on its gripperless stick robot."""
        return self.TASK not in STICK_TASKS

    def is_grasping(self, actor: Actor | Link) -> bool:
        """ManiSkill's ``Panda.is_grasping`` (both fingers press on ``actor``), computed once
        per physics state for all actors (never, for the stick robot)."""
        if not self.has_gripper:
            return False
        if self._grasp is None or self._grasp.scene is not self.scene:
            self._grasp = GraspSensor(self.scene, self.agent.finger1_link, self.agent.finger2_link)
        return self._grasp.is_grasping(actor)

    def gripper_closed(self) -> bool:
        """The fingers are commanded closed (their joint targets below 1 cm); the stick robot
        counts as closed (RoboMME pads its actions with -1, "closed")."""
        if not self.has_gripper:
            return True
        return float(self.agent.robot.get_qpos()[0, -1]) < 0.01

    def planner_at_command(self) -> tuple[ArmPlanner, np.ndarray]:
        """This env's planner (built once) and the robot's joints with the arm at its
        commanded targets, where the executor plans from."""
        if getattr(self, "_arm_planner", None) is None:
            self._arm_planner = ArmPlanner(self)
        planner = self._arm_planner
        q = self.agent.robot.get_qpos()[0].cpu().numpy().astype(np.float64)
        target = self.agent.controller.controllers["arm"]._target_qpos
        q[: planner.dof] = target[0].cpu().numpy()
        return planner, q

    def chain_reaches(self, poses: Sequence[np.ndarray | Callable[[], np.ndarray]]) -> bool:
        """Whether the screw planner reaches ``poses`` one after the other from the arm's
        commanded joints (a callable pose: the pose it returns now)."""
        planner, q = self.planner_at_command()
        try:
            for pose in poses:
                pose = pose() if callable(pose) else pose  # read now
                q[: planner.dof] = planner.plan(q, pose)[-1]
        except (PlanningFailed, RuntimeError):
            return False
        return True

    # -- the task's hooks ------------------------------------------------------------------
    def sample_layout(self) -> dict[str, Any]:
        raise NotImplementedError

    def build(self) -> None:
        raise NotImplementedError

    def place(self) -> None:
        raise NotImplementedError

    def reset_events(self) -> None:
        """Reset the task's event flags (counts, pressed buttons) at the start of an episode
        (``self.done`` is reset before this)."""

    def tick(self) -> None:
        """Scripted scene dynamics after each control step (default: none)."""

    def check(self) -> tuple[bool, str | None]:
        """(success, immediate-failure reason or None) after this step. Default: success once
        the task's ``tick`` has set ``self.done`` (reset to False at every episode start)."""
        return self.done, None

    def online_entry(self) -> int | None:
        """The task-list entry the task's sequential check examined at this step, counted
        over the plan's recorded subgoals (RoboMME's ``simple_subgoal_online``: it moves on
        the step after an entry's check first passes and stays on the last entry once all
        are done). Every task has one."""
        raise NotImplementedError

    def goals(self) -> list[str]:
        """Every phrasing of the language goal (RoboMME's ``task_goal`` list)."""
        raise NotImplementedError

    def goal(self) -> str:
        """The language goal: the first phrasing."""
        return self.goals()[0]

    def plan(self) -> Iterator[Subgoal]:
        raise NotImplementedError


def front_camera_cv() -> tuple[np.ndarray, np.ndarray]:
    """The front camera's OpenCV intrinsics ``K`` (3x3, at ``FRONT_SIZE``) and world-to-camera
    extrinsics (3x4), from its configuration alone (no renderer needed)."""
    eye, target = np.asarray(FRONT_EYE), np.asarray(FRONT_TARGET)
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    rot = np.stack([right, down, forward])  # rows: the camera's x, y, z axes in the world
    ext = np.concatenate([rot, -(rot @ eye)[:, None]], axis=1)
    f = FRONT_SIZE / 2 / np.tan(FRONT_FOVY / 2)
    k = np.array([[f, 0.0, FRONT_SIZE / 2], [0.0, f, FRONT_SIZE / 2], [0.0, 0.0, 1.0]])
    return k, ext


def pixel_of(env: BaseEnv, point: np.ndarray) -> list[int]:
    """The [row, col] pixel of a world point in the front camera's 256 px image (OpenCV
    convention; ``env`` is unused, kept so task code reads ``pixel_of(self, p)``)."""
    k, ext = front_camera_cv()
    uvw = k @ (ext[:3, :3] @ np.asarray(point, dtype=np.float64) + ext[:3, 3])
    return [round(uvw[1] / uvw[2]), round(uvw[0] / uvw[2])]
