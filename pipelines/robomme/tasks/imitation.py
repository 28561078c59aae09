"""Imitation suite (procedural memory): MoveCube, InsertPeg, PatternLock, RouteStick.

Every task is video-conditioned: the episode starts with the robot performing a demonstration
(the video phase), then the env restages the scene by itself — kinematically, inside
``tick()``, as soon as the demonstration is over and the gripper has risen clear — and the
execution phase asks the robot to repeat the demonstrated behaviour. The restaging is a
deterministic function of the layout and the scene, so replaying the recorded actions
reproduces it. Checks (immediate failures, success) only apply to the execution phase.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.manip.planner import ArmPlanner, PlanningFailed
from dataforge.pipelines.robomme import objects, skills
from dataforge.pipelines.robomme.env import RobommeEnv, pixel_of

NUDGES = (0.0, 0.0005, -0.0005, 0.001, -0.001, 0.0015)
RESTAGE_WAIT = 60  # the video's last waypoint waits at most this long for the restaging
STICK_TIP = 0.10  # the attached stick's tip lies this far below the TCP (along the TCP's z)
TRACE_Z = 0.01  # the stick tip's height while tracing
HOVER = 0.08  # the tip hovers this high above the table before descending onto a target
TIP_LOW = 0.03  # the tip touches a target only below this height
UP = 0.05  # the tip counts as lifted off the targets above this height
# The trace of the tip (the paper's "trajectory trace feedback"): dark dots laid on the table
# every TRACE_SPACING while the tip is down, from a fixed pool of kinematic discs (so a replay
# of the saved states shows the same trace); past the pool the oldest dot moves on.
TRACE_DOTS = 80
TRACE_SPACING = 0.015
TRACE_R = 0.005
TRACE_DOT_Z = 0.002  # above the targets (0.001) and their red overlays (0.0015)
AXIS_Z = [np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0]  # a cylinder's x axis turned onto z


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vector ``v`` by the wxyz quaternion ``q``."""
    w, u = q[0], np.asarray(q[1:], dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


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

    def subgoal(
        self, simple: str, grounded: str, waypoints: Sequence[Waypoint], *, video: bool
    ) -> Subgoal:
        return Subgoal(simple, grounded, self.reachable(waypoints), video=video)

    def reachable(self, waypoints: Sequence[Waypoint]) -> list[Waypoint]:
        """The waypoints, each nudged up or down by a fraction of a millimetre where needed
        so that the executor's screw planner reaches it: mplib 0.1.1 rejects a screw motion
        whose last integration step happens to be shorter than 1e-4, which depends only on
        the start joints and the goal. The chain is planned from the arm's commanded joints,
        as the executor does (its noise detours, when enabled, are not foreseen)."""
        if getattr(self, "_arm_planner", None) is None:
            self._arm_planner = ArmPlanner(self)
        planner = self._arm_planner
        q = self.agent.robot.get_qpos()[0].cpu().numpy().astype(np.float64)
        target = self.agent.controller.controllers["arm"]._target_qpos
        q[: planner.dof] = target[0].cpu().numpy()
        out = []
        for wp in waypoints:
            if wp.pose is None:
                out.append(wp)
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

    def restaged(self) -> Waypoint:
        """The video's last waypoint: hold until the env has restaged the scene."""
        return Waypoint(None, self._gripper_cmd(), hold=RESTAGE_WAIT, until=self._in_exec)

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


# -- a stick attached to the end effector (PatternLock, RouteStick) -------------------------


def attached_stick(scene: Any, name: str) -> Any:
    """A thin brown stick, visual only and kinematic, reaching from just inside the closed
    fingers to ``STICK_TIP`` below the TCP; the task keeps it on the TCP every tick."""
    b = scene.create_actor_builder()
    top = -0.02
    half = (STICK_TIP - top) / 2
    b.add_box_visual(
        half_size=[0.005, 0.005, half],
        pose=sapien.Pose(p=[0, 0, top + half]),
        material=objects.material("brown"),
    )
    b.initial_pose = sapien.Pose()
    return b.build_kinematic(name=name)


def tip_pose(point: np.ndarray) -> np.ndarray:
    """The TCP pose (pointing down) that puts the stick tip at ``point``."""
    return objects.top_grasp(np.array([point[0], point[1], point[2] + STICK_TIP]), 0.0)


class _StickTask(_Imitation):
    """A stick follows the TCP; ``targets`` (xy) turn red (an overlay disc appears) when the
    tip touches them; execution must visit ``self.sequence`` in order. While the tip is down
    it leaves a dotted trace on the table; the restaging clears the trace and the overlays."""

    TARGET_R = 0.022
    VISIT_R = 0.025

    def build_stick(self, n_targets: int) -> None:
        self.stick = attached_stick(self.scene, "stick")
        self.targets = [
            objects.disc(self.scene, f"target_{k}", "gray", radius=self.TARGET_R)
            for k in range(n_targets)
        ]
        self.overlays = [
            objects.disc(self.scene, f"visited_{k}", "red", radius=self.TARGET_R, z=0.0015)
            for k in range(n_targets)
        ]
        self.overlay_park = [self.park_pose() for _ in range(n_targets)]
        self.trace_dots = [
            objects.disc(self.scene, f"trace_{k}", "black", radius=TRACE_R, z=TRACE_DOT_Z)
            for k in range(TRACE_DOTS)
        ]
        self.trace_park = [self.park_pose() for _ in range(TRACE_DOTS)]

    def place_targets(self, xy: list[np.ndarray]) -> None:
        self.target_xy = [np.asarray(p, dtype=np.float64) for p in xy]
        for actor, p in zip(self.targets, self.target_xy, strict=True):
            objects.set_pose(actor, (*p, 0.001))
        self.hide_overlays()
        self.follow()

    def hide_overlays(self) -> None:
        for actor, pose in zip(self.overlays, self.overlay_park, strict=True):
            actor.set_pose(pose)
        for actor, pose in zip(self.trace_dots, self.trace_park, strict=True):
            actor.set_pose(pose)
        self.dots_laid = 0
        self.last_dot: np.ndarray | None = None

    def draw_trace(self, force: bool = False) -> None:
        """Lay the next trace dot under the tip if it is down and has moved on far enough
        (``force``: has just reached a target)."""
        tip = self.tip()
        if tip[2] > TIP_LOW:
            return
        last = self.last_dot
        if not force and last is not None and np.hypot(*(tip[:2] - last)) < TRACE_SPACING:
            return
        dot = self.trace_dots[self.dots_laid % TRACE_DOTS]
        objects.set_pose(dot, (tip[0], tip[1], TRACE_DOT_Z))
        self.dots_laid += 1
        self.last_dot = tip[:2].copy()

    def follow(self) -> None:
        self.stick.set_pose(self.agent.tcp.pose)

    def tip(self) -> np.ndarray:
        """The stick tip: ``STICK_TIP`` along the TCP's z axis (read from SAPIEN directly, as
        this runs several times a step)."""
        pose = self.agent.tcp._objs[0].entity_pose
        w, x, y, z = (float(v) for v in pose.q)
        axis = np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])
        return np.asarray(pose.p, dtype=np.float64) + STICK_TIP * axis

    def reset_task_events(self) -> None:
        self.progress = 0  # targets of the sequence visited so far
        self.current: int | None = None  # the target the tip is on now

    def touched(self) -> int | None:
        """The target the tip touches now, if any."""
        tip = self.tip()
        if tip[2] > TIP_LOW:
            return None
        for k, p in enumerate(self.target_xy):
            if np.hypot(*(tip[:2] - p)) < self.VISIT_R:
                return k
        return None

    def visit(self) -> int | None:
        """A newly touched target (the tip entered it this step), else None."""
        k = self.touched()
        entered = k is not None and k != self.current
        self.current = k
        return k if entered else None

    def advance(self, k: int) -> None:
        """Register a visit of target ``k``: in order, or an immediate failure."""
        seq = self.sequence
        if self.progress < len(seq) and k == seq[self.progress]:
            self.progress += 1
            objects.set_pose(self.overlays[k], (*self.target_xy[k], 0.0015))
            if self.progress == len(seq) and self.phase == "exec":
                self.done = True
        elif self.phase == "exec":
            self.failure_reason = f"visited target {k} out of the demonstrated order"

    def tick_video(self) -> None:
        self.follow()
        k = self.visit()
        self.draw_trace(force=k is not None)
        if k is not None:
            self.advance(k)

    def tick_exec(self) -> None:
        self.tick_video()
        self.track_exec()

    def track_exec(self) -> None:
        """Extra per-step checks in the execution phase."""

    def demo_over(self) -> bool:
        return self.progress == len(self.sequence) and self.tip()[2] > UP

    def restage(self) -> None:
        self.hide_overlays()

    @property
    def sequence(self) -> list[int]:
        raise NotImplementedError

    def close_gripper(self) -> Waypoint:
        return Waypoint(None, CLOSED, hold=skills.GRIP_STEPS)

    def touch_down(self, k: int) -> list[Waypoint]:
        """Hover above target ``k``, then lower the tip onto it."""
        p = self.target_xy[k]
        return [
            Waypoint(tip_pose(np.array([p[0], p[1], HOVER])), CLOSED),
            Waypoint(tip_pose(np.array([p[0], p[1], TRACE_Z])), CLOSED, noisy=False),
        ]

    def lift(self) -> list[Waypoint]:
        tip = self.tip()
        return [Waypoint(tip_pose(np.array([tip[0], tip[1], HOVER + 0.04])), CLOSED)]

    def target_px(self, k: int) -> list[int]:
        return pixel_of(self, np.array([*self.target_xy[k], 0.0]))


