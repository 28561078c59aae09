"""The habitat-sim world backend: HSSD scenes with OVMM objects in habitat-sim.

Written against habitat-sim 0.3.3's API as ``docs/habitat_world.md`` records it (sections named
§N below), and tested through a strict stand-in of ``habitat_sim`` and ``magnum``
(``tests/fake_habitat_world.py``): habitat-sim itself is not installable with pip.

* Rendering (§1-2): RGB / depth / instance / semantic frames from dataforge camera poses. Every
  rigid object's ``semantic_id`` is its instance id; the stage (walls, floors) is 0.
* Navigation (§3): reachable positions on the navmesh lattice, geodesics and paths, all through
  :class:`~dataforge.nav.pathfinder.NavmeshPathfinder` and its off-mesh rule.
* Receptacles (§4, :mod:`dataforge.simulators.habitat_receptacles`): each rigid object with
  ``receptacle_mesh_*`` user subconfigs and a category in ``HabitatScene.receptacle_categories``
  is a receptacle; :meth:`HabitatWorld.receptacles` lists them.
* Objects (§5): :meth:`~HabitatWorld.spawn` adds an OVMM template on a receptacle by
  habitat-lab's sequence (sample a point on a mesh surface, lift 0.08 m, random yaw, snap down
  by a ray, reject on contact with anything but the support or deeper than 1 cm), up to
  ``attempts`` times; :meth:`~HabitatWorld.place` moves a spawned object the same way;
  :meth:`~HabitatWorld.remove` and :meth:`~HabitatWorld.reset` take objects out. Placed objects
  are KINEMATIC (FindingDory's ``kinematic_mode``); no physics is stepped (no settling).
* Rooms and the world graph (§6-7): regions of the semantic scene, receptacles and spawned
  objects. :meth:`~HabitatWorld.sees` tests line of sight by a ray.

Frames (§1): dataforge uses AI2-THOR's left-handed frame (yaw 0 faces +z, 90 faces +x, horizon
> 0 looks down); habitat is right-handed, y up, forward -z. Every point crossing the API has its
z mirrored (:func:`to_hab` / :func:`to_df`), and a camera pose (yaw, horizon) becomes the agent
rotation ``R_y(-yaw) . R_x(-horizon)`` (:func:`camera_quaternion`), so habitat's camera forward
and right, mirrored, are dataforge's and images are not mirrored. The sensors sit at the agent
node with no offset: the agent node *is* the camera. An object's dataforge yaw ``a`` is habitat's
``R_y(-a)``.

Determinism: every random draw comes from the ``numpy.random.Generator`` passed in; object
handles (``<template>_:<NNNN>``) and instance ids follow the order of calls.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
from numpy.typing import ArrayLike
from shapely.geometry import Polygon

from dataforge.errors import DatasetError, MissingDependencyError, UsageError
from dataforge.nav.pathfinder import NavmeshPathfinder
from dataforge.nav.space import Point
from dataforge.render.renderer import Frame, StoredFrames
from dataforge.simulators.habitat_receptacles import (
    HabitatReceptacle,
    HabitatSurface,
    Magnum,
    box_corners,
    find_receptacles,
    mirror,
    object_shortname,
    plan_hull,
    read_categories,
    sample_surface_point,
    transform,
    yaw_of,
)
from dataforge.simulators.protocol import Camera, render_one_by_one
from dataforge.world.graph import (
    M2_TO_CM2,
    ObjectNode,
    ReceptacleNode,
    RoomNode,
    SurfaceNode,
    WorldGraph,
    room_of,
)
from dataforge.world.house import HouseObject
from dataforge.world.placement import PlacementResult
from dataforge.world.scene import InstanceIds, SemanticTable

if TYPE_CHECKING:
    from types import ModuleType

    from habitat_sim import Configuration, Simulator
    from habitat_sim.physics import ManagedRigidObject, RayHitInfo

__all__ = [
    "HabitatAgent",
    "HabitatReceptacle",
    "HabitatScene",
    "HabitatSurface",
    "HabitatWorld",
    "camera_quaternion",
    "hfov_deg",
    "object_shortname",
    "read_categories",
    "require",
    "rotate",
    "to_df",
    "to_hab",
]

MISSING = (
    "--sim habitat needs habitat-sim 0.3.3 with Bullet, which is not installed (no Linux wheel "
    "on PyPI): conda install habitat-sim=0.3.3 withbullet headless -c conda-forge -c aihabitat"
)
LIFT_M = 0.08  # habitat-lab's translation_up_offset (§5)
MAX_DEPTH_M = 0.01  # snap_down's max_collision_depth (§5)
STOW_DROP_M = 1000.0  # a stowed (carried) object waits this far below the scene
SENSORS = ("rgb", "depth", "semantic")


def require() -> ModuleType:
    """The ``habitat_sim`` module (``magnum``, which ships with it, imported too), or the
    one-line :class:`MissingDependencyError` (§8)."""
    try:
        import habitat_sim
        import magnum  # noqa: F401
    except ImportError:
        raise MissingDependencyError(MISSING) from None
    return habitat_sim


# -- frames (§1) -----------------------------------------------------------------------------


def to_hab(p: ArrayLike) -> np.ndarray:
    """A dataforge point (x, y, z) in habitat's frame: z mirrored (float64)."""
    a = np.asarray(p, dtype=np.float64).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise UsageError(f"a position must be three finite numbers, got {p!r}")
    return np.array([a[0], a[1], -a[2]])


