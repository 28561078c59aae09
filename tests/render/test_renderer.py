"""Meshes and the EGL rasteriser of dataforge.render, checked against independent geometry.

Rendering tests skip when no EGL OpenGL context can be created (no libEGL / Mesa driver), and
fail instead with ``DATAFORGE_REQUIRE_SIM=1`` (``renderhelpers.needs_egl``).
"""

from __future__ import annotations

import os
import select
import signal
from collections.abc import Iterator

import numpy as np
import pytest
import shapely
from renderhelpers import needs_egl

from dataforge.errors import DataforgeError, MissingDependencyError, UsageError
from dataforge.render import (
    Mesh,
    Renderer,
    Scene,
    box_corners,
    box_mesh,
    cylinder_mesh,
    polygon_slab,
    project,
    project_box,
    shared_context,
    thor_camera_pose,
    triangulate_polygon,
    unproject,
    wall_mesh,
)
from dataforge.render.renderer import StoredFrames

FLOOR, WALL, BOX, CYLINDER, CEILING = 1, 2, 3, 4, 5  # semantic classes
ROOM = [(0.0, 0.0), (6.0, 0.0), (6.0, 5.0), (0.0, 5.0)]
BOX_ID, CYL_ID, CEILING_ID = 6, 7, 8
BOX_ARGS = ((3.0, 0.4, 3.2), (0.8, 0.8, 0.5), 30.0)
L_SHAPE = [(0, 0), (4, 0), (4, 1.5), (1.5, 1.5), (1.5, 3), (0, 3)]


# ---------------------------------------------------------------- independent geometry helpers


def random_pose(rng: np.random.Generator, position: np.ndarray) -> np.ndarray:
    """A random 6-DoF camera-to-world pose with a det -1 rotation (left-handed world)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) > 0:
        q[:, 0] = -q[:, 0]
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = q, position
    return pose


def distance_to_triangles(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Exact distance from each point (P x 3) to the nearest of triangles (T x 3 x 3)."""
    p = points[:, None, :]
    a, b, c = tris[None, :, 0], tris[None, :, 1], tris[None, :, 2]
    n = np.cross(b - a, c - a)
    n = n / np.linalg.norm(n, axis=-1, keepdims=True)
    d_plane = np.einsum("ptk,ptk->pt", p - a, np.broadcast_to(n, (len(points), *n.shape[1:])))
    q = p - d_plane[..., None] * n
    inside = np.ones(d_plane.shape, bool)
    edge_d = np.full(d_plane.shape, np.inf)
    for s, e in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ptk,ptk->pt", np.cross(e - s, q - s), np.broadcast_to(n, q.shape)) >= 0
        t = np.clip(np.sum((p - s) * (e - s), -1) / np.sum((e - s) ** 2, -1), 0.0, 1.0)
        edge_d = np.minimum(edge_d, np.linalg.norm(p - (s + t[..., None] * (e - s)), axis=-1))
    return np.where(inside, np.abs(d_plane), edge_d).min(axis=1)


def ray_cast(scene: Scene, origin: np.ndarray, dirs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reference ray caster (Moller-Trumbore): first hit's instance id and ray parameter t."""
    tris = np.concatenate([m.triangles() for m in scene.meshes]).astype(np.float64)
    ids = np.concatenate([np.full(m.triangle_count, m.instance_id) for m in scene.meshes])
    e1, e2 = tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]
    pvec = np.cross(dirs[:, None], e2[None])
    det = np.einsum("tk,rtk->rt", e1, pvec)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / det
        tvec = origin - tris[:, 0]
        u = np.einsum("tk,rtk->rt", tvec, pvec) * inv
        qvec = np.cross(tvec, e1)
        v = np.einsum("rk,tk->rt", dirs, qvec) * inv
        t = np.einsum("tk,tk->t", e2, qvec)[None] * inv
    hit = (np.abs(det) > 1e-12) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
    t = np.where(hit, t, np.inf)
    first = t.argmin(axis=1)
    t_first = t[np.arange(len(dirs)), first]
    return np.where(np.isfinite(t_first), ids[first], 0), t_first


