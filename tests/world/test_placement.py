"""Spawning, placing and removing objects on real ProcTHOR houses."""

from __future__ import annotations

import json

import numpy as np
import pytest
from dfhelpers import SHARED

from dataforge.world import load_catalogue, load_house
from dataforge.world.boxes import object_box
from dataforge.world.graph import world_graph
from dataforge.world.placement import World

HOUSE = SHARED / "data" / "procthor_houses" / "house_746.json"
pytestmark = pytest.mark.skipif(
    not HOUSE.is_file(), reason="needs ../shared/data/procthor_houses, absent here"
)


@pytest.fixture
def world() -> World:
    cat = load_catalogue()
    return World(load_house(HOUSE, catalogue=cat), cat)


def first(world: World, object_type: str) -> str:
    return next(o.id for o in world.objects if o.object_type == object_type)


def overlaps(world: World, oid: str) -> list[str]:
    from dataforge.world.placement import _overlap

    box = world.box(oid)
    parent = world.object(oid).parent_id
    return [
        o.id
        for o in world.objects
        if o.id not in (oid, parent) and any(_overlap(box, b) for b in world._part_boxes(o.id))
    ]


def test_spawn_on_a_table_rests_on_its_top_without_collisions(world: World) -> None:
    table = first(world, "DiningTable")
    rng = np.random.default_rng(0)
    placed = []
    for _ in range(6):
        res = world.spawn("Apple_1", table, rng)
        assert res.status in ("placed", "collision", "no_free_space")
        if res.ok:
            placed.append(res.object_id)
    assert len(placed) >= 3
    top = world.box(table).top
    foot = world.box(table).footprint()
    for oid in placed:
        box = world.box(oid)
        assert abs(box.bottom - top) < 1e-6
        assert foot.buffer(1e-6).covers(box.footprint())
        assert overlaps(world, oid) == []
        assert world.object(oid).parent_id == table


def test_a_closed_fridge_is_opened_or_refused(world: World) -> None:
    fridge = first(world, "Fridge")
    rng = np.random.default_rng(1)
    refused = world.spawn("Apple_1", fridge, rng, auto_open=False)
    assert refused.status == "closed" and not refused.ok
    res = world.spawn("Apple_1", fridge, rng)
    assert res.ok and res.inside
    assert world.object(fridge).openness == 1.0
    inner, box = world.box(res.object_id), world.box(fridge)
    assert box.bottom < inner.bottom and inner.top < box.top
    # opened by placement only, it is drawn and listed shut; opened to be seen, it is open
    assert world.graph().receptacle(fridge).openness == 0.0
    inside = next(x for x in world.surfaces(fridge) if x.needs_open)
    assert world.open_surface(fridge, inside) == fridge
    assert world.graph().receptacle(fridge).openness == 1.0
    assert world.object(fridge).open_elements == (("door", 1.0),)


def test_a_drawer_opens_not_its_dresser_and_the_graph_and_house_json_say_so(
    world: World,
) -> None:
    dresser = first(world, "Dresser")
    rng = np.random.default_rng(4)
    shut = world.object(dresser)
    drawer = next(x for x in world.surfaces(dresser) if x.element == "Drawer_2")
    assert world.open_surface(dresser, drawer) == f"{dresser}|Drawer_2"
    assert world.open_surface(dresser, drawer) is None  # already open
    res = world.spawn("Apple_1", dresser, rng, surface="Drawer_2")
    assert res.ok and res.inside
    obj = world.object(dresser)
    assert obj.open_elements == (("Drawer_2", 1.0),) and obj.openness is None
    nodes = {r.id: r for r in world.graph().receptacles}
    assert nodes[f"{dresser}|Drawer_2"].openness == 1.0
    assert nodes[f"{dresser}|Drawer_1"].openness == 0.0 and nodes[dresser].openness == 0.0
    raw = next(o for o in world.house().to_json_dict()["objects"] if o["id"] == dresser)
    assert raw["openElements"] == {"Drawer_2": 1.0}
    # shut again as it was: nothing of it is written any more
    assert world.reclose(shut) == [f"{dresser}|Drawer_2"]
    raw = next(o for o in world.house().to_json_dict()["objects"] if o["id"] == dresser)
    assert "openElements" not in raw and world.object(dresser).open_elements == ()


