"""Shapes of assets: parts built from primitives, support surfaces and sub-receptacles.

A :class:`Shape` describes one asset in its own frame: origin at the centre of its bounding box,
axes the asset's x (right), y (up), z (front: furniture stands with its back, local -z, against
a wall, and a chair faces +z, toward its table). Every part lies inside the asset's box.

* :class:`Part`: one primitive (``box``, ``cylinder``, ``sphere``, ``torus``) scaled to ``size``
  (the extents of the primitive's own bounding box before ``rotation``), centred at ``center``.
  ``axis`` turns a cylinder's or torus's axis from y to x or z; ``rotation`` (AI2-THOR Euler
  degrees) turns the part about its centre after that. ``taper`` narrows (< 1) or widens (> 1) a
  cylinder's top; ``open_top`` leaves a box's or a cylinder's top face out (basins, cups).
  ``role`` names the colour (see :mod:`dataforge.world.materials`), or ``color`` gives it;
  ``element`` is the sub-receptacle the part belongs to (None: the object itself).
* :class:`Surface`: where things can rest: ``kind`` (``top``, ``shelf``, ``seat``,
  ``interior``, ``basin``), ``height`` above the object's bottom, a rectangle in the asset's
  (x, z) plane, the ``clearance`` above it (None: open to the sky), the ``element`` it belongs to
  and whether the object must be open to reach it (``needs_open``).
* ``elements``: sub-receptacles typed as AI2-THOR types them (``Drawer``, ``Shelf``, ``Cabinet``,
  ``SinkBasin``): a dresser's drawers, a shelving unit's boards.
* ``description``: words for what the archetype chose to draw, recorded where it chooses
  (:meth:`ShapeBuilder.describe`): ``shape`` (``"cylindrical"``, ``"bulbous"``, ...) and
  ``print_or_design`` (a label, a band, tape: only what is drawn);
  :mod:`dataforge.world.appearance` reads them.

:class:`ShapeBuilder` is how archetypes write shapes: coordinates with the bottom at y = 0 and x,
z about the box centre, parts clamped to the box.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dataforge.errors import UsageError
from dataforge.world.vectors import Vec3

PRIMITIVES = ("box", "cylinder", "sphere", "torus")
SURFACE_KINDS = ("top", "shelf", "seat", "interior", "basin")
SUB_RECEPTACLE_TYPES = ("Cabinet", "Drawer", "Shelf", "SinkBasin")
"""AI2-THOR's types of receptacles that are parts of another object (not ProcTHOR asset types)."""
INSIDE_TOL_M = 1e-4
DESCRIPTIONS = ("shape", "print_or_design")
"""What :meth:`ShapeBuilder.describe` records."""


@dataclass(frozen=True)
class Part:
    primitive: str
    center: Vec3
    size: Vec3
    role: str = "primary"
    color: tuple[int, int, int] | None = None
    axis: str = "y"
    rotation: Vec3 = (0.0, 0.0, 0.0)
    taper: float = 1.0
    open_top: bool = False
    element: str | None = None
    moves: bool = False  # a drawer front or a door leaf: moves when its element opens

    def corners(self) -> np.ndarray:
        """The 8 corners of the part's bounding box in the asset frame (8 x 3)."""
        half = self.extent() / 2.0
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        return np.asarray(self.center) + (signs * half) @ self.matrix().T

    def extent(self) -> np.ndarray:
        """The primitive's bounding box size before turning (a widening frustum's top counts)."""
        size = np.asarray(self.size, dtype=np.float64)
        if self.primitive == "cylinder" and self.taper > 1.0:
            size = size * np.array([self.taper, 1.0, self.taper])
        return size

    def matrix(self) -> np.ndarray:
        """3x3 map from the primitive's frame (axis along y) to the asset frame."""
        from dataforge.world.boxes import rotation_matrix

        return rotation_matrix(self.rotation) @ AXIS_MATRICES[self.axis]

    def volume(self) -> float:
        sx, sy, sz = self.size
        if self.primitive == "box":
            return sx * sy * sz
        if self.primitive == "cylinder":
            t = self.taper
            return math.pi * sx * sz / 4.0 * sy * (1.0 + t + t * t) / 3.0
        if self.primitive == "sphere":
            return math.pi / 6.0 * sx * sy * sz
        minor = sy / 2.0  # torus: tube radius; major radius from the outer size
        major = (sx + sz) / 4.0 - minor
        return 2.0 * math.pi**2 * max(major, 0.0) * minor * minor


