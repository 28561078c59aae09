"""A strict stand-in for the part of ``habitat_sim`` (0.3.3) and ``magnum`` that ``HabitatWorld``
calls.

Builds on :mod:`fake_habitat_sim` (its ``PathFinder`` and ``ShortestPath``) with the simulator
surface of ``docs/habitat_world.md`` §2-7 that :mod:`dataforge.simulators.habitat` uses. Same
rules as that module: only these names exist (any other attribute of the module, its ``agent`` /
``nav`` / ``geo`` / ``physics`` submodules, the ``magnum`` stand-in or a bound object raises
``AttributeError``) and arguments are checked as pybind11 converts them (``TypeError``):

* ``SimulatorConfiguration()`` (``scene_id``, ``scene_dataset_config_file``: str;
  ``enable_physics``, ``load_semantic_mesh``: bool; ``gpu_device_id``, ``random_seed``: int);
* ``CameraSensorSpec()`` (``uuid``: str, ``sensor_type``: :class:`SensorType`,
  ``sensor_subtype``: :class:`SensorSubType`, ``resolution``: [H, W] ints, ``hfov``: degrees,
  ``position`` / ``orientation``: 3-vectors, ``near`` / ``far``); ``SensorType.{COLOR, DEPTH,
  SEMANTIC}``, ``SensorSubType.PINHOLE``;
* ``agent.AgentConfiguration(height=1.5, radius=0.1, sensor_specifications=[], action_space=
  None, body_type="cylinder")`` and ``agent.AgentState(position, rotation)`` (Python classes
  upstream: keyword arguments only as listed); ``Configuration(sim_cfg, agents)``;
* ``nav.NavMeshSettings()`` with the §2 fields and ``set_defaults()``;
* ``geo.Ray(origin: Vector3, direction: Vector3)`` (``origin``, ``direction``);
  ``physics.MotionType.{UNDEFINED, STATIC, KINEMATIC, DYNAMIC}``; ``stage_id = 0``;
* ``Simulator(cfg)``: ``config``, ``reconfigure(cfg)``, ``close(destroy=True)``, ``pathfinder``,
  ``recompute_navmesh(pathfinder, navmesh_settings) -> bool``, ``get_agent(0)`` with
  ``set_state(state, reset_sensors=True)`` (``state.rotation`` a unit [x, y, z, w] ndarray or
  list: the coefficient order ``quat_from_coeffs`` reads; numpy-quaternion is not installed
  here), ``get_sensor_observations()``, ``semantic_scene.regions``, ``cast_ray(ray,
  max_distance=100.0, buffer_distance=0.08)`` (``RaycastResults``: ``hits`` sorted by
  ``ray_distance``, ``has_hits()``; a ``RayHitInfo`` has ``object_id``, ``point``, ``normal``,
  ``ray_distance`` in units of the direction's length), ``perform_discrete_collision_detection()``,
  ``get_physics_contact_points()`` (``ContactPointData``: ``object_id_a`` / ``object_id_b``,
  ``link_id_a`` / ``link_id_b`` (-1), ``contact_distance``), ``get_object_template_manager()``
  and ``get_rigid_object_manager()``;
* template manager: ``load_configs(path, save_as_defaults=False) -> [ids]`` (every
  ``*.object_config.json`` of a folder, or one such file; ``[]`` when there is none),
  ``get_template_handles(search_str="", contains=True, sorted=True)``,
  ``get_library_has_handle(handle)``; a template's handle is its config file's path;
* rigid object manager: ``get_object_handles(search_str="", contains=True)``,
  ``get_object_by_handle``, ``remove_object_by_handle(handle, delete_object_node=True,
  delete_visual_node=True)``, ``add_object_by_template_handle(object_lib_handle,
  attachment_node=None, light_setup_key="")`` (None for an unknown handle; the new handle is
  ``<template shortname>_:<NNNN>``, one more than the highest count in use, and the object id is
  the last one freed, else the next, from 1: habitat-sim's ``allocateObjectID``; a new object is
  DYNAMIC at the origin);
* a rigid object: ``handle``, ``object_id``, ``semantic_id``, ``translation`` (the COM, a
  ``magnum.Vector3``; set only from a ``Vector3``), ``rotation`` (``magnum.Quaternion``),
  ``transformation`` (``magnum.Matrix4``, set only from one), ``aabb`` /
  ``collision_shape_aabb`` (local ``magnum.Range3D``), ``motion_type`` (a ``MotionType``),
  ``user_attributes`` (``get_subconfig_keys(sorted=False)``, ``get_subconfig(name)``,
  ``get(key)`` (None when absent; 3-number lists read as ``Vector3``), ``has_value(key)``),
  ``creation_attributes`` (``handle``, ``file_directory``) and ``visual_scene_nodes`` (two nodes;
  ``absolute_transformation()`` of either is the object's transformation: no COM shift here);
* a region: ``id``, ``category.name()``, ``poly_loop_points`` (``magnum.Vector2`` x, z),
  ``floor_height``, ``extrusion_height``;
* ``PathFinder`` adds ``get_island(pt) -> int`` (-1 off the navmesh), ``num_islands`` and
  ``island_area(island_index=-1)`` (-1: all islands) to :class:`fake_habitat_sim.PathFinder`
  (after ``recompute_navmesh`` or ``load_nav_mesh``).

:func:`magnum` gives the ``magnum`` stand-in: ``Vector3(x, y, z)`` (numbers only; it is
:class:`fake_habitat_sim.Vector3`'s subclass: indexes and converts with ``np.asarray``, no
arithmetic), ``Rad(angle)``, ``Quaternion()`` / ``Quaternion(vector, scalar)`` /
``Quaternion.rotation(angle: Rad, normalized_axis: Vector3)`` (``vector``, ``scalar``), and the
types of returned values ``Vector2``, ``Vector4``, ``Matrix4`` (``m[i]`` is column ``i``, a
``Vector4``; ``transform_point(Vector3)``) and ``Range3D`` (``min``, ``max``, ``center()``).

**Scenes.** The ``scene_dataset_config_file`` is a JSON file ``{"scenes": {scene_id: scene}}``;
a scene, in habitat's frame (y up, forward -z), is ``{"floor_y": y, "rects": [[x0, z0, x1,
z1], ...], "objects": [object, ...], "templates": {handle: template}, "regions": [region,
...]}`` (the last three optional):

* ``rects`` are the free floor (furniture already cut out); ``recompute_navmesh`` shrinks *each*
  rectangle by ``agent_radius`` (so rectangles meant to stay joined overlap by more than twice
  the radius);
* an object is ``{"handle": h, "translation": [x, y, z], "aabb": [[lo], [hi]], "yaw": degrees
  about +y (0), "color": [r, g, b], "motion_type": "STATIC" (default) | "KINEMATIC" |
  "DYNAMIC", "user_defined": {...}, "file_directory": dir}``: a box ``aabb`` (local, about the
  COM ``translation``) turned by ``yaw``; ``user_defined`` is its user config (subconfigs are
  JSON objects, e.g. ``"receptacle_mesh_top": {"name": "top", "mesh_filepath": "top.glb"}``);
  ``file_directory`` defaults to the dataset config's folder;
* a template (in ``templates``, or a ``*.object_config.json`` file that ``load_configs`` reads)
  is ``{"aabb": [[lo], [hi]], "color": [r, g, b], "user_defined": {...}}``; a scene template's
  ``file_directory`` is the dataset config's folder, a file's its own folder;
* a region is ``{"id": str, "category": name, "poly_loop": [[x, z], ...], "floor_height": y,
  "extrusion_height": h}``.

**Geometry.** An object's world box is the axis-aligned box of its 8 transformed ``aabb``
corners; rendering, rays and contacts all use it. ``cast_ray`` intersects the ray with every
world box (a ray starting inside a box hits it where it leaves it) and with the floor plane
``y = floor_y`` (object ``stage_id``). ``perform_discrete_collision_detection`` records one
contact per pair of boxes that touch or overlap (within 1e-6 m) where at least one object is
DYNAMIC (as Bullet, static and kinematic objects do not collide with each other), its
``contact_distance`` minus the overlap along y; the stage has no contacts.

**Rendering.** Every pixel's ray (pinhole, ``hfov`` horizontal, square pixels, through the pixel
centre) is intersected with every object's world box; the nearest hit gives the colour, the
``semantic_id`` and the depth, the camera-space z distance (0 where nothing is hit, no floor or
walls are drawn). As habitat-sim does, observations are ``np.flip(buffer, 0)`` views of one
buffer per sensor that the next call overwrites.
"""

