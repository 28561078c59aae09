"""The MultiON agent: its actions, how they move it, and how its heading is written.

Actions and ids are the challenge task's (``POSSIBLE_ACTIONS: [FOUND, MOVE_FORWARD, TURN_LEFT,
TURN_RIGHT]``): FOUND 0, MOVE_FORWARD 1, TURN_LEFT 2, TURN_RIGHT 3. MOVE_FORWARD moves 0.25 m
along the heading when the whole step stays on navigable space, else the agent stays where it
is (no sliding, as the challenge config's ``ALLOW_SLIDING: False``); turns are 30 degrees;
FOUND does not move the agent.

Headings. Positions are in the scene's own frame (a ProcTHOR house's is AI2-THOR's: y up,
left-handed). ``start_rotation`` is habitat's quaternion ``[0, sin(a/2), 0, cos(a/2)]`` and the
agent faces ``(-sin a, 0, -cos a)``, habitat's forward (-z) turned by ``a``; in AI2-THOR's yaw
(0 faces +z, 90 faces +x) that is ``yaw = a + 180`` degrees. TURN_LEFT turns the agent to its
left as the rendered images show it: in the left-handed house frame its AI2-THOR yaw decreases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dataforge.errors import UsageError
from dataforge.nav.follower import Pose2D

FOUND, MOVE_FORWARD, TURN_LEFT, TURN_RIGHT = 0, 1, 2, 3
ACTIONS = ("FOUND", "MOVE_FORWARD", "TURN_LEFT", "TURN_RIGHT")  # index = action id


def action_id(action: int | str) -> int:
    """An action given as its id or its name (``MOVE_FORWARD``, case-insensitive)."""
    if isinstance(action, bool):
        raise UsageError(f"unknown action {action!r}")
    if isinstance(action, (int, np.integer)):
        if 0 <= int(action) < len(ACTIONS):
            return int(action)
    elif isinstance(action, str) and action.upper() in ACTIONS:
        return ACTIONS.index(action.upper())
    raise UsageError(
        f"unknown action {action!r}: one of {', '.join(f'{k} {n}' for k, n in enumerate(ACTIONS))}"
    )


def yaw_from_rotation(rotation: Sequence[float]) -> float:
    """AI2-THOR yaw (degrees in [0, 360)) of a ``start_rotation`` ``[x, y, z, w]``."""
    _, y, _, w = (float(v) for v in rotation)
    a = 2.0 * math.atan2(y, w)
    return (math.degrees(a) + 180.0) % 360.0


def rotation_from_yaw(yaw_deg: float) -> np.ndarray:
    """The ``[x, y, z, w]`` quaternion of an AI2-THOR yaw (the inverse of
    :func:`yaw_from_rotation`)."""
    a = math.radians(yaw_deg - 180.0)
    return np.array([0.0, math.sin(a / 2), 0.0, math.cos(a / 2)])


def start_pose(position: Sequence[float], rotation: Sequence[float]) -> Pose2D:
    return Pose2D(
        float(position[0]), float(position[2]), yaw_from_rotation(rotation), float(position[1])
    )


def step(pose: Pose2D, action: int, grid: object, forward: float, turn: float) -> Pose2D:
    """The pose after ``action``; ``grid`` (a NavGrid) decides whether a step is free."""
    if action == MOVE_FORWARD:
        nxt = pose.moved(forward)
        return nxt if grid.segment_clear(pose.xyz, nxt.xyz) else pose  # type: ignore[attr-defined]
    if action == TURN_LEFT:
        return pose.turned(-turn)
    if action == TURN_RIGHT:
        return pose.turned(turn)
    if action == FOUND:
        return pose
    raise UsageError(f"unknown action id {action}")


def rollout(
    pose: Pose2D, actions: Sequence[int], grid: object, forward: float, turn: float
) -> list[Pose2D]:
    """The start pose and the pose after each action."""
    poses = [pose]
    for a in actions:
        poses.append(step(poses[-1], a, grid, forward, turn))
    return poses