def to_df(p: ArrayLike) -> np.ndarray:
    """A habitat point in dataforge's frame (z mirrored back; NaNs stay NaN)."""
    a = np.asarray(p, dtype=np.float64).reshape(3)
    return np.array([a[0], a[1], -a[2]])


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of two quaternions in coefficient order [x, y, z, w]."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def axis_quaternion(axis: Sequence[float], angle_rad: float) -> np.ndarray:
    """Rotation by ``angle_rad`` about the unit ``axis``, as [x, y, z, w]."""
    s = math.sin(angle_rad / 2)
    return np.array([axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle_rad / 2)])


def camera_quaternion(yaw_deg: float, horizon_deg: float = 0.0) -> np.ndarray:
    """The habitat agent rotation for a dataforge camera (yaw, horizon), as [x, y, z, w]
    (the coefficient order ``Agent.set_state`` accepts for an ndarray): ``R_y(-yaw) .
    R_x(-horizon)``."""
    qy = axis_quaternion((0.0, 1.0, 0.0), -math.radians(yaw_deg))
    qx = axis_quaternion((1.0, 0.0, 0.0), -math.radians(horizon_deg))
    return quat_mul(qy, qx)


def rotate(q: Sequence[float], v: Sequence[float]) -> np.ndarray:
    """``v`` rotated by the [x, y, z, w] quaternion ``q``."""
    x, y, z, w = (float(c) for c in q)
    r = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
    return r @ np.asarray(v, dtype=np.float64)


def hfov_deg(vfov_deg: float, width: int, height: int) -> float:
    """habitat's horizontal field of view for dataforge's vertical one (§1)."""
    return math.degrees(2 * math.atan(math.tan(math.radians(vfov_deg) / 2) * width / height))


# -- configuration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HabitatAgent:
    """The navmesh agent (§2): radius and height (m), largest step up (m) and steepest slope
    (degrees) it walks. The defaults are habitat-sim's own (``NavMeshSettings.set_defaults``,
    ``AgentConfiguration``); a benchmark passes its own robot."""

    radius: float = 0.1
    height: float = 1.5
    max_climb: float = 0.2
    max_slope: float = 45.0


@dataclass(frozen=True)
class HabitatScene:
    """One scene of a habitat dataset: the dataset config (``*.scene_dataset_config.json``), the
    scene instance handle; ``categories``: object category by template shortname
    (``object_categories.csv``, :func:`read_categories`); ``receptacle_categories``: receptacle
    category by parent template shortname (``hssd-receptacles.csv``,
    ``read_categories(path, receptacles=True)``; furniture without one is no receptacle);
    ``object_dirs``: OVMM object config folders, each loaded once at open. An object without a
    category (either table) has semantic class 0."""

    dataset_config: str
    scene_id: str
    categories: Mapping[str, str] = field(default_factory=dict)
    receptacle_categories: Mapping[str, str] = field(default_factory=dict)
    object_dirs: tuple[str, ...] = ()


def _plane(image: np.ndarray) -> np.ndarray:
    """An H x W sensor image (an H x W x 1 one loses its last axis)."""
    return image[..., 0] if image.ndim == 3 else image