def room_scene() -> Scene:
    """Floor slab, 4 walls (one with a door hole), a ceiling, a box and a cylinder."""
    meshes = [polygon_slab(ROOM, 0.0, 0.1, color=(150, 120, 90), instance_id=1, semantic_id=FLOOR)]
    for i, (p0, p1) in enumerate(zip(ROOM, ROOM[1:] + ROOM[:1], strict=True)):
        holes = [(1.0, 2.0, 0.0, 2.1)] if i == 0 else []
        meshes.append(
            wall_mesh(
                p0, p1, 0.0, 2.5, holes, color=(200, 200, 215), instance_id=2 + i, semantic_id=WALL
            )
        )
    meshes.append(box_mesh(*BOX_ARGS, color=(200, 40, 40), instance_id=BOX_ID, semantic_id=BOX))
    meshes.append(
        cylinder_mesh(
            (4.5, 0.0, 1.5),
            0.3,
            1.0,
            32,
            color=(40, 200, 40),
            instance_id=CYL_ID,
            semantic_id=CYLINDER,
        )
    )
    meshes.append(polygon_slab(ROOM, 2.5, instance_id=CEILING_ID, semantic_id=CEILING))
    return Scene(meshes)


ROOM_POSES = [
    thor_camera_pose((1.0, 1.5, 0.5), 30.0, 20.0),
    thor_camera_pose((5.5, 0.9, 4.5), 225.0, 10.0),
    thor_camera_pose((3.0, 2.2, 0.3), 0.0, 45.0),
    thor_camera_pose((0.5, 1.2, 2.5), 90.0, -10.0),
]


# ------------------------------------------------------------------------ meshes (no OpenGL)


def tri_area(tris: np.ndarray) -> float:
    """Total area of triangles (T x 3 x 3)."""
    return float(
        np.linalg.norm(np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]), axis=1).sum() / 2
    )


@pytest.mark.parametrize(
    "polygon",
    [
        L_SHAPE,
        L_SHAPE[::-1],  # clockwise
        [*L_SHAPE, L_SHAPE[0]],  # closed ring
        [(0, 0), (2, 0), (4, 0), (4, 2), (4, 2), (0, 2)],  # collinear and repeated points
        [
            (0, 0),
            (5, 0),
            (5, 4),
            (4, 4),
            (4, 1),
            (3, 1),
            (3, 4),
            (2, 4),
            (2, 1),
            (1, 1),
            (1, 4),
            (0, 4),
        ],
    ],
)
def test_triangulation_covers_the_polygon_exactly(polygon: list[tuple[float, float]]) -> None:
    pts, tris = triangulate_polygon(polygon)
    shape = shapely.Polygon(polygon)
    corners = pts[tris]
    areas = 0.5 * np.abs(
        (corners[:, 1, 0] - corners[:, 0, 0]) * (corners[:, 2, 1] - corners[:, 0, 1])
        - (corners[:, 1, 1] - corners[:, 0, 1]) * (corners[:, 2, 0] - corners[:, 0, 0])
    )
    assert areas.sum() == pytest.approx(shape.area, rel=1e-9)
    assert all(shape.buffer(1e-9).contains(shapely.Polygon(c)) for c in corners)


def test_star_polygons_triangulate() -> None:
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(5, 40))
        ang = np.sort(rng.uniform(0, 2 * np.pi, n))
        rad = rng.uniform(0.3, 2.0, n)
        poly = np.column_stack([rad * np.cos(ang), rad * np.sin(ang)])
        pts, tris = triangulate_polygon(poly)
        flat = np.column_stack([pts[:, 0], np.zeros(len(pts)), pts[:, 1]])[tris]
        assert tri_area(flat) == pytest.approx(shapely.Polygon(poly).area, rel=1e-6)


def test_bad_polygons_are_refused() -> None:
    with pytest.raises(UsageError):
        triangulate_polygon([(0, 0), (1, 1), (1, 0), (0, 1)])  # bow tie
    with pytest.raises(UsageError):
        triangulate_polygon([(0, 0), (1, 0), (2, 0)])