# -- PatternLock ------------------------------------------------------------------------------

GRID = {"easy": (3, 0.10, (2, 4)), "medium": (4, 0.085, (3, 5)), "hard": (5, 0.07, (4, 8))}
GRID_CENTRE = np.array([-0.02, 0.0])
NEIGHBOURS = [(di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0)]


def grid_walk(rng: np.random.Generator, n: int, length: int) -> list[tuple[int, int]]:
    """A self-avoiding walk of ``length`` cells over an n x n grid, moving to one of the
    (up to 8) neighbouring cells each time."""
    for _ in range(1000):
        cell = (int(rng.integers(n)), int(rng.integers(n)))
        walk = [cell]
        while len(walk) < length:
            options = [
                (walk[-1][0] + di, walk[-1][1] + dj)
                for di, dj in NEIGHBOURS
                if 0 <= walk[-1][0] + di < n and 0 <= walk[-1][1] + dj < n
            ]
            options = [c for c in options if c not in walk]
            if not options:
                break
            walk.append(options[int(rng.integers(len(options)))])
        if len(walk) == length:
            return walk
    raise RuntimeError("no grid walk found")  # pragma: no cover - always found for n >= 3


class PatternLock(_StickTask):
    """Watch the stick on the end effector trace a pattern over an N x N grid of gray targets,
    then retrace it (paper E.15, Table 21: easy 3x3 grid, 2-4 targets; medium 4x4, 3-5; hard
    5x5, 4-8). Consecutive targets of the pattern are neighbouring cells (diagonals included);
    a target turns red (an overlay disc) when the tip touches it. Touching a target out of
    the demonstrated order is an immediate failure; success comes with the last target.
    The tip's trace is drawn as dots (see ``_StickTask``)."""

    TASK = "PatternLock"

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        n, spacing, (lo, hi) = GRID[self.difficulty]
        length = int(rng.integers(lo, hi + 1))
        walk = grid_walk(rng, n, length)
        return {"grid": n, "spacing": spacing, "pattern": [i * n + j for i, j in walk]}

    def build(self) -> None:
        self.build_stick(self.layout["grid"] ** 2)

    def place(self) -> None:
        n, s = self.layout["grid"], self.layout["spacing"]
        off = (n - 1) / 2
        xy = [GRID_CENTRE + s * np.array([i - off, j - off]) for i in range(n) for j in range(n)]
        self.place_targets(xy)

    @property
    def sequence(self) -> list[int]:
        return self.layout["pattern"]

    def goal(self) -> str:
        return (
            "watch the video carefully, then use the stick attached to the robot to retrace "
            "the same pattern shown in the video"
        )

    def trace(self, video: bool) -> Iterator[Subgoal]:
        seq = self.sequence
        who = "the robot traces" if video else "trace"
        first = [self.close_gripper()] if video else []
        yield self.subgoal(
            f"{'the robot moves' if video else 'move'} the stick to the first target",
            f"{'the robot moves' if video else 'move'} the stick to the first target at "
            f"{self.target_px(seq[0])}",
            first + self.touch_down(seq[0]),
            video=video,
        )
        for k in seq[1:]:
            p = self.target_xy[k]
            yield self.subgoal(
                f"{who} the pattern to the next target",
                f"{who} the pattern to the next target at {self.target_px(k)}",
                [Waypoint(tip_pose(np.array([p[0], p[1], TRACE_Z])), CLOSED, noisy=False)],
                video=video,
            )

    def plan(self) -> Iterator[Subgoal]:
        yield from self.trace(video=True)
        yield self.subgoal(
            "the robot lifts the stick",
            "the robot lifts the stick",
            [*self.lift(), self.restaged()],
            video=True,
        )
        yield from self.trace(video=False)


