"""A strict stand-in for the part of ``habitat_sim`` the project calls, for machines without it.

Written from habitat-sim's sources (facebookresearch/habitat-sim, ``src/esp/nav/PathFinder.cpp``
and its pybind11 bindings ``src/esp/bindings/ShortestPathBindings.cpp``). Only this surface
exists; any other attribute of the module, a ``PathFinder`` or a ``ShortestPath`` raises
``AttributeError`` (pybind11 objects take no new attributes either), and arguments are checked
as pybind11 converts them (``TypeError`` otherwise):

* ``PathFinder()``; ``.load_nav_mesh(path: str) -> bool`` (a ``str``: pybind11's
  ``std::string`` takes no ``pathlib.Path``; False when the file cannot be read);
* ``.seed(int)``: an ``uint32``. As in habitat-sim it seeds *one process-wide* random stream
  (``srand``), which every PathFinder's ``get_random_navigable_point`` draws from; before any
  ``seed`` the stream is as after ``seed(1)`` (C's ``rand``);
* ``.get_random_navigable_point(max_tries=10, island_index=-1)``: uniform over the navmesh's
  area, every island included (Detour's ``findRandomPoint``), as a :class:`Vector3`;
* ``.island_radius(pt)`` (snapped to the navmesh; 0.0 when it does not snap) or
  ``.island_radius(island_index: int)``: the largest distance of the island's polygon vertices
  from their mean (habitat-sim's ``IslandSystem``);
* ``.is_navigable(pt, max_y_delta=0.5)``: the point snaps to the navmesh with no x/z move
  (1 cm) and at most ``max_y_delta`` in height;
* ``.snap_point(point, island_index=-1)``: the nearest navmesh point within Detour's query box
  (half extents 2, 4, 2 m), else a Vector3 of NaN;
* ``.get_bounds() -> (Vector3 min, Vector3 max)``;
* ``.find_path(path: ShortestPath) -> bool``: snaps both ends (False if either does not),
  False between islands; fills ``geodesic_distance`` (a float32 value; ``inf`` on failure)
  and ``points``;
* ``ShortestPath()`` with ``requested_start``, ``requested_end`` (Vector3, assigned from any
  3-vector), ``points`` and ``geodesic_distance``.

Points given may be a :class:`Vector3`, a 1-D float32/float64 array of 3, or a list/tuple of 3
numbers; the real bindings compute in float32, so does this module.

:func:`module` gives the ``habitat_sim`` module to put in ``sys.modules``: only ``PathFinder``
and ``ShortestPath`` are in it.

The "navmesh" file is JSON: ``{"floor_y": y, "rects": [[x0, z0, x1, z1], ...]}``, axis-aligned
navigable rectangles on one floor (already eroded by the agent's radius). Rectangles that share
an edge form one island. Geodesics come from :class:`dataforge.nav.grid.NavGrid` (agent radius
0, 10 cm cells) on their union.
"""

from __future__ import annotations

import json
import math
import types
from typing import Any

import numpy as np

__all__ = ["PathFinder", "ShortestPath", "Vector3", "module"]

_CELL = 0.1
_PICK = np.array([2.0, 4.0, 2.0], dtype=np.float32)  # Detour query half extents (x, y, z)
_NAN3 = (math.nan, math.nan, math.nan)


class _Stream:
    """habitat-sim's ``seed`` calls ``srand``: one random stream for the whole process."""

    rng = np.random.Generator(np.random.PCG64(1))


def _reseed(seed: int) -> None:
    _Stream.rng = np.random.Generator(np.random.PCG64(seed))


class Vector3:
    """What the bindings return for a point (``magnum.Vector3``): three float32 values that
    index, iterate, compare and convert with ``np.asarray``; no array arithmetic."""

    __slots__ = ("_v",)

    def __init__(self, x: float, y: float, z: float) -> None:
        self._v = np.array([x, y, z], dtype=np.float32)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        v = self._v.copy()
        return v if dtype is None else v.astype(dtype)

    def __len__(self) -> int:
        return 3

    def __getitem__(self, i: int) -> float:
        if not isinstance(i, int):
            raise TypeError("Vector3 indices are ints")
        return float(self._v[i])

    def __iter__(self) -> Any:
        return iter(float(v) for v in self._v)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vector3) and bool(np.array_equal(self._v, other._v))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Vector3({}, {}, {})".format(*(float(v) for v in self._v))


def _vec(value: Any, what: str) -> np.ndarray:
    """A 3-vector argument as the bindings convert it (float32), else TypeError."""
    if isinstance(value, Vector3):
        return np.asarray(value)
    if isinstance(value, np.ndarray):
        if value.shape != (3,) or value.dtype not in (np.float32, np.float64):
            raise TypeError(f"{what}: incompatible array {value.dtype} {value.shape}")
        return value.astype(np.float32)
    if isinstance(value, list | tuple) and len(value) == 3:
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            raise TypeError(f"{what}: a 3-vector of numbers, got {value!r}")
        return np.array(value, dtype=np.float32)
    raise TypeError(f"{what}: incompatible function arguments ({type(value).__name__})")


