"""HSSD receptacles for the habitat-sim backend (``docs/habitat_world.md`` §4-5).

* :func:`read_categories` reads the OVMM category CSVs (``object_categories.csv``,
  ``hssd-receptacles.csv``) as FindingDory's ``read_obj_category_mapping`` does.
* :func:`find_receptacles` collects every rigid object's mesh receptacles
  (``user_defined.receptacle_mesh_*``), as habitat-lab's ``find_receptacles`` /
  ``parse_receptacles_from_user_config`` do for rigid parents: each mesh of the ``.glb`` (scene
  transforms applied) is one surface named ``<name>.<4-digit index>``; its triangles are taken to
  the world by the parent's ``visual_scene_nodes[1].absolute_transformation()`` (the scaling
  node, which includes any COM correction: habitat-lab's ``Receptacle.get_global_transform``).
  Stage receptacles, AABB receptacles, articulated parents and the scene filter file are not
  read (degradations, see the doc).
* :class:`Magnum` is the one place the backend touches ``magnum``: it builds vectors and yaw
  quaternions and reads matrices, ranges and vectors back into numpy, by indexing only.

Everything returned is in dataforge's frame (z mirrored, :func:`to_df`); plan views are (x, z).
All sampling draws from the caller's ``numpy.random.Generator``.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import shapely
from shapely.geometry import MultiPoint, Polygon

from dataforge.errors import MalformedInputError, MissingDependencyError
from dataforge.world.boxes import Aabb

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

MESH_PREFIX = "receptacle_mesh_"
TRUE = frozenset({"true", "1", "1.0", "yes"})


def object_shortname(handle: str) -> str:
    """habitat-lab's ``object_shortname_from_handle`` (§4)."""
    return handle.split("/")[-1].split(".")[0].split("_:")[0]


def mirror(points: np.ndarray) -> np.ndarray:
    """Points (..., 3) with z negated: habitat <-> dataforge (§1)."""
    out = np.array(points, dtype=np.float64)
    out[..., 2] = -out[..., 2]
    return out


# -- categories ------------------------------------------------------------------------------


def read_categories(path: str | os.PathLike[str], *, receptacles: bool = False) -> dict[str, str]:
    """Template shortname -> category from an OVMM category CSV (§4,
    ``read_obj_category_mapping``): the key column is ``id`` when present, else ``name``; the
    category is ``main_category`` when present, else ``clean_category``, with spaces turned to
    ``_`` and cut at the first ``.``. ``receptacles``: keep only rows whose ``hasReceptacles`` is
    true, when the file has that column (``hssd-receptacles.csv``). Rows with an empty key or
    category are left out (they have no category)."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            columns = reader.fieldnames or []
            rows = list(reader)
    except OSError as exc:
        raise MalformedInputError(f"category file {os.fspath(path)!r}: {exc}") from None
    key = "id" if "id" in columns else "name"
    cat = "main_category" if "main_category" in columns else "clean_category"
    if key not in columns or cat not in columns:
        raise MalformedInputError(
            f"category file {os.fspath(path)!r} has no {key!r} / {cat!r} column"
        )
    keep = receptacles and "hasReceptacles" in columns
    out: dict[str, str] = {}
    for row in rows:
        if keep and (row.get("hasReceptacles") or "").strip().lower() not in TRUE:
            continue
        name = (row.get(key) or "").strip()
        category = (row.get(cat) or "").replace(" ", "_").split(".")[0]
        if name and category:
            out[name] = category
    return out


# -- magnum adapter --------------------------------------------------------------------------


class Magnum:
    """The backend's only use of ``magnum`` (the ``mn`` module given): build ``Vector3`` and
    yaw ``Quaternion`` values, read ``Vector3`` / ``Range3D`` / ``Matrix4`` back (by indexing:
    ``m[i]`` is column ``i``), so that a test stand-in with the same few classes can take its
    place."""

    def __init__(self, mn: Any) -> None:
        self.mn = mn

    def vector(self, p: np.ndarray | Sequence[float]) -> Any:
        return self.mn.Vector3(float(p[0]), float(p[1]), float(p[2]))

    def yaw(self, radians: float) -> Any:
        """Rotation by ``radians`` about habitat's +y."""
        mn = self.mn
        return mn.Quaternion.rotation(mn.Rad(float(radians)), mn.Vector3(0.0, 1.0, 0.0))

    @staticmethod
    def array(v: Any) -> np.ndarray:
        """A ``Vector3`` as a float64 array."""
        return np.array([float(v[0]), float(v[1]), float(v[2])])

    @staticmethod
    def matrix(m: Any) -> np.ndarray:
        """A ``Matrix4`` as a 4 x 4 float64 array (rows, as numpy writes matrices)."""
        return np.array([[float(x) for x in m[c]] for c in range(4)]).T

    @classmethod
    def range(cls, r: Any) -> tuple[np.ndarray, np.ndarray]:
        """A ``Range3D`` as (min, max)."""
        return cls.array(r.min), cls.array(r.max)