# -- RouteStick -------------------------------------------------------------------------------

ROUTE_X = -0.02  # the line of targets and obstacles runs along y at this x
ROUTE_N = 6  # targets on the line, with an obstacle between each neighbouring pair
ROUTE_SPACING = 0.10
OBSTACLE_R = 0.012
OBSTACLE_H = 0.07
ROUTE_LEN = {"easy": (2, 3), "medium": (4, 5), "hard": (4, 7)}
ARC_POINTS = 3  # screw-motion segments per half circle


def route_walk(rng: np.random.Generator, n: int, length: int, backtrack: bool) -> list[int]:
    """Target indices 0..n-1 visited by ``length`` moves to a neighbouring target: always the
    same way along the line, or (``backtrack``) reversing at least once."""
    for _ in range(1000):
        if not backtrack:
            step = int(rng.choice([-1, 1]))
            start = int(rng.integers(0, n - length)) if step > 0 else int(rng.integers(length, n))
            return [start + step * k for k in range(length + 1)]
        walk = [int(rng.integers(n))]
        for _ in range(length):
            options = [walk[-1] + d for d in (-1, 1) if 0 <= walk[-1] + d < n]
            walk.append(int(rng.choice(options)))
        steps = np.diff(walk)
        if np.any(steps[1:] != steps[:-1]):
            return walk
    raise RuntimeError("no route found")  # pragma: no cover


