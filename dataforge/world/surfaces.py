"""Support surfaces and solid parts of house objects, in world coordinates.

:func:`object_surfaces` turns an object's shape surfaces (:mod:`dataforge.world.shapes`) into
:class:`WorldSurface` records: a plan-view polygon at a height, with the clearance above it and
the sub-receptacle it belongs to. :func:`surfaces_over` lists the surfaces under an object's
centre, :func:`surface_under` the one a child rests on.
:func:`part_boxes` gives the oriented boxes of an object's parts, for collision tests against the
shaped geometry (a small object may stand under a table's top, between its legs, but not inside
a leg).

An object turned about more than the vertical axis (a toppled bat) has no surfaces. An asset
that is not a receptacle itself (11 of procthor's 14 shelving units, for instance) keeps only
its sub-receptacles' surfaces: in AI2-THOR its shelves are receptacles, not the unit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from shapely.geometry import Point, Polygon

from dataforge.world.archetypes import shape_of
from dataforge.world.assets import AssetInfo
from dataforge.world.boxes import OrientedBox, rotation_matrix, yaw_offset
from dataforge.world.house import HouseObject
from dataforge.world.shapes import element_id

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

REST_BELOW_M = 0.03  # a child's bottom may sink this far below its surface (AI2-THOR settling)
REST_ABOVE_M = 0.08  # ... or float this far above it (ProcTHOR records some objects 5.5 cm high)
COVER_TOL_M = 0.02  # its centre may be this far outside the surface's polygon


@dataclass(frozen=True)
class WorldSurface:
    """One support surface of an object; ``index`` is its place in the shape's surface list."""

    object_id: str
    index: int
    kind: str
    element: str | None
    y: float
    polygon: Polygon
    clearance: float | None
    needs_open: bool
    usable: bool = True  # False: a non-receptacle's own surface (placement does not use it)

    @property
    def element_id(self) -> str | None:
        """The sub-receptacle's id (``<object>|Drawer_2``), None for the object's own surface."""
        return None if self.element is None else element_id(self.object_id, self.element)

    @property
    def area_m2(self) -> float:
        return float(self.polygon.area)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kind": self.kind,
            "element_id": self.element_id,
            "y": round(self.y, 4),
            "area_cm2": round(self.area_m2 * 1e4, 3),
            "clearance_m": None if self.clearance is None else round(self.clearance, 4),
            "needs_open": self.needs_open,
            "usable": self.usable,
        }


def _level(obj: HouseObject) -> bool:
    return abs(obj.rotation[0]) < 1.0 and abs(obj.rotation[2]) < 1.0


def object_surfaces(
    obj: HouseObject, info: AssetInfo, *, all_surfaces: bool = False
) -> tuple[WorldSurface, ...]:
    """The object's usable support surfaces in world coordinates (none when it is tilted);
    with ``all_surfaces``, a non-receptacle's own surfaces too (``usable`` False: where
    ProcTHOR's generator puts things itself, a faucet on a sink's deck), which is what says where
    a child rests."""
    if not _level(obj):
        return ()
    every = _object_surfaces(obj.id, obj.position, obj.rotation, info)
    return every if all_surfaces else tuple(s for s in every if s.usable)


@functools.lru_cache(maxsize=8192)
def _object_surfaces(
    object_id: str, position: tuple[float, ...], rotation: tuple[float, ...], info: AssetInfo
) -> tuple[WorldSurface, ...]:
    yaw = rotation[1]
    bottom = position[1] - info.size[1] / 2.0
    out = []
    for k, s in enumerate(shape_of(info).surfaces):
        x0, z0, x1, z1 = s.rect
        corners = [yaw_offset(x, z, yaw) for x, z in ((x0, z0), (x1, z0), (x1, z1), (x0, z1))]
        poly = Polygon([(position[0] + dx, position[2] + dz) for dx, dz in corners])
        usable = s.element is not None or info.receptacle
        out.append(
            WorldSurface(
                object_id,
                k,
                s.kind,
                s.element,
                bottom + s.height,
                poly,
                s.clearance,
                s.needs_open,
                usable,
            )
        )
    return tuple(out)


def surfaces_over(box: OrientedBox, surfaces: tuple[WorldSurface, ...]) -> tuple[WorldSurface, ...]:
    """Those of ``surfaces`` whose polygon lies under ``box``'s centre (within
    ``COVER_TOL_M``), at any height."""
    centre = Point(box.center[0], box.center[2])
    return tuple(s for s in surfaces if s.polygon.distance(centre) <= COVER_TOL_M)


def surface_under(box: OrientedBox, surfaces: tuple[WorldSurface, ...]) -> WorldSurface | None:
    """The surface ``box`` rests on: its centre over the surface's polygon and its bottom within
    ``REST_BELOW_M`` below to ``REST_ABOVE_M`` above it; the closest in height of those."""
    best, best_gap = None, None
    for s in surfaces_over(box, surfaces):
        gap = box.bottom - s.y
        if not -REST_BELOW_M <= gap <= REST_ABOVE_M:
            continue
        if best_gap is None or abs(gap) < best_gap:
            best, best_gap = s, abs(gap)
    return best


def part_boxes(obj: HouseObject, info: AssetInfo) -> tuple[OrientedBox, ...]:
    """Oriented boxes around the object's parts (its whole box for pickupable objects)."""
    return _part_boxes(obj.position, obj.rotation, info)


def object_footprint(obj: HouseObject, info: AssetInfo) -> BaseGeometry:
    """The object's plan-view footprint (x, z): the union of its parts' footprints (an
    L-shaped sofa is an L), as a shapely geometry."""
    from shapely.ops import unary_union

    return unary_union([b.footprint() for b in part_boxes(obj, info)])


@functools.lru_cache(maxsize=8192)
def _part_boxes(
    position: tuple[float, ...], rotation: tuple[float, ...], info: AssetInfo
) -> tuple[OrientedBox, ...]:
    pitch, yaw, roll = rotation
    if info.pickupable:
        return (OrientedBox(tuple(position), info.size, yaw, pitch, roll),)  # type: ignore[arg-type]
    rot = rotation_matrix(rotation)  # type: ignore[arg-type]
    out = []
    for part in shape_of(info).parts:
        c = part.corners()
        lo, hi = c.min(axis=0), c.max(axis=0)
        centre = rot @ ((lo + hi) / 2.0) + np.asarray(position)
        size = tuple(float(v) for v in hi - lo)
        out.append(OrientedBox(tuple(float(v) for v in centre), size, yaw, pitch, roll))  # type: ignore[arg-type]
    return tuple(out)
