"""RoboMME's object samplers, reimplemented without a simulator (issue 21).

Upstream places objects with rejection samplers in
``src/robomme/robomme_env/utils/object_generation.py`` (RoboMME/robomme_benchmark @a3842d1):
``build_button``, ``spawn_random_cube``, ``spawn_random_target``, ``spawn_random_bin``. They draw
from an explicit ``torch.Generator`` and test candidates against 2-D oriented boxes of the
actors already in the scene. The functions here make the same torch draws in the same order
(rejected trials included), use the same bounds and the same rejection tests, and build the
obstacle boxes the way upstream does, so they return the same positions for the same generator
state.

Obstacle boxes (``get_actor_obb`` of ManiSkill, ``examples/motionplanning/base_motionplanner/
utils.py``): the actor's collision shapes become ``trimesh.creation.box`` meshes (shape frame),
are merged into one ``trimesh.Trimesh`` and moved to the world by the SAPIEN pose matrix; the box
is trimesh's ``bounding_box_oriented``. Upstream then keeps the first two columns of that box's
rotation, projected to the table (``_trimesh_box_to_obb2d``). trimesh sorts the box axes by
extent; for a cube the three extents differ only by float32 noise, so the vertical axis may land
in column 0 or 1, which projects to (0, 0): the obstacle then degenerates to a segment. To get
the same noise this module reproduces, bit for bit, the float32 quaternion ManiSkill computes
(``rotation_conversions.euler_angles_to_matrix`` + ``matrix_to_quaternion``) and the float32
matrix SAPIEN's ``Pose.to_transformation_matrix`` makes from it, and feeds trimesh the same
vertex arrays. Actors without collision shapes (all targets) make ``get_actor_obb`` fail, and
upstream silently skips them: cubes and bins never avoid targets.

Poses are ``(x, y, z, qw, qx, qy, qz)`` tuples of float32 values (what the env reports).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np
import torch
import trimesh

if TYPE_CHECKING:
    from typing_extensions import TypeIs

Pose7 = tuple[float, float, float, float, float, float, float]
Obb2D = tuple[np.ndarray, np.ndarray, np.ndarray]
"""A 2-D oriented box: centre (2,), axes (2, 2) as columns, half extents (2,)."""

MAX_TRIALS = 256  # object_generation.py: max_trials default of every sampler
CUBE_HALF_SIZE = 0.02  # PICK_CUBE_CONFIGS["panda"]["cube_half_size"], used by every task here
BUTTON_BASE_HALF = (0.025, 0.025, 0.005)  # build_button: base_half default (before scale)
BUTTON_SCALE = 1.5  # every task calls build_button(scale=1.5)
BIN_Z = 0.052  # build_bin: floor half 0.002 + wall height 0.05 (opening down)
BIN_WALL = 0.005  # build_bin / spawn_random_bin: wall_thickness


class PlacementError(RuntimeError):
    """A sampler found no free spot in ``max_trials`` trials (upstream raises RuntimeError)."""


# --------------------------------------------------------------------------------------------
# Draws (the torch calls upstream makes) and small shared task facts
# --------------------------------------------------------------------------------------------

PANDA_RESET_QPOS = tuple(
    float(v)
    for v in np.array([0, 0, 0, -np.pi / 2, 0, np.pi / 2, np.pi / 4, 0.04, 0.04], np.float32)
)
"""``utils/reset_panda.py``: the robot qpos every ``_initialize_episode`` sets (float32)."""

RECOVERY_MODES = ("xy", "z")  # utils/task4recovery.py: FAIL_GRASP_MODES


def make_generator(seed: int) -> torch.Generator:
    """``torch.Generator()`` seeded as upstream seeds every task stream."""
    generator = torch.Generator()
    generator.manual_seed(int(seed))
    return generator


def rand(generator: torch.Generator) -> float:
    """One ``torch.rand(1, generator=...)`` draw as a Python float."""
    return torch.rand(1, generator=generator).item()


def randint(generator: torch.Generator, low: int, high: int) -> int:
    """``torch.randint(low, high, (1,), generator=...)`` (exclusive; draws even for 1 value)."""
    return int(torch.randint(low, high, (1,), generator=generator).item())


def randperm(generator: torch.Generator, n: int) -> list[int]:
    """``torch.randperm(n, generator=...)`` as a list."""
    return torch.randperm(n, generator=generator).tolist()


def uniform(generator: torch.Generator, low: float, high: float) -> float:
    """``torch.FloatTensor(1).uniform_(low, high, generator=...)`` as a Python float."""
    return torch.empty(1, dtype=torch.float32).uniform_(low, high, generator=generator).item()


def recovery_draw(
    generator: torch.Generator, pick_task_indices: Sequence[int], mode: str | None
) -> dict[str, object]:
    """``task4recovery.py::inject_fail_grasp``: which pick task gets the failed grasp.

    ``randint(0, n_picks)`` picks one of the non-video pick tasks (their task-list indices in
    ``pick_task_indices``); only when ``mode`` is None a second ``randint(0, 2)`` picks the mode
    from ("xy", "z"). The harness always passes a mode ("z" for episodes 0-2, "xy" for 3-5). No
    draw when the task list has no pick.
    """
    if not pick_task_indices:
        return {}
    choice = randint(generator, 0, len(pick_task_indices))
    if mode is None:
        mode = RECOVERY_MODES[randint(generator, 0, len(RECOVERY_MODES))]
    return {"choice": choice, "task_index": int(pick_task_indices[choice]), "mode": mode.lower()}


# --------------------------------------------------------------------------------------------
# Rotations, as ManiSkill and SAPIEN compute them (float32)
# --------------------------------------------------------------------------------------------


def _axis_rotation(axis: str, angle: torch.Tensor) -> torch.Tensor:
    """Rotation matrices about one axis (ManiSkill ``_axis_angle_rotation``, same torch ops)."""
    c, s = torch.cos(angle), torch.sin(angle)
    one, zero = torch.ones_like(angle), torch.zeros_like(angle)
    rows = {
        "X": (one, zero, zero, zero, c, -s, zero, s, c),
        "Y": (c, zero, s, zero, one, zero, -s, zero, c),
        "Z": (c, -s, zero, s, c, zero, zero, zero, one),
    }[axis]
    return torch.stack(rows, -1).reshape((*angle.shape, 3, 3))


def euler_xyz_matrix(angles: torch.Tensor) -> torch.Tensor:
    """ManiSkill's ``euler_angles_to_matrix(angles, "XYZ")``: ``R_x @ R_y @ R_z`` (float32)."""
    rx, ry, rz = (
        _axis_rotation(a, e) for a, e in zip("XYZ", torch.unbind(angles, -1), strict=True)
    )
    return torch.matmul(torch.matmul(rx, ry), rz)


