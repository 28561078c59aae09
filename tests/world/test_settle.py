"""settle: every child of a house read from JSON ends resting on a surface of its parent, or
is removed and reported. Expected heights are derived from the assets' sizes and the
archetypes' proportions (dataforge/world/archetypes/furniture.py)."""

from __future__ import annotations

import copy

import pytest
from dfhelpers import SHARED
from roomhelpers import one_room_house, resting, standing

from dataforge.world import load_catalogue, load_house
from dataforge.world.boxes import object_box
from dataforge.world.house import House
from dataforge.world.settle import settle
from dataforge.world.surfaces import object_surfaces
from dataforge.world.validity import object_problems

CAT = load_catalogue()
HOUSES = SHARED / "data" / "procthor_houses"
NAMES = ("house_746", "procthor_train_1", "house_3703")
needs_houses = pytest.mark.skipif(
    not (HOUSES / "house_746.json").is_file(), reason="needs ../shared/data/procthor_houses"
)


def mattress_y(bed_height: float) -> float:
    """The top of the bed archetype's mattress above the bed's bottom: the frame is
    min(0.3, 0.3 h) high, the mattress min(frame + 0.25, 0.6 h)."""
    frame = min(0.3, 0.3 * bed_height)
    return min(frame + 0.25, 0.6 * bed_height)


def bottom(house: House, object_id: str) -> float:
    return object_box(house.object(object_id), CAT).bottom


def resting_gaps(house: House) -> dict[str, list[float]]:
    """Per child: its bottom minus the height of every surface of its parent whose polygon is
    under its centre (2 cm of slack, as the world graph allows)."""
    from shapely.geometry import Point

    out = {}
    for o in house.objects:
        if o.parent_id is None:
            continue
        parent = house.object(o.parent_id)
        box = object_box(o, CAT)
        centre = Point(box.center[0], box.center[2])
        surfaces = object_surfaces(parent, CAT.asset(parent.asset_id), all_surfaces=True)
        out[o.id] = [box.bottom - s.y for s in surfaces if s.polygon.distance(centre) <= 0.02]
    return out


def shared(name: str) -> House:
    return load_house(HOUSES / f"{name}.json", catalogue=CAT)


@needs_houses
@pytest.mark.parametrize("name", NAMES)
def test_every_child_of_a_shared_house_rests_after_settling(name: str) -> None:
    house = shared(name)
    settled, report = settle(house, CAT)
    floating = {k: g for k, g in resting_gaps(house).items() if not any(abs(x) <= 0.03 for x in g)}
    assert floating, "the shared houses have floating objects before settling"
    for oid, gaps in resting_gaps(settled).items():
        assert any(abs(g) <= 0.03 for g in gaps), (oid, gaps)
    kept = {o.id for o in settled.objects}
    assert set(floating) <= set(report.moved) | set(report.removed)
    assert not kept & set(report.removed)
    assert object_problems(settled, CAT, surfaces=True) == []
    again, second = settle(settled, CAT)
    assert again is settled and not second.changed


@needs_houses
def test_house_746_pillows_phone_and_eggs_drop_onto_the_archetypes() -> None:
    house = shared("house_746")
    settled, report = settle(house, CAT)
    bed = house.object("4|0|0")  # Bed_20, 0.674 m high, standing on the floor
    mattress = bottom(house, "4|0|0") + mattress_y(CAT.asset(bed.asset_id).size[1])
    assert mattress == pytest.approx(0.4045, abs=1e-4)
    # two pillows recorded on the bed's box top (0.674 m) and a phone 0.587 m up
    for oid, was in (("4|0|1", 0.6743), ("4|0|2", 0.6743), ("small|4|5", 0.5868)):
        assert bottom(house, oid) == pytest.approx(was, abs=1e-4)
        assert bottom(settled, oid) == pytest.approx(mattress, abs=1e-6)
        assert report.moved[oid] == pytest.approx(mattress - was, abs=2e-4)
    # eggs hovering 9.5 and 7.3 cm above the fridge's shelves; breakable objects 5 cm above
    # the dining table's top
    assert -0.10 < report.moved["small|6|16"] < -0.09
    assert -0.08 < report.moved["small|6|17"] < -0.07
    table_top = object_box(house.object(house.object("small|4|0").parent_id), CAT).top
    assert bottom(house, "small|4|0") - table_top == pytest.approx(0.055, abs=0.002)
    assert bottom(settled, "small|4|0") == pytest.approx(table_top, abs=0.006)
    assert report.to_dict()["dropped"] == len(report.moved) == 12 and not report.removed


