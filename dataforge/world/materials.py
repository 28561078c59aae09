"""Colours from ProcTHOR material names: assets, walls, floors, ceilings and the sky.

ProcTHOR names materials (``PureWhite``, ``LightWoodCounters3``, ``BrownMarbleFake``,
``Fridge_Metal_Mat``, ...) and textures them in Unity; a rasteriser without textures needs one
sRGB colour per material. This module reads the colour off the name with a small keyword table.

Matching
--------
A name is lower-cased and stripped of everything but letters and digits (``Porcelain_Off_White_Mat``
becomes ``porcelainoffwhitemat``), and the words of :data:`IGNORED` are blanked (``hammered`` and
``deferred`` hide a ``red``); a keyword matches when it occurs anywhere in what is left. Three
tables are scanned, each in its order, and the first entry found wins:

* **base**, what the thing is made of (:data:`BASES`; sRGB, palette role), most specific first:

  - wood: walnut 94,61,38; mahogany 103,50,35; cherry 135,62,40; oak 170,125,80; maple
    200,160,110; pine 205,165,110; birch 215,190,150; bamboo 200,175,110; wicker/rattan
    180,140,85; wood/beam 150,105,65;
  - fabric: leather 110,70,45; mattress 240,238,230; sheet 236,234,228; linen 225,215,195;
    fabric (also the typo fabirc), cloth, velvet, carpet, rug, curtain, upholstery, satin, wool,
    cushion (also cusion), pillow, blanket, sofa, couch: a *swatch*, one of
    :data:`FABRIC_SWATCHES` (muted upholstery colours) chosen by the sha256 of the name, so
    ``Sofa3_Fabric_AlbedoTransparency1`` and ``...2`` differ while each stays the same;
  - glass: mirror 200,210,215; glass 185,210,215;
  - metal: stainless 200,202,204; chrome 215,218,222; aluminium/aluminum 190,193,197; silver
    192,194,198; iron 80,80,82 (cast iron); steel 175,178,182; copper 184,115,51; brass
    181,151,80; gold 212,175,55; foil 200,200,203; metal (also metallic) 165,167,171;
  - stone: marble 232,228,220; granite 120,118,115; countertop 150,148,144; concrete
    160,158,152; stone 140,135,125; brick 160,80,60;
  - ceramic: porcelain 240,238,232; ceramic 235,232,225; tile 225,222,215 (after drywall);
  - wall: drywall 228,224,215; plaster 232,226,214; wall 225,220,210 (after tile);
  - plastic: rubber 45,45,48; plastic (also plasitc), pvc 215,215,210;
  - paper: cardboard 180,140,95; newspaper 215,210,195; paper 238,235,225;
  - others: wax 240,230,205; leaves/leaf 70,120,50 (leaf); soil/dirt 70,50,35 (soil); screen
    20,22,26 (screen); lampshade 250,240,215 (light).
* **tint**, a colour word (:data:`TINTS`): robinegg, offwhite, eggshell, ivory, cream, white,
  black, charcoal, grey, gray, maroon, red, pink, rose, purple, violet, lavender, navy, turquoise,
  teal, aqua, blue, olive, green, yellow, orange, brown, tan, beige, sand.
* **shade**: ``dark`` (times 0.55), ``light`` or ``pale`` (40 % of the way to white).

Order matters where a name combines words: wood before the fabric words (``DarkWood Sofas`` is
wood), fabric before ``wall`` (``RoboTHOR_Wall_Panel_Fabric_Mat``), glass before ``tile``
(``IrregularGlassTiles1``), marble and granite before ``tile`` (``CreamMarbleTiles``), drywall
before ``tile`` (``YellowDrywallTiled``: texture tiling), ``offwhite`` before ``white``,
``maroon`` before ``red``, the named metals before ``metal``.

Rule: the colour is the base's, then the tint mixed in at 70 % (``BrownMarbleFake``: marble
tinted brown; ``WhiteWood``: white-washed wood; ``PureBlack_Wood``: near-black brown), then the
shade (``DarkWood2``, ``LightWoodCounters3``). A tint alone is the tint's colour. When the name has
no base word its category supplies one: the asset's own ``[category, name]`` pair, or, for a bare
name (a house's walls and floors), the categories ProcTHOR's ``material-database.json`` files the
name under, the first with a base word in sorted order (``BedroomFloor1`` and ``GreyFloor 3`` are
Wood: wood, grey wood; ``PureWhite`` is Wall: a wall tinted white, near white; the look-up, like
the matching, ignores case and punctuation). No base and no tint: no colour
(``Fridge_Primary1_Mat``, ``Apple1_Mat1``); :func:`asset_palette` then falls back on the per-type
colours of :data:`TYPE_COLORS` (an apple red, a loaf tan, a lettuce green).

:func:`asset_palette` gives an asset its role colours, :func:`structure_color` a wall, floor or
ceiling its colour; :data:`SKY_COLOR` is what windows show.
"""

