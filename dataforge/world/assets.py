"""ProcTHOR's asset catalogue: sizes and interaction properties of every asset a house can name.

The catalogue reads the databases shipped inside the ``procthor`` wheel (found with
``importlib.resources``; ``procthor.databases`` itself is never imported because it imports
ai2thor):

* ``asset-database.json``: ``{objectType: [asset, ...]}``; an asset has ``assetId``,
  ``boundingBox`` (full sizes in metres along the asset's own x/y/z axes at rotation 0),
  ``primaryProperty`` (``CanPickup`` / ``Moveable`` / ``Static``), ``secondaryProperties``
  (``Receptacle``, ``CanOpen``, ``CanToggleOnOff``, ...) and ``states`` (``open``: the bounding box
  when open) and ``materials`` (``[category, material name]`` pairs, e.g. ``["Metal",
  "Fridge_Metal_Mat"]``; read into ``AssetInfo.materials``, colours come from
  :mod:`dataforge.world.materials`). The 20 ``Doorframe`` assets carry only id, type, box and
  split: no properties, no materials.
* ``wall-holes.json``: the cut-out each ``Doorway_*`` / ``Window_*`` asset makes in its wall.
* ``receptacles.json``: ``{receptacleType: {objectType: {count, p}}}``, how often an object type
  was found on a receptacle type.
* ``placement-annotations.json``: per type, column-wise (``onFloor``, ``onWall``, ...).

Every door, window and object asset of the example houses is in ``asset-database.json`` (doors
and windows included: types ``Doorway``, ``Doorframe``, ``Window``); nothing is guessed.
"""

from __future__ import annotations

import difflib
import functools
import importlib.metadata
import importlib.util
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

from dataforge.errors import MalformedInputError, MissingDependencyError, UsageError
from dataforge.world.vectors import Vec3, vec3

ASSET_DATABASE = "asset-database.json"
WALL_HOLES = "wall-holes.json"
RECEPTACLES = "receptacles.json"
PLACEMENT = "placement-annotations.json"