class HabitatWorld:
    """A :class:`~dataforge.simulators.protocol.WorldBackend` over habitat-sim (module docstring).

    ``agent``: the navmesh agent (:class:`HabitatAgent`; habitat-sim's defaults when not
    given). ``sim``: an already built ``habitat_sim.Simulator`` to share (its scene is then
    changed with ``reconfigure`` and it is not closed here); without one, one is built and
    owned. ``pathfinder``: the navmesh's :class:`~dataforge.nav.pathfinder.NavmeshPathfinder`
    (habitat's frame), through which every geodesic, path and lattice point goes; ``nav``: the
    same in dataforge's frame (:class:`NavMeshPaths`)."""

    name = "habitat"

    def __init__(
        self,
        scene: HabitatScene,
        *,
        width: int = 640,
        height: int = 480,
        vfov_deg: float = 90.0,
        agent: HabitatAgent | None = None,
        sim: Simulator | None = None,
        gpu_device_id: int = 0,
    ) -> None:
        hs = require()
        import magnum

        if width <= 0 or height <= 0 or not 0 < vfov_deg < 180:
            raise UsageError(f"bad camera {width}x{height}, vfov {vfov_deg}")
        self._hs = hs
        self._mn = Magnum(magnum)
        self.scene = scene
        self.agent = HabitatAgent() if agent is None else agent
        self.size = (int(width), int(height), float(vfov_deg))
        self.hfov_deg = hfov_deg(vfov_deg, width, height)
        self.ids = InstanceIds()
        names = set(scene.categories.values()) | set(scene.receptacle_categories.values())
        self.semantics = SemanticTable(sorted(names))
        self._positions: dict[tuple[float, tuple[float, ...] | None, bool], np.ndarray] = {}
        self._spawned: list[str] = []  # handles added since open / reset, in order
        self._on: dict[str, tuple[str, int]] = {}  # object -> (receptacle, surface index)
        self._stowed: set[str] = set()  # spawned objects taken out of the scene (stow)
        cfg = self._configuration(gpu_device_id)
        self._owns_sim = sim is None
        if sim is None:
            self.sim = hs.Simulator(cfg)
        else:
            self.sim = sim
            sim.reconfigure(cfg)
        try:
            self._recompute_navmesh()
            otm = self.sim.get_object_template_manager()
            for folder in scene.object_dirs:
                otm.load_configs(str(folder))
            self._label_objects()
            rom = self.sim.get_rigid_object_manager()
            self._scene_handles = frozenset(rom.get_object_handles())
            self._receptacles = {
                r.id: r for r in find_receptacles(rom, scene.receptacle_categories, self._mn)
            }
        except Exception:
            self.close()
            raise

    def _configuration(self, gpu_device_id: int) -> Configuration:
        hs = self._hs
        sim_cfg = hs.SimulatorConfiguration()
        sim_cfg.scene_dataset_config_file = str(self.scene.dataset_config)
        sim_cfg.scene_id = str(self.scene.scene_id)
        sim_cfg.enable_physics = True
        sim_cfg.gpu_device_id = int(gpu_device_id)
        w, h, _ = self.size
        specs = []
        for uuid, kind in zip(SENSORS, ("COLOR", "DEPTH", "SEMANTIC"), strict=True):
            spec = hs.CameraSensorSpec()
            spec.uuid = uuid
            spec.sensor_type = getattr(hs.SensorType, kind)
            spec.sensor_subtype = hs.SensorSubType.PINHOLE
            spec.resolution = [h, w]
            spec.hfov = float(self.hfov_deg)
            spec.position = [0.0, 0.0, 0.0]
            spec.orientation = [0.0, 0.0, 0.0]
            specs.append(spec)
        agent_cfg = hs.agent.AgentConfiguration(
            height=float(self.agent.height),
            radius=float(self.agent.radius),
            sensor_specifications=specs,
        )
        return hs.Configuration(sim_cfg, [agent_cfg])

    def _recompute_navmesh(self) -> None:
        settings = self._hs.nav.NavMeshSettings()
        settings.set_defaults()
        settings.agent_radius = float(self.agent.radius)
        settings.agent_height = float(self.agent.height)
        settings.agent_max_climb = float(self.agent.max_climb)
        settings.agent_max_slope = float(self.agent.max_slope)
        settings.include_static_objects = True
        if not self.sim.recompute_navmesh(self.sim.pathfinder, settings):
            raise UsageError(
                f"habitat-sim could not build a navmesh for scene {self.scene.scene_id!r}"
            )
        self.pathfinder = NavmeshPathfinder(self.sim.pathfinder, habitat_sim=self._hs)
        self._nav = NavMeshPaths(self)
        self._positions.clear()

    def _label_objects(self) -> None:
        """§7 setup 4-5: every rigid object's ``semantic_id`` is its instance id (handles in
        sorted order, so ids are deterministic); the instance -> class table follows."""
        rom = self.sim.get_rigid_object_manager()
        self._lut = np.zeros(1, np.int32)
        for handle in sorted(rom.get_object_handles()):
            self._label(rom.get_object_by_handle(handle))

    def _label(self, obj: ManagedRigidObject) -> None:
        iid = self.ids(obj.handle)
        obj.semantic_id = iid
        if iid >= len(self._lut):
            self._lut = np.concatenate([self._lut, np.zeros(iid + 1 - len(self._lut), np.int32)])
        short = object_shortname(obj.handle)
        category = self.scene.categories.get(short) or self.scene.receptacle_categories.get(short)
        self._lut[iid] = self.semantics.add(category) if category else 0

    # -- rendering ---------------------------------------------------------------------------

    def render(
        self, position: np.ndarray | Sequence[float], yaw: float, horizon: float = 0.0
    ) -> Frame:
        state = self._hs.agent.AgentState()
        state.position = to_hab(position).astype(np.float32)
        state.rotation = camera_quaternion(yaw, horizon)
        self.sim.get_agent(0).set_state(state, reset_sensors=True)
        obs = self.sim.get_sensor_observations()
        # The buffers are flipped views the next draw overwrites (§1): copy them.
        rgb = np.ascontiguousarray(obs["rgb"][..., :3], dtype=np.uint8)
        depth = np.ascontiguousarray(_plane(obs["depth"]), dtype=np.float32)
        instance = _plane(obs["semantic"]).astype(np.int32)  # a copy
        lut = self._lut
        known = instance < len(lut)
        semantic = np.where(known, lut[np.where(known, instance, 0)], 0).astype(np.int32)
        return Frame(rgb=rgb, depth=depth, instance=instance, semantic=semantic)

    def render_stored(self, cameras: Sequence[Camera], out: StoredFrames) -> None:
        render_one_by_one(self, cameras, out)

    # -- navigation (§3) ---------------------------------------------------------------------

    def reachable_positions(
        self,
        step: float = 0.25,
        *,
        start: Sequence[float] | None = None,
        all_components: bool = False,
    ) -> np.ndarray:
        """Navigable points of a lattice of ``step`` metres (dataforge frame, N x 3, sorted by
        z then x), on the largest navmesh island (or ``start``'s; every island with
        ``all_components``). y is the navmesh's height there. Cached per arguments."""
        if not step > 0:
            raise UsageError(f"step must be > 0, got {step}")
        key = (float(step), None if start is None else tuple(to_hab(start)), all_components)
        if key not in self._positions:
            self._positions[key] = self._lattice(float(step), start, all_components)
        return self._positions[key].copy()

    def _lattice(
        self, step: float, start: Sequence[float] | None, all_components: bool
    ) -> np.ndarray:
        if start is not None:
            island = self.pathfinder.island_of(to_hab(start))
            if island is None:  # off the navmesh (the pathfinder's off-mesh rule)
                return np.zeros((0, 3))
        elif all_components:
            island = None
        else:
            island = self.pathfinder.largest_island()
            if island is None:
                return np.zeros((0, 3))
        pts = self.pathfinder.lattice(step, island=island)
        pts[:, 2] *= -1  # to dataforge's frame (the lattice's exact x, z kept)
        return pts[np.lexsort((pts[:, 0], pts[:, 2]))] if len(pts) else pts

    def distances(self, sources: Sequence[Point], targets: Sequence[Point]) -> np.ndarray:
        """Geodesics (m) on the navmesh between dataforge points; ``inf`` when a point is off
        the navmesh or no path joins them (other island): the off-mesh rule of
        :mod:`dataforge.nav.pathfinder`."""
        return self.pathfinder.distances([to_hab(p) for p in sources], [to_hab(p) for p in targets])

    @property
    def nav(self) -> NavMeshPaths:
        """Paths and straight-line clearance on the navmesh (dataforge frame), in the shape a
        :class:`~dataforge.nav.grid.NavGrid` gives them to path followers."""
        return self._nav

    def floor_y(self) -> float:
        """The median height of :meth:`reachable_positions` (0 without any)."""
        pts = self.reachable_positions()
        return float(np.median(pts[:, 1])) if len(pts) else 0.0

    # -- receptacles and templates (§4) ------------------------------------------------------

    def receptacles(self) -> tuple[HabitatReceptacle, ...]:
        """The scene's receptacles (found at open; a removed parent's are gone), by id."""
        rom = self.sim.get_rigid_object_manager()
        here = set(rom.get_object_handles())
        return tuple(r for rid, r in sorted(self._receptacles.items()) if rid in here)

    def templates(self) -> dict[str, str]:
        """Loaded object template shortname -> category, for the templates with a category in
        ``scene.categories``; sorted by shortname."""
        otm = self.sim.get_object_template_manager()
        out = {}
        for handle in otm.get_template_handles():
            short = object_shortname(handle)
            if short in self.scene.categories:
                out[short] = self.scene.categories[short]
        return dict(sorted(out.items()))

    def _template_handle(self, asset_id: str) -> str:
        otm = self.sim.get_object_template_manager()
        found = sorted(
            h for h in otm.get_template_handles(str(asset_id)) if object_shortname(h) == asset_id
        )
        if not found or not otm.get_library_has_handle(found[0]):
            raise UsageError(
                f"no object template {asset_id!r} is loaded (HabitatScene."
                "object_dirs names the OVMM config folders)"
            )
        return found[0]

    def _add(self, template_handle: str) -> ManagedRigidObject:
        """A new rigid object of the template (not yet labelled or placed)."""
        obj = self.sim.get_rigid_object_manager().add_object_by_template_handle(template_handle)
        if obj is None:
            raise UsageError(f"habitat-sim could not add an object of template {template_handle!r}")
        return obj

    def _receptacle(self, receptacle_id: str) -> HabitatReceptacle | None:
        rec = self._receptacles.get(receptacle_id)
        if rec is None or self._object(receptacle_id, missing_ok=True) is None:
            return None
        return rec

    def _object(self, object_id: str, *, missing_ok: bool = False) -> Any:
        obj = self.sim.get_rigid_object_manager().get_object_by_handle(str(object_id))
        if obj is None and not missing_ok:
            raise UsageError(f"no object {object_id!r} in habitat scene {self.scene.scene_id!r}")
        return obj

    # -- objects (§5) ------------------------------------------------------------------------

    def spawn(
        self,
        asset_id: str,
        receptacle_id: str,
        rng: np.random.Generator,
        *,
        attempts: int = 50,
        yaw: bool = True,
        surface: int | None = None,
        **kw: Any,
    ) -> PlacementResult:
        """Add an object of template ``asset_id`` (a shortname) on receptacle ``receptacle_id``
        (a parent handle): §5's sequence with points and yaws drawn from ``rng``, up to
        ``attempts`` times, on the receptacle's mesh surfaces (by area) or only on surface index
        ``surface``. The object ends KINEMATIC with its instance id as ``semantic_id``. On
        failure it is removed again and ``object_id`` is ""."""
        _no_options("spawn", kw)
        handle = self._template_handle(asset_id)
        rec = self._receptacle(receptacle_id)
        if rec is None:
            return _not_a_receptacle(receptacle_id, "")
        obj = self._add(handle)
        result = self._drop(obj, rec, rng, attempts, yaw, surface)
        if not result.ok:
            self.sim.get_rigid_object_manager().remove_object_by_handle(obj.handle)
            return dataclasses.replace(result, object_id="")
        obj.motion_type = self._hs.physics.MotionType.KINEMATIC
        self._label(obj)
        self._spawned.append(obj.handle)
        self._on[obj.handle] = (rec.id, int(result.surface or 0))
        return result

    def place(
        self,
        object_id: str,
        receptacle_id: str,
        rng: np.random.Generator,
        *,
        attempts: int = 50,
        yaw: bool = True,
        surface: int | None = None,
        **kw: Any,
    ) -> PlacementResult:
        """Move the spawned object ``object_id`` (in the scene, or stowed by :meth:`pick`)
        onto ``receptacle_id`` as :meth:`spawn` places a new one. On failure its
        transformation (and motion type) are restored: a stowed object stays stowed."""
        _no_options("place", kw)
        if object_id not in self._spawned:
            raise UsageError(
                f"{object_id!r} is not an object spawned in habitat scene {self.scene.scene_id!r}"
            )
        obj = self._object(object_id)
        rec = self._receptacle(receptacle_id)
        if rec is None:
            return _not_a_receptacle(receptacle_id, object_id)
        if rec.id == object_id:
            raise UsageError(f"cannot place {object_id!r} on itself")
        saved, motion = obj.transformation, obj.motion_type
        # Static and kinematic bodies do not collide with each other (Bullet): test as DYNAMIC.
        obj.motion_type = self._hs.physics.MotionType.DYNAMIC
        result = self._drop(obj, rec, rng, attempts, yaw, surface)
        if not result.ok:
            obj.transformation = saved
            obj.motion_type = motion
            return result
        obj.motion_type = self._hs.physics.MotionType.KINEMATIC
        self._on[object_id] = (rec.id, int(result.surface or 0))
        self._stowed.discard(object_id)
        return result

    def place_at(self, obj: HouseObject, receptacle_id: str) -> PlacementResult:
        """``obj`` at its recorded pose on ``receptacle_id`` (:meth:`place_pose`): the object
        ``obj.id`` moved when this world holds it (spawned, maybe stowed), else a new one of
        template ``obj.asset_id``, which must get the handle ``obj.id`` (a
        :class:`DatasetError` otherwise: the scene is not the one the records were made in)."""
        known = self.holds(obj.id)
        res = self.place_pose(
            obj.id if known else obj.asset_id, receptacle_id, obj.position, obj.rotation
        )
        if res.ok and res.object_id != obj.id:
            raise DatasetError(
                f"habitat-sim named {obj.asset_id} {res.object_id!r} where the "
                f"plan has {obj.id!r}: the scene is not the one the episodes "
                "were drawn in"
            )
        return res

    def place_pose(
        self,
        object_id: str,
        receptacle_id: str,
        position: Sequence[float],
        rotation: Sequence[float],
    ) -> PlacementResult:
        """Put ``object_id`` (a spawned object's handle, moved; otherwise a template shortname,
        added) with its box centre at ``position`` and yaw ``rotation[1]`` (dataforge frame, as
        :meth:`pose` reports them) and test that it rests there: a ray down from the centre
        first hits ``receptacle_id`` within :data:`MAX_DEPTH_M` of the box's bottom, and no
        contact touches another id or is deeper than that. "placed", "no_free_space" (not
        supported there) or "collision"; on failure the world is as before (an added object is
        removed again, a moved one restored)."""
        rec = self._receptacle(receptacle_id)
        moving = object_id in self._spawned
        if rec is None:
            return _not_a_receptacle(receptacle_id, object_id if moving else "")
        obj = self._object(object_id) if moving else self._add(self._template_handle(object_id))
        saved, motion = obj.transformation, obj.motion_type
        obj.motion_type = self._hs.physics.MotionType.DYNAMIC  # contacts need a dynamic body
        mn = self._mn
        obj.rotation = mn.yaw(-math.radians(float(rotation[1])))
        obj.translation = mn.vector(to_hab(position))
        off = to_hab(position) - to_hab(self._center(obj.handle))  # COM vs box centre
        obj.translation = mn.vector(mn.array(obj.translation) + off)
        status = self._rests_on(obj, self._object(rec.id).object_id)
        if status != "placed":
            if moving:
                obj.transformation, obj.motion_type = saved, motion
            else:
                self.sim.get_rigid_object_manager().remove_object_by_handle(obj.handle)
            return PlacementResult(
                status,
                object_id=object_id if moving else "",
                receptacle_id=rec.id,
                kind="mesh",
                message=f"does not rest on {rec.id!r} there",
            )
        obj.motion_type = self._hs.physics.MotionType.KINEMATIC
        if not moving:
            self._label(obj)
            self._spawned.append(obj.handle)
        self._stowed.discard(obj.handle)
        self._on[obj.handle] = (rec.id, 0)
        pos, rot = self.pose(obj.handle)
        return PlacementResult(
            "placed",
            object_id=obj.handle,
            receptacle_id=rec.id,
            position=pos,
            rotation=rot,
            attempts=1,
            kind="mesh",
        )

    def _rests_on(self, obj: ManagedRigidObject, support_id: int) -> str:
        """Whether ``obj`` rests where it is on ``support_id`` (:meth:`place_pose`)."""
        mn = self._mn
        lo, hi = mn.range(obj.aabb)
        corners = transform(mn.matrix(obj.transformation), box_corners(lo, hi))
        first = self._first_hit_below(obj, to_hab(self._center(obj.handle)))
        if first is None or first.object_id != support_id:
            return "no_free_space"
        if abs(float(mn.array(first.point)[1]) - float(corners[:, 1].min())) > MAX_DEPTH_M:
            return "no_free_space"
        return "placed" if self._contacts_ok(obj, support_id) else "collision"

    def _first_hit_below(self, obj: ManagedRigidObject, origin: np.ndarray) -> RayHitInfo | None:
        """The first hit of a ray cast straight down from ``origin`` (habitat frame) that is
        not ``obj`` itself, or None."""
        mn = self._mn
        ray = self._hs.geo.Ray(mn.vector(origin), mn.vector((0.0, -1.0, 0.0)))
        return next((h for h in self.sim.cast_ray(ray).hits if h.object_id != obj.object_id), None)

    def _contacts_ok(self, obj: ManagedRigidObject, support_id: int) -> bool:
        """After a discrete collision pass: ``obj`` touches nothing but ``support_id``, and
        nothing deeper than :data:`MAX_DEPTH_M` (snap_down's contact test, §5)."""
        self.sim.perform_discrete_collision_detection()
        for cp in self.sim.get_physics_contact_points():
            ids = (cp.object_id_a, cp.object_id_b)
            if obj.object_id not in ids:
                continue
            other = ids[1] if ids[0] == obj.object_id else ids[0]
            if other != support_id or cp.contact_distance < -MAX_DEPTH_M:
                return False
        return True

    def _drop(
        self,
        obj: ManagedRigidObject,
        rec: HabitatReceptacle,
        rng: np.random.Generator,
        attempts: int,
        yaw: bool,
        surface: int | None,
    ) -> PlacementResult:
        """Up to ``attempts`` tries of: a point on a surface, lifted :data:`LIFT_M`, a yaw,
        :meth:`_snap_down` (§5). The object stays where the last try left it."""
        if attempts < 1:
            raise UsageError(f"attempts must be >= 1, got {attempts}")
        surfaces: Sequence[HabitatSurface] = rec.surfaces
        if surface is not None:
            if not 0 <= surface < len(rec.surfaces):
                raise UsageError(
                    f"receptacle {rec.id!r} has no surface {surface} ({len(rec.surfaces)} surfaces)"
                )
            surfaces = (rec.surfaces[surface],)
        support = self._object(rec.id).object_id
        mn = self._mn
        status = "no_free_space"
        for k in range(1, attempts + 1):
            index, point = sample_surface_point(surfaces, rng)
            yaw_deg = float(rng.uniform(0.0, 360.0)) if yaw else 0.0
            obj.rotation = mn.yaw(-math.radians(yaw_deg))
            obj.translation = mn.vector(to_hab(point) + np.array([0.0, LIFT_M, 0.0]))
            status = self._snap_down(obj, support)
            if status == "placed":
                position, rotation = self.pose(obj.handle)  # as the simulator holds it
                return PlacementResult(
                    "placed",
                    object_id=obj.handle,
                    receptacle_id=rec.id,
                    position=position,
                    rotation=rotation,
                    attempts=k,
                    surface=index if surface is None else surface,
                    kind="mesh",
                )
        return PlacementResult(
            status,
            object_id=obj.handle,
            receptacle_id=rec.id,
            attempts=attempts,
            message=f"no spot on {rec.id!r} after {attempts} attempts (last: {status})",
            kind="mesh",
        )

    def _snap_down(self, obj: ManagedRigidObject, support_id: int) -> str:
        """habitat-lab's ``snap_down`` with one support (§5): a ray down from the COM must first
        hit (self hits skipped) the support; the box's lowest corner is put on the hit point;
        then any contact of the object with another id, or deeper than :data:`MAX_DEPTH_M`,
        fails (and the translation is restored). "placed", "no_free_space" or "collision"."""
        mn = self._mn
        m = mn.matrix(obj.transformation)
        lo_a, hi_a = mn.range(obj.aabb)
        lo_c, hi_c = mn.range(obj.collision_shape_aabb)
        corners = transform(m, box_corners(np.minimum(lo_a, lo_c), np.maximum(hi_a, hi_c)))
        com = mn.array(obj.translation)
        base = float(corners[:, 1].min()) - com[1]  # lowest corner relative to the COM
        first = self._first_hit_below(obj, com)
        if first is None or first.object_id != support_id:
            return "no_free_space"
        cached = obj.translation
        hit = mn.array(first.point)
        obj.translation = mn.vector((com[0], hit[1] - base, com[2]))
        if not self._contacts_ok(obj, support_id):
            obj.translation = cached
            return "collision"
        return "placed"

    def stow(self, object_id: str) -> None:
        """Take the spawned object ``object_id`` out of the scene without removing it (a
        carried object: :data:`STOW_DROP_M` below the floor, where no camera, ray or contact
        meets it), so that :meth:`place_at` puts the same handle back; removing and adding
        again would give another handle. It leaves :meth:`spawned` and the world graph."""
        if object_id not in self.spawned():
            raise UsageError(
                f"{object_id!r} is not an object spawned in habitat scene {self.scene.scene_id!r}"
            )
        obj = self._object(object_id)
        obj.motion_type = self._hs.physics.MotionType.KINEMATIC
        obj.translation = self._mn.vector(
            self._mn.array(obj.translation) - np.array([0.0, STOW_DROP_M, 0.0])
        )
        self._on.pop(object_id, None)
        self._stowed.add(object_id)

    def spawn_stowed(self, asset_id: str) -> str:
        """Add an object of template ``asset_id`` straight into the stowed state (a carried
        object rebuilt for a stored world: it takes the next handle as any addition does)."""
        obj = self._add(self._template_handle(asset_id))
        self._label(obj)
        self._spawned.append(obj.handle)
        self.stow(obj.handle)
        return str(obj.handle)

    def remove(self, object_id: str) -> None:
        """Remove the rigid object with handle ``object_id`` (its instance id stays taken)."""
        self._object(object_id)
        self.sim.get_rigid_object_manager().remove_object_by_handle(object_id)
        self._forget(object_id)

    def _forget(self, object_id: str) -> None:
        if object_id in self._spawned:
            self._spawned.remove(object_id)
        self._stowed.discard(object_id)
        self._on.pop(object_id, None)
        for other, (rid, _) in list(self._on.items()):
            if rid == object_id:  # what rested on a removed receptacle rests on nothing
                del self._on[other]

    def reset(self) -> None:
        """Remove every rigid object that was not in the scene at open (FindingDory's per-episode
        reset, §2); instance ids stay taken. Scene objects removed earlier stay removed."""
        rom = self.sim.get_rigid_object_manager()
        for handle in rom.get_object_handles():
            if handle not in self._scene_handles:
                rom.remove_object_by_handle(handle)
        self._spawned.clear()
        self._on.clear()
        self._stowed.clear()

    def spawned(self) -> tuple[str, ...]:
        """Handles of the objects added since open / :meth:`reset` (and not removed), in order of
        addition."""
        return tuple(h for h in self._spawned if h not in self._stowed)

    def holds(self, object_id: str) -> bool:
        """Whether ``object_id`` is an object added since open / :meth:`reset`, stowed or not."""
        return object_id in self._spawned

    def center(self, object_id: str) -> tuple[float, float, float]:
        """The world centre of ``object_id``'s box (dataforge frame)."""
        c = self._center(object_id)
        return (float(c[0]), float(c[1]), float(c[2]))

    def _center(self, object_id: str) -> np.ndarray:
        """The world centre of ``object_id``'s box (``transformation`` applied to
        ``aabb.center()``), dataforge frame."""
        obj = self._object(object_id)
        lo, hi = self._mn.range(obj.aabb)
        return to_df(transform(self._mn.matrix(obj.transformation), (lo + hi) / 2))

    def pose(self, object_id: str) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """(box centre, (0, yaw, 0)) of ``object_id`` in dataforge's frame, rounded to 6 places
        (the yaw in degrees, [0, 360), of the rotation about +y; tilt is not reported)."""
        obj = self._object(object_id)
        c = self._center(object_id)
        yaw = yaw_of(self._mn.matrix(obj.transformation))
        return (round(c[0], 6), round(c[1], 6), round(c[2], 6)), (0.0, yaw, 0.0)

    def has(self, object_id: str) -> bool:
        """Whether ``object_id`` is an object added since open / :meth:`reset` and in the scene
        (not stowed); the scene's own objects are furniture."""
        return object_id in self.spawned()

    def position(self, object_id: str) -> tuple[float, float, float]:
        """``object_id``'s box centre as :meth:`pose` reports it."""
        return self.pose(object_id)[0]

    def pick(self, object_id: str) -> None:
        """A pick: the object is stowed rather than removed (:meth:`stow`), so that it keeps
        its handle when placed again (:meth:`place_at`)."""
        self.stow(object_id)

    def carry(
        self, object_id: str | None, offset: Sequence[float] = (0.0, -0.5, 0.5), yaw: float = 0.0
    ) -> None:
        """Not drawn in habitat-sim: a carried object is stowed out of view."""

    def appearance(self, object_id: str, asset_id: str | None = None) -> None:
        """None: HSSD / OVMM meshes, whose colours or shapes nothing here reads."""
        return None

    def open(self, object_id: str) -> bool:
        """HSSD furniture is rigid (§7): nothing opens, always False."""
        return False

    def open_surface(self, object_id: str, surface: int) -> str | None:
        """Nothing opens (:meth:`open`): None."""
        return None

    def reclose(self, was: HouseObject) -> list[str]:
        """Nothing opens (:meth:`open`): nothing to shut."""
        return []

    # -- line of sight ---------------------------------------------------------------------

    def sees(self, eye: Sequence[float], target: Sequence[float], target_id: str) -> bool:
        """Whether ``target`` (a dataforge point on object ``target_id``) is visible from
        ``eye``: the first ray hit from ``eye`` towards it is ``target_id``, or no hit is
        closer than the target less 1 cm (§7 "Line of sight")."""
        oid = self._object(target_id).object_id
        o, t = to_hab(eye), to_hab(target)
        dist = float(np.linalg.norm(t - o))
        if dist < 1e-9:
            return True
        ray = self._hs.geo.Ray(self._mn.vector(o), self._mn.vector((t - o) / dist))
        hits = self.sim.cast_ray(ray, max_distance=dist + 1.0).hits
        if not hits:
            return True
        first = hits[0]
        return bool(first.object_id == oid or first.ray_distance >= dist - 0.01)

    # -- world graph (§6-7) ----------------------------------------------------------------

    def rooms(self) -> tuple[RoomNode, ...]:
        """The semantic scene's regions as rooms (``region_<id>``, ``category.name()``, the
        poly loop mirrored to dataforge's plan (x, z)), sorted by id."""
        out = []
        for region in self.sim.semantic_scene.regions:
            poly = tuple((float(p[0]), -float(p[1])) for p in region.poly_loop_points)
            area = float(Polygon(poly).area) if len(poly) >= 3 else 0.0
            out.append(
                RoomNode(f"region_{region.id}", str(region.category.name()), poly, round(area, 6))
            )
        return tuple(sorted(out, key=lambda r: r.id))

    def world_graph(self) -> WorldGraph:
        """Rooms (:meth:`rooms`), a :class:`ReceptacleNode` per receptacle (one
        :class:`SurfaceNode` per mesh surface, ``element_id`` its unique name) and an
        :class:`ObjectNode` per spawned object (parent: the receptacle it was last placed on;
        room: the region whose plan polygon holds its centre). ``house`` is the scene id."""
        rooms = self.rooms()
        polygons = {r.id: Polygon(r.polygon) for r in rooms if len(r.polygon) >= 3}
        footprints = {h: self._footprint(h) for h in self.spawned()}
        receptacles = []
        for rec in self.receptacles():
            kids = sorted(h for h, (rid, _) in self._on.items() if rid == rec.id)
            nodes = []
            for i, surf in enumerate(rec.surfaces):
                here = tuple(sorted(h for h in kids if self._on[h][1] == i))
                nodes.append(_surface_node(i, surf, [footprints[h] for h in here], here))
            receptacles.append(
                ReceptacleNode(
                    id=rec.id,
                    object_type=rec.category,
                    aabb=rec.aabb,
                    top_area_cm2=round(sum(n.area_cm2 for n in nodes), 3),
                    free_area_cm2=round(sum(n.free_area_cm2 for n in nodes), 3),
                    child_ids=tuple(kids),
                    on_top_ids=tuple(kids),
                    parent_id=None,
                    surfaces=tuple(nodes),
                )
            )
        objects = []
        for handle in sorted(self.spawned()):
            position, rotation = self.pose(handle)
            parent, index = self._on.get(handle, (None, None))
            short = object_shortname(handle)
            objects.append(
                ObjectNode(
                    id=handle,
                    object_type=self.scene.categories.get(short, ""),
                    asset_id=short,
                    position=position,
                    rotation=rotation,
                    parent_id=parent,
                    room_id=room_of(position, polygons),
                    surface=index,
                    surface_kind=None if parent is None else "mesh",
                )
            )
        return WorldGraph(str(self.scene.scene_id), rooms, tuple(receptacles), tuple(objects))

    def _footprint(self, object_id: str) -> Polygon:
        obj = self._object(object_id)
        corners = transform(
            self._mn.matrix(obj.transformation), box_corners(*self._mn.range(obj.aabb))
        )
        return plan_hull(mirror(corners))

    def close(self) -> None:
        sim, self.sim = getattr(self, "sim", None), None
        if sim is not None and self._owns_sim:
            sim.close(destroy=True)


