"""Fixture archetypes (dataforge/world/archetypes/fixtures.py) over every asset of their types in
the real ProcTHOR catalogue: shapes inside their boxes, surfaces on receptacles, screens on
televisions, door leaves where doors have them, and a triangle budget for the CPU renderer."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from dataforge.world import load_catalogue
from dataforge.world.archetypes import archetype_of, shape_of
from dataforge.world.archetypes.fixtures import (
    door_leaf_rects,
    door_leaves,
    swung_door_shape,
)
from dataforge.world.materials import ROLES
from dataforge.world.shape_mesh import part_geometry

FIXTURE_TYPES = (
    "Blinds",
    "DeskLamp",
    "Desktop",
    "Doorframe",
    "Doorway",
    "Faucet",
    "FloorLamp",
    "GarbageBag",
    "HandTowelHolder",
    "HousePlant",
    "LightSwitch",
    "Painting",
    "RoomDecor",
    "ShowerCurtain",
    "ShowerHead",
    "Television",
    "ToiletPaperHanger",
    "TowelHolder",
    "VacuumCleaner",
    "Window",
    "Toaster",
    "CoffeeMachine",
)
RECEPTACLES = ("HandTowelHolder", "ToiletPaperHanger", "TowelHolder", "Toaster", "CoffeeMachine")
MAX_TRIANGLES = 450


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def _assets(catalogue, object_type):
    assets = catalogue.assets_of(object_type)
    assert assets, f"no {object_type} assets in the catalogue"
    return assets


@pytest.mark.parametrize("object_type", FIXTURE_TYPES)
def test_every_asset_has_a_shape_inside_its_box(catalogue, object_type):
    assert archetype_of(object_type) is not None
    for info in _assets(catalogue, object_type):
        shape = shape_of(info)
        assert len(shape.parts) >= 2, info.asset_id
        assert shape.outside_box() == [], info.asset_id
        assert 0.0 < shape.fill() <= 1.05, (info.asset_id, shape.fill())
        for part in shape.parts:
            assert part.color is not None or part.role in ROLES, (info.asset_id, part.role)
            assert min(part.size) > 0, info.asset_id
        triangles = sum(len(part_geometry(p)[2]) for p in shape.parts)
        assert triangles <= MAX_TRIANGLES, (info.asset_id, triangles)
        for s in shape.surfaces:
            x0, z0, x1, z1 = s.rect
            w, h, d = info.size
            assert -w / 2 - 1e-9 <= x0 < x1 <= w / 2 + 1e-9, info.asset_id
            assert -d / 2 - 1e-9 <= z0 < z1 <= d / 2 + 1e-9, info.asset_id
            assert 0.0 <= s.height <= h, info.asset_id


def test_shapes_are_deterministic(catalogue):
    infos = [i for t in FIXTURE_TYPES for i in _assets(catalogue, t)[:4]]
    assert len(infos) >= len(FIXTURE_TYPES)
    first = [shape_of(i) for i in infos]
    shape_of.cache_clear()
    again = [shape_of(i) for i in infos]
    assert all(a == b and a is not b for a, b in zip(first, again, strict=True))


@pytest.mark.parametrize("object_type", RECEPTACLES)
def test_receptacles_have_surfaces(catalogue, object_type):
    for info in _assets(catalogue, object_type):
        shape = shape_of(info)
        assert shape.surfaces, info.asset_id
        assert all(s.area > 0 for s in shape.surfaces), info.asset_id


def test_every_receptacle_asset_of_these_types_has_a_surface(catalogue):
    receptacles = [i for t in FIXTURE_TYPES for i in catalogue.assets_of(t) if i.receptacle]
    assert len(receptacles) >= len(RECEPTACLES)  # at least one asset of each receptacle type
    for info in receptacles:
        assert shape_of(info).surfaces, info.asset_id


def test_toaster_slots_and_coffee_machine_tray(catalogue):
    for info in _assets(catalogue, "Toaster"):
        kinds = {s.kind for s in shape_of(info).surfaces}
        assert kinds == {"interior"}, info.asset_id
    for info in _assets(catalogue, "CoffeeMachine"):
        shape = shape_of(info)
        shelves = [s for s in shape.surfaces if s.kind == "shelf"]
        tops = [s for s in shape.surfaces if s.kind == "top"]
        assert len(shelves) == 1 and len(tops) == 1, info.asset_id
        # a mug (about 10 cm tall) fits on the drip tray under the head
        assert shelves[0].clearance is not None and shelves[0].clearance >= 0.1, info.asset_id
        assert shelves[0].height < 0.1 * info.size[1] + 0.05, info.asset_id
        assert tops[0].height == pytest.approx(info.size[1])


def test_televisions_have_a_screen_facing_front(catalogue):
    for info in catalogue.assets_of("Television"):
        shape = shape_of(info)
        screens = [p for p in shape.parts if p.role == "screen"]
        assert screens, info.asset_id
        screen = max(screens, key=lambda p: p.size[0] * p.size[1])
        # the screen is the frontmost part at its height and covers most of the width
        cy = screen.center[1]
        level = [p for p in shape.parts if abs(p.center[1] - cy) < p.extent()[1] / 2]
        front = max(p.corners()[:, 2].max() for p in level)
        assert screen.corners()[:, 2].max() == pytest.approx(front), info.asset_id
        assert screen.size[0] > 0.8 * info.size[0], info.asset_id
    flat = [i for i in catalogue.assets_of("Television") if i.size[2] <= 0.08]
    standing = [i for i in catalogue.assets_of("Television") if i.size[2] > 0.08]
    assert flat and standing
    # a TV on a stand does not start its panel at the floor of its box; a flat one does
    for info in standing:
        screen = next(p for p in shape_of(info).parts if p.role == "screen")
        assert screen.center[1] - screen.size[1] / 2 > -info.size[1] / 2 + 0.05, info.asset_id
    for info in flat:
        bottom = min(p.corners()[:, 1].min() for p in shape_of(info).parts)
        assert bottom == pytest.approx(-info.size[1] / 2), info.asset_id


def test_doorways_have_more_parts_than_their_frames(catalogue):
    frames = {i.asset_id: i for i in catalogue.assets_of("Doorframe")}
    pairs = 0
    for info in catalogue.assets_of("Doorway"):
        frame = frames.get(re.sub("^Doorway", "Doorframe", info.asset_id))
        if frame is None:
            continue
        pairs += 1
        assert abs(frame.size[0] - info.size[0]) < 0.1
        assert len(shape_of(info).parts) > len(shape_of(frame).parts), info.asset_id
    assert pairs >= 10


def test_door_leaves(catalogue):
    for info in _assets(catalogue, "Doorway"):
        rects = door_leaf_rects(info)
        double = "Double" in info.asset_id
        assert len(rects) == (2 if double else 1), info.asset_id
        w = info.size[0]
        for x0, x1, hinge in rects:
            assert -w / 2 < x0 < x1 < w / 2, info.asset_id
            assert hinge in ("left", "right")
            assert x1 - x0 > (0.35 if double else 0.7), info.asset_id
        if double:
            (_, a1, ha), (b0, _, hb) = rects
            assert a1 <= b0 and (ha, hb) == ("left", "right"), info.asset_id
        # the leaves' parts are the last parts of the shape, one run per leaf
        shape = shape_of(info)
        leaves = door_leaves(info)
        assert [(lf.x0, lf.x1, lf.hinge) for lf in leaves] == rects
        assert leaves[-1].parts[1] == len(shape.parts), info.asset_id
        for a, b in itertools.pairwise(leaves):
            assert a.parts[1] == b.parts[0]
        for leaf in leaves:
            start, stop = leaf.parts
            assert stop - start >= 2, info.asset_id  # a slab and a handle at least
            slab = shape.parts[start]
            assert slab.size[0] == pytest.approx(leaf.x1 - leaf.x0), info.asset_id
            assert slab.size[1] == pytest.approx(leaf.y1 - leaf.y0), info.asset_id
            assert slab.center[1] == pytest.approx((leaf.y0 + leaf.y1) / 2), info.asset_id
            assert leaf.y1 - leaf.y0 > 0.9 * info.size[1] - 0.1, info.asset_id
    for info in _assets(catalogue, "Doorframe"):
        assert door_leaf_rects(info) == []
        assert door_leaves(info) == []
    for info in _assets(catalogue, "Window"):
        assert door_leaf_rects(info) == []


def test_swung_doors_open_toward_minus_z(catalogue):
    info = catalogue.asset("Doorway_Double_1")
    closed = shape_of(info)
    assert swung_door_shape(info, 0.0) == closed
    opened = swung_door_shape(info, 1.0)
    leaves = door_leaves(info)
    first = leaves[0].parts[0]
    assert opened.parts[:first] == closed.parts[:first]  # the frame stays
    for leaf in leaves:
        slab = opened.parts[leaf.parts[0]]
        corners = slab.corners()
        width = leaf.x1 - leaf.x0
        assert corners[:, 2].max() <= leaf.z - leaf.thickness / 2 + 1e-6
        assert corners[:, 2].min() == pytest.approx(leaf.z - leaf.thickness / 2 - width)
        hinge_x = leaf.x0 if leaf.hinge == "left" else leaf.x1
        assert np.abs(corners[:, 0] - hinge_x).max() == pytest.approx(leaf.thickness)
    half = swung_door_shape(info, 0.5)
    slab = half.parts[leaves[0].parts[0]]
    assert slab.rotation[1] == pytest.approx(45.0)


def test_variants_differ_between_assets(catalogue):
    def signature(info):
        shape = shape_of(info)
        rel = [tuple(np.round(np.asarray(p.size) / np.asarray(info.size), 2)) for p in shape.parts]
        return (len(shape.parts), tuple(p.color for p in shape.parts), tuple(rel))

    for t in ("HousePlant", "Painting", "FloorLamp", "Window"):
        sigs = {signature(i) for i in catalogue.assets_of(t)}
        assert len(sigs) >= 3, t


def test_wall_fixtures_keep_their_back_on_the_wall(catalogue):
    """Something touches the back (local -z) of every wall-mounted asset."""
    for t in (
        "LightSwitch",
        "Painting",
        "TowelHolder",
        "HandTowelHolder",
        "ToiletPaperHanger",
        "ShowerHead",
        "Blinds",
    ):
        for info in _assets(catalogue, t):
            back = min(p.corners()[:, 2].min() for p in shape_of(info).parts)
            assert back == pytest.approx(-info.size[2] / 2, abs=0.02), info.asset_id
