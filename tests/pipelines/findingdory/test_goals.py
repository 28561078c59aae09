"""Teleport-and-check goal predicates on a one-room house: a dresser (with drawers) against a
wall and a laptop on it, rendered at 96 x 72."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from renderhelpers import needs_egl
from roomhelpers import one_room_house, standing, two_rooms

from dataforge.errors import UsageError
from dataforge.pipelines.findingdory.goals import (
    AgentCamera,
    GoalCheck,
    check_frame,
    check_pose,
    coverage_keys,
    furniture_keys,
    heading_angle_deg,
    reference_point,
    room_of,
)
from dataforge.render import intrinsics, project, project_box, thor_camera_pose
from dataforge.simulators import EmbeddedWorld
from dataforge.world import load_catalogue, load_house

CAT = load_catalogue()
W, H, VFOV = 96, 72, 60.0
CAMERA = AgentCamera(height_m=1.5, horizon_deg=30.0)
AT_OBJECT = (2.0, 45.0, 0.001)  # max distance (m), max angle (deg), min coverage


def _world() -> tuple[EmbeddedWorld, str]:
    dresser = CAT.asset("Dresser_205_1")
    house = load_house(
        one_room_house([standing(CAT, "Dresser|1", dresser.asset_id, 3.0, 0.4)]), catalogue=CAT
    )
    world = EmbeddedWorld(house, CAT, width=W, height=H, vfov_deg=VFOV)
    res = world.spawn("Laptop_1", "Dresser|1", np.random.default_rng(0))
    assert res.ok and res.object_id is not None
    return world, res.object_id


@pytest.fixture(scope="module")
def scene() -> Any:
    mark = needs_egl()
    if mark.args[0]:
        pytest.skip(mark.kwargs["reason"])
    world, laptop = _world()
    centre = np.asarray(world.world.box(laptop).center, dtype=np.float64)
    ref = reference_point(world, centre)
    assert ref is not None
    yield SimpleNamespace(world=world, laptop=laptop, centre=centre, ref=ref)
    world.close()


def _facing(s: Any, metres: float) -> tuple[np.ndarray, float]:
    """A base ``metres`` beyond the laptop's reference point (away from the dresser), and the
    yaw that faces the laptop's centre from there."""
    base = np.array([s.ref[0], 0.0, s.ref[2] + metres])
    yaw = math.degrees(math.atan2(s.centre[0] - base[0], s.centre[2] - base[2]))
    return base, yaw


# -- conventions ----------------------------------------------------------------------------


def test_camera_height_and_horizon_follow_ai2thor() -> None:
    cam = AgentCamera(height_m=1.2, horizon_deg=30.0)
    eye = cam.position((1.0, 0.1, 2.0))
    assert np.allclose(eye, (1.0, 1.3, 2.0))
    pose = thor_camera_pose(eye, 90.0, cam.horizon_deg)  # yaw 90 faces +x
    K = intrinsics(W, H, VFOV)
    ahead = 1.2 / math.tan(math.radians(30.0))  # the floor point the optical axis hits
    pts = np.array(
        [
            [1.0 + ahead, 0.1, 2.0],  # on the axis: the image centre
            [1.0 + ahead, 1.3, 2.0],  # at eye height: above the centre (we look down)
            [1.0 + ahead, 0.1, 1.5],  # -z is the right-hand side when facing +x
        ]
    )
    uv, z = project(pts, K, pose)
    assert np.allclose(uv[0], (W / 2, H / 2), atol=1e-6)
    assert uv[1][1] < H / 2 and abs(uv[1][0] - W / 2) < 1e-6
    assert uv[2][0] > W / 2
    assert (z > 0).all()


def test_heading_angle() -> None:
    assert heading_angle_deg((0, 0, 0), 0.0, (0, 1, 5)) == pytest.approx(0.0)
    assert heading_angle_deg((0, 0, 0), 90.0, (5, 0, 0)) == pytest.approx(0.0, abs=1e-9)
    assert heading_angle_deg((0, 0, 0), 0.0, (1, 0, 1)) == pytest.approx(45.0)
    assert heading_angle_deg((0, 0, 0), 0.0, (-1, 0, 1)) == pytest.approx(45.0)
    assert heading_angle_deg((0, 0, 0), 0.0, (0, 0, -3)) == pytest.approx(180.0)
    assert heading_angle_deg((0, 0, 0), 350.0, (0, 0, 1)) == pytest.approx(10.0)
    assert heading_angle_deg((1, 0, 1), 123.0, (1, 2, 1)) == 0.0  # straight above


