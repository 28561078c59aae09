"""Colours from ProcTHOR material names: the keyword table, asset palettes, walls and floors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.resources import files
from typing import Any

import pytest
from dfhelpers import SHARED

from dataforge.errors import UsageError
from dataforge.world import AssetInfo, load_catalogue
from dataforge.world.materials import (
    ROLES,
    SKY_COLOR,
    STRUCTURE_DEFAULTS,
    TYPE_COLORS,
    asset_palette,
    match_material,
    material_color,
    structure_color,
)

HOUSES = SHARED / "data" / "procthor_houses"
GREY_METALS = {"metal", "steel", "stainless", "chrome", "aluminium", "silver", "iron", "foil"}


def every_material_name() -> set[tuple[str, str]]:
    """Every (category, name) of the asset database and the material database."""
    out = {
        pair
        for aid in load_catalogue().asset_ids()
        for pair in load_catalogue().asset(aid).materials
    }
    raw = json.loads((files("procthor") / "databases" / "material-database.json").read_bytes())
    out |= {(cat, name) for cat, names in raw.items() for name in names}
    return out


def valid_rgb(c: Any) -> bool:
    return (
        isinstance(c, tuple)
        and len(c) == 3
        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in c)
    )


def spread(c: tuple[int, int, int]) -> int:
    return max(c) - min(c)


def test_every_asset_gets_every_role() -> None:
    cat = load_catalogue()
    assert set(TYPE_COLORS) == set(cat.types())  # a default for each of the 109 types
    with_materials = 0
    for aid in cat.asset_ids():
        info = cat.asset(aid)
        with_materials += bool(info.materials)
        palette = asset_palette(info)
        assert tuple(palette) == ROLES, aid
        assert all(valid_rgb(c) for c in palette.values()), (aid, palette)
        assert palette["primary"] != palette["secondary"], aid
    assert with_materials == 1285  # of 1653: most assets name their materials


def test_palettes_are_stable_and_differ_between_assets() -> None:
    cat = load_catalogue()
    fridge = cat.asset("Fridge_1")
    assert asset_palette(fridge) == asset_palette(fridge)
    copy = AssetInfo.from_dict(json.loads(json.dumps(fridge.to_dict())))
    assert asset_palette(copy) == asset_palette(fridge)
    for otype in cat.types():
        infos = cat.assets_of(otype)
        palettes = [tuple(asset_palette(i).values()) for i in infos]
        assert len(set(palettes)) == len(palettes), otype  # no two assets of a type alike
        primaries = {p[0] for p in palettes}
        assert len(primaries) >= 0.9 * len(palettes), otype  # jitter separates most primaries
    apples = [asset_palette(i)["primary"] for i in cat.assets_of("Apple")[:2]]
    assert apples[0] != apples[1]
    assert max(abs(a - b) for a, b in zip(*apples, strict=True)) < 40  # slightly, not wildly


def test_jitter_does_not_depend_on_python_hash() -> None:
    info = AssetInfo("Sofa_7", "Sofa", (2.0, 0.9, 0.9), False, True, True, False, False)
    info = AssetInfo.from_dict({**info.to_dict(), "materials": [["Sofa", "Couch2CushionsMatVar3"]]})
    code = (
        "from dataforge.world import AssetInfo\n"
        "from dataforge.world.materials import asset_palette\n"
        f"import json\nprint(json.dumps(asset_palette(AssetInfo.from_dict({info.to_dict()!r}))))"
    )
    here = {k: list(v) for k, v in asset_palette(info).items()}
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        assert json.loads(out.stdout) == here


def test_pure_white_walls_and_explicit_colours() -> None:
    for name in ("PureWhite", "PUREWHITE", "pure_white"):
        assert all(v > 230 for v in structure_color("wall", name)), name
    assert structure_color("ceiling", {"name": "PureWhite"}) == structure_color("wall", "PureWhite")
    # an explicit colour wins, as (r, g, b), as the house's {r, g, b}, or inside the material
    grey = {"r": 0.2627, "g": 0.2667, "b": 0.2588}
    assert structure_color("wall", "PureWhite", (0.2627, 0.2667, 0.2588)) == (67, 68, 66)
    assert structure_color("wall", "PureWhite", grey) == (67, 68, 66)
    assert structure_color("wall", {"name": "PureWhite", "color": grey}) == (67, 68, 66)
    assert structure_color("floor", "Wood 1", (2.0, -1.0, 0.5)) == (255, 0, 128)  # clamped
    # no name, or nothing matched: the kind's default
    assert structure_color("floor", None) == STRUCTURE_DEFAULTS["floor"]
    assert structure_color("wall", "Qwzx_Mat") == STRUCTURE_DEFAULTS["wall"]
    assert all(v > 235 for v in STRUCTURE_DEFAULTS["ceiling"])
    wall = STRUCTURE_DEFAULTS["wall"]
    assert wall[0] >= wall[1] >= wall[2] and min(wall) > 190  # light warm grey
    floor = STRUCTURE_DEFAULTS["floor"]
    assert floor[0] > floor[1] > floor[2]  # wood
    assert SKY_COLOR[2] > SKY_COLOR[1] > SKY_COLOR[0]  # blue
    with pytest.raises(UsageError, match="'roof'"):
        structure_color("roof", "PureWhite")
    with pytest.raises(UsageError, match="three numbers"):
        structure_color("wall", None, (0.5, 0.5))


def house_materials() -> dict[str, set[str]]:
    names: dict[str, set[str]] = {"wall": set(), "floor": set(), "ceiling": set()}

    def name_of(m: Any) -> str:
        return m["name"] if isinstance(m, dict) else m

    for path in sorted(HOUSES.glob("*.json")):
        house = json.loads(path.read_text())
        names["floor"] |= {name_of(r["floorMaterial"]) for r in house["rooms"]}
        names["wall"] |= {name_of(w["material"]) for w in house["walls"]}
        ceiling = house.get("proceduralParameters", {}).get("ceilingMaterial")
        if ceiling:
            names["ceiling"].add(name_of(ceiling))
    return names


@pytest.mark.skipif(not HOUSES.is_dir(), reason=f"example ProcTHOR houses not present ({HOUSES})")
def test_every_material_of_the_example_houses_is_matched() -> None:
    names = house_materials()
    assert len(names["floor"]) >= 10 and len(names["wall"]) >= 4  # the three example houses
    for kind, kind_names in names.items():
        for name in sorted(kind_names):
            m = match_material(name)
            assert m.matched, (kind, name)  # every name is in the table (none falls to default)
            assert material_color(name) == structure_color(kind, name), name
    for name in names["floor"]:
        m = match_material(name)
        assert m.base == "wood", name  # the example houses' floors are all wood
        if m.tint is None:
            r, g, b = structure_color("floor", name)
            assert r > g > b, name
    assert all(min(structure_color("ceiling", n)) > 230 for n in names["ceiling"])  # PureWhite


def test_materials_read_naturally() -> None:
    pairs = every_material_name()
    woods = metals = ceramics = 0
    for category, name in sorted(pairs):
        m = match_material(name, category)
        color = material_color(name, category)
        assert (color is None) == (not m.matched), name
        if m.tint is not None or color is None:
            continue
        if m.role == "wood" and m.base != "wicker":
            r, g, b = color
            assert r > g > b, (name, color)  # brownish
            woods += 1
        if m.base in GREY_METALS:
            assert spread(color) <= 25, (name, color)  # greyish
            metals += 1
        if m.base in ("porcelain", "ceramic") and m.shade is None:
            assert min(color) > 220, (name, color)
            ceramics += 1
        if m.base == "glass":
            assert color[2] >= color[0] and min(color) > 150, (name, color)  # pale, cool
    assert woods > 50 and metals > 100 and ceramics >= 4
    # most names in the databases are understood
    matched = sum(match_material(n, c).matched for c, n in pairs)
    assert matched / len(pairs) > 0.6


def test_keyword_rules() -> None:
    wood = material_color("Wood")
    assert wood is not None
    # a colour word tints the base: marble tinted brown is darker and browner than marble
    marble, brown_marble = material_color("WhiteMarble"), material_color("BrownMarbleFake")
    assert marble is not None and brown_marble is not None
    assert sum(brown_marble) < sum(marble) - 100 and brown_marble[0] > brown_marble[2] + 40
    # shades, and white-washed / black wood
    assert sum(material_color("DarkWood2") or (999,)) < sum(wood)
    assert sum(material_color("LightWoodCounters3") or (0,)) > sum(wood)
    white_wood, black_wood = material_color("WhiteWood"), material_color("PureBlack_Wood")
    assert white_wood is not None and black_wood is not None
    assert min(white_wood) > 180 and max(black_wood) < 80 and black_wood[0] > black_wood[2]
    # order: the more specific entry wins
    assert match_material("RoboTHOR_Wall_Panel_Fabric_Mat").base == "fabric"
    assert match_material("YellowDrywallTiled").base == "drywall"
    assert match_material("IrregularGlassTiles1").base == "glass"
    assert match_material("CreamMarbleTiles").base == "marble"
    assert match_material("GenericStainlessSteel").base == "stainless"
    assert match_material("DarkWood Sofas").base == "wood"
    assert match_material("Porcelain_Off_White_Mat").tint == "offwhite"
    assert match_material("MaroonPlasticScratched").tint == "maroon"
    # "hammered" and "deferred" hide no red
    assert match_material("HammeredMetal_AlbedoTransparency").tint is None
    assert match_material("Glass_Deferred_Decal1_Mat").tint is None
    assert match_material("WoodFloorsCrossRED").tint == "red"
    # a category supplies the base when the name has none
    assert match_material("BedroomFloor1").base == "wood"  # Wood in material-database.json
    assert match_material("BlackSmoothMeta", "Metal").base == "metal"
    # colours of typical materials
    assert material_color("Gold") == (212, 175, 55)
    red, blue = material_color("RedFabric"), material_color("BluePlastic")
    assert red is not None and red[0] > red[1] + 60 and red[0] > red[2] + 60
    assert blue is not None and blue[2] > blue[0] + 60
    assert all(v < 60 for v in material_color("BlackScreen") or (255,))
    # the same fabric name always gets the same swatch; different fabrics can differ
    swatches = {material_color(f"Sofa3_Fabric_AlbedoTransparency{k}") for k in range(1, 6)}
    assert len(swatches) > 1
    assert material_color("Carpet2") == material_color("Carpet2")
    # nothing to go on: None
    assert material_color("Fridge_Primary1_Mat", "Fridge") is None
    assert material_color("Apple1_Mat1", "Apple") is None
    assert material_color("") is None


def test_palettes_use_the_asset_materials() -> None:
    cat = load_catalogue()
    fridge = asset_palette(cat.asset("Fridge_1"))  # listed Fridge_Primary1_Mat: no colour; metal
    assert spread(fridge["primary"]) <= 25 and 120 < fridge["primary"][0] < 230
    assert fridge["metal"] == fridge["primary"]
    door = asset_palette(cat.asset("Doorway_1"))  # black metal handle first, then wood
    r, g, b = door["primary"]
    assert r > g > b and door["wood"] == door["primary"] and max(door["metal"]) < 90
    window = asset_palette(cat.asset("Window_Bay_1"))  # wood frame, white glass
    assert window["glass"] != window["primary"] and min(window["glass"]) > 190
    fabric = [
        s
        for s in cat.assets_of("Sofa")
        if s.materials and match_material(*s.materials[0]).role == "fabric"
    ]
    assert len(fabric) >= 10  # most sofas list a fabric first
    for sofa in fabric:
        p = asset_palette(sofa)
        assert p["fabric"] == p["primary"], sofa.asset_id
    plants = cat.assets_of("HousePlant")
    assert len(plants) >= 10
    for plant in plants:
        p = asset_palette(plant)
        assert p["leaf"][1] > p["leaf"][0] and p["leaf"][1] > p["leaf"][2], plant.asset_id
        assert p["primary"][1] > p["primary"][0], plant.asset_id  # a plant reads green
    lamp = asset_palette(cat.asset("Floor_Lamp_1"))  # the shade lights, never the primary
    assert min(lamp["light"]) > 190 and lamp["primary"] != lamp["light"]
    bed = cat.asset("Bed_1")
    assert asset_palette(bed)["fabric"][0] > 230  # Mattress1AO


@pytest.mark.parametrize(
    ("otype", "check"),
    [
        ("Apple", lambda r, g, b: r > g + 80 and r > b + 80),
        ("Tomato", lambda r, g, b: r > g + 80 and r > b + 80),
        ("Lettuce", lambda r, g, b: g > r + 20 and g > b + 60),
        ("Potato", lambda r, g, b: r > g > b and r > 120),
        ("Bread", lambda r, g, b: r > g > b and r > b + 40),  # WhiteBread: pale
        ("Egg", lambda r, g, b: min(r, g, b) > 160 and r >= g >= b),
        ("Television", lambda r, g, b: max(r, g, b) < 60),
    ],
)
def test_food_and_natural_types_read_naturally(otype: str, check: Any) -> None:
    cat = load_catalogue()
    infos = cat.assets_of(otype)
    assert len(infos) >= 2, otype  # a type with its asset variants, not an empty loop
    for info in infos:
        primary = asset_palette(info)["primary"]
        assert check(*primary), (info.asset_id, primary)


def test_default_roles() -> None:
    info = AssetInfo("Thing_1", "NoSuchType", (1.0, 1.0, 1.0), False, False, False, False, False)
    p = asset_palette(info)
    assert spread(p["primary"]) <= 25  # generic grey
    assert max(p["screen"]) < 40 and min(p["ceramic"]) > 215 and min(p["light"]) > 190
    assert p["leaf"][1] > max(p["leaf"][0], p["leaf"][2])
    r, g, b = p["soil"]
    assert r > g > b and r < 100
    r, g, b = p["wood"]
    assert r > g > b
