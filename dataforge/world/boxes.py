"""Oriented 3D boxes of house objects, from their asset's size, position and rotation.

Position is the centre of the bounding box
    In ProcTHOR houses an object's ``position`` is the centre of its asset's bounding box, not its
    bottom and not the asset's pivot. Evidence from the example houses (procthor_train_1,
    house_3703, house_746): every top-level object standing on the floor has
    ``position.y - size.y / 2 = 0`` within 1 mm (Fridge_5: 0.846 = 1.693 / 2), although AI2-THOR
    reports pivots far from the box centre for some of these assets (in ProcTHOR's
    ``ai2thor-object-metadata.json`` Fridge_5's pivot is 0.84 m below its box centre, Bowl_23's
    4.4 cm). Were ``position`` the bottom, floor objects would have ``position.y = 0``. ProcTHOR's
    generator itself takes an asset's top as ``position.y + boundingBox.y / 2``. Children
    placed on a receptacle's top then have their box bottom at the parent's top plus 0 (pillows,
    televisions, faucets: placed by ProcTHOR's generator), about 0.5 cm (most small objects) or
    about 5.5 cm (some assets, the same ones in every house: Bowl_23, Mug_1, Cellphone_7, ...,
    whatever their pivot): they were recorded before the simulator let them fall. Other children
    are inside their parent (shelves, a fridge, a sofa's seat, a sink's basin), below its top.

Rotation is AI2-THOR's (Unity's): left-handed, y up, Euler degrees
    ``R = Ry(rotation.y) @ Rx(rotation.x) @ Rz(rotation.z)`` maps the asset frame to the world, with
    ``Ry(t) = [[cos t, 0, sin t], [0, 1, 0], [-sin t, 0, cos t]]``: a point at ``(dx, dz)`` in the
    asset frame lies at ``(dx cos t + dz sin t, -dx sin t + dz cos t)`` from the centre, i.e. a
    positive ``rotation.y`` turns the asset clockwise seen from above. The asset database's
    ``boundingBox`` is the size along the asset's own x, y, z at rotation 0. Verified against
    AI2-THOR's own object-oriented boxes in ``ai2thor-object-metadata.json``: this convention
    reproduces all eight corners within 1 mm for 97.7% of its 4,627 boxed objects (all 929
    yaw-only objects with a non-square footprint at angles off the axes; tilted ones fix the
    Euler order), the opposite sense misses by centimetres; the rest are scene instances whose
    size differs from the database's. In the houses, chairs set around tables at arbitrary angles
    have their table ahead along their local +z under this convention. ProcTHOR furniture turns
    about y only; children dropped by the simulator can be tilted, hence the full matrix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
from shapely.geometry import Polygon

from dataforge.world.vectors import Vec3, vec3

if TYPE_CHECKING:
    from dataforge.world.assets import AssetCatalogue
    from dataforge.world.house import HouseObject


_UNIT_CORNERS = np.array(
    [[sx, sy, sz] for sx in (-0.5, 0.5) for sy in (-0.5, 0.5) for sz in (-0.5, 0.5)]
)


def rotation_matrix(rotation_deg: Vec3) -> np.ndarray:
    """AI2-THOR Euler angles (x, y, z degrees) as the 3x3 matrix from asset frame to world."""
    ax, ay, az = (math.radians(a) for a in rotation_deg)
    cx, sx = math.cos(ax), math.sin(ax)
    cy, sy = math.cos(ay), math.sin(ay)
    cz, sz = math.cos(az), math.sin(az)
    rx = np.array([[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]])
    ry = np.array([[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])
    rz = np.array([[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]])
    return ry @ rx @ rz


def yaw_offset(dx: float, dz: float, yaw_deg: float) -> tuple[float, float]:
    """World (x, z) offset of the asset-frame offset (dx, dz) under ``rotation.y = yaw_deg``."""
    t = math.radians(yaw_deg)
    return (dx * math.cos(t) + dz * math.sin(t), -dx * math.sin(t) + dz * math.cos(t))


@dataclass(frozen=True)
class Aabb:
    """An axis-aligned box, corners ``lo`` and ``hi`` (metres)."""

    lo: Vec3
    hi: Vec3

    @property
    def size(self) -> Vec3:
        return (self.hi[0] - self.lo[0], self.hi[1] - self.lo[1], self.hi[2] - self.lo[2])

    @property
    def center(self) -> Vec3:
        return (
            (self.lo[0] + self.hi[0]) / 2,
            (self.lo[1] + self.hi[1]) / 2,
            (self.lo[2] + self.hi[2]) / 2,
        )

    def to_dict(self) -> dict[str, Any]:
        return {"lo": list(self.lo), "hi": list(self.hi)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Aabb:
        return cls(vec3(data["lo"]), vec3(data["hi"]))


@dataclass(frozen=True)
class OrientedBox:
    """A box of ``size`` (asset frame) centred at ``center``, turned by AI2-THOR Euler angles:
    ``yaw_deg`` about y, ``pitch_deg`` about x, ``roll_deg`` about z."""

    center: Vec3
    size: Vec3
    yaw_deg: float = 0.0
    pitch_deg: float = 0.0
    roll_deg: float = 0.0

    @property
    def rotation_deg(self) -> Vec3:
        return (self.pitch_deg, self.yaw_deg, self.roll_deg)

    def rotation_matrix(self) -> np.ndarray:
        return rotation_matrix(self.rotation_deg)

    def corners(self) -> np.ndarray:
        """The eight corners in world coordinates, (8, 3)."""
        return self._corners.copy()

    @cached_property
    def _corners(self) -> np.ndarray:
        local = _UNIT_CORNERS * np.asarray(self.size, dtype=np.float64)
        return np.asarray(self.center, dtype=np.float64) + local @ self.rotation_matrix().T

    def aabb(self) -> Aabb:
        return self._aabb

    @cached_property
    def _aabb(self) -> Aabb:
        c = self._corners
        lo, hi = c.min(axis=0), c.max(axis=0)
        return Aabb(vec3(lo), vec3(hi))

    @property
    def bottom(self) -> float:
        return self.aabb().lo[1]

    @property
    def top(self) -> float:
        return self.aabb().hi[1]

    def footprint(self) -> Polygon:
        """The box's shadow on the floor plan (x, z): a convex polygon (m²)."""
        return self._footprint

    @cached_property
    def _footprint(self) -> Polygon:
        hull = shapely.MultiPoint(self._corners[:, [0, 2]]).convex_hull
        return hull if isinstance(hull, Polygon) else Polygon()

    def to_dict(self) -> dict[str, Any]:
        return {
            "center": list(self.center),
            "size": list(self.size),
            "yaw_deg": self.yaw_deg,
            "pitch_deg": self.pitch_deg,
            "roll_deg": self.roll_deg,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OrientedBox:
        return cls(
            center=vec3(data["center"]),
            size=vec3(data["size"]),
            yaw_deg=float(data.get("yaw_deg", 0.0)),
            pitch_deg=float(data.get("pitch_deg", 0.0)),
            roll_deg=float(data.get("roll_deg", 0.0)),
        )


def object_box(obj: HouseObject, catalogue: AssetCatalogue) -> OrientedBox:
    """The oriented box of a house object: its asset's (closed) size around its position."""
    size = catalogue.asset(obj.asset_id).size
    pitch, yaw, roll = obj.rotation
    return OrientedBox(center=obj.position, size=size, yaw_deg=yaw, pitch_deg=pitch, roll_deg=roll)
