"""Keyframe waypoints of the manipulation primitives RoboMME's oracle planner chains together,
and the event detectors (pick, place, press) the tasks' checks count with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dataforge.manip.executor import CLOSED, OPEN, Waypoint
from dataforge.pipelines.robomme.assets import BUTTON_PRESSED_M, button_depth
from dataforge.pipelines.robomme.objects import (
    BUTTON_TOP,
    CUBE_HALF,
    actor_position,
    actor_yaw,
    grasp_yaw,
    top_grasp,
)

APPROACH = 0.12  # height above a grasp or place point where descents start
LIFT = 0.15
GRIP_STEPS = 8
LIFTED_Z = 0.06  # an object's centre this high above the table counts as picked up
PRESS_DEPTH = 0.012  # the fingertip goes this far below the button's top


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


def press(button_actor: Any, *, hold: int = 4) -> list[Waypoint]:
    """Close the gripper, push the button's cap down with the fingertips, rise again."""
    p = actor_position(button_actor)
    top = np.array([p[0], p[1], p[2] + BUTTON_TOP])
    return [
        Waypoint(None, CLOSED, hold=GRIP_STEPS // 2),
        Waypoint(top_grasp(top, 0.0, APPROACH), CLOSED),
        Waypoint(top_grasp(top, 0.0, -PRESS_DEPTH), CLOSED, hold=hold, noisy=False),
        Waypoint(top_grasp(top, 0.0, APPROACH), CLOSED),
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


def retreat(env: Any, height: float = 0.25) -> list[Waypoint]:
    """Rise straight up to ``height`` above the table."""
    p = env.tcp_position()
    return [Waypoint(top_grasp(np.array([p[0], p[1], height]), 0.0), OPEN)]


@dataclass
class PickTracker:
    """Counts pick-ups and placements of one actor: a pick-up is the actor grasped with its
    centre above ``LIFTED_Z``; a placement is its release (no longer grasped) afterwards."""

    actor: Any
    picks: int = 0
    places: int = 0
    held: bool = False

    def update(self, env: Any) -> tuple[bool, bool]:
        """Returns (picked now, released now)."""
        grasped = env.is_grasping(self.actor)
        lifted = actor_position(self.actor)[2] > LIFTED_Z
        picked = released = False
        if not self.held and grasped and lifted:
            self.held, self.picks, picked = True, self.picks + 1, True
        elif self.held and not grasped:
            self.held, self.places, released = False, self.places + 1, True
        return picked, released


@dataclass
class ButtonTracker:
    """Counts presses of a button: the TCP comes within its cap radius and below its top."""

    actor: Any
    presses: int = 0
    down: bool = False

    def update(self, env: Any) -> bool:
        tcp = env.tcp_position()
        p = actor_position(self.actor)
        inside = np.hypot(*(tcp[:2] - p[:2])) < 0.03 and tcp[2] < p[2] + BUTTON_TOP - 0.004
        pressed = inside and not self.down
        if pressed:
            self.presses += 1
        self.down = bool(inside)
        return bool(pressed)


@dataclass
class SpringButtonTracker:
    """Counts presses of an ``assets.button`` articulation: its cap pushed more than 5 mm down
    (RoboMME's ``is_button_pressed``); a press counts once until the cap comes back up."""

    button: Any
    presses: int = 0
    down: bool = False

    def pressed(self) -> bool:
        return button_depth(self.button) > BUTTON_PRESSED_M

    def update(self, env: Any = None) -> bool:
        now = self.pressed()
        new = now and not self.down
        if new:
            self.presses += 1
        self.down = now
        return new


def on_target(actor: Any, target_xy: np.ndarray, radius: float, *, max_z: float = 0.03) -> bool:
    """The actor rests on the table within ``radius`` of the target centre."""
    p = actor_position(actor)
    return bool(np.hypot(*(p[:2] - np.asarray(target_xy)[:2])) < radius and p[2] < max_z)
