"""A strict stand-in for the part of ``habitat_sim`` (0.3.3) that ``HabitatWorld`` calls.

Builds on :mod:`fake_habitat_sim` (its ``PathFinder`` and ``ShortestPath``) with the simulator
surface of ``docs/habitat_world.md`` §2 and §7 that the first slice of
:mod:`dataforge.world.habitat_world` uses. Same rules as that module: only these names exist
(any other attribute of the module, its ``agent`` / ``nav`` submodules or a bound object raises
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
* ``Simulator(cfg)``: ``config``, ``reconfigure(cfg)``, ``close(destroy=True)``, ``pathfinder``,
  ``recompute_navmesh(pathfinder, navmesh_settings) -> bool``, ``get_agent(0)`` with
  ``set_state(state, reset_sensors=True)`` (``state.rotation`` a unit [x, y, z, w] ndarray or
  list: the coefficient order ``quat_from_coeffs`` reads; numpy-quaternion is not installed
  here), ``get_sensor_observations()`` and ``get_rigid_object_manager()``
  (``get_object_handles(search_str="", contains=True)``, ``get_object_by_handle``,
  ``remove_object_by_handle``; objects have ``handle``, ``object_id``, ``semantic_id``,
  ``translation``);
* ``PathFinder`` adds ``get_island(pt) -> int`` (-1 off the navmesh), ``num_islands`` and
  ``island_area(island_index=-1)`` (-1: all islands) to :class:`fake_habitat_sim.PathFinder`.

**Scenes.** The ``scene_dataset_config_file`` is a JSON file ``{"scenes": {scene_id: scene}}``;
a scene, in habitat's frame (y up, forward -z), is ``{"floor_y": y, "rects": [[x0, z0, x1,
z1], ...], "objects": [{"handle": h, "translation": [x, y, z], "aabb": [[lo], [hi]], "color":
[r, g, b]}]}``: ``rects`` are the free floor (furniture already cut out); ``recompute_navmesh``
shrinks *each* rectangle by ``agent_radius`` (so rectangles meant to stay joined overlap by more
than twice the radius); an object is an axis-aligned box ``translation + aabb``.

**Rendering.** Every pixel's ray (pinhole, ``hfov`` horizontal, square pixels, through the pixel
centre) is intersected with every object's box; the nearest hit gives the colour, the
``semantic_id`` and the depth, the camera-space z distance (0 where nothing is hit, no floor or
walls are drawn). As habitat-sim does, observations are ``np.flip(buffer, 0)`` views of one
buffer per sensor that the next call overwrites.
"""

from __future__ import annotations

import enum
import json
import math
import types
from typing import Any, ClassVar

import fake_habitat_sim as base
import numpy as np
from shapely.geometry import box
from shapely.ops import unary_union

__all__ = ["module"]


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
        "cell_size": 0.05, "cell_height": 0.2, "agent_height": 1.5, "agent_radius": 0.1,
        "agent_max_climb": 0.2, "agent_max_slope": 45.0, "region_min_size": 20.0,
        "region_merge_size": 20.0, "edge_max_len": 12.0, "edge_max_error": 1.3,
        "verts_per_poly": 6.0, "detail_sample_dist": 6.0, "detail_sample_max_error": 1.0,
    }  # fmt: skip
    _flags: ClassVar[dict[str, bool]] = {
        "filter_low_hanging_obstacles": True, "filter_ledge_spans": True,
        "filter_walkable_low_height_spans": True, "include_static_objects": False,
    }  # fmt: skip
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


class ManagedRigidObject:
    __slots__ = ("_hi", "_lo", "_sem", "color", "handle", "object_id")

    def __init__(self, handle: str, object_id: int, spec: dict[str, Any]) -> None:
        t = np.asarray(spec["translation"], np.float64)
        lo, hi = (np.asarray(v, np.float64) for v in spec["aabb"])
        self.handle, self.object_id = handle, object_id
        self._lo, self._hi = t + lo, t + hi
        self.color = np.asarray(spec.get("color", [200, 200, 200]), np.uint8)
        self._sem = 0

    @property
    def translation(self) -> base.Vector3:
        return base.Vector3(*((self._lo + self._hi) / 2).tolist())

    @property
    def semantic_id(self) -> int:
        return self._sem

    @semantic_id.setter
    def semantic_id(self, v: Any) -> None:
        self._sem = base._int(v, "semantic_id", 0, 2**32 - 1)


class RigidObjectManager:
    __slots__ = ("_objects",)

    def __init__(self) -> None:
        self._objects: dict[str, ManagedRigidObject] = {}

    def get_object_handles(self, search_str: Any = "", contains: Any = True) -> list[str]:
        s, c = _str(search_str, "search_str"), _bool(contains, "contains")
        return [h for h in self._objects if (s in h) == c or not s]

    def get_object_by_handle(self, handle: Any) -> ManagedRigidObject | None:
        return self._objects.get(_str(handle, "handle"))

    def remove_object_by_handle(
        self, handle: Any, delete_object_node: Any = True, delete_visual_node: Any = True
    ) -> None:
        h = _str(handle, "handle")
        _bool(delete_object_node, "delete_object_node")
        _bool(delete_visual_node, "delete_visual_node")
        self._objects.pop(h, None)  # upstream logs an error for an unknown handle


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
        for flag, what in ((reset_sensors, "reset_sensors"), (infer_sensor_states, "infer"),
                           (is_initial, "is_initial")):  # fmt: skip
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
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip


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
        self._cfg, self._scene = config, scene
        self._specs = {s.uuid: s for s in config.agents[0].sensor_specifications}
        for s in self._specs.values():
            if np.any(s.orientation != 0) or s.sensor_subtype is not SensorSubType.PINHOLE:
                raise NotImplementedError("stand-in: pinhole sensors with orientation 0 only")
        self._buffers: dict[str, np.ndarray] = {}
        self._pathfinder = PathFinder()
        self._rom = RigidObjectManager()
        for i, spec in enumerate(scene.get("objects", [])):
            self._rom._objects[spec["handle"]] = ManagedRigidObject(spec["handle"], i, spec)
        self._agent = Agent(self)

    @property
    def pathfinder(self) -> PathFinder:
        self._alive()
        return self._pathfinder

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
                t1 = (obj._lo - origin) / d
                t2 = (obj._hi - origin) / d
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


def module() -> types.ModuleType:
    """A fresh ``habitat_sim`` stand-in with the names listed in the module docstring."""
    mod = base.module()
    agent = types.ModuleType("habitat_sim.agent")
    agent.AgentConfiguration = AgentConfiguration  # type: ignore[attr-defined]
    agent.AgentState = AgentState  # type: ignore[attr-defined]
    agent.__getattr__ = _missing("habitat_sim.agent")  # type: ignore[method-assign]
    nav = types.ModuleType("habitat_sim.nav")
    nav.NavMeshSettings = NavMeshSettings  # type: ignore[attr-defined]
    nav.__getattr__ = _missing("habitat_sim.nav")  # type: ignore[method-assign]
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
    }
    for name, value in names.items():
        setattr(mod, name, value)
    return mod
