"""A house as something to render: meshes with stable instance ids and semantic classes.

Geometry (``house_scene``):
- floors: one slab per room at its floor height; ceilings (optional) at the tallest wall's top;
- walls: ProcTHOR walls are zero-thickness planes, one per room side, so the two sides of an
  interior wall coincide. Each side is pushed ``WALL_INSET`` (5 mm) into its own room, which
  keeps both sides visible without z-fighting; door and window holes are cut from both sides
  (hole ends are projected onto each side, so either side's direction works);
- objects: every object (children included) as its archetype's shape
  (:mod:`dataforge.world.archetypes`) fitted to the real asset size from the ProcTHOR database,
  coloured from the asset's materials (:mod:`dataforge.world.materials`); with
  ``shapes=False``, as its oriented bounding box in one colour per type (the old look, kept for
  comparison). Sub-receptacles (drawers, shelves, cupboards, basins) are instances of their own,
  with element ids ``<object id>|<element>`` (:func:`element_id`) and AI2-THOR's types as classes;
- walls, floors and ceilings take the house's materials and colours; doors and windows are drawn
  in their holes: frames, panes, and door leaves swung open by the door's ``openness``.

Ids: instance ids come from an :class:`InstanceIds` registry keyed by the house element's id
(``room|3``, ``wall|...``, an object id), so an element keeps its id while objects are added or
removed, and masks name walls and floors too. Semantic ids: 0 nothing, then ``Floor``,
``Wall``, ``Ceiling``, then every ProcTHOR object type in sorted order, then the sub-receptacle
types (``Cabinet``, ``Drawer``, ``Shelf``, ``SinkBasin``), then custom labels
(:meth:`SemanticTable.add`, e.g. a goal cylinder) in the order they are added.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from shapely.geometry import Point, Polygon

from dataforge.errors import UsageError
from dataforge.render.mesh import Mesh, Scene, box_mesh_from_corners, polygon_slab, wall_mesh
from dataforge.world.archetypes import shape_of
from dataforge.world.assets import AssetCatalogue
from dataforge.world.boxes import object_box
from dataforge.world.house import House, HouseObject, Wall
from dataforge.world.materials import structure_color
from dataforge.world.openings import opening_class, opening_meshes
from dataforge.world.shape_mesh import drawn_offset, object_meshes
from dataforge.world.shapes import SUB_RECEPTACLE_TYPES, element_id

if TYPE_CHECKING:
    from dataforge.world.mesh_assets import MeshLibrary

WALL_INSET = 0.005
STRUCTURE_CLASSES = ("Floor", "Wall", "Ceiling")


class SemanticTable:
    """Semantic class names <-> ids (0 is nothing)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names: list[str] = ["nothing"]
        self._ids: dict[str, int] = {}
        for name in names:
            self.add(name)

    def add(self, name: str) -> int:
        """The id of ``name``, adding it at the end if new."""
        if name not in self._ids:
            self._ids[name] = len(self.names)
            self.names.append(name)
        return self._ids[name]

    def id(self, name: str) -> int:
        try:
            return self._ids[name]
        except KeyError:
            raise UsageError(f"unknown semantic class {name!r}") from None

    @classmethod
    def for_catalogue(cls, catalogue: AssetCatalogue) -> SemanticTable:
        return cls([*STRUCTURE_CLASSES, *sorted(catalogue.types()), *SUB_RECEPTACLE_TYPES])

    def to_dict(self) -> dict[str, Any]:
        return {"names": self.names}


class InstanceIds:
    """Stable instance ids by element id: the first id asked for an element is kept for good."""

    def __init__(self, assigned: Mapping[str, int] | None = None) -> None:
        self._ids: dict[str, int] = dict(assigned or {})
        self._next = max(self._ids.values(), default=0) + 1

    def __call__(self, element_id: str) -> int:
        if element_id not in self._ids:
            self._ids[element_id] = self._next
            self._next += 1
        return self._ids[element_id]

    def to_dict(self) -> dict[str, int]:
        return dict(self._ids)


@dataclass(frozen=True)
class InstanceInfo:
    instance_id: int
    element_id: str  # house id of the room (floor/ceiling), wall, object, or a custom id
    kind: str  # floor | ceiling | wall | object | custom
    label: str  # semantic class name
    semantic_id: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "element_id": self.element_id,
            "kind": self.kind,
            "label": self.label,
            "semantic_id": self.semantic_id,
        }