from __future__ import annotations

import builtins
import enum
import json
import math
import os
import types
from pathlib import Path
from typing import Any, ClassVar

import fake_habitat_sim as base
import numpy as np
from shapely.geometry import box
from shapely.ops import unary_union

__all__ = ["magnum", "module"]


def _missing(owner: str) -> Any:
    def missing(name: str) -> Any:
        raise AttributeError(f"module {owner!r} (stand-in) has no attribute {name!r}")

    return missing


def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float | np.floating | np.integer) and not isinstance(v, bool)


def _vec3(v: Any, what: str) -> np.ndarray:
    if isinstance(v, base.Vector3):
        return np.asarray(v)
    a = np.asarray(v) if isinstance(v, list | tuple | np.ndarray) else None
    if a is None or a.shape != (3,) or not all(_is_num(x) for x in a.tolist()):
        raise TypeError(f"{what}: incompatible value {v!r} (a 3-vector)")
    return a.astype(np.float32)


class _Bound:
    """A pybind11-like object: only its declared fields, each converted or TypeError."""

    _fields: ClassVar[dict[str, tuple[Any, Any]]] = {}  # name -> (converter, default)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}() takes no arguments")
        for name, (_, default) in self._fields.items():
            object.__setattr__(self, name, default() if callable(default) else default)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._fields:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        object.__setattr__(self, name, self._fields[name][0](value, name))


def _str(v: Any, what: str) -> str:
    if not isinstance(v, str):
        raise TypeError(f"{what}: a str, got {type(v).__name__}")
    return v


def _bool(v: Any, what: str) -> bool:
    if not isinstance(v, bool | np.bool_):
        raise TypeError(f"{what}: a bool, got {type(v).__name__}")
    return bool(v)


def _intc(v: Any, what: str) -> int:
    if not _is_int(v):
        raise TypeError(f"{what}: an int, got {type(v).__name__}")
    return int(v)


def _float(v: Any, what: str) -> float:
    if not _is_num(v):
        raise TypeError(f"{what}: a float, got {type(v).__name__}")
    return float(v)


def _enum(cls: type) -> Any:
    def conv(v: Any, what: str) -> Any:
        if not isinstance(v, cls):
            raise TypeError(f"{what}: a {cls.__name__}, got {v!r}")
        return v

    return conv


def _res(v: Any, what: str) -> np.ndarray:
    if not isinstance(v, list | tuple | np.ndarray) or len(v) != 2:
        raise TypeError(f"{what}: a Vector2i [H, W], got {v!r}")
    if not all(_is_int(x) for x in list(v)):
        raise TypeError(f"{what}: integers, got {v!r}")
    return np.array([int(x) for x in v], dtype=np.int32)


class SensorType(enum.Enum):
    NONE = 0
    COLOR = 1
    DEPTH = 2
    NORMAL = 3
    SEMANTIC = 4


