"""Loading ProcTHOR houses: real example houses, and one-line errors for malformed ones."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from dfhelpers import SHARED
from shapely.geometry import LineString

from dataforge.errors import InputNotFoundError, MalformedInputError, UsageError
from dataforge.world import House, Room, Wall, load_catalogue, load_house, object_box
from dataforge.world.house import ROOM_OVERLAP_M2, overlapping_rooms

HOUSES = SHARED / "data" / "procthor_houses"
NAMES = ["procthor_train_1", "house_3703", "house_746"]
needs_houses = pytest.mark.skipif(
    not HOUSES.is_dir(), reason=f"example ProcTHOR houses not present ({HOUSES})"
)


def raw_house(name: str) -> dict[str, Any]:
    return json.loads((HOUSES / f"{name}.json").read_text())


def count_objects(objects: list[dict[str, Any]]) -> int:
    return sum(1 + count_objects(o.get("children", [])) for o in objects)


def tiny_house() -> dict[str, Any]:
    """A one-room house of real assets: a table with an apple on it, one window."""
    cat = load_catalogue()
    table, apple = cat.asset("RoboTHOR_dining_table_jokkmokk_v"), cat.asset("Apple_1")
    ty, ay = table.size[1], apple.size[1]

    def corner(x: float, y: float, z: float) -> dict[str, float]:
        return {"x": x, "y": y, "z": z}

    def wall(wid: str, room: str, a: tuple[float, float], b: tuple[float, float]) -> dict:
        poly = [corner(a[0], 0, a[1]), corner(b[0], 0, b[1])]
        poly += [corner(a[0], 2.5, a[1]), corner(b[0], 2.5, b[1])]
        return {"id": wid, "roomId": room, "polygon": poly, "material": {"name": "PureWhite"}}

    return {
        "rooms": [
            {
                "id": "room|1",
                "roomType": "Kitchen",
                "floorPolygon": [
                    corner(0, 0, 0),
                    corner(0, 0, 4),
                    corner(4, 0, 4),
                    corner(4, 0, 0),
                ],
            }
        ],
        "walls": [
            wall("wall|1|0.00|0.00|4.00|0.00", "room|1", (0, 0), (4, 0)),
            wall("wall|exterior|0.00|0.00|4.00|0.00", "exterior", (4, 0), (0, 0)),
        ],
        "doors": [],
        "windows": [
            {
                "id": "window|1|0",
                "assetId": "Window_Hung_32x60",
                "room0": "room|1",
                "room1": "room|1",
                "wall0": "wall|1|0.00|0.00|4.00|0.00",
                "wall1": "wall|exterior|0.00|0.00|4.00|0.00",
                "holePolygon": [corner(1.0, 0.8, 0), corner(1.8, 2.0, 0)],
            }
        ],
        "objects": [
            {
                "id": "DiningTable|1|0",
                "assetId": table.asset_id,
                "kinematic": True,
                "position": corner(2, ty / 2, 2),
                "rotation": corner(0, 90, 0),
                "children": [
                    {
                        "id": "Apple|surface|1|0",
                        "assetId": apple.asset_id,
                        "kinematic": False,
                        "position": corner(2.1, ty + ay / 2, 2.0),
                        "rotation": corner(0, 0, 0),
                    }
                ],
            }
        ],
        "metadata": {"schema": "1.0.0"},
    }


# -- the example houses ---------------------------------------------------------------------------


@needs_houses
@pytest.mark.parametrize("name", NAMES)
def test_counts_match_the_raw_json(name: str) -> None:
    raw = raw_house(name)
    house = load_house(HOUSES / f"{name}.json")
    assert house.name == name
    assert len(house.rooms) == len(raw["rooms"])
    assert len(house.walls) == len(raw["walls"])
    assert len(house.doors) == len(raw["doors"])
    assert len(house.windows) == len(raw["windows"])
    assert len(house.objects) == count_objects(raw["objects"])
    assert len(house.top_level_objects()) == len(raw["objects"])
    nested = sum(len(o.get("children", [])) for o in raw["objects"])
    assert sum(o.parent_id is not None for o in house.objects) == nested


@needs_houses
@pytest.mark.parametrize("name", NAMES)
def test_house_writes_back_unchanged(name: str) -> None:
    path = HOUSES / f"{name}.json"
    house = load_house(path)
    assert house.to_json_dict() == json.loads(path.read_text())
    house.to_json_dict()["rooms"].clear()  # a copy: the house keeps its raw JSON
    assert len(house.raw["rooms"]) == len(house.rooms)
    again = load_house(house.to_json_dict(), name=name)
    assert again == house


@needs_houses
def test_records_carry_the_raw_fields() -> None:
    raw = raw_house("procthor_train_1")
    house = load_house(HOUSES / "procthor_train_1.json")
    room = house.room("room|2")
    assert room.room_type == "Kitchen" and room.floor_y == 0.0
    assert room.polygon_xz.shape == (len(raw["rooms"][0]["floorPolygon"]), 2)
    first = raw["objects"][0]
    counter = house.object(first["id"])
    assert counter.object_type == "CounterTop" and counter.parent_id is None
    assert counter.position == tuple(first["position"][a] for a in "xyz")
    kids = house.children(first["id"])
    assert [k.id for k in kids] == [c["id"] for c in first["children"]]
    assert all(k.parent_id == counter.id for k in kids)
    for rec in (room, house.walls[0], house.doors[0], counter):
        assert type(rec).from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
    with pytest.raises(UsageError, match="no object 'nope'"):
        house.object("nope")


@needs_houses
@pytest.mark.parametrize("name", NAMES)
def test_walls_are_planes_whose_sides_run_opposite(name: str) -> None:
    house = load_house(HOUSES / f"{name}.json")
    ends = {(w.start, w.end) for w in house.walls}
    assert len(house.walls) >= 4 and house.openings  # each example house has doors too
    for w in house.walls:
        assert w.thickness == 0.0 and w.height > 2.0 and w.length > 0.1
        # the id spells the segment: wall|<room>|x0|z0|x1|z1 (2 decimals, sorted)
        coords = [float(v) for v in w.id.split("|")[2:]]
        xs, zs = sorted((w.start[0], w.end[0])), sorted((w.start[1], w.end[1]))
        assert coords == pytest.approx([xs[0], zs[0], xs[1], zs[1]], abs=0.006)
        assert (w.end, w.start) in ends  # the other side of the plane
    for op in house.openings:
        w0, w1 = house.wall(op.wall_ids[0]), house.wall(op.wall_ids[1])
        assert (w0.start, w0.end) == (w1.end, w1.start)
        assert 0 <= op.offset_range[0] < op.offset_range[1] <= w0.length + 1e-6
        assert 0 <= op.y_range[0] < op.y_range[1] <= w0.height
        a, b = house.opening_segment(op)
        assert math.dist(a, b) == pytest.approx(op.width)
        assert LineString([w0.start, w0.end]).distance(LineString([a, b])) < 1e-9


@needs_houses
@pytest.mark.parametrize("name", NAMES)
def test_door_holes_are_measured_from_wall0_start(name: str) -> None:
    """ProcTHOR keeps floor furniture out of doorways: with the hole measured from wall0's start no
    floor object comes within 0.4 m of a door; measured from the other end, some do."""
    cat = load_catalogue()
    house = load_house(HOUSES / f"{name}.json")
    floor = [
        object_box(o, cat).footprint()
        for o in house.top_level_objects()
        if o.object_type not in ("Painting", "Television")  # hung on walls
    ]
    wrong_hits = 0
    for door in house.doors:
        wall = house.wall(door.wall_ids[0])
        lo, hi = door.offset_range
        for a, b, right in ((lo, hi, True), (wall.length - hi, wall.length - lo, False)):
            strip = LineString([wall.point_at(a), wall.point_at(b)]).buffer(0.4, cap_style="flat")
            hits = sum(f.intersects(strip) for f in floor)
            if right:
                assert hits == 0, door.id
            else:
                wrong_hits += hits
    assert wrong_hits > 0


@needs_houses
def test_both_hole_spellings_load() -> None:
    """Schema 1.0.0 houses give holePolygon, 0.0.1 houses boundingBox min/max."""
    cat = load_catalogue()
    seen = {"boundingBox": 0, "holePolygon": 0, "width": 0, "assetOffset": 0}
    for name in NAMES:
        raw = raw_house(name)
        house = load_house(raw, name=name)
        for entry, op in zip(raw["doors"] + raw["windows"], house.openings, strict=True):
            seen["boundingBox" if "boundingBox" in entry else "holePolygon"] += 1
            box = entry.get("boundingBox") or {
                "min": entry["holePolygon"][0],
                "max": entry["holePolygon"][1],
            }
            assert op.offset_range == (box["min"]["x"], box["max"]["x"])
            assert op.y_range == (box["min"]["y"], box["max"]["y"])
            hole = cat.asset(op.asset_id).hole
            if hole is not None:  # Doorframe_* assets have no entry in wall-holes.json
                assert op.width == pytest.approx(hole.hi[0] - hole.lo[0], abs=0.015)
                seen["width"] += 1
            if "assetOffset" in entry and hole is not None:
                assert tuple(entry["assetOffset"][a] for a in "xyz") == hole.offset
                seen["assetOffset"] += 1
    # house_746 (0.0.1): 9 boxes, 8 offsets; the two 1.0.0 houses: 19 polygons
    assert seen["boundingBox"] >= 5 and seen["holePolygon"] >= 5, seen
    assert seen["width"] >= 10 and seen["assetOffset"] >= 5, seen


# -- malformed houses (no example data needed) ----------------------------------------------------


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "house.json"
    path.write_text(json.dumps(data))
    return path


def expect_error(tmp_path: Path, data: Any, message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(MalformedInputError) as info:
        load_house(path)
    text = str(info.value)
    assert "\n" not in text
    assert text == f"{path}: {message}"


def test_tiny_house_loads() -> None:
    house = load_house(tiny_house(), name="tiny")
    assert isinstance(house, House)
    assert [o.id for o in house.objects] == ["DiningTable|1|0", "Apple|surface|1|0"]
    assert house.objects[1].parent_id == "DiningTable|1|0"
    assert house.objects[1].object_type == "Apple"
    assert isinstance(house.rooms[0], Room) and isinstance(house.walls[0], Wall)
    assert house.walls[1].start == (4.0, 0.0) and house.walls[1].room_id == "exterior"
    assert house.windows[0].kind == "window" and house.windows[0].y_range == (0.8, 2.0)
    assert house.walls[0].material == "PureWhite" and house.walls[0].color is None


def test_floor_area_sums_the_rooms() -> None:
    """The tiny house's one room is 4 m x 4 m; an L-shaped second room beside it (3 x 4 less a
    1 x 2 notch) adds 10 m^2 (by hand)."""
    raw = tiny_house()
    assert load_house(copy.deepcopy(raw), name="tiny").floor_area == pytest.approx(16.0)
    ell = [(4, 0), (7, 0), (7, 4), (5, 4), (5, 2), (4, 2)]
    raw["rooms"].append(
        {
            "id": "room|2",
            "roomType": "Bedroom",
            "floorPolygon": [{"x": x, "y": 0, "z": z} for x, z in ell],
        }
    )
    assert load_house(raw, name="tiny").floor_area == pytest.approx(26.0)


def test_missing_top_level_key(tmp_path: Path) -> None:
    data = tiny_house()
    del data["rooms"]
    expect_error(tmp_path, data, "missing 'rooms'")


def test_missing_room_field(tmp_path: Path) -> None:
    data = tiny_house()
    del data["rooms"][0]["roomType"]
    expect_error(tmp_path, data, "rooms[0]: missing 'roomType'")


def test_wrong_type(tmp_path: Path) -> None:
    data = tiny_house()
    data["objects"][0]["position"]["x"] = "2.0"
    expect_error(tmp_path, data, "objects[0].position.x: expected a number, got a string")
    data = tiny_house()
    data["walls"] = {"not": "a list"}
    expect_error(tmp_path, data, "walls: expected a list, got an object")
    data = tiny_house()
    data["objects"][0]["kinematic"] = "yes"
    expect_error(tmp_path, data, "objects[0].kinematic: expected true or false, got a string")


def test_nested_child_field(tmp_path: Path) -> None:
    data = tiny_house()
    child = data["objects"][0]["children"][0]
    data["objects"][0]["children"].append(copy.deepcopy(child) | {"id": "Apple|2"})
    del data["objects"][0]["children"][1]["position"]["y"]
    expect_error(tmp_path, data, "objects[0].children[1].position: missing 'y'")


@needs_houses
def test_nested_child_field_in_a_real_house(tmp_path: Path) -> None:
    data = raw_house("procthor_train_1")
    k = next(i for i, o in enumerate(data["objects"]) if i >= 3 and len(o.get("children", [])) > 1)
    del data["objects"][k]["children"][1]["position"]["y"]
    expect_error(tmp_path, data, f"objects[{k}].children[1].position: missing 'y'")


def test_bad_references(tmp_path: Path) -> None:
    data = tiny_house()
    data["objects"][0]["children"][0]["assetId"] = "Apple_999"
    expect_error(
        tmp_path,
        data,
        "objects[0].children[0].assetId: unknown asset 'Apple_999' "
        "(not in ProcTHOR's asset database)",
    )
    data = tiny_house()
    data["windows"][0]["wall1"] = "wall|nowhere"
    expect_error(tmp_path, data, "windows[0].wall1: unknown wall 'wall|nowhere'")
    data = tiny_house()
    data["objects"].append(copy.deepcopy(data["objects"][0]))
    expect_error(tmp_path, data, "objects: duplicate id 'DiningTable|1|0'")
    data = tiny_house()
    del data["windows"][0]["holePolygon"]
    expect_error(tmp_path, data, "windows[0]: missing 'holePolygon' or 'boundingBox'")


def _square_room(rid: str, x0: float, z0: float, side: float) -> dict[str, Any]:
    corners = [(x0, z0), (x0, z0 + side), (x0 + side, z0 + side), (x0 + side, z0)]
    return {
        "id": rid,
        "roomType": "Bedroom",
        "floorPolygon": [{"x": x, "y": 0, "z": z} for x, z in corners],
    }


def test_overlapping_rooms_are_refused_naming_both(tmp_path: Path) -> None:
    """A duplicated room (same polygon, new id) and a room reaching 1 m into another are refused
    with the shared floor; rooms that share a wall or a corner are fine."""
    data = tiny_house()
    data["rooms"].append(copy.deepcopy(data["rooms"][0]) | {"id": "room|copy"})
    expect_error(
        tmp_path, data, "rooms: rooms 'room|1' and 'room|copy' overlap (16 m^2 of shared floor)"
    )
    data = tiny_house()  # room|1 is x, z in [0, 4]: a 2 x 2 room at x 3..5 shares 1 x 2 m
    data["rooms"] += [_square_room("room|east", 3, 1, 2)]
    expect_error(
        tmp_path, data, "rooms: rooms 'room|1' and 'room|east' overlap (2 m^2 of shared floor)"
    )
    data = tiny_house()
    data["rooms"] += [_square_room("room|wall", 4, 0, 4), _square_room("room|corner", 8, 4, 1)]
    house = load_house(write(tmp_path, data))
    assert [r.id for r in house.rooms] == ["room|1", "room|wall", "room|corner"]


def test_overlapping_rooms_function() -> None:
    def room(rid: str, x0: float, z0: float, side: float) -> Room:
        s = _square_room(rid, x0, z0, side)
        return Room(rid, "Bedroom", tuple((c["x"], c["z"]) for c in s["floorPolygon"]))

    a, b, c = room("a", 0, 0, 2), room("b", 2, 0, 2), room("c", 1.5, 1.5, 1)
    assert overlapping_rooms([a, b]) is None  # a shared wall
    assert overlapping_rooms([a]) is None and overlapping_rooms([]) is None
    # c reaches 0.5 x 0.5 m into a and 0.5 x 0.5 m into b: the first pair in order is reported
    found = overlapping_rooms([a, b, c])
    assert found is not None and (found[0].id, found[1].id) == ("a", "c")
    assert found[2] == pytest.approx(0.25)
    sliver = room("s", 2 - ROOM_OVERLAP_M2 / 4, 0, 2)  # rounding: 2.5e-5 x 2 m shared
    assert overlapping_rooms([a, sliver]) is None
    # a self-crossing (bow-tie) floor is compared by the area it covers, without an error
    bowtie = Room("t", "Bedroom", ((0, 0), (2, 2), (2, 0), (0, 2)))
    found = overlapping_rooms([bowtie, a])
    assert found is not None and found[2] == pytest.approx(2.0)


def test_absurd_coordinates_are_range_errors(tmp_path: Path) -> None:
    """A wall, room corner, hole or object 1e9 m away is a malformed house (it would squash the
    map), named by field and with the limit; non-finite numbers are refused too."""
    limit = "coordinate 1e+09 m is out of range (at most 10000 m from the origin)"
    data = tiny_house()
    data["walls"][0]["polygon"][1]["x"] = 1e9
    expect_error(tmp_path, data, f"walls[0].polygon[1].x: {limit}")
    data = tiny_house()
    data["rooms"][0]["floorPolygon"][2]["z"] = -1e9
    expect_error(tmp_path, data, f"rooms[0].floorPolygon[2].z: {limit.replace('1e+09', '-1e+09')}")
    data = tiny_house()
    data["objects"][0]["children"][0]["position"]["y"] = 1e9
    expect_error(tmp_path, data, f"objects[0].children[0].position.y: {limit}")
    data = tiny_house()
    data["windows"][0]["holePolygon"][1]["x"] = 1e9
    expect_error(tmp_path, data, f"windows[0].holePolygon[1].x: {limit}")
    data = tiny_house()
    data["walls"][0]["polygon"][1]["x"] = math.inf  # json writes Infinity, Python reads it
    expect_error(tmp_path, data, "walls[0].polygon[1].x: expected a finite number, got inf")
    data = tiny_house()  # far but plausible, and rotations are not coordinates
    for corner in data["walls"][0]["polygon"]:
        corner["z"] = 9999.0
    data["objects"][0]["rotation"]["y"] = 3600.0
    load_house(data)


def test_wall_holes_are_measured_along_either_side() -> None:
    house = load_house(tiny_house())
    inner, outer = house.walls  # the same plane, running (0,0)->(4,0) and (4,0)->(0,0)
    assert house.wall_holes(inner) == [pytest.approx((1.0, 1.8, 0.8, 2.0))]
    assert house.wall_holes(outer) == [pytest.approx((2.2, 3.0, 0.8, 2.0))]
    lone = copy.deepcopy(tiny_house())
    lone["windows"] = []
    assert load_house(lone).wall_holes(inner) == []


def test_bad_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(InputNotFoundError) as info:
        load_house(missing)
    assert isinstance(info.value, FileNotFoundError) and str(missing) in str(info.value)
    path = tmp_path / "house.json"
    path.write_text("{not json")
    with pytest.raises(MalformedInputError, match="not valid JSON"):
        load_house(path)
    expect_error(tmp_path, [1, 2], "expected an object, got a list")


def test_dict_source_is_copied() -> None:
    data = tiny_house()
    house = load_house(data)
    data["rooms"].clear()
    assert house.to_json_dict() == tiny_house()
    assert house.name == "house"
