"""Pinhole intrinsics, camera poses, projection and unprojection.

Conventions (see :mod:`dataforge.render`): a pose is a camera-to-world 4x4 matrix whose columns
map OpenCV camera axes (x right, y down, z forward) into the left-handed, y-up world of AI2-THOR,
so its rotation has determinant -1. Continuous pixel coordinates put the image's top-left corner
at (0, 0); pixel (column ``u``, row ``v``) covers ``[u, u+1) x [v, v+1)`` and its centre is at
``(u + 0.5, v + 0.5)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from dataforge.errors import UsageError


def intrinsics(width: int, height: int, vfov_deg: float = 90.0) -> np.ndarray:
    """The 3x3 pinhole matrix K for an image of ``width`` x ``height`` with vertical FOV.

    Square pixels (fx = fy), principal point at the image centre ``(width / 2, height / 2)``,
    which is a pixel corner for even sizes (pixel centres sit at integer + 0.5).
    """
    if width <= 0 or height <= 0:
        raise UsageError(f"image size must be positive, got {width} x {height}")
    if not 0.0 < vfov_deg < 180.0:
        raise UsageError(f"vertical field of view must be in (0, 180) degrees, got {vfov_deg}")
    f = (height / 2.0) / math.tan(math.radians(vfov_deg) / 2.0)
    return np.array([[f, 0.0, width / 2.0], [0.0, f, height / 2.0], [0.0, 0.0, 1.0]])


def _pose_from_axes(
    position: ArrayLike, right: np.ndarray, down: np.ndarray, fwd: np.ndarray
) -> np.ndarray:
    """Camera-to-world matrix with columns right, down, forward and the camera position."""
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2] = right, down, fwd
    pose[:3, 3] = np.asarray(position, dtype=np.float64).reshape(3)
    return pose


def thor_camera_pose(position: ArrayLike, yaw_deg: float, horizon_deg: float = 0.0) -> np.ndarray:
    """Camera-to-world pose of an AI2-THOR camera at ``position`` (metres, world frame).

    ``yaw_deg`` is AI2-THOR's ``rotation.y``: 0 looks along +z, 90 along +x. ``horizon_deg`` is
    AI2-THOR's camera horizon: positive looks down. The rotation has determinant -1.
    """
    yaw, hor = math.radians(yaw_deg), math.radians(horizon_deg)
    fwd = np.array([math.sin(yaw) * math.cos(hor), -math.sin(hor), math.cos(yaw) * math.cos(hor)])
    right = np.array([math.cos(yaw), 0.0, -math.sin(yaw)])
    down = np.cross(right, fwd)  # (0, -1, 0) at horizon 0
    return _pose_from_axes(position, right, down, fwd)


def look_at_pose(eye: ArrayLike, target: ArrayLike, up: ArrayLike = (0.0, 1.0, 0.0)) -> np.ndarray:
    """Camera-to-world pose at ``eye`` looking at ``target``, image up as near ``up`` as can be."""
    eye_v = np.asarray(eye, dtype=np.float64).reshape(3)
    fwd = np.asarray(target, dtype=np.float64).reshape(3) - eye_v
    right = np.cross(np.asarray(up, dtype=np.float64).reshape(3), fwd)
    if np.linalg.norm(fwd) < 1e-12 or np.linalg.norm(right) < 1e-9 * np.linalg.norm(fwd):
        raise UsageError("look_at_pose: target equals eye, or the view direction is parallel to up")
    fwd /= np.linalg.norm(fwd)
    right /= np.linalg.norm(right)
    return _pose_from_axes(eye_v, right, np.cross(right, fwd), fwd)


def check_pose(pose: ArrayLike) -> np.ndarray:
    """``pose`` as a float64 4x4 after checking it is a rigid left-handed camera-to-world matrix.

    Raises :class:`UsageError` for a wrong shape, a non-orthonormal rotation, or a rotation with
    determinant +1 (which would render a mirror image in this left-handed world).
    """
    m = np.asarray(pose, dtype=np.float64)
    if m.shape != (4, 4) or not np.all(np.isfinite(m)):
        raise UsageError(f"a pose must be a finite 4x4 matrix, got shape {m.shape}")
    if not np.allclose(m[3], [0.0, 0.0, 0.0, 1.0], atol=1e-9):
        raise UsageError("a pose's last row must be (0, 0, 0, 1)")
    rot = m[:3, :3]
    if not np.allclose(rot.T @ rot, np.eye(3), atol=1e-5):
        raise UsageError("a pose's rotation must be orthonormal")
    if np.linalg.det(rot) > 0:
        raise UsageError(
            "a pose's rotation has determinant +1; in dataforge's left-handed world an OpenCV "
            "camera-to-world matrix has determinant -1 (see thor_camera_pose)"
        )
    return m


def world_to_camera(pose: ArrayLike) -> np.ndarray:
    """The inverse of a camera-to-world pose: world points to OpenCV camera coordinates."""
    m = np.asarray(pose, dtype=np.float64)
    if m.shape != (4, 4):
        raise UsageError(f"a pose must be 4x4, got shape {m.shape}")
    return np.linalg.inv(m)


def _points(points: ArrayLike, name: str) -> np.ndarray:
    p = np.asarray(points, dtype=np.float64)
    if p.ndim == 1 and p.shape[0] == 3:
        p = p[None]
    if p.ndim != 2 or p.shape[1] != 3:
        raise UsageError(f"{name} must be N x 3, got shape {p.shape}")
    return p


def project(
    points_world: ArrayLike, K: ArrayLike, pose: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Continuous pixel coordinates (N x 2: u right, v down) and z-depths (N,) of world points.

    The depth is along the optical axis (what a depth image stores). Points with depth <= 0 are
    behind the camera: their pixel coordinates are NaN.
    """
    p = _points(points_world, "points_world")
    w2c = world_to_camera(pose)
    cam = p @ w2c[:3, :3].T + w2c[:3, 3]
    z = cam[:, 2]
    img = cam @ np.asarray(K, dtype=np.float64).T
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = img[:, :2] / z[:, None]
    uv[z <= 0] = np.nan
    return uv, z