class RouteStick(_StickTask):
    """Watch the stick on the end effector travel along a line of targets, going round the
    vertical obstacle between each pair of neighbouring targets on a half circle, clockwise or
    counterclockwise; then repeat the route (paper E.16, Table 22: easy 2-3 moves, medium
    4-5, hard 4-7 with backtracking). Six targets and five obstacles alternate along a line
    across the table. Immediate failures: touching a target out of order, passing an
    obstacle on the other side than demonstrated (circling the wrong way), or running the
    stick into an obstacle. Success comes with the last target of the route.
    The tip's trace is drawn as dots (see ``_StickTask``)."""

    TASK = "RouteStick"

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        lo, hi = ROUTE_LEN[self.difficulty]
        length = int(rng.integers(lo, hi + 1))
        route = route_walk(rng, ROUTE_N, length, self.difficulty == "hard")
        sides = [int(rng.choice([-1, 1])) for _ in range(length)]  # +1: pass at larger x
        return {"route": route, "sides": sides}

    def build(self) -> None:
        self.build_stick(ROUTE_N)
        self.obstacles = []
        for k in range(ROUTE_N - 1):
            b = self.scene.create_actor_builder()
            half = OBSTACLE_H / 2
            b.add_cylinder_collision(
                radius=OBSTACLE_R, half_length=half, pose=sapien.Pose(q=AXIS_Z)
            )
            b.add_cylinder_visual(
                radius=OBSTACLE_R,
                half_length=half,
                pose=sapien.Pose(q=AXIS_Z),
                material=objects.material("black"),
            )
            b.initial_pose = sapien.Pose(p=[0, 0, half])
            self.obstacles.append(b.build_kinematic(name=f"obstacle_{k}"))

    def line_y(self, k: float) -> float:
        return (k - (ROUTE_N - 1) / 2) * ROUTE_SPACING

    def place(self) -> None:
        self.obstacle_xy = [np.array([ROUTE_X, self.line_y(k + 0.5)]) for k in range(ROUTE_N - 1)]
        for actor, p in zip(self.obstacles, self.obstacle_xy, strict=True):
            objects.set_pose(actor, (*p, OBSTACLE_H / 2))
        self.place_targets([np.array([ROUTE_X, self.line_y(k)]) for k in range(ROUTE_N)])

    @property
    def sequence(self) -> list[int]:
        return self.layout["route"]

    def reset_task_events(self) -> None:
        super().reset_task_events()
        self.prev_tip = None

    def track_exec(self) -> None:
        tip = self.tip()
        prev, self.prev_tip = self.prev_tip, tip
        if tip[2] > OBSTACLE_H:
            return
        for k, p in enumerate(self.obstacle_xy):
            if np.hypot(*(tip[:2] - p)) < OBSTACLE_R + 0.005:
                self.failure_reason = f"the stick ran into obstacle {k}"
                return
        if prev is None or self.progress == 0 or self.progress >= len(self.sequence):
            return
        for k, p in enumerate(self.obstacle_xy):
            crossed = (prev[1] - p[1]) * (tip[1] - p[1]) < 0 or (tip[1] == p[1] and prev[1] != p[1])
            if not crossed or abs(tip[0] - p[0]) > 2 * ROUTE_SPACING:
                continue
            a, b = self.sequence[self.progress - 1], self.sequence[self.progress]
            if k != min(a, b):
                continue  # crossing another obstacle's line: the wrong target comes next
            side = self.layout["sides"][self.progress - 1]
            if np.sign(tip[0] - p[0]) != side:
                self.failure_reason = f"went round obstacle {k} the wrong way"

    def direction(self, step: int) -> str:
        """Clockwise or counterclockwise (seen from above) for move ``step`` of the route."""
        a, b = self.sequence[step], self.sequence[step + 1]
        return "counterclockwise" if (b - a) * self.layout["sides"][step] > 0 else "clockwise"

    def arc(self, step: int) -> list[Waypoint]:
        a, b = self.sequence[step], self.sequence[step + 1]
        centre = self.obstacle_xy[min(a, b)]
        start = self.target_xy[a]
        r = ROUTE_SPACING / 2
        a0 = np.arctan2(*(start - centre)[::-1])
        sweep = np.pi if self.direction(step) == "counterclockwise" else -np.pi
        pts = []
        for i in range(1, ARC_POINTS + 1):
            ang = a0 + sweep * i / ARC_POINTS
            p = centre + r * np.array([np.cos(ang), np.sin(ang)])
            pts.append(Waypoint(tip_pose(np.array([p[0], p[1], TRACE_Z])), CLOSED, noisy=False))
        return pts

    def goal(self) -> str:
        return (
            "watch the video carefully, then use the stick attached to the robot to navigate "
            "around the obstacles on the table, following the same path shown in the video"
        )

    def route(self, video: bool) -> Iterator[Subgoal]:
        seq = self.sequence
        verb = "the robot moves" if video else "move"
        first = [self.close_gripper()] if video else []
        yield self.subgoal(
            f"{verb} the stick to the first target",
            f"{verb} the stick to the first target at {self.target_px(seq[0])}",
            first + self.touch_down(seq[0]),
            video=video,
        )
        for step in range(len(seq) - 1):
            a, b = seq[step], seq[step + 1]
            turn = self.direction(step)
            obstacle = pixel_of(self, np.array([*self.obstacle_xy[min(a, b)], OBSTACLE_H]))
            verb = "the robot circles" if video else "circle"
            yield self.subgoal(
                f"{verb} the obstacle {turn} to the next target",
                f"{verb} the obstacle at {obstacle} {turn} to the next target at "
                f"{self.target_px(b)}",
                self.arc(step),
                video=video,
            )

    def plan(self) -> Iterator[Subgoal]:
        yield from self.route(video=True)
        yield self.subgoal(
            "the robot lifts the stick",
            "the robot lifts the stick",
            [*self.lift(), self.restaged()],
            video=True,
        )
        yield from self.route(video=False)


# -- MoveCube ---------------------------------------------------------------------------------

MANNERS = ("pick", "push", "hook")
HOOK_HALF = (0.105, 0.01, 0.02)  # the tool's handle (half sizes), along its local x
HOOK_HANDLE_X = 0.015  # the handle's centre in the tool frame (grip point at the origin)
HOOK_BAR = ((0.11, 0.0375, 0.0), (0.01, 0.0475, 0.02))  # the crossbar: centre, half sizes
HOOK_CUBE = np.array([0.06, 0.045])  # where the cube sits in the tool frame before a pull
HOOK_CONTACT = 0.08  # the cube's centre (tool frame x) once it rests against the crossbar
TOOL_REST = np.array([-0.10, -0.23])  # the tool's grip point at rest (yaw 0)
TOOL_LIFT = 0.09  # TCP height while carrying the tool over the cube
TOOL_LOW = 0.023  # TCP height while pulling (the tool's bottom 3 mm above the table)
PUSH_Z = 0.02  # TCP height while pushing with the closed gripper
PUSH_BACK = 0.045  # the closed fingers start this far behind the cube's centre
MOVED = 0.02  # the cube counts as moved this far from where it last rested


