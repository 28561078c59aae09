"""Run keyframe waypoints on a ManiSkill env as dense joint-space actions, recording each step.

A plan is a sequence of :class:`Subgoal` s, each a list of :class:`Waypoint` s (a TCP pose and a
gripper command). Between waypoints the arm follows an mplib screw motion sampled at the control
rate; the gripper opens or closes while the arm holds. Every env step records the state before
the action (for the camera replay), the joint action, the end-effector pose that action
commands, the waypoint being executed, and after the action the proprioception and the task's
success flag (RoboMME stores each step's observation as the one its action led to).

Noise injection (:class:`Noise`): a waypoint marked ``noisy`` is, with probability ``prob``,
first visited displaced by up to ``scale`` x 1 m (the workspace) in a random direction (never
downwards), then the nominal waypoint is reached again — a detour and its recovery.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dataforge.manip.planner import ArmPlanner, PlanningFailed
from dataforge.manip.state import StateReader

OPEN, CLOSED = 1.0, -1.0
HOLD_BLOCK = 6  # ManiSkill's open_gripper() / close_gripper(): t=6 steps per call
WORKSPACE_M = 1.0


class TaskFailed(RuntimeError):
    """The task's own check failed (an immediate-failure condition or no success at the end)."""


class _Completed(Exception):
    """Raised inside :meth:`Executor.step` at the first step after which the task succeeded."""


@dataclass(frozen=True)
class Waypoint:
    """A keyframe: move the TCP to ``pose`` ([x, y, z, qw, qx, qy, qz], world; None: stay; a
    callable: the pose it returns when the executor reaches the keyframe), command ``gripper``
    (1 open, -1 closed), then hold ``hold`` steps, or — with ``until`` — hold until
    ``until()`` is true (at most ``hold`` steps). ``grasp`` names what kind of object a grasp
    pose closes on (e.g. "cube"; empty for other keyframes) and ``target`` the object, for
    plans that rewrite picks.

    The recorded keyframe (``Recording.waypoint_action``, RoboMME's record made before each
    motion): a waypoint with a pose sets it to ``key_pose`` (default: the pose) with the
    gripper flag ``key`` (default: ``gripper``; RoboMME's ``waypoint_type``, 1 "open", -1
    "close": the gripper state the keyframe asks for once reached, e.g. -1 at a grasp pose),
    unless ``keyed`` is False (a motion the reference does not record: the keyframe stays). A
    waypoint without a pose changes the keyframe only when it has a ``key``: the current
    keyframe's pose again with that flag (a record at the same pose before a gripper action).

    ``path``: instead of a screw motion, the poses one env step each,
    every one the first IK solution from the previous one's, the first from the measured joints
    (ManiSkill's ``follow_path`` of IK points); a pose without a solution is skipped.
    ``path_keys``: (index into ``path``, pose) pairs: the keyframe becomes that pose (with the
    waypoint's flag) when the path reaches the index.

    ``joints``: instead of a pose, the arm joint targets sent as the action for ``hold``
    steps (a reset that commands a joint configuration)."""

    pose: np.ndarray | Callable[[], np.ndarray] | None
    gripper: float = OPEN
    hold: int = 0
    until: Callable[[], bool] | None = None
    noisy: bool = True
    grasp: str = ""
    target: Any = None
    key: float | None = None
    key_pose: np.ndarray | None = None
    keyed: bool = True
    path: tuple[np.ndarray, ...] = ()
    path_keys: tuple[tuple[int, np.ndarray], ...] = ()
    joints: np.ndarray | None = None


@dataclass(frozen=True)
class Subgoal:
    """One subtask: its simple and grounded texts, its waypoints, whether it belongs to the
    conditioning video shown before execution, and ``choice``: the high-level action it is an
    instance of, among the task's multiple-choice options ("" for none)."""

    simple: str
    grounded: str
    waypoints: Sequence[Waypoint]
    video: bool = False
    choice: str = ""
    # the actors (or articulations) the grounded text's pixels name, in order: a renderer may
    # replace each pixel by the centroid of that actor's pixels
    segment: tuple[str, ...] = ()
    # False: simulated (and kept in the state log) but not part of the recorded demonstration
    # (RoboMME's "NO RECORD" restaging between the video and the execution)
    record: bool = True
    # the world point the subgoal names (e.g. the object its choice acts on), read after every
    # step into ``Recording.anchor`` (None: the subgoal names none)
    anchor: Callable[[], np.ndarray | None] | None = None