class SensorSubType(enum.Enum):
    NONE = 0
    PINHOLE = 1
    ORTHOGRAPHIC = 2


class CameraSensorSpec(_Bound):
    _fields: ClassVar[dict[str, tuple[Any, Any]]] = {
        "uuid": (_str, ""),
        "sensor_type": (_enum(SensorType), SensorType.COLOR),
        "sensor_subtype": (_enum(SensorSubType), SensorSubType.PINHOLE),
        "resolution": (_res, lambda: np.array([128, 128], np.int32)),
        "hfov": (_float, 90.0),
        "position": (_vec3, lambda: np.array([0.0, 1.5, 0.0], np.float32)),
        "orientation": (_vec3, lambda: np.zeros(3, np.float32)),
        "near": (_float, 0.01),
        "far": (_float, 1000.0),
    }


class SimulatorConfiguration(_Bound):
    _fields: ClassVar[dict[str, tuple[Any, Any]]] = {
        "scene_id": (_str, ""),
        "scene_dataset_config_file": (_str, "default"),
        "enable_physics": (_bool, False),
        "load_semantic_mesh": (_bool, False),
        "gpu_device_id": (_intc, 0),
        "random_seed": (_intc, 0),
    }


class NavMeshSettings(_Bound):
    _defaults: ClassVar[dict[str, float]] = {
        "cell_size": 0.05,
        "cell_height": 0.2,
        "agent_height": 1.5,
        "agent_radius": 0.1,
        "agent_max_climb": 0.2,
        "agent_max_slope": 45.0,
        "region_min_size": 20.0,
        "region_merge_size": 20.0,
        "edge_max_len": 12.0,
        "edge_max_error": 1.3,
        "verts_per_poly": 6.0,
        "detail_sample_dist": 6.0,
        "detail_sample_max_error": 1.0,
    }
    _flags: ClassVar[dict[str, bool]] = {
        "filter_low_hanging_obstacles": True,
        "filter_ledge_spans": True,
        "filter_walkable_low_height_spans": True,
        "include_static_objects": False,
    }
    _fields: ClassVar[dict[str, tuple[Any, Any]]] = {
        **{k: (_float, v) for k, v in _defaults.items()},
        **{k: (_bool, v) for k, v in _flags.items()},
    }

    def set_defaults(self) -> None:
        for name, (_, default) in self._fields.items():
            object.__setattr__(self, name, default)


class AgentConfiguration:
    """habitat_sim.agent.AgentConfiguration (an attrs class upstream)."""

    def __init__(
        self,
        height: float = 1.5,
        radius: float = 0.1,
        sensor_specifications: list[Any] | None = None,
        action_space: Any = None,
        body_type: str = "cylinder",
    ) -> None:
        self.height = _float(height, "height")
        self.radius = _float(radius, "radius")
        specs = list(sensor_specifications or [])
        if not all(isinstance(s, CameraSensorSpec) for s in specs):
            raise TypeError("sensor_specifications: CameraSensorSpec objects")
        self.sensor_specifications = specs
        self.action_space = action_space
        self.body_type = body_type


class AgentState:
    """habitat_sim.agent.AgentState (attrs upstream): ``position``, ``rotation``."""

    def __init__(self, position: Any = None, rotation: Any = None) -> None:
        self.position = np.zeros(3) if position is None else position
        self.rotation = np.array([0.0, 0.0, 0.0, 1.0]) if rotation is None else rotation


class Configuration:
    def __init__(self, sim_cfg: Any, agents: Any = None) -> None:
        if not isinstance(sim_cfg, SimulatorConfiguration):
            raise TypeError("Configuration(sim_cfg): a SimulatorConfiguration")
        agents = list(agents or [])
        if not all(isinstance(a, AgentConfiguration) for a in agents):
            raise TypeError("Configuration(agents): AgentConfiguration objects")
        self.sim_cfg, self.agents = sim_cfg, agents


