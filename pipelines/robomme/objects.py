"""Poses of the tabletop: top-down grasp poses, an actor's position and yaw, and named render
materials for the few task-specific visuals (upstream's objects are in ``assets.py``). Sizes in
metres; the table top is z = 0."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import sapien

from dataforge.manip.rotations import quat_mul, yaw_quat

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor, Articulation, Link

COLORS = {
    "red": (0.85, 0.12, 0.12, 1.0),
    "green": (0.15, 0.7, 0.2, 1.0),
    "blue": (0.15, 0.3, 0.85, 1.0),
    "yellow": (0.9, 0.8, 0.1, 1.0),
    "purple": (0.55, 0.25, 0.7, 1.0),
    "gray": (0.55, 0.55, 0.55, 1.0),
    "white": (0.97, 0.97, 0.97, 1.0),
    "black": (0.05, 0.05, 0.05, 1.0),
    "brown": (0.45, 0.3, 0.15, 1.0),
    "orange": (0.95, 0.5, 0.1, 1.0),
}
CUBE_HALF = 0.02
DOWN = np.array([0.0, 1.0, 0.0, 0.0])  # TCP z axis pointing down (wxyz)


def material(color: str | tuple[float, ...]) -> sapien.render.RenderMaterial:
    rgba = COLORS[color] if isinstance(color, str) else color
    return sapien.render.RenderMaterial(base_color=list(rgba))


def top_grasp(position: np.ndarray, yaw: float = 0.0, dz: float = 0.0) -> np.ndarray:
    """A TCP pose [p, wxyz] above ``position`` (+ ``dz``), pointing down, fingers closing along
    the yaw-rotated y axis."""
    p = np.asarray(position, dtype=np.float64).copy()
    p[2] += dz
    return np.concatenate([p, quat_mul(yaw_quat(yaw), DOWN)])


def actor_position(actor: Actor | Link | Articulation) -> np.ndarray:
    return actor.pose.p[0].cpu().numpy().astype(np.float64)


def actor_yaw(actor: Actor | Link | Articulation) -> float:
    w, x, y, z = actor.pose.q[0].cpu().numpy().astype(np.float64)
    return float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


def grasp_yaw(yaw: float) -> float:
    """The cube yaw (mod 90 degrees) closest to the Panda's resting wrist orientation."""
    return float((yaw + np.pi / 4) % (np.pi / 2) - np.pi / 4)
