"""The world of one FindingDory day, whichever backend holds it: a ProcTHOR house on the
embedded world (:class:`DayWorld`) or an HSSD scene in habitat-sim (:class:`HabitatDay`).

Collection, goal frames, tasks and scores ask the same few things of it: render a pose, the
instance ids, the world graph, navigation (``nav``: ``shortest_path``, ``segment_clear``,
``distances``, ``distance``, as a :class:`~dataforge.nav.grid.NavGrid` gives them), take an
object out (a pick) and put one at a recorded pose (:meth:`place_at`), where objects are, the
rooms' plan polygons, the small objects the scene itself holds, and the JSON to store with the
day's records. :func:`plan_world` builds the world of a plan (every object at its start pose),
:func:`final_world` the world as the day left it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.errors import DatasetError
from dataforge.world.house import HouseObject

HABITAT = "habitat"
# Where a carried object is drawn: (right, up, forward) metres from the head camera, low in its
# view (the camera looks 30 degrees down, 55 degrees high): in hand, ahead of the base.
CARRY_OFFSET = (0.12, -0.5, 0.55)


def is_habitat(meta: Mapping[str, Any]) -> bool:
    """Whether a stored record (episodes, experience or tasks) was made on an HSSD scene."""
    return (meta.get("origin") or {}).get("source") == HABITAT


class DayWorld:
    """A plan's world on the embedded world (``backend``: an ``EmbeddedWorld``)."""

    def __init__(self, backend: Any, catalogue: Any) -> None:
        self.backend, self.catalogue = backend, catalogue
        self._rooms: dict[str, Any] | None = None

    @property
    def nav(self) -> Any:
        return self.backend.grid

    @property
    def ids(self) -> Any:
        return self.backend.ids

    def render(self, eye: Sequence[float], yaw: float, horizon: float) -> Any:
        return self.backend.render(eye, yaw, horizon)

    def world_graph(self) -> Any:
        return self.backend.world_graph()

    def semantics(self) -> dict[str, Any]:
        return self.backend.scene.semantics.to_dict()

    def has(self, object_id: str) -> bool:
        return object_id in self.backend.world

    def appearance(self, object_id: str, asset_id: str | None = None) -> dict[str, Any] | None:
        """The words for how the object is drawn: shape, color, print_or_design, material
        (:meth:`EmbeddedWorld.appearance`); ``asset_id`` for an object no longer in the
        world; None when they are not known."""
        drawn = self.backend.appearance(object_id, asset_id)
        return None if drawn is None else drawn.words()

    def position(self, object_id: str) -> tuple[float, float, float]:
        return tuple(self.backend.world.object(object_id).position)

    def center(self, object_id: str) -> tuple[float, float, float]:
        c = self.backend.world.box(object_id).center
        return (float(c[0]), float(c[1]), float(c[2]))

    def remove(self, object_id: str) -> None:
        """A pick: the object leaves the world (:meth:`carry` draws it as carried)."""
        self.backend.remove(object_id)

    def carry(self, object_id: str | None, yaw: float = 0.0) -> None:
        """Draw ``object_id`` held in front of the head camera, :data:`CARRY_OFFSET` from it and
        turning with the base from ``yaw`` (None: nothing held); call before :meth:`remove`."""
        self.backend.carry(object_id, CARRY_OFFSET, yaw)

    def place_at(self, obj: HouseObject, receptacle_id: str) -> Any:
        """``obj`` at its recorded pose on ``receptacle_id`` (PlacementResult)."""
        res = self.backend.world.place_at(obj, receptacle_id)
        self.backend._changed()  # World.place_at does not mark the backend's scene stale
        return res

    def rooms(self) -> dict[str, Any]:
        """Room id -> plan-view polygon (x, z)."""
        if self._rooms is None:
            from shapely.geometry import Polygon

            self._rooms = {r.id: Polygon(r.polygon_xz) for r in self.backend.world.house().rooms}
        return self._rooms

    def floor_y(self) -> float:
        return float(self.backend.world.house().rooms[0].floor_y)

    def clutter(self, planned: set[str], receptacles: set[str], split: str) -> list[tuple]:
        """The house's own small pickupable objects resting (through any parents) on one of
        ``receptacles``, not in ``planned``: (id, type, top-level receptacle, position)."""
        from dataforge.pipelines.findingdory.creation import EXCLUDED_RECEPTACLES
        from dataforge.world.spawnable import receptacle_pairs, small_pickupable_types

        pairs = receptacle_pairs(self.catalogue, exclude=EXCLUDED_RECEPTACLES)
        small = set(small_pickupable_types(self.catalogue, pairs, split))
        house = self.backend.world.house()
        parents = {o.id: o.parent_id for o in house.objects}
        out = []
        for o in house.objects:
            if o.id in planned or o.object_type not in small or o.parent_id is None:
                continue
            top = o.parent_id
            while parents.get(top) is not None:
                top = parents[top]
            if top in receptacles:
                out.append((o.id, o.object_type, top, o.position))
        return out

    def scene_json(self) -> bytes:
        """The world as it stands, to store with the day's records."""
        from dataforge.world.scene_sources import house_bytes

        return house_bytes(self.backend.world.house().raw)

    def close(self) -> None:
        self.backend.close()