@dataclass(frozen=True)
class WallHole:
    """The hole a door or window asset cuts in its wall, in the asset's frame (metres).

    ``lo``/``hi``: corners of the hole (x along the wall, y up, z across the wall); ``offset``: the
    asset's offset from the hole, which ProcTHOR writes into houses as ``assetOffset``.
    """

    lo: Vec3
    hi: Vec3
    offset: Vec3

    def to_dict(self) -> dict[str, Any]:
        return {"lo": list(self.lo), "hi": list(self.hi), "offset": list(self.offset)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WallHole:
        return cls(vec3(data["lo"]), vec3(data["hi"]), vec3(data["offset"]))


@dataclass(frozen=True)
class AssetInfo:
    """One asset: its type, size (metres, asset frame at rotation 0) and properties."""

    asset_id: str
    object_type: str
    size: Vec3
    pickupable: bool
    moveable: bool
    receptacle: bool
    openable: bool
    toggleable: bool
    primary_property: str | None = None
    secondary_properties: tuple[str, ...] = ()
    open_size: Vec3 | None = None
    split: str | None = None
    hole: WallHole | None = None
    materials: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "asset_id": self.asset_id,
            "object_type": self.object_type,
            "size": list(self.size),
            "pickupable": self.pickupable,
            "moveable": self.moveable,
            "receptacle": self.receptacle,
            "openable": self.openable,
            "toggleable": self.toggleable,
            "primary_property": self.primary_property,
            "secondary_properties": list(self.secondary_properties),
            "open_size": None if self.open_size is None else list(self.open_size),
            "split": self.split,
            "hole": None if self.hole is None else self.hole.to_dict(),
            "materials": [list(pair) for pair in self.materials],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AssetInfo:
        return cls(
            asset_id=data["asset_id"],
            object_type=data["object_type"],
            size=vec3(data["size"]),
            pickupable=bool(data["pickupable"]),
            moveable=bool(data["moveable"]),
            receptacle=bool(data["receptacle"]),
            openable=bool(data["openable"]),
            toggleable=bool(data["toggleable"]),
            primary_property=data.get("primary_property"),
            secondary_properties=tuple(data.get("secondary_properties", ())),
            open_size=None if data.get("open_size") is None else vec3(data["open_size"]),
            split=data.get("split"),
            hole=None if data.get("hole") is None else WallHole.from_dict(data["hole"]),
            materials=tuple((str(c), str(n)) for c, n in data.get("materials", ())),
        )


@dataclass(frozen=True)
class TypeInfo:
    """One object type. A flag is true when any asset of the type has the property (a type's
    assets disagree now and then: 3 of 14 ShelvingUnit assets are receptacles, 30 of 32 pillows
    can be picked up). ``on_floor``/``on_wall``: ProcTHOR's placement annotations, None when the
    type is not annotated."""

    object_type: str
    asset_ids: tuple[str, ...]
    pickupable: bool
    moveable: bool
    receptacle: bool
    openable: bool
    toggleable: bool
    on_floor: bool | None = None
    on_wall: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "object_type": self.object_type,
            "asset_ids": list(self.asset_ids),
            "pickupable": self.pickupable,
            "moveable": self.moveable,
            "receptacle": self.receptacle,
            "openable": self.openable,
            "toggleable": self.toggleable,
            "on_floor": self.on_floor,
            "on_wall": self.on_wall,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TypeInfo:
        flags = ("pickupable", "moveable", "receptacle", "openable", "toggleable")
        return cls(
            object_type=data["object_type"],
            asset_ids=tuple(data["asset_ids"]),
            **{k: bool(data[k]) for k in flags},
            on_floor=data.get("on_floor"),
            on_wall=data.get("on_wall"),
        )


class AssetCatalogue:
    """Look-ups over ProcTHOR's asset databases (see the module docstring)."""

    def __init__(
        self,
        assets: Mapping[str, AssetInfo],
        types: Mapping[str, TypeInfo],
        receptacles: Mapping[str, Mapping[str, float]],
        version: str = "unknown",
    ) -> None:
        self._assets = dict(assets)
        self._types = dict(sorted(types.items()))
        self._receptacles = {k: dict(sorted(v.items())) for k, v in sorted(receptacles.items())}
        self.version = version

    def __len__(self) -> int:
        return len(self._assets)

    def __contains__(self, asset_id: object) -> bool:
        return asset_id in self._assets

    def asset_ids(self) -> tuple[str, ...]:
        return tuple(sorted(self._assets))

    def asset(self, asset_id: str) -> AssetInfo:
        """The asset named ``asset_id``; a :class:`UsageError` naming it when there is none."""
        try:
            return self._assets[asset_id]
        except KeyError:
            close = difflib.get_close_matches(str(asset_id), self._assets, n=3)
            hint = f" (close: {', '.join(close)})" if close else ""
            raise UsageError(
                f"unknown ProcTHOR asset {asset_id!r}: not in {ASSET_DATABASE}{hint}"
            ) from None

    def types(self) -> tuple[str, ...]:
        """Every object type, sorted."""
        return tuple(self._types)

    def type_info(self, object_type: str) -> TypeInfo:
        try:
            return self._types[object_type]
        except KeyError:
            raise UsageError(f"unknown ProcTHOR object type {object_type!r}") from None

    def assets_of(self, object_type: str) -> tuple[AssetInfo, ...]:
        return tuple(self._assets[a] for a in self.type_info(object_type).asset_ids)

    def receptacle_types(self) -> tuple[str, ...]:
        """The receptacle types ``receptacles.json`` has co-occurrence statistics for."""
        return tuple(self._receptacles)

    def receptacle_pairs(self, receptacle_type: str) -> dict[str, float]:
        """``{object type: p}``: how likely each object type is on ``receptacle_type``; empty for a
        known type without statistics."""
        if receptacle_type in self._receptacles:
            return dict(self._receptacles[receptacle_type])
        self.type_info(receptacle_type)
        return {}

    @classmethod
    def from_directory(cls, directory: Traversable, version: str = "unknown") -> AssetCatalogue:
        """Read the databases from ``directory`` (a path or an ``importlib.resources`` node)."""
        assets = _read_assets(directory)
        placement = _read_json(directory, PLACEMENT)
        types = _build_types(assets, placement)
        raw_receptacles = _read_json(directory, RECEPTACLES)
        receptacles: dict[str, dict[str, float]] = {}
        for rtype, pairs in _mapping(raw_receptacles, RECEPTACLES, "").items():
            where = f"{rtype}"
            receptacles[rtype] = {
                otype: _number(_mapping(entry, RECEPTACLES, f"{where}.{otype}"), "p", where)
                for otype, entry in _mapping(pairs, RECEPTACLES, where).items()
            }
        return cls(assets, types, receptacles, version)


@functools.lru_cache(maxsize=1)
def load_catalogue() -> AssetCatalogue:
    """The catalogue of the installed ``procthor`` wheel (read once per process)."""
    return AssetCatalogue.from_directory(_databases_dir(), _procthor_version())


def _find_procthor() -> Any:
    return importlib.util.find_spec("procthor")


def _databases_dir() -> Traversable:
    if _find_procthor() is None:
        raise MissingDependencyError(
            "the ProcTHOR asset databases need the package 'procthor' (a dataforge dependency): "
            "pip install procthor==0.0.1.dev2"
        )
    return files("procthor") / "databases"


def _procthor_version() -> str:
    try:
        return importlib.metadata.version("procthor")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _read_json(directory: Traversable, name: str) -> Any:
    node = directory / name
    if not node.is_file():
        raise MalformedInputError(f"{name}: missing from the ProcTHOR databases ({directory})")
    try:
        return json.loads(node.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedInputError(f"{name}: not valid JSON ({exc})") from None


def _read_assets(directory: Traversable) -> dict[str, AssetInfo]:
    data = _mapping(_read_json(directory, ASSET_DATABASE), ASSET_DATABASE, "")
    holes_raw = _mapping(_read_json(directory, WALL_HOLES), WALL_HOLES, "")
    holes = {
        aid: WallHole(
            _vec3(h, "min", f"{aid}", WALL_HOLES),
            _vec3(h, "max", f"{aid}", WALL_HOLES),
            _vec3(h, "offset", f"{aid}", WALL_HOLES),
        )
        for aid, h in holes_raw.items()
    }
    out: dict[str, AssetInfo] = {}
    for otype, entries in data.items():
        if not isinstance(entries, list):
            raise MalformedInputError(f"{ASSET_DATABASE}: {otype}: expected a list of assets")
        for k, entry in enumerate(entries):
            where = f"{otype}[{k}]"
            item = _mapping(entry, ASSET_DATABASE, where)
            info = _asset_info(item, otype, where, holes)
            if info.asset_id in out:
                raise MalformedInputError(f"{ASSET_DATABASE}: {where}: duplicate {info.asset_id!r}")
            out[info.asset_id] = info
    return out


def _asset_info(
    item: Mapping[str, Any], otype: str, where: str, holes: Mapping[str, WallHole]
) -> AssetInfo:
    if not isinstance(item.get("assetId"), str):
        raise MalformedInputError(f"{ASSET_DATABASE}: {where}: missing 'assetId'")
    aid = item["assetId"]
    primary = item.get("primaryProperty")
    secondary = tuple(item.get("secondaryProperties") or ())
    states = item.get("states") or {}
    open_state = states.get("open") if isinstance(states, dict) else None
    open_size = (
        _vec3(open_state, "boundingBox", f"{where}.states.open", ASSET_DATABASE)
        if isinstance(open_state, dict)
        else None
    )
    return AssetInfo(
        asset_id=aid,
        object_type=str(item.get("objectType", otype)),
        size=_vec3(item, "boundingBox", where, ASSET_DATABASE),
        pickupable=primary == "CanPickup",
        moveable=primary == "Moveable",
        receptacle="Receptacle" in secondary,
        openable="CanOpen" in secondary or "open" in states,
        toggleable="CanToggleOnOff" in secondary,
        primary_property=primary,
        secondary_properties=secondary,
        open_size=open_size,
        split=item.get("split"),
        hole=holes.get(aid),
        materials=_materials(item, where, aid),
    )


def _materials(item: Mapping[str, Any], where: str, aid: str) -> tuple[tuple[str, str], ...]:
    raw = item.get("materials")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in raw
    ):
        raise MalformedInputError(
            f"{ASSET_DATABASE}: {where} ({aid}): 'materials' is not a list of "
            "[category, material name] pairs"
        )
    return tuple((c, n) for c, n in raw)


def _build_types(assets: Mapping[str, AssetInfo], placement: Any) -> dict[str, TypeInfo]:
    columns = _mapping(placement, PLACEMENT, "")
    on_floor = columns.get("onFloor") or {}
    on_wall = columns.get("onWall") or {}
    by_type: dict[str, list[AssetInfo]] = {}
    for info in assets.values():
        by_type.setdefault(info.object_type, []).append(info)
    types: dict[str, TypeInfo] = {}
    for otype, infos in sorted(by_type.items()):
        infos.sort(key=lambda a: a.asset_id)
        types[otype] = TypeInfo(
            object_type=otype,
            asset_ids=tuple(a.asset_id for a in infos),
            pickupable=any(a.pickupable for a in infos),
            moveable=any(a.moveable for a in infos),
            receptacle=any(a.receptacle for a in infos),
            openable=any(a.openable for a in infos),
            toggleable=any(a.toggleable for a in infos),
            on_floor=_flag(on_floor.get(otype)),
            on_wall=_flag(on_wall.get(otype)),
        )
    return types


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _mapping(value: Any, name: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        at = f"{where}: " if where else ""
        raise MalformedInputError(f"{name}: {at}expected an object, got {type(value).__name__}")
    return value


def _number(data: Mapping[str, Any], key: str, where: str) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedInputError(f"{RECEPTACLES}: {where}: {key!r} is not a number")
    return float(value)


def _vec3(data: Mapping[str, Any], key: str, where: str, name: str) -> Vec3:
    box = data.get(key)
    if not isinstance(box, dict) or not all(
        isinstance(box.get(a), int | float) and not isinstance(box.get(a), bool) for a in "xyz"
    ):
        raise MalformedInputError(f"{name}: {where}.{key}: expected an {{x, y, z}} of numbers")
    return (float(box["x"]), float(box["y"]), float(box["z"]))