class PathFinder(base.PathFinder):
    __slots__ = ("_areas",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._areas: list[float] = []

    def load_nav_mesh(self, path: Any = None, **kwargs: Any) -> bool:
        if not super().load_nav_mesh(path, **kwargs):
            return False
        mesh = self._loaded()
        self._build(float(mesh.y), mesh.rects.tolist())  # the islands of a loaded navmesh too
        return True

    def _build(self, floor_y: float, rects: list[list[float]]) -> None:
        mesh = base._Mesh(floor_y, rects)
        boxes = [box(*r) for r in mesh.rects.tolist()]
        n = max(mesh.island_of) + 1
        pairs = list(zip(boxes, mesh.island_of, strict=True))
        self._areas = [float(unary_union([b for b, k in pairs if k == i]).area) for i in range(n)]
        self._mesh = mesh

    def get_island(self, pt: Any = None, **kwargs: Any) -> int:
        base._no_kwargs("get_island", kwargs, ("pt",))
        hit = self._loaded().project(base._vec(kwargs.get("pt", pt), "get_island(pt)"))
        return -1 if hit is None else int(self._loaded().island_of[hit[0]])

    @property
    def num_islands(self) -> int:
        return len(self._areas) if self._mesh is not None else 0

    def island_area(self, island_index: Any = -1, **kwargs: Any) -> float:
        base._no_kwargs("island_area", kwargs, ("island_index",))
        k = base._int(kwargs.get("island_index", island_index), "island_index", -1, 2**31 - 1)
        self._loaded()
        if k == -1:
            return float(sum(self._areas))
        if k >= len(self._areas):
            raise AssertionError(f"island_area: no island {k}")
        return self._areas[k]


# -- magnum stand-in ---------------------------------------------------------------------------


class Vector3(base.Vector3):
    """``magnum.Vector3``: three numbers (float32)."""

    __slots__ = ()

    def __init__(self, x: Any, y: Any, z: Any) -> None:
        if not all(_is_num(v) for v in (x, y, z)):
            raise TypeError(f"Vector3(): three numbers, got {(x, y, z)!r}")
        super().__init__(float(x), float(y), float(z))


class _Fixed:
    """A read-only magnum vector of fixed size (``Vector2``, ``Vector4``)."""

    __slots__ = ("_v",)
    size = 0

    def __init__(self, *values: Any) -> None:
        if len(values) != self.size or not all(_is_num(v) for v in values):
            raise TypeError(f"{type(self).__name__}(): {self.size} numbers, got {values!r}")
        self._v = np.array(values, np.float32)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._v.copy() if dtype is None else self._v.astype(dtype)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> float:
        if not isinstance(i, int):
            raise TypeError("vector indices are ints")
        return float(self._v[i])

    def __iter__(self) -> Any:
        return iter(float(v) for v in self._v)


class Vector2(_Fixed):
    __slots__ = ()
    size = 2


class Vector4(_Fixed):
    __slots__ = ()
    size = 4


class Rad:
    __slots__ = ("_v",)

    def __init__(self, value: Any) -> None:
        self._v = _float(value, "Rad()")

    def __float__(self) -> float:
        return self._v


class Quaternion:
    """``magnum.Quaternion``: ``Quaternion()`` (identity), ``Quaternion(vector, scalar)``,
    ``Quaternion.rotation(angle, normalized_axis)``; ``vector``, ``scalar``."""

    __slots__ = ("_q",)

    def __init__(self, *args: Any) -> None:
        if not args:
            self._q = np.array([0.0, 0.0, 0.0, 1.0])
            return
        if len(args) != 2 or not isinstance(args[0], base.Vector3) or not _is_num(args[1]):
            raise TypeError("Quaternion(vector: Vector3, scalar: float)")
        self._q = np.array([*np.asarray(args[0], np.float64), float(args[1])])

    @staticmethod
    def rotation(angle: Any, normalized_axis: Any) -> Quaternion:
        if not isinstance(angle, Rad) or not isinstance(normalized_axis, base.Vector3):
            raise TypeError("Quaternion.rotation(angle: Rad, normalized_axis: Vector3)")
        axis = np.asarray(normalized_axis, np.float64)
        if abs(float(np.linalg.norm(axis)) - 1.0) > 1e-5:
            raise ValueError(f"Quaternion.rotation(): axis {axis} is not normalized")
        half = float(angle) / 2
        q = Quaternion()
        q._q = np.array([*(axis * math.sin(half)), math.cos(half)])
        return q

    @property
    def vector(self) -> Vector3:
        return Vector3(*self._q[:3].tolist())

    @property
    def scalar(self) -> float:
        return float(self._q[3])


class Matrix4:
    """``magnum.Matrix4`` as bindings return it: ``m[i]`` is column ``i``;
    ``transform_point``."""

    __slots__ = ("_m",)

    def __init__(self, *args: Any) -> None:
        raise TypeError("stand-in: Matrix4 is only returned, never built")

    @classmethod
    def _of(cls, m: np.ndarray) -> Matrix4:
        out = object.__new__(cls)
        out._m = np.asarray(m, np.float64).reshape(4, 4).copy()
        return out

    def __getitem__(self, i: int) -> Vector4:
        if not isinstance(i, int) or not 0 <= i < 4:
            raise TypeError("Matrix4 columns are ints 0..3")
        return Vector4(*self._m[:, i].tolist())

    def transform_point(self, p: Any) -> Vector3:
        if not isinstance(p, base.Vector3):
            raise TypeError("transform_point(): a Vector3")
        v = self._m @ np.array([*np.asarray(p, np.float64), 1.0])
        return Vector3(*v[:3].tolist())


class Range3D:
    __slots__ = ("_hi", "_lo")

    def __init__(self, min: Any, max: Any) -> None:
        if not isinstance(min, base.Vector3) or not isinstance(max, base.Vector3):
            raise TypeError("Range3D(min: Vector3, max: Vector3)")
        self._lo, self._hi = np.asarray(min, np.float64), np.asarray(max, np.float64)

    @property
    def min(self) -> Vector3:
        return Vector3(*self._lo.tolist())

    @property
    def max(self) -> Vector3:
        return Vector3(*self._hi.tolist())

    def center(self) -> Vector3:
        return Vector3(*((self._lo + self._hi) / 2).tolist())


def _magnum_vec(v: Any, what: str) -> np.ndarray:
    """A property that takes a ``const Vector3&``: a Vector3 only (float64 copy)."""
    if not isinstance(v, base.Vector3):
        raise TypeError(f"{what}: incompatible value {v!r} (a magnum.Vector3)")
    return np.asarray(v, np.float64)


# -- physics -----------------------------------------------------------------------------------


class MotionType(enum.Enum):
    UNDEFINED = -1
    STATIC = 0
    KINEMATIC = 1
    DYNAMIC = 2


STAGE_ID = 0


class Ray:
    """``habitat_sim.geo.Ray(origin, direction)``: magnum vectors."""

    __slots__ = ("direction", "origin")

    def __init__(self, origin: Any = None, direction: Any = None) -> None:
        if (origin is None) != (direction is None):
            raise TypeError("Ray(): both origin and direction, or neither")
        if origin is None:
            origin = direction = Vector3(0, 0, 0)
        _magnum_vec(origin, "Ray(origin)")
        _magnum_vec(direction, "Ray(direction)")
        self.origin, self.direction = origin, direction


class RayHitInfo:
    __slots__ = ("normal", "object_id", "point", "ray_distance")

    def __init__(self, object_id: int, point: np.ndarray, normal: np.ndarray, t: float) -> None:
        self.object_id = int(object_id)
        self.point = Vector3(*point.tolist())
        self.normal = Vector3(*normal.tolist())
        self.ray_distance = float(t)


class RaycastResults:
    __slots__ = ("hits", "ray")

    def __init__(self, ray: Ray, hits: list[RayHitInfo]) -> None:
        self.ray, self.hits = ray, hits

    def has_hits(self) -> bool:
        return bool(self.hits)


class ContactPointData:
    __slots__ = ("contact_distance", "link_id_a", "link_id_b", "object_id_a", "object_id_b")

    def __init__(self, a: int, b: int, distance: float) -> None:
        self.object_id_a, self.object_id_b = a, b
        self.link_id_a = self.link_id_b = -1
        self.contact_distance = float(distance)


# -- configs and templates ---------------------------------------------------------------------


class UserConfiguration:
    """A ``habitat_sim`` ``Configuration`` (an object's ``user_attributes``)."""

    __slots__ = ("_subs", "_values")

    def __init__(self, doc: dict[str, Any]) -> None:
        self._subs = {k: UserConfiguration(v) for k, v in doc.items() if isinstance(v, dict)}
        self._values = {k: v for k, v in doc.items() if not isinstance(v, dict)}

    def get_subconfig_keys(self, sorted: Any = False) -> list[str]:
        keys = list(self._subs)
        return builtins.sorted(keys) if _bool(sorted, "sorted") else keys

    def get_subconfig(self, name: Any) -> UserConfiguration:
        # upstream's editSubconfig makes an empty one for an unknown name
        return self._subs.get(_str(name, "name"), UserConfiguration({}))

    def get(self, key: Any) -> Any:
        v = self._values.get(_str(key, "key"))
        if isinstance(v, list) and len(v) == 3 and all(_is_num(x) for x in v):
            return Vector3(*v)
        return v

    def has_value(self, key: Any) -> bool:
        return _str(key, "key") in self._values


class CreationAttributes:
    __slots__ = ("file_directory", "handle")

    def __init__(self, handle: str, file_directory: str) -> None:
        self.handle, self.file_directory = handle, file_directory


class ObjectAttributesManager:
    __slots__ = ("_ids", "_templates")

    def __init__(self) -> None:
        self._templates: dict[str, dict[str, Any]] = {}
        self._ids: dict[str, int] = {}

    def _register(self, handle: str, spec: dict[str, Any], directory: str) -> int:
        self._templates[handle] = {**spec, "file_directory": directory}
        return self._ids.setdefault(handle, len(self._ids))

    def load_configs(self, path: Any, save_as_defaults: Any = False) -> list[int]:
        p = Path(_str(path, "path"))
        _bool(save_as_defaults, "save_as_defaults")
        suffix = ".object_config.json"
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.name.endswith(suffix))
        else:
            files = [p] if p.is_file() and p.name.endswith(suffix) else []
        out = []
        for f in files:
            spec = json.loads(f.read_text(encoding="utf-8"))
            out.append(self._register(str(f.resolve()), spec, str(f.resolve().parent)))
        return out

    def get_template_handles(
        self,
        search_str: Any = "",
        contains: Any = True,
        sorted: Any = True,
    ) -> list[str]:
        s, c = _str(search_str, "search_str"), _bool(contains, "contains")
        found = [h for h in self._templates if (s in h) == c or not s]
        return builtins.sorted(found) if _bool(sorted, "sorted") else found

    def get_library_has_handle(self, handle: Any) -> bool:
        return _str(handle, "handle") in self._templates


