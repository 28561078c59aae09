"""Triangle meshes of shapes: parts to geometry, coloured by the asset's palette, placed in the
world by the object's pose.

:func:`shape_geometry` merges a shape's parts per element (the object itself under ``None``, each
sub-receptacle under its name) in the asset frame, with a colour per vertex; it is cached per
asset. :func:`object_meshes` places them at an object's position and rotation (AI2-THOR's
convention, :mod:`dataforge.world.boxes`).

An open element (``HouseObject.open_elements``; the object's own door under ``OWN_DOOR``: a
door that placement only opened, ``openness`` alone, stays drawn shut) is drawn open by its
shape's :class:`~dataforge.world.shapes.Motion`: a drawer's front slides out ``travel`` (0.7 of
its depth) times the openness with a tray (bottom, low sides, back) under the front, a door
leaf swings 90 degrees times the openness about its hinge, and the solid body behind the
opening is hollowed out where the element's inside surfaces are (the cavity: their plan
rectangle carried out to the element's front, from their lowest height to their highest
clearance), so that what rests inside can be seen. What rests in a drawer is drawn where the
drawer took it (:func:`drawn_offset`). A closed object's meshes are the cached ones.
"""

from __future__ import annotations

import dataclasses
import functools
import math
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
from dataforge.world.boxes import OrientedBox, rotation_matrix
from dataforge.world.house import HouseObject
from dataforge.world.shapes import Motion, Part, Shape

TRAY_WALL_M = 0.01
TRAY_LIP_M = 0.03  # a tray's sides and back rise this far: what it holds shows over them
CUT_SHARE = 0.5  # a solid box holding more than this share of a cavity is hollowed out


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


def part_color(part: Part, palette: dict[str, tuple[int, int, int]]) -> tuple[int, int, int]:
    """The sRGB ``part`` is drawn with: its own ``color``, else its role's palette colour, else
    the primary."""
    return part.color or palette.get(part.role) or palette["primary"]


def shape_geometry(
    shape: Shape, palette: dict[str, tuple[int, int, int]]
) -> dict[str | None, ElementGeometry]:
    """The shape's parts merged per element, each vertex coloured by its part's role."""
    grouped: dict[str | None, list[tuple[Geometry, tuple[int, int, int]]]] = {}
    for part in shape.parts:
        color = part_color(part, palette)
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
    """The object's meshes per element in world coordinates (ids are set by the caller), open
    elements drawn open (see the module docstring)."""
    rot = rotation_matrix(obj.rotation)
    pos = np.asarray(obj.position, dtype=np.float64)
    opened = open_motions(obj, info)
    if opened:
        from dataforge.world.materials import asset_palette

        geometry = shape_geometry(opened_shape(shape_of(info), opened), asset_palette(info))
    else:
        geometry = asset_geometry(info)
    out = {}
    for element, g in geometry.items():
        out[element] = Mesh(g.vertices @ rot.T + pos, g.faces, g.normals @ rot.T, g.colors)
    return out


def open_motions(obj: HouseObject, info: AssetInfo) -> dict[str | None, tuple[Motion, float]]:
    """The object's open elements (None: its own door) that its shape can draw open, with
    their motion and openness."""
    out: dict[str | None, tuple[Motion, float]] = {}
    for element, motion in shape_of(info).motions.items():
        openness = obj.drawn_openness(element)
        if openness > 0:
            out[element] = (motion, min(openness, 1.0))
    return out


def opened_shape(shape: Shape, opened: dict[str | None, tuple[Motion, float]]) -> Shape:
    """``shape`` with the ``opened`` elements drawn open: moving parts slid or swung, a tray
    under a drawer's front, the cavity behind each opening cut out of the solid boxes."""
    parts = list(shape.parts)
    for element, (motion, openness) in opened.items():
        lo, hi = cavity(shape, element, motion)
        parts = [q for p in parts for q in _cut(p, element, lo, hi)]
        if motion.kind == "slide":
            parts += _tray(element, motion, lo, hi)
        parts = [_moved(p, motion, openness) if _moving(p, element) else p for p in parts]
    return dataclasses.replace(shape, parts=tuple(parts))


