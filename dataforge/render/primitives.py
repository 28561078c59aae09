"""Geometry of primitives centred at the origin, axis along y: vertices, normals, faces.

Each function returns ``(vertices (N x 3), normals (N x 3), faces (M x 3))`` as float64 / int32
arrays; normals are unit vectors (flat per face for boxes and caps, smooth on curved sides).
Segment counts are kept low on purpose: a house has hundreds of objects and the CPU rasteriser's
cost grows with the triangle count.
"""

from __future__ import annotations

import numpy as np

Geometry = tuple[np.ndarray, np.ndarray, np.ndarray]

# Faces of a box: outward normal and 4 corners (signs) in cyclic order.
_BOX_FACES = (
    ((1, 0, 0), ((1, -1, -1), (1, 1, -1), (1, 1, 1), (1, -1, 1))),
    ((-1, 0, 0), ((-1, -1, -1), (-1, -1, 1), (-1, 1, 1), (-1, 1, -1))),
    ((0, 1, 0), ((-1, 1, -1), (-1, 1, 1), (1, 1, 1), (1, 1, -1))),
    ((0, -1, 0), ((-1, -1, -1), (1, -1, -1), (1, -1, 1), (-1, -1, 1))),
    ((0, 0, 1), ((-1, -1, 1), (1, -1, 1), (1, 1, 1), (-1, 1, 1))),
    ((0, 0, -1), ((-1, -1, -1), (-1, 1, -1), (1, 1, -1), (1, -1, -1))),
)


def box_geometry(size: np.ndarray, open_top: bool = False) -> Geometry:
    """A box of ``size`` with flat faces (24 vertices, 12 triangles; 10 with ``open_top``)."""
    half = np.asarray(size, dtype=np.float64) / 2.0
    verts: list[np.ndarray] = []
    norms: list[tuple[int, int, int]] = []
    faces: list[tuple[int, int, int]] = []
    for normal, quad in _BOX_FACES:
        if open_top and normal == (0, 1, 0):
            continue
        k = len(verts)
        verts += [np.asarray(c) * half for c in quad]
        norms += [normal] * 4
        faces += [(k, k + 1, k + 2), (k, k + 2, k + 3)]
    return np.array(verts), np.array(norms, dtype=np.float64), np.array(faces, dtype=np.int32)


def frustum_geometry(
    rx: float,
    rz: float,
    height: float,
    taper: float = 1.0,
    segments: int = 14,
    open_top: bool = False,
) -> Geometry:
    """An elliptic cylinder (``taper`` 1) or frustum, base radii ``rx``/``rz``, top radii times
    ``taper``, from y = -height/2 to +height/2; smooth side, flat caps."""
    ang = 2.0 * np.pi * np.arange(segments) / segments
    s, c = np.sin(ang), np.cos(ang)
    y0, y1 = -height / 2.0, height / 2.0
    bottom = np.column_stack([rx * s, np.full(segments, y0), rz * c])
    top = np.column_stack([rx * taper * s, np.full(segments, y1), rz * taper * c])
    # Side normals of an elliptic frustum: radial (scaled by the other radius) plus a slope term.
    radial = np.column_stack([s / max(rx, 1e-9), np.zeros(segments), c / max(rz, 1e-9)])
    radial /= np.linalg.norm(radial, axis=1, keepdims=True)
    r_mean = (rx + rz) / 2.0
    slope = r_mean * (1.0 - taper) / max(height, 1e-9)
    side_n = radial + np.array([0.0, slope, 0.0])
    side_n /= np.linalg.norm(side_n, axis=1, keepdims=True)
    n = segments
    i = np.arange(n)
    j = (i + 1) % n
    verts = [bottom, top]
    norms = [side_n, side_n]
    faces = [np.column_stack([i, j, n + j]), np.column_stack([i, n + j, n + i])]
    k = 2 * n
    verts.append(np.vstack([bottom, [[0.0, y0, 0.0]]]))
    norms.append(np.tile([0.0, -1.0, 0.0], (n + 1, 1)))
    faces.append(np.column_stack([np.full(n, k + n), k + j, k + i]))
    if not open_top:
        k += n + 1
        verts.append(np.vstack([top, [[0.0, y1, 0.0]]]))
        norms.append(np.tile([0.0, 1.0, 0.0], (n + 1, 1)))
        faces.append(np.column_stack([np.full(n, k + n), k + i, k + j]))
    return np.vstack(verts), np.vstack(norms), np.vstack(faces).astype(np.int32)


def ellipsoid_geometry(radii: np.ndarray, rings: int = 7, segments: int = 12) -> Geometry:
    """An ellipsoid with semi-axes ``radii`` (x, y, z): a UV sphere with smooth normals."""
    rx, ry, rz = (max(float(r), 1e-9) for r in radii)
    theta = np.pi * np.arange(rings + 1) / rings  # from the top pole down
    phi = 2.0 * np.pi * np.arange(segments) / segments
    st, ct = np.sin(theta)[:, None], np.cos(theta)[:, None]
    unit = np.stack(
        [st * np.sin(phi)[None, :], np.broadcast_to(ct, (rings + 1, segments)), st * np.cos(phi)],
        axis=-1,
    ).reshape(-1, 3)
    verts = unit * np.array([rx, ry, rz])
    norms = unit / np.array([rx, ry, rz])
    norms /= np.maximum(np.linalg.norm(norms, axis=1, keepdims=True), 1e-12)
    faces = []
    for r in range(rings):
        a = r * segments + np.arange(segments)
        b = r * segments + (np.arange(segments) + 1) % segments
        c, d = a + segments, b + segments
        if r > 0:
            faces.append(np.column_stack([a, b, d]))
        if r < rings - 1:
            faces.append(np.column_stack([a, d, c]))
    return verts, norms, np.vstack(faces).astype(np.int32)


def torus_geometry(
    outer: float, tube: float, segments: int = 14, tube_segments: int = 6
) -> Geometry:
    """A ring about the y axis: outer diameter ``outer`` (x, z), tube diameter ``tube`` (y)."""
    minor = tube / 2.0
    major = max(outer / 2.0 - minor, minor * 0.25)
    u = 2.0 * np.pi * np.arange(segments) / segments
    v = 2.0 * np.pi * np.arange(tube_segments) / tube_segments
    cu, su = np.cos(u)[:, None], np.sin(u)[:, None]
    cv, sv = np.cos(v)[None, :], np.sin(v)[None, :]
    radial = major + minor * cv  # (segments, tube_segments)
    shape = (segments, tube_segments)
    verts = np.stack([radial * su, np.broadcast_to(minor * sv, shape), radial * cu], -1)
    norms = np.stack([np.broadcast_to(cv * su, shape), np.broadcast_to(sv, shape), cv * cu], -1)
    faces = []
    for a in range(segments):
        b = (a + 1) % segments
        for p in range(tube_segments):
            q = (p + 1) % tube_segments
            i0, i1 = a * tube_segments + p, b * tube_segments + p
            i2, i3 = b * tube_segments + q, a * tube_segments + q
            faces += [(i0, i1, i2), (i0, i2, i3)]
    return verts.reshape(-1, 3), norms.reshape(-1, 3), np.array(faces, dtype=np.int32)
