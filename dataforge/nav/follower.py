"""A greedy shortest-path follower: waypoints -> discrete actions for oracle agents.

Actions are ``("TURN", degrees)`` (positive turns clockwise seen from above, as AI2-THOR's
RotateRight and its yaw), ``("FORWARD", metres)`` and finally ``("STOP", 0.0)``. Headings use
AI2-THOR's yaw: 0 faces +z, 90 faces +x. Turns are multiples of ``turn_deg`` and forward moves
at most ``step``; the follower re-aims after every step, so it converges on each waypoint
within half a step even though its headings are quantised.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dataforge.errors import UsageError

Action = tuple[str, float]


def heading_to(a: Sequence[float], b: Sequence[float]) -> float:
    """AI2-THOR yaw (degrees) that faces from ``a`` to ``b`` (x, y, z points)."""
    return math.degrees(math.atan2(b[0] - a[0], b[2] - a[2])) % 360.0


def wrap(deg: float) -> float:
    """An angle in (-180, 180]."""
    d = (deg + 180.0) % 360.0 - 180.0
    return 180.0 if d == -180.0 else d


@dataclass(frozen=True)
class Pose2D:
    x: float
    z: float
    yaw: float

    @property
    def xyz(self) -> np.ndarray:
        return np.array([self.x, 0.0, self.z])


@dataclass(frozen=True)
class FollowResult:
    actions: tuple[Action, ...]
    poses: tuple[Pose2D, ...]
    reached: bool
    blocked: bool = False


@dataclass(frozen=True)
class GreedyFollower:
    step: float = 0.25
    turn_deg: float = 30.0
    goal_radius: float = 0.2
    max_actions: int = 10_000

    def __post_init__(self) -> None:
        if self.step <= 0 or not 0 < self.turn_deg <= 180 or self.goal_radius <= 0:
            raise UsageError("step and goal_radius must be positive, turn_deg in (0, 180]")

    def actions(
        self, start: Sequence[float], yaw: float, waypoints: Sequence[Sequence[float]]
    ) -> FollowResult:
        """Actions that take an agent at ``start`` facing ``yaw`` through ``waypoints``."""
        return self._run(start, yaw, waypoints, None)

    def follow(
        self, grid: Any, start: Sequence[float], goal: Sequence[float], yaw: float
    ) -> FollowResult:
        """Plan on ``grid`` (a NavGrid) and follow; a forward move that would leave navigable
        space stops the agent (``blocked``)."""
        path = grid.shortest_path(start, goal)
        if not path:
            return FollowResult((("STOP", 0.0),), (Pose2D(start[0], start[2], yaw),), False)
        return self._run(start, yaw, [*path[1:], np.asarray(goal, dtype=float)], grid)

    def _run(
        self,
        start: Sequence[float],
        yaw: float,
        waypoints: Sequence[Sequence[float]],
        grid: Any,
    ) -> FollowResult:
        pose = Pose2D(float(start[0]), float(start[2]), float(yaw) % 360.0)
        actions: list[Action] = []
        poses = [pose]
        goal = np.asarray(waypoints[-1], dtype=float) if len(waypoints) else pose.xyz
        for k, wp in enumerate(waypoints):
            target = np.asarray(wp, dtype=float)
            tol = self.goal_radius if k == len(waypoints) - 1 else self.step / 2
            while _dist(pose, target) > tol:
                if len(actions) >= self.max_actions:
                    return FollowResult(tuple(actions), tuple(poses), False)
                move = self._next_move(pose, target, grid)
                if move is None:
                    if k < len(waypoints) - 1:
                        break  # this waypoint cannot be approached closer: aim at the next
                    actions.append(("STOP", 0.0))
                    return FollowResult(tuple(actions), tuple(poses), False, blocked=True)
                turn, d = move
                if turn:
                    pose = Pose2D(pose.x, pose.z, (pose.yaw + turn) % 360.0)
                    actions.append(("TURN", float(turn)))
                    poses.append(pose)
                r = math.radians(pose.yaw)
                pose = Pose2D(pose.x + d * math.sin(r), pose.z + d * math.cos(r), pose.yaw)
                actions.append(("FORWARD", float(d)))
                poses.append(pose)
        actions.append(("STOP", 0.0))
        return FollowResult(tuple(actions), tuple(poses), _dist(pose, goal) <= self.goal_radius)

    def _next_move(self, pose: Pose2D, target: np.ndarray, grid: Any) -> tuple[float, float] | None:
        """(turn, forward) toward ``target``: the quantised heading nearest to the target's
        bearing, else the other one beside it, whichever moves closer without leaving
        navigable space; None when neither does."""
        off = wrap(heading_to(pose.xyz, target) - pose.yaw)
        lo = self.turn_deg * math.floor(off / self.turn_deg)
        options = sorted({wrap(lo), wrap(lo + self.turn_deg)}, key=lambda t: abs(wrap(off - t)))
        here = _dist(pose, target)
        for turn in options:
            r = math.radians(pose.yaw + turn)
            d = min(self.step, here)
            nxt = Pose2D(pose.x + d * math.sin(r), pose.z + d * math.cos(r), pose.yaw + turn)
            if _dist(nxt, target) >= here - 1e-9:
                continue
            if grid is not None and not grid.segment_clear(pose.xyz, nxt.xyz):
                continue
            return (0.0 if abs(turn) < 1e-9 else turn), d
        return None


def _dist(pose: Pose2D, p: np.ndarray) -> float:
    return math.hypot(pose.x - float(p[0]), pose.z - float(p[2]))