from __future__ import annotations

import colorsys
import functools
import hashlib
import importlib.util
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from dataforge.errors import UsageError
from dataforge.world.assets import AssetInfo

RGB = tuple[int, int, int]

MATERIAL_DATABASE = "material-database.json"

# Palette roles, every one present in what asset_palette returns.
ROLES: tuple[str, ...] = (
    "primary",
    "secondary",
    "metal",
    "wood",
    "fabric",
    "glass",
    "screen",
    "ceramic",
    "plastic",
    "paper",
    "leaf",
    "soil",
    "light",
)

_SWATCH = None  # marks a fabric base: its colour is a swatch picked by the name

# (keywords, sRGB or _SWATCH, role); scanned in order, the first keyword found wins.
BASES: tuple[tuple[tuple[str, ...], RGB | None, str], ...] = (
    (("walnut",), (94, 61, 38), "wood"),
    (("mahogany",), (103, 50, 35), "wood"),
    (("cherry",), (135, 62, 40), "wood"),
    (("oak",), (170, 125, 80), "wood"),
    (("maple",), (200, 160, 110), "wood"),
    (("pine",), (205, 165, 110), "wood"),
    (("birch",), (215, 190, 150), "wood"),
    (("bamboo",), (200, 175, 110), "wood"),
    (("wicker", "rattan"), (180, 140, 85), "wood"),
    (("wood", "beam"), (150, 105, 65), "wood"),
    (("leather",), (110, 70, 45), "fabric"),
    (("mattress",), (240, 238, 230), "fabric"),
    (("sheet",), (236, 234, 228), "fabric"),
    (("linen",), (225, 215, 195), "fabric"),
    (
        (
            "fabric",
            "fabirc",
            "cloth",
            "velvet",
            "carpet",
            "rug",
            "curtain",
            "upholstery",
            "satin",
            "wool",
            "cushion",
            "cusion",
            "pillow",
            "blanket",
            "sofa",
            "couch",
        ),
        _SWATCH,
        "fabric",
    ),
    (("mirror",), (200, 210, 215), "glass"),
    (("glass",), (185, 210, 215), "glass"),
    (("stainless",), (200, 202, 204), "metal"),
    (("chrome",), (215, 218, 222), "metal"),
    (("aluminium", "aluminum"), (190, 193, 197), "metal"),
    (("silver",), (192, 194, 198), "metal"),
    (("iron",), (80, 80, 82), "metal"),
    (("steel",), (175, 178, 182), "metal"),
    (("copper",), (184, 115, 51), "metal"),
    (("brass",), (181, 151, 80), "metal"),
    (("gold",), (212, 175, 55), "metal"),
    (("foil",), (200, 200, 203), "metal"),
    (("metal",), (165, 167, 171), "metal"),
    (("marble",), (232, 228, 220), "stone"),
    (("granite",), (120, 118, 115), "stone"),
    (("countertop",), (150, 148, 144), "stone"),
    (("concrete",), (160, 158, 152), "stone"),
    (("stone",), (140, 135, 125), "stone"),
    (("brick",), (160, 80, 60), "stone"),
    (("porcelain",), (240, 238, 232), "ceramic"),
    (("ceramic",), (235, 232, 225), "ceramic"),
    (("drywall",), (228, 224, 215), "wall"),
    (("plaster",), (232, 226, 214), "wall"),
    (("tile",), (225, 222, 215), "ceramic"),
    (("wall",), (225, 220, 210), "wall"),
    (("rubber",), (45, 45, 48), "plastic"),
    (("plastic", "plasitc", "pvc"), (215, 215, 210), "plastic"),
    (("cardboard",), (180, 140, 95), "paper"),
    (("newspaper",), (215, 210, 195), "paper"),
    (("paper",), (238, 235, 225), "paper"),
    (("wax",), (240, 230, 205), "wax"),
    (("leaves", "leaf"), (70, 120, 50), "leaf"),
    (("soil", "dirt"), (70, 50, 35), "soil"),
    (("screen",), (20, 22, 26), "screen"),
    (("lampshade",), (250, 240, 215), "light"),
)

