"""The AI2-THOR simulator behind the one world interface (:mod:`dataforge.simulators.protocol`).

:class:`WorldBackend` is what pipelines use: render RGB / depth / instance / semantic from a
camera (position, yaw, horizon; AI2-THOR's conventions), list reachable positions, measure
geodesics, open containers, spawn / place / remove objects, and log the world graph.

- ``embedded`` (default): :class:`EmbeddedWorld` — the house's shaped archetypes (or real
  meshes from ``--assets``) rendered on the CPU
  (``dataforge.render``), geodesics on an occupancy grid (``dataforge.nav.grid``), placement
  by ``dataforge.world.placement``. Needs nothing but pip.
- ``ai2thor``: :class:`ThorWorld` — ``ai2thor.controller.Controller(scene="Procedural")`` then
  ``CreateHouse`` with the house upgraded to the schema the simulator reads (:func:`thor_house`),
  a third-party camera for arbitrary poses, ``GetReachablePositions``, ``GetShortestPathToPoint``,
  ``OpenObject``, ``SpawnAsset`` / ``PlaceObjectAtPoint`` / ``TeleportObject`` /
  ``RemoveFromScene``. Poses for placements are chosen by the same placement code, then applied
  in the simulator (positions converted from box centres to the asset's pivot, which is what
  AI2-THOR moves). Without ai2thor or its Unity build it stops with one line saying so.

Actions and parameters are those of AI2-THOR 5.0.0 (``ai2thor==5.0.0``, whose Unity build is
commit ``f0825767cd50d69f666c7f282e54abfe58f1e917``): ``ai2thor/controller.py`` of that release
and allenai/ai2thor's Unity sources of the schema-1.0.0 era (``unity/Assets/Scripts/``
``BaseFPSAgentController.cs``, ``AgentManager.cs``, ``ActionDispatcher.cs``, ``ProceduralTools.cs``,
``ProceduralData.cs``). Unity rejects a parameter name an action does not have, a missing one or
a value of the wrong type, and ``Controller.step`` then raises ``ValueError``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.render.renderer import Frame, StoredFrames
from dataforge.simulators.embedded import HouseObjects, _surface
from dataforge.simulators.protocol import Camera, NavSpace, render_one_by_one
from dataforge.world.assets import AssetCatalogue
from dataforge.world.boxes import rotation_matrix
from dataforge.world.house import House, HouseObject
from dataforge.world.placement import PlacementResult, World, opened_ids
from dataforge.world.scene import InstanceIds, SemanticTable
from dataforge.world.vectors import vec3

if TYPE_CHECKING:
    from ai2thor.controller import Controller
    from ai2thor.server import Event

    from dataforge.nav.space import Point

THOR_HOUSE_SCHEMA = "1.0.0"
"""The house schema AI2-THOR 5.0.0's ``CreateHouse`` reads: ``ProceduralTools.CreateHouse`` throws
unless ``house.metadata.schema`` equals its ``CURRENT_HOUSE_SCHEMA``, ``"1.0.0"``."""

# allowedError of GetShortestPathToPoint, metres. AI2-THOR (SafelyComputeNavMeshPath) snaps both
# endpoints to the nearest navmesh point within max(0.2, allowedError), then fails the action
# ("Closest point on NavMesh was too far ...") when the endpoints lie further than allowedError
# from it in the floor plane (both of them, in the sources read). Its default,
# DefaultAllowedErrorInShortestPath = 1e-4 m, makes a reachable pair "unreachable" as soon as the
# endpoints are a hair off the navmesh, which grid positions next to walls and furniture are (the
# navmesh is the floor shrunk by the agent's radius, voxelised at a few centimetres). 0.1 m
# absorbs that and stays under half the 0.25 m grid of reachable positions, so an endpoint never
# snaps towards a neighbouring cell; AI2-THOR's own VisualizeShortestPaths passes 0.1 too.
SHORTEST_PATH_ALLOWED_ERROR_M = 0.1
THOR_GRID_M = 0.25  # the controller's default gridSize (ai2thor.controller.Controller)

# Agent modes with a start pose in ProcTHOR-10k's schema-1.0.0 houses (metadata.agentPoses);
# CreateHouse teleports the agent to agentPoses[agentMode] (schema 0.0.1 had metadata.agent).
AGENT_POSE_MODES = ("arm", "default", "locobot", "stretch")

# A spawned object whose box centre is this close (metres, per axis) to the wanted one stays put.
CENTRE_TOLERANCE_M = 1e-3


def thor_vector(p: np.ndarray | Sequence[float]) -> dict[str, float]:
    return {"x": float(p[0]), "y": float(p[1]), "z": float(p[2])}


def thor_camera_args(
    position: np.ndarray | Sequence[float], yaw: float, horizon: float
) -> dict[str, Any]:
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


def thor_house(house: Mapping[str, Any], catalogue: AssetCatalogue) -> dict[str, Any]:
    """``house`` in the schema AI2-THOR 5.0.0's ``CreateHouse`` reads (:data:`THOR_HOUSE_SCHEMA`).

    A new dict; ``house`` is left as it was. ProcTHOR's generator (procthor 0.0.1.dev2) writes
    schema ``0.0.1``: materials are plain names, a door's or window's hole is a ``boundingBox``
    plus ``assetOffset``. AI2-THOR 5.0.0 reads the house into ``Thor.Procedural.Data`` classes
    (``ProceduralData.cs``) where every material is a ``MaterialProperties`` object (``name``,
    ``color``, ``tilingDivisorX``/``Y``, ...; CreateHouse reads ``floorMaterial.name``,
    ``material.name``, ...) and a hole is ``holePolygon`` (its two corners) plus
    ``assetPosition``, the centre of the door or window asset's box in the wall's frame (CreateHouse
    spawns it there with ``positionBoundingBoxCenter``). The upgrade follows procthor's own
    (``procthor/utils/upgrade_house_version.py``, ``From_0_0_0`` to ``1.0.0``) and reproduces
    ProcTHOR-10k's schema-1.0.0 houses:

    - ``proceduralParameters.ceilingMaterial``, ``rooms[].floorMaterial``,
      ``rooms[].ceilings[].material``, ``walls[].material`` and a door's, window's or object's
      ``material``: a name becomes ``{"name": name}``. A wall's ``color`` and
      ``proceduralParameters.ceilingColor`` are copied into their material's ``color`` (schema
      1.0.0 takes colours from materials only), ``...TilingXDivisor``/``...TilingYDivisor`` into
      ``tilingDivisorX``/``Y``; an object's ``color`` becomes its material's when it has none.
    - Doors and windows: ``holePolygon = [boundingBox.min, boundingBox.max]``,
      ``assetPosition = boundingBox.min + assetOffset + size / 2`` in x and y (``size``: the
      asset's box, from ``catalogue``), z = 0.
    - ``metadata.schema = "1.0.0"``, and ``metadata.agentPoses`` from ``metadata.agent`` for
      :data:`AGENT_POSE_MODES` (without ``standing`` for the locobot, as in ProcTHOR-10k).

    Nothing is removed: the old fields stay (AI2-THOR ignores keys its classes lack), so dataforge
    reads the result as it read ``house``. A house already in schema 1.0.0 (or newer: the simulator
    will say what it makes of it) comes back unchanged.
    """
    out: dict[str, Any] = copy.deepcopy(dict(house))
    meta = out.get("metadata")
    if not isinstance(meta, dict):
        meta = out["metadata"] = {}
    if _schema_version(meta.get("schema")) >= _schema_version(THOR_HOUSE_SCHEMA):
        return out
    params = out.get("proceduralParameters")
    if isinstance(params, dict):
        _upgrade_material(
            params,
            "ceilingMaterial",
            color=params.get("ceilingColor"),
            tiling=("ceilingMaterialTilingXDivisor", "ceilingMaterialTilingYDivisor"),
        )
    for room in _dicts(out.get("rooms")):
        _upgrade_material(
            room,
            "floorMaterial",
            tiling=("floorMaterialTilingXDivisor", "floorMaterialTilingYDivisor"),
        )
        for ceiling in _dicts(room.get("ceilings")):
            _upgrade_material(ceiling, "material", tiling=("tilingDivisorX", "tilingDivisorY"))
    for wall in _dicts(out.get("walls")):
        _upgrade_material(wall, "material", color=wall.get("color"))
    for hole in [*_dicts(out.get("doors")), *_dicts(out.get("windows"))]:
        _upgrade_material(hole, "material")
        _upgrade_hole(hole, catalogue)
    for obj in _walk_objects(out.get("objects")):
        if obj.get("material") is None and isinstance(obj.get("color"), dict):
            obj["material"] = {"color": copy.deepcopy(obj["color"])}
        _upgrade_material(obj, "material")
    agent = meta.get("agent")
    if "agentPoses" not in meta and isinstance(agent, dict):
        meta["agentPoses"] = {
            mode: {
                k: copy.deepcopy(v)
                for k, v in agent.items()
                if not (mode == "locobot" and k == "standing")
            }
            for mode in AGENT_POSE_MODES
        }
    meta["schema"] = THOR_HOUSE_SCHEMA
    return out


def _schema_version(schema: object) -> tuple[int, int, int]:
    """``"0.0.1"`` -> (0, 0, 1); a missing or unreadable part counts 0, as in ProceduralTools."""
    parts = str(schema).split(".") if schema else []
    nums = []
    for i in range(3):
        try:
            nums.append(int(parts[i]))
        except (IndexError, ValueError):
            nums.append(0)
    return nums[0], nums[1], nums[2]


def _dicts(items: object) -> list[dict[str, Any]]:
    return [d for d in items if isinstance(d, dict)] if isinstance(items, list) else []


def _walk_objects(objects: object) -> list[dict[str, Any]]:
    """Every object dict of a house's ``objects``, children included."""
    out = []
    stack = list(reversed(_dicts(objects)))
    while stack:
        obj = stack.pop()
        out.append(obj)
        stack.extend(reversed(_dicts(obj.get("children"))))
    return out


def _upgrade_material(
    data: dict[str, Any], key: str, *, color: object = None, tiling: tuple[str, str] | None = None
) -> None:
    """``data[key]``, a material name, becomes a ``MaterialProperties`` dict (in place); the
    fields named by ``tiling`` give its ``tilingDivisorX`` and ``tilingDivisorY``."""
    name = data.get(key)
    if not isinstance(name, str):
        return
    material: dict[str, Any] = {"name": name}
    if color is not None:
        material["color"] = copy.deepcopy(color)
    if tiling is not None:
        for source, target in zip(tiling, ("tilingDivisorX", "tilingDivisorY"), strict=True):
            if data.get(source) is not None:
                material[target] = data[source]
    data[key] = material


def _upgrade_hole(hole: dict[str, Any], catalogue: AssetCatalogue) -> None:
    """A schema-0.0.1 door or window (``boundingBox``, ``assetOffset``) gets ``holePolygon`` and
    ``assetPosition`` (in place)."""
    box = hole.get("boundingBox")
    lo = box.get("min") if isinstance(box, dict) else None
    hi = box.get("max") if isinstance(box, dict) else None
    if not (isinstance(lo, dict) and isinstance(hi, dict)):
        return
    if "holePolygon" not in hole:
        hole["holePolygon"] = [copy.deepcopy(lo), copy.deepcopy(hi)]
    if "assetPosition" not in hole:
        given = hole.get("assetOffset")
        offset = given if isinstance(given, dict) else {}
        size = catalogue.asset(str(hole.get("assetId"))).size
        hole["assetPosition"] = {
            "x": float(lo["x"]) + float(offset.get("x", 0.0)) + size[0] / 2,
            "y": float(lo["y"]) + float(offset.get("y", 0.0)) + size[1] / 2,
            "z": 0.0,
        }


def _one_line(message: object, limit: int = 400) -> str:
    """A simulator message (often several lines, with a C# stack trace) as one short line."""
    text = " ".join(str(message or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _xyz(p: Mapping[str, Any]) -> np.ndarray:
    return np.array([float(p["x"]), float(p["y"]), float(p["z"])])


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


class ThorWorld(HouseObjects):
    """The AI2-THOR backend (see the module docstring).

    ``controller``: an ``ai2thor.controller.Controller`` (or a stand-in) started in AI2-THOR's
    empty ``Procedural`` scene; without one, one is started here. Either way ``CreateHouse``
    then builds ``house`` in it, as ProcTHOR does (``Controller(scene="Procedural")``, then
    ``step(action="CreateHouse", house=...)``), so a house the simulator rejects is told apart
    from a simulator that does not start.
    """

    name = "ai2thor"

    def __init__(
        self,
        house: House,
        catalogue: AssetCatalogue,
        *,
        width: int = 640,
        height: int = 480,
        vfov_deg: float = 90.0,
        controller: Controller | None = None,
        **controller_kw: Any,
    ) -> None:
        self.catalogue = catalogue
        self.world = World(house, catalogue)
        self.ids = InstanceIds()
        self.semantics = SemanticTable.for_catalogue(catalogue)
        self.size = (width, height, vfov_deg)
        self._grid_size = float(controller_kw.get("gridSize", THOR_GRID_M))
        self._owns_controller = controller is None  # close() stops only a controller it started
        self.controller = controller or self._start(width, height, vfov_deg, controller_kw)
        # A controller used for an earlier house keeps its third-party camera: move that one
        # (UpdateThirdPartyCamera) rather than add one per house.
        last = getattr(getattr(self.controller, "last_event", None), "metadata", None) or {}
        self._camera_added = bool(last.get("thirdPartyCameras"))
        # The objects of the latest event, by id: pivot ("position"), "rotation", box.
        self._objects: dict[str, Mapping[str, Any]] = {}
        try:
            self._create_house(house)
        except Exception:
            self.close()  # stops the simulator if it was started here
            raise

    @staticmethod
    def _start(width: int, height: int, fov: float, kw: dict[str, Any]) -> Controller:
        try:
            from ai2thor.controller import Controller
        except ImportError:
            raise MissingDependencyError(
                "--sim ai2thor needs the Python package 'ai2thor' (pip install ai2thor==5.0.0) "
                "and its Unity build, downloaded at first use"
            ) from None
        try:
            return Controller(
                scene="Procedural",
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

    def _create_house(self, house: House) -> None:
        """``CreateHouse`` with :func:`thor_house`; a failure is one line with AI2-THOR's message.

        ``Controller.step`` raises ``ValueError`` when Unity cannot bind the argument (errorCode
        ``InvalidArgument``), and otherwise returns a failed event: ``house`` does not deserialise
        (a schema-0.0.1 material name where ``MaterialProperties`` is expected), its schema is not
        1.0.0, a material is unknown, ... Neither is "the Unity build could not be obtained".
        """
        data = thor_house(house.to_json_dict(), self.catalogue)
        try:
            event = self.controller.step(action="CreateHouse", house=data)
        except ValueError as exc:
            raise UsageError(f"AI2-THOR CreateHouse failed: {_one_line(exc)}") from None
        self._record(event)
        meta = getattr(event, "metadata", {}) or {}
        if not meta.get("lastActionSuccess", True):
            raise UsageError(f"AI2-THOR CreateHouse failed: {_one_line(meta.get('errorMessage'))}")

    def _record(self, event: Event) -> None:
        """Keep the objects of ``event`` (every AI2-THOR event lists all of them)."""
        objects = (getattr(event, "metadata", None) or {}).get("objects")
        if isinstance(objects, list):
            self._objects = {o["objectId"]: o for o in objects if "objectId" in o}

    def _step(self, action: str, **kw: Any) -> Event:
        event = self.controller.step(action=action, **kw)
        self._record(event)
        meta = getattr(event, "metadata", {}) or {}
        if not meta.get("lastActionSuccess", True):
            raise UsageError(f"AI2-THOR {action} failed: {_one_line(meta.get('errorMessage'))}")
        return event

    def render(
        self, position: np.ndarray | Sequence[float], yaw: float, horizon: float = 0.0
    ) -> Frame:
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

    def render_stored(self, cameras: Sequence[Camera], out: StoredFrames) -> None:
        render_one_by_one(self, cameras, out)

    def reachable_positions(self, step: float = THOR_GRID_M) -> np.ndarray:
        """``GetReachablePositions`` on AI2-THOR's own grid (the controller's ``gridSize``,
        0.25 m by default, fixed when it starts): another ``step`` is a one-line error."""
        if abs(float(step) - self._grid_size) > 1e-9:
            raise UsageError(
                f"ai2thor's reachable positions lie on its {self._grid_size} m grid "
                f"(the controller's gridSize), not a {step} m one"
            )
        pts = self._step("GetReachablePositions").metadata["actionReturn"]
        return np.array([[p["x"], p["y"], p["z"]] for p in pts], dtype=np.float64).reshape(-1, 3)

    def distances(self, sources: Sequence[Point], targets: Sequence[Point]) -> np.ndarray:
        """Shortest-path lengths on AI2-THOR's navmesh, inf where there is no path.

        AI2-THOR 5.0.0's ``GetShortestPathToPoint(Vector3 position, Vector3 target, float
        allowedError)`` (BaseFPSAgentController.cs; older builds and ai2thor's own
        ``util/metrics.py`` still send ``x``/``y``/``z``, which 5.0.0 rejects), with
        :data:`SHORTEST_PATH_ALLOWED_ERROR_M`. A pair without a path fails the action (a failed
        event, not an exception).
        """
        out = np.full((len(sources), len(targets)), np.inf)
        for i, a in enumerate(sources):
            for j, b in enumerate(targets):
                event = self.controller.step(
                    action="GetShortestPathToPoint",
                    position=thor_vector(a),
                    target=thor_vector(b),
                    allowedError=SHORTEST_PATH_ALLOWED_ERROR_M,
                )
                self._record(event)
                if event.metadata.get("lastActionSuccess"):
                    out[i, j] = path_length(event.metadata["actionReturn"]["corners"])
        return out

    def open(self, object_id: str) -> bool:
        if not self.world.open(object_id):
            return False
        self._step("OpenObject", objectId=object_id, openness=1.0, forceAction=True)
        return True

    def open_surface(self, object_id: str, surface: int) -> str | None:
        """Open what surface ``surface`` of ``object_id`` needs: ``OpenObject`` on the drawer or
        cupboard (an object of its own in AI2-THOR, ``<object>|Drawer_2``) or on the object."""
        found = _surface(self.world, object_id, surface)
        opened = None if found is None else self.world.open_surface(object_id, found)
        if opened is not None:
            self._step("OpenObject", objectId=opened, openness=1.0, forceAction=True)
        return opened

    def reclose(self, was: HouseObject) -> list[str]:
        """``CloseObject`` on what has opened on ``was.id`` since ``was``."""
        closed = self.world.reclose(was)
        for target in closed:
            self._step("CloseObject", objectId=target, forceAction=True)
        return closed

    def spawn(
        self, asset_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        was = self.world.object(receptacle_id)
        res = self.world.spawn(asset_id, receptacle_id, rng, **kw)
        self._sync_open(receptacle_id, was)
        if res.ok:
            assert res.position is not None and res.rotation is not None
            self._step(
                "SpawnAsset",
                assetId=asset_id,
                generatedId=res.object_id,
                position=thor_vector(res.position),
                rotation=thor_vector(res.rotation),
            )
            self._centre_at(res.object_id, res.position, res.rotation)
        return res

    def _centre_at(
        self, object_id: str, centre: Sequence[float], rotation: Sequence[float]
    ) -> None:
        """Move a just spawned ``object_id`` so that its box centre is ``centre``.

        ``SpawnAsset(assetId, generatedId, position, rotation)`` (BaseFPSAgentController.cs)
        calls ``ProceduralTools.spawnSimObjPrefab`` with ``positionBoundingBoxCenter`` false: the
        asset's pivot (its transform position) goes to ``position``; CreateHouse passes true and
        puts the box centre there, which is what dataforge's positions are. Where the pivot sits
        is up to each asset (the bottom of the box for most ProcTHOR assets, the centre for some,
        elsewhere for others: see :mod:`dataforge.world.boxes`), so it is read back: the event
        after SpawnAsset lists the new object with its pivot (``position``) and its box
        (``axisAlignedBoundingBox.center``), and ``TeleportObject`` (forced, kinematic, as
        SpawnAsset leaves it) moves it by the difference. SpawnAsset's own return value is no
        help: its ``worldSpaceCenter`` is the centre of the meshes' render bounds grown to
        include the world origin.
        """
        obj = self._objects.get(object_id)
        if obj is None:
            return
        shift = np.asarray(centre, np.float64) - _xyz(obj["axisAlignedBoundingBox"]["center"])
        if np.abs(shift).max() <= CENTRE_TOLERANCE_M:
            return
        self._step(
            "TeleportObject",
            objectId=object_id,
            position=thor_vector(_xyz(obj["position"]) + shift),
            rotation=thor_vector(rotation),
            forceAction=True,
            forceKinematic=True,
        )

    def place(
        self, object_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        if object_id not in self.world:
            raise UsageError(f"ai2thor cannot place {object_id!r}: it is not in the house")
        was = self.world.object(receptacle_id)
        res = self.world.place(object_id, receptacle_id, rng, **kw)
        self._sync_open(receptacle_id, was)
        if res.ok:
            assert res.position is not None and res.rotation is not None
            self._step(
                "PlaceObjectAtPoint",
                objectId=object_id,
                position=thor_vector(self._place_point(object_id, res.position, res.rotation)),
                rotation=thor_vector(res.rotation),
            )
        return res

    def _place_point(
        self, object_id: str, centre: Sequence[float], rotation: Sequence[float]
    ) -> np.ndarray:
        """The ``position`` for ``PlaceObjectAtPoint`` that puts the box centre over ``centre``.

        ``PlaceObjectAtPoint(objectId, position, rotation)`` (BaseFPSAgentController.cs) turns the
        object to ``rotation``, casts a ray down from ``position`` and sets the object's pivot at
        that x, z, as high as makes the bottom of its box rest on what the ray hit (plus 5 mm).
        So x, z are the pivot's: ``centre`` minus the box centre's offset from the pivot, taken
        from the object's last reported pose and turned to ``rotation``. y is the centre's height:
        the ray must start above the surface, and the box centre is (a pivot at the bottom of
        the box would start the ray in the surface).
        """
        target = np.asarray(centre, np.float64)
        obj = self._objects.get(object_id)
        if obj is None:
            return target
        offset = _xyz(obj["axisAlignedBoundingBox"]["center"]) - _xyz(obj["position"])
        reported = rotation_matrix(vec3(_xyz(obj["rotation"])))
        offset = rotation_matrix(vec3(rotation)) @ (reported.T @ offset)
        return np.array([target[0] - offset[0], target[1], target[2] - offset[2]])

    def _sync_open(self, receptacle_id: str, was: HouseObject) -> None:
        """``OpenObject`` on what the placement opened (the object's door, a drawer)."""
        now = self.world.object(receptacle_id)
        targets = opened_ids(was, now)
        if now.openness and now.openness != was.openness and now.id not in targets:
            targets.insert(0, now.id)  # placement opened the door (World.open)
        for target in targets:
            element = target[len(now.id) + 1 :] if target != now.id else None
            openness = now.element_openness(element)
            self._step("OpenObject", objectId=target, openness=openness, forceAction=True)

    def remove(self, object_id: str) -> None:
        for obj in self.world.remove(object_id):
            self._step("RemoveFromScene", objectId=obj.id)

    @property
    def nav(self) -> NavSpace:
        raise UsageError("ai2thor has no nav space here: use distances() (its navmesh geodesics)")

    def place_at(self, obj: HouseObject, receptacle_id: str) -> PlacementResult:
        raise UsageError("ai2thor does not place_at a recorded pose here: use place()")

    def pick(self, object_id: str) -> None:
        """A pick: ``RemoveFromScene`` (what :meth:`remove` does). AI2-THOR destroys what it
        removes: :meth:`place` cannot put a picked object back here (a one-line error)."""
        self.remove(object_id)

    def reset(self) -> None:
        raise UsageError("ai2thor does not reset a house here: open the house again (open_world)")

    def carry(
        self, object_id: str | None, offset: Sequence[float] = (0.0, -0.5, 0.5), yaw: float = 0.0
    ) -> None:
        raise UsageError("ai2thor does not draw a carried object here (carry)")

    def appearance(self, object_id: str, asset_id: str | None = None) -> None:
        """None: AI2-THOR draws its own asset meshes, whose looks nothing here reads."""
        return None

    def close(self) -> None:
        stop = getattr(self.controller, "stop", None)
        if stop is not None and self._owns_controller:
            stop()
