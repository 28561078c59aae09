"""Object boxes (position and rotation conventions, checked on real data) and the world graph."""

from __future__ import annotations

import json
import math
from importlib.resources import files
from typing import Any

import numpy as np
import pytest
from dfhelpers import SHARED
from shapely.geometry import Point, Polygon

from dataforge.errors import MalformedInputError, UsageError
from dataforge.world import (
    OrientedBox,
    WorldGraph,
    load_catalogue,
    load_house,
    object_box,
    rotation_matrix,
    top_surface_cm2,
    world_graph,
    yaw_offset,
)
from dataforge.world.graph import GRAPH_FORMAT, ON_TOP_TOLERANCE_M

HOUSES = SHARED / "data" / "procthor_houses"
NAMES = ["procthor_train_1", "house_3703", "house_746"]
WALL_HUNG = ("Painting", "Television")  # ProcTHOR hangs these top-level objects on walls
needs_houses = pytest.mark.skipif(
    not HOUSES.is_dir(), reason=f"example ProcTHOR houses not present ({HOUSES})"
)


def house(name: str) -> Any:
    return load_house(HOUSES / f"{name}.json")


# -- boxes ----------------------------------------------------------------------------------------


def test_rotation_sense_and_matrix() -> None:
    # rotation.y = 90: the asset's +z (forward) turns to world +x, its +x to world -z
    assert yaw_offset(0, 1, 90) == pytest.approx((1, 0))
    assert yaw_offset(1, 0, 90) == pytest.approx((0, -1))
    for yaw in (0, 33.3, 90, 200, -71):
        m = rotation_matrix((0, yaw, 0))
        for dx, dz in ((1, 0), (0, 1), (0.3, -0.8)):
            x, _, z = m @ np.array([dx, 0.0, dz])
            assert (x, z) == pytest.approx(yaw_offset(dx, dz, yaw))
    m = rotation_matrix((18.7, 210.6, 25.3))
    assert m @ m.T == pytest.approx(np.eye(3)) and np.linalg.det(m) == pytest.approx(1)


def test_oriented_box() -> None:
    box = OrientedBox(center=(1.0, 0.5, 2.0), size=(2.0, 1.0, 0.5), yaw_deg=90)
    aabb = box.aabb()
    assert aabb.lo == pytest.approx((0.75, 0.0, 1.0)) and aabb.hi == pytest.approx((1.25, 1.0, 3.0))
    assert box.bottom == pytest.approx(0.0) and box.top == pytest.approx(1.0)
    assert box.footprint().area == pytest.approx(1.0)
    turned = OrientedBox((0, 0, 0), (1, 1, 1), yaw_deg=45)
    assert turned.aabb().size[0] == pytest.approx(math.sqrt(2))
    assert OrientedBox.from_dict(json.loads(json.dumps(box.to_dict()))) == box


def test_rotation_matches_ai2thor_boxes() -> None:
    """AI2-THOR's own object-oriented boxes (iTHOR scenes, in the procthor wheel) are reproduced
    by asset size + rotation; turning the other way is not."""
    cat = load_catalogue()
    meta = json.loads(
        (files("procthor") / "databases" / "ai2thor-object-metadata.json").read_bytes()
    )
    errors, wrong_sense = [], []
    for scenes in meta.values():
        for scene in scenes:
            for obj in scene:
                oobb = obj.get("objectOrientedBoundingBox")
                if not oobb or obj["assetId"] not in cat:
                    continue
                truth = np.array(oobb["cornerPoints"])
                size = np.array(cat.asset(obj["assetId"]).size)
                r = obj["rotation"]
                box = OrientedBox(tuple(truth.mean(0)), tuple(size), r["y"], r["x"], r["z"])
                errors.append(_corner_error(box.corners(), truth))
                tilted = abs(math.sin(math.radians(r["x"]))) + abs(math.sin(math.radians(r["z"])))
                off_axis = abs(math.sin(math.radians(2 * r["y"]))) > 0.3
                if tilted < 0.02 and off_axis and abs(size[0] - size[2]) > 0.02:
                    other = OrientedBox(box.center, box.size, -r["y"])
                    wrong_sense.append(_corner_error(other.corners(), truth))
    errors_a = np.array(errors)
    assert len(errors_a) > 4000
    assert np.mean(errors_a < 1e-3) > 0.95
    assert len(wrong_sense) > 500 and np.mean(np.array(wrong_sense) < 1e-2) < 0.05