# Colour words; scanned in order, the first found wins.
TINTS: tuple[tuple[str, RGB], ...] = (
    ("robinegg", (140, 205, 200)),
    ("offwhite", (238, 234, 222)),
    ("eggshell", (240, 234, 214)),
    ("ivory", (240, 235, 215)),
    ("cream", (238, 225, 195)),
    ("white", (245, 245, 242)),
    ("black", (28, 28, 30)),
    ("charcoal", (55, 55, 58)),
    ("grey", (128, 128, 128)),
    ("gray", (128, 128, 128)),
    ("maroon", (110, 30, 35)),
    ("red", (175, 45, 40)),
    ("pink", (230, 160, 175)),
    ("rose", (200, 130, 135)),
    ("purple", (110, 60, 130)),
    ("violet", (130, 90, 170)),
    ("lavender", (180, 160, 210)),
    ("navy", (35, 45, 90)),
    ("turquoise", (60, 180, 175)),
    ("teal", (30, 120, 120)),
    ("aqua", (110, 200, 210)),
    ("blue", (50, 90, 170)),
    ("olive", (110, 110, 50)),
    ("green", (60, 130, 70)),
    ("yellow", (225, 195, 60)),
    ("orange", (220, 120, 40)),
    ("brown", (115, 75, 45)),
    ("tan", (200, 165, 120)),
    ("beige", (220, 205, 175)),
    ("sand", (205, 185, 145)),
)

# Words blanked before matching: they hide a keyword that is not meant ("hammered" -> "red").
IGNORED: tuple[str, ...] = ("hammered", "deferred")
_IGNORED_RE = re.compile("|".join(IGNORED))

SHADES: tuple[tuple[str, str], ...] = (("dark", "dark"), ("light", "light"), ("pale", "light"))

TINT_WEIGHT = 0.7
TYPE_TINT_WEIGHT = 0.4  # a colour word alone, on an asset type's colour (WhiteBread: pale bread)
DARK_FACTOR = 0.55
LIGHT_MIX = 0.4

# Muted upholstery / carpet colours for fabrics the name gives no colour.
FABRIC_SWATCHES: tuple[RGB, ...] = (
    (150, 150, 148),  # light grey
    (95, 96, 100),  # charcoal grey
    (200, 188, 165),  # oatmeal
    (175, 160, 140),  # taupe
    (85, 100, 125),  # slate blue
    (120, 135, 105),  # sage
    (140, 95, 75),  # rust brown
    (60, 70, 95),  # navy
    (185, 150, 140),  # dusty rose
    (110, 85, 65),  # chocolate
)

# Role colours when the asset's materials name none for the role.
ROLE_DEFAULTS: dict[str, RGB] = {
    "metal": (175, 178, 182),
    "wood": (150, 105, 65),
    "glass": (185, 210, 215),
    "screen": (18, 20, 24),
    "ceramic": (238, 236, 230),
    "plastic": (70, 72, 78),
    "paper": (238, 235, 225),
    "leaf": (70, 125, 55),
    "soil": (65, 45, 30),
    "light": (255, 244, 214),
}

