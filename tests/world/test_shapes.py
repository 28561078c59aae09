"""Archetype shapes of the whole catalogue, furniture surfaces, and placement on them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from roomhelpers import one_room_house, standing

from dataforge.errors import UsageError
from dataforge.world import load_catalogue, load_house
from dataforge.world.archetypes import archetype_of, covered_types, shape_of
from dataforge.world.placement import World
from dataforge.world.shapes import SUB_RECEPTACLE_TYPES, ShapeBuilder
from dataforge.world.surfaces import object_surfaces

CAT = load_catalogue()


def test_every_type_of_the_catalogue_has_an_archetype_inside_its_boxes() -> None:
    assert set(CAT.types()) <= set(covered_types())
    for t in CAT.types():
        assert archetype_of(t) is not None
        for info in CAT.assets_of(t):
            shape = shape_of(info)
            assert shape.parts, info.asset_id
            assert shape.outside_box() == [], info.asset_id
            assert 0.0 < shape.fill() <= 1.05, (info.asset_id, shape.fill())
            for s in shape.surfaces:
                x0, z0, x1, z1 = s.rect
                assert -info.size[0] / 2 - 1e-6 <= x0 < x1 <= info.size[0] / 2 + 1e-6
                assert -info.size[2] / 2 - 1e-6 <= z0 < z1 <= info.size[2] / 2 + 1e-6
                assert 0.0 <= s.height <= info.size[1] + 1e-9
                assert s.element is None or shape.elements[s.element] in SUB_RECEPTACLE_TYPES


def test_receptacle_assets_have_surfaces_and_variants_differ() -> None:
    receptacles = [info for t in CAT.types() for info in CAT.assets_of(t) if info.receptacle]
    assert len(receptacles) >= 100  # hundreds of receptacle assets in the catalogue
    for info in receptacles:
        assert shape_of(info).surfaces, info.asset_id
    shelves = [
        len(shape_of(a).surfaces_of(None)) + len(shape_of(a).elements)
        for a in CAT.assets_of("ShelvingUnit")
    ]
    assert len(set(shelves)) > 1  # boards per unit vary with the asset


def test_a_chairs_highest_surface_is_its_seat() -> None:
    chairs = CAT.assets_of("Chair")
    assert len(chairs) >= 10
    for info in chairs:
        surfaces = shape_of(info).surfaces
        highest = max(surfaces, key=lambda s: s.height)
        assert highest.kind == "seat"
        assert highest.height / info.size[1] < 0.7


def test_a_tall_bookcase_has_three_shelves_at_distinct_heights() -> None:
    tall = [a for a in CAT.assets_of("ShelvingUnit") if a.size[1] > 1.2]
    assert tall
    for info in tall:
        shape = shape_of(info)
        shelves = [s for s in shape.surfaces if s.kind == "shelf"]
        heights = sorted(s.height for s in shelves)
        assert len(heights) >= 3 and len(set(np.round(heights, 3))) == len(heights)
        assert all(shape.elements[s.element] == "Shelf" for s in shelves)
        for lower, upper in itertools.pairwise(heights):
            below = next(s for s in shelves if s.height == lower)
            assert below.clearance is not None and below.clearance <= upper - lower + 1e-9


def test_fridges_hold_things_inside_only_when_open() -> None:
    fridges = CAT.assets_of("Fridge")
    assert len(fridges) >= 10
    for info in fridges:
        surfaces = shape_of(info).surfaces
        assert surfaces and all(s.kind == "interior" and s.needs_open for s in surfaces)
        assert len({round(s.height, 3) for s in surfaces}) >= 2


def test_dressers_have_drawers_and_counters_follow_their_asset_shape() -> None:
    dresser = shape_of(CAT.assets_of("Dresser")[0])
    drawers = [e for e, t in dresser.elements.items() if t == "Drawer"]
    assert len(drawers) >= 2
    assert all(s.needs_open for s in dresser.surfaces if s.element in drawers)
    l_counter = shape_of(CAT.asset("Countertop_L_8x8"))
    tops = [s for s in l_counter.surfaces if s.kind == "top"]
    area = sum(s.area for s in tops)
    w, _, d = CAT.asset("Countertop_L_8x8").size
    assert len(tops) == 2 and 0.3 * w * d < area < 0.6 * w * d  # an L, not the square
    # the missing quarter is the front left: nothing there
    assert not any(s.rect[0] < -0.5 and s.rect[3] > 0.5 for s in tops)
    straight = shape_of(CAT.asset("Countertop_I_8x2"))
    assert len([s for s in straight.surfaces if s.kind == "top"]) == 1


def test_builder_clamps_to_the_box_and_refuses_bad_input() -> None:
    b = ShapeBuilder((1.0, 1.0, 1.0), "Test_1", "test")
    b.box((-2, 2), (0, 3), (-0.2, 0.2))
    b.sphere((0.4, 0.9, 0.4), (0.5, 0.5, 0.5))
    b.torus((0.0, 0.5, 0.0), 2.0, 0.2, axis="z")
    shape = b.build()
    assert shape.outside_box() == [] and len(shape.parts) == 3
    with pytest.raises(UsageError):
        ShapeBuilder((1.0, 0.0, 1.0), "Flat", "test")
    with pytest.raises(UsageError):
        b.surface("roof", 0.5, (0, 1), (0, 1))
    with pytest.raises(UsageError):
        b.element("Drawer_9", "Wardrobe")


def _world(*objects: dict) -> World:
    return World(load_house(one_room_house(list(objects)), catalogue=CAT), CAT)


def test_placing_on_a_middle_shelf_fits_under_the_board_above() -> None:
    unit = max(CAT.assets_of("ShelvingUnit"), key=lambda a: a.size[1])
    world = _world(standing(CAT, "Shelf|1", unit.asset_id, 3.0, 0.4))
    shelves = sorted((s for s in world.surfaces("Shelf|1") if s.kind == "shelf"), key=lambda s: s.y)
    middle = shelves[len(shelves) // 2]
    rng = np.random.default_rng(0)
    res = world.spawn("Book_1", "Shelf|1", rng, surface=middle.index)
    assert res.ok and res.kind == "shelf" and res.surface == middle.index
    box = world.box(res.object_id)
    assert abs(box.bottom - middle.y) < 1e-6
    assert box.top <= middle.y + middle.clearance + 1e-6
    assert 0.2 < box.bottom < world.box("Shelf|1").top - 0.2
    graph = world.graph()
    node = graph.object(res.object_id)
    assert node.surface == middle.index and node.element_id == f"Shelf|1|{middle.element}"
    sub = graph.receptacle(node.element_id)
    assert sub.object_type == "Shelf" and sub.parent_id == "Shelf|1"
    assert res.object_id in sub.child_ids and sub.free_area_cm2 < sub.top_area_cm2


def test_a_closed_drawer_is_opened_or_refused_and_its_contents_are_countable() -> None:
    dresser = CAT.assets_of("Dresser")[0]
    world = _world(standing(CAT, "Dresser|1", dresser.asset_id, 3.0, 0.4))
    rng = np.random.default_rng(1)
    refused = world.spawn("CreditCard_1", "Dresser|1", rng, surface="Drawer_2", auto_open=False)
    assert refused.status == "closed"
    res = world.spawn("CreditCard_1", "Dresser|1", rng, surface="Drawer_2")
    assert res.ok and res.inside and res.kind == "interior"
    node = world.graph().object(res.object_id)
    assert node.element_id == "Dresser|1|Drawer_2"
    assert world.spawn("CreditCard_1", "Dresser|1", rng, surface="Drawer_99").status == (
        "no_free_space"
    )


def test_a_tall_object_does_not_fit_in_a_low_drawer() -> None:
    dresser = CAT.assets_of("Dresser")[0]
    world = _world(standing(CAT, "Dresser|1", dresser.asset_id, 3.0, 0.4))
    tall = max(CAT.assets_of("WineBottle"), key=lambda a: a.size[1])
    res = world.spawn(tall.asset_id, "Dresser|1", np.random.default_rng(2), inside=True)
    assert not res.ok and "too tall" in res.message


def test_a_table_top_over_a_chair_seat_limits_what_the_seat_holds() -> None:
    table = max(CAT.assets_of("DiningTable"), key=lambda a: a.size[0] * a.size[2])
    chair = min(CAT.assets_of("Chair"), key=lambda a: a.size[1])
    world = _world(
        standing(CAT, "Table|1", table.asset_id, 3.0, 3.0),
        standing(CAT, "Chair|1", chair.asset_id, 3.0, 3.0),  # pushed right under the top
    )
    seat = next(s for s in world.surfaces("Chair|1") if s.kind == "seat")
    top_bottom = min(
        b.bottom for b in world._part_boxes("Table|1") if b.top >= table.size[1] - 1e-6
    )
    gap = top_bottom - seat.y
    assert 0.05 < gap < 0.5
    tall = min(
        (a for a in CAT.assets_of("WineBottle") if a.size[1] > gap + 0.02), key=lambda a: a.size[1]
    )
    rng = np.random.default_rng(3)
    assert world.spawn(tall.asset_id, "Chair|1", rng, surface="seat").status == "collision"
    small = world.spawn("CreditCard_1", "Chair|1", rng, surface="seat")
    assert small.ok and abs(world.box(small.object_id).bottom - seat.y) < 1e-6


def test_surfaces_turn_with_the_object() -> None:
    info = CAT.assets_of("Dresser")[0]
    a = object_surfaces(
        load_house(
            one_room_house([standing(CAT, "D|1", info.asset_id, 3.0, 3.0, 0.0)]), catalogue=CAT
        ).objects[0],
        info,
    )
    b = object_surfaces(
        load_house(
            one_room_house([standing(CAT, "D|1", info.asset_id, 3.0, 3.0, 90.0)]), catalogue=CAT
        ).objects[0],
        info,
    )
    top_a = next(s for s in a if s.kind == "top").polygon.bounds
    top_b = next(s for s in b if s.kind == "top").polygon.bounds
    assert top_a[2] - top_a[0] == pytest.approx(top_b[3] - top_b[1], abs=1e-6)
    assert top_a[3] - top_a[1] == pytest.approx(top_b[2] - top_b[0], abs=1e-6)


def test_rest_limits_follow_the_categories() -> None:
    from dataforge.world.placement import rest_limits

    egg = CAT.assets_of("Egg")[0]  # breakable: ProcTHOR records it 5 cm high
    book = CAT.asset("Book_1")
    assert "CanBreak" in egg.secondary_properties
    assert rest_limits(egg, "DiningTable")[1] > 0.05 > rest_limits(book, "DiningTable")[1]
    assert rest_limits(book, "Sofa")[0] > rest_limits(book, "DiningTable")[0]
    table = max(CAT.assets_of("DiningTable"), key=lambda a: a.size[0] * a.size[2])
    world = _world(standing(CAT, "Table|1", table.asset_id, 3.0, 3.0))
    top = next(s for s in world.surfaces("Table|1") if s.kind == "top")
    raised = load_house(
        one_room_house(
            [
                standing(CAT, "Table|1", table.asset_id, 3.0, 3.0),
                {
                    **standing(CAT, "Egg|1", egg.asset_id, 3.0, 3.0),
                    "position": {"x": 3.0, "y": top.y + egg.size[1] / 2 + 0.05, "z": 3.0},
                },
            ]
        ),
        catalogue=CAT,
    ).object("Egg|1")
    assert world.place_at(raised, "Table|1").ok
    assert not world.place_at(raised, "Table|1", max_hover=0.01).ok


def test_a_child_on_a_non_receptacles_own_surface_rests_there_in_the_graph() -> None:
    """A faucet on the deck of a sink whose asset is no receptacle: the graph and check_house
    agree that it rests on the deck, and placement still does not use the deck."""
    from dataforge.world.graph import world_graph
    from dataforge.world.validity import object_problems

    sink = CAT.asset("Sink_15")
    assert not sink.receptacle
    world = _world(standing(CAT, "Sink|1", sink.asset_id, 3.0, 0.4))
    deck = next(s for s in world.surfaces("Sink|1", all_surfaces=True) if s.kind == "top")
    assert not deck.usable and deck not in world.surfaces("Sink|1")
    faucet = CAT.assets_of("Faucet")[0]
    centre = deck.polygon.centroid
    raw = one_room_house([standing(CAT, "Sink|1", sink.asset_id, 3.0, 0.4)])
    raw["objects"][0]["children"] = [
        {
            **standing(CAT, "Faucet|1", faucet.asset_id, centre.x, centre.y),
            "position": {"x": centre.x, "y": deck.y + faucet.size[1] / 2, "z": centre.y},
        }
    ]
    house = load_house(raw, catalogue=CAT)
    graph = world_graph(house, CAT)
    node = graph.object("Faucet|1")
    assert node.surface_kind == "top" and node.surface == deck.index
    own = graph.receptacle("Sink|1").surfaces
    assert [s.usable for s in own if s.index == deck.index] == [False]
    assert object_problems(house, CAT, surfaces=True) == []


def _solid_at(parts, point) -> bool:
    """Some unturned box part holds ``point`` (asset frame, y about the box centre)."""
    for p in parts:
        if p.primitive != "box" or p.rotation != (0.0, 0.0, 0.0):
            continue
        if np.all(np.abs(np.asarray(point) - np.asarray(p.center)) < np.asarray(p.size) / 2):
            return True
    return False


def test_opening_hollows_the_body_behind_a_side_arm_cupboard_and_swings_a_fridge_door() -> None:
    from dataforge.world.shape_mesh import cavity, opened_shape

    cat = load_catalogue()
    counter = shape_of(cat.asset("Countertop_L_10x10"))
    element, motion = next(
        (e, m) for e, m in counter.motions.items() if e.startswith("Cabinet") and m.normal[0] < 0
    )
    lo, hi = cavity(counter, element, motion)
    inside = (lo + hi) / 2
    # the cavity reaches the arm's front, not the far side of the L's box
    assert hi[0] - lo[0] < 0.7
    assert _solid_at(counter.parts, inside)
    assert not _solid_at(opened_shape(counter, {element: (motion, 1.0)}).parts, inside)
    fridge = shape_of(cat.assets_of("Fridge")[0])
    door = fridge.motions[None]
    opened = opened_shape(fridge, {None: (door, 1.0)})
    moved = [p for p in opened.parts if p.moves]
    # the doors turn 90 degrees about the left edge of the front: they now stand out in +z
    assert moved and all(p.center[2] > fridge.size[2] / 2 for p in moved)
    assert all(p.center[0] < -fridge.size[0] / 2 + 0.1 for p in moved)