def backproject(uv: ArrayLike, z: ArrayLike, K: ArrayLike, pose: ArrayLike) -> np.ndarray:
    """World points (N x 3) at continuous pixel coordinates ``uv`` (N x 2) and z-depths ``z``."""
    uv_a = np.asarray(uv, dtype=np.float64).reshape(-1, 2)
    z_a = np.broadcast_to(np.asarray(z, dtype=np.float64).reshape(-1), (uv_a.shape[0],))
    k_inv = np.linalg.inv(np.asarray(K, dtype=np.float64))
    rays = np.column_stack([uv_a, np.ones(len(uv_a))]) @ k_inv.T  # z component is 1
    cam = rays * z_a[:, None]
    m = np.asarray(pose, dtype=np.float64)
    return cam @ m[:3, :3].T + m[:3, 3]


def unproject(
    depth: ArrayLike, K: ArrayLike, pose: ArrayLike, u: ArrayLike, v: ArrayLike
) -> np.ndarray:
    """World points (N x 3) seen at the centres of pixels (column ``u``, row ``v``).

    ``u`` and ``v`` are integer pixel indices; the point lies on the ray through the pixel centre
    ``(u + 0.5, v + 0.5)`` at z-depth ``depth[v, u]`` when ``depth`` is an H x W depth image, or at
    ``depth[i]`` when ``depth`` holds one depth per pixel. Pixels with depth 0 (nothing hit) map to
    the camera centre: filter them out first.
    """
    u_a = np.asarray(u).reshape(-1)
    v_a = np.asarray(v).reshape(-1)
    if u_a.shape != v_a.shape or not (
        np.issubdtype(u_a.dtype, np.integer) and np.issubdtype(v_a.dtype, np.integer)
    ):
        raise UsageError("unproject: u and v must be integer pixel indices of equal length")
    d = np.asarray(depth)
    z = d[v_a, u_a] if d.ndim == 2 else np.asarray(d, dtype=np.float64).reshape(-1)
    if z.shape != u_a.shape:
        raise UsageError(f"unproject: {u_a.shape[0]} pixels but {z.shape[0]} depths")
    uv = np.column_stack([u_a + 0.5, v_a + 0.5])
    return backproject(uv, z, K, pose)


