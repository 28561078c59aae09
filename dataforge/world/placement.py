"""Changing a house: open containers, spawn, place and remove small objects.

:class:`World` holds a house's objects as they change. Placing an object on a receptacle picks a
pose on its top face, or on the floor of its interior for containers (Fridge, Cabinet, Drawer,
...; a closed one is opened first unless ``auto_open=False``), then checks it:

- support: the object's bottom must lie within ``max_sink`` below / ``max_hover`` above the
  supporting surface, and its footprint inside the surface (shrunk by ``margin``);
- collision: its box may not overlap any other object's box (the receptacle's own box is
  allowed to be touched from above or contain it when inside).

Every attempt ends in a :class:`PlacementResult` (``placed``, ``no_free_space``, ``collision``,
``closed``, ``not_a_receptacle``) rather than an exception. Objects placed on a receptacle become
its children in the house JSON, as in ProcTHOR. Boxes are the assets' bounding boxes (closed
size), so "inside" means inside the closed box of the container, and "on top" means on the
top of the box: for furniture whose box top is a backrest (chairs, sofas, beds) that is the
backrest's height, not the seat's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from shapely.geometry import Point, Polygon

from dataforge.errors import UsageError
from dataforge.world.assets import AssetCatalogue
from dataforge.world.boxes import OrientedBox, object_box
from dataforge.world.graph import WorldGraph, world_graph
from dataforge.world.house import House, HouseObject, load_house

# Containers whose contents sit inside their box (openable ones are opened first).
INSIDE_TYPES = frozenset(
    {
        "Fridge",
        "Cabinet",
        "Drawer",
        "Microwave",
        "Safe",
        "Box",
        "Bowl",
        "Pot",
        "Pan",
        "Cup",
        "Mug",
        "GarbageCan",
        "LaundryHamper",
    }
)
CONTAINER_WALL = 0.02  # m: inset of a container's interior from its box
STATUSES = ("placed", "no_free_space", "collision", "closed", "not_a_receptacle")


@dataclass(frozen=True)
class PlacementResult:
    status: str
    object_id: str
    receptacle_id: str
    position: tuple[float, float, float] | None = None
    rotation: tuple[float, float, float] | None = None
    inside: bool = False
    attempts: int = 0
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "placed"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class World:
    """A house whose objects can change. ``house()`` gives the current :class:`House`."""

    def __init__(self, house: House, catalogue: AssetCatalogue) -> None:
        self.catalogue = catalogue
        self._base = house
        self._objects: dict[str, HouseObject] = {o.id: o for o in house.objects}
        self._raw = {o["id"]: o for o in _flatten_raw(house.raw.get("objects", []))}
        self._boxes: dict[HouseObject, OrientedBox] = {}  # boxes of objects as they are now

    # -- queries ---------------------------------------------------------------------------

    @property
    def objects(self) -> tuple[HouseObject, ...]:
        return tuple(self._objects.values())

    def __contains__(self, object_id: object) -> bool:
        return object_id in self._objects

    def object(self, object_id: str) -> HouseObject:
        try:
            return self._objects[object_id]
        except KeyError:
            raise UsageError(f"no object {object_id!r} in the house") from None

    def box(self, object_id: str) -> OrientedBox:
        obj = self.object(object_id)
        box = self._boxes.get(obj)
        if box is None:
            box = self._boxes[obj] = object_box(obj, self.catalogue)
        return box

    def children(self, object_id: str) -> tuple[HouseObject, ...]:
        return tuple(o for o in self._objects.values() if o.parent_id == object_id)

    def is_receptacle(self, object_id: str) -> bool:
        return self.catalogue.asset(self.object(object_id).asset_id).receptacle

    def graph(self) -> WorldGraph:
        return world_graph(self.house(), self.catalogue)

    # -- changes ---------------------------------------------------------------------------

    def open(self, object_id: str, openness: float = 1.0) -> bool:
        """Open an openable object (containers must be open to put things inside)."""
        obj = self.object(object_id)
        if not self.catalogue.asset(obj.asset_id).openable:
            return False
        self._objects[object_id] = dataclasses.replace(obj, openness=float(openness))
        return True

    def set_openness(self, object_id: str, openness: float | None) -> None:
        """Set (or, with None, clear) an object's openness without checks."""
        self._objects[object_id] = dataclasses.replace(self.object(object_id), openness=openness)

    def move(self, object_id: str, position: Iterable[float]) -> None:
        """Move an object to ``position`` (its box centre) unchecked, keeping its parent."""
        obj = self.object(object_id)
        pos = tuple(float(v) for v in position)
        self._objects[object_id] = dataclasses.replace(obj, position=pos)

    def remove(self, object_id: str) -> tuple[HouseObject, ...]:
        """Remove an object and everything resting on or in it; return what was removed."""
        self.object(object_id)
        gone = [object_id]
        for oid in gone:
            gone += [o.id for o in self._objects.values() if o.parent_id == oid]
        return tuple(self._objects.pop(oid) for oid in gone)

    def spawn(
        self,
        asset_id: str,
        receptacle_id: str,
        rng: np.random.Generator,
        *,
        object_id: str | None = None,
        **kw: Any,
    ) -> PlacementResult:
        """Create a new object of ``asset_id`` and place it on/in ``receptacle_id``."""
        info = self.catalogue.asset(asset_id)
        oid = object_id or self._new_id(info.object_type)
        if oid in self._objects:
            raise UsageError(f"object id {oid!r} already exists")
        obj = HouseObject(oid, asset_id, info.object_type, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        return self.place(obj, receptacle_id, rng, **kw)

    def place(
        self,
        obj: HouseObject | str,
        receptacle_id: str,
        rng: np.random.Generator,
        *,
        inside: bool | None = None,
        auto_open: bool = True,
        attempts: int = 64,
        max_sink: float = 0.01,
        max_hover: float = 0.01,
    ) -> PlacementResult:
        """Move ``obj`` (an object of the house, or a new one) onto or into ``receptacle_id``."""
        obj = self.object(obj) if isinstance(obj, str) else obj
        receptacle = self.object(receptacle_id)
        rec_info = self.catalogue.asset(receptacle.asset_id)
        if not rec_info.receptacle:
            return PlacementResult(
                "not_a_receptacle",
                obj.id,
                receptacle_id,
                message=f"{receptacle.object_type} is not a receptacle",
            )
        if inside is None:
            inside = receptacle.object_type in INSIDE_TYPES
        if inside and rec_info.openable and not (receptacle.openness or 0) > 0:
            if not auto_open:
                return PlacementResult(
                    "closed",
                    obj.id,
                    receptacle_id,
                    inside=True,
                    message=f"{receptacle_id} is closed",
                )
            self.open(receptacle_id)
        surface, y_floor, y_ceiling = self._support(receptacle_id, inside)
        size = np.asarray(self.catalogue.asset(obj.asset_id).size, dtype=np.float64)
        rec_yaw = self.box(receptacle_id).yaw_deg
        others = [
            self.box(o.id) for o in self._objects.values() if o.id not in (obj.id, receptacle_id)
        ]
        bounds = _bounds(others)
        if y_ceiling is not None and size[1] > y_ceiling - y_floor:
            return PlacementResult(
                "no_free_space",
                obj.id,
                receptacle_id,
                inside=inside,
                message="too tall for the container",
            )
        collided = 0
        for k in range(attempts):
            yaw = float(rec_yaw + 90.0 * rng.integers(4))
            region = _fit_region(surface, size, yaw)
            if region.is_empty:
                if k == 3:  # every quarter turn tried: the object cannot fit
                    break
                continue
            x, z = _sample(region, rng)
            center = (x, y_floor + size[1] / 2.0, z)
            candidate = OrientedBox(center, tuple(size), yaw_deg=yaw)
            if not _supported(candidate, surface, y_floor, max_sink, max_hover):
                continue
            if _collides(candidate, others, bounds):
                collided += 1
                continue
            self._commit(obj, receptacle_id, center, (0.0, yaw, 0.0))
            return PlacementResult(
                "placed", obj.id, receptacle_id, center, (0.0, yaw, 0.0), inside, k + 1
            )
        status = "collision" if collided else "no_free_space"
        return PlacementResult(
            status,
            obj.id,
            receptacle_id,
            inside=inside,
            attempts=attempts,
            message=f"{collided} candidate poses collided",
        )

    def place_at(
        self,
        obj: HouseObject,
        receptacle_id: str,
        *,
        max_sink: float = 0.01,
        max_hover: float = 0.01,
        inside: bool | None = None,
    ) -> PlacementResult:
        """Put ``obj`` back at its own pose on ``receptacle_id`` (checked, not sampled)."""
        receptacle = self.object(receptacle_id)
        if inside is None:
            inside = receptacle.object_type in INSIDE_TYPES
        surface, y_floor, _ = self._support(receptacle_id, inside)
        box = object_box(obj, self.catalogue)
        if not _supported(box, surface, y_floor, max_sink, max_hover):
            return PlacementResult(
                "no_free_space",
                obj.id,
                receptacle_id,
                obj.position,
                obj.rotation,
                inside,
                1,
                "not supported by the surface",
            )
        for other in self._objects.values():
            if other.id not in (obj.id, receptacle_id) and _overlap(box, self.box(other.id)):
                return PlacementResult(
                    "collision",
                    obj.id,
                    receptacle_id,
                    obj.position,
                    obj.rotation,
                    inside,
                    1,
                    f"overlaps {other.id}",
                )
        self._commit(obj, receptacle_id, obj.position, obj.rotation)
        return PlacementResult(
            "placed", obj.id, receptacle_id, obj.position, obj.rotation, inside, 1
        )

    def house(self) -> House:
        """The current house, as house JSON re-read (so it is validated like any input)."""
        raw = {k: v for k, v in self._base.raw.items() if k != "objects"}
        raw["objects"] = self._raw_tree()
        return load_house(raw, name=self._base.name, catalogue=self.catalogue)

    # -- internals -------------------------------------------------------------------------

    def _support(self, receptacle_id: str, inside: bool) -> tuple[Polygon, float, float | None]:
        """Supporting surface (plan polygon), its height, and the ceiling above it (inside)."""
        box = self.box(receptacle_id)
        footprint = box.footprint()
        if inside:
            return (
                footprint.buffer(-CONTAINER_WALL),
                box.bottom + CONTAINER_WALL,
                (box.top - CONTAINER_WALL),
            )
        return footprint, box.top, None

    def _commit(
        self, obj: HouseObject, parent: str, position: Iterable[float], rotation: Iterable[float]
    ) -> None:
        pos = tuple(float(v) for v in position)
        rot = tuple(float(v) for v in rotation)
        self._objects.pop(obj.id, None)
        self._objects[obj.id] = dataclasses.replace(
            obj, position=pos, rotation=rot, parent_id=parent
        )

    def _new_id(self, object_type: str) -> str:
        k = 0
        while f"{object_type}|spawned|{k}" in self._objects:
            k += 1
        return f"{object_type}|spawned|{k}"

    def _raw_tree(self) -> list[dict[str, Any]]:
        nodes: dict[str, dict[str, Any]] = {}
        for o in self._objects.values():
            base = {k: v for k, v in self._raw.get(o.id, {}).items() if k != "children"}
            base.update(
                id=o.id,
                assetId=o.asset_id,
                position=dict(zip("xyz", o.position, strict=True)),
                rotation=dict(zip("xyz", o.rotation, strict=True)),
                kinematic=o.kinematic,
            )
            if o.openness is not None:
                base["openness"] = o.openness
            nodes[o.id] = base
        roots = []
        for o in self._objects.values():
            if o.parent_id is not None and o.parent_id in nodes:
                nodes[o.parent_id].setdefault("children", []).append(nodes[o.id])
            else:
                roots.append(nodes[o.id])
        return roots


def _flatten_raw(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for o in objects:
        out.append(o)
        out += _flatten_raw(o.get("children", []) or [])
    return out


def _fit_region(surface: Polygon, size: np.ndarray, yaw: float) -> Polygon:
    """Where the object's centre may go so its footprint (at ``yaw``) stays on ``surface``."""
    half = float(np.hypot(size[0], size[2])) / 2.0
    rect = OrientedBox((0.0, 0.0, 0.0), tuple(size), yaw_deg=yaw).footprint()
    # Shrink by the footprint's extent along the surface's own axes (exact for yaw-aligned
    # boxes), never by more than the circumscribed radius.
    minx, miny, maxx, maxy = rect.bounds
    shrink = min(max(maxx - minx, maxy - miny) / 2.0, half)
    return surface.buffer(-shrink, join_style="mitre")


def _sample(region: Polygon, rng: np.random.Generator) -> tuple[float, float]:
    minx, miny, maxx, maxy = region.bounds
    for _ in range(1000):
        x, z = rng.uniform(minx, maxx), rng.uniform(miny, maxy)
        if region.covers(Point(x, z)):
            return float(x), float(z)
    c = region.representative_point()
    return float(c.x), float(c.y)


def _supported(box: OrientedBox, surface: Polygon, y: float, sink: float, hover: float) -> bool:
    gap = box.bottom - y
    if not -sink <= gap <= hover:
        return False
    return surface.buffer(1e-6).covers(box.footprint())


def _bounds(boxes: list[OrientedBox]) -> np.ndarray:
    """(N, 2, 3) axis-aligned bounds of ``boxes``: a quick first test before :func:`_overlap`."""
    if not boxes:
        return np.zeros((0, 2, 3))
    return np.array([[b.aabb().lo, b.aabb().hi] for b in boxes], dtype=np.float64)


def _collides(box: OrientedBox, others: list[OrientedBox], bounds: np.ndarray) -> bool:
    aabb = box.aabb()
    lo, hi = np.asarray(aabb.lo), np.asarray(aabb.hi)
    near = np.all((bounds[:, 0] < hi) & (bounds[:, 1] > lo), axis=1)
    return any(_overlap(box, others[i]) for i in np.flatnonzero(near))


def _overlap(a: OrientedBox, b: OrientedBox, tol: float = 1e-3) -> bool:
    """Boxes overlap: plan footprints share area and height ranges overlap (by > ``tol``)."""
    if min(a.top, b.top) - max(a.bottom, b.bottom) <= tol:
        return False
    fa, fb = a.footprint(), b.footprint()
    if fa.is_empty or fb.is_empty:
        return False
    return fa.intersection(fb).area > tol * tol
