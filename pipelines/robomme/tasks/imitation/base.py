"""What the Imitation suite's tasks share: their base class, constants and helpers
(the suite: the package docstring; each task: its own module)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.manip.planner import PlanningFailed
from dataforge.pipelines.robomme import assets, objects, skills
from dataforge.pipelines.robomme.env import PARK_Z, RobommeEnv, pixel_of
from dataforge.pipelines.robomme.layouts import upstream_layout

if TYPE_CHECKING:
    from mani_skill.envs.scene import ManiSkillScene
    from mani_skill.utils.structs import Actor, Link


NUDGES = (0.0, 0.0005, -0.0005, 0.001, -0.001, 0.0015)
RESTAGE_WAIT = 60  # the video's last waypoint waits at most this long for the restaging
PEG_LIFT = 0.2  # subgoal_planner_func.py grasp_and_lift_peg_side: lift_height
PICKED_Z = 0.05  # subgoal_evaluate_func.py is_obj_pickup: above 0.05 m and grasped

_Anchor = Callable[[], np.ndarray]  # a subgoal's anchor point, read when the step is taken


def wrap(a: float) -> float:
    """``a`` folded into [-pi, pi)."""
    return float((a + np.pi) % (2 * np.pi) - np.pi)


class _Imitation(RobommeEnv):
    """Video phase, then a restaging, then the execution phase; ``phase`` says which."""

    SUITE = "Imitation"
    VIDEO = True

    def reset_events(self) -> None:
        self.phase = "video"
        self.reset_task_events()

    def tick(self) -> None:
        if self.phase == "video":
            self.tick_video()
            if self.demo_over():
                self.restage()
                self.phase = "exec"
                self.reset_task_events()
        else:
            self.tick_exec()

    def check(self) -> tuple[bool, str | None]:
        return self.phase == "exec" and self.done, None

    def online_entry(self) -> int | None:
        """Upstream's task list is the video's entries, NO-RECORD ones, the execution's: the
        entry its check is at, counted over the recorded ones (``phase_entries`` per phase,
        ``entries_passed`` of this phase's done; past the video's last, the execution's
        first)."""
        video, run = self.phase_entries()
        passed = self.entries_passed()
        if self.phase == "video":
            return min(passed, video)
        return video + min(passed, run - 1)

    def phase_entries(self) -> tuple[int, int]:
        """The recorded task-list entries of the video and of the execution."""
        raise NotImplementedError

    def entries_passed(self) -> int:
        """This phase's recorded entries whose check has passed."""
        raise NotImplementedError

    def subgoal(
        self,
        simple: str,
        grounded: str,
        waypoints: Sequence[Waypoint],
        *,
        video: bool,
        choice: str = "",
        segment: Sequence[str] = (),
        anchor: Callable[[], np.ndarray] | None = None,
    ) -> Subgoal:
        """A subgoal whose waypoints the screw planner reaches; ``choice``: upstream's
        ``choice_label`` of the task-list entry; ``segment``: the actors (articulations) whose
        pixels the grounded text's ``<row, col>`` s name, in order (upstream's ``segment``);
        ``anchor``: the first one's position now (the ``choice_action`` point)."""
        wps = self.reachable(waypoints)
        return Subgoal(
            simple,
            grounded,
            wps,
            video=video,
            choice=choice,
            segment=tuple(segment),
            anchor=anchor,
        )

    def no_record(self, waypoints: Sequence[Waypoint]) -> Subgoal:
        """Upstream's "NO RECORD" task-list entry (``demonstration=True``): simulated, left out
        of the stored demonstration."""
        wps = self.reachable(waypoints)
        return Subgoal("NO RECORD", "NO RECORD", wps, video=True, record=False)

    def reachable(self, waypoints: Sequence[Waypoint]) -> list[Waypoint]:
        """The waypoints, each nudged up or down by a fraction of a millimetre where needed
        so that the executor's screw planner reaches it: mplib 0.1.1 rejects a screw motion
        whose last integration step happens to be shorter than 1e-4, which depends only on
        the start joints and the goal. The chain is planned from the arm's commanded joints,
        as the executor does (its noise detours, when enabled, are not foreseen)."""
        planner, q = self.planner_at_command()
        out: list[Waypoint] = []
        for k, wp in enumerate(waypoints):
            again = k > 0 and wp.pose is not None and wp.pose is waypoints[k - 1].pose
            if wp.pose is None or callable(wp.pose) or wp.path or again:
                out.append(wp)  # nothing to plan here (yet), or a second motion to the same pose
                continue
            for dz in NUDGES:
                pose = np.array(wp.pose, dtype=np.float64)
                pose[2] += dz
                try:
                    q[: planner.dof] = planner.plan(q, pose)[-1]
                except PlanningFailed:
                    continue
                out.append(dataclasses.replace(wp, pose=pose))
                break
            else:
                out.append(wp)  # unreachable anyway: the executor reports it
        return out

    def restaged(self, gripper: float | None = None) -> Waypoint:
        """Hold (the gripper as commanded, default: as it is now) until the env has restaged
        the scene."""
        cmd = self._gripper_cmd() if gripper is None else gripper
        return Waypoint(None, cmd, hold=RESTAGE_WAIT, until=self._in_exec)

    def _in_exec(self) -> bool:
        return self.phase == "exec"

    def _gripper_cmd(self) -> float:
        return CLOSED if self.gripper_closed() else OPEN

    # -- the task's hooks ----------------------------------------------------------------
    def reset_task_events(self) -> None:
        """Reset the per-phase event flags (at reset and again when execution starts)."""

    def tick_video(self) -> None:
        """Follow the demonstration's events."""

    def demo_over(self) -> bool:
        raise NotImplementedError

    def restage(self) -> None:
        raise NotImplementedError

    def tick_exec(self) -> None:
        raise NotImplementedError