@dataclass
class HouseScene:
    """Meshes to render plus what every instance id means."""

    scene: Scene
    instances: dict[int, InstanceInfo]
    semantics: SemanticTable
    ids: InstanceIds
    element_instance: dict[str, int] = field(default_factory=dict)

    def instance_of(self, element_id: str, kind: str = "object") -> int:
        key = _key(element_id, kind)
        if key not in self.element_instance:
            raise UsageError(f"no {kind} {element_id!r} in this scene")
        return self.element_instance[key]

    def add(self, mesh: Mesh, element_id: str, label: str, kind: str = "custom") -> int:
        """Add a mesh (e.g. a goal cylinder) under its own instance id and semantic class."""
        iid = self.ids(_key(element_id, kind))
        sid = self.semantics.add(label)
        mesh.instance_id, mesh.semantic_id = iid, sid
        self.scene.add(mesh)
        self.instances[iid] = InstanceInfo(iid, element_id, kind, label, sid)
        self.element_instance[_key(element_id, kind)] = iid
        return iid

    def id_table(self) -> list[dict[str, Any]]:
        return [self.instances[i].to_dict() for i in sorted(self.instances)]


def _key(element_id: str, kind: str) -> str:
    # Floors and ceilings share their room's id; objects and walls have their own.
    return f"{kind}:{element_id}" if kind in ("floor", "ceiling") else element_id


def type_color(name: str) -> tuple[int, int, int]:
    """A stable, mid-saturation colour per class name."""
    h = hashlib.sha256(name.encode()).digest()
    return (60 + h[0] % 170, 60 + h[1] % 170, 60 + h[2] % 170)


def wall_inward_offset(wall: Wall, rooms: Mapping[str, Polygon]) -> np.ndarray:
    """A WALL_INSET step from the wall plane toward its own room (away from rooms for exterior
    sides)."""
    p0, p1 = np.asarray(wall.start, dtype=np.float64), np.asarray(wall.end, dtype=np.float64)
    d = (p1 - p0) / np.linalg.norm(p1 - p0)
    normal = np.array([-d[1], d[0]])
    mid = (p0 + p1) / 2
    probe = Point(*(mid + 0.05 * normal))
    # Exterior sides: ``roomId`` is "exterior" in some houses, but the inner room's id in
    # others, where only the wall id (``wall|exterior|...``) says so.
    exterior = wall.room_id == "exterior" or "exterior" in wall.id.split("|")
    room = None if exterior else rooms.get(wall.room_id)
    if room is not None:
        inside = room.contains(probe)
    else:  # exterior side: step away from every room
        inside = not any(r.contains(probe) for r in rooms.values())
    return (normal if inside else -normal) * WALL_INSET


Part = tuple[Mesh, str, str, str]  # a mesh, its element id, class and kind (HouseScene.add)


class SceneParts:
    """What :func:`house_scene` keeps between the scenes of one world, so that a scene after an
    action rebuilds only what changed: the structure's meshes (floors, ceilings, walls, doors
    and windows: a world's rooms, walls and openings never change) and each object's meshes,
    by its record (position, openness, parent...) and where it is drawn; and each mesh's
    corner buffers (:meth:`~dataforge.render.mesh.Scene.buffers`). Meshes are shared between
    the scenes it builds: none is changed in place (every change makes another record)."""

    def __init__(self) -> None:
        self.structure: tuple[Any, list[Part], list[Part]] | None = None
        self.objects: dict[Any, list[Part]] = {}
        self.corners: dict[int, Any] = {}


def house_scene(
    house: House,
    catalogue: AssetCatalogue,
    *,
    ceiling: bool = True,
    ids: InstanceIds | None = None,
    hidden: Iterable[str] = (),
    shapes: bool = True,
    library: MeshLibrary | None = None,
    parts: SceneParts | None = None,
) -> HouseScene:
    """Meshes of ``house`` (see the module docstring); ``hidden`` object ids are left out;
    ``library`` (real meshes from ``--assets``) replaces the archetypes of the assets it has.
    ``parts``: meshes kept from earlier scenes of the same world, built with the same
    arguments (reused where their element is unchanged, the same meshes in the same order)."""
    ids = ids or InstanceIds()
    semantics = SemanticTable.for_catalogue(catalogue)
    hs = HouseScene(Scene(), {}, semantics, ids)
    key = (house.rooms, house.walls, house.doors, house.windows, ceiling, shapes)
    if parts is not None and parts.structure is not None and parts.structure[0] == key:
        head, tail = parts.structure[1], parts.structure[2]
    else:
        head = _structure_parts(house, ceiling)
        tail = _opening_parts(house, catalogue) if shapes else []
        if parts is not None:
            parts.structure = (key, head, tail)
    for part in head:
        hs.add(*part)
    skip = set(hidden)
    by_id = {o.id: o for o in house.objects}
    kept: dict[Any, list[Part]] = {}
    for obj in sorted(house.objects, key=lambda o: o.id):
        if obj.id in skip or obj.parent_id in skip:
            continue
        parent = by_id.get(obj.parent_id) if obj.parent_id is not None else None
        shift = np.zeros(3)
        if shapes and parent is not None and parent.open_elements:
            info = catalogue.asset(parent.asset_id)
            shift = drawn_offset(object_box(obj, catalogue), parent, info)
        obj_key = (obj, tuple(float(v) for v in shift))
        found = None if parts is None else parts.objects.get(obj_key)
        if found is None:
            found = _object_parts(obj, catalogue, shift, shapes, library)
        kept[obj_key] = found
        for part in found:
            hs.add(*part)
    for part in tail:
        hs.add(*part)
    if parts is not None:
        parts.objects = kept
        used = {id(m) for m in hs.scene.meshes}
        parts.corners = {k: v for k, v in parts.corners.items() if k in used}
        hs.scene.corners = parts.corners
    return hs


