"""RoboMME's objects as the public benchmark builds them (sizes, colours, materials, joints), from
``src/robomme/robomme_env/utils/object_generation.py`` and ManiSkill's ``build_cube``
(RoboMME/robomme_benchmark @a3842d1; facts in ``docs/robomme_upstream.md`` section 3).

Sizes in metres; the table top is z = 0. Every builder takes the ManiSkill scene, a name (the
upstream actor name: the state vector and the layouts of ``layouts/`` key on it) and returns the
built actor or articulation at its builder pose (the layouts place them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import sapien

if TYPE_CHECKING:
    from mani_skill.envs.scene import ManiSkillScene
    from mani_skill.utils.building import ActorBuilder
    from mani_skill.utils.structs import Actor, Articulation


CUBE_HALF = 0.02  # PICK_CUBE_CONFIGS["panda"]["cube_half_size"]
HIDDEN_CUBE_HALF = CUBE_HALF / 1.2  # the cubes the Unmask tasks hide under containers
RGB = {"red": (1.0, 0.0, 0.0), "green": (0.0, 1.0, 0.0), "blue": (0.0, 0.0, 1.0)}
TARGET_COLORS = {
    "purple": (160 / 255, 32 / 255, 240 / 255),
    "gray": (128 / 255, 128 / 255, 128 / 255),
    "green": (34 / 255, 139 / 255, 34 / 255),
    "red": (200 / 255, 33 / 255, 33 / 255),
}
WHITE = (1.0, 1.0, 1.0)
# the button (build_button with scale 1.5): a fixed base and a spring-loaded cap
BUTTON_SCALE = 1.5
BUTTON_BASE_HALF = tuple(h * BUTTON_SCALE for h in (0.025, 0.025, 0.005))
BUTTON_CAP_RADIUS = 0.015 * BUTTON_SCALE
BUTTON_CAP_HALF_LENGTH = 0.006 * BUTTON_SCALE
BUTTON_TRAVEL = 0.1 * BUTTON_SCALE
BUTTON_STIFFNESS, BUTTON_DAMPING = 800.0, 40.0
BUTTON_PRESSED_M = 0.005  # the cap pushed this far down counts as a press
BUTTON_TOP = 2 * BUTTON_BASE_HALF[2] + 2 * BUTTON_CAP_HALF_LENGTH  # cap top above the table
# containers (build_bin): an open box flipped over a cube-sized knob, opening down
BIN_INNER = 2.5 * CUBE_HALF
BIN_WALL, BIN_HEIGHT, BIN_FLOOR = 0.005, 2.5 * CUBE_HALF, 0.004
BIN_Z = BIN_FLOOR / 2 + BIN_HEIGHT  # the builder origin's height once flipped onto the table
# BinFill's board (build_board_with_hole as BinFill calls it)
BOARD_SIDE, BOARD_HOLE, BOARD_THICKNESS = 0.1, 0.08, 0.05
BOARD_COLOR = (0.8, 0.6, 0.4)
# pegs and InsertPeg's box
PEG_DENSITY = 1200.0
BOX_COLOR_HEX = "#FFD289"


def _material(rgb: tuple[float, ...], **kwargs: float) -> sapien.render.RenderMaterial:
    return sapien.render.RenderMaterial(base_color=[*rgb[:3], 1.0], **kwargs)


def hex_rgb(h: str) -> tuple[float, float, float]:
    """A ``#RRGGBB`` colour as SAPIEN gets it from ManiSkill's ``hex2rgba``: gamma 2.2 undone."""
    h = h.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))
    return (r**2.2, g**2.2, b**2.2)


def _build(builder: ActorBuilder, name: str, body: str) -> Actor:
    if body == "dynamic":
        return builder.build(name=name)
    if body == "kinematic":
        return builder.build_kinematic(name=name)
    raise ValueError(f"unknown body type {body!r}")


def cube(
    scene: ManiSkillScene,
    name: str,
    rgb: tuple[float, ...],
    *,
    half: float = CUBE_HALF,
    body: str = "dynamic",
    collision: bool = True,
) -> Actor:
    """ManiSkill's ``build_cube``: a box of half-size ``half`` in one flat colour."""
    b = scene.create_actor_builder()
    if collision:
        b.add_box_collision(half_size=[half] * 3)
    b.add_box_visual(half_size=[half] * 3, material=_material(rgb))
    b.initial_pose = sapien.Pose(p=[0, 0, half])
    return _build(b, name, body)


