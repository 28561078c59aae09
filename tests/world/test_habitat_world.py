"""HabitatWorld through the strict habitat-sim / magnum stand-in (tests/fake_habitat_world.py).

The fake scene, in habitat's frame: room A's floor [-3, 3] x [-3, 3] and a separate room B
[10, 12] x [-1, 1] (navmesh: each shrunk by the agent radius 0.25); a 0.5 m chair box centred at
habitat (0, 1, -2), i.e. dataforge (0, 1, 2), straight ahead of a camera at dataforge (0, 1, 0)
with yaw 0; a table box at (2, 1, 0), to that camera's right.

The receptacle scene (``rworld``) adds, from .glb files written with trimesh: the table's top
(one mesh, y 1.25, 0.5 x 0.5 m) as a receptacle, a counter at habitat (-2, 0.5, 0) (top y 1.0,
two meshes: its left and right halves), a shelf with a mesh but no receptacle category, two
regions (kitchen x < 0, living room x > 0), and OVMM templates (apple, tray, lid, mystery) in an
object folder plus a bowl template in the scene.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import fake_habitat_world
import numpy as np
import pytest
import shapely.affinity
from shapely.geometry import Point, box

from dataforge.errors import DatasetError, MissingDependencyError, UsageError
from dataforge.pipelines.findingdory import goals
from dataforge.render.camera import thor_camera_pose
from dataforge.simulators.habitat import (
    HabitatAgent,
    HabitatScene,
    HabitatWorld,
    camera_quaternion,
    hfov_deg,
    rotate,
    to_df,
    to_hab,
)
from dataforge.world.graph import WorldGraph
from dataforge.world.house import HouseObject

W, H, VFOV = 64, 48, 60.0
CHAIR, TABLE = "chair_:0000", "table_:0000"
CHAIR_COLOR = [200, 10, 10]


@pytest.fixture
def hs(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    fake = fake_habitat_world.module()
    monkeypatch.setitem(sys.modules, "habitat_sim", fake)
    monkeypatch.setitem(sys.modules, "magnum", fake_habitat_world.magnum())
    return fake


@pytest.fixture
def scene(tmp_path: Path) -> HabitatScene:
    half = [[-0.25, -0.25, -0.25], [0.25, 0.25, 0.25]]
    doc = {
        "scenes": {
            "room": {
                "floor_y": 0.0,
                "rects": [[-3, -3, 3, 3], [10, -1, 12, 1]],
                "objects": [
                    {
                        "handle": TABLE,
                        "translation": [2, 1, 0],
                        "aabb": half,
                        "color": [10, 200, 10],
                    },
                    {
                        "handle": CHAIR,
                        "translation": [0, 1, -2],
                        "aabb": half,
                        "color": CHAIR_COLOR,
                    },
                ],
            }
        }
    }
    path = tmp_path / "fake.scene_dataset_config.json"
    path.write_text(json.dumps(doc))
    return HabitatScene(str(path), "room", categories={"chair": "chair", "table": "table"})


@pytest.fixture
def world(hs: ModuleType, scene: HabitatScene) -> Iterator[HabitatWorld]:
    w = HabitatWorld(scene, width=W, height=H, vfov_deg=VFOV, agent=HabitatAgent(radius=0.25))
    yield w
    w.close()


def _focal() -> float:
    return (H / 2) / math.tan(math.radians(VFOV) / 2)


def _project(cam: tuple[float, float, float], yaw: float, horizon: float, p: list[float]):
    """Pixel (col, row) of dataforge point ``p`` seen by dataforge's own camera model."""
    pose = thor_camera_pose(cam, yaw, horizon)
    right, down, fwd = pose[:3, :3].T @ (np.asarray(p) - np.asarray(cam))
    return int(W / 2 + _focal() * right / fwd), int(H / 2 + _focal() * down / fwd)


# -- frames -----------------------------------------------------------------------------------


@pytest.mark.parametrize("yaw", [0.0, 37.0, 90.0, -120.0, 180.0])
@pytest.mark.parametrize("horizon", [0.0, 30.0, -15.0])
def test_camera_rotation_matches_dataforge_camera(yaw: float, horizon: float) -> None:
    q = camera_quaternion(yaw, horizon)
    assert np.linalg.norm(q) == pytest.approx(1.0)
    pose = thor_camera_pose((0, 0, 0), yaw, horizon)
    right, down, fwd = pose[:3, 0], pose[:3, 1], pose[:3, 2]
    np.testing.assert_allclose(to_df(rotate(q, (0, 0, -1))), fwd, atol=1e-12)
    np.testing.assert_allclose(to_df(rotate(q, (1, 0, 0))), right, atol=1e-12)
    np.testing.assert_allclose(to_df(rotate(q, (0, 1, 0))), -down, atol=1e-12)
    # A point 3 m along dataforge's forward is on habitat's camera axis, 3 m deep.
    cam = np.array([1.0, 1.5, -2.0])
    rel = rotate(q * [-1, -1, -1, 1], to_hab(cam + 3 * fwd) - to_hab(cam))  # inverse rotation
    np.testing.assert_allclose(rel, [0, 0, -3], atol=1e-12)


def test_positions_mirror_z_and_fov_converts() -> None:
    np.testing.assert_array_equal(to_hab([1, 2, 3]), [1, 2, -3])
    np.testing.assert_array_equal(to_df(to_hab([1, 2, 3])), [1, 2, 3])
    assert hfov_deg(90, 100, 100) == pytest.approx(90)
    assert hfov_deg(55.3, 480, 640) == pytest.approx(43, abs=0.1)  # Stretch's head camera
    with pytest.raises(UsageError):
        to_hab([0, math.nan, 0])


# -- construction ------------------------------------------------------------------------------