def test_passes_names_failures_and_skips() -> None:
    check = GoalCheck(distance_m=2.5, angle_deg=10.0, coverage=0.01)
    assert check.passes(*AT_OBJECT) == ("distance",)
    assert check.passes(*AT_OBJECT, skip=("distance",)) == ()
    bad = GoalCheck(distance_m=math.inf, angle_deg=90.0, coverage=0.0)
    assert bad.passes(*AT_OBJECT) == ("distance", "angle", "coverage")
    assert bad.passes(*AT_OBJECT, skip=("coverage",)) == ("distance", "angle")
    edge = GoalCheck(distance_m=2.0, angle_deg=45.0, coverage=0.001)
    assert edge.passes(*AT_OBJECT) == ()  # bounds are inclusive
    with pytest.raises(UsageError, match="unknown goal check"):
        check.passes(*AT_OBJECT, skip=("dist",))


def test_reference_point_without_a_grid_uses_reachable_positions() -> None:
    lattice = np.array([[0.0, 0.9, 0.0], [0.25, 0.9, 0.0], [0.5, 0.9, 0.0]])
    backend = SimpleNamespace(reachable_positions=lambda: lattice)
    assert np.allclose(reference_point(backend, (0.4, 0.7, 0.3)), (0.5, 0.9, 0.0))
    assert reference_point(backend, (9.0, 0.0, 9.0)) is None


def _dresser_by_the_wall() -> EmbeddedWorld:
    """Rooms A and B of ``two_rooms`` (doorway at z 0.3..1.3 in the wall x = 3) with a dresser
    in A against that wall at z = 4.5, turned so that it is 0.38 m deep along x."""
    dresser = CAT.asset("Dresser_205_1")
    half = dresser.size[2] / 2
    raw = two_rooms(
        "door", [standing(CAT, "Dresser|1", dresser.asset_id, 3.0 - half - 0.01, 4.5, yaw=90.0)]
    )
    return EmbeddedWorld(load_house(raw, catalogue=CAT), CAT, agent_radius=0.25)


def test_reference_point_is_never_across_a_wall() -> None:
    """An object on the dresser, 0.15 m from the wall: the nearest navigable cell in a straight
    line is in room B (0.4 m, behind the wall; ~8 m by the doorway), the nearest by path in
    room A in front of the dresser (~0.5 m over it). The reference point is in A."""
    world = _dresser_by_the_wall()
    grid = world.grid
    obj = (2.85, 0.8, 4.5)
    assert not grid.navigable(obj) and not grid.navigable((2.6, 0.0, 4.5))  # the dresser
    straight = grid.snap(obj, radius=2.0)
    assert straight is not None and straight[0] > 3.0  # what a straight-line snap picks: room B
    ref = reference_point(world, obj)
    assert ref is not None and ref[0] < 3.0, ref  # room A, on the object's side
    assert math.hypot(ref[0] - obj[0], ref[2] - obj[2]) == pytest.approx(0.5, abs=0.06)
    front = (2.0, 0.0, 4.5)  # a base in front of the dresser, facing it: near by path
    assert world.distances([front], [ref])[0, 0] < 0.5
    assert world.distances([front], [straight])[0, 0] > 6.0
    # nothing on A's side within the radius: no reference point, never one behind the wall
    assert reference_point(world, obj, radius=0.45) is None
    # a grid without walls keeps the straight line
    bare = SimpleNamespace(grid=grid)
    got = reference_point(bare, obj)
    assert got is not None and got[0] > 3.0


# -- rendered checks ------------------------------------------------------------------------


def test_the_camera_sees_the_target_where_it_projects(scene: Any) -> None:
    base, yaw = _facing(scene, 1.0)
    frame = scene.world.render(CAMERA.position(base), yaw, CAMERA.horizon_deg)
    pose = thor_camera_pose(CAMERA.position(base), yaw, CAMERA.horizon_deg)
    K = intrinsics(W, H, VFOV)
    corners = scene.world.world.box(scene.laptop).corners()
    box = project_box(corners, K, pose, W, H)
    assert box is not None
    vs, us = np.nonzero(frame.instance == scene.world.scene.instance_of(scene.laptop))
    assert len(us) > 0
    u0, v0, u1, v1 = box
    assert us.min() >= math.floor(u0) - 1 and us.max() <= math.ceil(u1)
    assert vs.min() >= math.floor(v0) - 1 and vs.max() <= math.ceil(v1)
    uv, _ = project(scene.centre, K, pose)
    u, v = uv[0]
    assert 0 < u < W and 0 < v < H  # and near the middle: we face it, tilted down onto it
    assert abs(u - W / 2) < W / 8


def test_facing_the_object_from_one_metre_passes(scene: Any) -> None:
    base, yaw = _facing(scene, 1.0)
    check = check_pose(scene.world, base, yaw, CAMERA, [scene.laptop], scene.centre)
    assert check.distance_m == pytest.approx(1.0, abs=0.05)
    assert check.angle_deg == pytest.approx(0.0, abs=1e-6)
    assert check.coverage > 0.001
    assert check.passes(*AT_OBJECT) == ()