def ring_target(
    scene: ManiSkillScene, name: str, radius: float, thickness: float, style: str = "purple"
) -> Actor:
    """A flat target of five concentric discs alternating ``style``'s colour and white (radius
    r, 4/5 r, ... 1/5 r, each 0.01 mm thicker than the last), kinematic, without collision.
    The cylinders' axes lie along the actor's x axis: the layouts turn it upright."""
    b = scene.create_actor_builder()
    for k in range(5):
        colour = TARGET_COLORS[style] if k % 2 == 0 else WHITE
        b.add_cylinder_visual(
            radius=radius * (5 - k) / 5,
            half_length=thickness / 2 + k * 1e-5,
            material=_material(colour),
        )
    b.initial_pose = sapien.Pose()
    return b.build_kinematic(name=name)


def button(scene: ManiSkillScene, name: str = "button") -> Articulation:
    """The button articulation: a fixed white base and a grey cap on a prismatic joint along
    +z (limits [-travel, 0], negative is pressed) driven back to 0 by a spring."""
    builder = scene.create_articulation_builder()
    half = list(BUTTON_BASE_HALF)
    builder.initial_pose = sapien.Pose(p=[0, 0, half[2]])
    base = builder.create_link_builder()
    base.set_name("button_base")
    base.add_box_collision(half_size=half, density=200000)
    base.add_box_visual(half_size=half)
    cap = builder.create_link_builder(base)
    cap.set_name("button_cap")
    cap.set_joint_name("button_joint")
    x_up = [np.sqrt(0.5), 0.0, -np.sqrt(0.5), 0.0]  # the joint's x axis along world +z
    cap.set_joint_properties(
        type="prismatic",
        limits=[[-BUTTON_TRAVEL, 0.0]],
        pose_in_parent=sapien.Pose(p=[0, 0, half[2]], q=x_up),
        pose_in_child=sapien.Pose(p=[0, 0, 0], q=x_up),
        friction=0.0,
        damping=0.0,
    )
    shape = sapien.Pose(p=[0, 0, BUTTON_CAP_HALF_LENGTH], q=x_up)
    cap.add_cylinder_collision(
        half_length=BUTTON_CAP_HALF_LENGTH, radius=BUTTON_CAP_RADIUS, pose=shape, density=1500
    )
    cap.add_cylinder_visual(
        half_length=BUTTON_CAP_HALF_LENGTH,
        radius=BUTTON_CAP_RADIUS,
        pose=shape,
        material=_material((0.5, 0.5, 0.5)),
    )
    art = builder.build(name=name, fix_root_link=True)
    joint = next(j for j in art.get_joints() if j.name == "button_joint")
    joint.set_drive_properties(stiffness=BUTTON_STIFFNESS, damping=BUTTON_DAMPING)
    joint.set_drive_target(0.0)
    return art


def button_depth(art: Articulation) -> float:
    """How far the cap is pushed down (m)."""
    return float(-art.get_qpos()[0, 0])


def container(scene: ManiSkillScene, name: str) -> Actor:
    """``build_bin``: a floor, four walls and a cube-sized knob at the builder origin, built
    opening up; the layouts flip it (180 degrees about x) so it stands opening down, the knob
    on top. Dynamic, default (white) material."""
    inner, t, h, tf = BIN_INNER / 2, BIN_WALL / 2, BIN_HEIGHT / 2, BIN_FLOOR / 2
    off, z_wall = inner + t, tf + h
    parts = [
        ((0.0, 0.0, 0.0), (CUBE_HALF, CUBE_HALF, CUBE_HALF)),
        ((0.0, 0.0, tf), (inner + t, inner + t, tf)),
        ((-off, 0.0, z_wall), (t, inner + t, h)),
        ((off, 0.0, z_wall), (t, inner + t, h)),
        ((0.0, -off, z_wall), (inner + t, t, h)),
        ((0.0, off, z_wall), (inner + t, t, h)),
    ]
    b = scene.create_actor_builder()
    for p, half in parts:
        b.add_box_collision(sapien.Pose(list(p)), list(half))
        b.add_box_visual(sapien.Pose(list(p)), list(half))
    b.initial_pose = sapien.Pose(p=[0, 0, BIN_Z], q=[0.0, 1.0, 0.0, 0.0])
    return b.build(name=name)


