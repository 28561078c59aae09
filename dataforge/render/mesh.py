"""Triangle meshes, the primitives a house is built from, and a scene that merges them.

All coordinates are world metres in the left-handed, y-up frame of :mod:`dataforge.render`.
Every mesh carries one instance id (>= 1; 0 means "nothing" in rendered masks) and one semantic
class id (>= 0; 0 is "unlabelled", like the background).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TypedDict, cast

import numpy as np
from numpy.typing import ArrayLike

from dataforge.errors import UsageError

_INT32_MAX = 2**31 - 1
DEFAULT_COLOR = (180, 180, 180)


@dataclass(eq=False)
class Mesh:
    """Triangles ``faces`` (M x 3 vertex indices) over ``vertices`` (N x 3, metres).

    ``normals`` (N x 3) are optional per-vertex normals for smooth shading; without them each
    triangle is shaded with its face normal. ``color`` is one RGB (3,) or one per vertex (N x 3).
    Winding does not matter: the renderer draws both sides.
    """

    vertices: np.ndarray
    faces: np.ndarray
    normals: np.ndarray | None = None
    color: ArrayLike = DEFAULT_COLOR
    instance_id: int = 1
    semantic_id: int = 0

    def __post_init__(self) -> None:
        self.vertices = np.ascontiguousarray(self.vertices, dtype=np.float32).reshape(-1, 3)
        self.faces = np.ascontiguousarray(self.faces, dtype=np.int32).reshape(-1, 3)
        n = len(self.vertices)
        if len(self.faces) and (self.faces.min() < 0 or self.faces.max() >= n):
            raise UsageError(f"mesh faces index vertices outside 0..{n - 1}")
        if self.normals is not None:
            self.normals = np.ascontiguousarray(self.normals, dtype=np.float32).reshape(-1, 3)
            if len(self.normals) != n:
                raise UsageError(f"mesh has {n} vertices but {len(self.normals)} normals")
        color = np.asarray(self.color)
        if color.shape not in ((3,), (n, 3)) or np.any(color < 0) or np.any(color > 255):
            raise UsageError(f"mesh color must be RGB 0..255, (3,) or ({n}, 3); got {color.shape}")
        self.color = color.astype(np.uint8)
        if not 1 <= int(self.instance_id) <= _INT32_MAX:
            raise UsageError(f"instance_id must be in 1..2^31-1 (0 is nothing): {self.instance_id}")
        if not 0 <= int(self.semantic_id) <= _INT32_MAX:
            raise UsageError(f"semantic_id must be in 0..2^31-1, got {self.semantic_id}")
        self.instance_id, self.semantic_id = int(self.instance_id), int(self.semantic_id)

    @property
    def triangle_count(self) -> int:
        """Number of triangles."""
        return len(self.faces)

    def triangles(self) -> np.ndarray:
        """The triangles' corners, M x 3 x 3."""
        return self.vertices[self.faces]

    def face_normals(self) -> np.ndarray:
        """Unit face normals (M x 3); zero for degenerate triangles."""
        tri = self.triangles().astype(np.float64)
        n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        length = np.linalg.norm(n, axis=1, keepdims=True)
        return np.divide(n, length, out=np.zeros_like(n), where=length > 0).astype(np.float32)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounds (min xyz, max xyz)."""
        return self.vertices.min(axis=0), self.vertices.max(axis=0)


class _Ids(TypedDict):
    color: ArrayLike
    instance_id: int
    semantic_id: int


def _ids(color: ArrayLike, instance_id: int, semantic_id: int) -> _Ids:
    return {"color": color, "instance_id": instance_id, "semantic_id": semantic_id}


def yaw_rotate_xz(local_xz: ArrayLike, yaw_deg: float) -> np.ndarray:
    """Rotate local (dx, dz) offsets by an AI2-THOR yaw (clockwise seen from above, +y up).

    ``(dx, dz) -> (dx cos + dz sin, -dx sin + dz cos)``: local +z turns to where a camera with the
    same yaw looks (yaw 90: +x).
    """
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    xz = np.asarray(local_xz, dtype=np.float64).reshape(-1, 2)
    return np.column_stack([xz[:, 0] * c + xz[:, 1] * s, -xz[:, 0] * s + xz[:, 1] * c])


def box_corners(center: ArrayLike, size: ArrayLike, yaw_deg: float = 0.0) -> np.ndarray:
    """The 8 corners (8 x 3) of a box of ``size`` (x, y, z) at ``center``, turned by ``yaw_deg``.

    Corner ``i`` has local signs (x, y, z) = bits (4, 2, 1) of ``i`` (set bit: + half size).
    """
    c = np.asarray(center, dtype=np.float64).reshape(3)
    half = np.asarray(size, dtype=np.float64).reshape(3) / 2.0
    signs = np.array([[(i >> 2) & 1, (i >> 1) & 1, i & 1] for i in range(8)]) * 2.0 - 1.0
    local = signs * half
    xz = yaw_rotate_xz(local[:, [0, 2]], yaw_deg)
    return np.column_stack([xz[:, 0], local[:, 1], xz[:, 1]]) + c


# Each face of the box as 4 corner indices (bits x=4, y=2, z=1) in cyclic order.
_BOX_QUADS = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3))


def _quads_to_faces(quads: Iterable[Sequence[int]]) -> np.ndarray:
    return np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))], dtype=np.int32)


def box_mesh(
    center: ArrayLike,
    size: ArrayLike,
    yaw_deg: float = 0.0,
    *,
    color: ArrayLike = DEFAULT_COLOR,
    instance_id: int = 1,
    semantic_id: int = 0,
) -> Mesh:
    """A box (12 triangles) of ``size`` (x, y, z) centred at ``center``, turned by ``yaw_deg``."""
    if np.any(np.asarray(size, dtype=np.float64) <= 0):
        raise UsageError(f"box size must be positive, got {size!s}")
    verts = box_corners(center, size, yaw_deg)
    return Mesh(verts, _quads_to_faces(_BOX_QUADS), **_ids(color, instance_id, semantic_id))


def box_mesh_from_corners(
    corners: ArrayLike,
    *,
    color: ArrayLike = DEFAULT_COLOR,
    instance_id: int = 1,
    semantic_id: int = 0,
) -> Mesh:
    """A box from its 8 corners in :func:`box_corners` order (bits x=4, y=2, z=1): for boxes
    turned about more than the vertical axis."""
    verts = np.asarray(corners, dtype=np.float64).reshape(8, 3)
    return Mesh(verts, _quads_to_faces(_BOX_QUADS), **_ids(color, instance_id, semantic_id))


def cylinder_mesh(
    center_bottom: ArrayLike,
    radius: float,
    height: float,
    segments: int = 32,
    *,
    color: ArrayLike = DEFAULT_COLOR,
    instance_id: int = 1,
    semantic_id: int = 0,
) -> Mesh:
    """An upright closed cylinder (a ``segments``-sided prism) standing on ``center_bottom``.

    The side has smooth radial normals; the caps are flat.
    """
    if radius <= 0 or height <= 0 or segments < 3:
        raise UsageError("cylinder needs radius > 0, height > 0 and at least 3 segments")
    base = np.asarray(center_bottom, dtype=np.float64).reshape(3)
    ang = 2.0 * np.pi * np.arange(segments) / segments
    ring = np.column_stack([np.sin(ang), np.zeros(segments), np.cos(ang)])
    up = np.array([0.0, height, 0.0])
    n = segments
    verts = np.concatenate(
        [
            base + radius * ring,  # side, bottom: 0..n-1
            base + radius * ring + up,  # side, top: n..2n-1
            base + radius * ring,  # bottom cap ring: 2n..3n-1
            base + radius * ring + up,  # top cap ring: 3n..4n-1
            [base, base + up],  # cap centres: 4n, 4n+1
        ]
    )
    normals = np.concatenate([ring, ring, np.tile([0.0, -1.0, 0.0], (n, 1))])
    normals = np.concatenate([normals, np.tile([0.0, 1.0, 0.0], (n, 1)), [[0, -1, 0], [0, 1, 0]]])
    i = np.arange(n)
    j = (i + 1) % n
    faces = np.concatenate(
        [
            np.column_stack([i, j, n + j]),
            np.column_stack([i, n + j, n + i]),
            np.column_stack([np.full(n, 4 * n), 2 * n + j, 2 * n + i]),
            np.column_stack([np.full(n, 4 * n + 1), 3 * n + i, 3 * n + j]),
        ]
    )
    return Mesh(verts, faces, normals, **_ids(color, instance_id, semantic_id))


def _cross2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _clean_polygon(polygon_xz: ArrayLike, eps: float) -> np.ndarray:
    """Drop a closing repeat, repeated points and collinear vertices; return counter-clockwise."""
    pts = np.asarray(polygon_xz, dtype=np.float64).reshape(-1, 2)
    changed = True
    while changed and len(pts) >= 3:
        prev, nxt = np.roll(pts, 1, axis=0), np.roll(pts, -1, axis=0)
        dup = np.linalg.norm(pts - prev, axis=1) <= eps
        flat = np.abs(_cross2(pts - prev, nxt - pts)) <= eps * eps
        drop = dup | flat
        if drop.all():
            break
        changed = bool(drop.any())
        if changed:  # one at a time keeps neighbours of a dropped vertex honest
            pts = np.delete(pts, int(np.argmax(drop)), axis=0)
    if len(pts) < 3:
        raise UsageError("a polygon needs at least 3 distinct, non-collinear points")
    area2 = _cross2(pts, np.roll(pts, -1, axis=0)).sum()
    if abs(area2) <= eps:
        raise UsageError("a polygon needs a non-zero area")
    return pts if area2 > 0 else pts[::-1].copy()


def triangulate_polygon(polygon_xz: ArrayLike, eps: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Ear-clip a simple (possibly concave) polygon without holes.

    Returns the cleaned counter-clockwise points (K x 2) and triangles (K - 2 at most, x 3) that
    index them. Raises :class:`UsageError` for a self-intersecting polygon.
    """
    pts = _clean_polygon(polygon_xz, eps)
    idx = list(range(len(pts)))
    tris: list[tuple[int, int, int]] = []
    while len(idx) > 3:
        m = len(idx)
        ear = None
        for k in range(m):
            i0, i1, i2 = idx[k - 1], idx[k], idx[(k + 1) % m]
            a, b, c = pts[i0], pts[i1], pts[i2]
            if _cross2(b - a, c - b) <= eps * eps:
                continue  # reflex or flat corner
            others = pts[[i for i in idx if i not in (i0, i1, i2)]]
            others = others[
                ~(np.all(others == a, axis=1) | np.all(others == b, axis=1))
                & ~np.all(others == c, axis=1)
            ]
            inside = (
                (_cross2(b - a, others - a) >= -eps)
                & (_cross2(c - b, others - b) >= -eps)
                & (_cross2(a - c, others - c) >= -eps)
            )
            if not inside.any():
                ear = k
                break
        if ear is None:  # only flat corners left to remove, or the polygon crosses itself
            flat = [
                k
                for k in range(m)
                if abs(_cross2(pts[idx[k]] - pts[idx[k - 1]], pts[idx[(k + 1) % m]] - pts[idx[k]]))
                <= eps * eps
            ]
            if not flat:
                raise UsageError("cannot triangulate a self-intersecting polygon")
            idx.pop(flat[0])
            continue
        tris.append((idx[ear - 1], idx[ear], idx[(ear + 1) % m]))
        idx.pop(ear)
    tris.append((idx[0], idx[1], idx[2]))
    return pts, np.asarray(tris, dtype=np.int32)


