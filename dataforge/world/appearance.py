"""What an object looks like as the embedded world draws it, in words: its colour, its shape,
the print or design on it and its material.

Every instance of an asset is drawn alike (an asset's shape and palette are functions of the
asset alone: :func:`~dataforge.world.shapes.variant_rng`,
:func:`~dataforge.world.materials.asset_palette`), so an object's appearance is its asset's
(:func:`object_appearance`, :func:`asset_appearance`, cached per asset). Real meshes from
``--assets`` are not read: :meth:`EmbeddedWorld.appearance
<dataforge.simulators.embedded.EmbeddedWorld.appearance>` says None for an asset they replace.

Colour
------
Each part of the asset's shape is drawn in one sRGB colour
(:func:`~dataforge.world.shape_mesh.part_color`). A part is named by the nearest colour of
:data:`NAMED_COLORS` in CIELAB (D65, CIE76 distance); metal parts (``role="metal"``, or a role
whose colour was read from a metal material) choose among the ``metal`` names, black and the
chromatic ones (a steel pot is silver, not white; brass is gold), other parts among the
``plain`` ones. The parts' *visible* surface areas are summed per name: a part's triangles are
sampled (4 points each) and a point inside another closed part (within 10 µm; open-topped
parts hide nothing) is hidden, so a book's pages under its covers or a bottle's body under its
label do not count.
The colour is the name with the most area, followed by ``"and <name>"`` when a second name
covers at least :data:`SECOND_COLOR_SHARE` of the visible area (upstream's ``"yellow and
green"``). ``rgb`` is the colour of the largest visible part of the first name.

Shape and print
---------------
The words the archetype recorded where it chose what to draw
(:meth:`~dataforge.world.shapes.ShapeBuilder.describe`). Without a recorded shape the word
comes from the largest visible part's primitive and the box's proportions (``elongated`` when
its longest side is over 3 times the next; else a sphere is ``spherical`` or ``oval``, a
cylinder ``cylindrical``, a ring ``circular``, a box ``rectangular`` when thin, else
``cuboidal``). Without a recorded print there is none (None): nothing is claimed that is not
drawn.

Material
--------
What the material behind the largest visible part's colour is made of: the base word of the
asset material it was read from (:func:`~dataforge.world.materials.palette_materials`:
porcelain is ``ceramic``, brass ``metal``, rubber ``rubber``, cardboard ``cardboard``), or the
part's own role (``metal``, ``wood``, ``glass``, ...) when it is drawn in that role's default
colour; None when the colour is the archetype's own (an apple's red) or the type's fallback.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.world.assets import AssetInfo
from dataforge.world.shapes import Part, Shape

if TYPE_CHECKING:
    from dataforge.world.house import HouseObject

RGB = tuple[int, int, int]

NAMED_COLORS: tuple[tuple[str, RGB, str], ...] = (
    # name, sRGB, kind: "plain" names any part, "metal" only metal parts
    ("black", (25, 25, 27), "plain"),
    ("gray", (90, 90, 92), "plain"),
    ("gray", (128, 128, 128), "plain"),
    ("gray", (170, 170, 170), "plain"),
    ("white", (242, 242, 238), "plain"),
    ("cream", (238, 224, 190), "plain"),
    ("light brown", (190, 140, 90), "plain"),
    ("light brown", (200, 165, 120), "plain"),
    ("brown", (90, 60, 40), "plain"),
    ("brown", (120, 75, 42), "plain"),
    ("brown", (150, 95, 60), "plain"),
    ("red", (150, 25, 30), "plain"),
    ("red", (190, 35, 35), "plain"),
    ("red", (200, 100, 95), "plain"),
    ("pink", (235, 155, 175), "plain"),
    ("pink", (220, 130, 150), "plain"),
    ("orange", (230, 125, 35), "plain"),
    ("orange", (210, 120, 70), "plain"),
    ("yellow", (235, 200, 50), "plain"),
    ("yellow", (230, 210, 120), "plain"),
    ("green", (40, 80, 45), "plain"),
    ("green", (60, 140, 60), "plain"),
    ("green", (110, 160, 130), "plain"),
    ("green", (140, 190, 90), "plain"),
    ("blue", (35, 45, 90), "plain"),
    ("blue", (45, 85, 175), "plain"),
    ("blue", (115, 140, 190), "plain"),
    ("blue", (120, 180, 220), "plain"),
    ("purple", (115, 60, 140), "plain"),
    ("purple", (170, 150, 200), "plain"),
    ("silver", (160, 162, 166), "metal"),
    ("silver", (195, 197, 200), "metal"),
    ("gold", (212, 175, 55), "metal"),
    ("gold", (180, 150, 80), "metal"),
    ("bronze", (170, 110, 60), "metal"),
    ("bronze", (140, 90, 50), "metal"),
)
"""Colour names (upstream FindingDory's annotation vocabulary, ``gray`` spelt so), each with
the sRGB colours it stands for (several for some names: dark, middle, light or muted)."""
_NOT_METAL = frozenset({"gray", "white", "cream", "light brown", "brown"})
"""Names a metal part is not given: a grey or white metal is silver, a brown one bronze."""

SECOND_COLOR_SHARE = 0.25
SAMPLE_WEIGHTS = np.array(
    [[1 / 3, 1 / 3, 1 / 3], [2 / 3, 1 / 6, 1 / 6], [1 / 6, 2 / 3, 1 / 6], [1 / 6, 1 / 6, 2 / 3]]
)
INSIDE_TOL_M = 1e-5

# The material word of a palette role drawn in its default colour (None: no material).
ROLE_MATERIALS: dict[str, str | None] = {
    "metal": "metal",
    "wood": "wood",
    "fabric": "fabric",
    "glass": "glass",
    "ceramic": "ceramic",
    "plastic": "plastic",
    "paper": "paper",
    "leaf": "organic",
}
# A material base's role -> the material word (None: not a material one names: walls, screens).
BASE_ROLE_MATERIALS: dict[str, str | None] = {
    **ROLE_MATERIALS,
    "stone": "stone",
    "wax": "wax",
    "wall": None,
    "soil": None,
    "screen": None,
    "light": None,
}
# Base words more precise than their role.
BASE_MATERIALS: dict[str, str] = {
    "leather": "leather",
    "rubber": "rubber",
    "cardboard": "cardboard",
}


@dataclass(frozen=True)
class Appearance:
    """An asset as drawn, in words (see the module docstring)."""

    shape: str
    color: str
    rgb: RGB
    print_or_design: str | None
    material: str | None

    def words(self) -> dict[str, str | None]:
        """``{shape, color, print_or_design, material}``."""
        return {
            "shape": self.shape,
            "color": self.color,
            "print_or_design": self.print_or_design,
            "material": self.material,
        }


# -- colour names ---------------------------------------------------------------------------


def srgb_to_lab(rgb: Any) -> np.ndarray:
    """CIELAB (D65) of sRGB colours 0..255 (``(..., 3)``)."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = np.array(
        [
            [0.4124564, 0.3575761, 0.1804375],
            [0.2126729, 0.7151522, 0.0721750],
            [0.0193339, 0.1191920, 0.9503041],
        ]
    )
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    L = 116.0 * f[..., 1] - 16.0
    a = 500.0 * (f[..., 0] - f[..., 1])
    b = 200.0 * (f[..., 1] - f[..., 2])
    return np.stack([L, a, b], axis=-1)