def test_slab_wall_box_cylinder_geometry() -> None:
    slab = polygon_slab(L_SHAPE, 0.5, 0.2)
    area = shapely.Polygon(L_SHAPE).area
    perimeter = shapely.Polygon(L_SHAPE).length
    assert tri_area(slab.triangles()) == pytest.approx(2 * area + 0.2 * perimeter)
    lo, hi = slab.bounds()
    assert lo[1] == pytest.approx(0.3) and hi[1] == pytest.approx(0.5)
    wall = wall_mesh((0, 0), (3, 4), 0.0, 2.5, [(1.0, 2.0, 0.0, 2.0), (3.0, 4.0, 1.0, 2.0)])
    assert tri_area(wall.triangles()) == pytest.approx(5 * 2.5 - 2.0 - 1.0)
    np.testing.assert_allclose(
        np.abs(wall.face_normals()), [[0.8, 0.0, 0.6]] * wall.triangle_count, atol=1e-6
    )
    box = box_mesh((1, 2, 3), (1, 2, 3), 17.0)
    assert tri_area(box.triangles()) == pytest.approx(2 * (2 + 3 + 6))
    np.testing.assert_allclose(
        np.sort(box.vertices, 0), np.sort(box_corners((1, 2, 3), (1, 2, 3), 17.0), 0), atol=1e-6
    )
    cyl = cylinder_mesh((0, 0, 0), 1.0, 2.0, 64)
    assert tri_area(cyl.triangles()) == pytest.approx(2 * np.pi * 3.0, rel=5e-3)
    with pytest.raises(UsageError):
        wall_mesh((0, 0), (1, 0), 0, 2, [(0.0, 1.0, 0.0, 2.0)])
    with pytest.raises(UsageError):
        Mesh(np.zeros((3, 3)), [[0, 1, 2]], instance_id=0)


def test_scene_buffers_are_one_triangle_soup() -> None:
    scene = room_scene()
    buf = scene.buffers()
    n = 3 * scene.triangle_count
    assert buf["positions"].shape == buf["normals"].shape == buf["colors"].shape == (n, 3)
    assert buf["instance"].shape == buf["semantic"].shape == (n,)
    assert buf["positions"].dtype == np.float32 and buf["instance"].dtype == np.int32
    lut = scene.instance_to_semantic()
    assert all(lut[i] == s for i, s in zip(buf["instance"], buf["semantic"], strict=True))
    with pytest.raises(UsageError):
        Scene(
            [
                box_mesh((0, 0, 0), (1, 1, 1), instance_id=3, semantic_id=1),
                box_mesh((2, 0, 0), (1, 1, 1), instance_id=3, semantic_id=2),
            ]
        ).buffers()


def test_missing_egl_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import moderngl  # a core dependency: its absence is a broken install, not a skip

    from dataforge.render import renderer

    def fail(**kwargs: object) -> None:
        raise Exception("libEGL.so: cannot open shared object file")

    monkeypatch.setattr(moderngl, "create_standalone_context", fail)
    with pytest.raises(MissingDependencyError, match="libegl1 libgl1-mesa-dri") as info:
        renderer.create_context()
    assert "\n" not in str(info.value) and "moderngl" in str(info.value)


# ----------------------------------------------------------------------------- rendering


@pytest.fixture(scope="module")
def egl() -> None:
    """Skip rendering tests where no EGL OpenGL context can be created (an error instead with
    DATAFORGE_REQUIRE_SIM=1)."""
    mark = needs_egl()
    if mark.args[0]:
        pytest.skip(mark.kwargs["reason"])
    shared_context()


@pytest.fixture(scope="module")
def room(egl: None) -> Iterator[tuple[Scene, Renderer]]:
    scene = room_scene()
    with Renderer(160, 120, 90.0) as r:
        r.set_scene(scene)
        yield scene, r


def pixel_rays(r: Renderer, pose: np.ndarray) -> np.ndarray:
    """World directions through every pixel centre (H x W x 3), scaled to unit z-depth."""
    v, u = np.mgrid[0 : r.height, 0 : r.width]
    uv1 = np.stack([u + 0.5, v + 0.5, np.ones_like(u, dtype=float)], -1)
    return (uv1 @ np.linalg.inv(r.K).T) @ pose[:3, :3].T


def mask_pixels(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns and rows of a mask's pixels."""
    v, u = np.nonzero(mask)
    return u, v


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_of_a_rendering_process_is_refused_not_hung(egl: None) -> None:
    from dataforge.render import renderer

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: must raise at once instead of hanging inside Mesa
        try:
            renderer.create_context()
            answer = b"created"
        except UsageError:
            answer = b"refused"
        except BaseException:
            answer = b"other"
        os.write(write_fd, answer)
        os._exit(0)
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], 60.0)
        answer = os.read(read_fd, 16) if ready else b"hung"
    finally:
        os.close(read_fd)
        if answer == b"hung":
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert answer == b"refused"


