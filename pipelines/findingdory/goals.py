"""Teleport-and-check goal predicates: is the agent, at a given pose, at a target?

A goal predicate is checked by putting the agent's camera at a pose ("teleporting": one render
from that pose, nothing in the world moves) and measuring three things (:class:`GoalCheck`):

- ``distance_m``: the geodesic (the backend's :meth:`~WorldBackend.distances`) from the agent's
  base to the target's *reference point*, or to the nearest of several reference points (e.g. a
  receptacle's navigable viewpoints). By default the reference point is the target's centre
  snapped to navigable space (:func:`reference_point`): on a backend with a
  :class:`~dataforge.nav.grid.NavGrid` (``backend.grid``, the embedded world) the centre of the
  navigable cell of the grid's largest component nearest to the centre *by path*, on the same
  grid of cells with the backend's walls (``backend.walls``, plan-view lines) as the only
  obstacles: furniture does not block the way from an object to where the agent stands (the
  object rests on it and is reached over it), a wall does, so the reference point is never on
  the far side of a wall, however near in a straight line (the point itself when it already
  stands on such a cell); on a grid without walls the path is the straight line. Without a grid
  it is the nearest of the backend's ``reachable_positions()`` in a straight line. Within
  :data:`SNAP_RADIUS_M`, else there is none and the distance is ``inf``.
- ``angle_deg``: the absolute angle, in the floor plane (x, z), between the agent's forward
  direction (its yaw, AI2-THOR's ``rotation.y``: 0 faces +z, 90 faces +x) and the direction
  from the base to the target's centre; 0..180. A target straight above the base is at 0.
- ``coverage``: the share of the image's pixels (of all H x W) whose instance id is one of the
  target's (:func:`coverage_keys`: an object's own id; for a receptacle, the ids of the whole
  piece of furniture it belongs to, the object and every sub-receptacle of it, so a drawer
  ``Dresser|1|Drawer_3`` counts the dresser's body and all its drawers).

:meth:`GoalCheck.passes` names the checks that fail against thresholds; ``skip`` drops some of
them (a scorer that ignores coverage or distance). Pipelines hold the thresholds.

Backends: only the :class:`~dataforge.simulators.protocol.WorldBackend` protocol is used, plus the
backend's instance-id table ``ids`` (an :class:`~dataforge.world.scene.InstanceIds`; both
backends have one). It is read, never extended, and only after rendering, so a check never
assigns ids. On the embedded world the table's keys are dataforge's element ids (objects,
``<object id>|<element>`` sub-receptacles, walls, ``floor:<room id>``); on the ``ai2thor``
backend they are the object ids AI2-THOR's segmentation reports, filled as renders see them:
AI2-THOR draws a piece of furniture's parts under the simulator's own ids, so dataforge's
sub-receptacle keys match nothing there and a receptacle's coverage is that of the ids of the
furniture that the simulator reports (a key no render has seen yet counts no pixels).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import shapely
from numpy.typing import ArrayLike
from shapely.geometry import Polygon
from shapely.ops import unary_union

from dataforge.errors import UsageError
from dataforge.nav.grid import NavGrid
from dataforge.render.renderer import Frame
from dataforge.simulators.protocol import WorldBackend
from dataforge.world.graph import WorldGraph
from dataforge.world.graph import room_of as _room_containing
from dataforge.world.scene import InstanceIds

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

SNAP_RADIUS_M = 2.0
"""How far (m, floor plane; by path where walls are known) a target's centre may be from
navigable space to get a reference point: an object in the middle of a large table or bed is
about 1 m from the table's edge plus the agent's radius."""

WALL_HALF_CELLS = 0.75
"""Cells whose centre lies within this many cells of a wall line are closed to the path from a
target to its reference point: more than half a cell, so no step between two edge-adjacent
cells (fast marching's stencil) crosses a wall."""

CHECKS = ("distance", "angle", "coverage")
"""The names :meth:`GoalCheck.passes` reports, in this order."""


@dataclass(frozen=True)
class AgentCamera:
    """The agent's camera: ``height_m`` above the floor under the agent's base and a fixed
    ``horizon_deg`` (AI2-THOR's camera horizon: positive looks down, 0 level)."""

    height_m: float = 1.5
    horizon_deg: float = 0.0

    def position(self, base_xyz: Sequence[float]) -> np.ndarray:
        """The camera position for an agent whose base stands at ``base_xyz`` (x, floor y, z)."""
        x, y, z = _xyz(base_xyz)
        return np.array([x, y + self.height_m, z])


@dataclass(frozen=True)
class GoalCheck:
    """What a pose measures against a target (see the module docstring)."""

    distance_m: float
    angle_deg: float
    coverage: float

    def passes(
        self,
        max_distance: float,
        max_angle: float,
        min_coverage: float,
        *,
        skip: Iterable[str] = (),
    ) -> tuple[str, ...]:
        """The names of the failed checks (of :data:`CHECKS`, in that order); empty when the
        predicate holds. ``skip`` names checks to leave out. Bounds are inclusive:
        ``distance_m <= max_distance``, ``angle_deg <= max_angle``, ``coverage >= min_coverage``;
        an infinite or NaN distance fails."""
        skipped = frozenset(skip)
        unknown = sorted(skipped - set(CHECKS))
        if unknown:
            raise UsageError(f"unknown goal check(s) {unknown}; choose from {', '.join(CHECKS)}")
        ok = {
            "distance": bool(self.distance_m <= max_distance),
            "angle": bool(self.angle_deg <= max_angle),
            "coverage": bool(self.coverage >= min_coverage),
        }
        return tuple(name for name in CHECKS if name not in skipped and not ok[name])

    def to_dict(self) -> dict[str, float]:
        return {
            "distance_m": self.distance_m,
            "angle_deg": self.angle_deg,
            "coverage": self.coverage,
        }


# -- the three measures ----------------------------------------------------------------------


def heading_angle_deg(base_xyz: Sequence[float], yaw: float, point: Sequence[float]) -> float:
    """Absolute floor-plane angle (degrees, 0..180) between the heading ``yaw`` (AI2-THOR:
    0 faces +z, 90 faces +x) and the direction from ``base_xyz`` to ``point``."""
    bx, _, bz = _xyz(base_xyz)
    px, _, pz = _xyz(point)
    dx, dz = px - bx, pz - bz
    if math.hypot(dx, dz) < 1e-9:
        return 0.0
    t = math.radians(yaw)
    fx, fz = math.sin(t), math.cos(t)
    return abs(math.degrees(math.atan2(fx * dz - fz * dx, fx * dx + fz * dz)))


def instance_ids_of(ids: InstanceIds | Mapping[str, int], keys: Iterable[str]) -> tuple[int, ...]:
    """The instance ids of ``keys`` in ``ids`` (an :class:`InstanceIds` or a key -> id
    mapping), sorted; keys without an id are left out. Reads only: no id is assigned."""
    table = ids.to_dict() if isinstance(ids, InstanceIds) else ids
    return tuple(sorted({int(table[k]) for k in keys if k in table}))


def coverage_of(instance: np.ndarray, instance_ids: Iterable[int]) -> float:
    """Share of all pixels of ``instance`` (an instance-id image) showing any of
    ``instance_ids`` (0..1)."""
    wanted = np.fromiter(instance_ids, dtype=np.int64)
    if wanted.size == 0 or instance.size == 0:
        return 0.0
    return float(np.count_nonzero(np.isin(instance, wanted))) / float(instance.size)


def furniture_keys(graph: WorldGraph, receptacle_id: str) -> tuple[str, ...]:
    """The instance keys of the whole piece of furniture ``receptacle_id`` belongs to: the
    top-level object (the receptacle itself, or a sub-receptacle's ``parent_id``) and every
    sub-receptacle of it. Sorted."""
    node = graph.receptacle(receptacle_id)
    owner = node.parent_id or node.id
    parts = {r.id for r in graph.receptacles if r.parent_id == owner}
    return tuple(sorted({owner, *parts}))


def coverage_keys(graph: WorldGraph, target_id: str) -> tuple[str, ...]:
    """Which instance keys count as ``target_id`` for coverage: for a receptacle (a
    sub-receptacle included), :func:`furniture_keys`; for anything else, its own id."""
    if any(r.id == target_id for r in graph.receptacles):
        return furniture_keys(graph, target_id)
    return (target_id,)


def reference_point(
    backend: WorldBackend, point: ArrayLike, *, radius: float = SNAP_RADIUS_M
) -> np.ndarray | None:
    """``point`` snapped to navigable space (see the module docstring), as (x, y, z); None when
    nothing navigable lies within ``radius`` metres (by path around the backend's ``walls``
    when it has a NavGrid, else in a straight line in the floor plane). On a backend without a
    NavGrid this asks for ``reachable_positions()`` (one simulator call): compute the
    reference once per target and pass it to :func:`check_pose`."""
    grid = getattr(backend, "grid", None)
    if isinstance(grid, NavGrid):
        return _snap_on_grid(grid, point, radius, getattr(backend, "walls", None))
    return _snap_on_positions(np.asarray(backend.reachable_positions(), float), point, radius)


def goal_distance(
    backend: WorldBackend, base_xyz: Sequence[float], reference: ArrayLike | None
) -> float:
    """The geodesic (m) from ``base_xyz`` to ``reference``: one point (x, y, z), or the nearest
    of several (N x 3); ``inf`` when there is none or no path."""
    if reference is None:
        return math.inf
    refs = np.asarray(reference, dtype=np.float64)
    refs = refs.reshape(1, 3) if refs.ndim == 1 else refs.reshape(-1, 3)
    if len(refs) == 0:
        return math.inf
    d = np.asarray(backend.distances([_xyz(base_xyz)], list(refs)), dtype=np.float64)
    return float(np.min(d)) if d.size else math.inf


# -- checks ----------------------------------------------------------------------------------


def check_frame(
    backend: WorldBackend,
    frame: Frame,
    base_xyz: Sequence[float],
    yaw: float,
    target_keys: Iterable[str],
    target_point: Sequence[float],
    *,
    reference: ArrayLike | None = None,
) -> GoalCheck:
    """Measure a target from a pose whose view ``frame`` is already rendered (by ``backend``,
    after which its ``ids`` table knows the frame's ids). ``target_keys``: the instance keys that
    count as the target (:func:`coverage_keys`); ``target_point``: the target's centre;
    ``reference``: the point(s) the distance is measured to, by default
    :func:`reference_point` of ``target_point``."""
    ids = getattr(backend, "ids", None)
    if ids is None:
        raise UsageError(
            f"world backend {getattr(backend, 'name', backend)!r} has no instance "
            "id table ('ids'): coverage cannot be measured"
        )
    if reference is None:
        reference = reference_point(backend, target_point)
    return GoalCheck(
        distance_m=goal_distance(backend, base_xyz, reference),
        angle_deg=heading_angle_deg(base_xyz, yaw, target_point),
        coverage=coverage_of(frame.instance, instance_ids_of(ids, target_keys)),
    )


def check_pose(
    backend: WorldBackend,
    base_xyz: Sequence[float],
    yaw: float,
    camera: AgentCamera,
    target_keys: Iterable[str],
    target_point: Sequence[float],
    *,
    reference: ArrayLike | None = None,
) -> GoalCheck:
    """Teleport-and-check: render once from ``camera`` on an agent at ``base_xyz`` (x, floor
    y, z) facing ``yaw``, then :func:`check_frame`."""
    frame = backend.render(camera.position(base_xyz), yaw, camera.horizon_deg)
    return check_frame(
        backend, frame, base_xyz, yaw, target_keys, target_point, reference=reference
    )


# -- rooms -----------------------------------------------------------------------------------


def room_of(graph: WorldGraph, xz: np.ndarray | Sequence[float]) -> str | None:
    """The id of the room whose floor polygon contains the floor point ``xz`` ((x, z), or
    (x, y, z)); on a shared boundary the smallest id; None outside every room."""
    x, _, z = _xyz(xz) if len(xz) == 3 else (float(xz[0]), 0.0, float(xz[1]))
    polygons = {r.id: Polygon(r.polygon) for r in graph.rooms}
    return _room_containing((x, 0.0, z), polygons)


# -- helpers ---------------------------------------------------------------------------------


def _xyz(p: ArrayLike) -> tuple[float, float, float]:
    a = np.asarray(p, dtype=np.float64).reshape(-1)
    if a.shape != (3,):
        raise UsageError(f"a position must be (x, y, z), got {p!r}")
    return float(a[0]), float(a[1]), float(a[2])


def _snap_on_grid(
    grid: NavGrid, point: ArrayLike, radius: float, walls: Sequence[BaseGeometry] | None = None
) -> np.ndarray | None:
    """The navigable cell centre of ``grid``'s largest component nearest to ``point`` within
    ``radius``: by path around ``walls`` (:func:`_wall_paths`), or in a straight line when
    ``walls`` is None."""
    labels, keep = grid.components(), grid.largest_component()
    if keep == 0:
        return None
    x, _, z = _xyz(point)
    own = grid.cell_of((x, z))
    if grid.inside(own) and labels[own] == keep:
        return np.array([x, grid.y, z])
    r = math.ceil(radius / grid.cell) + 1
    i0, i1 = max(0, own[0] - r), min(grid.shape[0], own[0] + r + 1)
    j0, j1 = max(0, own[1] - r), min(grid.shape[1], own[1] + r + 1)
    if i0 >= i1 or j0 >= j1:
        return None
    ii, jj = np.nonzero(labels[i0:i1, j0:j1] == keep)
    if len(ii) == 0:
        return None
    cx = grid.origin[0] + (jj + j0 + 0.5) * grid.cell
    cz = grid.origin[1] + (ii + i0 + 0.5) * grid.cell
    d = np.hypot(cx - x, cz - z)
    if walls is not None and i0 <= own[0] < i1 and j0 <= own[1] < j1:
        d = np.maximum(_wall_paths(grid, (x, z), (i0, i1, j0, j1), walls)[ii, jj], d)
    k = int(np.argmin(d))  # first of ties: row-major order, deterministic
    return None if d[k] > radius else grid.center((int(ii[k] + i0), int(jj[k] + j0)))


def _wall_paths(
    grid: NavGrid,
    xz: tuple[float, float],
    window: tuple[int, int, int, int],
    walls: Sequence[BaseGeometry],
) -> np.ndarray:
    """Path lengths (m) from the floor point ``xz`` to the centre of every cell of ``window``
    (rows i0:i1, columns j0:j1 of ``grid``) with the wall lines ``walls`` as the only obstacles
    (cells within :data:`WALL_HALF_CELLS` of one are closed; the point's own cell stays open);
    ``inf`` where no path stays in the window. Fast marching on the window's cells, plus the
    straight step from the point to its cell's centre."""
    i0, i1, j0, j1 = window
    cell = grid.cell
    x0, z0 = grid.origin[0] + j0 * cell, grid.origin[1] + i0 * cell
    shape = (i1 - i0, j1 - j0)
    gx, gz = np.meshgrid(
        x0 + (np.arange(shape[1]) + 0.5) * cell, z0 + (np.arange(shape[0]) + 0.5) * cell
    )
    near = shapely.box(x0, z0, x0 + shape[1] * cell, z0 + shape[0] * cell).buffer(cell)
    lines = [w for w in walls if not w.is_empty and w.intersects(near)]
    free = np.ones(shape, dtype=bool)
    if lines:
        blocked = unary_union(lines).buffer(WALL_HALF_CELLS * cell)
        shapely.prepare(blocked)
        free &= ~shapely.intersects_xy(blocked, gx, gz)
    own = (math.floor((xz[1] - z0) / cell), math.floor((xz[0] - x0) / cell))
    free[own] = True
    field = NavGrid(free, (x0, z0), cell).field_from_cell(own)
    step = math.hypot(xz[0] - gx[own], xz[1] - gz[own])
    return np.asarray(field) + step


def _snap_on_positions(positions: np.ndarray, point: ArrayLike, radius: float) -> np.ndarray | None:
    """The reachable position nearest to ``point`` in the floor plane within ``radius``."""
    pts = positions.reshape(-1, 3)
    if len(pts) == 0:
        return None
    x, _, z = _xyz(point)
    d = np.hypot(pts[:, 0] - x, pts[:, 2] - z)
    k = int(np.argmin(d))
    return None if d[k] > radius else pts[k].copy()
