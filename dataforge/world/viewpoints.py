"""Cameras around a point of interest: azimuths x heights, on navigable positions.

:func:`orbit_viewpoints` puts a camera at each azimuth (0 degrees = the point's +z side, 90 =
its +x side, as AI2-THOR's yaw turns) and each height above the floor, ``radius`` metres from
the point in plan view, looking at the point. A camera stands where the agent could: its
position must be navigable for the agent (:class:`~dataforge.nav.grid.NavGrid`, obstacles grown
by the agent's radius, so never inside a wall or furniture), in the component of the agent's
start, and see the point without a wall in between (plan-view test against the walls' planes;
door and window holes are ignored, which is conservative). Two more rules hold for every
camera: no wall line and no door or window (its frame and swung leaves, in plan) lies within
``WALL_CLEARANCE_M`` of it in plan (:meth:`WallSight.roomy`), and no two cameras of one orbit
stand within ``MIN_SEPARATION_M`` of each other in 3D.

Candidates, in order of preference: the distances on the azimuth's bearing within
``[min_radius, max_radius]``, nearest to ``radius`` first (``on_bearing`` True, ``radius`` the
distance used); then the bearing turned by 5, 10, ... up to 90 degrees either way (nearest turn
first), the best distance of each (``on_bearing`` False); then the navigable positions nearest
to the ideal one that see the point; when none is left, the nearest navigable position away from
the other cameras (``sees_target`` as it is). An ``accept`` callback (a renderer's look at the
candidate's images) may refuse a candidate: the next one is tried, skipping those within
``REDRAW_STEP_M`` of a refused one, at most ``MAX_TRIES`` in all; when all are refused the first
is kept with ``usable`` False.

Every viewpoint records what it is: the nominal ``azimuth_deg`` (its slot) and ``height_name``,
and what it got: ``bearing_deg``, the bearing of the camera from the point in plan view,
``atan2(x_camera - x_point, z_camera - z_point)`` in degrees in [0, 360) (the azimuth
convention: 0 = +z, 90 = +x; equal to ``azimuth_deg`` when ``on_bearing``), and ``height_m``,
the camera's height above the floor.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
from shapely.geometry import LineString, Point

from dataforge.world.house import House

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

    from dataforge.nav.grid import NavGrid
    from dataforge.world.assets import AssetCatalogue
    from dataforge.world.house import Opening

AZIMUTHS_8 = tuple(float(a) for a in range(0, 360, 45))
RADIUS_STEP_M = 0.05
# A blocked bearing turns by these angles (nearest first) to a free one.
TURNS_DEG = tuple(t for k in range(1, 19) for t in (5.0 * k, -5.0 * k))
# No two cameras of one orbit closer than this (3D): cameras of different azimuths would
# otherwise collapse onto the one free spot in front of an object against a wall.
MIN_SEPARATION_M = 0.20
# No wall, door or window closer than this to a camera in plan view (a camera against a wall
# sees little but the wall).
WALL_CLEARANCE_M = 0.35
MAX_TRIES = 6  # candidates an ``accept`` callback is shown per azimuth
REDRAW_STEP_M = 0.3  # a redrawn camera moves at least this far from the refused ones
MAX_HORIZON_DEG = 89.0
MAX_CELLS = 4000  # nearest navigable cells tried when every bearing fails

Candidate = tuple[float, float, float, bool, bool]  # x, z, plan radius, on_bearing, sees


@dataclass(frozen=True)
class Viewpoint:
    """One camera: AI2-THOR-style pose (position, yaw, horizon > 0 looking down), its nominal
    slot (azimuth, height name), what it got (bearing, height) and how it was found."""

    azimuth_deg: float  # the nominal slot
    height_name: str
    position: tuple[float, float, float]
    yaw_deg: float
    horizon_deg: float
    radius_m: float  # plan-view distance from the target
    on_bearing: bool  # on the azimuth's bearing (else the nearest usable position)
    sees_target: bool  # no wall between the camera and the target in plan view
    bearing_deg: float = 0.0  # atan2(x - target x, z - target z), degrees in [0, 360)
    height_m: float = 0.0  # camera height above the floor
    usable: bool = True  # False: every candidate was refused (see the module docstring)

    def to_dict(self) -> dict[str, Any]:
        return {
            "azimuth_deg": self.azimuth_deg,
            "height": self.height_name,
            "position": list(self.position),
            "yaw_deg": self.yaw_deg,
            "horizon_deg": self.horizon_deg,
            "radius_m": self.radius_m,
            "on_bearing": self.on_bearing,
            "sees_target": self.sees_target,
            "bearing_deg": self.bearing_deg,
            "height_m": self.height_m,
            "usable": self.usable,
        }


class WallSight:
    """Plan-view line of sight against a house's wall planes (standing walls only: an
    ``empty`` wall, ProcTHOR's open boundary between rooms, is neither drawn nor an obstacle),
    and the room a camera has around it: the wall lines and, given the ``catalogue``, the plan
    footprints of door and window meshes (frames, swung leaves)."""

    def __init__(self, house: House, catalogue: AssetCatalogue | None = None) -> None:
        lines = [
            LineString([w.start, w.end])
            for w in house.walls
            if w.length > 0 and w.height > 0 and not w.empty
        ]
        self._tree = shapely.STRtree(lines)
        self._lines = lines
        near = list(lines)
        if catalogue is not None:
            near += [opening_footprint(house, o, catalogue) for o in house.openings]
        self._near = shapely.STRtree([g for g in near if not g.is_empty])

    def clear(self, a: Sequence[float], b: Sequence[float]) -> bool:
        """No wall crosses the segment from ``a`` to ``b`` (plan-view x, z)."""
        seg = LineString([(a[0], a[1]), (b[0], b[1])])
        hits = self._tree.query(seg, predicate="intersects")
        return len(hits) == 0

    def roomy(self, x: float, z: float, clearance: float = WALL_CLEARANCE_M) -> bool:
        """No wall line, door or window lies within ``clearance`` of (x, z) in plan view."""
        hits = self._near.query(Point(x, z), predicate="dwithin", distance=clearance)
        return len(hits) == 0

    def clear_many(self, a: Sequence[float], xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """:meth:`clear` from ``a`` to each plan point (``xs``, ``zs``), in one query."""
        out = np.ones(len(xs), bool)
        if len(xs):
            coords = np.empty((len(xs), 2, 2))
            coords[:, 0] = (a[0], a[1])
            coords[:, 1, 0], coords[:, 1, 1] = xs, zs
            hit = self._tree.query(shapely.linestrings(coords), predicate="intersects")[0]
            out[hit] = False
        return out

    def roomy_many(
        self, xs: np.ndarray, zs: np.ndarray, clearance: float = WALL_CLEARANCE_M
    ) -> np.ndarray:
        """:meth:`roomy` at each plan point (``xs``, ``zs``), in one query."""
        out = np.ones(len(xs), bool)
        if len(xs):
            pts = shapely.points(xs, zs)
            hit = self._near.query(pts, predicate="dwithin", distance=clearance)[0]
            out[hit] = False
        return out


def opening_footprint(house: House, opening: Opening, catalogue: AssetCatalogue) -> BaseGeometry:
    """The plan-view area covered by a door's or window's meshes (an open leaf included)."""
    from dataforge.world.openings import opening_meshes

    tris = [m.vertices[m.faces][:, :, [0, 2]] for m in opening_meshes(house, opening, catalogue)]
    if not tris:
        return shapely.GeometryCollection()
    polys = shapely.polygons(np.concatenate(tris))
    polys = polys[shapely.area(polys) > 1e-9]
    return shapely.union_all(polys)


def look_at_angles(eye: Sequence[float], target: Sequence[float]) -> tuple[float, float]:
    """(yaw, horizon) in degrees of a camera at ``eye`` looking at ``target`` (AI2-THOR
    conventions: yaw 0 faces +z, 90 faces +x; horizon > 0 looks down)."""
    dx, dy, dz = (float(t) - float(e) for e, t in zip(eye, target, strict=True))
    yaw = math.degrees(math.atan2(dx, dz)) % 360.0
    horizon = math.degrees(math.atan2(-dy, math.hypot(dx, dz)))
    return yaw, max(-MAX_HORIZON_DEG, min(MAX_HORIZON_DEG, horizon))


def plan_bearing(target: Sequence[float], position: Sequence[float]) -> float:
    """Bearing in degrees [0, 360) of ``position`` seen from ``target`` in plan view (x, y, z
    points): ``atan2(dx, dz)``, 0 = +z, 90 = +x."""
    dx = float(position[0]) - float(target[0])
    dz = float(position[2]) - float(target[2])
    return math.degrees(math.atan2(dx, dz)) % 360.0


def orbit_viewpoints(
    grid: NavGrid,
    sight: WallSight,
    target: Sequence[float],
    *,
    floor_y: float,
    heights: Mapping[str, float],
    azimuths: Sequence[float] = AZIMUTHS_8,
    radius: float = 1.5,
    min_radius: float = 0.5,
    max_radius: float = 3.0,
    component: int | None = None,
    accept: Accept | None = None,
    batch: bool = True,
) -> list[Viewpoint]:
    """Viewpoints azimuth-major (for each azimuth, each height in ``heights`` order) around
    ``target`` (see the module docstring). ``component``: the grid component cameras must be
    in (default: the largest). ``accept(groups, first)``: shown candidates' viewpoints (a list
    of groups, one viewpoint per height each), says for each whether to keep it; it must judge
    each group on its own (by its images). ``first``: the groups are their azimuths' first
    candidates (a capture keeps a first candidate's images when every candidate is refused).

    With ``batch`` (the default) ``accept`` sees the first candidates of all the azimuths left
    at once, each placed as if those before it were kept: a renderer draws them in one go.
    Where one is refused, the azimuths after it are planned again from there; a first candidate
    that comes out the same is not shown again (its verdict stands), another one is. So the
    result is the one-at-a-time search's (``batch=False``: one group per call) in every case."""
    orbit = _Orbit(grid, sight, target, floor_y, heights, (min_radius, radius, max_radius))
    if component is not None:
        orbit.comp = component
    azs = [float(a) for a in azimuths]
    out: list[Viewpoint] = []
    judged: dict[float, tuple[list[Viewpoint], bool]] = {}  # az -> first candidate, verdict
    i = 0
    while i < len(azs):
        if accept is None or not batch:
            out.extend(orbit.place(azs[i], accept))
            i += 1
            continue
        plans = orbit.first_candidates(azs[i:])
        left = zip(azs[i:], (g for _, g in plans), strict=True)
        new = [(az, g) for az, g in left if az not in judged or judged[az][0] != g]
        if new:
            verdicts = accept([g for _, g in new], True)
            judged.update({az: (g, ok) for (az, g), ok in zip(new, verdicts, strict=True)})
        for cand, group in plans:
            az, i = azs[i], i + 1
            if judged[az][1]:
                orbit.eyes.extend(v.position for v in group)
                out.extend(group)
            else:
                out.extend(orbit.place(az, accept, group, (cand[0], cand[1])))
                break
    return out


Accept = Callable[[list[list[Viewpoint]], bool], list[bool]]


class _Orbit:
    """The search state of one orbit: the grid, the target and the cameras placed so far."""

    def __init__(
        self,
        grid: NavGrid,
        sight: WallSight,
        target: Sequence[float],
        floor_y: float,
        heights: Mapping[str, float],
        radii: tuple[float, float, float],
    ) -> None:
        levels = sorted(heights.values())
        if any(b - a < MIN_SEPARATION_M for a, b in itertools.pairwise(levels)):
            raise ValueError(f"camera heights {dict(heights)} closer than {MIN_SEPARATION_M} m")
        self.grid, self.sight = grid, sight
        self.target = tuple(float(v) for v in target)
        self.floor_y, self.heights = floor_y, dict(heights)
        self.min_radius, self.radius, max_radius = radii
        self.labels = grid.components()
        self.comp = grid.largest_component()
        steps = round((max_radius - self.min_radius) / RADIUS_STEP_M)
        self.distances = sorted(
            (self.min_radius + k * RADIUS_STEP_M for k in range(steps + 1)),
            key=lambda d: (abs(d - self.radius), d),
        )
        self.eyes: list[tuple[float, float, float]] = []
        self._fixed: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._cells: np.ndarray | None = None

    # -- tests of plan positions ----------------------------------------------------------

    def good(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Which of the plan positions (``xs``, ``zs``) may hold a camera (:meth:`fixed` and
        :meth:`apart_many`), all in one pass."""
        ok = self.fixed(xs, zs)
        return ok & self.apart_many(xs, zs) if ok.any() else ok

    def fixed(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """What does not change as cameras are placed: navigable in the component, roomy, and
        seeing the target across no wall."""
        xs, zs = np.asarray(xs, np.float64), np.asarray(zs, np.float64)
        grid = self.grid
        rows = np.floor((zs - grid.origin[1]) / grid.cell).astype(np.int64)
        cols = np.floor((xs - grid.origin[0]) / grid.cell).astype(np.int64)
        ok = (rows >= 0) & (rows < grid.shape[0]) & (cols >= 0) & (cols < grid.shape[1])
        r, c = rows[ok], cols[ok]
        ok[ok] = grid.free[r, c] & (self.labels[r, c] == self.comp)
        if ok.any():
            idx = np.flatnonzero(ok)
            ok[idx] = self.sight.roomy_many(xs[idx], zs[idx])
        if ok.any():
            idx = np.flatnonzero(ok)
            ok[idx] = self.sight.clear_many((self.target[0], self.target[2]), xs[idx], zs[idx])
        return ok

    def apart_many(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Which plan positions are at least MIN_SEPARATION_M (3D) from every camera placed, at
        every height."""
        ok = np.ones(len(xs), bool)
        if self.eyes:
            eyes = np.asarray(self.eyes, np.float64)
            for h in self.heights.values():
                y = self.floor_y + h
                d2 = (
                    (np.asarray(xs, np.float64)[:, None] - eyes[None, :, 0]) ** 2
                    + (y - eyes[None, :, 1]) ** 2
                    + (np.asarray(zs, np.float64)[:, None] - eyes[None, :, 2]) ** 2
                )
                ok &= ~np.any(np.sqrt(d2) < MIN_SEPARATION_M, axis=1)
        return ok

    def bearings(self, azs: Sequence[float]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For each bearing of ``azs``: its points (:meth:`bearing_points`) and which of them
        may hold a camera now; the fixed tests of all the bearings not seen yet in one pass
        (kept: they hold for the whole orbit)."""
        new = [az for az in dict.fromkeys(azs) if az not in self._fixed]
        if new:
            points = [self.bearing_points(az) for az in new]
            ok = self.fixed(
                np.concatenate([p[0] for p in points]), np.concatenate([p[1] for p in points])
            ).reshape(len(new), -1)
            for az, (xs, zs), good in zip(new, points, ok, strict=True):
                self._fixed[az] = (xs, zs, good)
        out = []
        for az in azs:
            xs, zs, fixed = self._fixed[az]
            out.append((xs, zs, fixed & self.apart_many(xs, zs) if fixed.any() else fixed))
        return out

    def sees(self, x: float, z: float) -> bool:
        return self.sight.clear((self.target[0], self.target[2]), (x, z))

    # -- candidates -----------------------------------------------------------------------

    def bearing_points(self, az: float) -> tuple[np.ndarray, np.ndarray]:
        """The plan positions at ``self.distances`` on bearing ``az``, in that order."""
        tx, tz = self.target[0], self.target[2]
        s, c = math.sin(math.radians(az)), math.cos(math.radians(az))
        d = np.asarray(self.distances, np.float64)
        return tx + d * s, tz + d * c

    def candidates(self, az: float) -> Iterator[Candidate]:
        """Every candidate position for azimuth ``az``, best first (module docstring)."""
        ((xs, zs, good),) = self.bearings([az])
        for k in np.flatnonzero(good):
            yield float(xs[k]), float(zs[k]), self.distances[k], True, True
        for xs, zs, good in self.bearings([az + turn for turn in TURNS_DEG]):
            hits = np.flatnonzero(good)
            if len(hits):
                k = hits[0]
                yield float(xs[k]), float(zs[k]), self.distances[k], False, True
        cells = self.cells()
        tx, tz = self.target[0], self.target[2]
        s, c = math.sin(math.radians(az)), math.cos(math.radians(az))
        ideal = (tx + self.radius * s, tz + self.radius * c)
        order = np.argsort(np.hypot(cells[:, 0] - ideal[0], cells[:, 1] - ideal[1]), kind="stable")
        dist = np.hypot(cells[:, 0] - tx, cells[:, 1] - tz)
        near = order[:MAX_CELLS]
        near = near[dist[near] >= self.min_radius]
        for k in near[self.good(cells[near, 0], cells[near, 1])]:
            x, z = (float(v) for v in cells[k])
            yield x, z, float(dist[k]), False, True
        apart = self.apart_many(cells[order, 0], cells[order, 1])
        last = order[int(np.argmax(apart))] if apart.any() else order[0]
        x, z = (float(v) for v in cells[last])
        yield x, z, float(dist[last]), False, self.sees(x, z)

    def cells(self) -> np.ndarray:
        """Plan centres of the navigable cells of the component."""
        if self._cells is None:
            grid = self.grid
            ii, jj = np.nonzero((self.labels == self.comp) & grid.free)
            self._cells = np.stack(
                [grid.origin[0] + (jj + 0.5) * grid.cell, grid.origin[1] + (ii + 0.5) * grid.cell],
                axis=1,
            )
        if len(self._cells) == 0:
            raise ValueError("no navigable position to put a camera on")
        return self._cells

    # -- placing --------------------------------------------------------------------------

    def group(self, az: float, cand: Candidate) -> list[Viewpoint]:
        """The viewpoints (one per height) of a candidate position."""
        x, z, d, on_bearing, sees = cand
        out = []
        for name, h in self.heights.items():
            eye = (round(x, 6), round(self.floor_y + h, 6), round(z, 6))
            yaw, horizon = look_at_angles(eye, self.target)
            bearing = plan_bearing(self.target, eye)
            out.append(
                Viewpoint(
                    az,
                    name,
                    eye,
                    round(yaw, 6),
                    round(horizon, 6),
                    round(d, 6),
                    on_bearing,
                    sees,
                    round(bearing, 6) % 360.0,
                    round(eye[1] - self.floor_y, 6),
                )
            )
        return out

    def first_candidates(self, azs: Sequence[float]) -> list[tuple[Candidate, list[Viewpoint]]]:
        """The first candidate of each azimuth of ``azs`` and its viewpoints, each found as if
        those before it were placed (the cameras placed are as they were afterwards)."""
        placed = len(self.eyes)
        self.bearings(azs)  # the fixed tests of all their bearings in one pass
        plans = []
        for az in azs:
            cand = next(self.candidates(az))  # candidates() ends with a position or raises
            group = self.group(az, cand)
            plans.append((cand, group))
            self.eyes.extend(v.position for v in group)
        del self.eyes[placed:]
        return plans

    def place(
        self,
        az: float,
        accept: Accept | None,
        first: list[Viewpoint] | None = None,
        refused_at: tuple[float, float] | None = None,
    ) -> list[Viewpoint]:
        """The viewpoints of azimuth ``az``: the first candidate ``accept`` keeps, else the
        first candidate marked unusable; its cameras join those placed. ``first`` and
        ``refused_at``: the group and position of a first candidate already refused."""
        refused: list[tuple[float, float]] = [] if refused_at is None else [refused_at]
        chosen: list[Viewpoint] | None = None
        for cand in self.candidates(az) if len(refused) < MAX_TRIES else ():
            if any(math.hypot(cand[0] - a, cand[1] - b) < REDRAW_STEP_M - 1e-9 for a, b in refused):
                continue
            group = self.group(az, cand)
            if accept is None or accept([group], not refused)[0]:
                chosen = group
                break
            first = first or group
            refused.append(cand[:2])
            if len(refused) >= MAX_TRIES:
                break
        if chosen is None:
            if first is None:  # candidates() ends with a position or raises: never here
                raise ValueError(f"no camera position at azimuth {az:g}")
            chosen = [dataclasses.replace(v, usable=False) for v in first]
        self.eyes.extend(v.position for v in chosen)
        return chosen