class NavMeshPaths:
    """:attr:`HabitatWorld.nav`, a :class:`~dataforge.nav.space.NavSpace`: ``sample``,
    ``navigable``, ``shortest_path``, ``segment_clear``, ``distances`` and ``distance`` over the
    navmesh (dataforge frame), what samplers, ``GreedyFollower`` and the goal checks ask of a
    navigable space; each is the world's
    :class:`~dataforge.nav.pathfinder.NavmeshPathfinder` with the frames converted."""

    def __init__(self, world: HabitatWorld) -> None:
        self.world = world

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """A random navigable point (the pathfinder's stream: :meth:`NavmeshPathfinder.sample`)."""
        return to_df(self.world.pathfinder.sample(rng))

    def navigable(self, point: Point) -> bool:
        return self.world.pathfinder.navigable(to_hab(point))

    def distances(self, sources: Sequence[Point], targets: Sequence[Point]) -> np.ndarray:
        return self.world.distances(sources, targets)

    def distance(self, a: Point, b: Point) -> float:
        return float(self.world.distances([a], [b])[0, 0])

    def shortest_path(self, a: Point, b: Point) -> list[np.ndarray]:
        """Waypoints of the pathfinder's shortest path from ``a`` to ``b`` (both snapped to the
        navmesh); ``[]`` when either is off it or there is no path."""
        return [to_df(p) for p in self.world.pathfinder.shortest_path(to_hab(a), to_hab(b))]

    def segment_clear(self, p: Point, q: Point) -> bool:
        """Whether the straight segment ``p`` -> ``q`` stays on the navmesh: every sample
        :data:`~dataforge.nav.pathfinder.SEGMENT_STEP_M` apart (and both ends) is navigable at
        ``p``'s height."""
        return self.world.pathfinder.segment_clear(to_hab(p), to_hab(q))