class HabitatDay(DayWorld):
    """A plan's world in an HSSD scene (``backend``: a ``HabitatWorld``). A picked object is
    stowed rather than removed, so that it keeps its handle (its id in the plan) when placed."""

    def __init__(self, backend: Any, scene_json: bytes) -> None:
        super().__init__(backend, None)
        self._json = scene_json
        self._nav = backend.navigator()

    @property
    def nav(self) -> Any:
        return self._nav

    def semantics(self) -> dict[str, Any]:
        return self.backend.semantics.to_dict()

    def has(self, object_id: str) -> bool:
        return object_id in self.backend.spawned()

    def appearance(self, object_id: str, asset_id: str | None = None) -> dict[str, Any] | None:
        return None  # HSSD / OVMM meshes: nothing here reads their colours or shapes

    def position(self, object_id: str) -> tuple[float, float, float]:
        return self.backend.pose(object_id)[0]

    def center(self, object_id: str) -> tuple[float, float, float]:
        c = self.backend.center(object_id)
        return (float(c[0]), float(c[1]), float(c[2]))

    def remove(self, object_id: str) -> None:
        self.backend.stow(object_id)

    def carry(self, object_id: str | None, yaw: float = 0.0) -> None:
        """Not drawn in habitat-sim (a departure: docs/findingdory.md)."""

    def place_at(self, obj: HouseObject, receptacle_id: str) -> Any:
        known = self.backend.holds(obj.id)
        res = self.backend.place_at(
            obj.id if known else obj.asset_id, receptacle_id, obj.position, obj.rotation
        )
        if res.ok and res.object_id != obj.id:
            raise DatasetError(
                f"habitat-sim named {obj.asset_id} {res.object_id!r} where the "
                f"plan has {obj.id!r}: the scene is not the one the episodes "
                "were drawn in"
            )
        return res

    def rooms(self) -> dict[str, Any]:
        if self._rooms is None:
            from shapely.geometry import Polygon

            self._rooms = {
                r.id: Polygon(r.polygon) for r in self.backend.rooms() if len(r.polygon) >= 3
            }
        return self._rooms

    def floor_y(self) -> float:
        pts = self.backend.reachable_positions()
        return float(np.median(pts[:, 1])) if len(pts) else 0.0

    def clutter(self, planned: set[str], receptacles: set[str], split: str) -> list[tuple]:
        return []  # the scene's own objects are furniture; the plan spawns every small one

    def scene_json(self) -> bytes:
        return self._json


# -- building a day's world ------------------------------------------------------------------


def plan_world(
    scene_json: bytes,
    meta: Mapping[str, Any],
    plan: Any,
    *,
    camera: Any,
    agent_radius: float,
    scenes_root: Path | None = None,
    catalogue: Any = None,
) -> DayWorld:
    """The world of ``plan`` (every rearranged object and distractor at its recorded start
    pose) at ``camera``'s image size and field of view. ``scene_json``: the stored house or
    scene instance; ``meta``: a record naming its origin; ``scenes_root``: the HSSD data folder
    of a Habitat scene. Raises :class:`DatasetError` when an object does not rest at its
    recorded pose."""
    if is_habitat(meta):
        day: DayWorld = _habitat_day(scene_json, meta, camera, agent_radius, scenes_root)
    else:
        from dataforge.world.assets import load_catalogue
        from dataforge.world.backends import EmbeddedWorld
        from dataforge.world.house import load_house

        catalogue = catalogue if catalogue is not None else load_catalogue()
        house = load_house(json.loads(scene_json), name=plan.scene, catalogue=catalogue)
        backend = EmbeddedWorld(
            house,
            catalogue,
            width=camera.width,
            height=camera.height,
            vfov_deg=camera.vfov_deg,
            agent_radius=agent_radius,
        )
        day = DayWorld(backend, catalogue)
    for obj, rid in plan.spawns():
        if day.has(obj.id):
            day.close()
            raise DatasetError(f"{plan.scene}: object {obj.id} of the plan is already in the scene")
        res = day.place_at(obj, rid)
        if not res.ok:
            day.close()
            raise DatasetError(
                f"{plan.scene}: {obj.id} does not rest on {rid} at its recorded pose ({res.status})"
            )
    return day