# The primary colour of each ProcTHOR object type when its materials say nothing useful.
TYPE_COLORS: dict[str, RGB] = {
    "AlarmClock": (60, 60, 65),
    "AluminumFoil": (200, 200, 203),
    "Apple": (180, 30, 35),
    "ArmChair": (125, 115, 105),
    "BaseballBat": (200, 165, 115),
    "BasketBall": (200, 95, 40),
    "Bed": (228, 224, 214),
    "Blinds": (230, 225, 215),
    "Book": (130, 60, 50),
    "Boots": (90, 60, 40),
    "Bottle": (120, 160, 120),
    "Bowl": (235, 232, 225),
    "Box": (180, 140, 95),
    "Bread": (200, 150, 90),
    "ButterKnife": (195, 197, 200),
    "CD": (200, 205, 215),
    "Candle": (240, 230, 205),
    "Cart": (170, 172, 176),
    "CellPhone": (30, 30, 35),
    "Chair": (140, 100, 65),
    "Cloth": (170, 150, 130),
    "ClothesDryer": (235, 235, 232),
    "CoffeeMachine": (45, 45, 48),
    "CoffeeTable": (140, 100, 65),
    "CounterTop": (200, 198, 192),
    "CreditCard": (50, 80, 150),
    "Cup": (235, 232, 225),
    "Desk": (150, 110, 70),
    "DeskLamp": (60, 60, 62),
    "Desktop": (40, 40, 44),
    "DiningTable": (140, 100, 65),
    "DishSponge": (230, 200, 60),
    "DogBed": (140, 110, 85),
    "Doorframe": (235, 232, 225),
    "Doorway": (170, 125, 85),
    "Dresser": (150, 110, 70),
    "Dumbbell": (50, 50, 55),
    "Egg": (240, 225, 195),
    "Faucet": (200, 202, 205),
    "FloorLamp": (60, 60, 62),
    "Footstool": (130, 95, 70),
    "Fork": (195, 197, 200),
    "Fridge": (205, 207, 210),
    "GarbageBag": (30, 30, 32),
    "GarbageCan": (150, 152, 155),
    "HandTowel": (230, 225, 210),
    "HandTowelHolder": (190, 192, 195),
    "HousePlant": (70, 125, 55),
    "Kettle": (190, 192, 195),
    "KeyChain": (190, 170, 90),
    "Knife": (195, 197, 200),
    "Ladle": (195, 197, 200),
    "Laptop": (50, 50, 55),
    "LaundryHamper": (200, 190, 170),
    "Lettuce": (110, 170, 70),
    "LightSwitch": (240, 238, 232),
    "Microwave": (60, 60, 64),
    "Mug": (235, 232, 225),
    "Newspaper": (215, 210, 195),
    "Ottoman": (120, 100, 85),
    "Painting": (160, 130, 95),
    "Pan": (55, 55, 58),
    "PaperTowelRoll": (240, 238, 232),
    "Pen": (30, 60, 150),
    "Pencil": (230, 180, 40),
    "PepperShaker": (70, 70, 72),
    "Pillow": (200, 190, 175),
    "Plate": (240, 238, 232),
    "Plunger": (150, 40, 35),
    "Pot": (175, 177, 180),
    "Potato": (175, 135, 85),
    "RemoteControl": (35, 35, 38),
    "RoomDecor": (180, 160, 130),
    "Safe": (70, 72, 75),
    "SaltShaker": (235, 235, 232),
    "ScrubBrush": (200, 180, 120),
    "ShelvingUnit": (220, 215, 205),
    "ShowerCurtain": (225, 228, 230),
    "ShowerHead": (195, 197, 200),
    "SideTable": (150, 110, 70),
    "Sink": (235, 235, 232),
    "SoapBar": (235, 220, 200),
    "SoapBottle": (120, 170, 200),
    "Sofa": (130, 120, 110),
    "Spatula": (45, 45, 48),
    "Spoon": (195, 197, 200),
    "SprayBottle": (80, 140, 200),
    "Statue": (190, 185, 175),
    "Stool": (120, 90, 60),
    "TVStand": (80, 60, 45),
    "TableTopDecor": (180, 160, 130),
    "TeddyBear": (150, 105, 65),
    "Television": (25, 25, 28),
    "TennisRacket": (60, 90, 160),
    "TissueBox": (170, 200, 220),
    "Toaster": (190, 192, 195),
    "Toilet": (240, 240, 238),
    "ToiletPaper": (245, 245, 242),
    "ToiletPaperHanger": (195, 197, 200),
    "Tomato": (210, 45, 35),
    "Towel": (225, 220, 205),
    "TowelHolder": (195, 197, 200),
    "VacuumCleaner": (200, 60, 60),
    "Vase": (200, 195, 185),
    "WashingMachine": (240, 240, 238),
    "Watch": (60, 60, 62),
    "WateringCan": (120, 160, 120),
    "Window": (235, 232, 225),
    "WineBottle": (40, 80, 50),
}
GENERIC_COLOR: RGB = (160, 160, 160)