_NAMES = tuple(n for n, _, _ in NAMED_COLORS)
_LABS = srgb_to_lab([c for _, c, _ in NAMED_COLORS])
_PLAIN = np.array([k == "plain" for _, _, k in NAMED_COLORS])
_METAL = np.array([k == "metal" or (n not in _NOT_METAL) for n, _, k in NAMED_COLORS])


def color_name(rgb: Any, metal: bool = False) -> str:
    """The name in :data:`NAMED_COLORS` nearest ``rgb`` in CIELAB (ties: the first listed);
    ``metal``: among the metal names, the chromatic ones and black."""
    d = np.linalg.norm(_LABS - srgb_to_lab(rgb), axis=1)
    d[~(_METAL if metal else _PLAIN)] = np.inf
    return _NAMES[int(np.argmin(d))]


# -- visible area -----------------------------------------------------------------------------


def _local(points: np.ndarray, part: Part) -> np.ndarray:
    return (points - np.asarray(part.center)) @ part.matrix()


def inside_part(points: np.ndarray, part: Part, tol: float = INSIDE_TOL_M) -> np.ndarray:
    """Which of ``points`` (N x 3, asset frame) lie inside ``part``'s primitive (its analytic
    solid: a box, an elliptic frustum, an ellipsoid, a torus), or within ``tol`` of it."""
    p = _local(np.asarray(points, dtype=np.float64), part)
    sx, sy, sz = part.size
    if part.primitive == "box":
        return np.all(np.abs(p) <= np.array([sx, sy, sz]) / 2.0 + tol, axis=1)
    if part.primitive == "cylinder":
        t = np.clip(p[:, 1] / max(sy, 1e-12) + 0.5, 0.0, 1.0)
        s = 1.0 + (part.taper - 1.0) * t
        rx, rz = sx / 2.0 * s + tol, sz / 2.0 * s + tol
        radial = (p[:, 0] / rx) ** 2 + (p[:, 2] / rz) ** 2 <= 1.0
        return radial & (np.abs(p[:, 1]) <= sy / 2.0 + tol)
    if part.primitive == "sphere":
        r = np.array([sx, sy, sz]) / 2.0 + tol
        return np.sum((p / r) ** 2, axis=1) <= 1.0
    minor = sy / 2.0  # torus, as torus_geometry draws it
    major = max((sx + sz) / 4.0 - minor, minor * 0.25)
    rho = np.hypot(p[:, 0], p[:, 2])
    return (rho - major) ** 2 + p[:, 1] ** 2 <= (minor + tol) ** 2