# A cylinder's or torus's axis (primitive y) in the asset frame: rotations taking y to x or z.
AXIS_MATRICES = {
    "y": np.eye(3),
    "x": np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    "z": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),
}


@dataclass(frozen=True)
class Surface:
    kind: str
    height: float  # m above the object's bottom
    rect: tuple[float, float, float, float]  # x0, z0, x1, z1 in the asset frame (box centre)
    clearance: float | None = None  # free height above the surface; None: open
    element: str | None = None
    needs_open: bool = False

    @property
    def area(self) -> float:
        x0, z0, x1, z1 = self.rect
        return max(x1 - x0, 0.0) * max(z1 - z0, 0.0)

    def to_dict(self, box_height: float) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "element": self.element,
            "height_m": round(self.height, 4),
            "height_frac": round(self.height / box_height, 4) if box_height > 0 else 0.0,
            "area_m2": round(self.area, 4),
            "clearance_m": None if self.clearance is None else round(self.clearance, 4),
            "needs_open": self.needs_open,
        }


@dataclass(frozen=True)
class Motion:
    """How an element (or, under the key None, the object's own door) opens: its parts marked
    ``moves`` slide ``travel`` metres along the front normal (a drawer), or swing 90 degrees
    times the openness about a vertical hinge at ``pivot`` (x, z) (a door), the free edge
    toward the normal. ``normal`` is the unit (x, z) direction the opening faces."""

    kind: str  # "slide" | "hinge"
    normal: tuple[float, float]
    travel: float = 0.0
    pivot: tuple[float, float] = (0.0, 0.0)
    swing: float = 1.0  # +1: the leaf turns counter-clockwise seen from above (x toward z)


@dataclass(frozen=True)
class Shape:
    archetype: str
    size: Vec3
    parts: tuple[Part, ...]
    surfaces: tuple[Surface, ...] = ()
    elements: Mapping[str, str] = field(default_factory=dict)  # element -> AI2-THOR type
    motions: Mapping[str | None, Motion] = field(default_factory=dict)
    description: Mapping[str, str] = field(default_factory=dict)

    def fill(self) -> float:
        """Sum of the parts' volumes ÷ the box volume (overlapping parts count twice)."""
        box = self.size[0] * self.size[1] * self.size[2]
        return sum(p.volume() for p in self.parts) / box if box > 0 else 0.0

    def surfaces_of(self, element: str | None) -> tuple[Surface, ...]:
        return tuple(s for s in self.surfaces if s.element == element)

    def outside_box(self, tol: float = INSIDE_TOL_M) -> list[int]:
        """Indices of parts reaching outside the asset's box (should be none)."""
        half = np.asarray(self.size) / 2.0 + tol
        return [k for k, p in enumerate(self.parts) if np.any(np.abs(p.corners()) > half)]


def element_id(object_id: str, element: str) -> str:
    """The id of sub-receptacle ``element`` of object ``object_id`` (``Dresser|2|1|Drawer_3``)."""
    return f"{object_id}|{element}"