@pytest.mark.parametrize("pose_index", range(len(ROOM_POSES) + 3))
def test_depth_points_lie_on_the_surface_the_mask_names(
    room: tuple[Scene, Renderer], pose_index: int
) -> None:
    scene, r = room
    if pose_index < len(ROOM_POSES):
        pose = ROOM_POSES[pose_index]
    else:  # arbitrary 6-DoF poses inside the room
        rng = np.random.default_rng(pose_index)
        pose = random_pose(rng, rng.uniform([0.4, 0.3, 0.4], [5.6, 2.2, 4.6]))
    frame = r.render(pose)
    hit = frame.instance > 0
    assert hit.mean() > 0.8  # only the door opens onto nothing
    assert (frame.depth[hit] > 0).all() and (frame.depth[~hit] == 0).all()
    for inst in np.unique(frame.instance[hit]):
        u, v = mask_pixels(frame.instance == inst)
        pts = unproject(frame.depth, r.K, pose, u, v)
        tris = np.concatenate([m.triangles() for m in scene.meshes_of(int(inst))]).astype(float)
        dist = distance_to_triangles(pts, tris)
        assert dist.max() < 0.01, (inst, dist.max())
        assert np.median(dist) < 1e-3
        if inst == 1:
            np.testing.assert_allclose(pts[:, 1], 0.0, atol=2e-3)


@pytest.mark.parametrize("pose_index", range(4))
def test_occlusion_agrees_with_a_reference_ray_caster(
    room: tuple[Scene, Renderer], pose_index: int
) -> None:
    scene, r = room
    rng = np.random.default_rng(100 + pose_index)
    pose = random_pose(rng, rng.uniform([0.4, 0.3, 0.4], [5.6, 2.2, 4.6]))
    frame = r.render(pose)
    rays = pixel_rays(r, pose).reshape(-1, 3)
    sample = rng.choice(len(rays), 3000, replace=False)
    ids, t = ray_cast(scene, pose[:3, 3], rays[sample])
    got = frame.instance.reshape(-1)[sample]
    assert (got == ids).mean() > 0.995
    same = (got == ids) & (ids > 0)
    np.testing.assert_allclose(frame.depth.reshape(-1)[sample][same], t[same], rtol=1e-4)


def test_projected_box_encloses_its_mask(room: tuple[Scene, Renderer]) -> None:
    _, r = room
    corners = box_corners(*BOX_ARGS)
    seen = 0
    for pose in ROOM_POSES:
        frame = r.render(pose)
        u, v = mask_pixels(frame.instance == BOX_ID)
        box = project_box(corners, r.K, pose, r.width, r.height)
        if box is None:
            assert len(u) == 0
            continue
        seen += len(u) > 0
        u0, v0, u1, v1 = box
        assert (u + 0.5 >= u0 - 1).all() and (u + 0.5 <= u1 + 1).all()
        assert (v + 0.5 >= v0 - 1).all() and (v + 0.5 <= v1 + 1).all()
    assert seen >= 2
    # Seen whole and unoccluded, the mask reaches the projected box's sides (within a pixel).
    pose = ROOM_POSES[0]
    frame = r.render(pose)
    u, v = mask_pixels(frame.instance == BOX_ID)
    u0, v0, u1, v1 = project_box(corners, r.K, pose, r.width, r.height)
    np.testing.assert_allclose([u.min(), v.min()], [u0, v0], atol=1.0)
    np.testing.assert_allclose([u.max() + 1, v.max() + 1], [u1, v1], atol=1.0)


def test_semantic_ids_follow_instances(room: tuple[Scene, Renderer]) -> None:
    scene, r = room
    lut = scene.instance_to_semantic()
    table = np.zeros(max(lut) + 1, np.int32)
    for inst, sem in lut.items():
        table[inst] = sem
    for pose in ROOM_POSES:
        frame = r.render(pose)
        np.testing.assert_array_equal(frame.semantic, table[frame.instance])
        assert set(np.unique(frame.semantic)) <= {0, FLOOR, WALL, BOX, CYLINDER, CEILING}