def test_full_surfaces_and_non_receptacles_give_a_result_not_an_exception(world: World) -> None:
    rng = np.random.default_rng(2)
    chair = first(world, "Chair")
    res = world.spawn("Apple_1", first(world, "Mug"), rng)
    assert res.status in ("placed", "no_free_space", "collision")
    # a television is not a receptacle
    tv = next((o.id for o in world.objects if not world.is_receptacle(o.id)), None)
    assert tv is not None
    assert world.spawn("Apple_1", tv, rng).status == "not_a_receptacle"
    # a fridge-sized asset does not fit on a chair's box top
    big = world.spawn("Fridge_1", chair, rng, attempts=8)
    assert big.status == "no_free_space"


def test_remove_and_replace_restores_the_world_graph(world: World) -> None:
    before = world.graph().to_dict()
    child = next(o for o in world.objects if o.parent_id is not None and not world.children(o.id))
    removed = world.remove(child.id)
    assert [o.id for o in removed] == [child.id]
    after_remove = world.graph().to_dict()
    assert after_remove != before
    assert child.id not in json.dumps(after_remove)
    res = world.place_at(child, child.parent_id)
    assert res.ok, res
    assert world.graph().to_dict() == before


def test_moved_objects_are_written_back_as_children(world: World) -> None:
    rng = np.random.default_rng(3)
    table = first(world, "DiningTable")
    res = world.spawn("Apple_1", table, rng, object_id="Apple|test|0")
    assert res.ok
    house = world.house()
    raw = house.to_json_dict()
    table_raw = next(o for o in raw["objects"] if o["id"] == table)
    assert "Apple|test|0" in [c["id"] for c in table_raw.get("children", [])]
    box = object_box(house.object("Apple|test|0"), world.catalogue)
    assert np.allclose(box.center, res.position)


def test_a_removed_id_is_never_spawned_again(world: World) -> None:
    # Apple|spawned|0 is removed; the next apple is Apple|spawned|1, not a second object named
    # Apple|spawned|0 (a sequence's graphs would show one apple with a gap in its lifespan)
    table = first(world, "DiningTable")
    rng = np.random.default_rng(0)
    res = world.spawn("Apple_1", table, rng)
    assert res.ok and res.object_id == "Apple|spawned|0"
    world.remove(res.object_id)
    again = world.spawn("Apple_1", table, rng)
    assert again.ok and again.object_id == "Apple|spawned|1"


def test_the_house_after_changes_is_what_its_json_reads_as_and_is_kept_until_one(
    world: World,
) -> None:
    """World.house() builds the current house from its objects instead of re-reading JSON: after
    spawns, moves between receptacles, openings and removals, it equals load_house() of its own
    JSON (the objects, their order, the raw tree), and its graph (from boxes, surfaces and rooms
    kept per object record) is the graph of that house made afresh; both are the same objects
    until a change."""
    rng = np.random.default_rng(7)
    table = first(world, "DiningTable")
    receptacles = [o.id for o in world.objects if world.is_receptacle(o.id) and o.parent_id is None]
    assert world.house() is world.house() and world.graph() is world.graph()
    changes = 0
    for step in range(12):
        before, graph, objects = world.house(), world.graph(), world.objects
        if step % 4 == 0:
            world.spawn("Apple_1", table, rng)
        elif step % 4 == 1:
            moved = next(o for o in world.objects if o.parent_id is not None)
            world.remove(moved.id)
            world.place_at(moved, receptacles[int(rng.integers(len(receptacles)))])
        elif step % 4 == 2:
            openable = [o.id for o in world.objects if world.catalogue.asset(o.asset_id).openable]
            world.open(openable[step // 4], openness=0.5)
        else:
            gone = world.remove(next(o.id for o in world.objects if o.parent_id is not None))
            assert gone
        house = world.house()
        changed = world.objects != objects
        assert (house is not before) == changed and (world.graph() is not graph) == changed
        again = load_house(house.to_json_dict(), name=house.name, catalogue=world.catalogue)
        assert house == again  # rooms, walls, openings and every object, in order
        assert [o.id for o in house.objects] == [o.id for o in again.objects]
        assert house.raw == again.raw
        assert world.graph() == world_graph(again, world.catalogue)  # kept parts or not
        changes += changed
    assert changes >= 8