def matrix_quaternion(matrix: torch.Tensor) -> torch.Tensor:
    """ManiSkill's ``matrix_to_quaternion`` (wxyz, real part made non-negative), same torch ops.

    Of the four algebraically equal candidates it keeps the one with the largest ``|q_i|``.
    """
    batch = matrix.shape[:-2]
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = torch.unbind(matrix.reshape((*batch, 9)), dim=-1)
    squares = torch.stack(
        [
            1.0 + m00 + m11 + m22,
            1.0 + m00 - m11 - m22,
            1.0 - m00 + m11 - m22,
            1.0 - m00 - m11 + m22,
        ],
        dim=-1,
    )
    q_abs = torch.zeros_like(squares)
    positive = squares > 0
    q_abs[positive] = torch.sqrt(squares[positive])
    by_rijk = torch.stack(
        [
            torch.stack([q_abs[..., 0] ** 2, m21 - m12, m02 - m20, m10 - m01], dim=-1),
            torch.stack([m21 - m12, q_abs[..., 1] ** 2, m10 + m01, m02 + m20], dim=-1),
            torch.stack([m02 - m20, m10 + m01, q_abs[..., 2] ** 2, m12 + m21], dim=-1),
            torch.stack([m10 - m01, m20 + m02, m21 + m12, q_abs[..., 3] ** 2], dim=-1),
        ],
        dim=-2,
    )
    floor = torch.tensor(0.1).to(dtype=q_abs.dtype)
    candidates = by_rijk / (2.0 * q_abs[..., None].max(floor))
    best = torch.nn.functional.one_hot(q_abs.argmax(dim=-1), num_classes=4) > 0.5
    quat = candidates[best, :].reshape((*batch, 4))
    return torch.where(quat[..., 0:1] < 0, -quat, quat)


