"""RoboMME's primitive assets, built from boxes and cylinders (no downloads), and top-down
grasp poses. Sizes in metres; the table top is z = 0."""

from __future__ import annotations

from typing import Any

import numpy as np
import sapien

from dataforge.manip.rotations import quat_mul, yaw_quat

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
TARGET_RADIUS = 0.045
DOWN = np.array([0.0, 1.0, 0.0, 0.0])  # TCP z axis pointing down (wxyz)


def material(color: str | tuple[float, ...]) -> Any:
    rgba = COLORS[color] if isinstance(color, str) else color
    return sapien.render.RenderMaterial(base_color=list(rgba))


def cube(scene: Any, name: str, color: str, half: float = CUBE_HALF) -> Any:
    b = scene.create_actor_builder()
    b.add_box_collision(half_size=[half] * 3)
    b.add_box_visual(half_size=[half] * 3, material=material(color))
    b.initial_pose = sapien.Pose(p=[0, 0, half])
    return b.build(name=name)


def disc(scene: Any, name: str, color: str, radius: float = TARGET_RADIUS, z: float = 0.001) -> Any:
    """A flat coloured disc lying on the table (visual only, kinematic): targets, highlights."""
    b = scene.create_actor_builder()
    b.add_cylinder_visual(
        radius=radius,
        half_length=z,
        material=material(color),
        pose=sapien.Pose(q=[np.sqrt(0.5), 0, np.sqrt(0.5), 0]),  # cylinder axis x -> z
    )
    b.initial_pose = sapien.Pose(p=[0, 0, z])
    return b.build_kinematic(name=name)


def button(scene: Any, name: str, color: str = "red") -> Any:
    """A button: a dark base with a coloured cap, 4 cm tall (kinematic; pressing is detected
    from the fingertip position, and the task lowers the cap while it is pressed)."""
    b = scene.create_actor_builder()
    axis = sapien.Pose(p=[0, 0, 0.0125], q=[np.sqrt(0.5), 0, np.sqrt(0.5), 0])
    b.add_box_collision(half_size=[0.04, 0.04, 0.0125], pose=sapien.Pose(p=[0, 0, 0.0125]))
    b.add_box_visual(
        half_size=[0.04, 0.04, 0.0125],
        pose=sapien.Pose(p=[0, 0, 0.0125]),
        material=material("black"),
    )
    b.add_cylinder_visual(
        radius=0.025, half_length=0.01, material=material(color),
        pose=sapien.Pose(p=[0, 0, 0.03], q=axis.q),
    )  # fmt: skip
    b.initial_pose = sapien.Pose()
    return b.build_kinematic(name=name)


BUTTON_TOP = 0.04


def box_walls(
    scene: Any,
    name: str,
    inner: tuple[float, float],
    height: float,
    wall: float,
    color: str,
    *,
    top: bool,
    inner_color: str | None = None,
    kinematic: bool = False,
    knob: float = 0.0,
) -> Any:
    """An open box from five slabs: a bin (``top=False``, bottom closed) or an upside-down
    container (``top=True``: a closed top, open bottom, with a knob of half-size ``knob`` on
    top to grasp)."""
    b = scene.create_actor_builder()
    ix, iy = inner[0] / 2, inner[1] / 2
    h = height / 2
    slabs = [
        ((ix + wall / 2, 0, h), (wall / 2, iy + wall, h)),
        ((-ix - wall / 2, 0, h), (wall / 2, iy + wall, h)),
        ((0, iy + wall / 2, h), (ix, wall / 2, h)),
        ((0, -iy - wall / 2, h), (ix, wall / 2, h)),
    ]
    lid_z = height - wall / 2 if top else wall / 2
    slabs.append(((0, 0, lid_z), (ix, iy, wall / 2)))
    for k, (p, half) in enumerate(slabs):
        b.add_box_collision(half_size=list(half), pose=sapien.Pose(p=list(p)))
        colour = inner_color if (inner_color and k == 4) else color
        b.add_box_visual(
            half_size=list(half), pose=sapien.Pose(p=list(p)), material=material(colour)
        )
    if knob > 0:
        p = (0, 0, height + knob)
        b.add_box_collision(half_size=[knob] * 3, pose=sapien.Pose(p=list(p)))
        b.add_box_visual(
            half_size=[knob] * 3, pose=sapien.Pose(p=list(p)), material=material(color)
        )
    b.initial_pose = sapien.Pose()
    return b.build_kinematic(name=name) if kinematic else b.build(name=name)


def top_grasp(position: np.ndarray, yaw: float = 0.0, dz: float = 0.0) -> np.ndarray:
    """A TCP pose [p, wxyz] above ``position`` (+ ``dz``), pointing down, fingers closing along
    the yaw-rotated y axis."""
    p = np.asarray(position, dtype=np.float64).copy()
    p[2] += dz
    return np.concatenate([p, quat_mul(yaw_quat(yaw), DOWN)])


def actor_position(actor: Any) -> np.ndarray:
    return actor.pose.p[0].cpu().numpy().astype(np.float64)


def actor_yaw(actor: Any) -> float:
    w, x, y, z = actor.pose.q[0].cpu().numpy().astype(np.float64)
    return float(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))


def grasp_yaw(yaw: float) -> float:
    """The cube yaw (mod 90 degrees) closest to the Panda's resting wrist orientation."""
    return float((yaw + np.pi / 4) % (np.pi / 2) - np.pi / 4)


def set_pose(actor: Any, position: Any, yaw: float = 0.0) -> None:
    actor.set_pose(sapien.Pose(p=list(map(float, position)), q=list(yaw_quat(yaw))))