def polygon_slab(
    polygon_xz: ArrayLike,
    y: float,
    thickness: float = 0.0,
    *,
    color: ArrayLike = DEFAULT_COLOR,
    instance_id: int = 1,
    semantic_id: int = 0,
) -> Mesh:
    """A horizontal slab over a simple polygon of (x, z) points: a floor or a ceiling.

    The top face lies at height ``y`` and the bottom face at ``y - thickness``; with thickness 0
    (the default) the slab is a single flat face (both sides are drawn). For a ceiling with
    thickness, pass the ceiling height plus the thickness as ``y``.
    """
    if thickness < 0:
        raise UsageError(f"slab thickness must be >= 0, got {thickness}")
    pts, tris = triangulate_polygon(polygon_xz)
    k = len(pts)
    top = np.column_stack([pts[:, 0], np.full(k, y), pts[:, 1]])
    if thickness == 0:
        return Mesh(top, tris, **_ids(color, instance_id, semantic_id))
    bottom = top - [0.0, thickness, 0.0]
    i = np.arange(k)
    j = (i + 1) % k
    sides = np.concatenate([np.column_stack([i, j, k + j]), np.column_stack([i, k + j, k + i])])
    faces = np.concatenate([tris, tris[:, ::-1] + k, sides])
    return Mesh(np.concatenate([top, bottom]), faces, **_ids(color, instance_id, semantic_id))