def test_rendering_is_deterministic(room: tuple[Scene, Renderer]) -> None:
    scene, r = room
    a = r.render(ROOM_POSES[0])
    r.render(ROOM_POSES[1])
    b = r.render(ROOM_POSES[0])
    with Renderer(160, 120, 90.0) as other:
        other.set_scene(scene)
        c = other.render(ROOM_POSES[0])
    for frame in (b, c):
        for name in ("rgb", "depth", "instance", "semantic"):
            np.testing.assert_array_equal(getattr(a, name), getattr(frame, name))
    assert a.rgb.flags.writeable and a.depth.flags.writeable


def hidden_box_scene(holes: list[tuple[float, float, float, float]] | None) -> Scene:
    """A box 5 m ahead; a wall at z = 3 (x from -3 to 3) with ``holes``, or no wall if None."""
    meshes = [box_mesh((0.3, 0.6, 5.0), (1.2, 1.2, 0.6), instance_id=9, semantic_id=BOX)]
    if holes is not None:
        meshes.append(wall_mesh((-3.0, 3.0), (3.0, 3.0), 0.0, 3.0, holes, instance_id=2))
    return Scene(meshes)


def test_walls_hide_and_holes_reveal(egl: None) -> None:
    pose = thor_camera_pose((0.0, 1.0, 0.0), 0.0, 0.0)
    with Renderer(320, 240, 90.0) as r:
        frames = {}
        for name, holes in (("open", None), ("wall", []), ("door", [(2.5, 3.5, 0.0, 2.0)])):
            r.set_scene(hidden_box_scene(holes))
            frames[name] = r.render(pose)
        rays = pixel_rays(r, pose)
    open_mask = frames["open"].instance == 9
    door_mask = frames["door"].instance == 9
    assert open_mask.sum() > 500
    assert (frames["wall"].instance == 9).sum() == 0
    assert 0 < door_mask.sum() < open_mask.sum()
    assert not (door_mask & ~open_mask).any()
    # Where each pixel's ray crosses the wall plane z = 3: inside the hole (x in -0.5..0.5,
    # y in 0..2) the box shows exactly where it shows without the wall; outside, never.
    cross = pose[:3, 3] + rays * 3.0  # the rays have unit z, the camera sits at z = 0
    px = 3.0 / r.K[0, 0]  # one pixel's footprint on the wall
    in_hole = (np.abs(cross[..., 0]) < 0.5 - px) & (cross[..., 1] > px) & (cross[..., 1] < 2 - px)
    near_hole = (
        (np.abs(cross[..., 0]) < 0.5 + px) & (cross[..., 1] > -px) & (cross[..., 1] < 2 + px)
    )
    assert not (door_mask & ~near_hole).any()
    np.testing.assert_array_equal(door_mask[in_hole], open_mask[in_hole])


def test_extra_is_drawn_over_the_scene_with_its_own_depth(egl: None) -> None:
    """A carried object (``extra``) behind the wall still shows where it projects, over the
    wall; where it does not, the frame is the scene's alone; its own faces still hide each
    other (the depth is cleared once, under it)."""
    pose = thor_camera_pose((0.0, 1.0, 0.0), 0.0, 0.0)
    # a 0.6 m cube centred 4 m ahead (behind the wall at z = 3), its front face red, the rest blue
    cube = box_mesh(
        (0.0, 1.0, 4.0), (0.6, 0.6, 0.6), instance_id=11, semantic_id=BOX, color=(0, 0, 255)
    )
    front = box_mesh(
        (0.0, 1.0, 3.69), (0.6, 0.6, 0.02), instance_id=11, semantic_id=BOX, color=(255, 0, 0)
    )
    extra = Scene([cube, front]).buffers()
    with Renderer(320, 240, 90.0) as r:
        r.set_scene(hidden_box_scene([]))
        plain = r.render(pose)
        over = r.render(pose, extra)
        again = r.render(pose)
    mask = over.instance == 11
    # by hand: the front face spans x, y in +-0.3 m at z = 3.69 (f = 120 px: 90 degrees over
    # 240 rows)
    half = 120.0 * 0.3 / 3.69
    rows, cols = np.nonzero(mask)
    assert abs(cols.min() - (160 - half)) <= 2 and abs(cols.max() - (160 + half - 1)) <= 2
    assert abs(rows.min() - (120 - half)) <= 2 and abs(rows.max() - (120 + half - 1)) <= 2
    assert (over.rgb[mask][:, 0] > over.rgb[mask][:, 2]).mean() > 0.95  # the red face in front
    np.testing.assert_allclose(over.depth[mask], 3.69 - 0.01, atol=0.02)
    np.testing.assert_array_equal(over.instance[~mask], plain.instance[~mask])
    np.testing.assert_array_equal(over.rgb[~mask], plain.rgb[~mask])
    np.testing.assert_array_equal(again.rgb, plain.rgb)  # nothing of it stays


