"""Rendered shaped geometry: what a camera sees of shelves, drawers, tables, doors and windows."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from dfhelpers import SHARED
from renderhelpers import needs_egl
from roomhelpers import one_room_house, standing

from dataforge.render import backproject, project, thor_camera_pose
from dataforge.simulators import EmbeddedWorld
from dataforge.world import load_catalogue, load_house
from dataforge.world.materials import SKY_COLOR
from dataforge.world.navigation import closed_door_ids
from dataforge.world.validity import check_house

CAT = load_catalogue()
HOUSE = SHARED / "data" / "procthor_houses" / "house_746.json"
pytestmark = needs_egl()


def _world(*objects: dict, w: int = 320, h: int = 240) -> EmbeddedWorld:
    house = load_house(one_room_house(list(objects)), catalogue=CAT)
    return EmbeddedWorld(house, CAT, width=w, height=h, vfov_deg=60.0)


def test_a_book_on_a_middle_shelf_is_seen_from_in_front() -> None:
    unit = max(CAT.assets_of("ShelvingUnit"), key=lambda a: a.size[1])
    world = _world(standing(CAT, "Shelf|1", unit.asset_id, 3.0, 0.4))
    shelves = sorted(
        (s for s in world.world.surfaces("Shelf|1") if s.kind == "shelf"), key=lambda s: s.y
    )
    middle = shelves[len(shelves) // 2]
    res = world.spawn("Book_1", "Shelf|1", np.random.default_rng(0), surface=middle.index)
    assert res.ok
    frame = world.render((3.0, middle.y + 0.1, 2.6), yaw=180.0, horizon=0.0)
    book = world.scene.instance_of(res.object_id)
    assert (frame.instance == book).sum() > 30
    # depth where the book is seen unprojects onto the book's box (exact depth on shapes)
    cam = thor_camera_pose((3.0, middle.y + 0.1, 2.6), 180.0, 0.0)
    vs, us = np.nonzero(frame.instance == book)
    pts = backproject(np.column_stack([us, vs]), frame.depth[vs, us], world._renderer.K, cam)
    box = world.world.box(res.object_id).aabb()
    assert np.all(pts >= np.asarray(box.lo) - 0.01) and np.all(pts <= np.asarray(box.hi) + 0.01)


def test_drawers_are_instances_of_their_own_with_the_drawer_class() -> None:
    dresser = CAT.assets_of("Dresser")[0]
    world = _world(standing(CAT, "Dresser|1", dresser.asset_id, 3.0, 0.4))
    frame = world.render((3.0, dresser.size[1] / 2, 2.2), yaw=180.0, horizon=0.0)
    scene = world.scene
    drawer = scene.instance_of("Dresser|1|Drawer_1")
    assert (frame.instance == drawer).sum() > 20
    assert scene.instances[drawer].label == "Drawer"
    assert np.all(frame.semantic[frame.instance == drawer] == scene.semantics.id("Drawer"))
    assert (frame.instance == scene.instance_of("Dresser|1")).sum() > 0


def test_the_floor_shows_between_a_tables_legs() -> None:
    legged = [a for a in CAT.assets_of("DiningTable")]
    info = legged[0]
    world = _world(standing(CAT, "Table|1", info.asset_id, 3.0, 3.0))
    eye_y = 0.3
    frame = world.render((3.0, eye_y, 3.0 + info.size[2] / 2 + 1.5), yaw=180.0, horizon=0.0)
    table = world.scene.instance_of("Table|1")
    cam = thor_camera_pose((3.0, eye_y, 3.0 + info.size[2] / 2 + 1.5), 180.0, 0.0)
    ends = np.array(
        [
            [3.0 - info.size[0] / 2, eye_y, 3.0 + info.size[2] / 2],
            [3.0 + info.size[0] / 2, eye_y, 3.0 + info.size[2] / 2],
        ]
    )
    uv, _ = project(ends, world._renderer.K, cam)
    u0, u1 = sorted(round(u) for u in uv[:, 0])
    row = frame.instance[
        frame.instance.shape[0] // 2, max(u0, 0) : min(u1, frame.instance.shape[1])
    ]
    assert row.size > 20
    assert 0.0 < np.mean(row == table) < 0.5  # legs (or a pedestal), not a solid block


@pytest.mark.skipif(not HOUSE.is_file(), reason="needs ../shared/data/procthor_houses")
def test_windows_have_panes_of_their_own_and_doors_have_leaves() -> None:
    """A window wall seen at 64x48 from 1.2 m: inside the window hole's projected box no pixel
    has depth 0 (no hole onto the background), and the panes are the window's own instance."""
    house = load_house(HOUSE, catalogue=CAT)
    world = EmbeddedWorld(house, CAT, width=64, height=48, vfov_deg=60.0)
    scene = world.scene
    assert {"Window", "Doorway"} <= {info.label for info in scene.instances.values()}
    window = house.windows[0]
    a, b = (np.asarray(p) for p in house.opening_segment(window))
    mid = (a + b) / 2
    wall = house.wall(window.wall_ids[0])
    d = (np.asarray(wall.end) - np.asarray(wall.start)) / wall.length
    normal = np.array([-d[1], d[0]])
    room = house.room(window.room_ids[0])
    from shapely.geometry import Point, Polygon

    inward = normal if Polygon(room.polygon_xz).contains(Point(*(mid + 0.3 * normal))) else -normal
    eye = mid + 1.2 * inward
    yaw = float(np.degrees(np.arctan2(-inward[0], -inward[1])))  # face the window
    floor = wall.y_min
    y0, y1 = (floor + v for v in window.y_range)
    frame = world.render((eye[0], (y0 + y1) / 2, eye[1]), yaw, 0.0)
    corners = np.array([[p[0], y, p[1]] for p in (a, b) for y in (y0, y1)])
    cam = thor_camera_pose((eye[0], (y0 + y1) / 2, eye[1]), yaw, 0.0)
    uv, _ = project(corners, world._renderer.K, cam)
    u0, v0 = np.clip(np.ceil(uv.min(axis=0)).astype(int), 0, [63, 47])
    u1, v1 = np.clip(np.floor(uv.max(axis=0)).astype(int), 0, [63, 47])
    assert u1 - u0 >= 5 and v1 - v0 >= 5  # the hole covers a good part of the image
    box = (slice(v0, v1 + 1), slice(u0, u1 + 1))
    assert np.all(frame.depth[box] > 0)
    win = scene.instance_of(window.id)
    assert np.mean(frame.instance[box] == win) > 0.9  # panes and frame, nothing behind
    glass = (frame.instance == win) & np.all(frame.rgb == np.asarray(SKY_COLOR, np.uint8), -1)
    assert not glass.any()  # the background colour shows nowhere in the window