def hook_tool(scene: Any, name: str) -> Any:
    """An L-shaped hook: a handle along local x (grasped at the origin) and a crossbar at its
    far end reaching towards local +y (light, so the gripper carries it firmly)."""
    b = scene.create_actor_builder()
    parts = [((HOOK_HANDLE_X, 0.0, 0.0), HOOK_HALF, "orange"), (*HOOK_BAR, "orange")]
    for centre, half, colour in parts:
        pose = sapien.Pose(p=list(centre))
        b.add_box_collision(half_size=list(half), pose=pose, density=200)
        b.add_box_visual(half_size=list(half), pose=pose, material=objects.material(colour))
    b.initial_pose = sapien.Pose(p=[*TOOL_REST, HOOK_HALF[2]])
    return b.build(name=name)


def cube_and_target(rng: np.random.Generator) -> tuple[list[float], list[float]]:
    """A cube (x, y, yaw) and a target 12-17 cm from it, towards the robot (within 40 degrees
    of -x), both clear of the hook tool's resting place."""
    for _ in range(1000):
        c = np.array([rng.uniform(-0.02, 0.08), rng.uniform(-0.08, 0.22)])
        theta = np.pi + rng.uniform(-0.7, 0.7)
        g = c + rng.uniform(0.12, 0.17) * np.array([np.cos(theta), np.sin(theta)])
        if g[0] >= -0.16 and -0.09 <= g[1] <= 0.26:
            return [*map(float, c), float(rng.uniform(-np.pi / 4, np.pi / 4))], list(map(float, g))
    raise RuntimeError("no cube and target found")  # pragma: no cover


def settle(actor: Any, position: Any, yaw: float = 0.0) -> None:
    """Teleport a dynamic actor and stop it."""
    objects.set_pose(actor, position, yaw)
    actor.set_linear_velocity(np.zeros(3))
    actor.set_angular_velocity(np.zeros(3))