def visible_areas(shape: Shape) -> np.ndarray:
    """Each part's drawn surface area (m²) not inside another closed part (module docstring)."""
    from dataforge.world.shape_mesh import part_geometry

    occluders = [k for k, q in enumerate(shape.parts) if not q.open_top]
    out = np.zeros(len(shape.parts))
    for k, part in enumerate(shape.parts):
        v, _, f = part_geometry(part)
        tri = v[f]  # M x 3 x 3
        area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
        pts = np.einsum("sk,mkd->msd", SAMPLE_WEIGHTS, tri).reshape(-1, 3)
        hidden = np.zeros(len(pts), dtype=bool)
        for j in occluders:
            if j != k:
                hidden |= inside_part(pts, shape.parts[j])
        seen = (~hidden).reshape(len(tri), len(SAMPLE_WEIGHTS)).mean(axis=1)
        out[k] = float(np.sum(area * seen))
    return out


# -- appearance -----------------------------------------------------------------------------


def _material(part: Part, sources: dict[str, Any]) -> str | None:
    if part.color is not None:
        return None
    role = part.role if part.role in sources else "primary"
    m = sources.get(role)
    if m is None:
        return ROLE_MATERIALS.get(role)
    if m.base is None:
        return None
    return BASE_MATERIALS.get(m.base) or BASE_ROLE_MATERIALS.get(m.role or "")


def _is_metal(part: Part, sources: dict[str, Any]) -> bool:
    if part.color is not None:
        return False
    role = part.role if part.role in sources else "primary"
    m = sources.get(role)
    return (m.role == "metal") if m is not None else role == "metal"


def fallback_shape(shape: Shape, areas: np.ndarray) -> str:
    """A shape word from the largest visible part's primitive and the box's proportions."""
    a, b, c = sorted(float(v) for v in shape.size)
    if c > 3.0 * b:
        return "elongated"
    if not shape.parts:
        return "cuboidal"
    prim = shape.parts[int(np.argmax(areas))].primitive
    if prim == "sphere":
        return "spherical" if c < 1.25 * a else "oval"
    if prim == "cylinder":
        return "cylindrical"
    if prim == "torus":
        return "circular"
    return "rectangular" if a < 0.25 * b else "cuboidal"


def shape_appearance(shape: Shape, info: AssetInfo) -> Appearance:
    """The appearance of ``shape`` drawn with asset ``info``'s palette."""
    from dataforge.world.materials import asset_palette, palette_materials
    from dataforge.world.shape_mesh import part_color

    palette, sources = asset_palette(info), palette_materials(info)
    areas = visible_areas(shape)
    by_name: dict[str, float] = {}
    best: dict[str, int] = {}
    for k, part in enumerate(shape.parts):
        name = color_name(part_color(part, palette), _is_metal(part, sources))
        by_name[name] = by_name.get(name, 0.0) + float(areas[k])
        if name not in best or areas[k] > areas[best[name]]:
            best[name] = k
    total = sum(by_name.values())
    ranked = sorted(by_name, key=lambda n: -by_name[n])  # stable: first drawn first on ties
    if not ranked:
        return Appearance(fallback_shape(shape, areas), "gray", (128, 128, 128), None, None)
    color = ranked[0]
    if len(ranked) > 1 and total > 0 and by_name[ranked[1]] >= SECOND_COLOR_SHARE * total:
        color = f"{ranked[0]} and {ranked[1]}"
    main = shape.parts[best[ranked[0]]]
    return Appearance(
        shape=shape.description.get("shape") or fallback_shape(shape, areas),
        color=color,
        rgb=tuple(int(v) for v in part_color(main, palette)),  # type: ignore[arg-type]
        print_or_design=shape.description.get("print_or_design"),
        material=_material(main, sources),
    )


@functools.lru_cache(maxsize=4096)
def asset_appearance(info: AssetInfo) -> Appearance:
    """How the embedded world draws asset ``info`` (its archetype's shape), in words."""
    from dataforge.world.archetypes import shape_of

    return shape_appearance(shape_of(info), info)


def object_appearance(obj: HouseObject, info: AssetInfo) -> Appearance:
    """How house object ``obj`` (a :class:`~dataforge.world.house.HouseObject` of asset
    ``info``) is drawn: its asset's appearance (every instance is drawn alike)."""
    if obj.asset_id != info.asset_id:
        from dataforge.errors import UsageError

        raise UsageError(f"object {obj.id} is of asset {obj.asset_id}, not {info.asset_id}")
    return asset_appearance(info)