def variant_rng(asset_id: str, salt: str = "") -> np.random.Generator:
    """A generator seeded from ``asset_id`` (sha256): an asset's variant choices never change."""
    digest = hashlib.sha256(f"{asset_id}|{salt}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


class ShapeBuilder:
    """Writes a :class:`Shape` for a box of ``size``. Coordinates: y from the bottom (0) to
    ``h``, x in [-w/2, w/2], z in [-d/2, d/2] (front at +z); parts are clamped to the box."""

    def __init__(self, size: Vec3, asset_id: str, archetype: str) -> None:
        if min(size) <= 0:
            raise UsageError(f"{asset_id}: a shape needs a positive size, got {size}")
        self.size = size
        self.w, self.h, self.d = (float(v) for v in size)
        self.asset_id = asset_id
        self.archetype = archetype
        self.rng = variant_rng(asset_id, archetype)
        self.parts: list[Part] = []
        self.surfaces: list[Surface] = []
        self.elements: dict[str, str] = {}
        self.motions: dict[str | None, Motion] = {}
        self.description: dict[str, str] = {}

    def describe(self, **words: str | None) -> None:
        """Record words for what is drawn (keys of :data:`DESCRIPTIONS`), where the archetype
        chooses it: ``b.describe(shape="cylindrical")``, ``b.describe(print_or_design="a
        label")``; None forgets a word. Draws nothing and leaves the variant generator alone."""
        for key, word in words.items():
            if key not in DESCRIPTIONS:
                raise UsageError(f"unknown description {key!r}; expected one of {DESCRIPTIONS}")
            if word is None:
                self.description.pop(key, None)
            else:
                self.description[key] = str(word)

    # -- drawing -------------------------------------------------------------------------

    def uniform(self, lo: float, hi: float) -> float:
        return float(self.rng.uniform(lo, hi))

    def choice(self, options: list[Any] | tuple[Any, ...]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def box(
        self,
        x: tuple[float, float],
        y: tuple[float, float],
        z: tuple[float, float],
        role: str = "primary",
        **kw: Any,
    ) -> None:
        """An axis-aligned box over the given ranges (clamped to the asset's box)."""
        lo, hi = self._clamp((x[0], y[0], z[0]), (x[1], y[1], z[1]))
        if np.all(hi - lo > 1e-5):
            self._add("box", (lo + hi) / 2.0, hi - lo, role, **kw)

    def cylinder(
        self,
        cx: float,
        cz: float,
        y: tuple[float, float],
        rx: float,
        rz: float | None = None,
        role: str = "primary",
        **kw: Any,
    ) -> None:
        """An upright (elliptic) cylinder, or frustum with ``taper``, from ``y[0]`` to ``y[1]``."""
        rz = rx if rz is None else rz
        taper = float(kw.get("taper", 1.0))
        grow = max(taper, 1.0)  # a widening top reaches further than the base radius
        self.box_part("cylinder", (cx, cz), y, (2 * rx * grow, 2 * rz * grow), role, **kw)

    def hcylinder(
        self,
        axis: str,
        center: tuple[float, float, float],
        length: float,
        radius: float,
        role: str = "primary",
        **kw: Any,
    ) -> None:
        """A cylinder lying along ``axis`` ('x' or 'z'), centred at ``center`` (y from bottom)."""
        size = (2 * radius, length, 2 * radius)
        self._fitted("cylinder", center, size, role, axis=axis, **kw)

    def sphere(
        self, center: tuple[float, float, float], radii: tuple[float, float, float], **kw: Any
    ) -> None:
        """An ellipsoid with semi-axes ``radii`` centred at ``center`` (y from the bottom)."""
        role = kw.pop("role", "primary")
        self._fitted("sphere", center, tuple(2 * r for r in radii), role, **kw)

    def torus(
        self,
        center: tuple[float, float, float],
        outer: float,
        tube: float,
        axis: str = "y",
        role: str = "primary",
        **kw: Any,
    ) -> None:
        """A ring of outer diameter ``outer`` and tube diameter ``tube`` about ``axis``."""
        self._fitted("torus", center, (outer, tube, outer), role, axis=axis, **kw)

    def turned_box(
        self,
        center: tuple[float, float, float],
        size: tuple[float, float, float],
        rotation: tuple[float, float, float],
        role: str = "primary",
        **kw: Any,
    ) -> None:
        """A box of ``size`` centred at ``center`` (y from the bottom) turned by ``rotation``
        (degrees), scaled and moved to fit the asset's box after turning."""
        self._fitted("box", center, size, role, rotation=rotation, **kw)

    def box_part(
        self,
        primitive: str,
        cxz: tuple[float, float],
        y: tuple[float, float],
        extent_xz: tuple[float, float],
        role: str,
        **kw: Any,
    ) -> None:
        lo, hi = self._clamp(
            (cxz[0] - extent_xz[0] / 2, y[0], cxz[1] - extent_xz[1] / 2),
            (cxz[0] + extent_xz[0] / 2, y[1], cxz[1] + extent_xz[1] / 2),
        )
        if not np.all(hi - lo > 1e-5):
            return
        size = hi - lo
        taper = float(kw.get("taper", 1.0))
        if primitive == "cylinder" and taper > 1.0:  # the stored size is the base's
            size = np.array([size[0] / taper, size[1], size[2] / taper])
        self._add(primitive, (lo + hi) / 2.0, size, role, **kw)

    def _fitted(
        self,
        primitive: str,
        center: tuple[float, float, float],
        size: tuple[float, ...],
        role: str,
        **kw: Any,
    ) -> None:
        """A primitive scaled down (about its centre, then moved inside) to fit the box."""
        part = Part(primitive, (0.0, 0.0, 0.0), tuple(float(s) for s in size), **kw)  # type: ignore[arg-type]
        ext = np.abs(part.matrix()) @ np.asarray(size, dtype=np.float64)
        box = np.array([self.w, self.h, self.d])
        scale = min(1.0, float(np.min(box / np.maximum(ext, 1e-9))))
        ext *= scale
        c = np.array([center[0], center[1] - self.h / 2.0, center[2]], dtype=np.float64)
        c = np.clip(c, -box / 2 + ext / 2, box / 2 - ext / 2)
        self.parts.append(
            Part(
                primitive,
                _vec(c),
                _vec(np.asarray(size, dtype=np.float64) * scale),
                role,
                **kw,
            )
        )

    def _clamp(self, lo: tuple[float, ...], hi: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
        box_lo = np.array([-self.w / 2, 0.0, -self.d / 2])
        box_hi = np.array([self.w / 2, self.h, self.d / 2])
        a = np.clip(np.minimum(lo, hi), box_lo, box_hi)
        b = np.clip(np.maximum(lo, hi), box_lo, box_hi)
        return a, b

    def _add(self, primitive: str, center: np.ndarray, size: np.ndarray, role: str, **kw: Any):
        c = np.array(center, dtype=np.float64)
        c[1] -= self.h / 2.0
        self.parts.append(Part(primitive, _vec(c), _vec(size), role, **kw))

    # -- surfaces and sub-receptacles ----------------------------------------------------

    def element(self, name: str, thor_type: str) -> str:
        if thor_type not in SUB_RECEPTACLE_TYPES:
            raise UsageError(f"unknown sub-receptacle type {thor_type!r}")
        self.elements[name] = thor_type
        return name

    def motion(self, element: str | None, motion: Motion) -> None:
        """Record how ``element`` (None: the object's door) opens (see :class:`Motion`)."""
        if motion.kind not in ("slide", "hinge"):
            raise UsageError(f"unknown motion {motion.kind!r}")
        self.motions[element] = motion

    def surface(
        self,
        kind: str,
        y: float,
        x: tuple[float, float],
        z: tuple[float, float],
        *,
        clearance: float | None = None,
        element: str | None = None,
        needs_open: bool = False,
    ) -> None:
        """A support surface at height ``y`` over the (x, z) rectangle (clamped to the box)."""
        if kind not in SURFACE_KINDS:
            raise UsageError(f"unknown surface kind {kind!r}")
        x0, x1 = sorted((max(x[0], -self.w / 2), min(x[1], self.w / 2)))
        z0, z1 = sorted((max(z[0], -self.d / 2), min(z[1], self.d / 2)))
        y = min(max(y, 0.0), self.h)
        if clearance is not None:
            clearance = max(min(clearance, self.h - y), 0.0)
        if (x1 - x0) > 0.01 and (z1 - z0) > 0.01:
            self.surfaces.append(Surface(kind, y, (x0, z0, x1, z1), clearance, element, needs_open))

    def build(self) -> Shape:
        return Shape(
            self.archetype,
            tuple(float(v) for v in self.size),  # type: ignore[arg-type]
            tuple(self.parts),
            tuple(self.surfaces),
            dict(self.elements),
            dict(self.motions),
            dict(self.description),
        )


def _vec(a: Any) -> Vec3:
    x, y, z = (float(v) for v in a)
    return (x, y, z)
