"""The habitat-sim world backend (first slice): HSSD scenes rendered and navigated in habitat-sim.

Written against habitat-sim 0.3.3's API as ``docs/habitat_world.md`` records it (sections named
§N below). This slice builds the simulator, renders RGB / depth / instance / semantic frames from
dataforge camera poses, lists reachable positions on the navmesh and measures geodesics;
``remove`` and ``open`` work, ``spawn`` / ``place`` / ``world_graph`` are not built yet and say so
in one line (they need the receptacle and snap-down steps of §4-5).

Frames (§1): dataforge uses AI2-THOR's left-handed frame (yaw 0 faces +z, 90 faces +x, horizon
> 0 looks down); habitat is right-handed, y up, forward -z. Every point crossing the API has its
z mirrored (:func:`to_hab` / :func:`to_df`), and a camera pose (yaw, horizon) becomes the agent
rotation ``R_y(-yaw) . R_x(-horizon)`` (:func:`camera_quaternion`), so habitat's camera forward
and right, mirrored, are dataforge's and images are not mirrored. The sensors sit at the agent
node with no offset: the agent node *is* the camera.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.render.renderer import Frame
from dataforge.world.graph import WorldGraph
from dataforge.world.placement import PlacementResult
from dataforge.world.scene import InstanceIds, SemanticTable

MISSING = (
    "--sim habitat needs habitat-sim 0.3.3 with Bullet, which is not installed (no Linux wheel "
    "on PyPI): conda install habitat-sim=0.3.3 withbullet headless -c conda-forge -c aihabitat"
)
NOT_BUILT = (
    "HabitatWorld.{name} is not built yet: object placement on HSSD receptacles "
    "(see docs/habitat_world.md §4-5) is a later step"
)
SENSORS = ("rgb", "depth", "semantic")


def require() -> Any:
    """The ``habitat_sim`` module, or the one-line :class:`MissingDependencyError` (§8)."""
    try:
        import habitat_sim
    except ImportError:
        raise MissingDependencyError(MISSING) from None
    return habitat_sim


# -- frames (§1) -----------------------------------------------------------------------------


def to_hab(p: Sequence[float]) -> np.ndarray:
    """A dataforge point (x, y, z) in habitat's frame: z mirrored (float64)."""
    a = np.asarray(p, dtype=np.float64).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise UsageError(f"a position must be three finite numbers, got {p!r}")
    return np.array([a[0], a[1], -a[2]])


def to_df(p: Sequence[float]) -> np.ndarray:
    """A habitat point in dataforge's frame (z mirrored back; NaNs stay NaN)."""
    a = np.asarray(p, dtype=np.float64).reshape(3)
    return np.array([a[0], a[1], -a[2]])


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of two quaternions in coefficient order [x, y, z, w]."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ])  # fmt: skip


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
    r = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip
    return r @ np.asarray(v, dtype=np.float64)


def hfov_deg(vfov_deg: float, width: int, height: int) -> float:
    """habitat's horizontal field of view for dataforge's vertical one (§1)."""
    return math.degrees(2 * math.atan(math.tan(math.radians(vfov_deg) / 2) * width / height))


# -- configuration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HabitatAgent:
    """The navmesh agent (§2): FindingDory's Stretch by default."""

    radius: float = 0.25
    height: float = 1.41
    max_climb: float = 0.01
    max_slope: float = 5.0


STRETCH = HabitatAgent()


@dataclass(frozen=True)
class HabitatScene:
    """One scene of a habitat dataset: the dataset config (``*.scene_dataset_config.json``), the
    scene instance handle, and object categories by template shortname (the CSVs of §4, read by
    the caller; an object without a category has semantic class 0)."""

    dataset_config: str
    scene_id: str
    categories: Mapping[str, str] = field(default_factory=dict)


def _plane(image: np.ndarray) -> np.ndarray:
    """An H x W sensor image (an H x W x 1 one loses its last axis)."""
    return image[..., 0] if image.ndim == 3 else image


def object_shortname(handle: str) -> str:
    """habitat-lab's ``object_shortname_from_handle`` (§4)."""
    return handle.split("/")[-1].split(".")[0].split("_:")[0]


