"""HabitatWorld (first slice) through the strict habitat-sim stand-in (tests/fake_habitat_world.py).

The fake scene, in habitat's frame: room A's floor [-3, 3] x [-3, 3] and a separate room B
[10, 12] x [-1, 1] (navmesh: each shrunk by the agent radius 0.25); a 0.5 m chair box centred at
habitat (0, 1, -2), i.e. dataforge (0, 1, 2), straight ahead of a camera at dataforge (0, 1, 0)
with yaw 0; a table box at (2, 1, 0), to that camera's right.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import fake_habitat_world
import numpy as np
import pytest

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.render.camera import thor_camera_pose
from dataforge.world import goals
from dataforge.world.habitat_world import (
    HabitatAgent,
    HabitatScene,
    HabitatWorld,
    camera_quaternion,
    hfov_deg,
    rotate,
    to_df,
    to_hab,
)

W, H, VFOV = 64, 48, 60.0
CHAIR, TABLE = "chair_:0000", "table_:0000"
CHAIR_COLOR = [200, 10, 10]


@pytest.fixture
def hs(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    fake = fake_habitat_world.module()
    monkeypatch.setitem(sys.modules, "habitat_sim", fake)
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
                    {"handle": TABLE, "translation": [2, 1, 0], "aabb": half,
                     "color": [10, 200, 10]},
                    {"handle": CHAIR, "translation": [0, 1, -2], "aabb": half,
                     "color": CHAIR_COLOR},
                ],
            }
        }
    }  # fmt: skip
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


def test_unbuilt_steps_say_so_in_one_line(world: HabitatWorld) -> None:
    rng = np.random.default_rng(0)
    for call in (
        lambda: world.spawn("apple", TABLE, rng),
        lambda: world.place(CHAIR, TABLE, rng),
        world.world_graph,
    ):
        with pytest.raises(UsageError) as err:
            call()
        assert "\n" not in str(err.value) and "§4-5" in str(err.value)
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
