"""ProcTHOR houses: typed records over a house JSON, which is kept unchanged in ``House.raw``.

Coordinates are AI2-THOR's: metres, y up, left-handed; a plan view is the (x, z) plane.

What a house JSON holds (schema seen in ProcTHOR-10k houses, schemas 0.0.1 and 1.0.0):

* ``rooms``: ``id``, ``roomType``, ``floorPolygon`` (list of ``{x, y, z}``, y = floor height).
* ``walls``: ``id``, ``roomId`` (a room id; ``"exterior"`` for outside walls in older houses),
  ``polygon`` (4 corners of a vertical rectangle; the wall starts at ``polygon[0]``'s x, z and
  ends at the other x, z), ``material`` (a name, or ``{name, color}``), optional ``color``
  ``{r, g, b}``, optional ``empty`` (an open wall between rooms). Walls are planes without
  thickness: each side of a wall is a separate entry belonging to the room on that side (outside
  walls have a ``wall|exterior|...`` twin), and the two sides run in opposite directions.
* ``doors`` / ``windows``: ``id``, ``assetId``, ``wall0``/``wall1`` (the wall entries on either
  side), ``room0``/``room1`` (equal for a front door or a window), the hole as ``holePolygon``
  (two corners) or ``boundingBox`` ``{min, max}``: x is the distance along ``wall0`` from its
  start (ProcTHOR's generator measures from ``wall0``'s ``polygon[0]``), y the height above the
  floor. Optional ``openness``/``openable``, ``assetPosition`` or ``assetOffset``.
* ``objects``: ``id``, ``assetId``, ``position`` (the centre of the asset's bounding box, see
  :mod:`dataforge.world.boxes`), ``rotation`` (Euler degrees, AI2-THOR's), ``kinematic``,
  optional ``children`` (objects in or on this one, same shape, nested).

:func:`load_house` checks every field it reads and raises a one-line
:class:`~dataforge.errors.MalformedInputError` naming the file and the field path
(``house.json: objects[3].children[1].position: missing 'y'``). Numbers must be finite, and
coordinates in metres (room and wall corners, hole corners, object positions) within
``MAX_COORDINATE_M`` (10 km) of the origin. Rooms may share walls but not floor: two rooms whose
floor polygons overlap by more than ``ROOM_OVERLAP_M2`` (a duplicated room, say) are refused,
naming both (:func:`overlapping_rooms`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import MalformedInputError, UsageError
from dataforge.inputs import read_json
from dataforge.world.vectors import RGB, XZ, Vec3, vec3

if TYPE_CHECKING:
    from dataforge.world.assets import AssetCatalogue


WHAT = "ProcTHOR house"
# |coordinate| above this (metres) is a malformed house, not a big one: ProcTHOR houses span tens
# of metres, and a far-off wall or object would squash the map and the navigation grid.
MAX_COORDINATE_M = 1e4
# Floor two rooms may share (m^2): rooms meet along walls, so only rounding slivers are tolerated.
ROOM_OVERLAP_M2 = 1e-4


@dataclass(frozen=True)
class Room:
    """A room: its floor polygon in plan view (x, z) and the floor's height."""

    id: str
    room_type: str
    floor_polygon: tuple[XZ, ...]
    floor_y: float = 0.0

    @property
    def polygon_xz(self) -> np.ndarray:
        """The floor polygon as an (N, 2) array of x, z."""
        return np.array(self.floor_polygon, dtype=np.float64).reshape(-1, 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "room_type": self.room_type,
            "floor_polygon": [list(p) for p in self.floor_polygon],
            "floor_y": self.floor_y,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Room:
        return cls(
            id=data["id"],
            room_type=data["room_type"],
            floor_polygon=tuple(_xz(p) for p in data["floor_polygon"]),
            floor_y=float(data.get("floor_y", 0.0)),
        )


@dataclass(frozen=True)
class Wall:
    """One side of a wall: a vertical rectangle from ``start`` (``polygon[0]``) to ``end`` (x, z),
    ``y_min`` to ``y_min + height``. ``thickness`` is 0 as in ProcTHOR, whose walls are planes;
    the other side is another entry running from ``end`` to ``start``."""

    id: str
    room_id: str
    corners: tuple[Vec3, ...]
    start: XZ
    end: XZ
    y_min: float
    height: float
    thickness: float = 0.0
    material: str | None = None
    color: RGB | None = None
    empty: bool = False

    @property
    def length(self) -> float:
        return math.dist(self.start, self.end)

    def point_at(self, offset: float) -> XZ:
        """The plan-view point ``offset`` metres along the wall from its start."""
        t = offset / self.length if self.length else 0.0
        return (
            self.start[0] + t * (self.end[0] - self.start[0]),
            self.start[1] + t * (self.end[1] - self.start[1]),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "room_id": self.room_id,
            "corners": [list(c) for c in self.corners],
            "start": list(self.start),
            "end": list(self.end),
            "y_min": self.y_min,
            "height": self.height,
            "thickness": self.thickness,
            "material": self.material,
            "color": None if self.color is None else list(self.color),
            "empty": self.empty,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Wall:
        color = data.get("color")
        return cls(
            id=data["id"],
            room_id=data["room_id"],
            corners=tuple(vec3(c) for c in data["corners"]),
            start=_xz(data["start"]),
            end=_xz(data["end"]),
            y_min=float(data["y_min"]),
            height=float(data["height"]),
            thickness=float(data.get("thickness", 0.0)),
            material=data.get("material"),
            color=None if color is None else vec3(color),
            empty=bool(data.get("empty", False)),
        )


@dataclass(frozen=True)
class Opening:
    """A door or window: the hole it cuts, ``offset_range`` metres along its walls from the
    start of ``wall_ids[0]`` and ``y_range`` metres above the floor."""

    id: str
    kind: str
    asset_id: str
    wall_ids: tuple[str, str]
    room_ids: tuple[str, str]
    offset_range: tuple[float, float]
    y_range: tuple[float, float]
    openness: float | None = None
    openable: bool | None = None

    @property
    def width(self) -> float:
        return self.offset_range[1] - self.offset_range[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "asset_id": self.asset_id,
            "wall_ids": list(self.wall_ids),
            "room_ids": list(self.room_ids),
            "offset_range": list(self.offset_range),
            "y_range": list(self.y_range),
            "openness": self.openness,
            "openable": self.openable,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Opening:
        w0, w1 = data["wall_ids"]
        r0, r1 = data["room_ids"]
        return cls(
            id=data["id"],
            kind=data["kind"],
            asset_id=data["asset_id"],
            wall_ids=(w0, w1),
            room_ids=(r0, r1),
            offset_range=_pair(data["offset_range"]),
            y_range=_pair(data["y_range"]),
            openness=data.get("openness"),
            openable=data.get("openable"),
        )


OWN_DOOR = "door"
"""The key of an object's own door (a fridge's) in ``open_elements``: no sub-receptacle has it."""


@dataclass(frozen=True)
class HouseObject:
    """An object of the house, top-level (``parent_id`` None) or a flattened child of one."""

    id: str
    asset_id: str
    object_type: str
    position: Vec3
    rotation: Vec3
    kinematic: bool = False
    parent_id: str | None = None
    openness: float | None = None
    # openness (0..1] of what is open and drawn open, by element: the object's sub-receptacles
    # (a dresser's ``Drawer_2``) and, under OWN_DOOR, its own door (a fridge's) when opened to
    # be seen; ``openness`` alone (a door placement opened to put something in) is drawn shut
    open_elements: tuple[tuple[str, float], ...] = ()

    def element_openness(self, element: str | None) -> float:
        """How far ``element`` (None: the object's own door) is open, 0 when shut."""
        if element is None:
            return float(self.openness or 0.0)
        return dict(self.open_elements).get(element, 0.0)

    def drawn_openness(self, element: str | None) -> float:
        """How far ``element`` (None: the object's own door) is drawn open, 0 when shut."""
        return dict(self.open_elements).get(OWN_DOOR if element is None else element, 0.0)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "asset_id": self.asset_id,
            "object_type": self.object_type,
            "position": list(self.position),
            "rotation": list(self.rotation),
            "kinematic": self.kinematic,
            "parent_id": self.parent_id,
            "openness": self.openness,
        }
        if self.open_elements:
            out["open_elements"] = dict(self.open_elements)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HouseObject:
        return cls(
            id=data["id"],
            asset_id=data["asset_id"],
            object_type=data["object_type"],
            position=vec3(data["position"]),
            rotation=vec3(data["rotation"]),
            kinematic=bool(data.get("kinematic", False)),
            parent_id=data.get("parent_id"),
            openness=data.get("openness"),
            open_elements=tuple(sorted(dict(data.get("open_elements") or {}).items())),
        )


@dataclass(frozen=True)
class House:
    """A loaded house. ``objects`` is flattened depth-first in file order (a parent, then its
    children); ``raw`` is the JSON as read, written back unchanged by :meth:`to_json_dict`."""

    name: str
    rooms: tuple[Room, ...]
    walls: tuple[Wall, ...]
    doors: tuple[Opening, ...]
    windows: tuple[Opening, ...]
    objects: tuple[HouseObject, ...]
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def openings(self) -> tuple[Opening, ...]:
        return self.doors + self.windows

    @property
    def metadata(self) -> dict[str, Any]:
        return copy.deepcopy(self.raw.get("metadata", {}))

    @cached_property
    def floor_area(self) -> float:
        """The rooms' floor area in m^2 (their plan-view polygons; rooms do not overlap)."""
        import shapely

        polygons = [shapely.make_valid(shapely.Polygon(r.polygon_xz)) for r in self.rooms]
        return float(sum(shapely.area(polygons))) if polygons else 0.0

    @cached_property
    def _index(self) -> dict[str, dict[str, Any]]:
        return {
            "room": {r.id: r for r in self.rooms},
            "wall": {w.id: w for w in self.walls},
            "opening": {o.id: o for o in self.openings},
            "object": {o.id: o for o in self.objects},
        }

    def room(self, room_id: str) -> Room:
        return self._lookup("room", room_id)

    def wall(self, wall_id: str) -> Wall:
        return self._lookup("wall", wall_id)

    def opening(self, opening_id: str) -> Opening:
        return self._lookup("opening", opening_id)

    def object(self, object_id: str) -> HouseObject:
        return self._lookup("object", object_id)

    def top_level_objects(self) -> tuple[HouseObject, ...]:
        return tuple(o for o in self.objects if o.parent_id is None)

    def children(self, object_id: str) -> tuple[HouseObject, ...]:
        """The objects directly in or on ``object_id``."""
        self.object(object_id)
        return tuple(o for o in self.objects if o.parent_id == object_id)

    def opening_segment(self, opening: Opening) -> tuple[XZ, XZ]:
        """The plan-view ends of an opening's hole, on its first wall."""
        wall = self.wall(opening.wall_ids[0])
        return wall.point_at(opening.offset_range[0]), wall.point_at(opening.offset_range[1])

    def wall_holes(
        self, wall: Wall, skip: frozenset[str] = frozenset()
    ) -> list[tuple[float, float, float, float]]:
        """Door and window holes of ``wall`` as (s0, s1, h0, h1): metres along this side from
        its start (s0 <= s1; the hole's ends are projected onto this side, so either side of a
        wall works) and the hole's bottom and top above the floor; openings in ``skip`` (ids)
        are left out."""
        start = np.asarray(wall.start, dtype=np.float64)
        direction = np.asarray(wall.end, dtype=np.float64) - start
        direction /= float(np.linalg.norm(direction))
        holes = []
        for op in self.openings:
            if wall.id not in op.wall_ids or op.id in skip:
                continue
            a, b = (np.asarray(p, dtype=np.float64) for p in self.opening_segment(op))
            s = sorted(float(np.dot(p - start, direction)) for p in (a, b))
            holes.append((s[0], s[1], float(op.y_range[0]), float(op.y_range[1])))
        return holes

    def to_json_dict(self) -> dict[str, Any]:
        """The house JSON as loaded (a deep copy)."""
        return copy.deepcopy(self.raw)

    def _lookup(self, kind: str, key: str) -> Any:
        try:
            return self._index[kind][key]
        except KeyError:
            raise UsageError(f"house {self.name!r} has no {kind} {key!r}") from None


def load_house(
    source: Path | str | Mapping[str, Any],
    *,
    name: str | None = None,
    catalogue: AssetCatalogue | None = None,
) -> House:
    """Load a ProcTHOR house from a JSON file or an already parsed dict.

    Object types come from ``catalogue`` (default: :func:`~dataforge.world.assets.load_catalogue`);
    an asset id it lacks is a malformed house.
    """
    if catalogue is None:
        from dataforge.world.assets import load_catalogue

        catalogue = load_catalogue()
    if isinstance(source, Mapping):
        label = name or "house"
        raw = copy.deepcopy(dict(source))
    else:
        path = Path(source)
        label = str(path)
        raw = read_json(path, WHAT)
        name = name or path.stem
    return _Parser(label, catalogue).house(raw, name or label)


def overlapping_rooms(rooms: Sequence[Room]) -> tuple[Room, Room, float] | None:
    """The first pair of ``rooms`` (in order) whose floor polygons (plan view) share more than
    ``ROOM_OVERLAP_M2`` of area, with that area; None when no two do. Rooms that only touch
    (a shared wall or corner) do not overlap."""
    import shapely

    polygons = [shapely.make_valid(shapely.Polygon(r.polygon_xz)) for r in rooms]
    for i in range(len(polygons) - 1):
        areas = shapely.area(shapely.intersection(polygons[i], polygons[i + 1 :]))
        for k, area in enumerate(areas):
            if area > ROOM_OVERLAP_M2:
                return rooms[i], rooms[i + 1 + k], float(area)
    return None


class _Parser:
    """Reads a house dict field by field; every failure names the source and the field path."""

    def __init__(self, source: str, catalogue: AssetCatalogue) -> None:
        self.source = source
        self.catalogue = catalogue

    def fail(self, path: str, problem: str) -> MalformedInputError:
        where = f"{path}: " if path else ""
        return MalformedInputError(f"{self.source}: {where}{problem}")

    # -- generic fields -------------------------------------------------------------------------

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected an object, got {_kind(value)}")
        return value

    def get(self, data: Mapping[str, Any], key: str, path: str) -> Any:
        if key not in data:
            raise self.fail(path, f"missing {key!r}")
        return data[key]

    def items(
        self, data: Mapping[str, Any], key: str, path: str, *, required: bool = True
    ) -> list[Any]:
        if not required and key not in data:
            return []
        value = self.get(data, key, path)
        if not isinstance(value, list):
            raise self.fail(_join(path, key), f"expected a list, got {_kind(value)}")
        return value

    def text(self, data: Mapping[str, Any], key: str, path: str) -> str:
        value = self.get(data, key, path)
        if not isinstance(value, str):
            raise self.fail(_join(path, key), f"expected a string, got {_kind(value)}")
        return value

    def number(self, data: Mapping[str, Any], key: str, path: str) -> float:
        value = self.get(data, key, path)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(_join(path, key), f"expected a number, got {_kind(value)}")
        if not math.isfinite(value):
            raise self.fail(_join(path, key), f"expected a finite number, got {value}")
        return float(value)

    def optional_number(self, data: Mapping[str, Any], key: str, path: str) -> float | None:
        return None if data.get(key) is None else self.number(data, key, path)

    def flag(self, data: Mapping[str, Any], key: str, path: str) -> bool | None:
        value = data.get(key)
        if value is not None and not isinstance(value, bool):
            raise self.fail(_join(path, key), f"expected true or false, got {_kind(value)}")
        return value

    def point(self, value: Any, path: str, axes: str = "xyz") -> tuple[float, ...]:
        data = self.mapping(value, path)
        return tuple(self.number(data, a, path) for a in axes)

    def coordinates(self, value: Any, path: str, axes: str = "xyz") -> tuple[float, ...]:
        """A point in metres, each coordinate within +-``MAX_COORDINATE_M``."""
        point = self.point(value, path, axes)
        for axis, v in zip(axes, point, strict=True):
            if abs(v) > MAX_COORDINATE_M:
                raise self.fail(
                    _join(path, axis),
                    f"coordinate {v:g} m is out of range (at most {MAX_COORDINATE_M:g} m from "
                    "the origin)",
                )
        return point

    def vec3(self, data: Mapping[str, Any], key: str, path: str) -> Vec3:
        x, y, z = self.point(self.get(data, key, path), _join(path, key))
        return (x, y, z)

    def position(self, data: Mapping[str, Any], key: str, path: str) -> Vec3:
        x, y, z = self.coordinates(self.get(data, key, path), _join(path, key))
        return (x, y, z)

    # -- records --------------------------------------------------------------------------------

    def house(self, raw: Any, name: str) -> House:
        data = self.mapping(raw, "")
        rooms = tuple(
            self.room(r, f"rooms[{k}]") for k, r in enumerate(self.items(data, "rooms", ""))
        )
        walls = tuple(
            self.wall(w, f"walls[{k}]") for k, w in enumerate(self.items(data, "walls", ""))
        )
        self.unique([r.id for r in rooms], "rooms")
        self.unique([w.id for w in walls], "walls")
        overlap = overlapping_rooms(rooms)
        if overlap is not None:
            a, b, area = overlap
            raise self.fail(
                "rooms", f"rooms {a.id!r} and {b.id!r} overlap ({area:.4g} m^2 of shared floor)"
            )
        room_ids = {r.id for r in rooms}
        wall_ids = {w.id for w in walls}
        openings: dict[str, tuple[Opening, ...]] = {}
        for section, kind in (("doors", "door"), ("windows", "window")):
            entries = self.items(data, section, "", required=False)
            openings[section] = tuple(
                self.opening(o, f"{section}[{k}]", kind, room_ids, wall_ids)
                for k, o in enumerate(entries)
            )
        self.unique([o.id for o in openings["doors"] + openings["windows"]], "doors/windows")
        objects: list[HouseObject] = []
        for k, entry in enumerate(self.items(data, "objects", "", required=False)):
            objects.extend(self.objects(entry, f"objects[{k}]", None))
        self.unique([o.id for o in objects], "objects")
        return House(
            name=name,
            rooms=rooms,
            walls=walls,
            doors=openings["doors"],
            windows=openings["windows"],
            objects=tuple(objects),
            raw=data,
        )

    def unique(self, ids: list[str], section: str) -> None:
        seen: set[str] = set()
        for i in ids:
            if i in seen:
                raise self.fail(section, f"duplicate id {i!r}")
            seen.add(i)

    def room(self, value: Any, path: str) -> Room:
        data = self.mapping(value, path)
        corners = self.items(data, "floorPolygon", path)
        where = _join(path, "floorPolygon")
        if len(corners) < 3:
            raise self.fail(where, f"expected at least 3 corners, got {len(corners)}")
        points = [self.coordinates(c, f"{where}[{k}]") for k, c in enumerate(corners)]
        return Room(
            id=self.text(data, "id", path),
            room_type=self.text(data, "roomType", path),
            floor_polygon=tuple((p[0], p[2]) for p in points),
            floor_y=min(p[1] for p in points),
        )

    def wall(self, value: Any, path: str) -> Wall:
        data = self.mapping(value, path)
        corners_raw = self.items(data, "polygon", path)
        where = _join(path, "polygon")
        corners = [self.coordinates(c, f"{where}[{k}]") for k, c in enumerate(corners_raw)]
        if len(corners) < 3:
            raise self.fail(where, f"expected 4 corners, got {len(corners)}")
        y_min = min(c[1] for c in corners)
        y_max = max(c[1] for c in corners)
        ends = list(dict.fromkeys((c[0], c[2]) for c in corners))
        if len(ends) != 2 or y_max <= y_min:
            raise self.fail(where, "expected a vertical rectangle (2 ends, each at 2 heights)")
        return Wall(
            id=self.text(data, "id", path),
            room_id=self.text(data, "roomId", path),
            corners=tuple((c[0], c[1], c[2]) for c in corners),
            start=ends[0],
            end=ends[1],
            y_min=y_min,
            height=y_max - y_min,
            material=self.material(data, path),
            color=self.color(data, path),
            empty=bool(self.flag(data, "empty", path)),
        )

    def material(self, data: Mapping[str, Any], path: str) -> str | None:
        value = data.get("material")
        if value is None or isinstance(value, str):
            return value
        material = self.mapping(value, _join(path, "material"))
        return None if "name" not in material else self.text(material, "name", path + ".material")

    def color(self, data: Mapping[str, Any], path: str) -> RGB | None:
        if data.get("color") is not None:
            r, g, b = self.point(data["color"], _join(path, "color"), "rgb")
            return (r, g, b)
        material = data.get("material")
        if isinstance(material, dict) and material.get("color") is not None:
            r, g, b = self.point(material["color"], _join(path, "material.color"), "rgb")
            return (r, g, b)
        return None

    def opening(
        self, value: Any, path: str, kind: str, room_ids: set[str], wall_ids: set[str]
    ) -> Opening:
        data = self.mapping(value, path)
        walls = (self.text(data, "wall0", path), self.text(data, "wall1", path))
        rooms = (self.text(data, "room0", path), self.text(data, "room1", path))
        for key, wid in zip(("wall0", "wall1"), walls, strict=True):
            if wid not in wall_ids:
                raise self.fail(_join(path, key), f"unknown wall {wid!r}")
        for key, rid in zip(("room0", "room1"), rooms, strict=True):
            if rid not in room_ids:
                raise self.fail(_join(path, key), f"unknown room {rid!r}")
        if "holePolygon" in data:
            where = _join(path, "holePolygon")
            corners = self.items(data, "holePolygon", path)
            if len(corners) < 2:
                raise self.fail(where, f"expected 2 corners, got {len(corners)}")
            points = [self.coordinates(c, f"{where}[{k}]", "xy") for k, c in enumerate(corners)]
        elif "boundingBox" in data:
            where = _join(path, "boundingBox")
            box = self.mapping(data["boundingBox"], where)
            points = [
                self.coordinates(self.get(box, key, where), _join(where, key), "xy")
                for key in ("min", "max")
            ]
        else:
            raise self.fail(path, "missing 'holePolygon' or 'boundingBox'")
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        asset_id = self.text(data, "assetId", path)
        self.known_asset(asset_id, path)
        return Opening(
            id=self.text(data, "id", path),
            kind=kind,
            asset_id=asset_id,
            wall_ids=walls,
            room_ids=rooms,
            offset_range=(min(xs), max(xs)),
            y_range=(min(ys), max(ys)),
            openness=self.optional_number(data, "openness", path),
            openable=self.flag(data, "openable", path),
        )

    def objects(self, value: Any, path: str, parent_id: str | None) -> Iterator[HouseObject]:
        data = self.mapping(value, path)
        asset_id = self.text(data, "assetId", path)
        object_type = self.known_asset(asset_id, path)
        obj = HouseObject(
            id=self.text(data, "id", path),
            asset_id=asset_id,
            object_type=object_type,
            position=self.position(data, "position", path),
            rotation=self.vec3(data, "rotation", path),
            kinematic=bool(self.flag(data, "kinematic", path)),
            parent_id=parent_id,
            openness=self.optional_number(data, "openness", path),
            open_elements=self.open_elements(data, path),
        )
        yield obj
        for k, child in enumerate(self.items(data, "children", path, required=False)):
            yield from self.objects(child, f"{path}.children[{k}]", obj.id)

    def open_elements(self, data: Mapping[str, Any], path: str) -> tuple[tuple[str, float], ...]:
        """``openElements``: {element: openness in (0, 1]} of an object's open sub-receptacles
        (dataforge's own key; ProcTHOR's houses have none)."""
        value = data.get("openElements")
        if value is None:
            return ()
        items = self.mapping(value, f"{path}.openElements")
        out = []
        for name, openness in sorted(items.items()):
            where = f"{path}.openElements.{name}"
            if isinstance(openness, bool) or not isinstance(openness, (int, float)):
                raise self.fail(where, "must be a number")
            if not 0.0 < float(openness) <= 1.0:
                raise self.fail(where, f"must lie in (0, 1], got {openness}")
            out.append((str(name), float(openness)))
        return tuple(out)

    def known_asset(self, asset_id: str, path: str) -> str:
        if asset_id not in self.catalogue:
            raise self.fail(
                _join(path, "assetId"),
                f"unknown asset {asset_id!r} (not in ProcTHOR's asset database)",
            )
        return self.catalogue.asset(asset_id).object_type


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _xz(values: Any) -> XZ:
    x, z = values
    return (float(x), float(z))


def _pair(values: Any) -> tuple[float, float]:
    lo, hi = values
    return (float(lo), float(hi))