def _corner_error(corners: np.ndarray, truth: np.ndarray) -> float:
    return float(max(np.linalg.norm(truth - c, axis=1).min() for c in corners))


@needs_houses
@pytest.mark.parametrize("name", NAMES)
def test_floor_objects_rest_on_the_floor(name: str) -> None:
    """position is the box centre: floor objects' boxes start at y = 0 (not at -size/2)."""
    cat = load_catalogue()
    floor = [o for o in house(name).top_level_objects() if o.object_type not in WALL_HUNG]
    assert len(floor) >= 10
    for obj in floor:
        assert abs(object_box(obj, cat).bottom) < 0.01, obj.id


@needs_houses
def test_children_rest_on_or_in_their_parent() -> None:
    """Children on a receptacle's top sit 0-6 cm above it (typically 0.5 cm); the rest are inside
    its box (shelves, fridge, seat), and every child stands over its parent's footprint."""
    cat = load_catalogue()
    gaps = []
    for name in NAMES:
        h = house(name)
        for child in h.objects:
            if child.parent_id is None:
                continue
            parent = object_box(h.object(child.parent_id), cat)
            box = object_box(child, cat)
            spot = Point(child.position[0], child.position[2])
            assert parent.footprint().buffer(0.01).covers(spot), child.id
            gap = box.bottom - parent.top
            if gap >= -ON_TOP_TOLERANCE_M:
                gaps.append(gap)
            else:
                assert parent.bottom - 0.01 <= box.bottom, child.id
    gaps_a = np.array(gaps)
    assert len(gaps_a) > 80
    assert gaps_a.max() < 0.065
    assert 0.0 <= np.median(gaps_a) <= 0.01


@needs_houses
@pytest.mark.parametrize("name", ["procthor_train_1", "house_3703"])
def test_chairs_face_their_tables(name: str) -> None:
    """ProcTHOR sets chairs around tables at arbitrary angles: with AI2-THOR's rotation sense the
    table lies ahead along each chair's local +z."""
    h = house(name)
    tables = [o for o in h.objects if o.object_type in ("DiningTable", "Desk", "CoffeeTable")]
    chairs = [o for o in h.objects if o.object_type == "Chair"]
    assert chairs
    for chair in chairs:
        table = min(tables, key=lambda t: math.dist(t.position, chair.position))
        dx = table.position[0] - chair.position[0]
        dz = table.position[2] - chair.position[2]
        right = yaw_offset(1, 0, chair.rotation[1])
        ahead = yaw_offset(0, 1, chair.rotation[1])
        bearing = math.degrees(
            math.atan2(dx * right[0] + dz * right[1], dx * ahead[0] + dz * ahead[1])
        )
        assert abs(bearing) < 30, chair.id


# -- free top surface -----------------------------------------------------------------------------


def test_top_surface_area() -> None:
    table = OrientedBox((0, 0.4, 0), (1.0, 0.8, 1.0), yaw_deg=30)
    cup = OrientedBox((0.1, 0.85, 0.1), (0.1, 0.1, 0.1), yaw_deg=10)
    assert top_surface_cm2(table, []) == (pytest.approx(10000), pytest.approx(10000))
    assert top_surface_cm2(table, [cup])[1] == pytest.approx(9900)
    twice = top_surface_cm2(table, [cup, cup])[1]
    assert twice == pytest.approx(9900)  # union, not a sum
    overhang = OrientedBox((2.0, 0.85, 0), (0.4, 0.1, 0.4))
    assert top_surface_cm2(table, [overhang])[1] == pytest.approx(10000)
    huge = OrientedBox((0, 0.9, 0), (3, 0.1, 3))
    assert top_surface_cm2(table, [huge])[1] == 0.0


