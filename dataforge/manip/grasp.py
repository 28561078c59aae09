"""Grasp detection for a parallel gripper on a single CPU ManiSkill scene, fast enough to run
for several objects at every control step.

The test is ManiSkill's ``Panda.is_grasping``: both fingers press on the object with at least
``min_force`` newtons, each force within ``max_angle`` degrees of the direction that finger
opens in. ManiSkill's CPU path scans the whole contact list and converts to torch once per
(finger, object) pair; :class:`GraspSensor` scans it once per physics state for every object
and stays in numpy. Call :meth:`GraspSensor.invalidate` whenever the physics state changes
(after a control step, a reset or a state load).
"""

from __future__ import annotations

from typing import Any

import numpy as np

MIN_FORCE_N = 0.5
MAX_ANGLE_DEG = 85.0


def _entity(obj: Any) -> Any:
    """The SAPIEN entity behind a ManiSkill Actor or Link of a single-env scene."""
    return obj._bodies[0].entity


def _y_axis(pose: Any) -> np.ndarray:
    """The world direction of a pose's local y axis."""
    w, x, y, z = (float(v) for v in pose.q)
    return np.array([2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)])


class GraspSensor:
    """``is_grasping(actor)`` of a two-finger gripper: ``left`` opens along its +y axis,
    ``right`` along its -y axis (the Panda's finger links)."""

    def __init__(self, scene: Any, left: Any, right: Any) -> None:
        self.scene = scene
        self.left, self.right = _entity(left), _entity(right)
        self._forces: dict[Any, tuple[np.ndarray, np.ndarray]] | None = None

    def invalidate(self) -> None:
        self._forces = None

    def _finger_forces(self) -> dict[Any, tuple[np.ndarray, np.ndarray]]:
        """Per touched entity: the contact force on it from the (left, right) finger."""
        if self._forces is None:
            forces: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
            dt = self.scene.px.timestep
            for contact in self.scene.px.get_contacts():
                a, b = contact.bodies[0].entity, contact.bodies[1].entity
                for finger, side in ((self.left, 0), (self.right, 1)):
                    if a is finger or a == finger:
                        other, sign = b, 1.0
                    elif b is finger or b == finger:
                        other, sign = a, -1.0
                    else:
                        continue
                    impulse = np.sum([p.impulse for p in contact.points], axis=0)
                    pair = forces.setdefault(other, (np.zeros(3), np.zeros(3)))
                    pair[side][:] += sign * np.asarray(impulse, dtype=np.float64) / dt
            self._forces = forces
        return self._forces

    def is_grasping(
        self, actor: Any, min_force: float = MIN_FORCE_N, max_angle: float = MAX_ANGLE_DEG
    ) -> bool:
        pair = self._finger_forces().get(_entity(actor))
        if pair is None:
            return False
        opens = (_y_axis(self.left.pose), -_y_axis(self.right.pose))
        cos_max = np.cos(np.deg2rad(max_angle))
        for force, direction in zip(pair, opens, strict=True):
            norm = float(np.linalg.norm(force))
            if norm < min_force:
                return False
            if float(direction @ force) / (norm * np.linalg.norm(direction)) < cos_max:
                return False
        return True