def final_world(
    scene_json: bytes,
    meta: Mapping[str, Any],
    plan: Any,
    events: Sequence[Mapping[str, Any]],
    *,
    camera: Any,
    agent_radius: float,
    scenes_root: Path | None = None,
    catalogue: Any = None,
) -> DayWorld:
    """The plan's world as the day left it: objects placed where placed, a picked object that
    was never placed (the day's frame cap) gone."""
    day = plan_world(
        scene_json,
        meta,
        plan,
        camera=camera,
        agent_radius=agent_radius,
        scenes_root=scenes_root,
        catalogue=catalogue,
    )
    done = {(str(e["kind"]), int(e["rearrangement"])) for e in events}
    for k, r in enumerate(plan.rearrangements):
        if ("pick", k) not in done:
            continue
        day.remove(r.object)
        if ("place", k) in done:
            obj = HouseObject(r.object, r.asset, r.category, r.goal_position, r.goal_rotation)
            if not day.place_at(obj, r.goal_receptacle).ok:
                day.close()
                raise DatasetError(f"{plan.scene}: {r.object} does not rest at its goal pose")
    return day


def final_objects(plan: Any, events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every object the plan spawns, in spawn order, as the day left it: ``id``, ``asset``,
    ``category``, ``receptacle``, ``position``, ``rotation`` and ``present`` (False: picked and
    never placed). Stored with an HSSD scene's tasks, which :func:`stored_day` rebuilds from."""
    done = {(str(e["kind"]), int(e["rearrangement"])) for e in events}
    moved = {r.object: k for k, r in enumerate(plan.rearrangements)}
    out = []
    for obj, rid in plan.spawns():
        k = moved.get(obj.id)
        rec = {
            "id": obj.id,
            "asset": obj.asset_id,
            "category": obj.object_type,
            "receptacle": rid,
            "position": list(obj.position),
            "rotation": list(obj.rotation),
            "present": True,
        }
        if k is not None and ("pick", k) in done:
            r = plan.rearrangements[k]
            if ("place", k) in done:
                rec.update(
                    receptacle=r.goal_receptacle,
                    position=list(r.goal_position),
                    rotation=list(r.goal_rotation),
                )
            else:
                rec["present"] = False
        out.append(rec)
    return out


def stored_day(
    scene_json: bytes,
    meta: Mapping[str, Any],
    *,
    camera: Any,
    agent_radius: float,
    scenes_root: Path | None,
) -> HabitatDay:
    """An HSSD scene's day rebuilt from a tasks record: every object of the metadata's
    ``final_objects`` added in order (so that each gets its handle back), at its final pose or,
    when absent, straight out of the scene."""
    day = _habitat_day(scene_json, meta, camera, agent_radius, scenes_root)
    for o in meta["final_objects"]:
        if not o["present"]:
            got = day.backend.spawn_stowed(o["asset"])
            ok = got == o["id"]
        else:
            obj = HouseObject(
                o["id"], o["asset"], o["category"], tuple(o["position"]), tuple(o["rotation"])
            )
            ok = day.place_at(obj, o["receptacle"]).ok
        if not ok:
            day.close()
            raise DatasetError(
                f"{meta.get('episode')}: {o['id']} cannot be put back as the day left it"
            )
    return day


def scenes_root_of(manifest: Any) -> Path | None:
    """The HSSD data folder a dataset's manifest records (``scenes`` location), if any."""
    from dataforge.inputs import Inputs

    return Inputs.from_dict(manifest.inputs).locations.get("scenes")


def _habitat_day(
    scene_json: bytes,
    meta: Mapping[str, Any],
    camera: Any,
    agent_radius: float,
    scenes_root: Path | None,
) -> HabitatDay:
    from dataforge.pipelines.findingdory.habitat_scene import reopen_scene

    world = reopen_scene(
        scenes_root,
        meta,
        scene_json,
        width=camera.width,
        height=camera.height,
        vfov_deg=camera.vfov_deg,
        agent_radius=agent_radius,
    )
    return HabitatDay(world, scene_json)
