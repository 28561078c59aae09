"""Keyframe waypoints of the manipulation primitives RoboMME's oracle planner chains together,
as its ``subgoal_planner_func.py`` runs them (pick, put onto, put down, press the spring
button, hold, strong reset), and a resting-on-target test."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dataforge.manip.executor import CLOSED, HOLD_BLOCK, OPEN, Waypoint
from dataforge.manip.rotations import quat_mul
from dataforge.pipelines.robomme.env import START_QPOS
from dataforge.pipelines.robomme.objects import (
    actor_position,
    actor_yaw,
    grasp_yaw,
    top_grasp,
)

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor, Articulation, Link

    from dataforge.pipelines.robomme.env import RobommeEnv

GRIP_STEPS = 8  # our own peg grasps and push (where upstream's need RRT) close in 8 steps
TOGGLE_STEPS = HOLD_BLOCK  # ManiSkill's solver: open_gripper() / close_gripper() step 6 times
READY_Z = 0.15  # RoboMME's planner: the hover height of picks, puts and button presses


def current_yaw(env: RobommeEnv) -> float:
    """The hand's present yaw (``top_grasp`` convention)."""
    q = quat_mul(env.tcp_quat(), [0.0, -1.0, 0.0, 0.0])  # undo DOWN
    return 2.0 * float(np.arctan2(q[3], q[0]))


def nearest_face_yaw(env: RobommeEnv, actor: Actor | Link) -> float:
    """Upstream's grasp frame (``compute_grasp_info_by_obb`` with the TCP's closing axis as
    ``target_closing``): the cube face pair nearest the hand's present yaw."""
    now = current_yaw(env)
    return now + grasp_yaw(actor_yaw(actor) - now)


def pick(
    env: RobommeEnv,
    actor: Actor | Link,
    *,
    yaw: float | None = None,
    kind: str = "cube",
) -> list[Waypoint]:
    """``solve_pickup``: open (6 steps), to z 0.15 above the object, open again (6 steps),
    down to its centre, close (6 steps), up to z 0.15 over where the object is then (its
    keyframes "open" at the approach, "close" at the grasp and the lift; the opens record
    none). ``yaw``: the grasp frame (default upstream's, :func:`nearest_face_yaw`). ``kind``
    ("cube" or "bin": a container) marks the grasp keyframe, for RoboMME's missed-grasp
    recovery (``recovery.py``)."""
    p = actor_position(actor)
    if yaw is None:
        yaw = nearest_face_yaw(env, actor)

    def lift() -> np.ndarray:
        now = actor_position(actor)
        return top_grasp(np.array([now[0], now[1], READY_Z]), yaw)

    return [
        Waypoint(None, OPEN, hold=TOGGLE_STEPS),
        Waypoint(top_grasp(np.array([p[0], p[1], READY_Z]), yaw), OPEN),
        Waypoint(None, OPEN, hold=TOGGLE_STEPS),
        Waypoint(top_grasp(p, yaw), OPEN, noisy=False, grasp=kind, target=actor, key=CLOSED),
        Waypoint(None, CLOSED, hold=TOGGLE_STEPS),
        Waypoint(lift, CLOSED),
    ]


def put_onto(env: RobommeEnv, point: np.ndarray, height: float | None = None) -> list[Waypoint]:
    """``solve_putonto_whenhold(target, height)``: keeping the hand's present orientation,
    over ``point`` at z 0.15, down to ``point``'s height (or ``height``; the table stops the
    held cube where it must), open (6 steps), back up over ``point``. Keyframes: "close"
    above, "open" down and back up."""
    p, q = np.asarray(point, dtype=np.float64), env.tcp_quat()
    above = np.array([p[0], p[1], READY_Z, *q])
    down = np.array([p[0], p[1], p[2] if height is None else height, *q])
    return [
        Waypoint(above, CLOSED),
        Waypoint(down, CLOSED, noisy=False, key=OPEN),
        Waypoint(None, OPEN, hold=TOGGLE_STEPS),
        Waypoint(above, OPEN),
    ]


def put_down(env: RobommeEnv, release_z: float) -> list[Waypoint]:
    """``solve_putdown_whenhold(release_z)``: from where the hand is, straight down to
    ``release_z`` keeping its orientation, open (6 steps), up to z 0.15 from where the hand
    is then. Keyframes: "open" down; the rise records none."""
    p, q = env.tcp_position(), env.tcp_quat()

    def rise() -> np.ndarray:
        now = env.tcp_position()  # where the hand is once open
        return np.array([now[0], now[1], READY_Z, *q])

    return [
        Waypoint(np.array([p[0], p[1], release_z, *q]), CLOSED, noisy=False, key=OPEN),
        Waypoint(None, OPEN, hold=TOGGLE_STEPS),
        Waypoint(rise, OPEN, keyed=False),
    ]


STRONG_RESET_STEPS = 30  # solve_strong_reset(timestep=30)


def strong_reset(steps: int = STRONG_RESET_STEPS, *, open_first: bool = True) -> list[Waypoint]:
    """``solve_strong_reset``: open (6 steps; ``open_first`` False: the stick robot, which has
    no gripper to open), then the reset joint action (the start configuration,
    ``START_QPOS``, gripper open) sent ``steps`` times. Records no keyframe."""
    reset = Waypoint(None, OPEN, hold=steps, joints=np.asarray(START_QPOS[:7], dtype=np.float64))
    return [Waypoint(None, OPEN, hold=TOGGLE_STEPS, noisy=False), reset] if open_first else [reset]


def hold_obj(static: int, gripper: float = OPEN) -> list[Waypoint]:
    """``solve_hold_obj(static_steps)``: open (or close) the gripper, 6 steps a call, until
    ``static`` steps have passed (whole calls: ``static`` rounded up to a multiple of 6)."""
    return [Waypoint(None, gripper, hold=-(-static // TOGGLE_STEPS) * TOGGLE_STEPS)]


def press_spring_button(button: Articulation) -> list[Waypoint]:
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


def on_target(
    actor: Actor | Link, target_xy: np.ndarray, radius: float, *, max_z: float = 0.03
) -> bool:
    """The actor rests on the table within ``radius`` of the target centre."""
    p = actor_position(actor)
    return bool(np.hypot(*(p[:2] - np.asarray(target_xy)[:2])) < radius and p[2] < max_z)