class MoveCube(_Imitation):
    """Watch the robot move a cube onto a target by picking and placing it, by pushing it
    with the closed gripper, or by hooking it with an L-shaped tool; then the cube and target
    move to new places and the robot must move the cube the same way (paper E.13). Immediate
    failure: another manner is used (the cube grasped, the tool grasped, or the cube pushed
    along the table, when the video showed something else). Success: the cube rests on the
    target (released, for pick-and-place). The target always lies towards the robot from the
    cube, so every manner (a pull needs the tool's grip point behind the cube) stays in reach.
    The paper gives no per-difficulty table: all difficulties share this configuration."""

    TASK = "MoveCube"

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        manner = str(rng.choice(MANNERS))
        video_cube, video_target = cube_and_target(rng)
        cube, target = cube_and_target(rng)
        return {
            "manner": manner,
            "video_cube": video_cube,
            "video_target": video_target,
            "cube": cube,
            "target": target,
        }

    def build(self) -> None:
        self.cube = objects.cube(self.scene, "cube", "red")
        self.target = objects.disc(self.scene, "target", "purple")
        self.tool = hook_tool(self.scene, "hook")

    def place(self) -> None:
        self.stage("video_cube", "video_target")

    def stage(self, cube: str, target: str) -> None:
        x, y, a = self.layout[cube]
        settle(self.cube, (x, y, objects.CUBE_HALF), a)
        self.target_xy = np.array(self.layout[target])
        objects.set_pose(self.target, (*self.target_xy, 0.001))
        settle(self.tool, (*TOOL_REST, HOOK_HALF[2]))

    def restage(self) -> None:
        self.stage("cube", "target")

    def reset_task_events(self) -> None:
        self.rest = objects.actor_position(self.cube)  # where the cube last rested
        self.used: str | None = None

    def cube_on_target(self) -> bool:
        return not self.is_grasping(self.cube) and skills.on_target(
            self.cube, self.target_xy, objects.TARGET_RADIUS
        )

    def demo_over(self) -> bool:
        free = not self.is_grasping(self.tool)
        return self.cube_on_target() and free and self.tcp_position()[2] > 0.1

    def manner_now(self) -> str | None:
        """The manner the robot is moving the cube by at this step, if any."""
        if self.is_grasping(self.cube):
            self.rest = objects.actor_position(self.cube)
            return "pick"
        if self.is_grasping(self.tool):
            self.rest = objects.actor_position(self.cube)
            return "hook"
        p = objects.actor_position(self.cube)
        if p[2] < 0.03 and np.hypot(*(p[:2] - self.rest[:2])) > MOVED:
            return "push"
        return None

    def tick_exec(self) -> None:
        manner = self.manner_now()
        if manner is not None and self.used is None:
            self.used = manner
        if manner is not None and manner != self.layout["manner"]:
            self.failure_reason = (
                f"moved the cube by {manner} but the video showed {self.layout['manner']}"
            )
            return
        if self.used == self.layout["manner"] and self.cube_on_target():
            self.done = True

    def goal(self) -> str:
        return (
            "watch the video carefully, then move the cube to the target in the same manner "
            "as before"
        )

    # -- the oracle ----------------------------------------------------------------------
    def cube_px(self) -> list[int]:
        return pixel_of(self, objects.actor_position(self.cube))

    def target_px(self) -> list[int]:
        return pixel_of(self, np.array([*self.target_xy, 0.0]))

    def by_pick(self, video: bool) -> Iterator[Subgoal]:
        verb = ("the robot picks", "the robot places") if video else ("pick", "place")
        yield self.subgoal(
            f"{verb[0]} up the cube",
            f"{verb[0]} up the cube at {self.cube_px()}",
            skills.pick(self, self.cube),
            video=video,
        )
        yield self.subgoal(
            f"{verb[1]} the cube on the target",
            f"{verb[1]} the cube on the target at {self.target_px()}",
            skills.place(np.array([*self.target_xy, 0.0])),
            video=video,
        )

    def by_push(self, video: bool) -> Iterator[Subgoal]:
        c = objects.actor_position(self.cube)[:2]
        d = self.target_xy - c
        dist = float(np.linalg.norm(d))
        d /= dist
        yaw = wrap(2 * np.arctan2(d[1], d[0])) / 2  # fingers side by side across the push
        start = c - PUSH_BACK * d
        end = self.target_xy - PUSH_BACK * d
        verb = ("the robot closes", "the robot pushes") if video else ("close", "push")
        yield self.subgoal(
            f"{verb[0]} the gripper behind the cube",
            f"{verb[0]} the gripper behind the cube at {self.cube_px()}",
            [
                Waypoint(None, CLOSED, hold=skills.GRIP_STEPS),
                Waypoint(
                    objects.top_grasp(np.array([*start, PUSH_Z]), yaw, skills.APPROACH), CLOSED
                ),
                Waypoint(objects.top_grasp(np.array([*start, PUSH_Z]), yaw), CLOSED, noisy=False),
            ],
            video=video,
        )
        yield self.subgoal(
            f"{verb[1]} the cube to the target",
            f"{verb[1]} the cube to the target at {self.target_px()}",
            [Waypoint(objects.top_grasp(np.array([*end, PUSH_Z]), yaw), CLOSED, noisy=False)],
            video=video,
        )

    def by_hook(self, video: bool) -> Iterator[Subgoal]:
        grip = np.array([*objects.actor_position(self.tool)[:2], HOOK_HALF[2]])
        verb = ("the robot picks", "the robot hooks") if video else ("pick", "hook")
        yield self.subgoal(
            f"{verb[0]} up the stick",
            f"{verb[0]} up the stick at {pixel_of(self, grip)}",
            [
                Waypoint(objects.top_grasp(grip, 0.0, skills.APPROACH), OPEN),
                Waypoint(objects.top_grasp(grip, 0.0), OPEN, noisy=False),
                Waypoint(None, CLOSED, hold=skills.GRIP_STEPS),
                Waypoint(objects.top_grasp(np.array([*grip[:2], TOOL_LIFT]), 0.0), CLOSED),
            ],
            video=video,
        )
        c = objects.actor_position(self.cube)[:2]
        d = self.target_xy - c
        dist = float(np.linalg.norm(d))
        d /= dist
        yaw = float(np.arctan2(-d[1], -d[0]))  # the tool's handle points away from the target
        rot = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
        start = c - rot @ HOOK_CUBE
        end = start + (dist + HOOK_CONTACT - HOOK_CUBE[0]) * d
        yield self.subgoal(
            f"{verb[1]} the cube to the target with the stick",
            f"{verb[1]} the cube at {self.cube_px()} to the target at {self.target_px()} "
            "with the stick",
            [
                Waypoint(objects.top_grasp(np.array([*start, TOOL_LIFT]), yaw), CLOSED),
                Waypoint(objects.top_grasp(np.array([*start, TOOL_LOW]), yaw), CLOSED, noisy=False),
                Waypoint(objects.top_grasp(np.array([*end, TOOL_LOW]), yaw), CLOSED, noisy=False),
            ],
            video=video,
        )

    def demonstrate(self, video: bool) -> Iterator[Subgoal]:
        yield from getattr(self, f"by_{self.layout['manner']}")(video)

    def plan(self) -> Iterator[Subgoal]:
        yield from self.demonstrate(video=True)
        grip = OPEN if self.layout["manner"] != "push" else CLOSED
        yield self.subgoal(
            "the robot moves away",
            "the robot moves away",
            [
                Waypoint(None, grip, hold=skills.GRIP_STEPS),
                *skills.retreat(self, 0.2),
                self.restaged(),
            ],
            video=True,
        )
        yield from self.demonstrate(video=False)


# -- InsertPeg --------------------------------------------------------------------------------

PEG_HALF = (0.07, 0.015, 0.015)  # a peg lies along its local x: head at +x, tail at -x
PEG_GRIP = 0.035  # a peg is grasped this far from its centre, on the chosen end's half
PEG_GRIP_DZ = 0.005  # ... and this far above its centre (the TCP stays 2 cm above the table)
PEG_COLORS = ("red", "green", "blue")
PEG_COUNT = {"easy": 1, "medium": 2, "hard": 3}
PEG_SLOTS = (-0.18, -0.06, 0.06, 0.18)  # the pegs' y places (each taken by at most one)
BOX_XY = np.array([-0.12, 0.0])  # nearer the robot than the pegs: the camera sees both
BOX_INNER = (0.04, 0.055)  # inner half sizes along x and y
BOX_WALL = 0.01
BOX_H = 0.10
HOLE_Z = 0.05  # the holes' centre height
HOLE_HALF = 0.027  # the holes are square, 5.4 cm wide
BOX_OUTER_Y = BOX_INNER[1] + BOX_WALL  # the side walls' outer faces lie at +-this
INSERT_DEPTH = 0.04  # the oracle pushes the free end this far past the wall's outer face
INSERTED = 0.03  # insertion counts from this depth
PRE_INSERT = 0.03  # the free end waits this far outside the wall before going in
CARRY_Z = 0.15  # TCP height while carrying a peg over the box
SIDES = {"left": 1, "right": -1}  # as seen by the robot: left is +y