class HabitatWorld:
    """A :class:`~dataforge.world.backends.WorldBackend` over habitat-sim (module docstring).

    ``sim``: an already built ``habitat_sim.Simulator`` to share (its scene is then changed with
    ``reconfigure`` and it is not closed here); without one, one is built and owned."""

    name = "habitat"

    def __init__(
        self,
        scene: HabitatScene,
        *,
        width: int = 640,
        height: int = 480,
        vfov_deg: float = 90.0,
        agent: HabitatAgent = STRETCH,
        sim: Any = None,
        gpu_device_id: int = 0,
    ) -> None:
        hs = require()
        if width <= 0 or height <= 0 or not 0 < vfov_deg < 180:
            raise UsageError(f"bad camera {width}x{height}, vfov {vfov_deg}")
        self._hs = hs
        self.scene = scene
        self.agent = agent
        self.size = (int(width), int(height), float(vfov_deg))
        self.hfov_deg = hfov_deg(vfov_deg, width, height)
        self.ids = InstanceIds()
        self.semantics = SemanticTable(sorted(set(scene.categories.values())))
        self._positions: dict[tuple[float, Any, bool], np.ndarray] = {}
        cfg = self._configuration(gpu_device_id)
        self._owns_sim = sim is None
        if sim is None:
            self.sim = hs.Simulator(cfg)
        else:
            self.sim = sim
            sim.reconfigure(cfg)
        try:
            self._recompute_navmesh()
            self._label_objects()
        except Exception:
            self.close()
            raise

    def _configuration(self, gpu_device_id: int) -> Any:
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
            raise UsageError(f"habitat-sim could not build a navmesh for scene "
                             f"{self.scene.scene_id!r}")  # fmt: skip
        self._positions.clear()

    def _label_objects(self) -> None:
        """§7 setup 4-5: every rigid object's ``semantic_id`` is its instance id (handles in
        sorted order, so ids are deterministic); the instance -> class table follows."""
        rom = self.sim.get_rigid_object_manager()
        self._lut = np.zeros(1, np.int32)
        for handle in sorted(rom.get_object_handles()):
            self._label(rom.get_object_by_handle(handle))

    def _label(self, obj: Any) -> None:
        iid = self.ids(obj.handle)
        obj.semantic_id = iid
        if iid >= len(self._lut):
            self._lut = np.concatenate([self._lut, np.zeros(iid + 1 - len(self._lut), np.int32)])
        category = self.scene.categories.get(object_shortname(obj.handle))
        self._lut[iid] = self.semantics.add(category) if category else 0

    # -- rendering ---------------------------------------------------------------------------

    def render(self, position: Sequence[float], yaw: float, horizon: float = 0.0) -> Frame:
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

    def _lattice(self, step: float, start: Any, all_components: bool) -> np.ndarray:
        pf = self.sim.pathfinder
        keep = None
        if start is not None:
            snapped = np.asarray(pf.snap_point(to_hab(start).astype(np.float32)), np.float64)
            if not np.all(np.isfinite(snapped)):
                return np.zeros((0, 3))
            keep = pf.get_island(snapped.astype(np.float32))
        elif not all_components:
            n = pf.num_islands
            if n == 0:
                return np.zeros((0, 3))
            keep = max(range(n), key=lambda k: (pf.island_area(k), -k))
        lo, hi = (np.asarray(v, np.float64) for v in pf.get_bounds())
        xs = np.arange(math.ceil(lo[0] / step - 1e-9), math.floor(hi[0] / step + 1e-9) + 1) * step
        zs = np.arange(math.ceil(lo[2] / step - 1e-9), math.floor(hi[2] / step + 1e-9) + 1) * step
        out = []
        for z in zs:
            for x in xs:
                q = np.array([x, lo[1], z], np.float32)
                p = np.asarray(pf.snap_point(q), np.float64)
                if not np.all(np.isfinite(p)) or math.hypot(p[0] - x, p[2] - z) > 1e-2:
                    continue
                q = np.array([x, p[1], z], np.float32)
                if not pf.is_navigable(q):
                    continue
                if keep is not None and pf.get_island(q) != keep:
                    continue
                out.append(to_df([x, float(p[1]), z]))  # the lattice's exact x, z
        pts = np.array(out, dtype=np.float64).reshape(-1, 3)
        return pts[np.lexsort((pts[:, 0], pts[:, 2]))] if len(pts) else pts

    def distances(self, sources: Sequence[Any], targets: Sequence[Any]) -> np.ndarray:
        """Geodesics (m) on the navmesh between dataforge points; ``inf`` when a point does not
        snap to the navmesh or no path joins them (other island)."""
        from dataforge.nav.oracle import pathfinder_distances

        return pathfinder_distances(self._hs, self.sim.pathfinder,
                                    [to_hab(p) for p in sources],
                                    [to_hab(p) for p in targets])  # fmt: skip

    # -- objects -----------------------------------------------------------------------------

    def open(self, object_id: str) -> bool:
        """HSSD furniture is rigid (§7): nothing opens, always False."""
        return False

    def spawn(
        self, asset_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        raise UsageError(NOT_BUILT.format(name="spawn"))

    def place(
        self, object_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        raise UsageError(NOT_BUILT.format(name="place"))

    def remove(self, object_id: str) -> None:
        """Remove the rigid object with handle ``object_id`` (its instance id stays taken)."""
        rom = self.sim.get_rigid_object_manager()
        if object_id not in rom.get_object_handles():
            raise UsageError(f"no object {object_id!r} in habitat scene {self.scene.scene_id!r}")
        rom.remove_object_by_handle(object_id)

    def world_graph(self) -> WorldGraph:
        raise UsageError(NOT_BUILT.format(name="world_graph"))

    def close(self) -> None:
        sim, self.sim = getattr(self, "sim", None), None
        if sim is not None and self._owns_sim:
            sim.close(destroy=True)
