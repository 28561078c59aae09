"""ProcTHOR's asset catalogue, read from the procthor wheel."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dfhelpers import SHARED

from dataforge.errors import MalformedInputError, MissingDependencyError, UsageError
from dataforge.world import AssetInfo, TypeInfo, assets, load_catalogue

HOUSES = SHARED / "data" / "procthor_houses"
NAMES = ["procthor_train_1", "house_3703", "house_746"]


def asset_ids(objects: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for o in objects:
        out.add(o["assetId"])
        out |= asset_ids(o.get("children", []))
    return out


def test_catalogue_is_read_once_without_ai2thor() -> None:
    cat = load_catalogue()
    assert load_catalogue() is cat
    assert len(cat) == 1653 and len(cat.types()) == 109
    assert cat.version == "0.0.1.dev2"
    assert list(cat.types()) == sorted(cat.types())
    code = (
        "import sys; from dataforge.world import load_catalogue, load_house; load_catalogue(); "
        "print(sorted(m for m in sys.modules if m.startswith(('ai2thor', 'procthor.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # procthor.databases would import ai2thor


@pytest.mark.skipif(not HOUSES.is_dir(), reason=f"example ProcTHOR houses not present ({HOUSES})")
@pytest.mark.parametrize("name", NAMES)
def test_every_asset_of_the_houses_resolves(name: str) -> None:
    cat = load_catalogue()
    raw = json.loads((HOUSES / f"{name}.json").read_text())
    used = asset_ids(raw["objects"]) | {o["assetId"] for o in raw["doors"] + raw["windows"]}
    assert len(used) >= 10 and raw["doors"] and raw["windows"]  # every example house has all
    for aid in sorted(used):
        info = cat.asset(aid)
        assert info.asset_id == aid
        assert all(s > 0 for s in info.size), aid
        assert info.object_type in cat.types()
    for o in raw["doors"]:
        assert cat.asset(o["assetId"]).object_type in ("Doorway", "Doorframe")
    for o in raw["windows"]:
        assert cat.asset(o["assetId"]).object_type == "Window"
        assert cat.asset(o["assetId"]).hole is not None


def test_type_properties_are_sensible() -> None:
    cat = load_catalogue()
    apple = cat.type_info("Apple")
    assert apple.pickupable and not apple.receptacle and not apple.openable
    for rtype in ("CounterTop", "Fridge", "DiningTable", "Sink", "ShelvingUnit"):
        assert cat.type_info(rtype).receptacle, rtype
        assert not cat.type_info(rtype).pickupable, rtype
    fridge = cat.type_info("Fridge")
    assert fridge.openable and not fridge.moveable
    assert cat.type_info("Painting").on_wall and not cat.type_info("Painting").on_floor
    assert cat.type_info("Bed").on_floor
    assert cat.type_info("Television").toggleable
    assert cat.type_info("Chair").moveable
    assert cat.assets_of("Apple")[0].object_type == "Apple"


def test_asset_properties() -> None:
    cat = load_catalogue()
    fridge = cat.asset("Fridge_1")
    assert fridge.receptacle and fridge.openable and fridge.primary_property == "Static"
    assert fridge.open_size is not None and fridge.open_size[2] > fridge.size[2]
    apple = cat.asset("Apple_1")
    assert apple.pickupable and apple.size == pytest.approx((0.106, 0.113, 0.106), abs=1e-3)
    door = cat.asset("Doorway_1")
    assert door.openable and door.hole is not None
    assert door.hole.hi[0] - door.hole.lo[0] == pytest.approx(1.073, abs=1e-3)
    frame = cat.asset("Doorframe_1")  # the 20 Doorframe assets carry no properties
    assert frame.primary_property is None and frame.hole is None and not frame.openable
    for info in (fridge, door):
        assert AssetInfo.from_dict(json.loads(json.dumps(info.to_dict()))) == info
    tinfo = cat.type_info("Fridge")
    assert TypeInfo.from_dict(json.loads(json.dumps(tinfo.to_dict()))) == tinfo


def test_receptacle_pairs() -> None:
    cat = load_catalogue()
    pairs = cat.receptacle_pairs("CounterTop")
    assert 0 < pairs["Apple"] <= 1 and list(pairs) == sorted(pairs)
    assert all(t in cat.types() for t in pairs)
    assert "CounterTop" in cat.receptacle_types()
    assert cat.receptacle_pairs("Apple") == {}
    with pytest.raises(UsageError, match="unknown ProcTHOR object type 'Nope'"):
        cat.receptacle_pairs("Nope")


def test_unknown_names_are_usage_errors() -> None:
    cat = load_catalogue()
    with pytest.raises(UsageError) as info:
        cat.asset("Apple_999")
    assert "'Apple_999'" in str(info.value) and "\n" not in str(info.value)
    assert "Apple_999" not in cat
    with pytest.raises(UsageError, match="'Banana'"):
        cat.type_info("Banana")


def test_missing_procthor_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "_find_procthor", lambda: None)
    load_catalogue.cache_clear()
    try:
        with pytest.raises(MissingDependencyError) as info:
            load_catalogue()
    finally:
        load_catalogue.cache_clear()
    text = str(info.value)
    assert "'procthor'" in text and "pip install procthor" in text and "\n" not in text
    assert "ProcTHOR asset databases" in text


def test_asset_materials(tmp_path: Path) -> None:
    cat = load_catalogue()
    fridge = cat.asset("Fridge_1")
    assert fridge.materials[0] == ("Fridge", "Fridge_Primary1_Mat")
    assert ("Metal", "Fridge_Metal_Mat") in fridge.materials
    assert all(isinstance(p, tuple) and len(p) == 2 for p in fridge.materials)
    assert cat.asset("Doorframe_1").materials == ()  # the file gives it none
    copy = AssetInfo.from_dict(json.loads(json.dumps(fridge.to_dict())))
    assert copy.materials == fridge.materials and hash(copy) == hash(fridge)
    legacy = {k: v for k, v in fridge.to_dict().items() if k != "materials"}
    assert AssetInfo.from_dict(legacy).materials == ()

    def write(materials: Any) -> None:
        asset = {"assetId": "Cup_9", "objectType": "Cup", "primaryProperty": "CanPickup"}
        asset["boundingBox"] = {"x": 0.1, "y": 0.1, "z": 0.1}
        if materials is not None:
            asset["materials"] = materials
        files = {
            assets.ASSET_DATABASE: {"Cup": [asset]},
            assets.WALL_HOLES: {},
            assets.RECEPTACLES: {},
            assets.PLACEMENT: {},
        }
        for name, data in files.items():
            (tmp_path / name).write_text(json.dumps(data))

    write(None)
    assert assets.AssetCatalogue.from_directory(tmp_path).asset("Cup_9").materials == ()
    write([["Glass", "Cup1_Mat (Glass)"]])
    got = assets.AssetCatalogue.from_directory(tmp_path).asset("Cup_9").materials
    assert got == (("Glass", "Cup1_Mat (Glass)"),)
    for bad in ("Glass", [["Glass"]], [["Glass", 3]], {"Glass": "x"}):
        write(bad)
        with pytest.raises(MalformedInputError, match=r"Cup\[0\] \(Cup_9\): 'materials'"):
            assets.AssetCatalogue.from_directory(tmp_path)