def box_corners(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The 8 corners (8 x 3) of the box ``lo``..``hi``."""
    return np.array(
        [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])],
        dtype=np.float64,
    )


def transform(m: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points (..., 3) through the 4 x 4 matrix ``m``."""
    return np.asarray(points, np.float64) @ m[:3, :3].T + m[:3, 3]


def plan_hull(points_df: np.ndarray) -> Polygon:
    """The plan-view (x, z) convex hull of dataforge points (N x 3)."""
    hull = MultiPoint([(float(p[0]), float(p[2])) for p in points_df]).convex_hull
    return hull if isinstance(hull, Polygon) else Polygon()


# -- receptacles -----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class HabitatSurface:
    """One mesh receptacle: ``name`` (``<parent handle>|<receptacle name>.<NNNN>``, habitat-lab's
    ``unique_name``), ``triangles`` (N x 3 x 3, world, dataforge frame, read-only), their total
    ``area_m2`` and area-weighted mean height ``y``."""

    name: str
    triangles: np.ndarray
    area_m2: float
    y: float

    @property
    def areas(self) -> np.ndarray:
        return triangle_areas(self.triangles)

    def polygon(self) -> BaseGeometry:
        """The plan-view (x, z) union of the triangles (degenerate ones left out)."""
        polys = [Polygon(t[:, [0, 2]]) for t in self.triangles]
        return shapely.union_all([p for p in polys if p.is_valid and p.area > 0])


@dataclass(frozen=True, eq=False)
class HabitatReceptacle:
    """A piece of furniture with mesh receptacles: ``id`` is the parent object's handle,
    ``category`` its receptacle category, ``footprint`` the plan-view hull of its 8 transformed
    AABB corners, ``aabb`` its world box (dataforge frame), ``surfaces`` its mesh receptacles."""

    id: str
    category: str
    footprint: Polygon
    aabb: Aabb
    surfaces: tuple[HabitatSurface, ...]

    @property
    def area_m2(self) -> float:
        return float(sum(s.area_m2 for s in self.surfaces))


def triangle_areas(triangles: np.ndarray) -> np.ndarray:
    t = np.asarray(triangles, np.float64).reshape(-1, 3, 3)
    return 0.5 * np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1)


def load_mesh_triangles(path: str) -> list[np.ndarray]:
    """The triangles (N x 3 x 3, the file's frame) of each mesh instance of a ``.glb``, the scene
    graph's transforms applied (habitat-lab's ``import_tri_mesh``), ordered by the file's mesh
    order, then node name (magnum's importer follows the file's node order, which is the same
    for one node per mesh)."""
    try:
        import trimesh
    except ImportError:
        raise MissingDependencyError(
            "habitat receptacle meshes need trimesh: pip install 'trimesh>=4,<6'"
        ) from None
    try:
        scene = cast("trimesh.Scene", trimesh.load(path, force="scene"))
    except (OSError, ValueError) as exc:
        raise MalformedInputError(f"receptacle mesh {path!r}: {exc}") from None
    order = list(scene.geometry)
    found = []
    for node in scene.graph.nodes_geometry:
        matrix, name = scene.graph[node]
        geom = scene.geometry[name]
        if isinstance(geom, trimesh.Trimesh) and len(geom.faces):
            tris = transform(np.asarray(matrix, np.float64), np.asarray(geom.triangles))
            found.append((order.index(name), str(node), tris))
    return [t for _, _, t in sorted(found, key=lambda f: (f[0], f[1]))]