@pytest.mark.parametrize(
    "size_fov", [(64, 48, 90.0), (640, 480, 90.0), (640, 480, 60.0), (200, 100, 110.0)]
)
def test_resolutions_and_fields_of_view(egl: None, size_fov: tuple[int, int, float]) -> None:
    w, h, fov = size_fov
    floor = polygon_slab([(-20, -20), (20, -20), (20, 40), (-20, 40)], 0.0, instance_id=1)
    marker = box_mesh((0.4, 0.9, 4.0), (0.3, 0.3, 0.3), instance_id=5, semantic_id=BOX)
    pose = thor_camera_pose((0.0, 1.2, 0.0), 5.0, 30.0)
    with Renderer(w, h, fov) as r:
        r.set_scene(Scene([floor, marker]))
        frame = r.render(pose)
        rays = pixel_rays(r, pose)
    assert frame.rgb.shape == (h, w, 3) and frame.rgb.dtype == np.uint8
    for img in (frame.depth, frame.instance, frame.semantic):
        assert img.shape == (h, w)
    assert frame.depth.dtype == np.float32 and frame.instance.dtype == np.int32
    # Floor pixels: depth equals where the pixel-centre ray meets y = 0 (sub-pixel agreement).
    on_floor = frame.instance == 1
    expected = -pose[1, 3] / rays[..., 1]
    assert on_floor.sum() > 0.3 * w * h
    np.testing.assert_allclose(frame.depth[on_floor], expected[on_floor], rtol=2e-5)
    # Camera looks 30 degrees down: sky (nothing) at the top, floor at the bottom.
    assert (frame.instance[0] == 0).all() and (frame.depth[0] == 0).all()
    assert (frame.instance[-1] == 1).all()
    # The marker's mask sits inside its projected box, around its projected centre.
    u, v = mask_pixels(frame.instance == 5)
    assert len(u) > 0
    u0, v0, u1, v1 = project_box(box_corners((0.4, 0.9, 4.0), (0.3, 0.3, 0.3)), r.K, pose, w, h)
    assert u.min() >= np.floor(u0) - 1 and u.max() < u1 + 1
    assert v.min() >= np.floor(v0) - 1 and v.max() < v1 + 1
    centre, _ = project([0.4, 0.9, 4.0], r.K, pose)
    assert abs(u.mean() + 0.5 - centre[0, 0]) < 0.15 * (u1 - u0) + 1
    assert abs(v.mean() + 0.5 - centre[0, 1]) < 0.15 * (v1 - v0) + 1


def test_near_far_background_and_empty_scene(egl: None) -> None:
    pose = thor_camera_pose((0.0, 1.0, 0.0), 0.0)
    scene = Scene([box_mesh((0.0, 1.0, 8.0), (2.0, 2.0, 0.5), instance_id=3)])
    with Renderer(64, 48, far=5.0, background=(10, 20, 30)) as r:
        frame = r.render(pose)  # no scene yet
        assert (frame.instance == 0).all() and (frame.depth == 0).all()
        assert (frame.rgb == [10, 20, 30]).all()
        r.set_scene(scene)
        assert (r.render(pose).instance == 0).all()  # beyond the far plane
    with Renderer(64, 48, far=20.0) as r:
        r.set_scene(scene)
        frame = r.render(pose)
        assert (frame.instance == 3).any()
        assert frame.depth[frame.instance == 3] == pytest.approx(7.75, abs=1e-4)
        mirrored = pose.copy()
        mirrored[:3, 0] *= -1
        with pytest.raises(UsageError, match="determinant"):
            r.render(mirrored)


