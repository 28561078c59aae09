"""check_house: ProcTHOR's reachability test plus object placement checks. Released houses
pass; each kind of damage is caught."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dfhelpers import SHARED

from dataforge.world import load_catalogue, load_house
from dataforge.world.validity import check_house

HOUSES = sorted((SHARED / "data" / "procthor_houses").glob("*.json"))
needs_houses = pytest.mark.skipif(not HOUSES, reason="needs ../shared/data/procthor_houses")


def _raw(name: str = "house_746.json") -> dict[str, Any]:
    import json

    return json.loads((SHARED / "data" / "procthor_houses" / name).read_text())


def _problems(raw: dict[str, Any]) -> list[str]:
    cat = load_catalogue()
    return check_house(load_house(raw, catalogue=cat), cat).problems


@needs_houses
@pytest.mark.parametrize("path", HOUSES, ids=lambda p: p.stem)
def test_released_houses_pass(path: Any) -> None:
    cat = load_catalogue()
    house = load_house(path, catalogue=cat)
    check = check_house(house, cat)
    assert check.ok, check.problems
    assert set(check.per_room) == {r.id for r in house.rooms}
    assert len(check.reachable) == sum(check.per_room.values()) + int(
        (check.reachable_room < 0).sum()
    )


@needs_houses
def test_hovering_sinking_and_outside_objects_are_caught() -> None:
    raw = _raw()
    parent = next(o for o in raw["objects"] if o.get("children"))
    child = parent["children"][0]
    hover = copy.deepcopy(raw)
    next(o for o in hover["objects"] if o["id"] == parent["id"])["children"][0]["position"][
        "y"
    ] += 0.5
    assert any(f"{child['id']} hovers" in p for p in _problems(hover))
    sink = copy.deepcopy(raw)
    next(o for o in sink["objects"] if o["id"] == parent["id"])["children"][0]["position"]["y"] -= (
        3.0
    )
    assert any(f"{child['id']} sinks" in p for p in _problems(sink))
    outside = copy.deepcopy(raw)
    outside["objects"][0]["position"]["x"] += 100.0
    assert any("outside every room" in p for p in _problems(outside))


@needs_houses
def test_overlapping_small_objects_are_caught() -> None:
    raw = _raw()
    parent = next(o for o in raw["objects"] if o.get("children"))
    twin = copy.deepcopy(parent["children"][0])
    twin["id"] = "twin|0"
    parent["children"].append(twin)
    cat = load_catalogue()
    if not cat.asset(twin["assetId"]).pickupable:
        pytest.skip("first child is not a small object")
    assert any("twin|0" in p and "overlap" in p for p in _problems(raw))


@needs_houses
def test_rooms_cut_off_from_the_start_are_caught() -> None:
    raw = _raw()
    assert len(raw["rooms"]) > 1
    raw["doors"] = []
    problems = _problems(raw)
    assert any("reachable positions from the start, fewer than 5" in p for p in problems)
    raw2 = _raw()
    raw2["metadata"]["agent"]["position"] = {"x": -50.0, "y": 0.9, "z": -50.0}
    assert any("start" in p and "not navigable" in p for p in _problems(raw2))
