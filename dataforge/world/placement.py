"""Changing a house: open containers, spawn, place and remove small objects.

:class:`World` holds a house's objects as they change. Placing an object on a receptacle picks
one of the receptacle's support surfaces (:mod:`dataforge.world.surfaces`: a table's top, a
bookcase's shelf boards, a chair's seat, the inside of a drawer or fridge, a sink's basin), a
pose on it, then checks it:

- support: the object's bottom must lie within ``max_sink`` below / ``max_hover`` above the
  surface, and its footprint inside the surface's polygon. By default these depend on the
  categories (:func:`rest_limits`): 3 cm of sinking into a soft receptacle (a bed, a sofa, an
  armchair, a pillow, ...), else 1 cm; 6 cm of hovering for breakable objects, which ProcTHOR's
  generator records 5 cm above where AI2-THOR put them, else 1 cm. A sampled pose rests exactly
  on its surface; the limits matter for poses given to :meth:`World.place_at`;
- headroom: the object must fit under the surface's clearance (the shelf board above it);
- collision: its box may not overlap the parts of any other object (a chair's seat under a
  table's top, a lamp beside it), nor the receptacle's own parts for surfaces open above
  (a sofa's arm beside its seat). Interiors and basins are hollow: there only the contents
  already inside count.

Surfaces behind a door or in a drawer need the receptacle open: they are tried after the
usable ones, and a closed receptacle is opened (``auto_open``, the default) when one is chosen:
the object's own door (``openness``, a fridge's). A drawer or cupboard (an element, such as a
dresser's ``Drawer_2``) has an openness of its own (``open_elements``), which placement only
reads: :meth:`World.open_surface` opens it (SpaMEM does before acting, as AI2-THOR's agent opens
the drawer, not the dresser); placed into while shut, the object goes in unseen, as
AI2-THOR's ``InitialRandomSpawn`` fills closed drawers.
Every attempt ends in a :class:`PlacementResult` (``placed``, ``no_free_space``, ``collision``,
``closed``, ``not_a_receptacle``) rather than an exception. Objects placed on a receptacle become
its children in the house JSON, as in ProcTHOR; the surface they rest on (a sub-receptacle such
as ``Drawer_2``) follows from their pose (:func:`~dataforge.world.surfaces.surface_under`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import shapely.affinity
from shapely.geometry import Point, Polygon

from dataforge.errors import UsageError
from dataforge.world.archetypes import shape_of
from dataforge.world.assets import AssetCatalogue, AssetInfo
from dataforge.world.boxes import OrientedBox, object_box
from dataforge.world.graph import GraphParts, WorldGraph, world_graph
from dataforge.world.house import OWN_DOOR, House, HouseObject
from dataforge.world.shapes import element_id
from dataforge.world.surfaces import WorldSurface, object_surfaces, part_boxes
from dataforge.world.vectors import Vec3

HOLLOW_KINDS = frozenset({"interior", "basin"})  # surfaces inside a receptacle
SOFT_TYPES = frozenset({"ArmChair", "Bed", "DogBed", "Ottoman", "Pillow", "Sofa"})
SOFT_SINK_M, SINK_M = 0.03, 0.01
BREAKABLE_HOVER_M, HOVER_M = 0.06, 0.01


def rest_limits(info: AssetInfo, receptacle_type: str) -> tuple[float, float]:
    """(max sink, max hover) in metres of an object of asset ``info`` on a receptacle type."""
    sink = SOFT_SINK_M if receptacle_type in SOFT_TYPES else SINK_M
    hover = BREAKABLE_HOVER_M if "CanBreak" in info.secondary_properties else HOVER_M
    return sink, hover


def rest_limit_table() -> dict[str, Any]:
    """The defaults of :func:`rest_limits` as a record (what a dataset's manifest keeps)."""
    return {
        "sink_m": SINK_M,
        "soft_sink_m": SOFT_SINK_M,
        "soft_receptacles": sorted(SOFT_TYPES),
        "hover_m": HOVER_M,
        "breakable_hover_m": BREAKABLE_HOVER_M,
        "breakable": "assets with the CanBreak property",
    }


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
    surface: int | None = None  # index of the receptacle's surface (WorldSurface.index)
    kind: str | None = None  # that surface's kind

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
        self._parts = GraphParts()  # what the graphs of this world's states share
        self._boxes = self._parts.boxes  # boxes of objects as they are (by record)
        self._gone: set[str] = set()  # ids removed: a spawn never takes one (one id, one object)
        self._house: House | None = None  # house() and graph() as of the objects in _house_key
        self._house_key: tuple[HouseObject, ...] = ()
        self._graph: WorldGraph | None = None

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
        """The asset is a receptacle, or has sub-receptacles (a shelving unit's shelves)."""
        obj = self.object(object_id)
        info = self.catalogue.asset(obj.asset_id)
        return info.receptacle or bool(object_surfaces(obj, info))

    def graph(self) -> WorldGraph:
        """The world graph of :meth:`house` (kept until an object changes)."""
        house = self.house()
        if self._graph is None:
            self._graph = world_graph(house, self.catalogue, self._parts)
        return self._graph

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

    def open_element(self, object_id: str, element: str, openness: float = 1.0) -> bool:
        """Open sub-receptacle ``element`` (a drawer, a cupboard) of ``object_id``; False when
        the object has no such element."""
        obj = self.object(object_id)
        if element not in shape_of(self.catalogue.asset(obj.asset_id)).elements:
            return False
        now = {**dict(obj.open_elements), element: float(openness)}
        self.set_open_elements(object_id, now)
        return True

    def set_open_elements(self, object_id: str, open_elements: Mapping[str, float]) -> None:
        """Set which elements of ``object_id`` are open, and how far (0 closes), unchecked."""
        items = tuple(sorted((e, float(v)) for e, v in open_elements.items() if v > 0))
        self._objects[object_id] = dataclasses.replace(self.object(object_id), open_elements=items)

    def open_surface(self, object_id: str, surface: WorldSurface) -> str | None:
        """Open what ``surface`` of ``object_id`` needs (its element, or the object's door);
        the id of what was opened (``<object>|Drawer_2`` or the object's), None when nothing
        needed it or it could not open."""
        obj = self.object(object_id)
        if not surface.needs_open or obj.drawn_openness(surface.element) > 0:
            return None
        if surface.element is None:
            if not self.open(object_id):
                return None
            doors = {**dict(self.object(object_id).open_elements), OWN_DOOR: 1.0}
            self.set_open_elements(object_id, doors)
            return object_id
        return surface.element_id if self.open_element(object_id, surface.element) else None

    def reclose(self, was: HouseObject) -> list[str]:
        """Put ``was.id``'s door and elements back as open as in ``was`` (after a capture made
        with them open); the ids of what was closed."""
        now = self.object(was.id)
        closed = opened_ids(was, now)
        self._objects[was.id] = dataclasses.replace(
            now, openness=was.openness, open_elements=was.open_elements
        )
        return closed

    def move(self, object_id: str, position: Iterable[float]) -> None:
        """Move an object to ``position`` (its box centre) unchecked, keeping its parent."""
        obj = self.object(object_id)
        pos = cast(Vec3, tuple(float(v) for v in position))
        self._objects[object_id] = dataclasses.replace(obj, position=pos)

    def remove(self, object_id: str) -> tuple[HouseObject, ...]:
        """Remove an object and everything resting on or in it; return what was removed."""
        self.object(object_id)
        gone = [object_id]
        for oid in gone:
            gone += [o.id for o in self._objects.values() if o.parent_id == oid]
        self._gone.update(gone)
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

    def surfaces(self, object_id: str, *, all_surfaces: bool = False) -> tuple[WorldSurface, ...]:
        """The object's support surfaces as it stands now (see :mod:`dataforge.world.surfaces`;
        ``all_surfaces``: a non-receptacle's own surfaces too)."""
        obj = self.object(object_id)
        info = self.catalogue.asset(obj.asset_id)
        return object_surfaces(obj, info, all_surfaces=all_surfaces)

    def place(
        self,
        obj: HouseObject | str,
        receptacle_id: str,
        rng: np.random.Generator,
        *,
        surface: int | str | None = None,
        inside: bool | None = None,
        auto_open: bool = True,
        prefer_open: bool = True,
        attempts: int = 64,
        max_sink: float | None = None,
        max_hover: float | None = None,
    ) -> PlacementResult:
        """Move ``obj`` (an object of the house, or a new one) onto or into ``receptacle_id``.

        ``surface`` picks the receptacle's surface: its index, its kind (``shelf``) or its
        element (``Drawer_2``); by default every surface is searched, the usable ones (not behind
        a closed door) first, each attempt drawing a surface with probability by area.
        ``inside`` True keeps to interiors and basins, False to the others. With
        ``prefer_open=False`` closed surfaces are drawn alongside the open ones (AI2-THOR's
        ``InitialRandomSpawn`` fills closed drawers and fridges too) and the receptacle is left
        as it was.
        """
        obj = self.object(obj) if isinstance(obj, str) else obj
        receptacle = self.object(receptacle_id)
        max_sink, max_hover = self._limits(obj, receptacle_id, max_sink, max_hover)
        if not self.is_receptacle(receptacle_id):
            return PlacementResult(
                "not_a_receptacle",
                obj.id,
                receptacle_id,
                message=f"{receptacle.object_type} is not a receptacle",
            )
        candidates = _choose_surfaces(self.surfaces(receptacle_id), surface, inside)
        if not candidates:
            return PlacementResult(
                "no_free_space",
                obj.id,
                receptacle_id,
                inside=bool(inside),
                message=f"{receptacle_id} has no surface {surface!r}"
                if surface is not None
                else f"{receptacle_id} has no surface to place on",
            )

        def shut(c: WorldSurface) -> bool:
            return c.needs_open and receptacle.element_openness(c.element) <= 0

        usable = [c for c in candidates if not shut(c)]
        closed = [c for c in candidates if shut(c)]
        if not usable and not auto_open:
            return PlacementResult(
                "closed",
                obj.id,
                receptacle_id,
                inside=True,
                message=f"{receptacle_id} is closed",
            )
        if not prefer_open:
            groups = [usable + closed] if auto_open else [usable]
        else:
            groups = [g for g in ((usable, closed) if auto_open else (usable,)) if g]
        size = np.asarray(self.catalogue.asset(obj.asset_id).size, dtype=np.float64)
        rec_yaw = self.box(receptacle_id).yaw_deg
        own = self._part_boxes(receptacle_id)
        others = [
            b
            for o in self._objects.values()
            if o.id not in (obj.id, receptacle_id)
            for b in self._part_boxes(o.id)
        ]
        collided, too_tall, last = 0, 0, candidates[0]
        per_group = max(attempts // len(groups), 1)
        for group in groups:
            fitting = [c for c in group if c.clearance is None or size[1] <= c.clearance]
            too_tall += len(group) - len(fitting)
            if not fitting:
                continue
            weights = np.array([max(c.area_m2, 1e-6) for c in fitting])
            for k in range(per_group):
                chosen = fitting[int(rng.choice(len(fitting), p=weights / weights.sum()))]
                last = chosen
                yaw = float(rec_yaw + 90.0 * rng.integers(4))
                region = _fit_region(chosen.polygon, size, yaw)
                if region.is_empty:
                    continue
                x, z = _sample(region, rng)
                center = (x, chosen.y + size[1] / 2.0, z)
                candidate = OrientedBox(center, tuple(size), yaw_deg=yaw)
                if not _supported(candidate, chosen.polygon, chosen.y, max_sink, max_hover):
                    continue
                blockers = others if chosen.kind in HOLLOW_KINDS else [*others, *own]
                if _collides(candidate, blockers, _bounds(blockers)):
                    collided += 1
                    continue
                if shut(chosen) and prefer_open:
                    self.open(receptacle_id)  # its own door; a drawer stays as it is
                self._commit(obj, receptacle_id, center, (0.0, yaw, 0.0))
                return PlacementResult(
                    "placed",
                    obj.id,
                    receptacle_id,
                    center,
                    (0.0, yaw, 0.0),
                    chosen.kind in HOLLOW_KINDS,
                    k + 1,
                    surface=chosen.index,
                    kind=chosen.kind,
                )
        status = "collision" if collided else "no_free_space"
        message = f"{collided} candidate poses collided"
        if too_tall and not collided:
            message = "too tall for the space above every surface"
        return PlacementResult(
            status,
            obj.id,
            receptacle_id,
            inside=last.kind in HOLLOW_KINDS,
            attempts=attempts,
            message=message,
        )

    def place_at(
        self,
        obj: HouseObject,
        receptacle_id: str,
        *,
        max_sink: float | None = None,
        max_hover: float | None = None,
        inside: bool | None = None,
    ) -> PlacementResult:
        """Put ``obj`` back at its own pose on ``receptacle_id`` (checked, not sampled).

        The pose must rest on one of the receptacle's surfaces, or (a pose AI2-THOR's physics
        settled on the asset's own mesh, as in ProcTHOR's released houses) lie within the
        receptacle's box: its centre over the box's footprint, its bottom inside its height."""
        max_sink, max_hover = self._limits(obj, receptacle_id, max_sink, max_hover)
        box = object_box(obj, self.catalogue)
        surfaces = _choose_surfaces(self.surfaces(receptacle_id), None, inside)
        under = [s for s in surfaces if _supported(box, s.polygon, s.y, max_sink, max_hover)]
        if not under and _within(box, self.box(receptacle_id), max_hover):
            under = [_box_surface(receptacle_id, self.box(receptacle_id), box.bottom)]
        if not under:
            return PlacementResult(
                "no_free_space",
                obj.id,
                receptacle_id,
                obj.position,
                obj.rotation,
                bool(inside),
                1,
                "not supported by the surface",
            )
        chosen = under[0]
        blockers = [
            b
            for o in self._objects.values()
            if o.id not in (obj.id, receptacle_id)
            for b in self._part_boxes(o.id)
        ]
        if chosen.kind not in HOLLOW_KINDS and chosen.index >= 0:
            blockers += self._part_boxes(receptacle_id)
        for other in blockers:
            if _overlap(box, other):
                return PlacementResult(
                    "collision",
                    obj.id,
                    receptacle_id,
                    obj.position,
                    obj.rotation,
                    chosen.kind in HOLLOW_KINDS,
                    1,
                    "overlaps a neighbour",
                )
        self._commit(obj, receptacle_id, obj.position, obj.rotation)
        return PlacementResult(
            "placed",
            obj.id,
            receptacle_id,
            obj.position,
            obj.rotation,
            chosen.kind in HOLLOW_KINDS,
            1,
            surface=None if chosen.index < 0 else chosen.index,
            kind=chosen.kind,
        )

    def house(self) -> House:
        """The current house: the opened house with the objects as they are now, in house JSON
        order (a parent, then its children), and that JSON as its ``raw``. Built from the
        objects, not re-read (the objects are validated records already: what re-reading
        ``raw`` would give, tests/world/test_placement.py checks), and kept until an object
        changes."""
        key = tuple(self._objects.values())
        if self._house is None or key != self._house_key:
            roots = self._raw_tree()
            raw = {k: v for k, v in self._base.raw.items() if k != "objects"}
            raw["objects"] = roots
            order: list[HouseObject] = []
            stack = list(reversed(roots))
            while stack:
                node = stack.pop()
                order.append(self._objects[node["id"]])
                stack.extend(reversed(node.get("children", [])))
            self._house = dataclasses.replace(self._base, objects=tuple(order), raw=raw)
            self._house_key, self._graph = key, None
        return self._house

    # -- internals -------------------------------------------------------------------------

    def _limits(
        self, obj: HouseObject, receptacle_id: str, sink: float | None, hover: float | None
    ) -> tuple[float, float]:
        receptacle = self.object(receptacle_id)
        default_sink, default_hover = rest_limits(
            self.catalogue.asset(obj.asset_id), receptacle.object_type
        )
        return (default_sink if sink is None else sink, default_hover if hover is None else hover)

    def _part_boxes(self, object_id: str) -> tuple[OrientedBox, ...]:
        obj = self.object(object_id)
        return part_boxes(obj, self.catalogue.asset(obj.asset_id))

    def _commit(
        self, obj: HouseObject, parent: str, position: Iterable[float], rotation: Iterable[float]
    ) -> None:
        pos = cast(Vec3, tuple(float(v) for v in position))
        rot = cast(Vec3, tuple(float(v) for v in rotation))
        self._objects.pop(obj.id, None)
        self._objects[obj.id] = dataclasses.replace(
            obj, position=pos, rotation=rot, parent_id=parent
        )

    def _new_id(self, object_type: str) -> str:
        """``<type>|spawned|k`` for the lowest k no object of this world has had: an id that
        was removed is never given again, so that an id names one object over a sequence."""
        k = 0
        while f"{object_type}|spawned|{k}" in self._objects or (
            f"{object_type}|spawned|{k}" in self._gone
        ):
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
            base.pop("openElements", None)
            if o.open_elements:
                base["openElements"] = dict(o.open_elements)
            nodes[o.id] = base
        roots = []
        for o in self._objects.values():
            if o.parent_id is not None and o.parent_id in nodes:
                nodes[o.parent_id].setdefault("children", []).append(nodes[o.id])
            else:
                roots.append(nodes[o.id])
        return roots


def opened_ids(before: HouseObject, after: HouseObject) -> list[str]:
    """What of one object is open in ``after`` but was shut in ``before``: its own id (its
    door) and its elements' ids (``<object>|Drawer_2``)."""
    out = [after.id] if after.drawn_openness(None) > 0 >= before.drawn_openness(None) else []
    for element, openness in after.open_elements:
        if element != OWN_DOOR and openness > 0 >= before.element_openness(element):
            out.append(element_id(after.id, element))
    return out


def _flatten_raw(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for o in objects:
        out.append(o)
        out += _flatten_raw(o.get("children", []) or [])
    return out


def _within(box: OrientedBox, receptacle: OrientedBox, hover: float) -> bool:
    """``box`` stands inside ``receptacle``'s box, or on its top within ``hover``."""
    centre = Point(box.center[0], box.center[2])
    inside = receptacle.footprint().buffer(0.02).covers(centre)
    return inside and receptacle.bottom - 0.02 <= box.bottom <= receptacle.top + hover


def _box_surface(receptacle_id: str, receptacle: OrientedBox, y: float) -> WorldSurface:
    """A stand-in surface at height ``y`` over the receptacle's footprint (for poses settled on
    meshes the archetype only approximates)."""
    kind = "top" if y >= receptacle.top - 0.03 else "interior"
    return WorldSurface(receptacle_id, -1, kind, None, y, receptacle.footprint(), None, False)


def _choose_surfaces(
    surfaces: tuple[WorldSurface, ...], surface: int | str | None, inside: bool | None
) -> list[WorldSurface]:
    """The surfaces ``surface`` (index, kind or element name) and ``inside`` allow."""
    out = list(surfaces)
    if isinstance(surface, int) and not isinstance(surface, bool):
        out = [s for s in out if s.index == surface]
    elif isinstance(surface, str):
        out = [s for s in out if surface in (s.kind, s.element)]
    if inside is not None:
        out = [s for s in out if (s.kind in HOLLOW_KINDS) == inside]
    return out


def _fit_region(surface: Polygon, size: np.ndarray, yaw: float) -> Polygon:
    """Where the object's centre may go so its footprint (at ``yaw``) stays on ``surface``.

    For a convex surface (every archetype surface is a rectangle) this is exact: the surface
    shifted back by each corner of the footprint, intersected. A concave surface is shrunk by
    the footprint's circumscribed radius (safe, not exact).
    """
    rect = OrientedBox((0.0, 0.0, 0.0), tuple(size), yaw_deg=yaw).footprint()
    if surface.is_empty or rect.is_empty:
        return Polygon()
    if surface.equals(surface.convex_hull):
        region = surface
        for x, z in list(rect.exterior.coords)[:-1]:
            region = region.intersection(shapely.affinity.translate(surface, -x, -z))
            if region.is_empty:
                return Polygon()
        return region if isinstance(region, Polygon) else Polygon()
    half = float(np.hypot(size[0], size[2])) / 2.0
    return surface.buffer(-half, join_style="mitre")


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
