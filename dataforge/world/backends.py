"""One interface to a house-scale world, two backends: the embedded default and AI2-THOR.

:class:`WorldBackend` is what pipelines use: render RGB / depth / instance / semantic from a
camera (position, yaw, horizon; AI2-THOR's conventions), list reachable positions, measure
geodesics, open containers, spawn / place / remove objects, and log the world graph.

- ``embedded`` (default): :class:`EmbeddedWorld` — the house's boxes rendered on the CPU
  (``dataforge.render``), geodesics on an occupancy grid (``dataforge.nav.grid``), placement
  by ``dataforge.world.placement``. Needs nothing but pip.
- ``ai2thor``: :class:`ThorWorld` — ``ai2thor.controller.Controller(scene=house)`` (which runs
  ``CreateHouse``), a third-party camera for arbitrary poses, ``GetReachablePositions``,
  ``GetShortestPathToPoint``, ``OpenObject``, ``SpawnAsset`` / ``PlaceObjectAtPoint`` /
  ``RemoveFromScene``. Poses for placements are chosen by the same placement code, then applied
  in the simulator. Without ai2thor or its Unity build it stops with one line saying so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.render.renderer import Frame
from dataforge.world.assets import AssetCatalogue
from dataforge.world.graph import WorldGraph
from dataforge.world.house import House
from dataforge.world.placement import PlacementResult, World
from dataforge.world.scene import InstanceIds, SemanticTable

SIMS = ("embedded", "ai2thor")


class WorldBackend(Protocol):
    name: str

    def render(self, position: Sequence[float], yaw: float, horizon: float = 0.0) -> Frame: ...

    def reachable_positions(self) -> np.ndarray: ...

    def distances(self, sources: Sequence[Any], targets: Sequence[Any]) -> np.ndarray: ...

    def open(self, object_id: str) -> bool: ...

    def spawn(
        self, asset_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult: ...

    def place(
        self, object_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult: ...

    def remove(self, object_id: str) -> None: ...

    def world_graph(self) -> WorldGraph: ...

    def close(self) -> None: ...


def open_world(
    sim: str,
    house: House,
    catalogue: AssetCatalogue,
    *,
    width: int = 640,
    height: int = 480,
    vfov_deg: float = 90.0,
    **kw: Any,
) -> WorldBackend:
    """The world backend named ``sim`` (one of :data:`SIMS`) for ``house``."""
    if sim == "embedded":
        return EmbeddedWorld(house, catalogue, width=width, height=height, vfov_deg=vfov_deg)
    if sim == "ai2thor":
        return ThorWorld(house, catalogue, width=width, height=height, vfov_deg=vfov_deg, **kw)
    raise UsageError(f"unknown --sim {sim!r}; choose one of {', '.join(SIMS)}")


class EmbeddedWorld:
    """The default backend (see the module docstring)."""

    name = "embedded"

    def __init__(
        self,
        house: House,
        catalogue: AssetCatalogue,
        *,
        width: int = 640,
        height: int = 480,
        vfov_deg: float = 90.0,
        agent_radius: float = 0.2,
    ) -> None:
        self.catalogue = catalogue
        self.world = World(house, catalogue)
        self.ids = InstanceIds()
        self.size = (width, height, vfov_deg)
        self.agent_radius = agent_radius
        self._renderer: Any = None
        self._scene: Any = None
        self._uploaded: Any = None
        self._grid: Any = None

    @property
    def scene(self) -> Any:
        from dataforge.world.scene import house_scene

        if self._scene is None:
            self._scene = house_scene(self.world.house(), self.catalogue, ids=self.ids)
        return self._scene

    @property
    def grid(self) -> Any:
        from dataforge.world.navigation import house_nav_grid

        if self._grid is None:
            self._grid = house_nav_grid(self.world.house(), self.catalogue,
                                        agent_radius=self.agent_radius)  # fmt: skip
        return self._grid

    def _changed(self) -> None:
        self._scene = None
        self._grid = None

    def render(self, position: Sequence[float], yaw: float, horizon: float = 0.0) -> Frame:
        from dataforge.render import Renderer, thor_camera_pose

        if self._renderer is None:
            w, h, fov = self.size
            self._renderer = Renderer(w, h, vfov_deg=fov)
        if self._uploaded is None or self._uploaded is not self._scene:
            self._renderer.set_scene(self.scene.scene)
            self._uploaded = self._scene
        return self._renderer.render(thor_camera_pose(position, yaw, horizon))

    def reachable_positions(self) -> np.ndarray:
        return self.grid.reachable_positions()

    def distances(self, sources: Sequence[Any], targets: Sequence[Any]) -> np.ndarray:
        return self.grid.distances(sources, targets)

    def open(self, object_id: str) -> bool:
        ok = self.world.open(object_id)
        self._changed()
        return ok

    def spawn(
        self, asset_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        res = self.world.spawn(asset_id, receptacle_id, rng, **kw)
        self._changed()
        return res

    def place(
        self, object_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        res = self.world.place(object_id, receptacle_id, rng, **kw)
        self._changed()
        return res

    def remove(self, object_id: str) -> None:
        self.world.remove(object_id)
        self._changed()

    def world_graph(self) -> WorldGraph:
        return self.world.graph()

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.release()
            self._renderer = None


# -- AI2-THOR ------------------------------------------------------------------------------


def thor_vector(p: Sequence[float]) -> dict[str, float]:
    return {"x": float(p[0]), "y": float(p[1]), "z": float(p[2])}


def thor_camera_args(position: Sequence[float], yaw: float, horizon: float) -> dict[str, Any]:
    """``AddThirdPartyCamera`` / ``UpdateThirdPartyCamera`` arguments for our camera: AI2-THOR
    camera rotation x is the horizon (down positive), y the yaw."""
    return {
        "position": thor_vector(position),
        "rotation": {"x": float(horizon), "y": float(yaw), "z": 0.0},
    }


def path_length(corners: Sequence[Mapping[str, float]]) -> float:
    """Length of a ``GetShortestPathToPoint`` path in the floor plane (x, z)."""
    pts = np.array([[c["x"], c["z"]] for c in corners], dtype=np.float64).reshape(-1, 2)
    return float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()) if len(pts) > 1 else 0.0


def ids_from_colors(
    segmentation: np.ndarray,
    color_to_object_id: Mapping[tuple[int, int, int], str],
    ids: InstanceIds,
    semantics: SemanticTable,
    type_of: Mapping[str, str],
) -> tuple[np.ndarray, np.ndarray]:
    """AI2-THOR's colour-coded instance segmentation -> our instance and semantic id images.

    Object ids name their element (``wall|...``, ``room|...`` floors, object ids); types come
    from ``type_of`` (object metadata), walls and floors are the ``Wall`` / ``Floor`` classes.
    Colours with no object are 0.
    """
    seg = np.asarray(segmentation, dtype=np.uint8)
    key = (seg[..., 0].astype(np.int64) << 16) | (seg[..., 1].astype(np.int64) << 8) | seg[..., 2]
    instance = np.zeros(seg.shape[:2], np.int32)
    semantic = np.zeros(seg.shape[:2], np.int32)
    for k in np.unique(key):
        color = (int(k >> 16) & 255, int(k >> 8) & 255, int(k) & 255)
        oid = color_to_object_id.get(color)
        if oid is None:
            continue
        if oid.startswith("wall"):
            label, element = "Wall", oid
        elif oid.startswith("room|") or oid.startswith("Floor"):
            label, element = "Floor", f"floor:{oid}"
        else:
            label, element = type_of.get(oid, oid.split("|")[0]), oid
        mask = key == k
        instance[mask] = ids(element)
        semantic[mask] = semantics.add(label)
    return instance, semantic


class ThorWorld:
    """The AI2-THOR backend (see the module docstring)."""

    name = "ai2thor"

    def __init__(
        self,
        house: House,
        catalogue: AssetCatalogue,
        *,
        width: int = 640,
        height: int = 480,
        vfov_deg: float = 90.0,
        controller: Any = None,
        **controller_kw: Any,
    ) -> None:
        self.catalogue = catalogue
        self.world = World(house, catalogue)
        self.ids = InstanceIds()
        self.semantics = SemanticTable.for_catalogue(catalogue)
        self.size = (width, height, vfov_deg)
        self.controller = controller or self._start(house, width, height, vfov_deg, controller_kw)
        self._camera_added = False

    @staticmethod
    def _start(house: House, width: int, height: int, fov: float, kw: dict[str, Any]) -> Any:
        try:
            from ai2thor.controller import Controller
        except ImportError:
            raise MissingDependencyError(
                "--sim ai2thor needs the Python package 'ai2thor' (pip install ai2thor==5.0.0) "
                "and its Unity build, downloaded at first use"
            ) from None
        try:
            return Controller(
                scene=house.to_json_dict(),
                width=width,
                height=height,
                fieldOfView=fov,
                renderDepthImage=True,
                renderInstanceSegmentation=True,
                **kw,
            )
        except Exception as exc:  # the Unity build is fetched and started here
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise MissingDependencyError(
                f"AI2-THOR's Unity build could not be obtained or started here ({first}); "
                "use the embedded world (--sim embedded) on this machine"
            ) from None

    def _step(self, action: str, **kw: Any) -> Any:
        event = self.controller.step(action=action, **kw)
        meta = getattr(event, "metadata", {}) or {}
        if not meta.get("lastActionSuccess", True):
            raise UsageError(f"AI2-THOR {action} failed: {meta.get('errorMessage', '')}")
        return event

    def render(self, position: Sequence[float], yaw: float, horizon: float = 0.0) -> Frame:
        args = thor_camera_args(position, yaw, horizon)
        if not self._camera_added:
            event = self._step("AddThirdPartyCamera", fieldOfView=self.size[2], **args)
            self._camera_added = True
        else:
            event = self._step("UpdateThirdPartyCamera", thirdPartyCameraId=0, **args)
        type_of = {o["objectId"]: o["objectType"] for o in event.metadata.get("objects", [])}
        instance, semantic = ids_from_colors(
            event.third_party_instance_segmentation_frames[0],
            event.color_to_object_id,
            self.ids,
            self.semantics,
            type_of,
        )
        return Frame(
            rgb=np.ascontiguousarray(event.third_party_camera_frames[0][..., :3], np.uint8),
            depth=np.asarray(event.third_party_depth_frames[0], np.float32),
            instance=instance,
            semantic=semantic,
        )

    def reachable_positions(self) -> np.ndarray:
        pts = self._step("GetReachablePositions").metadata["actionReturn"]
        return np.array([[p["x"], p["y"], p["z"]] for p in pts], dtype=np.float64).reshape(-1, 3)

    def distances(self, sources: Sequence[Any], targets: Sequence[Any]) -> np.ndarray:
        out = np.full((len(sources), len(targets)), np.inf)
        for i, a in enumerate(sources):
            for j, b in enumerate(targets):
                event = self.controller.step(
                    action="GetShortestPathToPoint", position=thor_vector(a), **thor_vector(b)
                )
                if event.metadata.get("lastActionSuccess"):
                    out[i, j] = path_length(event.metadata["actionReturn"]["corners"])
        return out

    def open(self, object_id: str) -> bool:
        if not self.world.open(object_id):
            return False
        self._step("OpenObject", objectId=object_id, openness=1.0, forceAction=True)
        return True

    def spawn(
        self, asset_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        was_open = self.world.object(receptacle_id).openness
        res = self.world.spawn(asset_id, receptacle_id, rng, **kw)
        self._sync_open(receptacle_id, was_open)
        if res.ok:
            self._step(
                "SpawnAsset",
                assetId=asset_id,
                generatedId=res.object_id,
                position=thor_vector(res.position),
                rotation=thor_vector(res.rotation),
            )
        return res

    def place(
        self, object_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        was_open = self.world.object(receptacle_id).openness
        res = self.world.place(object_id, receptacle_id, rng, **kw)
        self._sync_open(receptacle_id, was_open)
        if res.ok:
            self._step("PlaceObjectAtPoint", objectId=object_id, position=thor_vector(res.position))
        return res

    def _sync_open(self, receptacle_id: str, was_open: float | None) -> None:
        now = self.world.object(receptacle_id).openness
        if now and now != was_open:
            self._step("OpenObject", objectId=receptacle_id, openness=now, forceAction=True)

    def remove(self, object_id: str) -> None:
        for obj in self.world.remove(object_id):
            self._step("RemoveFromScene", objectId=obj.id)

    def world_graph(self) -> WorldGraph:
        return self.world.graph()

    def close(self) -> None:
        stop = getattr(self.controller, "stop", None)
        if stop is not None:
            stop()
