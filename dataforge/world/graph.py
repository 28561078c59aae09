"""A house as a JSON-serialisable world graph: rooms, receptacles and objects.

* Rooms: id, type, floor polygon (x, z) and its area (m²).
* Receptacles: every object whose asset is a receptacle, that has sub-receptacles, or that has
  children. Its axis-aligned
  box, the area of its top face (its box's plan-view footprint) and the free part of it (cm²):
  the top face minus the footprints of the children resting on the top, clipped at 0. A child
  rests on the top when its box bottom is at least at the parent's top minus
  :data:`ON_TOP_TOLERANCE_M`; children below that are inside (shelves, drawers, a fridge, a
  sofa's seat) and take no top surface.
  Its support surfaces (:mod:`dataforge.world.surfaces`: the top, shelf boards, a seat, the
  inside of a fridge or a drawer, a basin), each with its kind, height, area, free area (cm²),
  the objects resting on it and whether placement uses it (``usable`` is False for a
  non-receptacle's own surface, such as the deck of a sink whose asset is not a receptacle,
  where ProcTHOR's generator stands its faucet).
* Sub-receptacles (a dresser's drawers, a bookcase's shelves, a counter's cupboards, a sink's
  basin) are receptacles of their own, typed as AI2-THOR types them (``Drawer``, ``Shelf``,
  ``Cabinet``, ``SinkBasin``), with id ``<object id>|<element>``, ``parent_id`` the object, and
  as top area and children those of their own surfaces.
* Every receptacle's ``openness`` as drawn (0 shut, up to 1 open): a drawer's or cupboard's,
  or an object's own door, from its object's ``open_elements`` (a fridge whose ``openness``
  only placement set is drawn, and listed, shut). Format 4 added it; format 3 graphs are read
  with every receptacle shut.
* Objects: id, type, asset, position, rotation, parent (the receptacle it is in or on, None for
  top-level objects), the surface of the parent it rests on (its index, kind and sub-receptacle
  id; None when its pose is on none of them, as in houses settled by AI2-THOR's physics on its
  own meshes) and the room whose floor polygon contains its position.
* Structure: the house's floors and ceilings (one per room, with the room's id), walls, doors
  and windows, each with its kind, semantic class (``Floor``, ``Wall``, ``Ceiling``, the
  opening asset's type) and rooms, so that every element a rendered mask can name is listed.

:func:`graph_diff` and :func:`apply_graph_diff` store a changing house compactly: the first
graph in full, then per change only the nodes that differ.

Everything is listed sorted by id (plain string order), so the same house gives the same JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import shapely
from shapely.geometry import Point, Polygon

from dataforge.errors import MalformedInputError, UsageError
from dataforge.world.archetypes import shape_of
from dataforge.world.assets import AssetCatalogue
from dataforge.world.boxes import Aabb, OrientedBox, object_box
from dataforge.world.house import House, HouseObject
from dataforge.world.shapes import element_id
from dataforge.world.surfaces import WorldSurface, object_surfaces, surface_under
from dataforge.world.vectors import XZ, Vec3, vec3

ON_TOP_TOLERANCE_M = 0.03
"""A child whose box bottom is at most this far below its parent's top rests on the top."""

M2_TO_CM2 = 1e4
GRAPH_FORMAT = 4
READABLE_FORMATS = (3, 4)  # format 3: receptacles without ``openness`` (read as shut)
GRAPH_LISTS = ("rooms", "receptacles", "objects", "structure")


@dataclass(frozen=True)
class RoomNode:
    id: str
    room_type: str
    polygon: tuple[XZ, ...]
    area_m2: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "room_type": self.room_type,
            "polygon": [list(p) for p in self.polygon],
            "area_m2": self.area_m2,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RoomNode:
        return cls(
            id=str(data["id"]),
            room_type=str(data["room_type"]),
            polygon=tuple((float(x), float(z)) for x, z in data["polygon"]),
            area_m2=float(data["area_m2"]),
        )


