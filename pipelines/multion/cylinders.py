"""The 8 goal cylinders of MultiON: categories, ids, sizes, colours and meshes.

Facts from the reference challenge (saimwani/multion-challenge, saimwani/multiON):

- categories and ids (``category_to_task_category_id`` = ``category_to_mp3d_category_id`` of the
  released episodes; the order of ``default.phys_scene_config.json``'s object templates):
  red 0, green 1, blue 2, yellow 3, white 4, pink 5, black 6, cyan 7. The paper's "magenta" is
  ``cylinder_pink``.
- size: the paper's text says 0.75 m tall and 0.05 m in radius, but the shipped meshes
  (``objects/cylinder_<colour>.glb``) are 1.5 m long and 0.1 m in radius, and that is what the
  reference simulator renders and what dataforge renders and blocks navigation with. The
  reference simulator of the time read a ``.glb`` as a Z-up Matterport mesh (so the cylinder
  stands upright) and, with no centre of mass given, put the object's origin at its bounding
  box centre; the episode's goal position (a navigable point on the floor) is therefore the
  cylinder's *centre*: half of it is below the floor and 0.75 m stands above it.
- colours: the meshes' PBR base colours (linear), shown here in sRGB.

With ``--data-dir`` holding ``multion/objects/cylinder_<colour>.glb`` the meshes are read from
there with trimesh (and recorded with their sha256); without, dataforge builds the same
cylinders from these facts (32 sides, the meshes' radius, length and colours), so generation
works after ``pip`` alone.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np

from dataforge.errors import MalformedInputError, MissingDependencyError

# category -> task category id, as in the released episode files
CATEGORIES: dict[str, int] = {
    "cylinder_red": 0,
    "cylinder_green": 1,
    "cylinder_blue": 2,
    "cylinder_yellow": 3,
    "cylinder_white": 4,
    "cylinder_pink": 5,
    "cylinder_black": 6,
    "cylinder_cyan": 7,
}
NAMES = tuple(CATEGORIES)  # index = task category id
OBJECTS_DIR = "multion/objects"  # under --data-dir, as in ../shared/data
# Base colours of the shipped meshes (glTF baseColorFactor, linear RGB)
LINEAR_COLOURS: dict[str, tuple[float, float, float]] = {
    "cylinder_red": (1.0, 0.0, 0.0017027),
    "cylinder_green": (0.0, 0.1896552, 0.0),
    "cylinder_blue": (0.0018235, 0.0037111, 0.5287831),
    "cylinder_yellow": (1.0, 0.9310345, 0.0),
    "cylinder_white": (1.0, 1.0, 1.0),
    "cylinder_pink": (0.9690147, 0.0001318, 1.0),
    "cylinder_black": (0.0, 0.0, 0.0),
    "cylinder_cyan": (0.0, 1.0, 1.0),
}
RADIUS = 0.1  # m, the meshes'
LENGTH = 1.5  # m, the meshes'
SIDES = 32


def srgb(linear: float) -> int:
    """A linear colour channel (0..1) as an sRGB byte."""
    c = min(max(float(linear), 0.0), 1.0)
    s = 12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055
    return round(255 * s)


@dataclass(frozen=True)
class CylinderMesh:
    """One goal object's geometry, centred on its bounding box, axis along y (metres), and its
    display colour (sRGB)."""

    category: str
    vertices: np.ndarray
    faces: np.ndarray
    color: tuple[int, int, int]
    source: str  # "built-in" or the glb's file name

    @property
    def radius(self) -> float:
        return float(np.max(np.hypot(self.vertices[:, 0], self.vertices[:, 2])))

    @property
    def height(self) -> float:
        return float(np.ptp(self.vertices[:, 1]))


def built_in(category: str) -> CylinderMesh:
    """The cylinder of ``category`` from the recorded facts (no file read)."""
    a = np.linspace(0.0, 2 * math.pi, SIDES, endpoint=False)
    ring = np.column_stack([RADIUS * np.cos(a), np.zeros(SIDES), RADIUS * np.sin(a)])
    half = np.array([0.0, LENGTH / 2, 0.0])
    bottom, top = ring - half, ring + half
    centres = np.array([[0.0, -LENGTH / 2, 0.0], [0.0, LENGTH / 2, 0.0]])
    vertices = np.vstack([bottom, top, centres])
    faces = []
    for k in range(SIDES):
        n = (k + 1) % SIDES
        faces += [[k, n, SIDES + k], [n, SIDES + n, SIDES + k]]
        faces += [[2 * SIDES, n, k], [2 * SIDES + 1, SIDES + k, SIDES + n]]
    color = cast(tuple[int, int, int], tuple(srgb(c) for c in LINEAR_COLOURS[category]))
    return CylinderMesh(category, vertices, np.array(faces, np.int64), color, "built-in")


def load_glb(path: Path, category: str) -> CylinderMesh:
    """A goal object's ``.glb`` read with trimesh as the reference simulator placed it: the
    mesh's own z axis up (a Z-up mesh, as habitat-sim then read every ``.glb``), centred on its
    bounding box; colour: the material's base colour."""
    try:
        import trimesh
    except ImportError:
        raise MissingDependencyError(
            "reading the goal cylinders' .glb needs trimesh: pip install 'dataforge[procthor]'"
        ) from None
    try:
        scene = cast(trimesh.Scene, trimesh.load(str(path), force="scene"))
        geometry = cast(trimesh.Trimesh, scene.to_geometry())
    except Exception as exc:  # trimesh raises many kinds for a bad file
        raise MalformedInputError(f"{path}: not a readable glb ({exc})") from None
    v = np.asarray(geometry.vertices, dtype=np.float64)
    if len(v) == 0:
        raise MalformedInputError(f"{path}: the mesh has no vertices")
    # trimesh applies glTF's y-up node transforms; the file's Z-up frame is x, -z, y of it
    v = np.column_stack([v[:, 0], v[:, 2], -v[:, 1]])
    v -= (v.min(axis=0) + v.max(axis=0)) / 2
    color = _base_colour(path)
    if color is None:
        color = cast(tuple[int, int, int], tuple(srgb(c) for c in LINEAR_COLOURS[category]))
    return CylinderMesh(category, v, np.asarray(geometry.faces, np.int64), color, path.name)


def _base_colour(path: Path) -> tuple[int, int, int] | None:
    """The first material's glTF ``baseColorFactor`` read from the glb's JSON chunk (trimesh
    rounds it to bytes), in sRGB; None when the file names none."""
    data = path.read_bytes()
    try:
        (length,) = struct.unpack("<I", data[12:16])
        doc = json.loads(data[20 : 20 + length])
        factor = doc["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"]
    except (struct.error, ValueError, KeyError, IndexError, TypeError):
        return None
    return tuple(srgb(c) for c in factor[:3])  # type: ignore[return-value]


def cylinders(objects_dir: Path | None) -> dict[str, CylinderMesh]:
    """All 8 goal objects: read from ``objects_dir`` (``cylinder_<colour>.glb``) or built in."""
    if objects_dir is None:
        return {c: built_in(c) for c in NAMES}
    return {c: load_glb(Path(objects_dir) / f"{c}.glb", c) for c in NAMES}