def test_turning_away_fails_angle_and_coverage(scene: Any) -> None:
    base, yaw = _facing(scene, 1.0)
    check = check_pose(scene.world, base, yaw + 180.0, CAMERA, [scene.laptop], scene.centre)
    assert check.angle_deg == pytest.approx(180.0, abs=1e-6)
    assert check.coverage == 0.0
    assert check.passes(*AT_OBJECT) == ("angle", "coverage")
    assert check.passes(*AT_OBJECT, skip=("coverage",)) == ("angle",)


def test_standing_far_away_fails_distance(scene: Any) -> None:
    base, yaw = _facing(scene, 4.0)
    check = check_pose(scene.world, base, yaw, CAMERA, [scene.laptop], scene.centre)
    assert check.distance_m == pytest.approx(4.0, abs=0.1)
    assert "distance" in check.passes(*AT_OBJECT)
    assert "angle" not in check.passes(*AT_OBJECT)


def test_skipping_distance_passes_where_only_distance_failed(scene: Any) -> None:
    base, yaw = _facing(scene, 2.5)
    check = check_pose(scene.world, base, yaw, CAMERA, [scene.laptop], scene.centre)
    assert check.passes(*AT_OBJECT) == ("distance",)
    assert check.passes(*AT_OBJECT, skip=("distance",)) == ()


def test_a_given_reference_and_frame_are_used(scene: Any) -> None:
    base, yaw = _facing(scene, 1.0)
    frame = scene.world.render(CAMERA.position(base), yaw, CAMERA.horizon_deg)
    plain = check_pose(scene.world, base, yaw, CAMERA, [scene.laptop], scene.centre)
    assert check_frame(scene.world, frame, base, yaw, [scene.laptop], scene.centre) == plain
    near = base + np.array([0.3, 0.0, 0.0])
    many = check_frame(
        scene.world, frame, base, yaw, [scene.laptop], scene.centre, reference=[scene.ref, near]
    )
    assert many.distance_m == pytest.approx(0.3, abs=0.02)  # the nearest reference counts
    none = check_frame(
        scene.world, frame, base, yaw, [scene.laptop], scene.centre, reference=np.zeros((0, 3))
    )
    assert none.distance_m == math.inf and "distance" in none.passes(*AT_OBJECT)


def test_a_sub_receptacle_counts_its_whole_furniture(scene: Any) -> None:
    graph = scene.world.world_graph()
    drawer = "Dresser|1|Drawer_3"
    keys = coverage_keys(graph, drawer)
    assert "Dresser|1" in keys and drawer in keys
    assert set(keys) == set(furniture_keys(graph, "Dresser|1"))
    assert {k for k in keys if k.startswith("Dresser|1|Drawer_")} == {
        r.id for r in graph.receptacles if r.parent_id == "Dresser|1"
    }
    assert coverage_keys(graph, scene.laptop) == (scene.laptop,)  # an object is itself only
    front = np.asarray(graph.receptacle(drawer).aabb.center, dtype=np.float64)
    base = np.array([3.0, 0.0, 2.0])
    yaw = math.degrees(math.atan2(front[0] - base[0], front[2] - base[2]))
    camera = AgentCamera(height_m=1.0, horizon_deg=20.0)
    whole = check_pose(scene.world, base, yaw, camera, keys, front)
    alone = check_pose(scene.world, base, yaw, camera, [drawer], front)
    assert 0.0 < alone.coverage < whole.coverage
    assert whole.distance_m == alone.distance_m and whole.angle_deg == alone.angle_deg


def test_checks_never_assign_instance_ids(scene: Any) -> None:
    base, yaw = _facing(scene, 1.0)
    # a first render gives the scene's elements their ids (the module's scene is shared, so
    # without it the result would depend on which tests ran before); a check adds none
    scene.world.render(base, yaw, CAMERA.horizon_deg)
    before = scene.world.ids.to_dict()
    check = check_pose(scene.world, base, yaw, CAMERA, ["no|such|thing"], scene.centre)
    assert check.coverage == 0.0
    assert scene.world.ids.to_dict() == before


def test_room_of(scene: Any) -> None:
    graph = scene.world.world_graph()
    assert room_of(graph, (3.0, 3.0)) == "room|1"
    assert room_of(graph, (3.0, 0.0, 3.0)) == "room|1"  # (x, y, z) works too
    assert room_of(graph, (7.0, 3.0)) is None
    assert room_of(graph, (-0.5, 5.0)) is None


def test_checks_are_deterministic(scene: Any) -> None:
    base, yaw = _facing(scene, 1.0)
    other, laptop = _world()
    try:
        assert laptop == scene.laptop
        a = check_pose(scene.world, base, yaw, CAMERA, [scene.laptop], scene.centre)
        b = check_pose(other, base, yaw, CAMERA, [laptop], scene.centre)
        c = check_pose(other, base, yaw, CAMERA, [laptop], scene.centre)
        assert a == b == c
    finally:
        other.close()