def find_receptacles(
    rom: Any, categories: Mapping[str, str], mn: Magnum
) -> tuple[HabitatReceptacle, ...]:
    """Every rigid object (handles sorted) with ``receptacle_mesh_*`` user subconfigs and a
    receptacle category (``categories[object_shortname(handle)]``; none: skipped), sorted by
    id. Mesh paths are relative to ``creation_attributes.file_directory``."""
    meshes: dict[str, list[np.ndarray]] = {}
    out = []
    for handle in sorted(rom.get_object_handles()):
        category = categories.get(object_shortname(handle))
        if not category:
            continue
        obj = rom.get_object_by_handle(handle)
        user = obj.user_attributes
        keys = sorted(k for k in user.get_subconfig_keys() if k.startswith(MESH_PREFIX))
        if not keys:
            continue
        world = mn.matrix(obj.visual_scene_nodes[1].absolute_transformation())
        folder = str(obj.creation_attributes.file_directory)
        surfaces = []
        for key in keys:
            sub = user.get_subconfig(key)
            name = str(sub.get("name")) if sub.has_value("name") else key
            path = os.path.join(folder, str(sub.get("mesh_filepath")))
            if path not in meshes:
                meshes[path] = load_mesh_triangles(path)
            for i, local in enumerate(meshes[path]):
                tris = mirror(transform(world, local))
                surfaces.append(_surface(f"{handle}|{name}.{i:04d}", tris))
        surfaces = [s for s in surfaces if s.area_m2 > 0]
        if not surfaces:
            continue
        corners = mirror(transform(mn.matrix(obj.transformation), box_corners(*mn.range(obj.aabb))))
        aabb = Aabb(_vec(corners.min(axis=0)), _vec(corners.max(axis=0)))
        out.append(HabitatReceptacle(handle, category, plan_hull(corners), aabb, tuple(surfaces)))
    return tuple(sorted(out, key=lambda r: r.id))


def _surface(name: str, triangles: np.ndarray) -> HabitatSurface:
    areas = triangle_areas(triangles)
    total = float(areas.sum())
    cy = triangles[:, :, 1].mean(axis=1)
    y = float((areas * cy).sum() / total) if total > 0 else float(cy.mean(initial=0.0))
    tris = np.ascontiguousarray(triangles, np.float64)
    tris.setflags(write=False)
    return HabitatSurface(name, tris, total, y)


def _vec(a: np.ndarray) -> tuple[float, float, float]:
    return (round(float(a[0]), 6), round(float(a[1]), 6), round(float(a[2]), 6))


# -- sampling (§4 "support-surface sample") --------------------------------------------------


def sample_surface_point(
    surfaces: Sequence[HabitatSurface], rng: np.random.Generator
) -> tuple[int, np.ndarray]:
    """(surface index, point): a surface by area, a triangle of it by area, a uniform point in
    the triangle (dataforge frame). Always four draws from ``rng``."""
    u_surface, u_triangle, r1, r2 = (float(v) for v in rng.random(4))
    k = _pick(np.array([s.area_m2 for s in surfaces], np.float64), u_surface)
    t = surfaces[k].triangles[_pick(surfaces[k].areas, u_triangle)]
    if r1 + r2 > 1:
        r1, r2 = 1 - r1, 1 - r2
    return k, t[0] + r1 * (t[1] - t[0]) + r2 * (t[2] - t[0])


def _pick(weights: np.ndarray, u: float) -> int:
    cum = np.cumsum(weights)
    i = int(np.searchsorted(cum, u * cum[-1], side="right"))
    return min(i, len(weights) - 1)


def yaw_of(m: np.ndarray) -> float:
    """dataforge yaw (degrees, [0, 360)) of a habitat rotation about +y, ``R_y(-yaw)`` (§1)."""
    theta = math.atan2(float(m[0, 2]), float(m[0, 0]))
    deg = round((-math.degrees(theta)) % 360.0, 6)
    return 0.0 if deg in (0.0, 360.0) else deg