def test_missing_habitat_sim_is_one_line(monkeypatch: pytest.MonkeyPatch, scene: HabitatScene):
    monkeypatch.setitem(sys.modules, "habitat_sim", None)
    with pytest.raises(MissingDependencyError) as err:
        HabitatWorld(scene, width=W, height=H, vfov_deg=VFOV)
    assert "\n" not in str(err.value) and "habitat-sim" in str(err.value)


def test_simulator_is_configured_as_the_fact_sheet_says(world: HabitatWorld, hs: ModuleType):
    cfg = world.sim.config
    assert cfg.sim_cfg.scene_id == "room" and cfg.sim_cfg.enable_physics
    specs = {s.uuid: s for s in cfg.agents[0].sensor_specifications}
    assert set(specs) == {"rgb", "depth", "semantic"}
    assert specs["depth"].sensor_type is hs.SensorType.DEPTH
    assert list(specs["rgb"].resolution) == [H, W]
    assert specs["semantic"].hfov == pytest.approx(hfov_deg(VFOV, W, H))
    assert cfg.agents[0].radius == 0.25
    lo, hi = (np.asarray(v) for v in world.sim.pathfinder.get_bounds())
    np.testing.assert_allclose([lo[0], lo[2], hi[0], hi[2]], [-2.75, -2.75, 11.75, 2.75])
    rom = world.sim.get_rigid_object_manager()
    assert rom.get_object_by_handle(CHAIR).semantic_id == world.ids.to_dict()[CHAIR]


def test_the_stand_in_is_strict(hs: ModuleType) -> None:
    spec = hs.CameraSensorSpec()
    with pytest.raises(AttributeError):
        spec.bogus = 1
    with pytest.raises(TypeError):
        spec.resolution = [1.5, 2]
    with pytest.raises(AttributeError):
        _ = hs.get_object_template_manager
    with pytest.raises(AttributeError):
        hs.nav.NavMeshSettings().agent_radiuss = 0.2


# -- rendering ---------------------------------------------------------------------------------