# -- upstream layouts and poses (all four tasks) ------------------------------------------------


def upstream_dict(task: str, seed: int, difficulty: str) -> dict[str, Any]:
    """The JSON-able layout of an episode: ``upstream_layout``'s actors, articulations and
    params (``layouts/imitation.py`` replays the upstream draws bit-exactly)."""
    lay = upstream_layout(task, seed, difficulty)
    return {
        "actors": {k: list(v) for k, v in lay.actors.items()},
        "articulations": {k: list(v) for k, v in lay.articulations.items()},
        "params": json.loads(json.dumps(lay.params)),
    }


def flipped(q: np.ndarray) -> np.ndarray:
    """``q`` (wxyz) turned half a round about its x axis, as ``grasp_and_lift_peg_side``
    computes it: float32, ManiSkill's ``quaternion_multiply`` (real part made non-negative)
    with the XYZ-Euler (pi, 0, 0) quaternion, normalised."""
    import torch
    from mani_skill.utils.geometry.rotation_conversions import (
        euler_angles_to_matrix,
        matrix_to_quaternion,
        quaternion_multiply,
    )

    flip = matrix_to_quaternion(
        euler_angles_to_matrix(torch.tensor([[np.pi, 0.0, 0.0]], dtype=torch.float32), "XYZ")
    )[0]
    out = quaternion_multiply(torch.as_tensor(q, dtype=torch.float32)[None], flip[None])[0]
    out = out.numpy().astype(np.float32)
    norm = np.linalg.norm(out)
    return out / norm if norm > 0 else out


def grasp_and_lift(env: RobommeEnv, link: Link) -> list[Waypoint] | None:
    """``grasp_and_lift_peg_side``: open (6 steps), above the link at 0.2 m with the link's
    orientation turned half a round about x, down onto its centre, close (6 steps), back up
    to 0.2 m, close again (6 steps); the link's pose read after the first open. Keyframes:
    "open" above, "close" at the link and above. None where a screw motion from here cannot
    reach that chain."""
    poses: list[np.ndarray] = []

    def grasp_pose() -> np.ndarray:
        pose = link.pose
        p = pose.p[0].cpu().numpy().astype(np.float32)
        return np.concatenate([p, flipped(pose.q[0].cpu().numpy())]).astype(np.float64)

    def lifted(pose: np.ndarray) -> np.ndarray:
        up = pose.copy()
        up[2] = np.float32(PEG_LIFT)
        return up

    def read(k: int) -> Callable[[], np.ndarray]:
        def pose() -> np.ndarray:  # read once, after the first open (as upstream)
            if not poses:
                poses.append(grasp_pose())
            return poses[0] if k == 1 else lifted(poses[0])

        return pose

    now = grasp_pose()
    if not env.chain_reaches([lifted(now), now, lifted(now)]):
        return None
    return [
        Waypoint(None, OPEN, hold=skills.TOGGLE_STEPS),
        Waypoint(read(0), OPEN),
        Waypoint(read(1), OPEN, noisy=False, grasp="peg", key=CLOSED),
        Waypoint(None, CLOSED, hold=skills.TOGGLE_STEPS),
        Waypoint(read(2), CLOSED),
        Waypoint(None, CLOSED, hold=skills.TOGGLE_STEPS),
    ]