# Roles a material gives an asset's colour for, but never its primary colour.
_NEVER_PRIMARY = frozenset({"light", "screen"})
# Roles of small parts (trim): the primary colour prefers any other material when there is one.
_TRIM = frozenset({"metal", "glass", "plastic"})

STRUCTURE_DEFAULTS: dict[str, RGB] = {
    "wall": (222, 216, 206),  # light warm grey
    "floor": (150, 108, 70),  # mid wood
    "ceiling": (245, 245, 242),  # near white
}
SKY_COLOR: RGB = (135, 185, 235)  # a clear daylight sky, seen through windows

# Jitter per asset: lightness +-0.045 (HLS, 0..1), hue +-0.015 of the wheel, saturation +-10 %,
# warmth +-4 levels (red up, blue down: greys have no hue to turn).
_JITTER_L = 0.045
_JITTER_H = 0.015
_JITTER_S = 0.10
_JITTER_WARM = 4.0


@dataclass(frozen=True)
class MaterialMatch:
    """What the keyword table reads off a material name (see the module docstring).

    ``base``/``tint``/``shade``: the matched keyword (the first spelling of its entry) or None;
    ``role``: the base's palette role; ``category``: the category that supplied the base when the
    name had none (None when the name supplied it or nothing did).
    """

    name: str
    base: str | None = None
    role: str | None = None
    tint: str | None = None
    shade: str | None = None
    category: str | None = None

    @property
    def matched(self) -> bool:
        return self.base is not None or self.tint is not None


def _norm(text: str) -> str:
    return _IGNORED_RE.sub("|", re.sub(r"[^a-z0-9]", "", text.lower()))


def _find_base(norm: str) -> tuple[str, RGB | None, str] | None:
    for keywords, rgb, role in BASES:
        if any(k in norm for k in keywords):
            return keywords[0], rgb, role
    return None


_BASE_RGB: dict[str, RGB | None] = {kw[0]: rgb for kw, rgb, _ in BASES}
_TINT_RGB: dict[str, RGB] = dict(TINTS)


def match_material(name: str, category: str | None = None) -> MaterialMatch:
    """Read ``name`` with the keyword table; the base falls back on ``category`` (else, for a name
    without one, on the category ``material-database.json`` files the name under)."""
    norm = _norm(name)
    found = _find_base(norm)
    source: str | None = None
    if found is None:
        candidates = (category,) if category is not None else _database_categories(name)
        for cat in candidates:
            found = _find_base(_norm(cat))
            if found is not None:
                source = cat
                break
    tint = next((t for t, _ in TINTS if t in norm), None)
    shade = next((s for k, s in SHADES if k in norm), None)
    return MaterialMatch(
        name=name,
        base=None if found is None else found[0],
        role=None if found is None else found[2],
        tint=tint,
        shade=shade,
        category=source,
    )


def material_color(name: str, category: str | None = None) -> RGB | None:
    """The sRGB colour the keyword table gives material ``name`` (``category``: the asset
    database's category for it, optional); None when no base or colour word matches."""
    return _compose(match_material(name, category), None)


