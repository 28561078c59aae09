"""Keyframe waypoints of the manipulation primitives RoboMME's oracle planner chains together
(pick, place, press the spring button), and a resting-on-target test."""

from __future__ import annotations

from typing import Any

import numpy as np

from dataforge.manip.executor import CLOSED, OPEN, Waypoint
from dataforge.pipelines.robomme.objects import (
    CUBE_HALF,
    actor_position,
    actor_yaw,
    grasp_yaw,
    top_grasp,
)

APPROACH = 0.12  # height above a grasp or place point where descents start
LIFT = 0.15
GRIP_STEPS = 8


def pick(
    env: Any,
    actor: Any,
    *,
    half: float = CUBE_HALF,
    grip_z: float | None = None,
    kind: str = "cube",
) -> list[Waypoint]:
    """Approach from above, descend, close, lift. ``kind`` ("cube" or "bin": a container)
    marks the grasp keyframe, for RoboMME's missed-grasp recovery (``recovery.py``)."""
    p = actor_position(actor)
    yaw = grasp_yaw(actor_yaw(actor))
    z = p[2] if grip_z is None else grip_z
    at = np.array([p[0], p[1], z])
    return [
        Waypoint(top_grasp(at, yaw, APPROACH), OPEN),
        Waypoint(top_grasp(at, yaw), OPEN, noisy=False, grasp=kind, target=actor),
        Waypoint(None, CLOSED, hold=GRIP_STEPS),
        Waypoint(top_grasp(at, yaw, LIFT), CLOSED),
    ]


def place(position: np.ndarray, *, half: float = CUBE_HALF, yaw: float = 0.0) -> list[Waypoint]:
    """Carry above ``position`` (table point), lower until the held cube rests on it, open, rise."""
    p = np.asarray(position, dtype=np.float64)
    at = np.array([p[0], p[1], p[2] + half + 0.004])
    return [
        Waypoint(top_grasp(at, yaw, APPROACH), CLOSED),
        Waypoint(top_grasp(at, yaw), CLOSED, noisy=False),
        Waypoint(None, OPEN, hold=GRIP_STEPS),
        Waypoint(top_grasp(at, yaw, APPROACH), OPEN),
    ]


READY_Z = 0.15  # RoboMME's planner: the hover height above a button (and a pick's approach)


def press_spring_button(button: Any) -> list[Waypoint]:
    """RoboMME's ``solve_button`` for an ``assets.button`` articulation: hover above it at
    z 0.15 pointing down, close the gripper, go down to the button's root (the fingertips push
    the cap in), come back up."""
    root = button.pose.p[0].cpu().numpy().astype(np.float64)
    ready = np.array([root[0], root[1], READY_Z])
    return [
        Waypoint(top_grasp(ready, 0.0), OPEN),
        Waypoint(None, CLOSED, hold=GRIP_STEPS),
        Waypoint(top_grasp(root, 0.0), CLOSED, noisy=False),
        Waypoint(top_grasp(ready, 0.0), CLOSED),
    ]


def on_target(actor: Any, target_xy: np.ndarray, radius: float, *, max_z: float = 0.03) -> bool:
    """The actor rests on the table within ``radius`` of the target centre."""
    p = actor_position(actor)
    return bool(np.hypot(*(p[:2] - np.asarray(target_xy)[:2])) < radius and p[2] < max_z)