@dataclass(frozen=True)
class SurfaceNode:
    """One support surface of a receptacle and the objects resting on it."""

    index: int
    kind: str
    element_id: str | None
    y: float
    area_cm2: float
    free_area_cm2: float
    clearance_m: float | None
    needs_open: bool
    object_ids: tuple[str, ...] = ()
    usable: bool = True  # False: a non-receptacle's own surface, which placement does not use

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "kind": self.kind,
            "element_id": self.element_id,
            "y": self.y,
            "area_cm2": self.area_cm2,
            "free_area_cm2": self.free_area_cm2,
            "clearance_m": self.clearance_m,
            "needs_open": self.needs_open,
            "usable": self.usable,
            "object_ids": list(self.object_ids),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SurfaceNode:
        clearance = data.get("clearance_m")
        return cls(
            index=int(data["index"]),
            kind=str(data["kind"]),
            element_id=data.get("element_id"),
            y=float(data["y"]),
            area_cm2=float(data["area_cm2"]),
            free_area_cm2=float(data["free_area_cm2"]),
            clearance_m=None if clearance is None else float(clearance),
            needs_open=bool(data.get("needs_open", False)),
            object_ids=tuple(data.get("object_ids", ())),
            usable=bool(data.get("usable", True)),
        )


@dataclass(frozen=True)
class ReceptacleNode:
    """A receptacle; ``on_top_ids`` are the children counted against its free top surface;
    ``parent_id`` is the object a sub-receptacle belongs to (None for objects)."""

    id: str
    object_type: str
    aabb: Aabb
    top_area_cm2: float
    free_area_cm2: float
    child_ids: tuple[str, ...] = ()
    on_top_ids: tuple[str, ...] = ()
    parent_id: str | None = None
    surfaces: tuple[SurfaceNode, ...] = ()
    openness: float = 0.0  # how far it is open (a drawer, a fridge's door): 0 shut, 1 open

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object_type": self.object_type,
            "parent_id": self.parent_id,
            "openness": self.openness,
            "aabb_min": list(self.aabb.lo),
            "aabb_max": list(self.aabb.hi),
            "top_area_cm2": self.top_area_cm2,
            "free_area_cm2": self.free_area_cm2,
            "child_ids": list(self.child_ids),
            "on_top_ids": list(self.on_top_ids),
            "surfaces": [x.to_dict() for x in self.surfaces],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReceptacleNode:
        return cls(
            id=str(data["id"]),
            object_type=str(data["object_type"]),
            aabb=Aabb.from_dict({"lo": data["aabb_min"], "hi": data["aabb_max"]}),
            top_area_cm2=float(data["top_area_cm2"]),
            free_area_cm2=float(data["free_area_cm2"]),
            child_ids=tuple(data.get("child_ids", ())),
            on_top_ids=tuple(data.get("on_top_ids", ())),
            parent_id=data.get("parent_id"),
            surfaces=tuple(SurfaceNode.from_dict(x) for x in data.get("surfaces", ())),
            openness=float(data.get("openness") or 0.0),
        )


@dataclass(frozen=True)
class ObjectNode:
    id: str
    object_type: str
    asset_id: str
    position: Vec3
    rotation: Vec3
    parent_id: str | None
    room_id: str | None
    surface: int | None = None  # index of the parent's surface it rests on
    surface_kind: str | None = None
    element_id: str | None = None  # the sub-receptacle it is in or on

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object_type": self.object_type,
            "asset_id": self.asset_id,
            "position": list(self.position),
            "rotation": list(self.rotation),
            "parent_id": self.parent_id,
            "surface": self.surface,
            "surface_kind": self.surface_kind,
            "element_id": self.element_id,
            "room_id": self.room_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ObjectNode:
        return cls(
            id=str(data["id"]),
            object_type=str(data["object_type"]),
            asset_id=str(data["asset_id"]),
            position=vec3(data["position"]),
            rotation=vec3(data["rotation"]),
            parent_id=data.get("parent_id"),
            room_id=data.get("room_id"),
            surface=data.get("surface"),
            surface_kind=data.get("surface_kind"),
            element_id=data.get("element_id"),
        )


@dataclass(frozen=True)
class StructureNode:
    """A floor, ceiling, wall, door or window. Floors and ceilings carry their room's id."""

    id: str
    kind: str  # floor | ceiling | wall | door | window
    label: str  # semantic class
    room_ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "label": self.label,
            "room_ids": list(self.room_ids),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StructureNode:
        return cls(
            str(data["id"]),
            str(data["kind"]),
            str(data["label"]),
            tuple(str(r) for r in data["room_ids"]),
        )