@dataclass(frozen=True)
class Noise:
    prob: float = 0.0
    scale: float = 0.0

    def draw(self, rng: np.random.Generator) -> np.ndarray | None:
        """A displacement for one waypoint, or None (no noise this time)."""
        if self.prob <= 0 or self.scale <= 0 or rng.random() >= self.prob:
            return None
        d = rng.normal(size=3)
        d /= np.linalg.norm(d) + 1e-12
        d[2] = abs(d[2])
        return d * self.scale * WORKSPACE_M * rng.uniform(0.5, 1.0)


@dataclass
class Recording:
    """Per-step arrays (lists while recording) and per-subgoal spans of one executed plan."""

    state: list[np.ndarray] = field(default_factory=list)  # before each action
    qpos: list[np.ndarray] = field(default_factory=list)  # after each action
    tcp: list[np.ndarray] = field(default_factory=list)  # after each action, [p, wxyz]
    joint_action: list[np.ndarray] = field(default_factory=list)  # float64 (arm + gripper)
    eef_action: list[np.ndarray] = field(default_factory=list)  # FK of the action: [p, wxyz, g]
    # the latest keyframe [p, wxyz, gripper]; NaN before the first one and from a switch
    # between the video and the execution until the next one
    waypoint_action: list[np.ndarray] = field(default_factory=list)
    subgoal: list[int] = field(default_factory=list)
    # the subgoal the task's own check is at after each step, where the env reports it as
    # ``info["subgoal_online"]`` (RoboMME's online subgoal view)
    online: list[int] = field(default_factory=list)
    video: list[bool] = field(default_factory=list)
    success: list[bool] = field(default_factory=list)
    subgoals: list[dict[str, Any]] = field(default_factory=list)
    # after each action: the current subgoal's anchor point (world xyz; NaN when none)
    anchor: list[np.ndarray] = field(default_factory=list)
    perturbed: list[dict[str, Any]] = field(default_factory=list)
    final_state: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.joint_action)


NO_WAYPOINT = np.full(8, np.nan)
NO_POINT = np.full(3, np.nan)


def keyframe(pose: np.ndarray, gripper: float) -> np.ndarray:
    """[x, y, z, qw, qx, qy, qz] + gripper as one float64 row."""
    return np.concatenate([np.asarray(pose, dtype=np.float64)[:7], [gripper]])