def angle_px(env: RobommeEnv, point: np.ndarray) -> str:
    """``<row, col>``: the front-camera pixel of ``point``, as upstream fills a ``<>``."""
    row, col = pixel_of(env, point)
    return f"<{row}, {col}>"


def pose_of(pose7: Sequence[float]) -> sapien.Pose:
    """A SAPIEN pose from [x, y, z, qw, qx, qy, qz]."""
    return sapien.Pose(p=[float(v) for v in pose7[:3]], q=[float(v) for v in pose7[3:7]])


# -- a stick attached to the end effector (PatternLock, RouteStick) -------------------------

# Upstream (PatternLock.py / RouteStick.py) runs these two tasks on the gripperless
# ``panda_stick`` (``robots.py``), whose TCP is the stick's tip.
SWING_Z = 0.07  # subgoal_planner_func.py solve_swingonto / solve_swingonto_withDirection
REACH_Z = 0.1  # subgoal_evaluate_func.py is_obj_swing_onto: z_threshold default
HIGHLIGHT_STEPS = 40  # PatternLock.py / RouteStick.py step(): highlights last 40 steps
TRACE_POOL = HIGHLIGHT_STEPS + 1  # one sphere a step, each visible for steps s .. s + 40
TRACE_R = 0.005  # highlight_position(disk_radius=0.005): a white sphere at z 0.01
TRACE_Z = 0.01
TRACE_VISIBILITY = 0.1  # statechange.py highlight_position: set_visibility(0.1)
RING_R = 0.02 * 1.002  # highlight_obj(disk_radius=0.02 * 1.002, disk_half_length=0.02 * 1.002)
RING_THICKNESS = 2 * 0.01 * 2 * 1.002
RING_DZ = -0.01  # statechange.py highlight_obj: the disk 1 cm below the object
TARGET_R, TARGET_THICKNESS = 0.02, 0.01  # build_gray_white_target(radius=0.02, thickness=0.01)


def trace_sphere(scene: ManiSkillScene, name: str) -> Actor:
    """One of the pre-built trace spheres (upstream creates one per step at run time): white,
    r 5 mm, drawn at visibility 0.1 (set once here: a constant of the actor)."""
    b = scene.create_actor_builder()
    b.add_sphere_visual(radius=TRACE_R, material=objects.material((1.0, 1.0, 1.0, 1.0)))
    b.initial_pose = sapien.Pose(p=[0.0, 0.0, PARK_Z])
    actor = b.build_kinematic(name=name)
    for obj in actor._objs:
        for comp in obj.components:
            if isinstance(comp, sapien.render.RenderBodyComponent):
                comp.visibility = TRACE_VISIBILITY
    return actor


def red_ring(scene: ManiSkillScene, name: str) -> Actor:
    """Upstream's touched-target highlight (``highlight_obj(use_target_style=True)`` with
    colour [1, 0, 0]): five concentric discs, pure red and white, r 2.004 cm, 4 cm thick,
    axes along the actor's x like ``assets.ring_target`` (the pose turns it upright). Built
    here because ``assets.ring_target`` only knows the targets' (200, 33, 33) red."""
    b = scene.create_actor_builder()
    for k in range(5):
        rgb = (1.0, 0.0, 0.0, 1.0) if k % 2 == 0 else (1.0, 1.0, 1.0, 1.0)
        b.add_cylinder_visual(
            radius=RING_R * (5 - k) / 5,
            half_length=RING_THICKNESS / 2 + k * 1e-5,
            material=objects.material(rgb),
        )
    b.initial_pose = sapien.Pose(p=[0.0, 0.0, PARK_Z])
    return b.build_kinematic(name=name)


def tip_pose(point: np.ndarray) -> np.ndarray:
    """The TCP pose (pointing down, as at the start) that puts the stick tip at ``point``."""
    return objects.top_grasp(np.asarray(point, dtype=np.float64), 0.0)