def _int(value: Any, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{what}: an integer, got {type(value).__name__}")
    v = int(value)
    if not lo <= v <= hi:
        raise TypeError(f"{what}: {v} does not fit")
    return v


def _no_kwargs(name: str, kwargs: dict[str, Any], allowed: tuple[str, ...] = ()) -> None:
    bad = sorted(set(kwargs) - set(allowed))
    if bad:
        raise TypeError(f"{name}(): incompatible function arguments: {', '.join(bad)}")


class _Mesh:
    """The loaded rectangles, their islands and the NavGrid of their union."""

    def __init__(self, floor_y: float, rects: list[list[float]]) -> None:
        from shapely.geometry import box
        from shapely.ops import unary_union

        from dataforge.nav.grid import NavGrid

        self.y = np.float32(floor_y)
        self.rects = np.array(rects, dtype=np.float32).reshape(-1, 4)
        boxes = [box(*r) for r in self.rects.tolist()]
        union = unary_union(boxes)
        parts = list(getattr(union, "geoms", [union]))
        self.island_of = [
            next(k for k, p in enumerate(parts) if p.covers(b.representative_point()))
            for b in boxes
        ]
        self.radii = []
        for k in range(len(parts)):
            verts = np.array(
                [
                    [x, self.y, z]
                    for i, b in enumerate(boxes)
                    if self.island_of[i] == k
                    for x, z in list(b.exterior.coords)[:-1]
                ],
                dtype=np.float32,
            )
            mean = verts.mean(axis=0)
            self.radii.append(float(np.float32(np.max(np.linalg.norm(verts - mean, axis=1)))))
        self.areas = np.array([b.area for b in boxes])
        self.grid = NavGrid.build(union, agent_radius=0.0, cell=_CELL, y=float(self.y))

    def project(self, p: np.ndarray) -> tuple[int, np.ndarray] | None:
        """(rectangle, nearest navmesh point) in Detour's query box around ``p``, or None."""
        best = None
        for i, (x0, z0, x1, z1) in enumerate(self.rects):
            q = np.array([min(max(p[0], x0), x1), self.y, min(max(p[2], z0), z1)], np.float32)
            if np.any(np.abs(q - p) > _PICK):
                continue
            d = float(np.sum((q - p).astype(np.float64) ** 2))
            if best is None or d < best[0]:
                best = (d, i, q)
        return None if best is None else (best[1], best[2])


class PathFinder:
    __slots__ = ("_mesh",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError("PathFinder() takes no arguments")
        self._mesh: _Mesh | None = None

    def _loaded(self) -> _Mesh:
        if self._mesh is None:
            raise RuntimeError("PathFinder: no navmesh loaded")  # habitat-sim asserts
        return self._mesh

    def load_nav_mesh(self, path: Any = None, **kwargs: Any) -> bool:
        _no_kwargs("load_nav_mesh", kwargs, ("path",))
        path = kwargs.get("path", path)
        if not isinstance(path, str):
            raise TypeError(f"load_nav_mesh(): path must be a str, got {type(path).__name__}")
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            mesh = _Mesh(float(doc["floor_y"]), doc["rects"])
        except (OSError, ValueError, KeyError, TypeError):
            return False
        self._mesh = mesh
        return True

    def seed(self, new_seed: Any, /) -> None:
        _reseed(_int(new_seed, "seed()", 0, 2**32 - 1))

    def get_random_navigable_point(
        self, max_tries: Any = 10, island_index: Any = -1, **kwargs: Any
    ) -> Vector3:
        _no_kwargs("get_random_navigable_point", kwargs)
        _int(max_tries, "max_tries", -(2**31), 2**31 - 1)
        if _int(island_index, "island_index", -(2**31), 2**31 - 1) != -1:
            raise TypeError("this stand-in samples the whole navmesh only (island_index=-1)")
        mesh = self._loaded()
        rng = _Stream.rng
        i = int(rng.choice(len(mesh.rects), p=mesh.areas / mesh.areas.sum()))
        x0, z0, x1, z1 = mesh.rects[i].astype(np.float64)
        u, v = rng.random(2)
        return Vector3(x0 + u * (x1 - x0), float(mesh.y), z0 + v * (z1 - z0))

    def island_radius(self, *args: Any, **kwargs: Any) -> float:
        _no_kwargs("island_radius", kwargs, ("pt", "island_index"))
        if len(args) + len(kwargs) != 1:
            raise TypeError("island_radius(): incompatible function arguments")
        mesh = self._loaded()
        arg = args[0] if args else next(iter(kwargs.values()))
        by_index = "island_index" in kwargs or (
            not kwargs and isinstance(arg, int | np.integer) and not isinstance(arg, bool)
        )
        if by_index:
            k = _int(arg, "island_index", -(2**31), 2**31 - 1)
            if not 0 <= k < len(mesh.radii):
                raise AssertionError(f"island_radius: no island {k}")  # ESP_CHECK
            return mesh.radii[k]
        hit = mesh.project(_vec(arg, "island_radius(pt)"))
        return 0.0 if hit is None else mesh.radii[mesh.island_of[hit[0]]]

    def is_navigable(self, pt: Any = None, max_y_delta: Any = 0.5, **kwargs: Any) -> bool:
        _no_kwargs("is_navigable", kwargs, ("pt", "max_y_delta"))
        pt = kwargs.get("pt", pt)
        max_y_delta = kwargs.get("max_y_delta", max_y_delta)
        if isinstance(max_y_delta, bool) or not isinstance(max_y_delta, int | float):
            raise TypeError("is_navigable(): max_y_delta is a float")
        p = _vec(pt, "is_navigable(pt)")
        hit = self._loaded().project(p)
        if hit is None:
            return False
        q = hit[1]
        return bool(
            abs(float(q[1]) - float(p[1])) <= max_y_delta
            and math.hypot(float(p[0] - q[0]), float(p[2] - q[2])) <= 1e-2
        )

    def snap_point(self, point: Any = None, island_index: Any = -1, **kwargs: Any) -> Vector3:
        _no_kwargs("snap_point", kwargs, ("point", "island_index"))
        point = kwargs.get("point", point)
        if _int(kwargs.get("island_index", island_index), "island_index", -1, -1) != -1:
            raise TypeError("unreachable")
        hit = self._loaded().project(_vec(point, "snap_point(point)"))
        return Vector3(*_NAN3) if hit is None else Vector3(*hit[1].tolist())

    def get_bounds(self) -> tuple[Vector3, Vector3]:
        mesh = self._loaded()
        lo, hi = mesh.rects[:, :2].min(axis=0), mesh.rects[:, 2:].max(axis=0)
        y = float(mesh.y)
        return Vector3(float(lo[0]), y, float(lo[1])), Vector3(float(hi[0]), y, float(hi[1]))

    def find_path(self, path: Any = None, **kwargs: Any) -> bool:
        _no_kwargs("find_path", kwargs, ("path",))
        path = kwargs.get("path", path)
        if not isinstance(path, ShortestPath):
            raise TypeError(f"find_path(): a ShortestPath, got {type(path).__name__}")
        mesh = self._loaded()
        path.geodesic_distance = math.inf
        path.points = []
        a = mesh.project(np.asarray(path.requested_start))
        b = mesh.project(np.asarray(path.requested_end))
        if a is None or b is None:
            return False
        if np.array_equal(a[1], b[1]):
            path.geodesic_distance = 0.0
            path.points = [Vector3(*a[1].tolist()), Vector3(*b[1].tolist())]
            return True
        if mesh.island_of[a[0]] != mesh.island_of[b[0]]:
            return False
        d = mesh.grid.distance(a[1].astype(np.float64), b[1].astype(np.float64))
        if not math.isfinite(d):
            return False
        path.geodesic_distance = float(np.float32(d))
        path.points = [Vector3(*a[1].tolist()), Vector3(*b[1].tolist())]
        return True


class ShortestPath:
    __slots__ = ("_end", "_start", "geodesic_distance", "points")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError("ShortestPath() takes no arguments")
        self._start = Vector3(0.0, 0.0, 0.0)
        self._end = Vector3(0.0, 0.0, 0.0)
        self.points: list[Vector3] = []
        self.geodesic_distance = 0.0

    @property
    def requested_start(self) -> Vector3:
        return self._start

    @requested_start.setter
    def requested_start(self, value: Any) -> None:
        self._start = Vector3(*_vec(value, "requested_start").tolist())

    @property
    def requested_end(self) -> Vector3:
        return self._end

    @requested_end.setter
    def requested_end(self, value: Any) -> None:
        self._end = Vector3(*_vec(value, "requested_end").tolist())


def module() -> types.ModuleType:
    """A fresh ``habitat_sim`` stand-in holding only ``PathFinder`` and ``ShortestPath`` (any
    other name raises AttributeError), its random stream as in a new process."""
    _reseed(1)
    mod = types.ModuleType("habitat_sim", "habitat-sim stand-in (tests/fake_habitat_sim.py)")
    mod.PathFinder = PathFinder  # type: ignore[attr-defined]
    mod.ShortestPath = ShortestPath  # type: ignore[attr-defined]

    def missing(name: str) -> Any:
        raise AttributeError(f"module 'habitat_sim' (stand-in) has no attribute {name!r}")

    mod.__getattr__ = missing  # type: ignore[method-assign]
    return mod