def board_with_hole(scene: ManiSkillScene, name: str = "board_with_hole") -> Actor:
    """BinFill's bin: a 10 cm square board, 5 cm thick, with an 8 cm square hole, light brown,
    a black plate (visual only) at the bottom of the hole; kinematic, centred at the origin."""
    side, hole, th = BOARD_SIDE / 2, BOARD_HOLE / 2, BOARD_THICKNESS / 2
    rim = side - hole
    strips = [
        ((0.0, hole + rim / 2, 0.0), (side, rim / 2, th)),
        ((0.0, -(hole + rim / 2), 0.0), (side, rim / 2, th)),
        ((-(hole + rim / 2), 0.0, 0.0), (rim / 2, hole, th)),
        ((hole + rim / 2, 0.0, 0.0), (rim / 2, hole, th)),
    ]
    b = scene.create_actor_builder()
    brown = _material(BOARD_COLOR)
    for p, half in strips:
        b.add_box_collision(sapien.Pose(list(p)), list(half))
        b.add_box_visual(sapien.Pose(list(p)), list(half), material=brown)
    b.add_box_visual(
        sapien.Pose([0.0, 0.0, -th + th / 2]), [hole, hole, th / 2], material=_material((0, 0, 0))
    )
    b.initial_pose = sapien.Pose(p=[0, 0, th])
    return b.build_kinematic(name=name)


def peg(
    scene: ManiSkillScene,
    name: str,
    length: float,
    radius: float,
    head_rgb: tuple[float, ...],
    tail_rgb: tuple[float, ...],
) -> Articulation:
    """``build_peg``: two square bars (``length`` long, ``2 radius`` wide; collision 90 % of the
    length) joined end to end by a fixed joint: the head centred at the root, the tail at
    ``-length`` along x. Density 1200."""
    builder = scene.create_articulation_builder()
    builder.initial_pose = sapien.Pose(p=[length / 2, 0.0, radius])
    visual = [length / 2, radius, radius]
    collision = [length / 2 * 0.9, radius, radius]
    head = builder.create_link_builder()
    head.set_name("peg_head")
    head.add_box_collision(half_size=collision, density=PEG_DENSITY)
    head.add_box_visual(half_size=visual, material=_material(head_rgb, roughness=0.5, specular=0.5))
    tail = builder.create_link_builder(head)
    tail.set_name("peg_tail")
    tail.set_joint_name("peg_fixed_joint")
    tail.set_joint_properties(
        type="fixed",
        limits=[[0.0, 0.0]],
        pose_in_parent=sapien.Pose(p=[-length, 0.0, 0.0]),
        pose_in_child=sapien.Pose(),
        friction=0.0,
        damping=0.0,
    )
    tail.add_box_collision(half_size=collision, density=PEG_DENSITY)
    tail.add_box_visual(half_size=visual, material=_material(tail_rgb, roughness=0.5, specular=0.5))
    return builder.build(name=name, fix_root_link=False)


def box_with_hole(
    scene: ManiSkillScene,
    name: str = "box_with_hole",
    inner: float = 0.017,
    outer: float = 0.04,
    depth: float = 0.05,
) -> Actor:
    """``build_box_with_hole`` (InsertPeg): four walls around a square hole along x (half-depth
    ``depth``), ``2 outer`` wide, kinematic, #FFD289."""
    t = (outer - inner) / 2
    off = t + inner
    walls = [
        ((0.0, off, 0.0), (depth, t, outer)),
        ((0.0, -off, 0.0), (depth, t, outer)),
        ((0.0, 0.0, off), (depth, outer, t)),
        ((0.0, 0.0, -off), (depth, outer, t)),
    ]
    mat = _material(hex_rgb(BOX_COLOR_HEX), roughness=0.5, specular=0.5)
    b = scene.create_actor_builder()
    for p, half in walls:
        b.add_box_collision(sapien.Pose(list(p)), list(half))
        b.add_box_visual(sapien.Pose(list(p)), list(half), material=mat)
    b.initial_pose = sapien.Pose()
    return b.build_kinematic(name=name)
