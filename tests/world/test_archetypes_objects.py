"""Archetypes of pickupable objects (dataforge/world/archetypes/kitchen.py, household.py), every
asset."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dataforge.world import load_catalogue
from dataforge.world.archetypes import archetype_of, shape_of
from dataforge.world.shapes import SURFACE_KINDS, Shape

OBJECT_TYPES = (
    "AlarmClock",
    "AluminumFoil",
    "Apple",
    "BaseballBat",
    "BasketBall",
    "Book",
    "Boots",
    "Bottle",
    "Bowl",
    "Box",
    "Bread",
    "ButterKnife",
    "CD",
    "Candle",
    "CellPhone",
    "Cloth",
    "CreditCard",
    "Cup",
    "DishSponge",
    "Dumbbell",
    "Egg",
    "Footstool",
    "Fork",
    "HandTowel",
    "Kettle",
    "KeyChain",
    "Knife",
    "Ladle",
    "Laptop",
    "Lettuce",
    "Mug",
    "Newspaper",
    "Pan",
    "PaperTowelRoll",
    "Pen",
    "Pencil",
    "PepperShaker",
    "Pillow",
    "Plate",
    "Plunger",
    "Pot",
    "Potato",
    "RemoteControl",
    "SaltShaker",
    "ScrubBrush",
    "SoapBar",
    "SoapBottle",
    "Spatula",
    "Spoon",
    "SprayBottle",
    "Statue",
    "TableTopDecor",
    "TeddyBear",
    "TennisRacket",
    "TissueBox",
    "ToiletPaper",
    "Tomato",
    "Towel",
    "Vase",
    "Watch",
    "WateringCan",
    "WineBottle",
)


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def _assets(catalogue, object_type):
    assets = catalogue.assets_of(object_type)
    assert assets, f"the catalogue has no {object_type}"
    return assets


def _check_shape(shape: Shape, label: str) -> None:
    assert len(shape.parts) >= 2, f"{label}: {len(shape.parts)} part(s)"
    assert shape.outside_box() == [], f"{label}: parts {shape.outside_box()} leave the box"
    assert 0.0 < shape.fill() <= 1.05, f"{label}: fill {shape.fill():.3f}"
    w, h, d = shape.size
    for p in shape.parts:
        assert min(p.size) > 0.0, f"{label}: a degenerate {p.primitive}"
        assert p.color is None or all(0 <= c <= 255 for c in p.color), label
    for s in shape.surfaces:
        assert s.kind in SURFACE_KINDS
        assert 0.0 <= s.height <= h + 1e-9, f"{label}: surface at {s.height} in a box {h} high"
        x0, z0, x1, z1 = s.rect
        assert -w / 2 - 1e-9 <= x0 < x1 <= w / 2 + 1e-9, label
        assert -d / 2 - 1e-9 <= z0 < z1 <= d / 2 + 1e-9, label


def test_every_type_has_an_archetype():
    missing = [t for t in OBJECT_TYPES if archetype_of(t) is None]
    assert missing == []


@pytest.mark.parametrize("object_type", OBJECT_TYPES)
def test_every_asset_builds_inside_its_box(catalogue, object_type):
    for info in _assets(catalogue, object_type):
        shape = shape_of(info)
        _check_shape(shape, info.asset_id)
        if info.receptacle:
            assert shape.surfaces, f"{info.asset_id} is a receptacle without a surface"


@pytest.mark.parametrize("object_type", OBJECT_TYPES)
def test_shapes_fit_any_box_orientation(catalogue, object_type):
    """The same type in a box with its horizontal axes swapped (or stood up) still fits."""
    info = _assets(catalogue, object_type)[0]
    w, h, d = info.size
    for k, size in enumerate(((d, h, w), (w, d, h), (h, w, d))):
        other = dataclasses.replace(info, asset_id=f"{info.asset_id}__turned{k}", size=size)
        _check_shape(shape_of(other), other.asset_id)


def test_shapes_are_deterministic(catalogue):
    build = shape_of.__wrapped__  # past the cache
    a, b = _assets(catalogue, "AlarmClock")[3:5]
    assert build(a) == build(a)
    assert build(dataclasses.replace(a, asset_id=b.asset_id)) == build(
        dataclasses.replace(a, asset_id=b.asset_id)
    )


def test_mug_has_a_ring_handle_and_an_interior(catalogue):
    for info in _assets(catalogue, "Mug"):
        shape = shape_of(info)
        assert any(p.primitive == "torus" for p in shape.parts), info.asset_id
        assert any(s.kind == "interior" for s in shape.surfaces), info.asset_id


def test_apple_is_round_and_coloured_per_asset(catalogue):
    colors = set()
    for info in _assets(catalogue, "Apple"):
        shape = shape_of(info)
        biggest = max(shape.parts, key=lambda p: p.volume())
        assert biggest.primitive == "sphere", info.asset_id
        assert biggest.color is not None
        colors.add(biggest.color)
    assert len(colors) >= 4


def test_egg_is_taller_than_wide(catalogue):
    for info in _assets(catalogue, "Egg"):
        parts = shape_of(info).parts
        assert all(p.primitive == "sphere" for p in parts)
        top = max(p.center[1] + p.size[1] / 2 for p in parts)
        bottom = min(p.center[1] - p.size[1] / 2 for p in parts)
        width = max(p.size[0] for p in parts)
        assert top - bottom > width, info.asset_id


def test_variants_differ_between_assets(catalogue):
    def signature(info):
        shape = shape_of(info)
        return tuple((p.primitive, p.color, np.round(p.size, 4).tobytes()) for p in shape.parts)

    for object_type in ("AlarmClock", "Bowl", "Tomato", "Pillow", "Cup", "Vase"):
        sigs = {signature(info) for info in _assets(catalogue, object_type)}
        assert len(sigs) >= 3, object_type
    clocks = {len(shape_of(i).parts) for i in _assets(catalogue, "AlarmClock")}
    assert len(clocks) >= 2  # analog and digital faces


def test_containers_have_their_inner_floor(catalogue):
    for object_type in ("Bowl", "Cup", "Mug", "Pot", "Pan"):
        for info in _assets(catalogue, object_type):
            shape = shape_of(info)
            interiors = [s for s in shape.surfaces if s.kind == "interior"]
            assert interiors, info.asset_id
            s = interiors[0]
            assert s.height < 0.3 * shape.size[1], info.asset_id
            assert s.clearance is not None and s.clearance > 0.5 * shape.size[1], info.asset_id
    for info in _assets(catalogue, "Plate"):
        (top,) = shape_of(info).surfaces
        assert top.kind == "top" and top.height <= 0.01, info.asset_id


def test_cartons_open_to_reach_their_interior(catalogue):
    boxes = _assets(catalogue, "Box")
    assert any(i.openable for i in boxes) and any(not i.openable for i in boxes)
    for info in boxes:
        (interior,) = shape_of(info).surfaces
        assert interior.kind == "interior"
        assert interior.needs_open == info.openable, info.asset_id


def test_laptop_lid_leans_back_with_a_screen(catalogue):
    for info in _assets(catalogue, "Laptop"):
        shape = shape_of(info)
        tilted = [p for p in shape.parts if p.rotation[0] != 0.0]
        assert tilted, info.asset_id
        lid = max(tilted, key=lambda p: p.volume())
        assert -45.0 < lid.rotation[0] <= 0.0  # the lid's top toward the back (-z)
        assert lid.center[2] < 0.0 and lid.center[1] > 0.0
        assert any(p.role == "screen" for p in tilted), info.asset_id


def test_lying_objects_follow_the_long_axis(catalogue):
    """Pens, knives and bats run along their box's longest axis, whichever it is."""
    for object_type in ("Pen", "Knife", "BaseballBat", "Pencil"):
        for info in _assets(catalogue, object_type):
            size = np.asarray(info.size)
            long_axis = int(np.argmax(size))
            shape = shape_of(info)
            corners = np.vstack([p.corners() for p in shape.parts])
            span = corners.max(axis=0) - corners.min(axis=0)
            assert span[long_axis] > 0.95 * size[long_axis], info.asset_id


def test_triangle_budget(catalogue):
    """Cheap to draw: a few hundred triangles per object at most."""
    from dataforge.world.shape_mesh import part_geometry

    worst = 0
    for object_type in OBJECT_TYPES:
        for info in _assets(catalogue, object_type)[:4]:
            tris = sum(len(part_geometry(p)[2]) for p in shape_of(info).parts)
            worst = max(worst, tris)
            assert tris <= 900, f"{info.asset_id}: {tris} triangles"
    assert worst > 0