def yaw_quaternion(yaw: float) -> np.ndarray:
    """Float32 wxyz quaternion of a rotation by ``yaw`` radians about z.

    ``object_generation.py::_yaw_to_quat_tensor`` (sampled cubes): a (1, 3) float32 tensor
    ``[0, 0, yaw]`` through euler XYZ -> matrix -> quaternion.
    """
    angles = torch.tensor([[0.0, 0.0, float(yaw)]], dtype=torch.float32)
    return matrix_quaternion(euler_xyz_matrix(angles))[0].numpy()


def euler_deg_quaternion(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Float32 wxyz quaternion of XYZ euler angles given in degrees.

    The ``torch.deg2rad(torch.tensor([r, p, y]))`` form (shape (3,)) used for targets
    (``spawn_random_target``: (0, 90, 0)) and bins (``build_bin``: (180, 0, yaw)).
    """
    angles = torch.deg2rad(torch.tensor([roll, pitch, yaw], dtype=torch.float32))
    return matrix_quaternion(euler_xyz_matrix(angles)).numpy()


def sapien_pose_matrix(p: Sequence[float], q: Sequence[float]) -> np.ndarray:
    """SAPIEN's ``Pose(p, q).to_transformation_matrix()``: float32 (4, 4).

    Measured against sapien 3.0 on 20,000 quaternions (bit for bit): the quaternion is
    normalised in float32 with the squared norm summed as ``(x² + z²) + (y² + w²)`` and divided
    (not multiplied by the inverse), then Eigen's ``toRotationMatrix`` arithmetic.
    """
    f = np.float32
    w, x, y, z = (f(v) for v in q)
    norm = f(np.sqrt(f(f(x * x + z * z) + f(y * y + w * w))))
    w, x, y, z = w / norm, x / norm, y / norm, z / norm
    tx, ty, tz = f(2) * x, f(2) * y, f(2) * z
    twx, twy, twz = tx * w, ty * w, tz * w
    txx, txy, txz = tx * x, ty * x, tz * x
    tyy, tyz, tzz = ty * y, tz * y, tz * z
    matrix = np.eye(4, dtype=np.float32)
    matrix[:3, :3] = [
        [f(1) - (tyy + tzz), txy - twz, txz + twy],
        [txy + twz, f(1) - (txx + tzz), tyz - twx],
        [txz - twy, tyz + twx, f(1) - (txx + tyy)],
    ]
    matrix[:3, 3] = np.asarray(p, dtype=np.float32)
    return matrix


def pose7(p: Sequence[float] | np.ndarray, q: Sequence[float] | np.ndarray) -> Pose7:
    """A pose tuple of the float32 values the env stores and reports."""
    values = [float(v) for v in np.asarray(p, dtype=np.float32)]
    values += [float(v) for v in np.asarray(q, dtype=np.float32)]
    return tuple(values)  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# Bodies (what the samplers know of a placed actor) and their 2-D obstacle boxes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoxShape:
    """One box collision shape: half size and offset in the actor frame (identity rotation)."""

    half_size: tuple[float, float, float]
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass
class Body:
    """A placed actor as the samplers see it.

    ``shapes`` are its collision boxes (empty: no collision, e.g. targets, which upstream's
    ``get_actor_obb`` cannot handle and the samplers then ignore). ``target_radius`` is set for
    targets made by ``spawn_random_target`` (their ``_target_radius`` attribute), which
    ``spawn_random_target`` avoids as circles.
    """

    name: str
    pose: Pose7
    shapes: tuple[BoxShape, ...] = ()
    target_radius: float | None = None

    @property
    def xy(self) -> np.ndarray:
        """The pose's (x, y) as float64."""
        return np.array(self.pose[:2], dtype=np.float64)


def cube_shapes(half_size: float) -> tuple[BoxShape, ...]:
    """Collision of a cube from ``actors.build_cube`` / ``spawn_fixed_cube(dynamic=True)``."""
    return (BoxShape((half_size, half_size, half_size)),)


def bin_shapes(cube_half_size: float = CUBE_HALF_SIZE) -> tuple[BoxShape, ...]:
    """The six collision boxes of ``object_generation.py::build_bin`` (actor frame, opening up).

    A cube of the task's cube half size at the origin (the knob once flipped), the floor, then
    the -x, +x, -y, +y walls. Inner side and wall height are ``2.5 * cube_half_size``.
    """
    inner_half = cube_half_size * 2.5 * 0.5
    t = BIN_WALL * 0.5
    h = cube_half_size * 2.5 * 0.5
    tf = 0.004 * 0.5  # build_bin: floor_thickness 0.004
    offset = inner_half + t
    z_wall = tf + h
    side_wall = (t, inner_half + t, h)
    front_wall = (inner_half + t, t, h)
    return (
        BoxShape((cube_half_size, cube_half_size, cube_half_size)),
        BoxShape((inner_half + t, inner_half + t, tf), (0.0, 0.0, tf)),
        BoxShape(side_wall, (-offset, 0.0, z_wall)),
        BoxShape(side_wall, (+offset, 0.0, z_wall)),
        BoxShape(front_wall, (0.0, -offset, z_wall)),
        BoxShape(front_wall, (0.0, +offset, z_wall)),
    )


def collision_mesh(body: Body) -> trimesh.Trimesh | None:
    """The world-frame collision mesh ManiSkill's ``get_component_mesh`` builds, or None.

    Each box becomes ``trimesh.creation.box(extents=2 * half)`` with the half size in float32
    (PhysX stores it so), moved by its local pose; the boxes are merged into one processed
    ``Trimesh`` and moved by the float32 SAPIEN matrix of the actor pose.
    """
    if not body.shapes:
        return None
    vertices, faces, count = [], [], 0
    for shape in body.shapes:
        mesh = trimesh.creation.box(extents=2 * np.asarray(shape.half_size, dtype=np.float32))
        mesh.apply_transform(sapien_pose_matrix(shape.offset, (1.0, 0.0, 0.0, 0.0)))
        vertices.append(mesh.vertices)
        faces.append(mesh.faces + count)
        count += len(mesh.vertices)
    merged = trimesh.Trimesh(np.vstack(vertices), np.vstack(faces))
    merged.apply_transform(sapien_pose_matrix(body.pose[:3], body.pose[3:]))
    return merged


def _unit(v: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """``v`` normalised, or unchanged when shorter than ``eps`` (upstream ``_safe_unit``)."""
    n = np.linalg.norm(v)
    return v if n < eps else v / n


@functools.lru_cache(maxsize=4096)
def _oriented_box(pose: Pose7, shapes: tuple[BoxShape, ...]) -> tuple[np.ndarray, np.ndarray]:
    """trimesh's ``bounding_box_oriented`` (transform, extents) of a body's collision mesh.

    Cached (a pure function of pose and shapes; trimesh takes ~5 ms per box and every
    sampler call re-reads the boxes of all earlier actors). Callers must not mutate the arrays.
    """
    mesh = collision_mesh(Body("", pose, shapes))
    assert mesh is not None
    box = mesh.bounding_box_oriented
    transform = np.asarray(box.primitive.transform, dtype=np.float64)
    extents = np.asarray(box.primitive.extents, dtype=np.float64)
    return transform, extents


def actor_obb2d(body: Body, pad: float = 0.0) -> Obb2D | None:
    """Upstream's 2-D obstacle box of an actor, or None when it has no collision.

    trimesh ``bounding_box_oriented`` of :func:`collision_mesh`; centre = its translation's
    (x, y), axes = the (x, y) rows of the FIRST TWO columns of its rotation, each normalised
    unless near zero (then the box is a segment), half extents = half its first two extents
    plus ``pad`` (``_trimesh_box_to_obb2d``).
    """
    if not body.shapes:
        return None
    transform, extents = _oriented_box(body.pose, body.shapes)
    rotation = transform[:3, :3]
    axes = np.stack([_unit(rotation[:2, 0]), _unit(rotation[:2, 1])], axis=1)
    half = 0.5 * extents[:2]
    if pad > 0:
        half = half + float(pad)
    return transform[:2, 3].copy(), axes, half


def square_obb2d(center_xy: Sequence[float], half_size: float) -> Obb2D:
    """An axis-aligned square obstacle (``create_button_obb``)."""
    return (
        np.array(center_xy, dtype=np.float64),
        np.eye(2, dtype=np.float64),
        np.array([half_size, half_size], dtype=np.float64),
    )


def board_obb2ds(
    center_xy: Sequence[float], board_side: float, hole_side: float, pad: float = 0.0
) -> list[Obb2D]:
    """The four axis-aligned strips samplers use for BinFill's ``board_with_hole``.

    ``spawn_random_cube`` / ``spawn_random_target`` special-case actors with ``_board_side``:
    top, bottom, left, right strips around the hole, centred on the board, rotation ignored;
    ``pad`` widens each strip's half extents.
    """
    c = np.array(center_xy[:2], dtype=np.float64)
    board_half, hole_half = board_side / 2, hole_side / 2
    if not board_half > hole_half:
        return []
    rim = board_half - hole_half
    eye = np.eye(2)
    h_tb = np.array([board_half + pad, rim / 2 + pad])
    h_lr = np.array([rim / 2 + pad, hole_half + pad])
    return [
        (c + np.array([0, hole_half + rim / 2]), eye, h_tb),
        (c + np.array([0, -(hole_half + rim / 2)]), eye, h_tb),
        (c + np.array([-(hole_half + rim / 2), 0]), eye, h_lr),
        (c + np.array([hole_half + rim / 2, 0]), eye, h_lr),
    ]


def obb2d_intersect(a: Obb2D, b: Obb2D) -> bool:
    """2-D separating-axis test, touching counts as overlap (``_obb2d_intersect``)."""
    c1, a1, h1 = a
    c2, a2, h2 = b
    d = c2 - c1
    for axis in (a1[:, 0], a1[:, 1], a2[:, 0], a2[:, 1]):
        axis = _unit(axis)
        r1 = abs(np.dot(a1[:, 0], axis)) * h1[0] + abs(np.dot(a1[:, 1], axis)) * h1[1]
        r2 = abs(np.dot(a2[:, 0], axis)) * h2[0] + abs(np.dot(a2[:, 1], axis)) * h2[1]
        if abs(np.dot(d, axis)) > r1 + r2:
            return False
    return True


def point_obb2d_distance(point: np.ndarray, obb: Obb2D) -> float:
    """Distance from a point to an oriented box (clamp in the box frame; targets and bins)."""
    c, axes, half = obb
    local = axes.T @ (point - c)
    closest = c + axes @ np.clip(local, -half, half)
    return float(np.linalg.norm(point - closest))


def rot2(yaw: float) -> np.ndarray:
    """The 2-D rotation by ``yaw``: its columns are the turned x and y axes (an
    :data:`Obb2D`'s ``axes``)."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s], [s, c]], dtype=np.float64)


def _cube_candidate_obb2d(x: float, y: float, half: float, yaw: float) -> Obb2D:
    """The candidate cube's square, rotated by ``yaw`` (``_build_new_cube_obb2d``)."""
    return np.array([x, y], dtype=np.float64), rot2(yaw), np.array([half, half], dtype=np.float64)


# --------------------------------------------------------------------------------------------
# The env's memory of earlier spawns
# --------------------------------------------------------------------------------------------


@dataclass
class Spawned:
    """What upstream keeps on the env between sampler calls.

    ``cubes``: every cube ``spawn_random_cube`` made (``self._spawned_cubes``), avoided by later
    cubes and targets when ``include_existing``; ``targets``: every target ``spawn_random_target``
    made (``self._spawned_targets``), avoided as circles by later targets when
    ``include_existing``; ``main_cube`` / ``main_target``: ``self.cube`` / ``self.target`` when
    the task sets them (avoided when ``include_existing``; a target has no collision, so it is
    skipped). ``goal_site`` is not modelled: the tasks' goal sites are targets without
    collision, which the samplers skip.
    """

    cubes: list[Body] = field(default_factory=list)
    targets: list[Body] = field(default_factory=list)
    main_cube: Body | None = None
    main_target: Body | None = None


Avoid = Body | tuple[Body, float] | Obb2D
"""An ``avoid`` entry: a body (pad 0; bins: pad = min_gap), ``(body, pad)`` or a ready box."""


def _is_obb(item: object) -> TypeIs[Obb2D]:
    return (
        isinstance(item, tuple)
        and len(item) == 3
        and isinstance(item[0], np.ndarray)
        and isinstance(item[1], np.ndarray)
    )


def _body_obstacles(body: Body, pad: float, out: list[Obb2D]) -> None:
    """Append upstream's ``_push_actor_as_obb2d`` box of a body (none: no collision)."""
    obb = actor_obb2d(body, pad)
    if obb is not None:
        out.append(obb)


def _avoid_obstacles(avoid: Sequence[Avoid], pad: float, out: list[Obb2D]) -> None:
    """Append the boxes of ``avoid`` as cubes and bins take them: ready boxes as given,
    ``(body, pad)`` padded by its pad, bare bodies padded by ``pad``."""
    for item in avoid:
        if _is_obb(item):
            out.append(item)
        elif isinstance(item, tuple):
            _body_obstacles(item[0], float(item[1]), out)
        else:
            _body_obstacles(item, pad, out)


_Bounds = tuple[float, float, float, float]
"""A sampler's ``(x_lo, x_hi, y_lo, y_hi)``."""


def _bounds(center: np.ndarray, half: Sequence[float] | np.ndarray, margin: float) -> _Bounds:
    """``lo, hi = c -+ half +- margin`` per axis (the object stays inside the region)."""
    return (
        center[0] - half[0] + margin,
        center[0] + half[0] - margin,
        center[1] - half[1] + margin,
        center[1] + half[1] - margin,
    )


def _draw_xy(generator: torch.Generator, bounds: _Bounds) -> tuple[float, float]:
    """One trial's position: ``x = u1 * (hi - lo) + lo``, then ``y`` likewise (2 draws).

    Upstream's cube sampler writes ``lo + u1 * (hi - lo)``: the same float (+ and * commute).
    """
    x_lo, x_hi, y_lo, y_hi = bounds
    x = float(rand(generator) * (x_hi - x_lo) + x_lo)
    y = float(rand(generator) * (y_hi - y_lo) + y_lo)
    return x, y


def _free_point(
    generator: torch.Generator,
    bounds: _Bounds,
    reach: float,
    boxes: Sequence[Obb2D],
    circles: Sequence[tuple[np.ndarray, float]] = (),
    max_trials: int = MAX_TRIALS,
) -> np.ndarray | None:
    """Rejection-sample the point of a target or bin (:func:`_draw_xy` per trial).

    A point is rejected when closer than ``reach`` to an obstacle box, or closer than
    ``reach + r`` to an obstacle circle ``(centre, r)``. None after ``max_trials`` trials.
    """
    for _ in range(int(max_trials)):
        point = np.array(_draw_xy(generator, bounds), dtype=np.float64)
        if any(point_obb2d_distance(point, obb) < reach for obb in boxes):
            continue
        if any(np.linalg.norm(point - c) < reach + rc for c, rc in circles):
            continue
        return point
    return None


# --------------------------------------------------------------------------------------------
# Samplers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Button:
    """A button placed by ``build_button``: root pose and the avoid box it returns."""

    name: str
    pose: Pose7
    obb: Obb2D


def place_button(
    generator: torch.Generator,
    center_xy: Sequence[float],
    randomize_range: Sequence[float] = (0.1, 0.4),
    *,
    name: str = "button",
    scale: float = BUTTON_SCALE,
    base_half: Sequence[float] = BUTTON_BASE_HALF,
) -> Button:
    """``build_button``: one ``torch.rand(2)``; centre + (u - 0.5) * range per axis.

    Root at z = scaled base half height (0.0075), identity rotation. The returned avoid box
    is an axis-aligned square of half ``1.5 * max(scaled base half x, y)`` = 0.05625.
    """
    offset = torch.rand(2, generator=generator) - 0.5
    cx = float(center_xy[0]) + float(offset[0]) * float(randomize_range[0])
    cy = float(center_xy[1]) + float(offset[1]) * float(randomize_range[1])
    half = [b * float(scale) for b in base_half]
    pose = pose7((cx, cy, half[2]), (1.0, 0.0, 0.0, 0.0))
    return Button(name, pose, square_obb2d((cx, cy), max(half[0], half[1]) * 1.5))


def spawn_random_cube(
    generator: torch.Generator,
    *,
    name: str,
    region_center: Sequence[float],
    region_half_size: float | Sequence[float],
    half_size: float,
    min_gap: float,
    avoid: Sequence[Avoid] = (),
    spawned: Spawned | None = None,
    include_existing: bool = True,
    random_yaw: bool = True,
    max_trials: int = MAX_TRIALS,
) -> Body:
    """``spawn_random_cube``: rejection-sample a cube on the table.

    Per trial ``u1, u2`` then (if ``random_yaw``) ``u3`` — drawn on rejected trials too;
    ``x = lo + u1 * (hi - lo)`` with ``lo, hi = c -+ half +- half_size`` per axis;
    ``yaw = u3 * 2 pi``. The candidate square (half ``half_size + min_gap``, rotated by yaw)
    must not touch any obstacle box (SAT). Obstacles: with ``include_existing``,
    ``spawned.main_cube`` and ``spawned.cubes``; then ``avoid`` (boxes as given, bodies by
    their trimesh box, padded for ``(body, pad)``; bodies without collision are ignored).
    The cube sits at z = half_size with the float32 yaw quaternion; it is appended to
    ``spawned.cubes``. Raises :class:`PlacementError` after ``max_trials``.
    """
    center = np.array(region_center, dtype=np.float64)
    if isinstance(region_half_size, (list, tuple, np.ndarray)):
        area = np.array(region_half_size, dtype=np.float64).reshape(-1)
        area = np.array([area[0], area[-1]], dtype=np.float64)
    else:
        area = np.array([float(cast(float, region_half_size))] * 2, dtype=np.float64)
    hs = float(half_size)
    bounds = _bounds(center, area, hs)

    obstacles: list[Obb2D] = []
    if include_existing and spawned is not None:
        for body in ([spawned.main_cube] if spawned.main_cube else []) + spawned.cubes:
            _body_obstacles(body, 0.0, obstacles)
    _avoid_obstacles(avoid, 0.0, obstacles)

    for _ in range(int(max_trials)):
        x, y = _draw_xy(generator, bounds)
        yaw = float(rand(generator) * 2 * np.pi) if random_yaw else 0.0
        candidate = _cube_candidate_obb2d(x, y, hs + float(min_gap), yaw)
        if any(obb2d_intersect(obb, candidate) for obb in obstacles):
            continue
        body = Body(name, pose7((x, y, hs), yaw_quaternion(yaw)), cube_shapes(hs))
        if spawned is not None:
            spawned.cubes.append(body)
        return body
    raise PlacementError(f"spawn_random_cube: no free spot for {name}")


def target_quaternion() -> np.ndarray:
    """Targets are cylinders turned 90 degrees about y (axis -> z), float32 wxyz."""
    return euler_deg_quaternion(0.0, 90.0, 0.0)


def spawn_random_target(
    generator: torch.Generator,
    *,
    name: str,
    region_center: Sequence[float],
    region_half_size: float,
    radius: float,
    thickness: float,
    min_gap: float,
    avoid: Sequence[Avoid] = (),
    spawned: Spawned | None = None,
    include_existing: bool = True,
    max_trials: int = MAX_TRIALS,
) -> Body:
    """``spawn_random_target``: rejection-sample a flat target disc (no collision).

    Per trial ``x = u1 * (hi - lo) + lo`` then ``y`` likewise (2 draws, no yaw), with
    ``lo, hi = c -+ half +- radius``. Rejected when the point is closer than
    ``radius + min_gap`` to an obstacle box, or closer than ``radius + min_gap + r`` to an
    obstacle circle of radius ``r``. Obstacles: with ``include_existing``,
    ``spawned.main_cube``, ``spawned.main_target`` (ignored: no collision), ``spawned.cubes``
    as boxes and ``spawned.targets`` as circles (their radius); then ``avoid``: targets
    (bodies with ``target_radius``) as circles (radius + pad), other bodies as boxes (padded),
    ready boxes as given. Pose: z = thickness, rotated 90 degrees about y. Appended to
    ``spawned.targets``.
    """
    center = np.array(region_center, dtype=np.float64)
    half, r = float(region_half_size), float(radius)

    boxes: list[Obb2D] = []
    circles: list[tuple[np.ndarray, float]] = []
    if include_existing and spawned is not None:
        for body in [spawned.main_cube, spawned.main_target, *spawned.cubes]:
            if body is not None:
                _body_obstacles(body, 0.0, boxes)
        circles += [(t.xy, float(t.target_radius or r)) for t in spawned.targets]
    for item in avoid:
        if _is_obb(item):
            boxes.append(item)
            continue
        body, pad = item if isinstance(item, tuple) else (item, 0.0)
        if body.target_radius is not None:
            circles.append((body.xy, body.target_radius + float(pad)))
        else:
            _body_obstacles(body, float(pad), boxes)

    bounds = _bounds(center, (half, half), r)
    point = _free_point(generator, bounds, r + float(min_gap), boxes, circles, max_trials)
    if point is None:
        raise PlacementError(f"spawn_random_target: no free spot for {name}")
    body = Body(name, pose7((*point, thickness), target_quaternion()), (), r)
    if spawned is not None:
        spawned.targets.append(body)
    return body


def bin_half_size(cube_half_size: float = CUBE_HALF_SIZE) -> float:
    """Half footprint ``spawn_random_bin`` gives a bin: (2.5 * cube_half + wall) / 2 = 0.0275."""
    return (cube_half_size * 2.5 + BIN_WALL) * 0.5


def bin_pose(x: float, y: float, yaw_deg: float) -> Pose7:
    """``build_bin``: at (x, y, 0.052), flipped 180 degrees about x, then ``yaw_deg`` about z."""
    return pose7((x, y, BIN_Z), euler_deg_quaternion(180.0, 0.0, yaw_deg))


def spawn_random_bin(
    generator: torch.Generator,
    *,
    name: str,
    region_center: Sequence[float],
    region_half_size: float,
    min_gap: float,
    avoid: Sequence[Avoid] = (),
    cube_half_size: float = CUBE_HALF_SIZE,
    max_trials: int = MAX_TRIALS,
) -> Body:
    """``spawn_random_bin``: rejection-sample a container (opening down).

    Per trial ``x = u1 * (hi - lo) + lo``, ``y`` likewise, ``lo, hi = c -+ half +- 0.0275``;
    rejected when the point is closer than ``0.0275 + min_gap`` to an obstacle box. Obstacles
    (``avoid``): ready boxes as given, ``(body, pad)`` padded by pad, bare bodies padded by
    ``min_gap`` (so earlier bins keep 2 * min_gap); bodies without collision are ignored. On
    success one more draw: yaw = u * 90 degrees. Raises :class:`PlacementError`.
    """
    center = np.array(region_center, dtype=np.float64)
    area = float(region_half_size)
    bin_half = bin_half_size(cube_half_size)
    bounds = _bounds(center, (area, area), bin_half)

    boxes: list[Obb2D] = []
    _avoid_obstacles(avoid, float(min_gap), boxes)

    point = _free_point(generator, bounds, bin_half + float(min_gap), boxes, (), max_trials)
    if point is None:
        raise PlacementError(f"spawn_random_bin: no free spot for {name}")
    yaw_deg = float(rand(generator) * 90.0)
    x, y = point
    return Body(name, bin_pose(x, y, yaw_deg), bin_shapes(cube_half_size))


def fixed_cube(
    name: str,
    position: Sequence[float],
    half_size: float,
    yaw: float = 0.0,
    *,
    dynamic: bool = True,
) -> Body:
    """``spawn_fixed_cube``: a cube at (x, y, z) (z = half_size if only (x, y)), no draws.

    Yaw 0 gives the identity quaternion; otherwise a (1, 3) euler tensor as for sampled cubes.
    Only dynamic fixed cubes get a collision box.
    """
    quat = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32) if yaw == 0.0 else yaw_quaternion(yaw)
    shapes = cube_shapes(half_size) if dynamic else ()
    z = position[2] if len(position) > 2 else half_size
    return Body(name, pose7((position[0], position[1], z), quat), shapes)


__all__ = [
    "BIN_Z",
    "CUBE_HALF_SIZE",
    "MAX_TRIALS",
    "PANDA_RESET_QPOS",
    "RECOVERY_MODES",
    "Avoid",
    "Body",
    "BoxShape",
    "Button",
    "Obb2D",
    "PlacementError",
    "Pose7",
    "Spawned",
    "actor_obb2d",
    "bin_half_size",
    "bin_pose",
    "bin_shapes",
    "board_obb2ds",
    "collision_mesh",
    "cube_shapes",
    "euler_deg_quaternion",
    "fixed_cube",
    "make_generator",
    "matrix_quaternion",
    "obb2d_intersect",
    "place_button",
    "point_obb2d_distance",
    "pose7",
    "rand",
    "randint",
    "randperm",
    "recovery_draw",
    "sapien_pose_matrix",
    "spawn_random_bin",
    "spawn_random_cube",
    "spawn_random_target",
    "square_obb2d",
    "target_quaternion",
    "uniform",
    "yaw_quaternion",
]
