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
# ManiSkill's solver: open_gripper() / close_gripper() step 6 times (the grasp of ``pick``
# closes in GRIP_STEPS, 8, for a firm hold)
TOGGLE_STEPS = 6


def pick(
    env: Any,
    actor: Any,
    *,
    half: float = CUBE_HALF,
    grip_z: float | None = None,
    kind: str = "cube",
) -> list[Waypoint]:
    """``solve_pickup``: open (6 steps), approach from above, open again (6 steps), descend,
    close, lift (its keyframes "open" at the approach, "close" at the grasp and the lift; the
    opens record none). Upstream approaches and lifts at z 0.15; ours 12 and 15 cm above the
    grasp (departures table of docs/robomme.md). ``kind`` ("cube" or "bin": a container)
    marks the grasp keyframe, for RoboMME's missed-grasp recovery (``recovery.py``)."""
    p = actor_position(actor)
    yaw = grasp_yaw(actor_yaw(actor))
    z = p[2] if grip_z is None else grip_z
    at = np.array([p[0], p[1], z])
    return [
        Waypoint(None, OPEN, hold=TOGGLE_STEPS),
        Waypoint(top_grasp(at, yaw, APPROACH), OPEN),
        Waypoint(None, OPEN, hold=TOGGLE_STEPS),
        Waypoint(top_grasp(at, yaw), OPEN, noisy=False, grasp=kind, target=actor, key=CLOSED),
        Waypoint(None, CLOSED, hold=GRIP_STEPS),
        Waypoint(top_grasp(at, yaw, LIFT), CLOSED),
    ]


def place(position: np.ndarray, *, half: float = CUBE_HALF, yaw: float = 0.0) -> list[Waypoint]:
    """Carry above ``position`` (table point), lower until the held cube rests on it, open, rise
    (``solve_putonto_whenhold``: its keyframes "close" above, "open" down and back up)."""
    p = np.asarray(position, dtype=np.float64)
    at = np.array([p[0], p[1], p[2] + half + 0.004])
    return [
        Waypoint(top_grasp(at, yaw, APPROACH), CLOSED),
        Waypoint(top_grasp(at, yaw), CLOSED, noisy=False, key=OPEN),
        Waypoint(None, OPEN, hold=TOGGLE_STEPS),
        Waypoint(top_grasp(at, yaw, APPROACH), OPEN),
    ]


READY_Z = 0.15  # RoboMME's planner: the hover height above a button (and a pick's approach)


def put_down(env: Any, release_z: float) -> list[Waypoint]:
    """``solve_putdown_whenhold(release_z)``: from where the hand is, straight down to
    ``release_z`` keeping its orientation, open (6 steps), up to z 0.15. Keyframes: "open"
    down; the rise records none."""
    tcp = env.agent.tcp.pose
    p = tcp.p[0].cpu().numpy().astype(np.float64)
    q = tcp.q[0].cpu().numpy().astype(np.float64)
    return [
        Waypoint(np.array([p[0], p[1], release_z, *q]), CLOSED, noisy=False, key=OPEN),
        Waypoint(None, OPEN, hold=TOGGLE_STEPS),
        Waypoint(np.array([p[0], p[1], READY_Z, *q]), OPEN, keyed=False),
    ]


def press_spring_button(button: Any) -> list[Waypoint]:
    """RoboMME's ``solve_button`` for an ``assets.button`` articulation: hover above it at
    z 0.15 pointing down, close the gripper, go down to the button's root (the fingertips push
    the cap in), come back up. Its keyframes: "open" at the hover, "close" there again before
    the gripper closes, "close" down and up, in upstream's orientation (:func:`button_key`)."""
    root = button.pose.p[0].cpu().numpy().astype(np.float64)
    ready = np.array([root[0], root[1], READY_Z])
    return [
        Waypoint(top_grasp(ready, 0.0), OPEN, key_pose=button_key(ready)),
        Waypoint(None, CLOSED, hold=TOGGLE_STEPS, key=CLOSED),
        Waypoint(top_grasp(root, 0.0), CLOSED, noisy=False, key_pose=button_key(root)),
        Waypoint(top_grasp(ready, 0.0), CLOSED, key_pose=button_key(ready)),
    ]


# upstream's button orientation (``solve_button``, ``solve_button_ready``):
# matrix_to_quaternion(euler_angles_to_matrix(deg2rad([180, 0, 0]), "XYZ")) in float32, the
# same rotation as ``objects.DOWN`` with the other sign (w the float32 rounding of cos(pi / 2));
# its waypoint roll is -pi + 1.5e-7 where DOWN's is +pi
BUTTON_QUAT = np.array([4.371138828673793e-08, -1.0, 0.0, 0.0])


def button_key(position: np.ndarray) -> np.ndarray:
    """The keyframe upstream records at ``position`` for a button press: [p, BUTTON_QUAT]."""
    return np.concatenate([np.asarray(position, dtype=np.float64)[:3], BUTTON_QUAT])


def on_target(actor: Any, target_xy: np.ndarray, radius: float, *, max_z: float = 0.03) -> bool:
    """The actor rests on the table within ``radius`` of the target centre."""
    p = actor_position(actor)
    return bool(np.hypot(*(p[:2] - np.asarray(target_xy)[:2])) < radius and p[2] < max_z)
