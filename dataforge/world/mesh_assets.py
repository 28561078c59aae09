"""Real asset meshes from a folder (``--assets DIR`` / ``DATAFORGE_ASSETS``), used instead of
archetypes where present.

The folder holds one mesh per ProcTHOR ``assetId`` named ``<assetId>.glb``, ``.gltf`` or
``.obj`` (for instance exported from AI2-THOR's Unity project or from objathor), read with
``trimesh``. Each mesh is fitted to the asset's box from the asset database: scaled per axis so
its bounds equal the box, centred on the box centre, so sizes stay procthor's whatever the
mesh's units. Vertex colours come from the mesh (its texture or material colours, as trimesh
bakes them) or, lacking those, the asset's palette. A mesh has no named parts, so support
surfaces and sub-receptacles (drawers, shelves) still come from the archetype, and the mesh is
one instance in the masks. Assets without a file fall back to their archetypes; nothing is
downloaded.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from dataforge.errors import MalformedInputError, MissingDependencyError, UsageError
from dataforge.render.mesh import Mesh
from dataforge.world.assets import AssetInfo
from dataforge.world.boxes import rotation_matrix
from dataforge.world.house import HouseObject
from dataforge.world.shape_mesh import ElementGeometry

ENV = "DATAFORGE_ASSETS"
SUFFIXES = (".glb", ".gltf", ".obj")


class MeshLibrary:
    """The meshes of one folder, by asset id (see the module docstring)."""

    FILL_METHOD = "mesh volume / box volume (its convex hull's when the mesh is not watertight)"

    def __init__(self, directory: Path) -> None:
        directory = Path(directory)
        if not directory.is_dir():
            raise UsageError(f"--assets {directory}: not a folder")
        self.directory = directory
        self._paths: dict[str, Path] = {}
        for path in sorted(directory.iterdir()):
            if path.suffix.lower() in SUFFIXES and path.is_file():
                self._paths.setdefault(path.stem, path)
        self.used: set[str] = set()
        self.missing: set[str] = set()

    @classmethod
    def from_option(cls, directory: Path | None) -> MeshLibrary | None:
        """The library of ``directory``, else of ``$DATAFORGE_ASSETS``, else None."""
        chosen = directory or (Path(os.environ[ENV]) if os.environ.get(ENV) else None)
        return None if chosen is None else cls(chosen)

    def __len__(self) -> int:
        return len(self._paths)

    def path_of(self, asset_id: str) -> Path | None:
        return self._paths.get(asset_id)

    def geometry(self, info: AssetInfo) -> ElementGeometry | None:
        """The asset's mesh fitted to its box, or None when the folder has none."""
        path = self._paths.get(info.asset_id)
        if path is None:
            self.missing.add(info.asset_id)
            return None
        self.used.add(info.asset_id)
        return _fitted(path, info)

    def meshes(self, obj: HouseObject, info: AssetInfo) -> dict[str | None, Mesh] | None:
        g = self.geometry(info)
        if g is None:
            return None
        rot = rotation_matrix(obj.rotation)
        pos = np.asarray(obj.position, dtype=np.float64)
        return {None: Mesh(g.vertices @ rot.T + pos, g.faces, g.normals @ rot.T, g.colors)}

    def fill(self, info: AssetInfo) -> float:
        path = self._paths[info.asset_id]
        mesh = _load(path)
        lo, hi = mesh.bounds
        scale = np.asarray(info.size) / np.maximum(hi - lo, 1e-9)
        volume = mesh.volume if mesh.is_watertight else mesh.convex_hull.volume
        return float(abs(volume) * np.prod(scale) / np.prod(info.size))

    def report(self) -> str:
        """``N meshes used, M assets fell back to archetypes``."""
        return (
            f"{len(self.used)} asset meshes used from {self.directory}, "
            f"{len(self.missing)} assets fell back to archetypes"
        )


@functools.lru_cache(maxsize=256)
def _load(path: Path):  # -> trimesh.Trimesh
    try:
        import trimesh
    except ImportError as exc:
        raise MissingDependencyError("--assets needs trimesh: pip install trimesh") from exc
    try:
        mesh = trimesh.load(path, force="mesh", process=False)
    except Exception as exc:  # trimesh raises many kinds for a bad file
        raise MalformedInputError(f"{path}: not a readable mesh ({exc})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise MalformedInputError(f"{path}: holds no triangles")
    return mesh


@functools.lru_cache(maxsize=256)
def _fitted(path: Path, info: AssetInfo) -> ElementGeometry:
    from dataforge.world.materials import asset_palette

    mesh = _load(path)
    verts = np.asarray(mesh.vertices, dtype=np.float64)
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    size = np.asarray(info.size, dtype=np.float64)
    scale = size / np.maximum(hi - lo, 1e-9)
    fitted = (verts - (lo + hi) / 2.0) * scale
    normals = np.asarray(mesh.vertex_normals, dtype=np.float64) / scale
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    colors = None
    try:
        visual = mesh.visual
        if hasattr(visual, "to_color"):  # a texture: its colours baked per vertex
            visual = visual.to_color()
        if visual.kind is not None:
            colors = np.asarray(visual.vertex_colors)[:, :3].astype(np.uint8)
    except Exception:  # no usable visual: use the palette
        colors = None
    if colors is None or len(colors) != len(fitted):
        colors = np.tile(np.asarray(asset_palette(info)["primary"], np.uint8), (len(fitted), 1))
    faces = np.asarray(mesh.faces, dtype=np.int32)
    return ElementGeometry(fitted, normals, faces, colors)