def wall_mesh(
    p0_xz: ArrayLike,
    p1_xz: ArrayLike,
    y0: float,
    y1: float,
    holes: Iterable[tuple[float, float, float, float]] = (),
    *,
    color: ArrayLike = DEFAULT_COLOR,
    instance_id: int = 1,
    semantic_id: int = 0,
) -> Mesh:
    """A vertical zero-thickness wall from ``p0_xz`` to ``p1_xz`` between heights ``y0`` and ``y1``.

    ``holes`` are rectangular openings (doors, windows) ``(s0, s1, h0, h1)``: from ``s0`` to ``s1``
    metres along the wall measured from ``p0``, and from ``h0`` to ``h1`` metres above ``y0``
    (the wall's bottom), as in ProcTHOR's hole polygons. Holes are clipped to the wall.
    """
    p0 = np.asarray(p0_xz, dtype=np.float64).reshape(2)
    p1 = np.asarray(p1_xz, dtype=np.float64).reshape(2)
    length, tall = float(np.linalg.norm(p1 - p0)), float(y1 - y0)
    if length <= 0 or tall <= 0:
        raise UsageError("a wall needs two distinct end points and y1 > y0")
    rects = [tuple(float(x) for x in h) for h in holes]
    for s0, s1, h0, h1 in rects:
        if s1 <= s0 or h1 <= h0:
            raise UsageError(f"a wall hole needs s0 < s1 and h0 < h1, got {(s0, s1, h0, h1)}")
    # Cut the wall into a grid at every hole edge; keep the cells that no hole covers.
    s_cuts = np.unique(np.clip([0.0, length, *(v for r in rects for v in r[:2])], 0.0, length))
    h_cuts = np.unique(np.clip([0.0, tall, *(v for r in rects for v in r[2:])], 0.0, tall))
    quads: list[tuple[float, float, float, float]] = []
    for sa, sb in pairwise(s_cuts):
        for ha, hb in pairwise(h_cuts):
            sm, hm = (sa + sb) / 2.0, (ha + hb) / 2.0
            if not any(s0 < sm < s1 and h0 < hm < h1 for s0, s1, h0, h1 in rects):
                quads.append((sa, sb, ha, hb))
    if not quads:
        raise UsageError("wall holes cover the whole wall")
    direction = (p1 - p0) / length
    verts: list[list[float]] = []
    for sa, sb, ha, hb in quads:
        for s, h in ((sa, ha), (sb, ha), (sb, hb), (sa, hb)):
            x, z = p0 + s * direction
            verts.append([x, y0 + h, z])
    faces = _quads_to_faces(range(4 * q, 4 * q + 4) for q in range(len(quads)))
    return Mesh(np.array(verts), faces, **_ids(color, instance_id, semantic_id))