class _StickTask(_Imitation):
    """Upstream's stick tasks: ring targets ``target_<k>`` (gray/white, r 2 cm); the robot's
    stick moves over ``path`` (target indices). Per step (upstream ``step()``): a trace sphere
    under the tip while it is below 0.1 m, each kept 40 steps; every target the tip reaches
    (``REACH_R``, z < 0.1) gets a red ring overlay for 40 steps. Both are pre-built pools.
    Execution: the path must be followed from its first target; reaching a target other than
    the expected one and the previous one (1 cm, z < 0.1: ``_wrong_button_touch``) fails."""

    joint_vel_scale = 0.3  # upstream's stick planner: PandaStickMotionPlanningSolver(0.3)
    REACH_R = 0.01  # the highlight's reach radius
    STRONG_RESET = skills.STRONG_RESET_STEPS  # solve_strong_reset: steps the reset action is held
    MOVE_R = 0.01  # a move's check: the tip within this of the next target
    MOVE_Z = REACH_Z

    # -- scene ----------------------------------------------------------------------------
    def sample_layout(self) -> dict[str, Any]:
        return upstream_dict(self.TASK, self.episode_seed, self.difficulty)

    def build_targets(self, names: Sequence[str]) -> None:
        """Upstream's targets (``build_gray_white_target``), in upstream's order."""
        self.targets = [
            assets.ring_target(self.scene, n, TARGET_R, TARGET_THICKNESS, "gray") for n in names
        ]

    def build_pools(self) -> None:
        """After upstream's actors: the red rings and the trace spheres."""
        self.overlays = [red_ring(self.scene, f"highlight_{t.name}") for t in self.targets]
        self.trace = [trace_sphere(self.scene, f"trace_{k}") for k in range(TRACE_POOL)]

    def place_targets(self) -> None:
        actors = self.layout["actors"]
        self.target_pose = [actors[a.name] for a in self.targets]
        self.target_xy = [np.array(p[:2], dtype=np.float64) for p in self.target_pose]
        for actor, p in zip(self.targets, self.target_pose, strict=True):
            actor.set_pose(pose_of(p))
        self.park_pools()

    def park_pools(self) -> None:
        for actor in (*self.overlays, *self.trace):
            actor.set_pose(self.park_pose())
        self.ring_start: dict[int, int] = {}
        self.trace_laid: dict[int, int] = {}  # pool slot -> step laid

    @property
    def path(self) -> list[int]:
        return list(self.layout["params"]["path" if self.TASK == "PatternLock" else "route"])

    # -- per-step scene dynamics (upstream step()) -----------------------------------------
    def tip(self) -> np.ndarray:
        """The stick tip: the TCP (read from SAPIEN directly)."""
        return np.asarray(self.agent.tcp._objs[0].entity_pose.p, dtype=np.float64)

    def reaches(self, k: int, radius: float, z_max: float = REACH_Z) -> bool:
        """``is_obj_swing_onto``: the tip within ``radius`` of target ``k`` (xy), below z_max."""
        tip = self.tip()
        return tip[2] < z_max and float(np.hypot(*(tip[:2] - self.target_xy[k]))) <= radius

    def draw_highlights(self) -> None:
        t = self.t
        tip = self.tip()
        for slot, laid in list(self.trace_laid.items()):
            if t > laid + HIGHLIGHT_STEPS:
                self.trace[slot].set_pose(self.park_pose())
                del self.trace_laid[slot]
        if tip[2] < REACH_Z:
            slot = t % TRACE_POOL
            self.trace[slot].set_pose(sapien.Pose(p=[float(tip[0]), float(tip[1]), TRACE_Z]))
            self.trace_laid[slot] = t
        for k in range(len(self.targets)):
            if self.reaches(k, self.REACH_R):
                self.ring_start[k] = t
        for k, start in self.ring_start.items():
            if start <= t <= start + HIGHLIGHT_STEPS:
                p = self.target_pose[k]
                self.overlays[k].set_pose(pose_of([p[0], p[1], p[2] + RING_DZ, *p[3:]]))
            else:
                self.overlays[k].set_pose(self.park_pose())

    # -- events ---------------------------------------------------------------------------
    def reset_task_events(self) -> None:
        self.progress = 0  # path targets reached so far in this phase
        self.xy_trace: list[np.ndarray] = []  # the tip's xy during an execution move

    def tick_video(self) -> None:
        self.draw_highlights()
        path = self.path
        if self.progress < len(path) and self.reaches(path[self.progress], self.MOVE_R):
            self.progress += 1

    def tick_exec(self) -> None:
        self.draw_highlights()
        path = self.path
        if self.progress == 0:  # the restaging brings the tip back onto the first target
            if self.reaches(path[0], self.MOVE_R, self.MOVE_Z):
                self.progress = 1
            return
        if self.progress >= len(path):
            return
        if self.progress == 1 and self.reaches(path[0], self.MOVE_R, self.MOVE_Z):
            # upstream traces from the end of the NO-RECORD entries (the tip back on the first
            # target): the way back there, through the start pose, is not part of move 1
            self.xy_trace = []
        self.xy_trace.append(self.tip()[:2].copy())
        expected, last = path[self.progress], path[self.progress - 1]
        if self.reaches(expected, self.MOVE_R, self.MOVE_Z):
            reason = self.move_done(self.progress)
            self.xy_trace = []
            if reason is not None:
                self.failure_reason = reason
                return
            self.progress += 1
            self.done = self.progress == len(path)
            return
        for k in range(len(self.targets)):
            if k not in (expected, last) and self.reaches(k, 0.01):
                self.failure_reason = f"touched {self.targets[k].name} out of the shown order"

    def move_done(self, step: int) -> str | None:
        """Extra rule when move ``step`` reaches its target (None: fine)."""
        return None

    def phase_entries(self) -> tuple[int, int]:
        moves = len(self.path) - 1
        return moves, moves

    def entries_passed(self) -> int:
        """The moves done: ``progress`` counts the targets reached, the first included."""
        return max(self.progress - 1, 0)

    def demo_over(self) -> bool:
        return self.progress == len(self.path) and self.tip()[2] > REACH_Z

    def restage(self) -> None:
        """Nothing moves: upstream's restaging is the robot's return (strong resets)."""

    # -- the oracle -----------------------------------------------------------------------
    def swing_pose(self, k: int) -> np.ndarray:
        """``solve_swingonto``: the tip over target ``k`` at 0.07 m."""
        return tip_pose(np.array([*self.target_xy[k], SWING_Z]))

    def to_first(self) -> list[Waypoint]:
        """Upstream's first video entry ("NO RECORD", ``solve_swingonto``): onto the first
        target (the same two screw motions)."""
        return self.swing_onto(self.path[0])

    def swing_onto(self, k: int) -> list[Waypoint]:
        """``solve_swingonto``: two screw motions onto the tip over target ``k`` at 0.07 m
        (the executor plans from the measured joints, as upstream's solver: the second
        corrects the first's end error in a few steps). Upstream records the keyframe before
        the second motion only, with the TCP's orientation."""
        pose = self.swing_pose(k)
        key = np.concatenate([pose[:3], self.tcp_quat()])
        return [
            Waypoint(pose, CLOSED, keyed=False),  # free space: a --noise detour may precede it
            Waypoint(pose, CLOSED, noisy=False, key_pose=key),
        ]

    def strong_reset(self) -> list[Waypoint]:
        """Upstream's first NO-RECORD strong reset (``solve_strong_reset(gripper="stick")``:
        no gripper to open; the reset joint action held ``STRONG_RESET`` steps)."""
        return skills.strong_reset(self.STRONG_RESET, open_first=False)

    def back_to_first(self) -> list[Waypoint]:
        """The second (``solve_strong_reset(action=swing_qpos)``): the joints the arm had on
        the first target after the video's first entry, held 30 steps."""
        return [Waypoint(None, CLOSED, hold=skills.STRONG_RESET_STEPS, joints=self.swing_qpos)]

    def move_waypoints(self, step: int) -> list[Waypoint]:
        raise NotImplementedError

    def task_names(self) -> list[str]:
        """Upstream's task list names (NO-RECORD entries included): onto the first target,
        the moves, the two strong resets, the moves again."""
        moves = [self.move_name(step) for step in range(1, len(self.path))]
        return ["NO RECORD", *moves, "NO RECORD", "NO RECORD", *moves]

    def move_name(self, step: int) -> str:
        raise NotImplementedError

    def plan(self) -> Iterator[Subgoal]:
        """Upstream's task list: onto the first target (NO RECORD), the moves, the strong reset
        (NO RECORD), back onto the first target (NO RECORD: the strong reset to
        ``swing_qpos``), the moves again."""
        n = len(self.path) - 1
        yield self.no_record(self.to_first())
        # solve_swingonto(record_swing_qpos=True): the joints once on the first target
        self.swing_qpos = self.agent.robot.get_qpos()[0, :7].cpu().numpy().astype(np.float64)
        for video in (True, False):
            for step in range(1, n + 1):
                name = self.move_name(step)
                wps = self.move_waypoints(step)
                yield self.subgoal(name, name, wps, video=video, choice=name)
            if video:
                yield self.no_record(self.strong_reset())
                yield self.no_record(self.back_to_first())