def _shortname(handle: str) -> str:
    return handle.split("/")[-1].split(".")[0].split("_:")[0]


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    return _rotation_matrix(q)


class _Node:
    __slots__ = ("_obj",)

    def __init__(self, obj: ManagedRigidObject) -> None:
        self._obj = obj

    def absolute_transformation(self) -> Matrix4:
        return Matrix4._of(self._obj._matrix())


class ManagedRigidObject:
    __slots__ = (
        "_creation",
        "_hi",
        "_lo",
        "_motion",
        "_q",
        "_sem",
        "_t",
        "_user",
        "color",
        "handle",
        "object_id",
    )

    def __init__(self, handle: str, object_id: int, spec: dict[str, Any], directory: str) -> None:
        self.handle, self.object_id = handle, object_id
        self._t = np.asarray(spec.get("translation", [0, 0, 0]), np.float64)
        yaw = math.radians(float(spec.get("yaw", 0.0)))
        self._q = np.array([0.0, math.sin(yaw / 2), 0.0, math.cos(yaw / 2)])
        self._lo, self._hi = (np.asarray(v, np.float64) for v in spec["aabb"])
        self.color = np.asarray(spec.get("color", [200, 200, 200]), np.uint8)
        self._sem = int(spec.get("semantic_id", 0))
        self._motion = MotionType[spec.get("motion_type", "STATIC")]
        self._user = UserConfiguration(spec.get("user_defined", {}))
        self._creation = CreationAttributes(
            str(spec.get("template", handle)), str(spec.get("file_directory", directory))
        )

    def _matrix(self) -> np.ndarray:
        m = np.eye(4)
        m[:3, :3] = _quat_matrix(self._q)
        m[:3, 3] = self._t
        return m

    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The world box: the axis-aligned box of the 8 transformed local corners."""
        lo, hi = self._lo, self._hi
        corners = np.array(
            [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
        )
        world = corners @ _quat_matrix(self._q).T + self._t
        return world.min(axis=0), world.max(axis=0)

    @property
    def translation(self) -> Vector3:
        return Vector3(*self._t.tolist())

    @translation.setter
    def translation(self, v: Any) -> None:
        self._t = _magnum_vec(v, "translation").astype(np.float32).astype(np.float64)

    @property
    def rotation(self) -> Quaternion:
        q = Quaternion()
        q._q = self._q.copy()
        return q

    @rotation.setter
    def rotation(self, q: Any) -> None:
        if not isinstance(q, Quaternion):
            raise TypeError(f"rotation: a magnum.Quaternion, got {type(q).__name__}")
        self._q = q._q / np.linalg.norm(q._q)

    @property
    def transformation(self) -> Matrix4:
        return Matrix4._of(self._matrix())

    @transformation.setter
    def transformation(self, m: Any) -> None:
        if not isinstance(m, Matrix4):
            raise TypeError(f"transformation: a magnum.Matrix4, got {type(m).__name__}")
        self._t = m._m[:3, 3].copy()
        self._q = _matrix_quat(m._m[:3, :3])

    @property
    def aabb(self) -> Range3D:
        return Range3D(Vector3(*self._lo.tolist()), Vector3(*self._hi.tolist()))

    collision_shape_aabb = aabb

    @property
    def motion_type(self) -> MotionType:
        return self._motion

    @motion_type.setter
    def motion_type(self, v: Any) -> None:
        self._motion = _enum(MotionType)(v, "motion_type")

    @property
    def semantic_id(self) -> int:
        return self._sem

    @semantic_id.setter
    def semantic_id(self, v: Any) -> None:
        self._sem = base._int(v, "semantic_id", 0, 2**32 - 1)

    @property
    def user_attributes(self) -> UserConfiguration:
        return self._user

    @property
    def creation_attributes(self) -> CreationAttributes:
        return self._creation

    @property
    def visual_scene_nodes(self) -> list[_Node]:
        return [_Node(self), _Node(self)]


def _matrix_quat(r: np.ndarray) -> np.ndarray:
    """[x, y, z, w] of a rotation matrix (Shepperd)."""
    t = float(np.trace(r))
    if t > 0:
        s = math.sqrt(t + 1.0) * 2
        q = [(r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, s / 4]
    else:
        i = int(np.argmax(np.diag(r)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = math.sqrt(1.0 + r[i, i] - r[j, j] - r[k, k]) * 2
        q = [0.0, 0.0, 0.0, (r[k, j] - r[j, k]) / s]
        q[i], q[j], q[k] = s / 4, (r[j, i] + r[i, j]) / s, (r[k, i] + r[i, k]) / s
    out = np.array(q)
    return out / np.linalg.norm(out)


class RigidObjectManager:
    __slots__ = ("_free", "_next", "_objects", "_sim")

    def __init__(self, sim: Simulator) -> None:
        self._objects: dict[str, ManagedRigidObject] = {}
        self._sim = sim
        self._next = STAGE_ID + 1
        self._free: list[int] = []

    def _allocate(self) -> int:
        if self._free:
            return self._free.pop()
        self._next += 1
        return self._next - 1

    def get_object_handles(self, search_str: Any = "", contains: Any = True) -> list[str]:
        s, c = _str(search_str, "search_str"), _bool(contains, "contains")
        return [h for h in self._objects if (s in h) == c or not s]

    def get_object_by_handle(self, handle: Any) -> ManagedRigidObject | None:
        return self._objects.get(_str(handle, "handle"))

    def add_object_by_template_handle(
        self, object_lib_handle: Any, attachment_node: Any = None, light_setup_key: Any = ""
    ) -> ManagedRigidObject | None:
        h = _str(object_lib_handle, "object_lib_handle")
        _str(light_setup_key, "light_setup_key")
        if attachment_node is not None:
            raise TypeError("stand-in: no attachment_node")
        spec = self._sim._otm._templates.get(h)
        if spec is None:
            return None  # upstream logs an error and returns None
        name = _shortname(h) + "_:"
        counts = [
            int(k.rpartition(":")[2])
            for k in self._objects
            if k.startswith(name) and k.rpartition(":")[2].isdigit()
        ]
        handle = f"{name}{max(counts, default=-1) + 1:04d}"
        obj = ManagedRigidObject(
            handle,
            self._allocate(),
            {**spec, "motion_type": "DYNAMIC", "template": h},
            spec["file_directory"],
        )
        self._objects[handle] = obj
        return obj

    def remove_object_by_handle(
        self, handle: Any, delete_object_node: Any = True, delete_visual_node: Any = True
    ) -> None:
        h = _str(handle, "handle")
        _bool(delete_object_node, "delete_object_node")
        _bool(delete_visual_node, "delete_visual_node")
        obj = self._objects.pop(h, None)  # upstream logs an error for an unknown handle
        if obj is not None:
            self._free.append(obj.object_id)


# -- regions -----------------------------------------------------------------------------------


class SemanticCategory:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self, mode: Any = "") -> str:
        _str(mode, "mode")
        return self._name


class SemanticRegion:
    __slots__ = ("category", "extrusion_height", "floor_height", "id", "poly_loop_points")

    def __init__(self, spec: dict[str, Any]) -> None:
        self.id = str(spec["id"])
        self.category = SemanticCategory(str(spec["category"]))
        self.poly_loop_points = [Vector2(float(x), float(z)) for x, z in spec["poly_loop"]]
        self.floor_height = float(spec.get("floor_height", 0.0))
        self.extrusion_height = float(spec.get("extrusion_height", 2.5))


class SemanticScene:
    __slots__ = ("regions",)

    def __init__(self, regions: list[SemanticRegion]) -> None:
        self.regions = regions


class Agent:
    __slots__ = ("_sim", "position", "rotation")

    def __init__(self, sim: Simulator) -> None:
        self._sim = sim
        self.position = np.zeros(3)
        self.rotation = np.array([0.0, 0.0, 0.0, 1.0])

    def set_state(
        self,
        state: Any,
        reset_sensors: Any = True,
        infer_sensor_states: Any = True,
        is_initial: Any = False,
    ) -> None:
        if not isinstance(state, AgentState):
            raise TypeError("set_state(): an AgentState")
        for flag, what in (
            (reset_sensors, "reset_sensors"),
            (infer_sensor_states, "infer"),
            (is_initial, "is_initial"),
        ):
            _bool(flag, what)
        p = _vec3(state.position, "AgentState.position").astype(np.float64)
        if not np.all(np.isfinite(p)):
            raise ValueError("AgentState.position is not finite")
        q = state.rotation
        if not isinstance(q, list | np.ndarray) or np.asarray(q).shape != (4,):
            raise TypeError("AgentState.rotation: [x, y, z, w] coefficients (no quaternion lib)")
        q = np.asarray(q, np.float64)
        if abs(float(np.linalg.norm(q)) - 1.0) > 1e-5:
            raise ValueError(f"AgentState.rotation is not a unit quaternion: {q}")
        self.position, self.rotation = p, q


def _rotation_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


class Simulator:
    def __init__(self, config: Any) -> None:
        self._closed = False
        self._cfg: Configuration | None = None
        self.reconfigure(config)

    def _alive(self) -> None:
        if self._closed:
            raise RuntimeError("Simulator is closed")

    @property
    def config(self) -> Configuration:
        self._alive()
        assert self._cfg is not None
        return self._cfg

    def reconfigure(self, config: Any) -> None:
        self._alive()
        if not isinstance(config, Configuration):
            raise TypeError("reconfigure(): a Configuration")
        if len(config.agents) != 1:
            raise TypeError("this stand-in has exactly one agent")
        sc = config.sim_cfg
        with open(sc.scene_dataset_config_file, encoding="utf-8") as f:
            scene = json.load(f)["scenes"][sc.scene_id]
        folder = os.path.dirname(os.path.abspath(sc.scene_dataset_config_file))
        self._cfg, self._scene = config, scene
        self._specs = {s.uuid: s for s in config.agents[0].sensor_specifications}
        for s in self._specs.values():
            if np.any(s.orientation != 0) or s.sensor_subtype is not SensorSubType.PINHOLE:
                raise NotImplementedError("stand-in: pinhole sensors with orientation 0 only")
        self._buffers: dict[str, np.ndarray] = {}
        self._pathfinder = PathFinder()
        if not hasattr(self, "_otm"):  # templates stay loaded across scenes, as upstream
            self._otm = ObjectAttributesManager()
        for handle, spec in scene.get("templates", {}).items():
            self._otm._register(handle, spec, folder)
        self._rom = RigidObjectManager(self)
        for spec in scene.get("objects", []):
            obj = ManagedRigidObject(spec["handle"], self._rom._allocate(), spec, folder)
            self._rom._objects[spec["handle"]] = obj
        self._regions = SemanticScene([SemanticRegion(r) for r in scene.get("regions", [])])
        self._contacts: list[ContactPointData] = []
        self._agent = Agent(self)

    @property
    def pathfinder(self) -> PathFinder:
        self._alive()
        return self._pathfinder

    @property
    def semantic_scene(self) -> SemanticScene:
        self._alive()
        return self._regions

    def recompute_navmesh(self, pathfinder: Any, navmesh_settings: Any) -> bool:
        self._alive()
        if not isinstance(pathfinder, base.PathFinder) or not isinstance(
            navmesh_settings, NavMeshSettings
        ):
            raise TypeError("recompute_navmesh(pathfinder: PathFinder, navmesh_settings)")
        r = navmesh_settings.agent_radius
        rects = [[x0 + r, z0 + r, x1 - r, z1 - r] for x0, z0, x1, z1 in self._scene["rects"]]
        rects = [q for q in rects if q[0] < q[2] and q[1] < q[3]]
        if not rects:
            return False
        pathfinder._build(float(self._scene["floor_y"]), rects)
        return True

    def get_agent(self, agent_id: Any) -> Agent:
        self._alive()
        if _intc(agent_id, "agent_id") != 0:
            raise IndexError("one agent")
        return self._agent

    def get_rigid_object_manager(self) -> RigidObjectManager:
        self._alive()
        return self._rom

    def get_object_template_manager(self) -> ObjectAttributesManager:
        self._alive()
        return self._otm

    # -- physics queries ---------------------------------------------------------------------

    def cast_ray(
        self, ray: Any, max_distance: Any = 100.0, buffer_distance: Any = 0.08
    ) -> RaycastResults:
        self._alive()
        if not isinstance(ray, Ray):
            raise TypeError(f"cast_ray(): a habitat_sim.geo.Ray, got {type(ray).__name__}")
        limit = _float(max_distance, "max_distance")
        _float(buffer_distance, "buffer_distance")
        o = np.asarray(ray.origin, np.float64)
        d = np.asarray(ray.direction, np.float64)
        hits = []
        with np.errstate(divide="ignore", invalid="ignore"):
            for obj in self._rom._objects.values():
                lo, hi = obj._bounds()
                t1, t2 = (lo - o) / d, (hi - o) / d
                edge = np.isnan(t1) | np.isnan(t2)
                near = np.where(edge, -np.inf, np.minimum(t1, t2))
                far = np.where(edge, np.inf, np.maximum(t1, t2))
                tn, tf = float(near.max()), float(far.min())
                if tn > tf or tf < 0:
                    continue
                inside = tn < 0  # leaves the box where it hits it
                t = tf if inside else tn
                axis = int(np.argmin(far) if inside else np.argmax(near))
                normal = np.zeros(3)
                normal[axis] = -np.sign(d[axis]) if not inside else np.sign(d[axis])
                if t <= limit:
                    hits.append(RayHitInfo(obj.object_id, o + t * d, normal, t))
            if d[1] != 0:
                t = (float(self._scene["floor_y"]) - o[1]) / d[1]
                if 0 <= t <= limit:
                    hits.append(RayHitInfo(STAGE_ID, o + t * d, np.array([0.0, 1.0, 0.0]), t))
        hits.sort(key=lambda h: h.ray_distance)
        return RaycastResults(ray, hits)

    def perform_discrete_collision_detection(self) -> None:
        self._alive()
        objs = list(self._rom._objects.values())
        contacts = []
        for i, a in enumerate(objs):
            for b in objs[i + 1 :]:
                if MotionType.DYNAMIC not in (a.motion_type, b.motion_type):
                    continue
                (alo, ahi), (blo, bhi) = a._bounds(), b._bounds()
                overlap = np.minimum(ahi, bhi) - np.maximum(alo, blo)
                if np.all(overlap >= -1e-6):
                    contacts.append(
                        ContactPointData(a.object_id, b.object_id, -max(float(overlap[1]), 0.0))
                    )
        self._contacts = contacts

    def get_physics_contact_points(self) -> list[ContactPointData]:
        self._alive()
        return list(self._contacts)

    # -- rendering ---------------------------------------------------------------------------

    def get_sensor_observations(self, agent_ids: Any = 0) -> dict[str, np.ndarray]:
        self._alive()
        _intc(agent_ids, "agent_ids")
        agent = self._agent
        rot = _rotation_matrix(agent.rotation)
        out = {}
        for uuid, spec in self._specs.items():
            h, w = (int(v) for v in spec.resolution)
            origin = agent.position + rot @ spec.position.astype(np.float64)
            colour, depth, sem = self._cast(origin, rot, w, h, spec)
            kind = spec.sensor_type
            if kind is SensorType.COLOR:
                img = np.concatenate([colour, np.full((h, w, 1), 255, np.uint8)], axis=2)
            elif kind is SensorType.DEPTH:
                img = depth
            elif kind is SensorType.SEMANTIC:
                img = sem
            else:
                raise NotImplementedError(f"stand-in: no {kind} sensor")
            buf = self._buffers.get(uuid)
            if buf is None or buf.shape != img.shape:
                buf = self._buffers[uuid] = np.empty_like(img)
            buf[...] = np.flip(img, 0)  # the GL buffer is bottom-up
            out[uuid] = np.flip(buf, 0)
        return out

    def _cast(
        self, origin: np.ndarray, rot: np.ndarray, w: int, h: int, spec: CameraSensorSpec
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        f = (w / 2) / math.tan(math.radians(spec.hfov) / 2)
        u = (np.arange(w) + 0.5 - w / 2) / f
        v = -(np.arange(h) + 0.5 - h / 2) / f
        uu, vv = np.meshgrid(u, v)
        d_cam = np.stack([uu, vv, -np.ones_like(uu)], axis=-1)  # camera z distance 1
        d = d_cam @ rot.T
        best = np.full((h, w), np.inf)
        colour = np.zeros((h, w, 3), np.uint8)
        sem = np.zeros((h, w), np.uint32)
        with np.errstate(divide="ignore", invalid="ignore"):
            for obj in self._rom._objects.values():
                box_lo, box_hi = obj._bounds()
                t1 = (box_lo - origin) / d
                t2 = (box_hi - origin) / d
                edge = np.isnan(t1) | np.isnan(t2)  # ray in a slab's plane: no bound there
                lo = np.where(edge, -np.inf, np.minimum(t1, t2))
                hi = np.where(edge, np.inf, np.maximum(t1, t2))
                near, far = lo.max(axis=-1), hi.min(axis=-1)
                hit = (near <= far) & (near > spec.near) & (near < spec.far) & (near < best)
                best[hit] = near[hit]
                colour[hit] = obj.color
                sem[hit] = obj.semantic_id
        depth = np.where(np.isfinite(best), best, 0.0).astype(np.float32)
        return colour, depth, sem

    def close(self, destroy: Any = True) -> None:
        _bool(destroy, "destroy")
        self._closed = True


def _strict(name: str, names: dict[str, Any]) -> types.ModuleType:
    mod = types.ModuleType(name, f"{name} stand-in (tests/fake_habitat_world.py)")
    for key, value in names.items():
        setattr(mod, key, value)
    mod.__getattr__ = _missing(name)  # type: ignore[method-assign]
    return mod


def magnum() -> types.ModuleType:
    """A fresh ``magnum`` stand-in with the names listed in the module docstring."""
    return _strict(
        "magnum",
        {
            "Vector2": Vector2,
            "Vector3": Vector3,
            "Vector4": Vector4,
            "Rad": Rad,
            "Quaternion": Quaternion,
            "Matrix4": Matrix4,
            "Range3D": Range3D,
        },
    )


def module() -> types.ModuleType:
    """A fresh ``habitat_sim`` stand-in with the names listed in the module docstring."""
    mod = base.module()
    agent = _strict(
        "habitat_sim.agent", {"AgentConfiguration": AgentConfiguration, "AgentState": AgentState}
    )
    nav = _strict("habitat_sim.nav", {"NavMeshSettings": NavMeshSettings})
    geo = _strict("habitat_sim.geo", {"Ray": Ray})
    physics = _strict("habitat_sim.physics", {"MotionType": MotionType})
    names = {
        "PathFinder": PathFinder,
        "Simulator": Simulator,
        "Configuration": Configuration,
        "SimulatorConfiguration": SimulatorConfiguration,
        "AgentConfiguration": AgentConfiguration,
        "AgentState": AgentState,
        "CameraSensorSpec": CameraSensorSpec,
        "SensorType": SensorType,
        "SensorSubType": SensorSubType,
        "agent": agent,
        "nav": nav,
        "geo": geo,
        "physics": physics,
        "stage_id": STAGE_ID,
    }
    for name, value in names.items():
        setattr(mod, name, value)
    return mod