class Scene:
    """The meshes of one scene; the renderer uploads their merged buffers once.

    ``corners``: a cache of each mesh's corner buffers (by ``id(mesh)``, the mesh kept with
    them) that scenes sharing unchanged meshes share; such meshes must not change in place."""

    def __init__(
        self,
        meshes: Iterable[Mesh] = (),
        corners: dict[int, tuple[Mesh, tuple[np.ndarray, ...]]] | None = None,
    ) -> None:
        self.meshes: list[Mesh] = list(meshes)
        self.corners = corners

    def add(self, mesh: Mesh) -> None:
        """Append one mesh."""
        self.meshes.append(mesh)

    @property
    def triangle_count(self) -> int:
        """Total triangles over all meshes."""
        return sum(m.triangle_count for m in self.meshes)

    def instance_to_semantic(self) -> dict[int, int]:
        """Each instance id's semantic id (meshes sharing an instance must share its class)."""
        out: dict[int, int] = {}
        for m in self.meshes:
            if out.setdefault(m.instance_id, m.semantic_id) != m.semantic_id:
                raise UsageError(f"instance {m.instance_id} has two semantic ids")
        return out

    def meshes_of(self, instance_id: int) -> list[Mesh]:
        """The meshes that make up one instance."""
        return [m for m in self.meshes if m.instance_id == instance_id]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounds of all meshes (min xyz, max xyz)."""
        if not self.meshes:
            raise UsageError("an empty scene has no bounds")
        lo, hi = zip(*(m.bounds() for m in self.meshes), strict=True)
        return np.min(lo, axis=0), np.max(hi, axis=0)

    def buffers(self) -> dict[str, np.ndarray]:
        """Merged per-corner buffers, three rows per triangle (a triangle soup).

        ``positions`` and ``normals`` (3M x 3 float32), ``colors`` (3M x 3 float32 in 0..1),
        ``instance`` and ``semantic`` (3M int32).
        """
        self.instance_to_semantic()  # refuse conflicting ids before uploading anything
        parts: dict[str, list[np.ndarray]] = {
            k: [] for k in ("positions", "normals", "colors", "instance", "semantic")
        }
        for m in self.meshes:
            cached = None if self.corners is None else self.corners.get(id(m))
            if cached is None or cached[0] is not m:
                cached = (m, _corner_buffers(m))
                if self.corners is not None:
                    self.corners[id(m)] = cached
            positions, normals, rgb = cached[1]
            parts["positions"].append(positions)
            parts["normals"].append(normals)
            parts["colors"].append(rgb)
            parts["instance"].append(np.full(len(positions), m.instance_id, np.int32))
            parts["semantic"].append(np.full(len(positions), m.semantic_id, np.int32))
        out: dict[str, np.ndarray] = {}
        for key, chunks in parts.items():
            dtype = np.int32 if key in ("instance", "semantic") else np.float32
            empty = np.zeros((0,) if dtype is np.int32 else (0, 3), dtype)
            out[key] = np.ascontiguousarray(np.concatenate(chunks), dtype) if chunks else empty
        return out


def _corner_buffers(m: Mesh) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A mesh's positions, normals and colours (0..1) per triangle corner."""
    corners = m.faces.reshape(-1)
    positions = m.vertices[corners]
    if m.normals is not None:
        normals = m.normals[corners]
    else:
        normals = np.repeat(m.face_normals(), 3, axis=0)
    color = cast(np.ndarray, m.color).astype(np.float32) / 255.0  # uint8 (__post_init__)
    rgb = color[corners] if color.ndim == 2 else np.tile(color, (len(corners), 1))
    return positions, normals, rgb