@needs_houses
def test_settling_changes_only_heights_and_removed_children_in_the_json() -> None:
    house = shared("procthor_train_1")
    settled, report = settle(house, CAT)
    # a phone lies on the edge of a tennis racket on a bed: dropped onto the mattress it would
    # go through the racket, so it is removed
    assert list(report.removed) == ["CellPhone|surface|10|94"]
    assert "TennisRacket|surface|10|92" in report.removed["CellPhone|surface|10|94"]
    before = {o.id: o for o in house.objects}
    after = {o.id: o for o in settled.objects}
    assert set(before) - set(after) == {"CellPhone|surface|10|94"}
    for oid, o in after.items():
        x, y, z = o.position
        dy = report.moved.get(oid, 0.0)
        assert (x, z) == (before[oid].position[0], before[oid].position[2])
        assert y == pytest.approx(before[oid].position[1] + dy, abs=1e-9)
        assert o.rotation == before[oid].rotation and o.parent_id == before[oid].parent_id
    raw, new = house.to_json_dict(), settled.to_json_dict()
    assert {k: v for k, v in raw.items() if k != "objects"} == {
        k: v for k, v in new.items() if k != "objects"
    }


def test_a_pillow_above_a_bed_lands_on_the_mattress() -> None:
    bed = standing(CAT, "Bed|1", "Bed_1", 3.0, 3.0)
    mattress = mattress_y(0.9101961851119995)  # Bed_1 is 0.910 m high: 0.273 + 0.25 = 0.523
    assert mattress == pytest.approx(0.52306, abs=1e-5)
    bed["children"] = [
        resting(CAT, "Pillow|1", "pillow_3", 3.0, mattress + 0.81, 2.5),
        resting(CAT, "Pillow|2", "pillow_3", 3.0, mattress - 0.02, 3.0),  # sunk 2 cm: rests
        resting(CAT, "Laptop|1", "Laptop_1", 3.0, mattress - 0.06, 3.5),  # 6 cm into the mattress
    ]
    house = load_house(one_room_house([bed]), catalogue=CAT)
    settled, report = settle(house, CAT)
    assert bottom(settled, "Pillow|1") == pytest.approx(mattress, abs=1e-9)
    assert bottom(settled, "Pillow|2") == pytest.approx(mattress - 0.02, abs=1e-9)
    assert bottom(settled, "Laptop|1") == pytest.approx(mattress, abs=1e-9)
    assert report.moved == pytest.approx({"Pillow|1": -0.81, "Laptop|1": 0.06})
    assert report.to_dict()["dropped"] == 2 and report.to_dict()["removed"] == 0


def test_a_child_over_no_surface_is_removed_with_its_children() -> None:
    table = standing(CAT, "Table|1", "Dining_Table_16_1", 3.0, 3.0)
    top = CAT.asset("Dining_Table_16_1").size[1]  # the table's top surface is its box top
    # the plate stands 1.2 m from the centre of a 1.47 m top
    plate = resting(CAT, "Plate|1", "Plate_1", 4.2, top, 3.0)
    plate["children"] = [resting(CAT, "Apple|1", "Apple_1", 4.2, top + 0.0285, 3.0)]
    table["children"] = [plate, resting(CAT, "Apple|2", "Apple_1", 3.0, top + 0.2, 3.0)]
    house = load_house(one_room_house([table]), catalogue=CAT)
    settled, report = settle(house, CAT)
    assert [o.id for o in settled.objects] == ["Table|1", "Apple|2"]
    assert list(report.removed) == ["Plate|1", "Apple|1"]
    assert "no surface" in report.removed["Plate|1"] and "Plate|1" in report.removed["Apple|1"]
    assert bottom(settled, "Apple|2") == pytest.approx(top, abs=1e-9)
    summary = report.to_dict()
    assert (summary["dropped"], summary["removed"]) == (1, 2)
    (kept,) = settled.to_json_dict()["objects"][0]["children"]
    assert kept["id"] == "Apple|2" and "children" not in kept
    assert kept["position"]["y"] == pytest.approx(top + CAT.asset("Apple_1").size[1] / 2.0)


def test_a_moved_child_carries_its_children() -> None:
    table = standing(CAT, "Table|1", "Dining_Table_16_1", 3.0, 3.0)
    top = CAT.asset("Dining_Table_16_1").size[1]
    plate_top = min(0.004, 0.35 * CAT.asset("Plate_1").size[1])  # the plate archetype's floor
    plate = resting(CAT, "Plate|1", "Plate_1", 3.0, top + 0.05, 3.0)  # breakable, 5 cm high
    plate["children"] = [resting(CAT, "Apple|1", "Apple_1", 3.0, top + 0.05 + plate_top, 3.0)]
    table["children"] = [plate]
    house = load_house(one_room_house([copy.deepcopy(table)]), catalogue=CAT)
    settled, report = settle(house, CAT)
    assert bottom(settled, "Plate|1") == pytest.approx(top, abs=1e-9)
    assert bottom(settled, "Apple|1") == pytest.approx(top + plate_top, abs=1e-9)
    assert report.moved == pytest.approx({"Plate|1": -0.05})


def test_a_house_whose_children_rest_is_returned_as_it_is() -> None:
    table = standing(CAT, "Table|1", "Dining_Table_16_1", 3.0, 3.0)
    top = CAT.asset(table["assetId"]).size[1]
    table["children"] = [resting(CAT, "Apple|1", "Apple_1", 3.0, top, 3)]
    house = load_house(one_room_house([table]), catalogue=CAT)
    settled, report = settle(house, CAT)
    assert settled is house and not report.changed
    assert report.to_dict() == {"dropped": 0, "removed": 0, "moved_m": {}, "removed_why": {}}
