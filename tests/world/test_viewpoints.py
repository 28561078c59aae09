"""Cameras around a point (dataforge.world.viewpoints) on a real ProcTHOR house and on houses
built in code, checked against the grid, an independent wall-crossing test and the camera
model of dataforge.render."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from dfhelpers import SHARED
from roomhelpers import two_rooms

from dataforge.render import intrinsics, project, thor_camera_pose
from dataforge.world import load_catalogue, load_house
from dataforge.world.navigation import house_floor_y, house_nav_grid
from dataforge.world.placement import World
from dataforge.world.viewpoints import (
    AZIMUTHS_8,
    MAX_HORIZON_DEG,
    MIN_SEPARATION_M,
    RADIUS_STEP_M,
    WALL_CLEARANCE_M,
    Viewpoint,
    WallSight,
    look_at_angles,
    orbit_viewpoints,
)

HOUSE = SHARED / "data" / "procthor_houses" / "house_3703.json"
needs_house = pytest.mark.skipif(
    not HOUSE.is_file(), reason=f"ProcTHOR house not present ({HOUSE})"
)
HEIGHTS = {"standing": 1.5, "low": 0.6}  # not sorted: the mapping's order is kept
RADIUS, MIN_R, MAX_R = 1.5, 0.5, 3.0
W, H = 160, 120


# -- independent geometry -------------------------------------------------------------------------


def _orient(a: tuple, b: tuple, c: tuple) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _on_segment(a: tuple, b: tuple, p: tuple) -> bool:
    return (
        abs(_orient(a, b, p)) < 1e-12
        and min(a[0], b[0]) - 1e-12 <= p[0] <= max(a[0], b[0]) + 1e-12
        and min(a[1], b[1]) - 1e-12 <= p[1] <= max(a[1], b[1]) + 1e-12
    )


def segments_meet(p: tuple, q: tuple, a: tuple, b: tuple) -> bool:
    """Closed plan segments p-q and a-b share a point."""
    d1, d2 = _orient(a, b, p), _orient(a, b, q)
    d3, d4 = _orient(p, q, a), _orient(p, q, b)
    if ((d1 > 0) != (d2 > 0)) and ((d3 > 0) != (d4 > 0)) and d1 * d2 < 0 and d3 * d4 < 0:
        return True
    return any(
        _on_segment(*seg, pt) for seg, pt in (((a, b), p), ((a, b), q), ((p, q), a), ((p, q), b))
    )


def walls_between(house: Any, p: tuple, q: tuple) -> list[str]:
    """Ids of the standing walls (not empty, with height) crossing the plan segment p-q."""
    return [
        w.id
        for w in house.walls
        if not w.empty and w.height > 0 and segments_meet(p, q, w.start, w.end)
    ]


def point_segment(p: tuple, a: tuple, b: tuple) -> float:
    """Plan distance from point p to the segment a-b."""
    ax, az, bx, bz = float(a[0]), float(a[1]), float(b[0]), float(b[1])
    dx, dz = bx - ax, bz - az
    t = ((p[0] - ax) * dx + (p[1] - az) * dz) / max(dx * dx + dz * dz, 1e-18)
    t = min(max(t, 0.0), 1.0)
    return math.hypot(p[0] - (ax + t * dx), p[1] - (az + t * dz))


def wall_gap(house: Any, x: float, z: float) -> float:
    """Plan distance from (x, z) to the nearest standing wall line."""
    return min(
        point_segment((x, z), w.start, w.end) for w in house.walls if not w.empty and w.height > 0
    )


def apart(eyes: list[tuple], x: float, z: float, floor_y: float) -> bool:
    """Cameras at (x, z) at every height stand MIN_SEPARATION_M from all ``eyes`` (3D)."""
    return all(
        math.dist((x, floor_y + h, z), e) >= MIN_SEPARATION_M
        for h in HEIGHTS.values()
        for e in eyes
    )


def usable(grid: Any, comp: int, x: float, z: float) -> bool:
    c = grid.cell_of((x, 0.0, z))
    return grid.inside(c) and bool(grid.free[c]) and int(grid.components()[c]) == comp


def bearing_deg(target: tuple, x: float, z: float) -> float:
    return math.degrees(math.atan2(x - target[0], z - target[2])) % 360.0


def angle_gap(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def check_viewpoints(
    house: Any, grid: Any, target: tuple, vps: list[Viewpoint], comp: int, floor_y: float
) -> None:
    """Every property a list of viewpoints from orbit_viewpoints must have."""
    assert [(v.azimuth_deg, v.height_name) for v in vps] == [
        (a, h) for a in AZIMUTHS_8 for h in HEIGHTS
    ]
    K = intrinsics(W, H)
    for k in range(0, len(vps), len(HEIGHTS)):
        group = vps[k : k + len(HEIGHTS)]
        # the heights of one azimuth share the plan position and how it was found
        assert len({(v.position[0], v.position[2], v.radius_m, v.on_bearing) for v in group}) == 1
    # no two cameras of the orbit within 20 cm (3D)
    for i, a in enumerate(vps):
        for b in vps[i + 1 :]:
            assert math.dist(a.position, b.position) >= MIN_SEPARATION_M - 1e-5, (a, b)
    for i, v in enumerate(vps):
        x, y, z = v.position
        earlier = [u.position for u in vps[: i - i % len(HEIGHTS)]]
        assert usable(grid, comp, x, z), v
        assert y == pytest.approx(floor_y + HEIGHTS[v.height_name], abs=1e-6)
        assert v.height_m == pytest.approx(HEIGHTS[v.height_name], abs=1e-6)
        assert v.bearing_deg == pytest.approx(bearing_deg(target, x, z), abs=1e-5)
        assert v.usable
        plan = math.hypot(x - target[0], z - target[2])
        assert v.radius_m == pytest.approx(plan, abs=1e-5)
        if v.sees_target:
            assert walls_between(house, (target[0], target[2]), (x, z)) == [], v
            assert plan >= MIN_R - 1e-6
            assert wall_gap(house, x, z) >= WALL_CLEARANCE_M - 1e-9, v
        if v.on_bearing:
            assert v.sees_target
            assert angle_gap(v.bearing_deg, v.azimuth_deg) < 1e-3, v
            assert MIN_R - 1e-6 <= v.radius_m <= MAX_R + 1e-6
            # no good distance on the bearing is nearer to the wanted radius
            better = [d for d in distances() if abs(d - RADIUS) < abs(v.radius_m - RADIUS) - 1e-9]
            assert not any(
                on_bearing_ok(house, grid, comp, target, v.azimuth_deg, d, earlier, floor_y)
                for d in better
            )
        else:
            # flagged off-bearing only when the bearing has no good distance at all
            assert not any(
                on_bearing_ok(house, grid, comp, target, v.azimuth_deg, d, earlier, floor_y)
                for d in distances()
            ), v
        # the camera looks at the target: it projects to the image centre, in front
        assert abs(v.horizon_deg) < MAX_HORIZON_DEG
        uv, depth = project(
            np.array(target), K, thor_camera_pose(v.position, v.yaw_deg, v.horizon_deg)
        )
        assert depth[0] > 0
        np.testing.assert_allclose(uv[0], [W / 2, H / 2], atol=1e-3)


def distances() -> list[float]:
    n = round((MAX_R - MIN_R) / RADIUS_STEP_M)
    return [MIN_R + k * RADIUS_STEP_M for k in range(n + 1)]


def on_bearing_ok(
    house: Any,
    grid: Any,
    comp: int,
    target: tuple,
    az: float,
    d: float,
    eyes: list[tuple],
    floor_y: float,
) -> bool:
    """A camera at distance d on bearing az is navigable, clear of walls, apart from ``eyes``
    and sees the target."""
    x = target[0] + d * math.sin(math.radians(az))
    z = target[2] + d * math.cos(math.radians(az))
    return (
        usable(grid, comp, x, z)
        and wall_gap(house, x, z) >= WALL_CLEARANCE_M
        and apart(eyes, x, z, floor_y)
        and not walls_between(house, (target[0], target[2]), (x, z))
    )


# -- a real house ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> dict[str, Any]:
    if not HOUSE.is_file():
        pytest.skip(f"ProcTHOR house not present ({HOUSE})")
    cat = load_catalogue()
    house = load_house(HOUSE, catalogue=cat)
    world = World(house, cat)
    receptacles = [
        o.id for o in house.top_level_objects() if world.is_receptacle(o.id) and o.parent_id is None
    ]
    targets = {r: tuple(float(c) for c in world.box(r).center) for r in receptacles}
    return {
        "house": house,
        "grid": house_nav_grid(house, cat),
        "sight": WallSight(house),
        "floor": house_floor_y(house),
        "targets": targets,
        "catalogue": cat,
    }


def orbit(real: dict[str, Any], target: tuple, **kw: Any) -> list[Viewpoint]:
    return orbit_viewpoints(
        real["grid"],
        real["sight"],
        target,
        floor_y=real["floor"],
        heights=HEIGHTS,
        radius=RADIUS,
        min_radius=MIN_R,
        max_radius=MAX_R,
        **kw,
    )


@needs_house
def test_viewpoints_around_real_receptacles(real: dict[str, Any]) -> None:
    targets = real["targets"]
    assert {"CounterTop|2|0", "Fridge|2|1", "DiningTable|3|1", "Safe|3|3"} <= set(targets)
    grid = real["grid"]
    counts = {"on": 0, "off": 0}
    for target in targets.values():
        vps = orbit(real, target)
        assert len(vps) == 8 * 2
        check_viewpoints(real["house"], grid, target, vps, grid.largest_component(), real["floor"])
        for v in vps:
            counts["on" if v.on_bearing else "off"] += 1
            assert v.sees_target  # every receptacle of this house can be seen from somewhere
    # this house exercises both branches: ideal bearings and fallbacks
    assert counts["on"] >= 40 and counts["off"] >= 20, counts


@needs_house
def test_chosen_component_and_agent_start(real: dict[str, Any]) -> None:
    grid = real["grid"]
    start = real["house"].raw["metadata"]["agent"]["position"]
    comp = grid.component_of((start["x"], 0.0, start["z"]))
    assert comp > 0
    target = real["targets"]["DiningTable|3|1"]
    vps = orbit(real, target, component=comp)
    check_viewpoints(real["house"], grid, target, vps, comp, real["floor"])


@needs_house
def test_viewpoints_are_deterministic(real: dict[str, Any]) -> None:
    for rid in ("Fridge|2|1", "Safe|3|3", "CounterTop|2|0"):
        target = real["targets"][rid]
        a = orbit(real, target)
        b = orbit(real, target)
        fresh = {
            **real,
            "grid": house_nav_grid(real["house"], real["catalogue"]),
            "sight": WallSight(real["house"]),
        }
        c = orbit(fresh, target)
        assert a == b == c
        assert [v.to_dict() for v in a] == [v.to_dict() for v in c]
        d = a[0].to_dict()
        assert set(d) == {
            "azimuth_deg",
            "height",
            "position",
            "yaw_deg",
            "horizon_deg",
            "radius_m",
            "on_bearing",
            "sees_target",
            "bearing_deg",
            "height_m",
            "usable",
        }
        assert d["position"] == list(a[0].position) and d["height"] == "standing"


@needs_house
def test_wall_sight_on_the_real_house(real: dict[str, Any]) -> None:
    house, sight = real["house"], real["sight"]
    rng = np.random.default_rng(5)
    xs = [p[0] for r in house.rooms for p in r.floor_polygon]
    zs = [p[1] for r in house.rooms for p in r.floor_polygon]
    lo, hi = np.array([min(xs), min(zs)]), np.array([max(xs), max(zs)])
    clear = blocked = 0
    for _ in range(400):
        a, b = (tuple(rng.uniform(lo, hi)) for _ in range(2))
        want = not walls_between(house, a, b)
        assert sight.clear(a, b) == want, (a, b)
        clear += want
        blocked += not want
    assert clear > 40 and blocked > 40


@needs_house
def test_wall_sight_answers_many_points_at_once_as_one_at_a_time(real: dict[str, Any]) -> None:
    """clear_many and roomy_many (one STRtree query for all points, what the camera search
    uses) agree with clear and roomy point by point, both answers occurring."""
    house, catalogue = real["house"], real["catalogue"]
    sight = WallSight(house, catalogue)
    rng = np.random.default_rng(6)
    xs = [p[0] for r in house.rooms for p in r.floor_polygon]
    zs = [p[1] for r in house.rooms for p in r.floor_polygon]
    pts = rng.uniform([min(xs), min(zs)], [max(xs), max(zs)], size=(500, 2))
    a = tuple(pts[0])
    clear = sight.clear_many(a, pts[:, 0], pts[:, 1])
    roomy = sight.roomy_many(pts[:, 0], pts[:, 1])
    assert clear.tolist() == [sight.clear(a, p) for p in pts]
    assert roomy.tolist() == [sight.roomy(*p) for p in pts]
    assert 20 < clear.sum() < 480 and 20 < roomy.sum() < 480


# -- angles -------------------------------------------------------------------------------------


def test_look_at_angles_follow_ai2thor_conventions() -> None:
    eye = (1.0, 1.5, 2.0)
    for (dx, dy, dz), (yaw, horizon) in {
        (0, 0, 1): (0, 0),
        (1, 0, 0): (90, 0),
        (0, 0, -1): (180, 0),
        (-1, 0, 0): (270, 0),
        (1, 0, 1): (45, 0),
        (0, -1, 1): (0, 45),  # below: looks down, horizon > 0
        (0, 1, -1): (180, -45),
        (0, -1, 0): (0, MAX_HORIZON_DEG),  # straight down: clamped
        (0, 5, 0.001): (0, -MAX_HORIZON_DEG),
    }.items():
        got = look_at_angles(eye, (eye[0] + dx, eye[1] + dy, eye[2] + dz))
        assert got == pytest.approx((yaw, horizon), abs=1e-9), (dx, dy, dz)
    rng = np.random.default_rng(2)
    K = intrinsics(W, H)
    for _ in range(50):
        e, t = rng.uniform(-5, 5, 3), rng.uniform(-5, 5, 3)
        yaw, horizon = look_at_angles(e, t)
        assert 0 <= yaw < 360
        if abs(horizon) < MAX_HORIZON_DEG:
            uv, depth = project(t, K, thor_camera_pose(e, yaw, horizon))
            assert depth[0] > 0
            np.testing.assert_allclose(uv[0], [W / 2, H / 2], atol=1e-6)


# -- houses built in code ---------------------------------------------------------------------


def _xyz(x: float, y: float, z: float) -> dict[str, float]:
    return {"x": x, "y": y, "z": z}


def _wall(wid: str, room: str, a: tuple, b: tuple, empty: bool = False) -> dict[str, Any]:
    poly = [_xyz(a[0], 0, a[1]), _xyz(b[0], 0, b[1]), _xyz(b[0], 2.5, b[1]), _xyz(a[0], 2.5, a[1])]
    out: dict[str, Any] = {"id": wid, "roomId": room, "polygon": poly}
    if empty:
        out["empty"] = True
    return out


@pytest.fixture(scope="module")
def catalogue() -> Any:
    return load_catalogue()


def built(raw: dict[str, Any], catalogue: Any) -> dict[str, Any]:
    house = load_house(raw, name="built", catalogue=catalogue)
    return {
        "house": house,
        "grid": house_nav_grid(house, catalogue),
        "sight": WallSight(house),
        "floor": house_floor_y(house),
    }


def test_target_by_a_wall_is_not_seen_from_behind_it(catalogue: Any) -> None:
    world = built(two_rooms("door"), catalogue)
    house, grid = world["house"], world["grid"]
    comp = grid.largest_component()
    # one component: room B is reachable through the doorway (z 0.3..1.3), not elsewhere
    assert usable(grid, comp, 1.5, 3.0) and usable(grid, comp, 4.5, 3.0)
    assert usable(grid, comp, 3.0, 0.8) and not usable(grid, comp, 3.0, 3.0)
    target = (2.6, 0.8, 4.5)  # in room A, 0.4 m from the wall x = 3
    vps = orbit(world, target)
    check_viewpoints(house, grid, target, vps, comp, world["floor"])
    by_az = {v.azimuth_deg: v for v in vps if v.height_name == "standing"}
    # East (+x) of the target lies behind the wall: never there, though B is navigable
    for az in (45.0, 90.0, 135.0):
        v = by_az[az]
        assert not v.on_bearing and v.sees_target, v
        assert v.position[0] < 3.0 - grid.agent_radius + 1e-6, v
    # west (-x) the ideal distance is free: exactly on the bearing at the wanted radius
    v = by_az[270.0]
    assert v.on_bearing and v.radius_m == pytest.approx(RADIUS)
    assert v.position[0] == pytest.approx(target[0] - RADIUS) and v.position[2] == target[2]
    # the wall blocks the plan segment towards the ideal east camera
    assert not world["sight"].clear((2.6, 4.5), (4.1, 4.5))
    assert world["sight"].clear((2.6, 4.5), (1.1, 4.5))


def test_target_by_the_outer_wall_falls_back_inside(catalogue: Any) -> None:
    world = built(two_rooms("door"), catalogue)
    target = (0.45, 0.5, 3.0)  # 0.45 m from the outer wall x = 0
    vps = orbit(world, target)
    check_viewpoints(
        world["house"], world["grid"], target, vps, world["grid"].largest_component(), 0.0
    )
    for v in vps:
        assert v.position[0] > world["grid"].agent_radius - 1e-6
        if v.azimuth_deg in (225.0, 270.0, 315.0):  # their bearings leave the house at once
            assert not v.on_bearing and v.sees_target
        if v.azimuth_deg == 90.0:
            assert v.on_bearing and v.position[0] == pytest.approx(0.45 + RADIUS)


def test_an_open_boundary_does_not_block_the_view(catalogue: Any) -> None:
    """An ``empty`` wall (ProcTHOR's open boundary between rooms) is neither drawn nor an
    obstacle: cameras see through it."""
    world = built(two_rooms("empty"), catalogue)
    house, grid = world["house"], world["grid"]
    assert sum(w.empty for w in house.walls) == 2
    assert world["sight"].clear((2.6, 3.0), (4.1, 3.0))
    target = (2.6, 0.8, 3.0)  # the 1.5 m circle around it lies in the two rooms
    vps = orbit(world, target)
    check_viewpoints(house, grid, target, vps, grid.largest_component(), world["floor"])
    for v in vps:
        assert v.on_bearing and v.radius_m == pytest.approx(RADIUS), v
    east = next(v for v in vps if v.azimuth_deg == 90.0)
    assert east.position[0] == pytest.approx(4.1)  # in room B


def test_no_navigable_position_is_an_error(catalogue: Any) -> None:
    world = built(two_rooms("door"), catalogue)
    with pytest.raises(ValueError, match="no navigable position"):
        orbit(world, (1.5, 0.5, 3.0), component=999)


# -- separation, wall clearance, bearings, refused candidates ---------------------------------


def one_room() -> dict[str, Any]:
    """One 3 x 3 m room, [0, 3] x [0, 3], walls 2.5 m high."""
    corners = [(0.0, 0.0), (0.0, 3.0), (3.0, 3.0), (3.0, 0.0)]
    walls = [
        _wall(f"wall|R|{k}", "room|R", a, b)
        for k, (a, b) in enumerate(zip(corners, corners[1:] + corners[:1], strict=True))
    ]
    room = {
        "id": "room|R",
        "roomType": "LivingRoom",
        "floorPolygon": [_xyz(x, 0, z) for x, z in corners],
    }
    return {
        "rooms": [room],
        "walls": walls,
        "doors": [],
        "windows": [],
        "objects": [],
        "metadata": {"agent": {"position": _xyz(1.5, 0.95, 1.5)}},
    }


def test_target_near_a_wall_keeps_cameras_apart_and_records_bearings(catalogue: Any) -> None:
    world = built(one_room(), catalogue)
    target = (1.5, 0.8, 2.7)  # 0.3 m from the wall z = 3
    vps = orbit(world, target)
    check_viewpoints(
        world["house"], world["grid"], target, vps, world["grid"].largest_component(), 0.0
    )
    standing = {v.azimuth_deg: v for v in vps if v.height_name == "standing"}
    # Derived by hand. 135, 180, 225: the ideal camera (1.5 m on the bearing) is free and 0.44
    # m or more from every wall: on the bearing, bearing = azimuth.
    s = math.sqrt(0.5)
    want = {
        135.0: (1.5 + 1.5 * s, 2.7 - 1.5 * s, 135.0),
        180.0: (1.5, 1.2, 180.0),
        225.0: (1.5 - 1.5 * s, 2.7 - 1.5 * s, 225.0),
    }
    # 270: the bearing runs 0.3 m from the wall z = 3 (under 0.35 m), as does 275 (towards it);
    # the first turn that works is -5 degrees, 265: x = 1.5 - d sin 85, z = 2.7 - d cos 85, with
    # x >= 0.35 (the wall x = 0) for d <= 1.1544 and z <= 2.65 for d >= 0.574: of the 5 cm
    # distances the one nearest 1.5 is d = 1.15.
    d = 1.15
    c5, s5 = math.cos(math.radians(5.0)), math.sin(math.radians(5.0))
    want[270.0] = (1.5 - d * c5, 2.7 - d * s5, 265.0)
    for az, (x, z, bearing) in want.items():
        v = standing[az]
        assert v.position[0] == pytest.approx(x, abs=1e-6) and v.position[2] == pytest.approx(
            z, abs=1e-6
        ), v
        assert v.bearing_deg == pytest.approx(bearing, abs=1e-4)
        assert v.on_bearing == (az == bearing)
        assert v.bearing_deg == pytest.approx(
            math.degrees(math.atan2(x - target[0], z - target[2])) % 360.0, abs=1e-4
        )
    # cameras whose bearings lead behind the wall stand inside, 0.35 m from it and 20 cm apart
    for v in vps:
        assert v.position[2] <= 3.0 - WALL_CLEARANCE_M + 1e-9, v


def test_a_camera_against_a_wall_is_replaced(catalogue: Any) -> None:
    """With a thin agent (5 cm), the ideal camera 0.1 m from the wall z = 3 is navigable; it is
    replaced by the nearest distance on the bearing 0.35 m from the wall."""
    house = load_house(one_room(), name="built", catalogue=catalogue)
    grid = house_nav_grid(house, catalogue, agent_radius=0.05)
    target = (1.5, 0.8, 1.47)
    ideal = (1.5, 1.47 + 1.43)  # 0.1 m from the wall z = 3
    assert usable(grid, grid.largest_component(), *ideal)
    vps = orbit_viewpoints(
        grid, WallSight(house), target, floor_y=0.0, heights=HEIGHTS, radius=1.43
    )
    north = vps[0]
    # z = 1.47 + d <= 2.65 for d <= 1.18: of the 5 cm distances nearest 1.43, d = 1.15
    assert north.on_bearing and north.radius_m == pytest.approx(1.15)
    assert north.position[2] == pytest.approx(2.62) and north.bearing_deg == pytest.approx(0.0)


def test_a_refused_candidate_is_redrawn_else_kept_unusable(catalogue: Any) -> None:
    world = built(one_room(), catalogue)
    target = (1.5, 0.8, 1.5)
    shown: list[list[Viewpoint]] = []

    def refuse_first(group: list[Viewpoint]) -> bool:
        shown.append(group)
        return len([g for g in shown if g[0].azimuth_deg == group[0].azimuth_deg]) > 1

    vps = orbit(world, target, accept=one_by_one(refuse_first), batch=False)
    assert all(v.usable for v in vps)
    first, second = shown[0][0], shown[1][0]
    assert first.azimuth_deg == second.azimuth_deg == 0.0
    # the redraw is the next candidate at least 0.3 m from the refused one
    gap = math.hypot(first.position[0] - second.position[0], first.position[2] - second.position[2])
    assert gap >= 0.3 - 1e-9
    assert vps[0].position == second.position
    shown.clear()
    vps = orbit(world, target, accept=one_by_one(lambda g: shown.append(g) is not None))
    assert not any(v.usable for v in vps)
    per_az = [g for g in shown if g[0].azimuth_deg == 0.0]
    assert len(per_az) == 6  # MAX_TRIES
    assert vps[0].position == per_az[0][0].position  # the first candidate is kept


def one_by_one(judge: Callable[[list[Viewpoint]], bool]) -> Callable[..., list[bool]]:
    """An ``accept`` that judges each group shown on its own."""
    return lambda groups, first: [judge(g) for g in groups]


@pytest.mark.parametrize("seed", range(6))
def test_batched_search_places_what_the_one_at_a_time_search_places(
    catalogue: Any, seed: int
) -> None:
    """The batch shows the first candidates of all the azimuths left at once, each planned as if
    the ones before were kept; refusals (here a fixed pseudo-random verdict per position, about
    one in three refused) must leave the same cameras as trying one group at a time, in no more
    calls (one when nothing is refused)."""
    world = built(one_room(), catalogue)
    rng = np.random.default_rng(seed)
    target = (float(rng.uniform(1.0, 2.0)), 0.8, float(rng.uniform(1.0, 2.0)))

    def judge(group: list[Viewpoint]) -> bool:
        x, _, z = group[0].position
        return (round(x * 1000) * 7 + round(z * 1000) * 13 + seed) % 3 != 0

    calls = {True: 0, False: 0}
    shown: dict[bool, list[tuple[float, tuple[Viewpoint, ...], bool]]] = {True: [], False: []}

    def counted(batch: bool) -> Callable[..., list[bool]]:
        def accept(groups: list[list[Viewpoint]], first: bool) -> list[bool]:
            calls[batch] += 1
            shown[batch] += [(g[0].azimuth_deg, tuple(g), first) for g in groups]
            return [judge(g) for g in groups]

        return accept

    batched = orbit(world, target, accept=counted(True), azimuths=AZIMUTHS_8)
    single = orbit(world, target, accept=counted(False), azimuths=AZIMUTHS_8, batch=False)
    assert batched == single
    assert calls[True] <= calls[False]
    # no group is shown twice (a re-planned first candidate that came out the same keeps its
    # verdict), and what one-at-a-time marks as first candidates the batch marks so too
    assert len(set(shown[True])) == len(shown[True])
    assert {x for x in shown[False] if x[2]} <= {x for x in shown[True] if x[2]}
    sizes: list[int] = []

    def accept_all(groups: list[list[Viewpoint]], first: bool) -> list[bool]:
        sizes.append(len(groups))
        return [True] * len(groups)

    orbit(world, target, accept=accept_all)
    assert sizes == [8]  # nothing refused: every azimuth in one call
