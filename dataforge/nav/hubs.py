"""Fast point-to-point geodesics on a :class:`~dataforge.nav.grid.NavGrid`, through corner hubs.

A shortest path in a polygonal free space is a straight segment, or it bends only at convex
corners of the obstacles. On a grid those corners are where a blocked cell meets a free cell
diagonally while the two cells beside both are free; the free cell there is a *hub*. So

    d(a, b) = |ab|                              when the segment a-b stays on free cells,
    d(a, b) = min over hubs h of F_h(a) + F_h(b)  otherwise,

where ``F_h`` is the fast-marching distance field of hub ``h`` (the path passes through some
hub, and every hub gives an upper bound by the triangle inequality). After one field per hub is
computed (a ProcTHOR house at 5 cm has 30-300 hubs: 0.1-4 s), a query costs one
:meth:`NavGrid.segment_clear` and a minimum over the hubs, about 20-40 microseconds, instead of a
distance field (10-30 ms) per source. Sampling tens of thousands of episodes per scene needs that.

Accuracy: the hub is the free cell's centre, up to half a cell diagonal from the corner it
stands for, so a bent path may come out up to about one cell longer per bend than
:meth:`NavGrid.distance` (which reads one field from the source); both carry fast marching's
own error (see :mod:`dataforge.nav.grid`). Fields are read at the query points by bilinear
interpolation where the four surrounding cells are free, as :meth:`NavGrid.distances` does. The
tests compare the two on random pairs; treat results as accurate to a few centimetres.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dataforge.nav.grid import SMOOTH, NavGrid, _xz, sample_cells
from dataforge.nav.space import Point


def corner_hubs(free: np.ndarray) -> np.ndarray:
    """A boolean mask of the hub cells of ``free`` (see the module docstring); cells off the
    grid count as blocked."""
    f = np.asarray(free, dtype=bool)
    p = np.pad(f, 1)
    n, m = p.shape
    hub = np.zeros_like(f)
    for di in (-1, 1):
        for dj in (-1, 1):
            diagonal_blocked = ~p[1 + di : n - 1 + di, 1 + dj : m - 1 + dj]
            side_a = p[1 + di : n - 1 + di, 1:-1]
            side_b = p[1:-1, 1 + dj : m - 1 + dj]
            hub |= f & diagonal_blocked & side_a & side_b
    return hub


class HubGeodesics:
    """Geodesic distances between arbitrary points of one component of ``grid``.

    ``component``: the component label (``grid.components()``) whose points are queried; by
    default the largest. Points outside it (or off navigable space) are ``inf`` away from
    everything, as are points in different components of :meth:`NavGrid.distance`.
    """

    def __init__(self, grid: NavGrid, component: int | None = None) -> None:
        self.grid = grid
        labels = grid.components()
        self.component = grid.largest_component() if component is None else int(component)
        self.mask = labels == self.component
        self.index = np.full(grid.shape, -1, dtype=np.int64)
        self.index[self.mask] = np.arange(int(self.mask.sum()))
        hubs = np.argwhere(corner_hubs(grid.free) & self.mask)
        self.hubs = [(int(i), int(j)) for i, j in hubs]
        # float32: a few micrometres at house scale, and half the memory (hubs x free cells)
        table = np.empty((len(self.hubs), int(self.mask.sum())), dtype=np.float32)
        for k, cell in enumerate(self.hubs):
            table[k] = grid.field_from_cell(cell)[self.mask]
        # column per free cell, row per hub; transposed so one point reads a contiguous row
        self._fields = np.ascontiguousarray(table.T)

    @property
    def hub_count(self) -> int:
        return len(self.hubs)

    def contains(self, point: Point) -> bool:
        """Whether ``point`` stands on a free cell of this component."""
        c = self.grid.cell_of(point)
        return self.grid.inside(c) and bool(self.mask[c])

    # -- NavSpace: this component's points, its geodesics, the grid's paths -------------------

    def navigable(self, point: Point) -> bool:
        """:meth:`contains`: points off this component are not in this space."""
        return self.contains(point)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """The centre of a cell of this component drawn uniformly (equal floor areas equally
        likely), at the grid's ``y``, rounded to micrometres."""
        cells = np.argwhere(self.mask) if self.component else np.zeros((0, 2))  # 0: blocked
        return sample_cells(self.grid, cells, rng)

    def distances(self, sources: Sequence[Point], targets: Sequence[Point]) -> np.ndarray:
        """:meth:`distance` from every source to every target (sources x targets)."""
        out = np.empty((len(sources), len(targets)))
        for k, a in enumerate(sources):
            out[k] = self.distances_from(a, targets)
        return out

    def shortest_path(self, a: Point, b: Point) -> list[np.ndarray]:
        return self.grid.shortest_path(a, b)

    def segment_clear(self, p: Point, q: Point) -> bool:
        return self.grid.segment_clear(p, q)

    def hub_distances(self, point: Point) -> np.ndarray:
        """Distances (m) from ``point`` to every hub (``inf`` off this component)."""
        g = self.grid
        if not self.contains(point):
            return np.full(len(self.hubs), np.inf)
        x, z = _xz(point)
        fi = (z - g.origin[1]) / g.cell - 0.5
        fj = (x - g.origin[0]) / g.cell - 0.5
        i0, j0 = math.floor(fi), math.floor(fj)
        wi, wj = fi - i0, fj - j0
        cols = []
        for di, dj in ((0, 0), (0, 1), (1, 0), (1, 1)):
            c = (i0 + di, j0 + dj)
            cols.append(int(self.index[c]) if g.inside(c) else -1)
        own = self.grid.cell_of(point)
        ci, cj = own
        cx = g.origin[0] + (cj + 0.5) * g.cell
        cz = g.origin[1] + (ci + 0.5) * g.cell
        fallback = self._fields[int(self.index[own])] + math.hypot(x - cx, z - cz)
        if min(cols) < 0:
            return fallback
        v = self._fields[cols]  # 4 x hubs
        bilinear = (1 - wi) * ((1 - wj) * v[0] + wj * v[1]) + wi * ((1 - wj) * v[2] + wj * v[3])
        smooth = (v.max(axis=0) - v.min(axis=0)) <= SMOOTH * g.cell
        return np.where(smooth, bilinear, fallback)

    def distance(self, a: Point, b: Point) -> float:
        """The geodesic distance (m) from ``a`` to ``b`` (``inf`` when either is off this
        component)."""
        if not (self.contains(a) and self.contains(b)):
            return math.inf
        (ax, az), (bx, bz) = _xz(a), _xz(b)
        straight = math.hypot(bx - ax, bz - az)
        if straight <= 1e-12 or self.grid.segment_clear(a, b):
            return straight
        if not self.hubs:
            return math.inf
        d = float(np.min(self.hub_distances(a).astype(np.float64) + self.hub_distances(b)))
        return max(d, straight)

    def distances_from(self, a: Point, targets: Sequence[Point]) -> np.ndarray:
        """Distances (m) from ``a`` to each of ``targets``."""
        if not self.contains(a):
            return np.full(len(targets), np.inf)
        ha = self.hub_distances(a).astype(np.float64)
        out = np.empty(len(targets))
        ax, az = _xz(a)
        for k, b in enumerate(targets):
            if not self.contains(b):
                out[k] = math.inf
                continue
            bx, bz = _xz(b)
            straight = math.hypot(bx - ax, bz - az)
            if straight <= 1e-12 or self.grid.segment_clear(a, b):
                out[k] = straight
            elif self.hubs:
                out[k] = max(float(np.min(ha + self.hub_distances(b))), straight)
            else:
                out[k] = math.inf
        return out