def _compose(m: MaterialMatch, fallback: RGB | None) -> RGB | None:
    """Base (else ``fallback`` where a tint has no base), tint mixed in, then the shade."""
    if m.base is not None:
        rgb = _BASE_RGB[m.base]
        color: tuple[float, float, float] = _swatch(m.name) if rgb is None else rgb
        if m.tint is not None:
            color = _mix(color, _TINT_RGB[m.tint], TINT_WEIGHT)
    elif m.tint is not None:
        tint = _TINT_RGB[m.tint]
        color = tint if fallback is None else _mix(fallback, tint, TYPE_TINT_WEIGHT)
    else:
        return None
    if m.shade == "dark":
        color = (color[0] * DARK_FACTOR, color[1] * DARK_FACTOR, color[2] * DARK_FACTOR)
    elif m.shade == "light":
        color = _mix(color, (255, 255, 255), LIGHT_MIX)
    return _rgb(color)


def asset_palette(info: AssetInfo) -> dict[str, RGB]:
    """Colours per role for asset ``info`` (an :class:`~dataforge.world.assets.AssetInfo`); every
    role of :data:`ROLES` is present.

    * ``primary``: the first of the asset's materials the table gives a colour, preferring a body
      material (wood, fabric, stone, ...) to trim (metal, glass, plastic: a door's handle is listed
      before its wood) and never a lamp shade or screen; else the type's :data:`TYPE_COLORS`. A
      material with a colour word but no base word tints the type's colour at 40 %
      (``WhiteBread_Mat1``: a pale loaf).
    * ``secondary``: the next material whose colour differs from the primary; else the primary
      darker (light primaries) or lighter (dark ones).
    * ``metal``, ``wood``, ``fabric``, ``glass``, ``screen``, ``ceramic``, ``plastic``, ``paper``,
      ``leaf``, ``light``: the first material of that role, else :data:`ROLE_DEFAULTS` (fabric: a
      swatch picked by the asset id); ``soil`` always the default.

    Every colour is then jittered by the asset id (sha256: lightness, hue, saturation, warmth),
    so two assets of one type differ slightly and one asset always gets the same colours.
    """
    palette, _ = _palette_sources(info)
    jitter = _jitter(str(info.asset_id))
    return {role: jitter(palette[role]) for role in ROLES}


def palette_materials(info: AssetInfo) -> dict[str, MaterialMatch | None]:
    """The material each role colour of :func:`asset_palette` was read from (None: a default:
    the type's colour, a role default, a swatch, or the primary made darker or lighter)."""
    return _palette_sources(info)[1]


def _palette_sources(
    info: AssetInfo,
) -> tuple[dict[str, RGB], dict[str, MaterialMatch | None]]:
    """:func:`asset_palette` before the jitter, and the material behind each role colour."""
    asset_id = str(info.asset_id)
    type_color = TYPE_COLORS.get(info.object_type, GENERIC_COLOR)
    found: list[tuple[str | None, RGB, MaterialMatch]] = []
    for category, name in info.materials:
        m = match_material(name, category)
        rgb = _compose(m, type_color)
        if rgb is not None:
            found.append((m.role, rgb, m))
    body = [k for k, (role, _, _) in enumerate(found) if role not in _TRIM | _NEVER_PRIMARY]
    trim = [k for k, (role, _, _) in enumerate(found) if role in _TRIM]
    chosen = next(iter(body or trim), None)
    primary = type_color if chosen is None else found[chosen][1]
    sources: dict[str, MaterialMatch | None] = {
        "primary": None if chosen is None else found[chosen][2]
    }
    rest = [
        (c, m) for k, (role, c, m) in enumerate(found) if k != chosen and role not in _NEVER_PRIMARY
    ]
    second = next(((c, m) for c, m in rest if c != primary), None)
    if second is None:
        factor = 0.7 if _luma(primary) > 128 else 1.45
        secondary, sources["secondary"] = _rgb([v * factor for v in primary]), None
    else:
        secondary, sources["secondary"] = second
    palette: dict[str, RGB] = {"primary": primary, "secondary": secondary}
    for role in ROLES[2:]:
        own = next(((c, m) for r, c, m in found if r == role), None)
        if own is None:
            palette[role] = _swatch(asset_id) if role == "fabric" else ROLE_DEFAULTS[role]
            sources[role] = None
        else:
            palette[role], sources[role] = own
    return palette, sources