def test_concave_floor_renders_exactly_its_polygon(egl: None) -> None:
    pose = thor_camera_pose((2.0, 6.0, 1.5), 0.0, 90.0)  # straight down
    with Renderer(200, 150, 60.0) as r:
        r.set_scene(Scene([polygon_slab(L_SHAPE, 0.0, instance_id=4)]))
        frame = r.render(pose)
        rays = pixel_rays(r, pose)
    ground = pose[:3, 3] + rays * 6.0  # z-depth 6 reaches y = 0 when looking straight down
    shape = shapely.Polygon(L_SHAPE)
    px = 6.0 / r.K[0, 0]
    points = shapely.points(ground[..., 0], ground[..., 2])
    inside = shapely.contains(shape.buffer(-px), points)
    outside = ~shapely.contains(shape.buffer(px), points)
    assert (frame.instance[inside] == 4).all() and inside.sum() > 1000
    assert (frame.instance[outside] == 0).all()


@pytest.mark.parametrize("batch", [1, 3, 16])
def test_stored_views_are_the_frames_as_datasets_store_them(egl: None, batch: int) -> None:
    """render_stored (the shader's uint16 ids and millimetres, straight into a buffer's rows,
    several views drawn before any is read back) gives exactly render() followed by
    StoredFrames.store (numpy's rounding), views with a carried object (extra) included; and
    the depth really is millimetres along the axis (the wall at z = 3 m is 3,000)."""
    rng = np.random.default_rng(4)
    poses = [random_pose(rng, rng.uniform([1.0, 0.5, 1.0], [5.0, 2.0, 4.0])) for _ in range(7)]
    poses[0] = thor_camera_pose((1.0, 1.8, 0.5), 0.0, 0.0)  # down +z at the wall z = 5
    extra = Scene([box_mesh((3.0, 1.0, 2.5), (0.4, 0.4, 0.4), instance_id=11)]).buffers()
    extras = [extra if k % 2 else None for k in range(len(poses))]
    with Renderer(96, 72, 90.0, background=(20, 40, 60)) as r:
        r.batch = batch
        r.set_scene(room_scene())
        want = StoredFrames.empty(len(poses), 96, 72)
        for k, (pose, e) in enumerate(zip(poses, extras, strict=True)):
            want.store(k, r.render(pose, e))
        buffer = StoredFrames.empty(len(poses) + 2, 96, 72)  # rows 1..7 of a larger buffer
        r.render_stored(poses, buffer.rows(1, len(poses) + 1), extras)
    got = buffer.rows(1, len(poses) + 1)
    for name in ("rgb", "depth", "instance", "semantic"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    assert got.depth.dtype == np.uint16 and got.instance.dtype == np.uint16
    assert not any(np.any(got.instance[k] == 11) for k in (0, 2, 4, 6))
    assert any(np.any(got.instance[k] == 11) for k in (1, 3, 5))  # the carried box
    centre = got.depth[0, 30:42, 42:54]  # 4.5 m from the wall, straight ahead
    assert np.all(np.abs(centre.astype(int) - 4500) <= 1)


def test_stored_views_refuse_ids_over_uint16_and_arrays_they_cannot_fill(egl: None) -> None:
    with Renderer(32, 24, 90.0) as r:
        big = box_mesh((0.0, 1.0, 2.0), (0.5, 0.5, 0.5), instance_id=70_000)
        r.set_scene(Scene([big]))
        pose = thor_camera_pose((0.0, 1.0, 0.0), 0.0, 0.0)
        with pytest.raises(DataforgeError, match="instance id 70000 does not fit uint16"):
            r.render_stored([pose], StoredFrames.empty(1, 32, 24))
        r.set_scene(Scene([box_mesh((0.0, 1.0, 2.0), (0.5, 0.5, 0.5), instance_id=3)]))
        strided = StoredFrames.empty(2, 32, 24)
        strided.depth = np.empty((2, 24, 64), np.uint16)[:, :, ::2]
        with pytest.raises(ValueError, match="C-contiguous"):
            r.render_stored([pose, pose], strided)
        with pytest.raises(ValueError, match="2 poses for 1 views"):
            r.render_stored([pose, pose], StoredFrames.empty(1, 32, 24))