def _no_options(member: str, kw: Mapping[str, Any]) -> None:
    if kw:
        raise UsageError(f"habitat-sim's {member} takes no {', '.join(sorted(kw))}")


def _not_a_receptacle(receptacle_id: str, object_id: str) -> PlacementResult:
    return PlacementResult(
        "not_a_receptacle",
        object_id=object_id,
        receptacle_id=receptacle_id,
        message=f"{receptacle_id!r} is not a receptacle of this scene "
        "(no mesh receptacle with a category)",
    )


def _surface_node(
    index: int, surf: HabitatSurface, resting: list[Polygon], ids: tuple[str, ...]
) -> SurfaceNode:
    """A mesh surface as a :class:`SurfaceNode`; free area = area minus the plan footprints of
    the objects resting on it (clipped to the surface)."""
    area = surf.area_m2 * M2_TO_CM2
    used = 0.0
    if resting:
        shapes = [p for p in resting if not p.is_empty]
        if shapes:
            used = shapely.union_all(shapes).intersection(surf.polygon()).area * M2_TO_CM2
    return SurfaceNode(
        index=index,
        kind="mesh",
        element_id=surf.name,
        y=round(surf.y, 4),
        area_cm2=round(area, 3),
        free_area_cm2=round(max(area - used, 0.0), 3),
        clearance_m=None,
        needs_open=False,
        object_ids=ids,
    )