def _structure_parts(house: House, ceiling: bool) -> list[Part]:
    """Floors, ceilings and walls, in the order they are drawn."""
    out: list[Part] = []
    rooms = {r.id: Polygon(r.polygon_xz) for r in house.rooms}
    raw_rooms = {r.get("id"): r for r in house.raw.get("rooms", []) if isinstance(r, dict)}
    for room in sorted(house.rooms, key=lambda r: r.id):
        raw = raw_rooms.get(room.id, {})
        color = structure_color("floor", raw.get("floorMaterial"), raw.get("floorColor"))
        mesh = polygon_slab(room.polygon_xz, room.floor_y, color=color)
        out.append((mesh, room.id, "Floor", "floor"))
    top = max((w.y_min + w.height for w in house.walls), default=2.5)
    if ceiling:
        params = house.raw.get("proceduralParameters")
        params = params if isinstance(params, dict) else {}
        color = structure_color(
            "ceiling", params.get("ceilingMaterial"), params.get("ceilingColor")
        )
        for room in sorted(house.rooms, key=lambda r: r.id):
            mesh = polygon_slab(room.polygon_xz, top, color=color)
            out.append((mesh, room.id, "Ceiling", "ceiling"))
    for wall in sorted(house.walls, key=lambda w: w.id):
        if wall.empty or wall.height <= 0:
            continue
        shift = wall_inward_offset(wall, rooms)
        color = structure_color("wall", wall.material, wall.color)
        mesh = wall_mesh(
            np.asarray(wall.start) + shift,
            np.asarray(wall.end) + shift,
            wall.y_min,
            wall.y_min + wall.height,
            house.wall_holes(wall),
            color=color,
        )
        out.append((mesh, wall.id, "Wall", "wall"))
    return out


def _opening_parts(house: House, catalogue: AssetCatalogue) -> list[Part]:
    """Doors and windows: frames, panes, leaves."""
    return [
        (mesh, opening.id, opening_class(catalogue, opening), "object")
        for opening in sorted(house.openings, key=lambda o: o.id)
        for mesh in opening_meshes(house, opening, catalogue)
    ]


def _object_parts(
    obj: HouseObject,
    catalogue: AssetCatalogue,
    shift: np.ndarray,
    shapes: bool,
    library: MeshLibrary | None,
) -> list[Part]:
    """One object's meshes (moved by ``shift``: in an open drawer)."""
    if not shapes:
        box = object_box(obj, catalogue)
        mesh = box_mesh_from_corners(box.corners(), color=type_color(obj.object_type))
        return [(mesh, obj.id, obj.object_type, "object")]
    info = catalogue.asset(obj.asset_id)
    real = library.meshes(obj, info) if library is not None else None
    if real is not None:
        return [(_moved(real[None], shift), obj.id, obj.object_type, "object")]
    elements = shape_of(info).elements
    out: list[Part] = []
    for element, mesh in object_meshes(obj, info).items():
        mesh = _moved(mesh, shift)
        if element is None:
            out.append((mesh, obj.id, obj.object_type, "object"))
        else:
            out.append((mesh, element_id(obj.id, element), elements[element], "object"))
    return out


def _moved(mesh: Mesh, shift: np.ndarray) -> Mesh:
    """``mesh`` moved by ``shift`` (itself when that is zero): an object in an open drawer."""
    if not np.any(shift):
        return mesh
    return dataclasses.replace(mesh, vertices=mesh.vertices + shift)


def pixel_coverage(instance: np.ndarray, instance_id: int) -> float:
    """Share of the image's pixels showing ``instance_id`` (0..1)."""
    return float(np.count_nonzero(instance == instance_id)) / float(instance.size)
