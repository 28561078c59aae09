"""Triangle meshes of shapes: parts to geometry, coloured by the asset's palette, placed in the
world by the object's pose.

:func:`shape_geometry` merges a shape's parts per element (the object itself under ``None``, each
sub-receptacle under its name) in the asset frame, with a colour per vertex; it is cached per
asset. :func:`object_meshes` places them at an object's position and rotation (AI2-THOR's
convention, :mod:`dataforge.world.boxes`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from dataforge.render.mesh import Mesh
from dataforge.render.primitives import (
    Geometry,
    box_geometry,
    ellipsoid_geometry,
    frustum_geometry,
    torus_geometry,
)
from dataforge.world.archetypes import shape_of
from dataforge.world.assets import AssetInfo
from dataforge.world.boxes import rotation_matrix
from dataforge.world.house import HouseObject
from dataforge.world.shapes import Part, Shape


@dataclass(frozen=True)
class ElementGeometry:
    """One element's merged parts in the asset frame."""

    vertices: np.ndarray  # N x 3
    normals: np.ndarray  # N x 3
    faces: np.ndarray  # M x 3
    colors: np.ndarray  # N x 3 uint8


def part_geometry(part: Part) -> Geometry:
    """``part``'s vertices, normals and faces in the asset frame."""
    sx, sy, sz = part.size
    if part.primitive == "box":
        v, n, f = box_geometry(np.array(part.size), part.open_top)
    elif part.primitive == "cylinder":
        segments = 8 if max(sx, sz) < 0.03 else 14
        v, n, f = frustum_geometry(sx / 2, sz / 2, sy, part.taper, segments, part.open_top)
    elif part.primitive == "sphere":
        small = max(part.size) < 0.05
        v, n, f = ellipsoid_geometry(np.array(part.size) / 2, 5 if small else 7, 8 if small else 12)
    else:
        v, n, f = torus_geometry((sx + sz) / 2, sy)
    m = part.matrix()
    return v @ m.T + np.asarray(part.center), n @ m.T, f


def shape_geometry(
    shape: Shape, palette: dict[str, tuple[int, int, int]]
) -> dict[str | None, ElementGeometry]:
    """The shape's parts merged per element, each vertex coloured by its part's role."""
    grouped: dict[str | None, list[tuple[Geometry, tuple[int, int, int]]]] = {}
    for part in shape.parts:
        color = part.color or palette.get(part.role) or palette["primary"]
        grouped.setdefault(part.element, []).append((part_geometry(part), color))
    out: dict[str | None, ElementGeometry] = {}
    for element, items in grouped.items():
        verts, norms, faces, colors = [], [], [], []
        k = 0
        for (v, n, f), color in items:
            verts.append(v)
            norms.append(n)
            faces.append(f + k)
            colors.append(np.tile(np.asarray(color, dtype=np.uint8), (len(v), 1)))
            k += len(v)
        out[element] = ElementGeometry(
            np.vstack(verts), np.vstack(norms), np.vstack(faces), np.vstack(colors)
        )
    return out


@functools.lru_cache(maxsize=4096)
def asset_geometry(info: AssetInfo) -> dict[str | None, ElementGeometry]:
    """:func:`shape_geometry` of the asset's shape and palette (cached per asset)."""
    from dataforge.world.materials import asset_palette

    return shape_geometry(shape_of(info), asset_palette(info))


def object_meshes(obj: HouseObject, info: AssetInfo) -> dict[str | None, Mesh]:
    """The object's meshes per element in world coordinates (ids are set by the caller)."""
    rot = rotation_matrix(obj.rotation)
    pos = np.asarray(obj.position, dtype=np.float64)
    out = {}
    for element, g in asset_geometry(info).items():
        out[element] = Mesh(g.vertices @ rot.T + pos, g.faces, g.normals @ rot.T, g.colors)
    return out