class Executor:
    """Executes plans on ``env`` (a gymnasium-wrapped ManiSkill env, one sub-env, CPU sim) whose
    control mode is ``pd_joint_pos`` (7 arm joints + a normalised gripper, or the arm alone
    for a robot without a gripper: its waypoints' gripper commands are ignored, and it is
    recorded as closed, the -1 pad RoboMME stores for its stick robot)."""

    def __init__(
        self,
        env: Any,
        *,
        noise: Noise = Noise(),
        rng: np.random.Generator | None = None,
        max_steps: int = 5000,
        finish_subgoal: bool = False,
        from_measured: bool = False,
    ) -> None:
        self.env = env
        # plan each screw motion from the arm's measured joints and step its first point too
        # (ManiSkill's motion-planning solvers: ``plan_screw(..., robot.get_qpos())`` then
        # ``follow_path`` of every point), instead of from the commanded joints (still the
        # fallback where that fails)
        self.from_measured = from_measured
        # on success, stop at once (False) or finish the current subgoal's motion first (True,
        # as RoboMME's harness finishes the running solve): the flag stays true from there
        self.finish_subgoal = finish_subgoal
        self.completed = False
        self.base = env.unwrapped
        self.planner = ArmPlanner(self.base)
        self.noise = noise
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.max_steps = max_steps
        self.rec = Recording()
        self._state = StateReader(self.base)  # the env is reset: its scene is built
        q = self._qpos()
        self.arm_cmd = q[: self.planner.dof].copy()
        self.has_gripper = len(q) > self.planner.dof
        self.gripper = OPEN if self.has_gripper else CLOSED
        self._waypoint = NO_WAYPOINT
        self._sg = -1
        self._video = False
        self._anchor: Callable[[], np.ndarray | None] | None = None

    # -- env access --------------------------------------------------------------------------
    def _qpos(self) -> np.ndarray:
        return self.base.agent.robot.get_qpos()[0].cpu().numpy().astype(np.float64)

    def _tcp(self) -> np.ndarray:
        pose = self.base.agent.tcp.pose
        return np.concatenate([pose.p[0].cpu().numpy(), pose.q[0].cpu().numpy()])

    def step(self, arm: np.ndarray) -> None:
        """One env step towards arm joint targets ``arm`` with the current gripper command."""
        if len(self.rec) >= self.max_steps:
            raise PlanningFailed(f"the plan needs more than {self.max_steps} steps")
        rec = self.rec
        q = self._qpos()
        rec.state.append(self._state.read())
        action = np.concatenate([np.asarray(arm, dtype=np.float64), [self.gripper]])
        sent = action if self.has_gripper else action[:-1]
        full = q.copy()
        full[: len(arm)] = arm
        rec.joint_action.append(action)
        rec.eef_action.append(keyframe(self.planner.tcp_pose(full), self.gripper))
        rec.waypoint_action.append(self._waypoint)
        rec.subgoal.append(self._sg)
        rec.video.append(self._video)
        _, _, _, _, info = self.env.step(sent)
        rec.qpos.append(self._qpos())
        rec.tcp.append(self._tcp())
        point = self._anchor() if self._anchor is not None else None
        rec.anchor.append(NO_POINT if point is None else np.asarray(point, np.float64)[:3])
        if "subgoal_online" in info:
            rec.online.append(int(np.asarray(info["subgoal_online"]).reshape(-1)[0]))
        success = bool(np.asarray(info.get("success", False)).reshape(-1)[0])
        self.completed = self.completed or success
        rec.success.append(self.completed)
        self.arm_cmd = np.asarray(arm, dtype=np.float64)
        failed = bool(np.asarray(info.get("fail", False)).reshape(-1)[0])
        if failed and not self.completed:
            reason = getattr(self.base, "failure_reason", "") or "an immediate-failure condition"
            raise TaskFailed(f"step {len(rec)}: {reason}")
        if self.completed and not self.finish_subgoal:
            raise _Completed

    def hold(self, steps: int, until: Callable[[], bool] | None = None) -> None:
        """Hold the arm ``steps`` steps (or until ``until()``): at the commanded joints, or
        (``from_measured``) as RoboMME's waits loop over ManiSkill's ``open_gripper`` /
        ``close_gripper``: blocks of ``HOLD_BLOCK`` steps at the joints measured when the
        block starts, ``until`` checked between blocks."""
        arm = self.arm_cmd
        block = HOLD_BLOCK if self.from_measured else 1
        for k in range(steps):
            if k % block == 0:
                if until is not None and (until() or self.completed):
                    return  # a wait ends with its condition, or with the task
                if self.from_measured:
                    arm = self._qpos()[: self.planner.dof]
            self.step(arm)
        if until is not None and not until() and not self.completed:
            raise PlanningFailed(f"waited {steps} steps for a condition that never came")

    def move(self, pose: np.ndarray) -> None:
        q = self._qpos()
        if self.from_measured:
            try:
                plan = self.planner.plan(q, pose)  # every point stepped, the first included
            except PlanningFailed:
                if self.planner.reached(q, pose):
                    return  # already there (e.g. a second motion to the same pose)
            else:
                for arm in plan:
                    self.step(arm)
                return
        # from the commanded joints (the first point is the command already held); also where
        # a screw motion from the measured ones fails (ManiSkill's solvers would fall back to
        # RRT there, which reruns cannot repeat)
        q[: self.planner.dof] = self.arm_cmd
        for arm in self.planner.plan(q, pose)[1:]:
            self.step(arm)

    def follow(self, wp: Waypoint) -> None:
        """``wp.path``: one env step per IK point (see :class:`Waypoint`)."""
        keys = dict(wp.path_keys)
        q = self._qpos()
        targets: list[np.ndarray | None] = []
        for pose in wp.path:
            sol = self.planner.ik(q, np.asarray(pose, dtype=np.float64))
            if sol is not None:
                q = sol
            targets.append(None if sol is None else sol[: self.planner.dof])
        for k, arm in enumerate(targets):
            if k in keys:
                self._waypoint = keyframe(keys[k], self._flag(wp))
            if arm is not None:
                self.step(arm)

    def _gripper(self, command: float) -> float:
        return command if self.has_gripper else CLOSED

    def _flag(self, wp: Waypoint) -> float:
        """The gripper flag recorded with ``wp``'s keyframe (-1 for a robot without one)."""
        return self._gripper(wp.gripper if wp.key is None else wp.key)

    def _key_pose(self) -> np.ndarray:
        """The current keyframe's pose, or (none set) the TCP pose the arm is commanded to."""
        if not np.isnan(self._waypoint[0]):
            return self._waypoint[:7]
        q = self._qpos()
        q[: self.planner.dof] = self.arm_cmd
        return self.planner.tcp_pose(q)

    def run_waypoint(self, wp: Waypoint) -> None:
        pose = wp.pose() if callable(wp.pose) else wp.pose
        if wp.joints is not None:
            self.gripper = self._gripper(wp.gripper)
            for _ in range(wp.hold):
                self.step(np.asarray(wp.joints, dtype=np.float64))
            return
        if wp.path:
            self.follow(wp)
        elif pose is not None:
            offset = self.noise.draw(self.rng) if wp.noisy else None
            if offset is not None:
                detour = np.array(pose, dtype=np.float64)
                detour[:3] += offset
                self._waypoint = keyframe(detour, self.gripper)
                self.rec.perturbed.append(
                    {"step": len(self.rec), "offset_m": np.round(offset, 4).tolist()}
                )
                self.move(detour)
            if wp.keyed:
                at = pose if wp.key_pose is None else wp.key_pose
                self._waypoint = keyframe(at, self._flag(wp))
            self.move(np.asarray(pose, dtype=np.float64))
        elif wp.key is not None:
            self._waypoint = keyframe(self._key_pose(), self._flag(wp))
        self.gripper = self._gripper(wp.gripper)
        self.hold(wp.hold, wp.until)

    def run(self, plan: Iterable[Subgoal]) -> Recording:
        """Execute ``plan`` (may be a generator reading the env between subgoals) until the
        task's success flag first turns true; that step is the episode's last, or with
        ``finish_subgoal`` the last step of that subgoal's motion.

        Each subgoal's span is [start, end); the env's ``info["subgoal_online"]``, when it
        reports one, is recorded per step (``Recording.online``)."""
        try:
            for sg in plan:
                self._sg = len(self.rec.subgoals)
                if sg.video != self._video:
                    self._waypoint = NO_WAYPOINT  # RoboMME forgets the keyframe at the switch
                self._video = sg.video
                self._anchor = sg.anchor
                self.rec.subgoals.append(
                    {
                        "simple": sg.simple,
                        "grounded": sg.grounded,
                        "start": len(self.rec),
                        "end": len(self.rec),
                        "video": sg.video,
                        "choice": sg.choice,
                        "segment": list(sg.segment),
                        "record": sg.record,
                    }
                )
                for wp in sg.waypoints:
                    try:
                        self.run_waypoint(wp)
                    except PlanningFailed:
                        if not self.completed:
                            raise
                        break  # the task is done: what is left of the motion is not needed
                self.rec.subgoals[-1]["end"] = len(self.rec)
                if self.completed:
                    break
            else:
                raise TaskFailed("the plan ended without the task's success")
        except _Completed:
            self.rec.subgoals[-1]["end"] = len(self.rec)
        self.rec.final_state = self._state.read()
        return self.rec