@pytest.mark.skipif(not HOUSE.is_file(), reason="needs ../shared/data/procthor_houses")
def test_closed_doors_block_navigation() -> None:
    raw = json.loads(HOUSE.read_text())
    house = load_house(raw, catalogue=CAT)
    assert check_house(house, CAT).ok
    closed = copy.deepcopy(raw)
    for door in closed["doors"]:
        door["openness"] = 0
    shut = load_house(closed, catalogue=CAT)
    leaves = closed_door_ids(shut, CAT)
    assert leaves and all(shut.opening(d).asset_id.startswith("Doorway") for d in leaves)
    check = check_house(shut, CAT)
    assert any("reachable positions" in p for p in check.problems)


def test_an_open_drawer_is_drawn_pulled_out_and_a_shut_one_is_not() -> None:
    """Dresser_205_1 (1.2043 x 0.6970 x 0.3796 m) is wider than 1.1 m: two columns of drawers,
    each (w - 0.04) / 2 = 0.5822 m wide; ``Drawer_2`` is the top row's right one, x from
    -w/2 + 0.02 + 0.5822 = 0 to 0.5822 (its front 4 mm inside that: 0.004..0.578), z from
    -d/2 + 0.03 to the front face d/2 = 0.1898. Open, it slides out 0.7 x its depth
    (0.7 x 0.3496 = 0.2447 m): its front's outer face at z = 0.4345. Standing at (3, 0.4), the
    carcass face is at world z 0.4 + 0.1898 - 0.02 = 0.5698 and the open front at 0.8345."""
    dresser = CAT.asset("Dresser_205_1")
    w, _, d = dresser.size
    cw = (w - 0.04) / 2
    face, travel = d / 2, 0.7 * (d - 0.03)
    world = _world(standing(CAT, "Dresser|1", dresser.asset_id, 3.0, 0.4), w=64, h=48)
    eye = (3.0 + cw / 2, 1.1, 1.7)

    def drawer_points() -> np.ndarray:
        frame = world.render(eye, yaw=180.0, horizon=25.0)
        vs, us = np.nonzero(frame.instance == world.scene.instance_of("Dresser|1|Drawer_2"))
        cam = thor_camera_pose(eye, 180.0, 25.0)
        return backproject(np.column_stack([us, vs]), frame.depth[vs, us], world._renderer.K, cam)

    shut = drawer_points()
    assert len(shut) > 5 and shut[:, 2].max() <= 0.4 + face + 0.005
    assert world.world.open_element("Dresser|1", "Drawer_2")
    world._changed()
    pulled = drawer_points()
    assert len(pulled) > len(shut)
    front = 0.4 + face + travel
    assert abs(pulled[:, 2].max() - front) < 0.01
    assert np.mean(pulled[:, 2] > 0.4 + face - 0.02 + 0.01) > 0.5  # in front of the carcass
    assert pulled[:, 0].min() >= 3.0 + 0.004 - 0.01 and pulled[:, 0].max() <= 3.0 + cw + 0.01
    world.close()