@dataclass(frozen=True)
class WorldGraph:
    """Rooms, receptacles, objects and structure of one house, each sorted by id."""

    house: str
    rooms: tuple[RoomNode, ...]
    receptacles: tuple[ReceptacleNode, ...]
    objects: tuple[ObjectNode, ...]
    structure: tuple[StructureNode, ...] = ()

    def room(self, room_id: str) -> RoomNode:
        return _find(self.rooms, room_id, "room")

    def receptacle(self, object_id: str) -> ReceptacleNode:
        return _find(self.receptacles, object_id, "receptacle")

    def object(self, object_id: str) -> ObjectNode:
        return _find(self.objects, object_id, "object")

    def objects_in_room(self, room_id: str) -> tuple[ObjectNode, ...]:
        return tuple(o for o in self.objects if o.room_id == room_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": GRAPH_FORMAT,
            "house": self.house,
            "rooms": [r.to_dict() for r in self.rooms],
            "receptacles": [r.to_dict() for r in self.receptacles],
            "objects": [o.to_dict() for o in self.objects],
            "structure": [n.to_dict() for n in self.structure],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorldGraph:
        if not isinstance(data, Mapping) or data.get("format") not in READABLE_FORMATS:
            found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
            readable = " or ".join(str(f) for f in READABLE_FORMATS)
            raise MalformedInputError(f"world graph: format {found!r} is not {readable}")
        try:
            return cls(
                house=str(data["house"]),
                rooms=tuple(RoomNode.from_dict(r) for r in data["rooms"]),
                receptacles=tuple(ReceptacleNode.from_dict(r) for r in data["receptacles"]),
                objects=tuple(ObjectNode.from_dict(o) for o in data["objects"]),
                structure=tuple(StructureNode.from_dict(n) for n in data["structure"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise MalformedInputError(f"world graph: malformed ({exc!r})") from None


class GraphParts:
    """What :func:`world_graph` keeps between the graphs of one world's states: each object's
    box, surfaces and room by its record (an object that did not change costs a lookup), and
    the structure nodes. Rooms and walls are a world's own: given another house's, it starts
    afresh."""

    def __init__(self) -> None:
        self.boxes: dict[HouseObject, OrientedBox] = {}
        self.surfaces: dict[HouseObject, tuple[WorldSurface, ...]] = {}
        self.rooms: dict[HouseObject, str | None] = {}
        self.structure: tuple[StructureNode, ...] | None = None
        self._house: Any = None

    def check(self, house: House) -> None:
        """Forget everything when ``house`` has other rooms, walls or openings."""
        key = (house.rooms, house.walls, house.doors, house.windows)
        if self._house is None or self._house != key:
            self.boxes.clear()
            self.surfaces.clear()
            self.rooms.clear()
            self.structure, self._house = None, key


def world_graph(
    house: House, catalogue: AssetCatalogue, parts: GraphParts | None = None
) -> WorldGraph:
    """Describe ``house`` (see the module docstring); ``parts``: what earlier graphs of the same
    world computed (the result is the same with or without)."""
    parts = parts or GraphParts()
    parts.check(house)
    polygons = {r.id: Polygon(r.floor_polygon) for r in house.rooms}
    boxes = {}
    for o in house.objects:
        if o not in parts.boxes:
            parts.boxes[o] = object_box(o, catalogue)
        boxes[o.id] = parts.boxes[o]
    rooms = tuple(
        RoomNode(r.id, r.room_type, r.floor_polygon, float(polygons[r.id].area))
        for r in sorted(house.rooms, key=lambda r: r.id)
    )
    children: dict[str, list[HouseObject]] = {}
    for o in house.objects:
        if o.parent_id is not None:
            children.setdefault(o.parent_id, []).append(o)
    for o in house.objects:
        if o not in parts.surfaces:
            parts.surfaces[o] = object_surfaces(o, catalogue.asset(o.asset_id), all_surfaces=True)
    surfaces = {o.id: parts.surfaces[o] for o in house.objects if parts.surfaces[o]}
    resting: dict[str, WorldSurface] = {}  # child id -> the parent's surface under it
    for o in house.objects:
        if o.parent_id is not None and o.parent_id in surfaces:
            under = surface_under(boxes[o.id], surfaces[o.parent_id])
            if under is not None:
                resting[o.id] = under
    receptacles = []
    for o in sorted(house.objects, key=lambda o: o.id):
        kids = sorted(children.get(o.id, []), key=lambda c: c.id)
        usable = any(x.usable for x in surfaces.get(o.id, ()))
        if not (kids or catalogue.asset(o.asset_id).receptacle or usable):
            continue
        box = boxes[o.id]
        on_top = [c for c in kids if boxes[c.id].bottom >= box.top - ON_TOP_TOLERANCE_M]
        top, free = top_surface_cm2(box, [boxes[c.id] for c in on_top])
        nodes = []
        for surf in surfaces.get(o.id, ()):
            here = sorted(c.id for c in kids if resting.get(c.id) is surf)
            nodes.append(_surface_node(surf, [boxes[c] for c in here], tuple(here)))
        receptacles.append(
            ReceptacleNode(
                id=o.id,
                object_type=o.object_type,
                aabb=box.aabb(),
                top_area_cm2=top,
                free_area_cm2=free,
                child_ids=tuple(c.id for c in kids),
                on_top_ids=tuple(c.id for c in on_top),
                surfaces=tuple(n for n in nodes if n.element_id is None),
                openness=o.drawn_openness(None),
            )
        )
        shape = shape_of(catalogue.asset(o.asset_id))
        for element, thor_type in sorted(shape.elements.items()):
            own = [n for n in nodes if n.element_id == element_id(o.id, element)]
            if not own:
                continue
            ids = tuple(sorted(i for n in own for i in n.object_ids))
            indices = {n.index for n in own}
            plan = [x.polygon.bounds for x in surfaces[o.id] if x.index in indices]
            bottom = min(n.y for n in own)
            top = max(n.y + (n.clearance_m or 0.0) for n in own)
            receptacles.append(
                ReceptacleNode(
                    id=element_id(o.id, element),
                    object_type=thor_type,
                    aabb=Aabb(
                        (min(b[0] for b in plan), bottom, min(b[1] for b in plan)),
                        (max(b[2] for b in plan), top, max(b[3] for b in plan)),
                    ),
                    top_area_cm2=round(sum(n.area_cm2 for n in own), 3),
                    free_area_cm2=round(sum(n.free_area_cm2 for n in own), 3),
                    child_ids=ids,
                    on_top_ids=ids,
                    parent_id=o.id,
                    surfaces=tuple(own),
                    openness=o.drawn_openness(element),
                )
            )
    receptacles.sort(key=lambda r: r.id)
    objects = tuple(
        ObjectNode(
            id=o.id,
            object_type=o.object_type,
            asset_id=o.asset_id,
            position=o.position,
            rotation=o.rotation,
            parent_id=o.parent_id,
            room_id=_room(parts, o, polygons, boxes[o.id]),
            surface=resting[o.id].index if o.id in resting else None,
            surface_kind=resting[o.id].kind if o.id in resting else None,
            element_id=resting[o.id].element_id if o.id in resting else None,
        )
        for o in sorted(house.objects, key=lambda o: o.id)
    )
    if parts.structure is None:
        parts.structure = structure_nodes(house, catalogue)
    return WorldGraph(house.name, rooms, tuple(receptacles), objects, parts.structure)


def _room(
    parts: GraphParts, o: HouseObject, polygons: Mapping[str, Polygon], box: OrientedBox
) -> str | None:
    if o not in parts.rooms:
        parts.rooms[o] = room_of(o.position, polygons, box)
    return parts.rooms[o]


def structure_nodes(house: House, catalogue: AssetCatalogue) -> tuple[StructureNode, ...]:
    """Floors, ceilings, walls, doors and windows of ``house``, sorted by (id, kind)."""
    nodes = [
        StructureNode(r.id, k, k.capitalize(), (r.id,))
        for r in house.rooms
        for k in ("floor", "ceiling")
    ]
    nodes += [StructureNode(w.id, "wall", "Wall", (w.room_id,)) for w in house.walls]
    nodes += [
        StructureNode(o.id, o.kind, catalogue.asset(o.asset_id).object_type, tuple(o.room_ids))
        for o in house.openings
    ]
    return tuple(sorted(nodes, key=lambda n: (n.id, n.kind)))


def _node_key(name: str, node: Mapping[str, Any]) -> str:
    # a room's floor and ceiling share the room's id
    return f"{node['id']}#{node['kind']}" if name == "structure" else str(node["id"])


def graph_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """What changed from graph dict ``before`` to ``after``: per node list the nodes that are
    new or differ (``set``) and the keys of those that are gone (``removed``).
    ``apply_graph_diff(before, graph_diff(before, after)) == after``."""
    out: dict[str, Any] = {"format": after["format"], "house": after["house"]}
    for name in GRAPH_LISTS:
        old = {_node_key(name, n): n for n in before.get(name, [])}
        new = {_node_key(name, n): n for n in after.get(name, [])}
        changed = [n for k, n in new.items() if old.get(k) != n]
        gone = sorted(k for k in old if k not in new)
        if changed or gone:
            out[name] = {"set": changed, "removed": gone}
    return out


def apply_graph_diff(before: Mapping[str, Any], diff: Mapping[str, Any]) -> dict[str, Any]:
    """The graph dict after ``diff`` (from :func:`graph_diff`) is applied to ``before``."""
    out = {"format": diff["format"], "house": diff["house"]}
    for name in GRAPH_LISTS:
        nodes = {_node_key(name, n): n for n in before.get(name, [])}
        change = diff.get(name) or {"set": [], "removed": []}
        for key in change["removed"]:
            nodes.pop(key, None)
        for n in change["set"]:
            nodes[_node_key(name, n)] = n
        out[name] = [nodes[k] for k in sorted(nodes, key=lambda k: (nodes[k]["id"], k))]
    return out


def _surface_node(
    surf: WorldSurface, resting: list[OrientedBox], ids: tuple[str, ...]
) -> SurfaceNode:
    area = surf.polygon.area * M2_TO_CM2
    shadows = [b.footprint() for b in resting]
    used = shapely.union_all(shadows).intersection(surf.polygon).area if shadows else 0.0
    return SurfaceNode(
        index=surf.index,
        kind=surf.kind,
        element_id=surf.element_id,
        y=round(surf.y, 4),
        area_cm2=round(area, 3),
        free_area_cm2=round(max(area - used * M2_TO_CM2, 0.0), 3),
        clearance_m=None if surf.clearance is None else round(surf.clearance, 4),
        needs_open=surf.needs_open,
        object_ids=ids,
        usable=surf.usable,
    )


def top_surface_cm2(box: OrientedBox, resting: Iterable[OrientedBox]) -> tuple[float, float]:
    """(top face area, free top area) in cm² of ``box`` with the ``resting`` boxes on it: the free
    area is the top face minus the union of their footprints, clipped at 0."""
    top = box.footprint()
    shadows = [b.footprint() for b in resting]
    occupied = shapely.union_all(shadows).intersection(top) if shadows else Polygon()
    top_cm2 = top.area * M2_TO_CM2
    free_cm2 = max(top_cm2 - occupied.area * M2_TO_CM2, 0.0)
    return round(top_cm2, 3), round(free_cm2, 3)


def room_of(
    position: Vec3, polygons: Mapping[str, Polygon], box: OrientedBox | None = None
) -> str | None:
    """The room whose floor polygon contains ``position`` (x, z); on a shared boundary, the one
    the box's footprint overlaps most (then the smallest id); None outside every room."""
    point = Point(position[0], position[2])
    inside = sorted(rid for rid, poly in polygons.items() if poly.covers(point))
    if len(inside) <= 1:
        return inside[0] if inside else None
    if box is None:
        return inside[0]
    shadow = box.footprint()
    return max(inside, key=lambda rid: polygons[rid].intersection(shadow).area)  # first of ties


def _find(nodes: Sequence[Any], node_id: str, kind: str) -> Any:
    for node in nodes:
        if node.id == node_id:
            return node
    raise UsageError(f"world graph has no {kind} {node_id!r}")
