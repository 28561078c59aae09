"""Geodesics on an occupancy grid of the floor plan, by fast marching (scikit-fmm).

Navigation happens in the horizontal plane: points are (x, y, z) with y up (AI2-THOR's frame)
and y is ignored; the plan coordinates are (x, z). :meth:`NavGrid.build` rasterises the
walkable floor minus the obstacles, both grown by the agent's radius, at ``cell`` metres.

Accuracy: a distance field is the first-order fast-marching solution of |grad d| = 1 from the
source cell over navigable cells, so distances carry an error of about one cell (5 cm by
default) plus the first-order scheme's ~1-2% on long diagonal runs; a target's distance is read
at its cell. Points off the grid or in obstacles snap to the nearest navigable cell within
``snap_radius``; otherwise they are unreachable (``inf``). Paths follow the field downhill over
8-connected cells and are then shortened by line-of-sight checks on the grid, so every segment
of a returned path stays on navigable cells.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from dataforge.errors import UsageError

NEIGHBOURS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


@dataclass(eq=False)
class NavGrid:
    """A boolean grid ``free[i, j]``: cell (i, j) has its centre at
    (x0 + (j + 0.5) cell, z0 + (i + 0.5) cell); rows follow z, columns x."""

    free: np.ndarray
    origin: tuple[float, float]
    cell: float
    agent_radius: float
    y: float = 0.0
    snap_radius: float = 0.5
    cache_size: int = 64
    name: str = "grid"
    _fields: OrderedDict[tuple[int, int], np.ndarray] = field(default_factory=OrderedDict)
    _labels: np.ndarray | None = None

    @classmethod
    def build(
        cls,
        free: BaseGeometry | Sequence[BaseGeometry],
        obstacles: Sequence[BaseGeometry] = (),
        *,
        agent_radius: float = 0.2,
        cell: float = 0.05,
        y: float = 0.0,
    ) -> NavGrid:
        """Rasterise ``free`` (walkable floor polygons, plan x/z) minus ``obstacles`` (wall
        segments, object footprints), each grown by ``agent_radius``."""
        if cell <= 0 or agent_radius < 0:
            raise UsageError("cell must be positive and agent_radius non-negative")
        area = free if isinstance(free, BaseGeometry) else unary_union(list(free))
        if area.is_empty:
            raise UsageError("the walkable area is empty")
        minx, minz, maxx, maxz = area.bounds
        nx = max(1, math.ceil((maxx - minx) / cell))
        nz = max(1, math.ceil((maxz - minz) / cell))
        xs = minx + (np.arange(nx) + 0.5) * cell
        zs = minz + (np.arange(nz) + 0.5) * cell
        gx, gz = np.meshgrid(xs, zs)
        walk = area.buffer(-agent_radius) if agent_radius > 0 else area
        mask = shapely.contains_xy(walk, gx, gz)
        if len(obstacles):
            blocked = unary_union(list(obstacles)).buffer(agent_radius)
            mask &= ~shapely.intersects_xy(blocked, gx, gz)
        return cls(mask, (float(minx), float(minz)), float(cell), float(agent_radius), float(y))

    # -- cells and points --------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, int]:
        return self.free.shape

    def cell_of(self, point: Sequence[float]) -> tuple[int, int]:
        x, z = _xz(point)
        return (
            math.floor((z - self.origin[1]) / self.cell),
            math.floor((x - self.origin[0]) / self.cell),
        )

    def center(self, cell: tuple[int, int]) -> np.ndarray:
        i, j = cell
        x = self.origin[0] + (j + 0.5) * self.cell
        z = self.origin[1] + (i + 0.5) * self.cell
        return np.array([x, self.y, z])

    def _inside(self, cell: tuple[int, int]) -> bool:
        return 0 <= cell[0] < self.shape[0] and 0 <= cell[1] < self.shape[1]

    def is_navigable(self, point: Sequence[float]) -> bool:
        c = self.cell_of(point)
        return self._inside(c) and bool(self.free[c])

    def snap(self, point: Sequence[float]) -> tuple[int, int] | None:
        """The navigable cell nearest to ``point`` within ``snap_radius``, or None."""
        c = self.cell_of(point)
        if self._inside(c) and self.free[c]:
            return c
        r = math.ceil(self.snap_radius / self.cell)
        i0, i1 = max(0, c[0] - r), min(self.shape[0], c[0] + r + 1)
        j0, j1 = max(0, c[1] - r), min(self.shape[1], c[1] + r + 1)
        if i0 >= i1 or j0 >= j1:
            return None
        ii, jj = np.nonzero(self.free[i0:i1, j0:j1])
        if len(ii) == 0:
            return None
        x, z = _xz(point)
        cx = self.origin[0] + (jj + j0 + 0.5) * self.cell
        cz = self.origin[1] + (ii + i0 + 0.5) * self.cell
        d = np.hypot(cx - x, cz - z)
        k = int(np.argmin(d))
        if d[k] > self.snap_radius:
            return None
        return (int(ii[k] + i0), int(jj[k] + j0))

    # -- components --------------------------------------------------------------------

    def components(self) -> np.ndarray:
        """Connected components of navigable cells (8-connected), labelled 1..n; 0 = blocked."""
        if self._labels is None:
            from scipy import ndimage

            self._labels, _ = ndimage.label(self.free, structure=np.ones((3, 3), bool))
        return self._labels

    def largest_component(self) -> int:
        labels = self.components()
        counts = np.bincount(labels.ravel())
        counts[0] = 0
        return int(np.argmax(counts)) if counts.sum() else 0

    # -- distances ---------------------------------------------------------------------

    def distance_field(self, source: tuple[int, int]) -> np.ndarray:
        """Geodesic distance (m) from the centre of ``source`` to every cell; inf where
        unreachable. Cached (LRU of ``cache_size`` fields)."""
        if source in self._fields:
            self._fields.move_to_end(source)
            return self._fields[source]
        import skfmm

        phi = np.ones(self.shape)
        phi[source] = -1.0
        masked = np.ma.MaskedArray(phi, mask=~self.free)
        d = skfmm.distance(masked, dx=self.cell)
        # The zero level set lies half a cell from the source centre.
        out = np.where(np.ma.getmaskarray(d), np.inf, np.ma.getdata(d) + self.cell / 2)
        labels = self.components()
        out[labels != labels[source]] = np.inf
        out[source] = 0.0
        self._fields[source] = out
        while len(self._fields) > self.cache_size:
            self._fields.popitem(last=False)
        return out

    def distances(self, sources: Sequence[Any], targets: Sequence[Any]) -> np.ndarray:
        """``len(sources) x len(targets)`` geodesic distances in metres (inf: no path)."""
        out = np.full((len(sources), len(targets)), np.inf)
        tcells = [self.snap(t) for t in targets]
        for a, s in enumerate(sources):
            sc = self.snap(s)
            if sc is None:
                continue
            d = self.distance_field(sc)
            for b, tc in enumerate(tcells):
                if tc is not None:
                    out[a, b] = d[tc]
        return out

    def distance(self, a: Sequence[float], b: Sequence[float]) -> float:
        return float(self.distances([a], [b])[0, 0])

    # -- paths -------------------------------------------------------------------------

    def shortest_path(self, a: Sequence[float], b: Sequence[float]) -> list[np.ndarray]:
        """Waypoints (x, y, z) from ``a``'s cell to ``b``'s cell; ``[]`` when unreachable."""
        ac, bc = self.snap(a), self.snap(b)
        if ac is None or bc is None:
            return []
        field_b = self.distance_field(bc)
        if not np.isfinite(field_b[ac]):
            return []
        cells = [ac]
        cur = ac
        for _ in range(self.free.size):
            if cur == bc:
                break
            best, best_d = None, field_b[cur]
            for di, dj in NEIGHBOURS:
                n = (cur[0] + di, cur[1] + dj)
                if self._inside(n) and self.free[n] and field_b[n] < best_d:
                    side_a, side_b = (cur[0] + di, cur[1]), (cur[0], cur[1] + dj)
                    if di and dj and not (self.free[side_a] and self.free[side_b]):
                        continue  # no corner cutting between two blocked cells
                    best, best_d = n, field_b[n]
            if best is None:
                break
            cells.append(best)
            cur = best
        if cur != bc:
            return []
        return [self.center(c) for c in self._shortcut(cells)]

    def segment_clear(self, p: Sequence[float], q: Sequence[float]) -> bool:
        """Every point of the plan segment p -> q (sampled at cell/4) is on a navigable cell."""
        pa, pb = np.asarray(_xz(p)), np.asarray(_xz(q))
        n = max(2, int(np.linalg.norm(pb - pa) / (self.cell / 4)) + 2)
        t = np.linspace(0.0, 1.0, n)[:, None]
        pts = pa + t * (pb - pa)
        j = np.floor((pts[:, 0] - self.origin[0]) / self.cell).astype(int)
        i = np.floor((pts[:, 1] - self.origin[1]) / self.cell).astype(int)
        if i.min() < 0 or j.min() < 0 or i.max() >= self.shape[0] or j.max() >= self.shape[1]:
            return False
        return bool(self.free[i, j].all())

    def _shortcut(self, cells: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Forward string pulling: from each kept cell, jump to the farthest cell still in
        straight, clear sight along the path."""
        out = [cells[0]]
        k = 0
        while k < len(cells) - 1:
            m = k + 1
            while m + 1 < len(cells) and self.segment_clear(
                self.center(cells[k]), self.center(cells[m + 1])
            ):
                m += 1
            out.append(cells[m])
            k = m
        return out

    # -- reachable positions -----------------------------------------------------------

    def reachable_positions(
        self, step: float = 0.25, start: Sequence[float] | None = None
    ) -> np.ndarray:
        """AI2-THOR-style reachable positions: points on the ``step`` lattice (multiples of
        ``step`` in x and z) whose cell is navigable and connected to ``start`` (default: the
        largest component). Returns (N, 3) with y = the grid's ``y``."""
        labels = self.components()
        if start is not None:
            sc = self.snap(start)
            if sc is None:
                return np.zeros((0, 3))
            keep = labels[sc]
        else:
            keep = self.largest_component()
        x0, z0 = self.origin
        x1 = x0 + self.shape[1] * self.cell
        z1 = z0 + self.shape[0] * self.cell
        xs = np.arange(math.ceil(x0 / step), math.floor(x1 / step) + 1) * step
        zs = np.arange(math.ceil(z0 / step), math.floor(z1 / step) + 1) * step
        gx, gz = np.meshgrid(xs, zs)
        i = np.floor((gz - z0) / self.cell).astype(int)
        j = np.floor((gx - x0) / self.cell).astype(int)
        ok = (i >= 0) & (i < self.shape[0]) & (j >= 0) & (j < self.shape[1])
        i, j, gx, gz = i[ok], j[ok], gx[ok], gz[ok]
        sel = self.free[i, j] & (labels[i, j] == keep)
        pts = np.column_stack([gx[sel], np.full(int(sel.sum()), self.y), gz[sel]])
        return np.round(pts, 6)


def _xz(point: Sequence[float]) -> tuple[float, float]:
    p = np.asarray(point, dtype=np.float64).reshape(-1)
    if len(p) == 3:
        return float(p[0]), float(p[2])
    if len(p) == 2:
        return float(p[0]), float(p[1])
    raise UsageError(f"a point must be (x, y, z) or (x, z), got {point!r}")