def structure_color(
    kind: str,
    material: str | Mapping[str, Any] | None,
    color: Sequence[float] | Mapping[str, float] | None = None,
) -> RGB:
    """The colour of a wall, floor or ceiling (``kind``).

    ``color`` (0..1 floats, as ``(r, g, b)`` or a house's ``{"r", "g", "b"}``) wins; else the
    colour of ``material`` (a name, or a newer house's ``{"name", "color"}`` object, whose colour
    then counts as ``color``); else the kind's default (walls light warm grey, floors mid wood,
    ceilings near white).
    """
    if kind not in STRUCTURE_DEFAULTS:
        raise UsageError(f"unknown structure kind {kind!r}: expected wall, floor or ceiling")
    name = material
    if isinstance(material, Mapping):
        name = material.get("name")
        if color is None:
            color = material.get("color")
    if color is not None:
        return _from_unit(color)
    if isinstance(name, str) and name:
        rgb = material_color(name)
        if rgb is not None:
            return rgb
    return STRUCTURE_DEFAULTS[kind]


def _from_unit(color: Sequence[float] | Mapping[str, float]) -> RGB:
    values: list[Any] = (
        [color.get(k) for k in "rgb"] if isinstance(color, Mapping) else list(color)[:3]
    )
    if len(values) != 3 or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in values
    ):
        raise UsageError(f"a colour is three numbers 0..1 (r, g, b), got {color!r}")
    return _rgb([255.0 * float(v) for v in values])


def _mix(a: Sequence[float], b: Sequence[float], w: float) -> tuple[float, float, float]:
    return (a[0] + (b[0] - a[0]) * w, a[1] + (b[1] - a[1]) * w, a[2] + (b[2] - a[2]) * w)


def _rgb(color: Sequence[float]) -> RGB:
    r, g, b = (round(min(255.0, max(0.0, float(v)))) for v in color)
    return (r, g, b)


def _luma(c: RGB) -> float:
    return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _swatch(key: str) -> RGB:
    return FABRIC_SWATCHES[int.from_bytes(_digest(key)[:4], "big") % len(FABRIC_SWATCHES)]


def _jitter(asset_id: str) -> Callable[[RGB], RGB]:
    d = _digest(asset_id)
    u = [int.from_bytes(d[4 * k : 4 * k + 4], "big") / 0xFFFFFFFF * 2.0 - 1.0 for k in range(4)]
    dl, dh, ds = _JITTER_L * u[0], _JITTER_H * u[1], 1.0 + _JITTER_S * u[2]
    warm = _JITTER_WARM * u[3]

    def apply(c: RGB) -> RGB:
        h, lum, s = colorsys.rgb_to_hls(c[0] / 255.0, c[1] / 255.0, c[2] / 255.0)
        rgb = colorsys.hls_to_rgb((h + dh) % 1.0, min(1.0, max(0.0, lum + dl)), min(1.0, s * ds))
        return _rgb([255.0 * rgb[0] + warm, 255.0 * rgb[1], 255.0 * rgb[2] - warm])

    return apply


@functools.lru_cache(maxsize=1)
def _material_database() -> dict[str, tuple[str, ...]]:
    """``{normalised material name: categories, sorted}`` from the installed procthor wheel (empty
    without it)."""
    if importlib.util.find_spec("procthor") is None:
        return {}
    node = files("procthor") / "databases" / MATERIAL_DATABASE
    try:
        raw = json.loads(node.read_bytes())
    except (OSError, ValueError):
        return {}
    out: dict[str, list[str]] = {}
    if isinstance(raw, dict):
        for cat, names in sorted(raw.items()):
            for name in names if isinstance(names, list) else ():
                if isinstance(name, str):
                    out.setdefault(_norm(name), []).append(cat)
    return {k: tuple(v) for k, v in out.items()}


def _database_categories(name: str) -> tuple[str, ...]:
    return _material_database().get(_norm(name), ())
