"""Camera conventions and geometry of dataforge.render.camera (no OpenGL needed)."""

from __future__ import annotations

import numpy as np
import pytest

from dataforge.errors import UsageError
from dataforge.render import (
    backproject,
    box_corners,
    check_pose,
    intrinsics,
    look_at_pose,
    project,
    project_box,
    thor_camera_pose,
    unproject,
    yaw_rotate_xz,
)


def random_pose(rng: np.random.Generator, position: np.ndarray | None = None) -> np.ndarray:
    """A random 6-DoF camera-to-world pose with a det -1 rotation (left-handed world)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) > 0:
        q[:, 0] = -q[:, 0]
    pose = np.eye(4)
    pose[:3, :3] = q
    pose[:3, 3] = rng.uniform(-3, 3, size=3) if position is None else position
    return pose


def test_intrinsics_vertical_fov_and_centre() -> None:
    k = intrinsics(640, 480, 90.0)
    np.testing.assert_allclose(k, [[240, 0, 320], [0, 240, 240], [0, 0, 1]], atol=1e-9)
    k60 = intrinsics(64, 48, 60.0)
    assert k60[1, 1] == pytest.approx(24.0 / np.tan(np.radians(30.0)))
    assert k60[0, 0] == k60[1, 1]
    for bad in ((0, 10, 90.0), (10, 10, 0.0), (10, 10, 180.0)):
        with pytest.raises(UsageError):
            intrinsics(*bad)


@pytest.mark.parametrize("yaw", [0.0, 37.0, 90.0, 180.0, 271.0])
@pytest.mark.parametrize("horizon", [-30.0, 0.0, 30.0, 60.0])
def test_thor_pose_is_a_left_handed_rigid_pose(yaw: float, horizon: float) -> None:
    pose = thor_camera_pose((1.0, 1.5, -2.0), yaw, horizon)
    check_pose(pose)
    assert np.linalg.det(pose[:3, :3]) == pytest.approx(-1.0)
    np.testing.assert_allclose(pose[:3, 3], [1.0, 1.5, -2.0])
    # Image right stays horizontal; image down points downwards whenever |horizon| < 90.
    assert pose[1, 0] == pytest.approx(0.0)
    assert pose[1, 1] < 0


def test_thor_pose_directions() -> None:
    np.testing.assert_allclose(thor_camera_pose((0, 0, 0), 0, 0)[:3, 2], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(thor_camera_pose((0, 0, 0), 0, 0)[:3, 1], [0, -1, 0], atol=1e-12)
    np.testing.assert_allclose(thor_camera_pose((0, 0, 0), 90, 0)[:3, 2], [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(thor_camera_pose((0, 0, 0), 90, 0)[:3, 0], [0, 0, -1], atol=1e-12)
    down30 = thor_camera_pose((0, 0, 0), 0, 30)[:3, 2]
    np.testing.assert_allclose(down30, [0, -0.5, np.sqrt(3) / 2], atol=1e-12)


def test_thor_pose_projection_semantics() -> None:
    k = intrinsics(640, 480, 90.0)
    eye = np.array([0.0, 1.5, 0.0])
    # Yaw 90 looks along +x: a point 5 m along +x lands on the image centre at depth 5.
    uv, z = project(eye + np.array([5.0, 0.0, 0.0]), k, thor_camera_pose(eye, 90.0))
    np.testing.assert_allclose(uv[0], [320, 240], atol=1e-9)
    assert z[0] == pytest.approx(5.0)
    # Facing +z, +x is on the image's right and +y on its upper half.
    pose = thor_camera_pose(eye, 0.0)
    uv, _ = project(eye + np.array([[1.0, 0.0, 4.0], [-1.0, 0.0, 4.0], [0.0, 1.0, 4.0]]), k, pose)
    assert uv[0, 0] > 320 > uv[1, 0]
    assert uv[2, 1] < 240
    # Horizon 30 looks down: the point 30 degrees below the horizon is at the centre, and a point
    # at eye height straight ahead is above it.
    pose = thor_camera_pose(eye, 0.0, 30.0)
    ahead = eye + np.array([0.0, -np.tan(np.radians(30.0)) * 2.0, 2.0])
    uv, _ = project(np.array([ahead, eye + np.array([0.0, 0.0, 2.0])]), k, pose)
    np.testing.assert_allclose(uv[0], [320, 240], atol=1e-9)
    assert uv[1, 1] < 240


def test_look_at_matches_thor_pose() -> None:
    eye = np.array([1.0, 1.2, 3.0])
    thor = thor_camera_pose(eye, 120.0, 25.0)
    np.testing.assert_allclose(look_at_pose(eye, eye + 2.0 * thor[:3, 2]), thor, atol=1e-12)
    with pytest.raises(UsageError):
        look_at_pose(eye, eye + np.array([0.0, 1.0, 0.0]))


def test_check_pose_refuses_mirrors_and_non_rigid() -> None:
    pose = thor_camera_pose((0, 1, 0), 10, 5)
    flipped = pose.copy()
    flipped[:3, 0] *= -1
    with pytest.raises(UsageError, match="determinant"):
        check_pose(flipped)
    scaled = pose.copy()
    scaled[:3, :3] *= 2
    with pytest.raises(UsageError, match="orthonormal"):
        check_pose(scaled)
    with pytest.raises(UsageError):
        check_pose(np.eye(3))


def test_project_backproject_round_trip() -> None:
    rng = np.random.default_rng(0)
    k = intrinsics(320, 240, 75.0)
    for _ in range(20):
        pose = random_pose(rng)
        cam = np.column_stack([rng.uniform(-2, 2, (50, 2)), rng.uniform(0.1, 20, 50)])
        world = cam @ pose[:3, :3].T + pose[:3, 3]
        uv, z = project(world, k, pose)
        np.testing.assert_allclose(z, cam[:, 2], rtol=1e-9)
        np.testing.assert_allclose(backproject(uv, z, k, pose), world, atol=1e-9)


def test_unproject_uses_pixel_centres() -> None:
    rng = np.random.default_rng(1)
    w, h = 64, 48
    k = intrinsics(w, h, 90.0)
    pose = random_pose(rng)
    depth = rng.uniform(0.5, 10.0, (h, w)).astype(np.float32)
    u = rng.integers(0, w, 100)
    v = rng.integers(0, h, 100)
    pts = unproject(depth, k, pose, u, v)
    uv, z = project(pts, k, pose)
    np.testing.assert_allclose(uv, np.column_stack([u + 0.5, v + 0.5]), atol=1e-6)
    np.testing.assert_allclose(z, depth[v, u], rtol=1e-6)
    # One depth per pixel gives the same points as looking them up in the image.
    np.testing.assert_allclose(unproject(depth[v, u], k, pose, u, v), pts)
    with pytest.raises(UsageError):
        unproject(depth, k, pose, u.astype(float), v)


def test_project_marks_points_behind_the_camera() -> None:
    k = intrinsics(64, 48)
    uv, z = project([[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]], k, thor_camera_pose((0, 0, 0), 0))
    assert np.isnan(uv[0]).all() and z[0] == pytest.approx(-1.0)
    assert not np.isnan(uv[1]).any()


def test_box_corners_and_yaw() -> None:
    np.testing.assert_allclose(yaw_rotate_xz([0.0, 1.0], 90.0), [[1.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(yaw_rotate_xz([1.0, 0.0], 90.0), [[0.0, -1.0]], atol=1e-12)
    c = box_corners((1.0, 2.0, 3.0), (2.0, 4.0, 6.0), 90.0)
    np.testing.assert_allclose(c.min(axis=0), [-2.0, 0.0, 2.0], atol=1e-12)
    np.testing.assert_allclose(c.max(axis=0), [4.0, 4.0, 4.0], atol=1e-12)
    np.testing.assert_allclose(c.mean(axis=0), [1.0, 2.0, 3.0], atol=1e-12)


def test_project_box_in_view_is_the_corner_bbox() -> None:
    k = intrinsics(640, 480)
    pose = thor_camera_pose((0.0, 1.0, 0.0), 10.0, 10.0)
    corners = box_corners((0.5, 0.5, 4.0), (0.6, 0.8, 0.4), 30.0)
    uv, _ = project(corners, k, pose)
    box = project_box(corners, k, pose, 640, 480)
    assert box is not None
    np.testing.assert_allclose(box, [*uv.min(axis=0), *uv.max(axis=0)])


def test_project_box_behind_or_outside_is_none() -> None:
    k = intrinsics(64, 48)
    pose = thor_camera_pose((0.0, 1.0, 0.0), 0.0)
    assert project_box(box_corners((0, 1, -3), (1, 1, 1)), k, pose, 64, 48) is None
    assert project_box(box_corners((50, 1, 3), (1, 1, 1)), k, pose, 64, 48) is None


def test_project_box_straddling_the_camera_encloses_every_visible_point() -> None:
    rng = np.random.default_rng(2)
    w, h = 320, 240
    k = intrinsics(w, h, 90.0)
    pose = thor_camera_pose((0.0, 1.0, 0.0), 20.0, 0.0)
    corners = box_corners((1.0, 1.0, 0.5), (0.4, 0.5, 3.0))  # from behind the camera to ahead
    _, z_c = project(corners, k, pose)
    assert (z_c < 0).any() and (z_c > 0).any()
    box = project_box(corners, k, pose, w, h)
    assert box is not None
    u0, v0, u1, v1 = box
    assert 0 < u0 < u1 == w and 0 <= v0 < v1 <= h
    # Dense samples of the solid and its edges in front of the near plane project inside the
    # box, and reach close to its sides.
    local = rng.uniform(-1.0, 1.0, (30000, 3))
    edge = np.arange(20000)
    for axis in range(3):  # snap two coordinates to +-1: points on the 12 edges
        rows = edge[edge % 3 != axis]
        local[rows, axis] = np.sign(local[rows, axis])
    pts = (corners.max(axis=0) + corners.min(axis=0)) / 2 + local * np.ptp(corners, axis=0) / 2
    uv, z = project(pts, k, pose)
    uv = uv[z >= 0.05]
    inside = (uv[:, 0] >= 0) & (uv[:, 0] <= w) & (uv[:, 1] >= 0) & (uv[:, 1] <= h)
    uv = uv[inside]
    assert (uv[:, 0] >= u0 - 1e-6).all() and (uv[:, 0] <= u1 + 1e-6).all()
    assert (uv[:, 1] >= v0 - 1e-6).all() and (uv[:, 1] <= v1 + 1e-6).all()
    assert uv[:, 0].min() < u0 + 2.0
    assert uv[:, 1].min() < v0 + 2.0 and uv[:, 1].max() > v1 - 2.0