def project_box(
    corners: ArrayLike,
    K: ArrayLike,
    pose: ArrayLike,
    width: int,
    height: int,
    near: float = 0.05,
) -> tuple[float, float, float, float] | None:
    """The 2D box ``(u0, v0, u1, v1)`` (continuous pixels) enclosing a projected 3D box.

    ``corners`` are the 8 corners (any points whose convex hull is the solid). The solid is first
    clipped at the plane z = ``near`` in front of the camera, so a box that straddles the camera
    still gets its true extent; the projected outline is then clipped to the image
    ``[0, width] x [0, height]``, so the box bounds only what is in view. A pixel
    (u, v) is covered when its centre lies inside. Returns None when the box lies entirely behind
    the near plane or entirely outside the image.
    """
    p = _points(corners, "corners")
    w2c = world_to_camera(pose)
    cam = p @ w2c[:3, :3].T + w2c[:3, 3]
    front = cam[:, 2] >= near
    if not front.any():
        return None
    keep = [cam[front]]
    ahead, behind = cam[front], cam[~front]
    if len(behind):
        # Where every segment from a point in front to a point behind crosses the near plane: the
        # clipped hull's new vertices are among these (the others lie inside the clipped hull).
        a = ahead[:, None, :]
        b = behind[None, :, :]
        t = (near - a[..., 2]) / (b[..., 2] - a[..., 2])
        keep.append((a + t[..., None] * (b - a)).reshape(-1, 3))
    pts = np.concatenate(keep)
    img = pts @ np.asarray(K, dtype=np.float64).T
    # The projection of a convex solid in front of the camera is a convex polygon: clip it to
    # the image so that the box is tight even when the solid reaches far outside the view.
    poly = _clip_to_rect(_convex_hull_2d(img[:, :2] / img[:, 2:3]), float(width), float(height))
    if len(poly) == 0:
        return None
    (u0, v0), (u1, v1) = poly.min(axis=0), poly.max(axis=0)
    if u1 <= u0 or v1 <= v0:
        return None
    return float(u0), float(v0), float(u1), float(v1)


def _convex_hull_2d(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull (monotone chain) of 2D points; degenerate input allowed."""
    pts = np.unique(points, axis=0)
    if len(pts) <= 2:
        return pts

    def half(seq: np.ndarray) -> list[np.ndarray]:
        chain: list[np.ndarray] = []
        for p in seq:
            while len(chain) >= 2:
                a, b = chain[-2], chain[-1]
                if (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) > 0:
                    break
                chain.pop()
            chain.append(p)
        return chain

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def _clip_to_rect(poly: np.ndarray, width: float, height: float) -> np.ndarray:
    """Sutherland-Hodgman clip of a convex polygon to ``[0, width] x [0, height]``."""
    # Each image side as (axis, bound, keep_below).
    for axis, bound, below in (
        (0, 0.0, False),
        (0, width, True),
        (1, 0.0, False),
        (1, height, True),
    ):
        if len(poly) == 0:
            break
        out: list[np.ndarray] = []
        for i in range(len(poly)):
            a, b = poly[i - 1], poly[i]
            a_in = a[axis] <= bound if below else a[axis] >= bound
            b_in = b[axis] <= bound if below else b[axis] >= bound
            if a_in != b_in:
                t = (bound - a[axis]) / (b[axis] - a[axis])
                out.append(a + t * (b - a))
            if b_in:
                out.append(b)
        poly = np.array(out).reshape(-1, 2)
    return poly