@needs_houses
def test_free_area_decreases_with_a_child_on_it() -> None:
    cat = load_catalogue()
    raw = json.loads((HOUSES / "procthor_train_1.json").read_text())
    full = world_graph(load_house(raw, name="h"), cat)
    counter_id = raw["objects"][0]["id"]
    counter = full.receptacle(counter_id)
    assert counter.object_type == "CounterTop" and len(counter.on_top_ids) == 14
    assert 0 < counter.free_area_cm2 < counter.top_area_cm2
    raw["objects"][0]["children"] = raw["objects"][0]["children"][:1]
    one = world_graph(load_house(raw, name="h"), cat).receptacle(counter_id)
    del raw["objects"][0]["children"]
    bare = world_graph(load_house(raw, name="h"), cat).receptacle(counter_id)
    assert bare.free_area_cm2 == bare.top_area_cm2 == counter.top_area_cm2
    assert counter.free_area_cm2 < one.free_area_cm2 < bare.free_area_cm2


# -- the world graph ------------------------------------------------------------------------------


@needs_houses
@pytest.mark.parametrize("name", NAMES)
def test_world_graph(name: str) -> None:
    cat = load_catalogue()
    h = house(name)
    g = world_graph(h, cat)
    assert [r.id for r in g.rooms] == sorted(r.id for r in h.rooms)
    assert [o.id for o in g.objects] == sorted(o.id for o in h.objects)
    assert [r.id for r in g.receptacles] == sorted(r.id for r in g.receptacles)
    for room in g.rooms:
        assert room.area_m2 == pytest.approx(Polygon(room.polygon).area) and room.area_m2 > 4
    for obj in g.objects:  # rooms contain their objects
        assert obj.room_id is not None, obj.id
        assert Polygon(g.room(obj.room_id).polygon).covers(Point(obj.position[0], obj.position[2]))
        src = h.object(obj.id)
        assert (obj.parent_id, obj.position, obj.asset_id) == (
            src.parent_id,
            src.position,
            src.asset_id,
        )
        if obj.parent_id is not None:
            assert obj.parent_id in {r.id for r in g.receptacles}
            assert obj.room_id == g.object(obj.parent_id).room_id
    for rec in g.receptacles:
        assert 0 <= rec.free_area_cm2 <= rec.top_area_cm2
        assert set(rec.on_top_ids) <= set(rec.child_ids)
        assert all(lo < hi for lo, hi in zip(rec.aabb.lo, rec.aabb.hi, strict=True))
        assert (rec.free_area_cm2 < rec.top_area_cm2) == bool(rec.on_top_ids)
    assert {o.room_id for o in g.objects} <= {r.id for r in g.rooms}
    counts = {r.id: len(g.objects_in_room(r.id)) for r in g.rooms}
    assert sum(counts.values()) == len(g.objects)


@needs_houses
@pytest.mark.parametrize("name", NAMES)
def test_world_graph_round_trips(name: str) -> None:
    cat = load_catalogue()
    g = world_graph(house(name), cat)
    text = json.dumps(g.to_dict(), sort_keys=True)
    back = WorldGraph.from_dict(json.loads(text))
    assert back == g
    assert json.dumps(back.to_dict(), sort_keys=True) == text
    assert json.dumps(world_graph(house(name), cat).to_dict(), sort_keys=True) == text


def test_world_graph_errors() -> None:
    with pytest.raises(MalformedInputError, match="format"):
        WorldGraph.from_dict({"format": 99})
    with pytest.raises(MalformedInputError, match="malformed"):
        WorldGraph.from_dict({"format": GRAPH_FORMAT, "house": "h", "rooms": [{"id": "r"}]})
    empty = WorldGraph("h", (), (), ())
    assert WorldGraph.from_dict(empty.to_dict()) == empty
    with pytest.raises(UsageError, match="no room 'r'"):
        empty.room("r")
