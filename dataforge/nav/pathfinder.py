"""The one wrapper of habitat-sim's navmesh ``PathFinder``: every Habitat geodesic, path, sample
and navigability test of the project goes through :class:`NavmeshPathfinder`.

It wraps a ``habitat_sim.PathFinder``, loaded from a scene's ``.navmesh``
(:meth:`NavmeshPathfinder.load`) or given (a simulator's ``sim.pathfinder`` after
``recompute_navmesh``). Points are xyz in habitat's frame (y up), as any sequence of three
numbers; points returned are float64 arrays.

**The off-mesh rule** (one rule for distances, paths and islands) is habitat-sim's own, as
upstream's geodesics use it (habitat-lab's ``sim.geodesic_distance``, which VLN-CE and MultiON
call, hands the raw points to ``find_path``). A point is snapped to the navmesh with
``snap_point``: Detour's nearest polygon within its query box (half extents 2 m in x and z, 4 m
in y), with no distance limit but that box. The point is *off the mesh* only when the snap
fails (``snap_point`` gives NaN: no polygon in the box); otherwise it stands for its snapped
point, however far that is. Then:

* a distance with a point off the mesh, or between points that no path joins (another island),
  is ``inf``; otherwise it is ``find_path``'s geodesic between the two snapped points (the snap
  offsets are not added);
* a shortest path with either end off the mesh, or with no path, is ``[]``; otherwise its
  waypoints run from the snapped start to the snapped end;
* a point off the mesh lies on no island.

``find_path`` itself snaps both ends the same way (``projectToPoly``: ``findNearestPoly`` in the
same query box, failing when either end has no polygon), so a point beside the mesh gets the
distance ``find_path`` alone gives on the raw point. One nuance: an end that lies over or under
its polygon in plan view is kept as given by Detour's ``findStraightPath`` (height and all), so
``find_path`` on a raw point above the floor adds that height to its first or last leg, where
this wrapper measures from the snapped point (upstream's episode points lie on the navmesh, where
the two agree).

``snap_tolerance=`` (:data:`SNAP_TOLERANCE_M`, ``math.inf`` by default) is there for a caller
that wants a stricter rule: with a finite tolerance, a snap landing further than that (straight
line in 3-D) from the point also puts the point off the mesh. No call site sets it today.

:meth:`~NavmeshPathfinder.navigable` is a different, stricter question, habitat-sim's own:
does the point stand *on* the navmesh (no horizontal move when snapped, within ``max_y_delta``
in height)? :meth:`~NavmeshPathfinder.segment_clear` asks it along a segment.

Before this module (issue 41), three call sites wrapped the pathfinder separately, all with this
same no-limit snap in effect, so no call site's results change: ``nav/oracle.py``
(``HabitatOracle`` / ``pathfinder_distances``: snapped with no limit, ``inf`` when the snap
failed or ``find_path`` failed); ``simulators/habitat.py`` (distances through
``pathfinder_distances``; shortest paths and the lattice's start through ``find_path`` /
``snap_point`` with no limit); and MultiON's Habitat space (``find_path`` on the raw points:
habitat-sim's internal snap with no limit; its points are sampled on the navmesh).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dataforge.errors import InputNotFoundError, MissingDependencyError, UsageError
from dataforge.nav.space import Point

if TYPE_CHECKING:
    from types import ModuleType

    from habitat_sim import PathFinder, ShortestPath

__all__ = [
    "ISLAND_DRAWS",
    "SEGMENT_STEP_M",
    "SNAP_TOLERANCE_M",
    "NavmeshPathfinder",
    "require_habitat_sim",
]

SNAP_TOLERANCE_M = math.inf  # habitat-sim's own snap: no limit but Detour's query box
SEGMENT_STEP_M = 0.05  # segment_clear samples a segment this finely (a navmesh cell)
ISLAND_DRAWS = 100  # random points drawn before sample gives up on the island radius filter
ON_LATTICE_M = 1e-2  # a lattice point is on the navmesh when its snap moves it at most this


def require_habitat_sim() -> ModuleType:
    """The ``habitat_sim`` module, or a one-line :class:`MissingDependencyError` saying how to
    install it."""
    try:
        import habitat_sim
    except ImportError:
        raise MissingDependencyError(
            "geodesics on Habitat scenes need habitat-sim, which is not installed (no Linux "
            "wheel on PyPI): conda install habitat-sim -c conda-forge -c aihabitat"
        ) from None
    return habitat_sim


def _f32(point: Point) -> np.ndarray:
    """A point as the bindings take it: a float32 array of 3."""
    a = np.asarray(point, dtype=np.float32).reshape(-1)
    if a.shape != (3,):
        raise UsageError(f"a navmesh point is three numbers, got {point!r}")
    return a


class NavmeshPathfinder:
    """habitat-sim's ``PathFinder`` under the off-mesh rule of the module docstring.

    ``pathfinder``: a loaded ``habitat_sim.PathFinder`` (or a simulator's); ``habitat_sim``: the
    module (imported when not given); ``snap_tolerance``: a stricter rule's distance, a snap
    landing further than it puts the point off the mesh (:data:`SNAP_TOLERANCE_M`,
    ``math.inf``: any snap, as ``find_path`` alone); ``min_island_radius``: :meth:`sample`'s
    default. A :class:`~dataforge.nav.space.NavSpace` in habitat's frame."""

    def __init__(
        self,
        pathfinder: PathFinder,
        *,
        habitat_sim: ModuleType | None = None,
        snap_tolerance: float = SNAP_TOLERANCE_M,
        min_island_radius: float = 0.0,
    ) -> None:
        if not snap_tolerance >= 0:
            raise UsageError(f"snap_tolerance must be >= 0, got {snap_tolerance}")
        self._hs = require_habitat_sim() if habitat_sim is None else habitat_sim
        self.pathfinder = pathfinder
        self.snap_tolerance = float(snap_tolerance)
        self.min_island_radius = float(min_island_radius)

    @classmethod
    def load(
        cls,
        navmesh: Path | str,
        *,
        seed: int | None = None,
        snap_tolerance: float = SNAP_TOLERANCE_M,
        min_island_radius: float = 0.0,
    ) -> NavmeshPathfinder:
        """A new ``PathFinder`` on the scene's ``navmesh`` file (seeded with ``seed`` when
        given, :meth:`seed`); a one-line error when habitat-sim is missing or the file is
        missing or unreadable."""
        hs = require_habitat_sim()
        navmesh = Path(navmesh)
        if not navmesh.is_file():
            raise InputNotFoundError(f"{navmesh}: scene navmesh not found")
        pathfinder = hs.PathFinder()
        if not pathfinder.load_nav_mesh(str(navmesh)):
            raise InputNotFoundError(f"{navmesh}: habitat-sim could not load this navmesh")
        out = cls(
            pathfinder,
            habitat_sim=hs,
            snap_tolerance=snap_tolerance,
            min_island_radius=min_island_radius,
        )
        if seed is not None:
            out.seed(seed)
        return out

    # -- the navmesh ------------------------------------------------------------------------

    def seed(self, seed: int) -> None:
        """Seed :meth:`sample`'s draws. habitat-sim's ``PathFinder.seed`` seeds the C library's
        process-wide ``rand`` (``srand``): the draws are deterministic while one pathfinder at a
        time samples in a process. ``seed`` is taken modulo 2**32 (an uint32 in the bindings)."""
        self.pathfinder.seed(int(seed) % 2**32)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The navmesh's axis-aligned bounds, (lowest corner, highest corner)."""
        lo, hi = self.pathfinder.get_bounds()
        return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)

    def snap(self, point: Point) -> np.ndarray | None:
        """``point`` snapped to the navmesh (float64), or None when it is off the mesh (the
        module docstring's rule: no snap, or a snap further than a finite ``snap_tolerance``)."""
        p = _f32(point)
        s = np.asarray(self.pathfinder.snap_point(p), dtype=np.float64)
        if not np.all(np.isfinite(s)):
            return None
        if float(np.linalg.norm(s - p.astype(np.float64))) > self.snap_tolerance:
            return None
        return s

    def navigable(self, point: Point, max_y_delta: float = 0.5) -> bool:
        """habitat-sim's ``is_navigable``: ``point`` stands on the navmesh (no horizontal move
        when snapped, at most ``max_y_delta`` in height). Not the off-mesh rule: a point off
        the navmesh's polygons is not navigable but still snaps."""
        return bool(self.pathfinder.is_navigable(_f32(point), float(max_y_delta)))

    def segment_clear(self, p: Point, q: Point, step: float = SEGMENT_STEP_M) -> bool:
        """Whether the straight segment ``p`` -> ``q`` stays on the navmesh: every sample
        ``step`` apart in the plane (and both ends) :meth:`navigable` at ``p``'s height."""
        a, b = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
        n = max(1, math.ceil(math.hypot(b[0] - a[0], b[2] - a[2]) / step))
        for t in np.linspace(0.0, 1.0, n + 1):
            x = a + (b - a) * t
            if not self.navigable((x[0], a[1], x[2])):
                return False
        return True

    # -- random points ----------------------------------------------------------------------

    def sample(
        self,
        rng: np.random.Generator | None = None,
        *,
        min_island_radius: float | None = None,
        tries: int = ISLAND_DRAWS,
    ) -> np.ndarray:
        """A random navigable point (``get_random_navigable_point``: uniform over the navmesh's
        area, float32 values), redrawn until its island's radius (``island_radius``) is at
        least ``min_island_radius`` (default: the one this pathfinder was made with; habitat's
        episode generators keep starts on islands of 1.5 m or more), at most ``tries`` draws; a
        :class:`UsageError` after that. The stream is habitat-sim's (:meth:`seed`), not
        ``rng`` (taken for :class:`~dataforge.nav.space.NavSpace`'s signature)."""
        if min_island_radius is None:
            min_island_radius = self.min_island_radius
        for _ in range(tries):
            p = np.asarray(self.pathfinder.get_random_navigable_point(), dtype=np.float32)
            if not np.all(np.isfinite(p)):
                continue  # habitat-sim's NaN point: no polygon found in max_tries
            if min_island_radius <= 0 or self.pathfinder.island_radius(p) >= min_island_radius:
                return p.astype(np.float64)
        raise UsageError(
            f"this navmesh gave no point on an island of radius {min_island_radius} m or more "
            f"in {tries} draws"
        )

    # -- geodesics and paths ----------------------------------------------------------------

    def _find(self, a: np.ndarray, b: np.ndarray) -> ShortestPath | None:
        """``find_path`` between two snapped points: the filled ``ShortestPath``, or None."""
        path = self._hs.ShortestPath()
        path.requested_start = a.astype(np.float32)
        path.requested_end = b.astype(np.float32)
        if not self.pathfinder.find_path(path) or not np.isfinite(path.geodesic_distance):
            return None
        return path

    def distances(self, sources: Sequence[Point], targets: Sequence[Point]) -> np.ndarray:
        """``len(sources) x len(targets)`` geodesics (m); ``inf`` where either point is off
        the mesh or no path joins them (the module docstring's rule)."""
        src = [self.snap(p) for p in sources]
        dst = [self.snap(p) for p in targets]
        out = np.full((len(src), len(dst)), np.inf)
        for i, a in enumerate(src):
            if a is None:
                continue
            for j, b in enumerate(dst):
                if b is None:
                    continue
                path = self._find(a, b)
                if path is not None:
                    out[i, j] = float(path.geodesic_distance)
        return out

    def distance(self, a: Point, b: Point) -> float:
        """The geodesic (m) from ``a`` to ``b``, ``inf`` as in :meth:`distances`."""
        return float(self.distances([a], [b])[0, 0])

    def shortest_path(self, a: Point, b: Point) -> list[np.ndarray]:
        """Waypoints (float64) of the shortest path from ``a`` to ``b``, from the snapped start
        to the snapped end; ``[]`` when either is off the mesh or no path joins them."""
        sa, sb = self.snap(a), self.snap(b)
        if sa is None or sb is None:
            return []
        path = self._find(sa, sb)
        if path is None:
            return []
        return [np.asarray(p, dtype=np.float64) for p in path.points]

    # -- islands and the lattice ------------------------------------------------------------

    def island_of(self, point: Point) -> int | None:
        """The index of the island ``point`` snaps onto (``get_island``), or None when it is off
        the mesh."""
        s = self.snap(point)
        if s is None:
            return None
        k = int(self.pathfinder.get_island(s.astype(np.float32)))
        return None if k < 0 else k

    def largest_island(self) -> int | None:
        """The island of largest area (``island_area``; the lowest index on a tie), or None for
        an empty navmesh."""
        pf = self.pathfinder
        n = int(pf.num_islands)
        if n == 0:
            return None
        return max(range(n), key=lambda k: (pf.island_area(k), -k))

    def lattice(self, step: float, *, island: int | None = None) -> np.ndarray:
        """The points of a ``step`` m lattice in x and z over the navmesh's bounds that stand on
        the navmesh (N x 3, row by row in z then x, each with the navmesh's height there and the
        lattice's exact x, z); only those on ``island`` when given."""
        if not step > 0:
            raise UsageError(f"step must be > 0, got {step}")
        pf = self.pathfinder
        lo, hi = self.bounds()
        xs = np.arange(math.ceil(lo[0] / step - 1e-9), math.floor(hi[0] / step + 1e-9) + 1) * step
        zs = np.arange(math.ceil(lo[2] / step - 1e-9), math.floor(hi[2] / step + 1e-9) + 1) * step
        out = []
        for z in zs:
            for x in xs:
                p = np.asarray(pf.snap_point(np.array([x, lo[1], z], np.float32)), np.float64)
                if not np.all(np.isfinite(p)) or math.hypot(p[0] - x, p[2] - z) > ON_LATTICE_M:
                    continue
                q = np.array([x, p[1], z], np.float32)
                if not pf.is_navigable(q):
                    continue
                if island is not None and pf.get_island(q) != island:
                    continue
                out.append((float(x), float(p[1]), float(z)))
        return np.array(out, dtype=np.float64).reshape(-1, 3)