def peg(scene: Any, name: str, color: str) -> Any:
    """A square peg with a coloured head half (+x) and a white tail half (-x)."""
    b = scene.create_actor_builder()
    b.add_box_collision(half_size=list(PEG_HALF), density=200)
    half = [PEG_HALF[0] / 2, PEG_HALF[1], PEG_HALF[2]]
    for sign, colour in ((1, color), (-1, "white")):
        b.add_box_visual(
            half_size=half,
            pose=sapien.Pose(p=[sign * PEG_HALF[0] / 2, 0, 0]),
            material=objects.material(colour),
        )
    b.initial_pose = sapien.Pose(p=[0, 0, PEG_HALF[2]])
    return b.build(name=name)


def aperture_box(scene: Any, name: str) -> Any:
    """A closed gray box (open only at the bottom) with a square hole in each side wall
    (the walls facing +y and -y), kinematic."""
    b = scene.create_actor_builder()
    ix, iy, t, h = BOX_INNER[0], BOX_INNER[1], BOX_WALL, BOX_H
    below, above = HOLE_Z - HOLE_HALF, h - HOLE_Z - HOLE_HALF
    slabs = [
        ((ix + t / 2, 0, h / 2), (t / 2, iy + t, h / 2)),
        ((-ix - t / 2, 0, h / 2), (t / 2, iy + t, h / 2)),
        ((0, 0, h - t / 2), (ix, iy, t / 2)),
    ]
    side = (ix - HOLE_HALF) / 2
    for s in (1, -1):
        y = s * (iy + t / 2)
        slabs += [
            ((0, y, below / 2), (ix, t / 2, below / 2)),
            ((0, y, h - above / 2), (ix, t / 2, above / 2)),
            ((HOLE_HALF + side, y, HOLE_Z), (side, t / 2, HOLE_HALF)),
            ((-HOLE_HALF - side, y, HOLE_Z), (side, t / 2, HOLE_HALF)),
        ]
    for p, half in slabs:
        pose = sapien.Pose(p=list(p))
        b.add_box_collision(half_size=list(half), pose=pose)
        b.add_box_visual(half_size=list(half), pose=pose, material=objects.material("gray"))
    b.initial_pose = sapien.Pose()
    return b.build_kinematic(name=name)


def wrap(a: float) -> float:
    return float((a + np.pi) % (2 * np.pi) - np.pi)