def test_box_straight_ahead_is_centred_with_its_id_and_axis_depth(world: HabitatWorld) -> None:
    f = world.render((0, 1, 0), 0.0, 0.0)
    assert f.rgb.shape == (H, W, 3) and f.rgb.dtype == np.uint8
    assert f.depth.dtype == np.float32 and f.instance.dtype == np.int32
    chair = world.ids.to_dict()[CHAIR]
    c = (slice(H // 2 - 1, H // 2 + 1), slice(W // 2 - 1, W // 2 + 1))
    assert np.all(f.instance[c] == chair)
    assert np.all(f.semantic[c] == world.semantics.id("chair"))
    assert np.all(f.rgb[c] == CHAIR_COLOR)
    # Depth is the distance along the optical axis: the whole front face reads 1.75 m.
    np.testing.assert_allclose(f.depth[f.instance == chair], 1.75, atol=1e-5)
    assert f.depth[0, 0] == 0 and f.instance[0, 0] == 0 and f.semantic[0, 0] == 0
    # The face spans 0.5 m at 1.75 m: about f * 0.5 / 1.75 pixels wide and high.
    rows, cols = np.nonzero(f.instance == chair)
    assert cols.max() - cols.min() + 1 == pytest.approx(_focal() * 0.5 / 1.75, abs=1.5)
    assert rows.max() - rows.min() + 1 == pytest.approx(_focal() * 0.5 / 1.75, abs=1.5)


def test_turning_right_moves_the_box_left_then_out_of_view(world: HabitatWorld) -> None:
    chair, table = world.ids.to_dict()[CHAIR], world.ids.to_dict()[TABLE]
    for yaw in (20.0, -20.0):
        f = world.render((0, 1, 0), yaw)
        cols = np.nonzero(f.instance == chair)[1]
        col, row = _project((0, 1, 0), yaw, 0.0, [0, 1, 2])
        assert f.instance[row, col] == chair
        assert (cols.mean() < W / 2) == (yaw > 0)  # a right turn puts it on the left
    f = world.render((0, 1, 0), 90.0)
    assert not np.any(f.instance == chair)
    assert f.instance[H // 2, W // 2] == table
    assert f.depth[H // 2, W // 2] == pytest.approx(1.75, abs=1e-5)


def test_looking_down_moves_the_box_up(world: HabitatWorld) -> None:
    chair = world.ids.to_dict()[CHAIR]
    f = world.render((0, 1, 0), 0.0, 20.0)
    rows = np.nonzero(f.instance == chair)[0]
    col, row = _project((0, 1, 0), 0.0, 20.0, [0, 1, 2])
    assert rows.mean() < H / 2 and f.instance[row, col] == chair


def test_frames_are_copies_of_the_reused_buffers(world: HabitatWorld) -> None:
    first = world.render((0, 1, 0), 0.0)
    before = first.instance.copy()
    world.render((0, 1, 0), 90.0)
    np.testing.assert_array_equal(first.instance, before)


# -- navigation --------------------------------------------------------------------------------


def test_reachable_positions_lie_on_the_largest_island(world: HabitatWorld) -> None:
    pts = world.reachable_positions(0.5)
    assert pts.shape == (121, 3)  # -2.5 .. 2.5 in x and z
    assert np.all(np.abs(pts[:, [0, 2]]) <= 2.75) and np.all(pts[:, 1] == 0)
    np.testing.assert_allclose(pts[:, [0, 2]] / 0.5, np.round(pts[:, [0, 2]] / 0.5))
    assert np.all(np.lexsort((pts[:, 0], pts[:, 2])) == np.arange(len(pts)))
    pf = world.sim.pathfinder
    assert all(pf.is_navigable(to_hab(p).astype(np.float32)) for p in pts)
    pts[:] = 99  # the cache hands out copies
    assert world.reachable_positions(0.5).shape == (121, 3)
    assert np.all(world.reachable_positions(0.5)[:, 1] == 0)
    assert len(world.reachable_positions(0.5, all_components=True)) == 121 + 9
    other = world.reachable_positions(0.5, start=(11, 0, 0))
    assert len(other) == 9 and np.all(other[:, 0] >= 10.25)


def test_distances_are_the_pathfinders(world: HabitatWorld, hs: ModuleType) -> None:
    sources = [(0, 0, 0), (11, 0, 0), (50, 0, 50)]
    targets = [(2, 0, -2), (11, 0, 0.5)]
    d = world.distances(sources, targets)
    pf, path = world.sim.pathfinder, hs.ShortestPath()
    path.requested_start, path.requested_end = to_hab((0, 0, 0)), to_hab((2, 0, -2))
    assert pf.find_path(path)
    assert d[0, 0] == pytest.approx(path.geodesic_distance)
    assert d[0, 0] == pytest.approx(math.hypot(2, 2), rel=0.1)
    assert d[1, 1] == pytest.approx(0.5, abs=0.05)
    assert math.isinf(d[0, 1]) and math.isinf(d[1, 0])  # other island
    assert np.all(np.isinf(d[2]))  # off the navmesh


def test_off_mesh_points_follow_the_pathfinders_rule(world: HabitatWorld, hs: ModuleType) -> None:
    """habitat-sim's own snap, as upstream's geodesic_distance -> find_path: room A's navmesh ends
    at x = 2.75 (3 m less the agent radius), so points 0.25 m and 0.75 m past it both snap onto
    it, and one 1 m above the floor snaps straight down; one 2.25 m past it (room B starts at
    10.25) has nothing in Detour's query box (2 m in x and z) and is off the mesh (inf, no path,
    no island), as for find_path alone."""
    a, edge = (0.0, 0.0, 0.0), (2.75, 0.0, 0.0)
    near, far, above, past = (3.0, 0.0, 0.0), (3.5, 0.0, 0.0), (1.0, 1.0, 0.0), (5.0, 0.0, 0.0)
    nav = world.nav
    d = world.distances([a], [edge, near, far, above, past])[0]
    assert d[0] == pytest.approx(2.75, abs=0.05) and d[1] == d[0] and d[2] == d[0]
    assert d[3] == pytest.approx(1.0, abs=0.05)  # from the snapped (1, 0, 0)
    assert math.isinf(d[4])
    pf = world.sim.pathfinder

    def raw(p: tuple[float, float, float]) -> float:  # find_path alone on the raw points
        path = hs.ShortestPath()
        path.requested_start, path.requested_end = to_hab(a), to_hab(p)
        return float(path.geodesic_distance) if pf.find_path(path) else math.inf

    assert d[2] == pytest.approx(raw(far)) and math.isinf(raw(past))
    np.testing.assert_allclose(nav.shortest_path(a, near)[-1], edge, atol=1e-5)
    np.testing.assert_allclose(nav.shortest_path(a, far)[-1], edge, atol=1e-5)
    np.testing.assert_allclose(nav.shortest_path(above, a)[0], (1.0, 0.0, 0.0), atol=1e-5)
    assert nav.shortest_path(a, past) == [] and nav.shortest_path(past, a) == []
    assert nav.distance(far, a) == d[2] and math.isinf(nav.distance(past, a))
    assert len(world.reachable_positions(0.5, start=near)) == 121
    assert len(world.reachable_positions(0.5, start=far)) == 121
    assert len(world.reachable_positions(0.5, start=past)) == 0


def test_the_default_agent_is_habitat_sims(hs: ModuleType, scene: HabitatScene) -> None:
    w = HabitatWorld(scene, width=W, height=H, vfov_deg=VFOV)
    try:
        assert w.agent == HabitatAgent(radius=0.1, height=1.5, max_climb=0.2, max_slope=45.0)
        agent_cfg = w.sim.config.agents[0]
        assert (agent_cfg.radius, agent_cfg.height) == (0.1, 1.5)
        # the navmesh is eroded by 0.1 m: room A's lattice reaches x = +-2.5 and no further
        assert np.max(np.abs(w.reachable_positions(0.5)[:, 0])) == 2.5
        assert w.pathfinder.snap(to_hab((2.9, 0.0, 0.0))) is not None  # on the mesh (edge 2.9)
    finally:
        w.close()


def test_goal_check_against_a_box(world: HabitatWorld) -> None:
    cam = goals.AgentCamera(height_m=1.0)
    seen = goals.check_pose(world, (0, 0, 0), 0.0, cam, (CHAIR,), (0, 1, 2))
    assert seen.distance_m == pytest.approx(2.0, abs=0.05)
    assert seen.angle_deg == pytest.approx(0.0)
    frame = world.render((0, 1, 0), 0.0)
    chair = world.ids.to_dict()[CHAIR]
    assert seen.coverage == pytest.approx(np.count_nonzero(frame.instance == chair) / (W * H))
    assert seen.passes(2.5, 20, 0.01) == ()
    away = goals.check_pose(world, (0, 0, 0), 90.0, cam, (CHAIR,), (0, 1, 2))
    assert away.angle_deg == pytest.approx(90.0) and away.coverage == 0.0
    assert away.passes(2.5, 20, 0.01) == ("angle", "coverage")


# -- objects and lifetime ----------------------------------------------------------------------


def test_nothing_opens(world: HabitatWorld) -> None:
    assert world.open(TABLE) is False


def test_remove_takes_the_object_out_of_view(world: HabitatWorld) -> None:
    chair = world.ids.to_dict()[CHAIR]
    world.remove(CHAIR)
    assert not np.any(world.render((0, 1, 0), 0.0).instance == chair)
    assert world.ids.to_dict()[CHAIR] == chair  # ids are never forgotten
    with pytest.raises(UsageError):
        world.remove(CHAIR)


def test_close_only_closes_an_owned_simulator(hs: ModuleType, scene: HabitatScene) -> None:
    owned = HabitatWorld(scene, width=W, height=H, vfov_deg=VFOV)
    sim = owned.sim
    owned.close()
    with pytest.raises(RuntimeError):
        sim.get_agent(0)
    shared = HabitatWorld(scene, width=W, height=H, vfov_deg=VFOV, sim=sim.__class__(sim._cfg))
    other = shared.sim
    shared.close()
    assert other.get_agent(0) is not None  # still open: the caller owns it
    other.close()


# -- receptacles, spawning and the world graph (§4-7) -------------------------------------------

APPLE, TRAY, LID = "apple", "tray", "lid"
COUNTER, SHELF = "counter_:0000", "shelf_:0000"
TABLE_TOP = 1.25
COUNTER_TOP = 1.0


def _quad(x0: float, x1: float, z0: float, z1: float, y: float) -> Any:
    trimesh = pytest.importorskip("trimesh")
    v = [[x0, y, z0], [x1, y, z0], [x0, y, z1], [x1, y, z1]]
    return trimesh.Trimesh(v, [[0, 2, 1], [1, 2, 3]], process=False)


def _template(aabb_half: list[float], color: list[int]) -> dict[str, Any]:
    return {"aabb": [[-h for h in aabb_half], aabb_half], "color": color}


@pytest.fixture
def rscene(tmp_path: Path) -> HabitatScene:
    trimesh = pytest.importorskip("trimesh")
    meshes = tmp_path / "meshes"
    meshes.mkdir()
    # The table's top face, in its local frame (COM at the box centre, half height 0.25).
    _quad(-0.25, 0.25, -0.25, 0.25, 0.25).export(meshes / "table_top.glb")
    trimesh.Scene([_quad(-0.5, 0.0, -0.3, 0.3, 0.5), _quad(0.0, 0.5, -0.3, 0.3, 0.5)]).export(
        meshes / "counter_top.glb"
    )
    objects = tmp_path / "objects"
    objects.mkdir()
    for name, half, color in (
        (APPLE, [0.05, 0.05, 0.05], [250, 20, 20]),
        (TRAY, [0.24, 0.02, 0.24], [20, 20, 250]),
        (LID, [0.75, 0.02, 0.75], [90, 90, 90]),
        ("mystery", [0.1, 0.1, 0.1], [1, 2, 3]),
    ):
        (objects / f"{name}.object_config.json").write_text(json.dumps(_template(half, color)))
    (objects / "notes.txt").write_text("not a config")

    def mesh(name: str, path: str) -> dict[str, Any]:
        return {
            f"receptacle_mesh_{name}": {
                "name": name,
                "mesh_filepath": path,
                "position": [0, 0, 0],
                "scale": [1, 1, 1],
            }
        }

    half = [[-0.25, -0.25, -0.25], [0.25, 0.25, 0.25]]
    doc = {
        "scenes": {
            "house": {
                "floor_y": 0.0,
                "rects": [[-3, -3, 3, 3], [10, -1, 12, 1]],
                "objects": [
                    {
                        "handle": TABLE,
                        "translation": [2, 1, 0],
                        "aabb": half,
                        "color": [10, 200, 10],
                        "user_defined": mesh("top", "table_top.glb"),
                        "file_directory": str(meshes),
                    },
                    {
                        "handle": CHAIR,
                        "translation": [0, 1, -2],
                        "aabb": half,
                        "color": CHAIR_COLOR,
                    },
                    {
                        "handle": COUNTER,
                        "translation": [-2, 0.5, 0],
                        "aabb": [[-0.5, -0.5, -0.3], [0.5, 0.5, 0.3]],
                        "user_defined": {**mesh("top", "counter_top.glb"), "note": "x"},
                        "file_directory": str(meshes),
                    },
                    {
                        "handle": SHELF,
                        "translation": [-2.5, 0.5, 2.5],
                        "aabb": half,
                        "user_defined": mesh("top", "table_top.glb"),
                        "file_directory": str(meshes),
                    },
                ],
                "templates": {
                    "data/objects/bowl.object_config.json": _template([0.08, 0.04, 0.08], [5, 5, 5])
                },
                "regions": [
                    {
                        "id": "0",
                        "category": "kitchen",
                        "poly_loop": [[-3, -3], [0, -3], [0, 3], [-3, 3]],
                        "floor_height": 0.0,
                        "extrusion_height": 2.5,
                    },
                    {
                        "id": "1",
                        "category": "living room",
                        "poly_loop": [[0, -3], [3, -3], [3, 3], [0, 3]],
                        "floor_height": 0.0,
                        "extrusion_height": 2.5,
                    },
                ],
            }
        }
    }
    path = tmp_path / "house.scene_dataset_config.json"
    path.write_text(json.dumps(doc))
    return HabitatScene(
        str(path),
        "house",
        categories={
            "chair": "chair",
            "apple": "apple",
            "tray": "tray",
            "lid": "lid",
            "bowl": "bowl",
        },
        receptacle_categories={"table": "table", "counter": "counter"},
        object_dirs=(str(objects),),
    )


def _open(scene: HabitatScene) -> HabitatWorld:
    return HabitatWorld(scene, width=W, height=H, vfov_deg=VFOV, agent=HabitatAgent(radius=0.25))


@pytest.fixture
def rworld(hs: ModuleType, rscene: HabitatScene) -> Iterator[HabitatWorld]:
    w = _open(rscene)
    yield w
    w.close()


def _handles(world: HabitatWorld) -> list[str]:
    return sorted(world.sim.get_rigid_object_manager().get_object_handles())


def test_receptacles_come_from_mesh_subconfigs_with_a_category(rworld: HabitatWorld) -> None:
    recs = rworld.receptacles()
    assert [r.id for r in recs] == [COUNTER, TABLE]  # the shelf has no category
    counter, table = recs
    assert (counter.category, table.category) == ("counter", "table")
    assert [s.name for s in table.surfaces] == [f"{TABLE}|top.0000"]
    assert [s.name for s in counter.surfaces] == [f"{COUNTER}|top.0000", f"{COUNTER}|top.0001"]
    top = table.surfaces[0]
    assert top.area_m2 == pytest.approx(0.25) and top.y == pytest.approx(TABLE_TOP)
    assert top.triangles.shape == (2, 3, 3) and not top.triangles.flags.writeable
    # World, dataforge frame: the table sits at dataforge (2, 1, 0).
    np.testing.assert_allclose(top.triangles[..., 0].min(), 1.75)
    np.testing.assert_allclose(top.triangles[..., 2].max(), 0.25)
    assert table.footprint.area == pytest.approx(0.25)
    assert table.footprint.centroid.x == pytest.approx(2) and table.footprint.centroid.y == (
        pytest.approx(0, abs=1e-9)
    )
    np.testing.assert_allclose(table.aabb.lo, (1.75, 0.75, -0.25))
    np.testing.assert_allclose(table.aabb.hi, (2.25, 1.25, 0.25))
    # The counter's halves: x in [-2.5, -2] and [-2, -1.5] (dataforge), both at y 1.0.
    left, right = counter.surfaces
    assert left.triangles[..., 0].max() == pytest.approx(-2.0)
    assert right.triangles[..., 0].min() == pytest.approx(-2.0)
    assert left.y == pytest.approx(COUNTER_TOP) and left.area_m2 == pytest.approx(0.3)


def test_templates_lists_loaded_templates_with_a_category(rworld: HabitatWorld) -> None:
    assert rworld.templates() == {"apple": "apple", "bowl": "bowl", "lid": "lid", "tray": "tray"}


def test_spawn_lands_on_the_receptacle_surface(rworld: HabitatWorld) -> None:
    before = _handles(rworld)
    r = rworld.spawn(APPLE, TABLE, np.random.default_rng(0))
    assert r.ok and r.status == "placed" and r.object_id == "apple_:0000"
    assert (r.receptacle_id, r.surface, r.kind, r.attempts) == (TABLE, 0, "mesh", 1)
    assert r.position is not None and r.rotation is not None
    x, y, z = r.position
    assert y == pytest.approx(TABLE_TOP + 0.05, abs=1e-5)  # resting on the top: half height
    footprint = rworld.receptacles()[1].footprint
    assert footprint.contains(Point(x, z))
    assert r.rotation[0] == 0 and r.rotation[2] == 0 and 0 <= r.rotation[1] < 360
    assert rworld.pose(r.object_id) == (r.position, r.rotation)
    np.testing.assert_allclose(rworld.center(r.object_id), r.position, atol=1e-6)
    assert rworld.spawned() == (r.object_id,)
    assert _handles(rworld) == sorted([*before, r.object_id])
    obj = rworld.sim.get_rigid_object_manager().get_object_by_handle(r.object_id)
    assert obj.motion_type is rworld._hs.physics.MotionType.KINEMATIC
    assert obj.semantic_id == rworld.ids.to_dict()[r.object_id]
    # The box turned by the yaw: its world box is wider than 0.1 m unless the yaw is a multiple
    # of 90 degrees; dataforge's yaw a is habitat's R_y(-a).
    a = math.radians(r.rotation[1])
    lo, hi = obj._bounds()
    assert hi[0] - lo[0] == pytest.approx(0.1 * (abs(math.cos(a)) + abs(math.sin(a))), abs=1e-6)


def test_place_at_replays_a_recorded_pose(rworld: HabitatWorld) -> None:
    r = rworld.spawn(APPLE, TABLE, np.random.default_rng(0))
    assert r.ok and r.position is not None and r.rotation is not None
    rworld.remove(r.object_id)
    before = _handles(rworld)
    again = rworld.place_pose(APPLE, TABLE, r.position, r.rotation)  # a template: added
    assert again.ok and (again.position, again.rotation) == (r.position, r.rotation)
    assert rworld.spawned() == (again.object_id,)
    moved = rworld.place_pose(again.object_id, TABLE, r.position, r.rotation)  # a handle: moved
    assert moved.ok and moved.object_id == again.object_id
    # floating 10 cm above the top, or on another receptacle's spot: refused, nothing changes
    up = (r.position[0], r.position[1] + 0.1, r.position[2])
    assert rworld.place_pose(APPLE, TABLE, up, r.rotation).status == "no_free_space"
    assert rworld.place_pose(APPLE, COUNTER, r.position, r.rotation).status == "no_free_space"
    # into the placed apple: a contact with another object
    clash = rworld.place_pose(APPLE, TABLE, r.position, r.rotation)
    assert clash.status == "collision" and clash.object_id == ""
    assert _handles(rworld) == sorted([*before, again.object_id])
    assert rworld.pose(again.object_id) == (r.position, r.rotation)


def test_the_world_interface_picks_and_places_by_plan_id(rworld: HabitatWorld) -> None:
    """WorldBackend's members: a pick stows (the handle kept), place_at puts the same handle
    back at a recorded pose; a new object must get the plan's id; nothing opens."""
    r = rworld.spawn(APPLE, TABLE, np.random.default_rng(0))
    assert r.ok and r.position is not None and r.rotation is not None
    oid = r.object_id
    assert rworld.has(oid) and rworld.position(oid) == r.position
    assert rworld.pose(oid) == (r.position, r.rotation)
    assert rworld.center(oid) == pytest.approx(r.position, abs=1e-6)
    assert rworld.appearance(oid) is None and rworld.open_surface(TABLE, 0) is None
    rworld.carry(oid)  # nothing drawn in habitat-sim
    rworld.pick(oid)
    assert not rworld.has(oid) and rworld.holds(oid)
    back = rworld.place_at(HouseObject(oid, APPLE, "apple", r.position, r.rotation), TABLE)
    assert back.ok and back.object_id == oid and rworld.has(oid)
    rworld.pick(oid)
    with pytest.raises(DatasetError, match="not the one"):  # a new one gets the next handle
        rworld.place_at(HouseObject("apple_:0007", APPLE, "apple", r.position, r.rotation), TABLE)
    with pytest.raises(UsageError, match="takes no inside"):
        rworld.spawn(APPLE, TABLE, np.random.default_rng(0), inside=True)


def test_a_picked_object_is_placed_again_by_the_search(rworld: HabitatWorld) -> None:
    """WorldBackend's pick then place: the stowed handle goes back into the scene on another
    receptacle (in spawned(), the world graph, on the counter); a place that fails leaves it
    stowed; reset() forgets it."""
    r = rworld.spawn(APPLE, TABLE, np.random.default_rng(0))
    oid = r.object_id
    rworld.pick(oid)
    assert not rworld.has(oid) and oid not in {o.id for o in rworld.world_graph().objects}
    assert rworld.place(oid, SHELF, np.random.default_rng(1)).status == "not_a_receptacle"
    assert not rworld.has(oid)
    moved = rworld.place(oid, COUNTER, np.random.default_rng(1))
    assert moved.ok and moved.object_id == oid and moved.receptacle_id == COUNTER
    assert rworld.has(oid) and rworld.spawned() == (oid,)
    node = rworld.world_graph().object(oid)
    assert node.parent_id == COUNTER
    assert rworld.center(oid)[1] > COUNTER_TOP > rworld.center(oid)[1] - 0.5
    rworld.reset()
    assert not rworld.has(oid) and rworld.spawned() == ()


def test_stow_keeps_the_handle_out_of_sight(rworld: HabitatWorld) -> None:
    r = rworld.spawn(APPLE, TABLE, np.random.default_rng(0))
    assert r.ok and r.position is not None and r.rotation is not None
    cam, yaw = (2.0, 1.9, -0.9), 0.0  # dataforge frame: looking at the table top
    seen = rworld.render(cam, yaw, 35.0)
    iid = rworld.ids.to_dict()[r.object_id]
    assert np.any(seen.instance == iid)
    rworld.stow(r.object_id)
    assert rworld.spawned() == () and rworld.holds(r.object_id)
    assert not np.any(rworld.render(cam, yaw, 35.0).instance == iid)
    assert r.object_id not in {o.id for o in rworld.world_graph().objects}
    back = rworld.place_pose(r.object_id, TABLE, r.position, r.rotation)
    assert back.ok and back.object_id == r.object_id and rworld.spawned() == (r.object_id,)
    assert np.array_equal(rworld.render(cam, yaw, 35.0).instance, seen.instance)
    handle = rworld.spawn_stowed(APPLE)  # a carried object rebuilt: next handle, out of sight
    assert handle == "apple_:0001" and rworld.holds(handle) and handle not in rworld.spawned()
    with pytest.raises(UsageError):
        rworld.stow(handle)  # already stowed


def test_navigator_paths_and_clearance(world: HabitatWorld) -> None:
    nav = world.nav
    a, b = (-2.0, 0.0, 2.0), (2.0, 0.0, -2.0)
    path = nav.shortest_path(a, b)
    assert len(path) >= 2
    np.testing.assert_allclose(path[0], a, atol=1e-5)
    np.testing.assert_allclose(path[-1], b, atol=1e-5)
    assert nav.distance(a, b) == pytest.approx(math.dist(a, b), rel=0.01)  # the fake: a grid
    assert nav.segment_clear(a, b)
    assert not nav.segment_clear(a, (5.0, 0.0, 0.0))  # off the floor past its edge
    assert nav.shortest_path(a, (11.0, 0.0, 0.0)) == []  # the other room: another island
    assert not nav.segment_clear(a, (11.0, 0.0, 0.0))


def test_spawned_object_is_rendered_with_its_ids(rworld: HabitatWorld) -> None:
    r = rworld.spawn(APPLE, TABLE, np.random.default_rng(0))
    cam = (2.0, 1.9, -0.9)
    f = rworld.render(cam, 0.0, 35.0)
    apple = rworld.ids.to_dict()[r.object_id]
    assert np.count_nonzero(f.instance == apple) > 0
    assert np.all(f.semantic[f.instance == apple] == rworld.semantics.id("apple"))
    table = rworld.ids.to_dict()[TABLE]
    assert np.all(f.semantic[f.instance == table] == rworld.semantics.id("table"))
    col, row = _project(cam, 0.0, 35.0, list(r.position))
    window = f.instance[max(row - 1, 0) : row + 2, max(col - 1, 0) : col + 2]
    assert apple in window


def test_spawn_is_deterministic_for_a_seed(hs: ModuleType, rscene: HabitatScene) -> None:
    def run(seed: int) -> list[Any]:
        w = _open(rscene)
        try:
            rng = np.random.default_rng(seed)
            return [w.spawn(APPLE, rec, rng).to_dict() for rec in (TABLE, COUNTER, TABLE)]
        finally:
            w.close()

    first = run(7)
    assert first == run(7)
    assert first != run(8)
    assert [r["object_id"] for r in first] == ["apple_:0000", "apple_:0001", "apple_:0002"]


def test_spawn_without_yaw_keeps_the_template_orientation(rworld: HabitatWorld) -> None:
    r = rworld.spawn(APPLE, COUNTER, np.random.default_rng(3), yaw=False, surface=1)
    assert r.ok and r.rotation == (0.0, 0.0, 0.0) and r.surface == 1
    assert r.position is not None and r.position[0] >= -2.0 - 1e-9  # the right half
    assert r.position[1] == pytest.approx(COUNTER_TOP + 0.05, abs=1e-5)


def test_spawn_on_a_blocked_receptacle_fails_cleanly(rworld: HabitatWorld) -> None:
    lid = rworld.spawn(LID, TABLE, np.random.default_rng(0))  # covers the table's top
    assert lid.ok
    before = _handles(rworld)
    r = rworld.spawn(APPLE, TABLE, np.random.default_rng(1), attempts=5)
    assert (r.status, r.object_id, r.attempts, r.position) == ("no_free_space", "", 5, None)
    assert _handles(rworld) == before and rworld.spawned() == (lid.object_id,)
    assert "apple_:0000" not in rworld.ids.to_dict()  # no id for what never stayed


def test_contact_with_another_object_rejects(rworld: HabitatWorld) -> None:
    apple = rworld.spawn(APPLE, TABLE, np.random.default_rng(0))
    assert apple.ok
    # A 0.48 m tray on the 0.5 m top always overlaps the apple's box.
    r = rworld.spawn(TRAY, TABLE, np.random.default_rng(2), attempts=3)
    assert r.status == "collision" and r.object_id == ""
    assert rworld.spawned() == (apple.object_id,)
    # Elsewhere it fits.
    assert rworld.spawn(TRAY, COUNTER, np.random.default_rng(2)).ok


def test_a_full_receptacle_takes_no_more(rworld: HabitatWorld) -> None:
    assert rworld.spawn(TRAY, TABLE, np.random.default_rng(0)).ok
    r = rworld.spawn(TRAY, TABLE, np.random.default_rng(1), attempts=10)
    assert r.status in ("no_free_space", "collision") and not r.ok
    assert rworld.spawned() == ("tray_:0000",)


def test_spawn_rejects_unknown_templates_and_non_receptacles(rworld: HabitatWorld) -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(UsageError, match="pear"):
        rworld.spawn("pear", TABLE, rng)
    with pytest.raises(UsageError):
        rworld.spawn("app", TABLE, rng)  # a prefix is not a shortname
    before = _handles(rworld)
    for rid in (CHAIR, SHELF, "nothing_:0000"):
        r = rworld.spawn(APPLE, rid, rng)
        assert (r.status, r.object_id, r.receptacle_id) == ("not_a_receptacle", "", rid)
    assert _handles(rworld) == before
    rworld.remove(TABLE)
    assert [r.id for r in rworld.receptacles()] == [COUNTER]
    assert rworld.spawn(APPLE, TABLE, rng).status == "not_a_receptacle"


def test_place_moves_and_restores_on_failure(rworld: HabitatWorld) -> None:
    apple = rworld.spawn(APPLE, TABLE, np.random.default_rng(0)).object_id
    moved = rworld.place(apple, COUNTER, np.random.default_rng(5))
    assert moved.ok and moved.object_id == apple and moved.receptacle_id == COUNTER
    assert moved.position is not None
    assert moved.position[1] == pytest.approx(COUNTER_TOP + 0.05, abs=1e-5)
    assert rworld.pose(apple) == (moved.position, moved.rotation)
    obj = rworld.sim.get_rigid_object_manager().get_object_by_handle(apple)
    assert obj.motion_type is rworld._hs.physics.MotionType.KINEMATIC
    # The table is covered by a lid: the apple cannot go back, and stays where it was.
    assert rworld.spawn(LID, TABLE, np.random.default_rng(0)).ok
    failed = rworld.place(apple, TABLE, np.random.default_rng(6), attempts=4)
    assert failed.status == "no_free_space" and failed.object_id == apple
    assert rworld.pose(apple) == (moved.position, moved.rotation)
    assert obj.motion_type is rworld._hs.physics.MotionType.KINEMATIC
    assert rworld.world_graph().object(apple).parent_id == COUNTER
    assert rworld.place(apple, CHAIR, np.random.default_rng(0)).status == "not_a_receptacle"
    with pytest.raises(UsageError):
        rworld.place(CHAIR, COUNTER, np.random.default_rng(0))  # not a spawned object


def test_sees_with_an_occluder(rworld: HabitatWorld) -> None:
    eye = (0.0, 1.0, 0.0)
    assert rworld.sees(eye, (0, 1, 1.75), CHAIR)  # the chair's near face
    assert rworld.sees(eye, (2, 1, 0), TABLE)
    assert rworld.sees(eye, (0, 1, 1.0), TABLE)  # nothing before the point
    assert not rworld.sees(eye, (0, 1, 2.9), TABLE)  # the chair is in the way
    r = rworld.spawn(APPLE, TABLE, np.random.default_rng(0))
    assert r.position is not None
    above = (r.position[0], 2.0, r.position[2])
    assert rworld.sees(above, r.position, r.object_id)
    assert not rworld.sees(above, (r.position[0], 1.0, r.position[2]), TABLE)  # under the apple


def test_world_graph_rooms_receptacles_objects(rworld: HabitatWorld) -> None:
    apple = rworld.spawn(APPLE, TABLE, np.random.default_rng(0))
    g = rworld.world_graph()
    assert g.house == "house" and g.structure == ()
    assert [(r.id, r.room_type) for r in g.rooms] == [
        ("region_0", "kitchen"),
        ("region_1", "living room"),
    ]
    assert g.room("region_1").polygon == ((0, 3), (3, 3), (3, -3), (0, -3))  # z mirrored
    assert g.room("region_0").area_m2 == pytest.approx(18)
    assert [r.id for r in g.receptacles] == [COUNTER, TABLE]
    table = g.receptacle(TABLE)
    assert table.object_type == "table" and table.parent_id is None
    assert table.child_ids == table.on_top_ids == (apple.object_id,)
    (top,) = table.surfaces
    assert top.element_id == f"{TABLE}|top.0000" and top.kind == "mesh"
    assert top.y == pytest.approx(TABLE_TOP) and top.area_cm2 == pytest.approx(2500)
    assert top.object_ids == (apple.object_id,) and not top.needs_open
    # Free: the top less the apple's turned 10 cm square (dataforge yaw a turns the plan (x, z)
    # by -a), clipped to the top (the apple may hang over the edge).
    assert apple.position is not None and apple.rotation is not None
    x, _, z = apple.position
    square = shapely.affinity.rotate(
        box(x - 0.05, z - 0.05, x + 0.05, z + 0.05), -apple.rotation[1]
    )
    shadow = square.intersection(box(1.75, -0.25, 2.25, 0.25)).area * 1e4
    assert 0 < shadow <= 100 + 1e-6
    assert top.free_area_cm2 == pytest.approx(2500 - shadow, abs=0.01)
    assert g.receptacle(COUNTER).top_area_cm2 == pytest.approx(6000)
    assert g.receptacle(COUNTER).free_area_cm2 == pytest.approx(6000)
    (node,) = g.objects
    assert (node.id, node.object_type, node.asset_id) == (apple.object_id, "apple", APPLE)
    assert node.parent_id == TABLE and node.room_id == "region_1" and node.surface == 0
    assert node.position == apple.position and node.rotation == apple.rotation
    assert goals.room_of(g, node.position) == "region_1"
    assert WorldGraph.from_dict(json.loads(json.dumps(g.to_dict()))).to_dict() == g.to_dict()


def test_furniture_keys_select_the_receptacles_pixels(rworld: HabitatWorld) -> None:
    g = rworld.world_graph()
    keys = goals.furniture_keys(g, TABLE)
    assert keys == (TABLE,)
    ids = goals.instance_ids_of(rworld.ids, keys)
    assert ids == (rworld.ids.to_dict()[TABLE],)
    f = rworld.render((0, 1, 0), 90.0)
    cover = goals.coverage_of(f.instance, ids)
    assert cover > 0 and cover == np.count_nonzero(f.instance == ids[0]) / (W * H)


def test_reset_removes_spawned_objects(rworld: HabitatWorld) -> None:
    scene_handles = _handles(rworld)
    rng = np.random.default_rng(0)
    spawned = [rworld.spawn(APPLE, rec, rng).object_id for rec in (TABLE, COUNTER)]
    assert rworld.spawned() == tuple(spawned)
    rworld.remove(spawned[0])
    assert rworld.spawned() == (spawned[1],)
    taken = rworld.ids.to_dict()
    rworld.reset()
    assert _handles(rworld) == scene_handles and rworld.spawned() == ()
    assert rworld.world_graph().objects == ()
    assert rworld.ids.to_dict() == taken  # ids stay taken
    # habitat numbers handles from the highest in use: the next apple is apple_:0000 again, and
    # has that handle's instance id (ids are by handle).
    again = rworld.spawn(APPLE, TABLE, rng)
    assert again.ok and again.object_id == spawned[0]
    assert rworld.ids.to_dict() == taken


def test_the_stand_in_checks_argument_types(rworld: HabitatWorld, hs: ModuleType) -> None:
    mn = sys.modules["magnum"]
    sim = rworld.sim
    with pytest.raises(TypeError):
        hs.geo.Ray([0.0, 1.0, 0.0], [0.0, -1.0, 0.0])  # magnum vectors only
    with pytest.raises(TypeError):
        sim.cast_ray("down")
    with pytest.raises(TypeError):
        sim.cast_ray(hs.geo.Ray(mn.Vector3(0, 1, 0), mn.Vector3(0, -1, 0)), max_distance="far")
    obj = sim.get_rigid_object_manager().get_object_by_handle(TABLE)
    with pytest.raises(TypeError):
        obj.translation = np.array([0.0, 1.0, 0.0])
    with pytest.raises(TypeError):
        obj.motion_type = 1
    with pytest.raises(TypeError):
        obj.rotation = [0.0, 0.0, 0.0, 1.0]
    with pytest.raises(TypeError):
        mn.Quaternion.rotation(0.5, mn.Vector3(0, 1, 0))
    with pytest.raises(ValueError):
        mn.Quaternion.rotation(mn.Rad(0.5), mn.Vector3(0, 2, 0))
    with pytest.raises(TypeError):
        mn.Vector3("0", 1, 2)
    with pytest.raises(TypeError):
        sim.get_object_template_manager().load_configs(Path("."))
    with pytest.raises(AttributeError):
        _ = hs.physics.CollisionGroups
    with pytest.raises(AttributeError):
        _ = mn.Matrix3
    assert sim.get_object_template_manager().load_configs("/nonexistent") == []
    assert sim.get_rigid_object_manager().add_object_by_template_handle("nope") is None
    hits = sim.cast_ray(hs.geo.Ray(mn.Vector3(2, 3, 0), mn.Vector3(0, -1, 0))).hits
    assert [h.object_id for h in hits] == [obj.object_id, hs.stage_id]
    assert hits[0].ray_distance == pytest.approx(3 - TABLE_TOP)


def test_missing_magnum_is_one_line(monkeypatch: pytest.MonkeyPatch, hs: ModuleType, scene):
    monkeypatch.setitem(sys.modules, "magnum", None)
    with pytest.raises(MissingDependencyError) as err:
        HabitatWorld(scene, width=W, height=H, vfov_deg=VFOV)
    assert "\n" not in str(err.value)