def cavity(shape: Shape, element: str | None, motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) corners, in the asset frame (y about the box centre), of the room behind an
    element's opening: its inside surfaces' rectangles carried out to its front (the outer face
    of its moving parts: a counter's side arm faces x inside the box), from their lowest
    height (less a tray's bottom) to their highest clearance."""
    inside = [s for s in shape.surfaces if s.element == element and s.needs_open]
    fronts = [p.corners() for p in shape.parts if _moving(p, element)]
    h = shape.size[1]
    if not inside or not fronts:
        return np.zeros(3), np.zeros(3)
    x0 = min(s.rect[0] for s in inside)
    z0 = min(s.rect[1] for s in inside)
    x1 = max(s.rect[2] for s in inside)
    z1 = max(s.rect[3] for s in inside)
    corners = np.vstack(fronts)
    nx, nz = motion.normal
    x0, x1 = (
        (float(corners[:, 0].min()) if nx < 0 else x0),
        (float(corners[:, 0].max()) if nx > 0 else x1),
    )
    z0, z1 = (
        (float(corners[:, 2].min()) if nz < 0 else z0),
        (float(corners[:, 2].max()) if nz > 0 else z1),
    )
    y0 = min(s.height for s in inside) - (TRAY_WALL_M * 1.2 if motion.kind == "slide" else 0.0)
    y1 = max(s.height + (s.clearance or 0.0) for s in inside)
    return np.array([x0, y0 - h / 2, z0]), np.array([x1, y1 - h / 2, z1])


def _moving(part: Part, element: str | None) -> bool:
    return part.moves and part.element == element


def _moved(part: Part, motion: Motion, openness: float) -> Part:
    c = np.asarray(part.center, dtype=np.float64)
    if motion.kind == "slide":
        step = motion.travel * openness
        c = c + np.array([motion.normal[0] * step, 0.0, motion.normal[1] * step])
        return dataclasses.replace(part, center=_vec(c))
    phi = math.radians(90.0 * openness * motion.swing)
    px, pz = motion.pivot
    dx, dz = c[0] - px, c[2] - pz
    c[0] = px + dx * math.cos(phi) - dz * math.sin(phi)
    c[2] = pz + dx * math.sin(phi) + dz * math.cos(phi)
    rx, ry, rz = part.rotation
    # rotation_matrix's yaw turns x toward -z: a turn by phi from x toward z is a yaw of -phi
    return dataclasses.replace(part, center=_vec(c), rotation=(rx, ry - math.degrees(phi), rz))


def _cut(part: Part, element: str | None, lo: np.ndarray, hi: np.ndarray) -> list[Part]:
    """``part`` less the cavity ``lo``..``hi`` when it is an unturned solid box holding most
    of it (a carcass, an appliance's body), as up to six boxes; else ``part`` itself."""
    if part.primitive != "box" or part.rotation != (0.0, 0.0, 0.0) or _moving(part, element):
        return [part]
    c, half = np.asarray(part.center), np.asarray(part.size) / 2.0
    p0, p1 = c - half, c + half
    c0, c1 = np.maximum(lo, p0), np.minimum(hi, p1)
    volume = float(np.prod(np.maximum(hi - lo, 0.0)))
    if volume <= 0 or float(np.prod(np.maximum(c1 - c0, 0.0))) <= CUT_SHARE * volume:
        return [part]
    pieces = [((a, p0[1], p0[2]), (b, p1[1], p1[2])) for a, b in ((p0[0], c0[0]), (c1[0], p1[0]))]
    pieces += [((c0[0], a, p0[2]), (c1[0], b, p1[2])) for a, b in ((p0[1], c0[1]), (c1[1], p1[1]))]
    pieces += [((c0[0], c0[1], a), (c1[0], c1[1], b)) for a, b in ((p0[2], c0[2]), (c1[2], p1[2]))]
    out = []
    for p_lo, p_hi in pieces:
        size = np.asarray(p_hi) - np.asarray(p_lo)
        if np.all(size > 1e-5):
            centre = (np.asarray(p_lo) + np.asarray(p_hi)) / 2.0
            out.append(dataclasses.replace(part, center=_vec(centre), size=_vec(size)))
    return out


def _tray(element: str | None, motion: Motion, lo: np.ndarray, hi: np.ndarray) -> list[Part]:
    """A drawer's tray in its cavity (closed position): a bottom, two sides and a back."""
    t = TRAY_WALL_M
    y0 = lo[1]
    wall_top = y0 + t + min(TRAY_LIP_M, 0.5 * (hi[1] - lo[1]))
    boxes = [((lo[0], y0, lo[2]), (hi[0], y0 + t, hi[2]))]
    nx, nz = motion.normal
    if nx == 0.0:  # faces +-z: sides at the x ends, the back at the far z end
        boxes += [
            ((lo[0], y0, lo[2]), (lo[0] + t, wall_top, hi[2])),
            ((hi[0] - t, y0, lo[2]), (hi[0], wall_top, hi[2])),
        ]
        back = lo[2] if nz > 0 else hi[2] - t
        boxes.append(((lo[0], y0, back), (hi[0], wall_top, back + t)))
    else:
        boxes += [
            ((lo[0], y0, lo[2]), (hi[0], wall_top, lo[2] + t)),
            ((lo[0], y0, hi[2] - t), (hi[0], wall_top, hi[2])),
        ]
        back = lo[0] if nx > 0 else hi[0] - t
        boxes.append(((back, y0, lo[2]), (back + t, wall_top, hi[2])))
    out = []
    for b_lo, b_hi in boxes:
        a, b = np.asarray(b_lo), np.asarray(b_hi)
        out.append(
            Part("box", _vec((a + b) / 2), _vec(b - a), "secondary", element=element, moves=True)
        )
    return out


def drawn_offset(child: OrientedBox, parent: HouseObject, info: AssetInfo) -> np.ndarray:
    """Where an object resting in ``parent``'s open drawer is drawn, relative to its pose: the
    drawer's travel in world coordinates (zero when it rests on nothing that slides open)."""
    from dataforge.world.surfaces import object_surfaces, surface_under

    opened = {e: m for e, m in open_motions(parent, info).items() if m[0].kind == "slide"}
    if not opened:
        return np.zeros(3)
    under = surface_under(child, object_surfaces(parent, info))
    if under is None or under.element not in opened:
        return np.zeros(3)
    motion, openness = opened[under.element]
    step = motion.travel * openness
    local = np.array([motion.normal[0] * step, 0.0, motion.normal[1] * step])
    return rotation_matrix(parent.rotation) @ local


def _vec(a: np.ndarray) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in a)
    return (x, y, z)


def opening_bearing(obj: HouseObject, info: AssetInfo, element: str | None) -> float | None:
    """The plan bearing (degrees, 0 = +z, 90 = +x, as viewpoint azimuths) of the direction
    ``element``'s opening (None: the object's door) faces in the world; None when its shape
    has no motion for it."""
    motion = shape_of(info).motions.get(element)
    if motion is None:
        return None
    nx, nz = motion.normal
    world = rotation_matrix(obj.rotation) @ np.array([nx, 0.0, nz])
    return math.degrees(math.atan2(world[0], world[2])) % 360.0