class InsertPeg(_Imitation):
    """Watch the robot grasp one peg by its head (coloured) or tail (white) half and insert it
    horizontally into the hole on the box's left or right side; the pegs are then put back
    where they started and the robot must do the same (paper E.14). Immediate failures:
    picking up another peg, grasping the wrong end, or the peg's end entering the box through
    the other side's hole. Simplified geometry: the box has real square holes, and a peg counts
    as inserted once its free end is ``INSERTED`` past the wall's outer face inside the hole's
    opening (the peg stays in the gripper). The paper gives no per-difficulty table: here
    easy has 1 peg, medium 2, hard 3 (lying roughly along x, between the box and the front
    camera)."""

    TASK = "InsertPeg"

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        n = PEG_COUNT[self.difficulty]
        colors = [str(c) for c in rng.permutation(PEG_COLORS)[:n]]
        slots = sorted(rng.choice(len(PEG_SLOTS), size=n, replace=False))
        pegs = [
            (
                float(rng.uniform(0.02, 0.08)),
                float(PEG_SLOTS[k] + rng.uniform(-0.01, 0.01)),
                float(rng.choice([0.0, np.pi]) + rng.uniform(-0.35, 0.35)),
            )
            for k in slots
        ]
        return {
            "colors": colors,
            "pegs": pegs,
            "goal_peg": int(rng.integers(n)),
            "end": str(rng.choice(["head", "tail"])),
            "side": str(rng.choice(list(SIDES))),
        }

    def build(self) -> None:
        self.pegs = [peg(self.scene, f"peg_{c}", c) for c in self.layout["colors"]]
        self.box = aperture_box(self.scene, "box")

    def place(self) -> None:
        objects.set_pose(self.box, (*BOX_XY, 0.0))
        self.restage()

    def restage(self) -> None:
        for actor, (x, y, a) in zip(self.pegs, self.layout["pegs"], strict=True):
            settle(actor, (x, y, PEG_HALF[2]), a)

    def reset_task_events(self) -> None:
        self.grasped: str | None = None  # the goal peg's end grasped last
        self.holding = False  # the goal peg is grasped now
        self.inserted = False

    def peg_frame(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The peg's centre and its head direction (unit, world)."""
        actor = self.pegs[k]
        q = actor.pose.q[0].cpu().numpy().astype(np.float64)
        return objects.actor_position(actor), rotate(q, np.array([1.0, 0.0, 0.0]))

    def held_end(self, k: int) -> str:
        centre, axis = self.peg_frame(k)
        return "head" if float(np.dot(self.tcp_position() - centre, axis)) > 0 else "tail"

    def entry(self, k: int) -> tuple[str, float] | None:
        """(side, depth) of a peg end inside a hole's opening past the wall's outer face."""
        centre, axis = self.peg_frame(k)
        for end in (centre + PEG_HALF[0] * axis, centre - PEG_HALF[0] * axis):
            rel = end - np.array([*BOX_XY, HOLE_Z])
            if abs(rel[0]) > HOLE_HALF or abs(rel[2]) > HOLE_HALF:
                continue
            for side, s in SIDES.items():
                depth = BOX_OUTER_Y - s * rel[1]
                if 0.0 < depth < BOX_OUTER_Y:
                    return side, float(depth)
        return None

    def track(self) -> None:
        lay = self.layout
        for k in range(len(self.pegs)):
            held = self.is_grasping(self.pegs[k])
            lifted = objects.actor_position(self.pegs[k])[2] > PEG_HALF[2] + 0.01
            if k != lay["goal_peg"]:
                if held and lifted and self.phase == "exec":
                    self.failure_reason = f"picked up the {lay['colors'][k]} peg"
                continue
            if held and not self.holding:
                self.grasped = self.held_end(k)
                if self.phase == "exec" and self.grasped != lay["end"]:
                    self.failure_reason = f"grasped the peg by its {self.grasped}"
            self.holding = held
        for k in range(len(self.pegs)):
            got = self.entry(k)
            if got is None:
                continue
            side, depth = got
            if self.phase == "exec" and side != lay["side"]:
                self.failure_reason = f"inserted a peg from the {side} side"
            elif k == lay["goal_peg"] and depth >= INSERTED and self.grasped == lay["end"]:
                self.inserted = True

    def tick_video(self) -> None:
        self.track()

    def tick_exec(self) -> None:
        self.track()
        if self.inserted and self.failure_reason is None:
            self.done = True

    def demo_over(self) -> bool:
        free = not any(self.is_grasping(p) for p in self.pegs)
        return self.inserted and free and self.tcp_position()[2] > CARRY_Z + 0.02

    def goal(self) -> str:
        return (
            "watch the video carefully, then grasp the same peg at the same end and insert it "
            "into the same side of the box as in the video"
        )

    def demonstrate(self, video: bool) -> Iterator[Subgoal]:
        lay = self.layout
        k, end, side = lay["goal_peg"], lay["end"], lay["side"]
        centre, axis = self.peg_frame(k)
        e = 1.0 if end == "head" else -1.0
        grip = centre + e * PEG_GRIP * axis
        grip[2] = PEG_HALF[2] + PEG_GRIP_DZ
        peg_yaw = float(np.arctan2(axis[1], axis[0]))
        yaw0 = wrap(2 * peg_yaw) / 2  # the finger yaw (mod pi) nearest the resting wrist
        beta = wrap(peg_yaw - yaw0)  # 0 or pi: the peg's yaw relative to the fingers
        s = SIDES[side]
        yaw1 = wrap(s * e * np.pi / 2 - beta)  # the head then points to +-y as needed
        reach = PEG_HALF[0] + PEG_GRIP  # from the grip point to the free end
        y_out = BOX_XY[1] + s * (BOX_OUTER_Y + PRE_INSERT + reach)
        y_in = BOX_XY[1] + s * (BOX_OUTER_Y - INSERT_DEPTH + reach)
        verb = ("the robot picks", "the robot inserts") if video else ("pick", "insert")
        color = lay["colors"][k]
        yield self.subgoal(
            f"{verb[0]} up the {color} peg by its {end}",
            f"{verb[0]} up the {color} peg by its {end} at {pixel_of(self, grip)}",
            [
                Waypoint(objects.top_grasp(grip, yaw0, skills.APPROACH), OPEN),
                Waypoint(objects.top_grasp(grip, yaw0), OPEN, noisy=False),
                Waypoint(None, CLOSED, hold=skills.GRIP_STEPS),
                Waypoint(objects.top_grasp(np.array([*grip[:2], CARRY_Z]), yaw0), CLOSED),
            ],
            video=video,
        )
        hole = np.array([BOX_XY[0], BOX_XY[1] + s * BOX_OUTER_Y, HOLE_Z])
        z = HOLE_Z + PEG_GRIP_DZ
        out = np.array([BOX_XY[0], y_out, z])
        yield self.subgoal(
            f"{verb[1]} the peg into the {side} side of the box",
            f"{verb[1]} the peg into the hole at {pixel_of(self, hole)} on the {side} side "
            "of the box",
            [
                Waypoint(objects.top_grasp(np.array([*out[:2], CARRY_Z]), yaw1), CLOSED),
                Waypoint(objects.top_grasp(out, yaw1), CLOSED, noisy=False),
                Waypoint(
                    objects.top_grasp(np.array([BOX_XY[0], y_in, z]), yaw1),
                    CLOSED,
                    noisy=False,
                ),
            ],
            video=video,
        )

    def plan(self) -> Iterator[Subgoal]:
        yield from self.demonstrate(video=True)
        yield self.subgoal(
            "the robot releases the peg and moves away",
            "the robot releases the peg and moves away",
            [
                Waypoint(None, OPEN, hold=skills.GRIP_STEPS),
                *skills.retreat(self, CARRY_Z + 0.05),
                self.restaged(),
            ],
            video=True,
        )
        yield from self.demonstrate(video=False)
