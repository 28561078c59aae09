"""The world of one FindingDory day, whichever simulator holds it: a ProcTHOR house on the
embedded world or an HSSD scene in habitat-sim, through the one world interface
(:class:`~dataforge.simulators.protocol.WorldBackend`).

Collection, goal frames, tasks and scores ask the same few things of it: render a pose, the
instance ids, the world graph, navigation (``nav``), take an object out (``pick``) and put one
at a recorded pose (``place_at``), where objects are and the rooms. What is FindingDory's own
is here: the carried object's pose (:func:`carry`), the rooms' plan polygons
(:func:`room_polygons`), the small objects the house itself holds (:func:`clutter`) and the
JSON to store with the day's records (:func:`scene_json`). :func:`plan_world` builds the world
of a plan (every object at its start pose), :func:`final_world` the world as the day left it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from dataforge.errors import DatasetError
from dataforge.world.house import HouseObject

if TYPE_CHECKING:
    from shapely.geometry import Polygon

    from dataforge.pipelines.findingdory.config import HeadCamera
    from dataforge.pipelines.findingdory.plan import EpisodePlan
    from dataforge.simulators.embedded import EmbeddedWorld
    from dataforge.simulators.habitat import HabitatWorld
    from dataforge.simulators.protocol import HouseBackend, WorldBackend
    from dataforge.store.manifest import Manifest
    from dataforge.world.assets import AssetCatalogue

HABITAT = "habitat"
# Where a carried object is drawn: (right, up, forward) metres from the head camera, low in its
# view (the camera looks 30 degrees down, 55 degrees high): in hand, ahead of the base.
CARRY_OFFSET = (0.12, -0.5, 0.55)


def is_habitat(meta: Mapping[str, Any]) -> bool:
    """Whether a stored record (episodes, experience or tasks) was made on an HSSD scene."""
    return (meta.get("origin") or {}).get("source") == HABITAT


def drawn_words(
    world: WorldBackend, object_id: str, asset_id: str | None = None
) -> dict[str, str | None] | None:
    """The words for how the object is drawn: shape, color, print_or_design, material
    (:meth:`WorldBackend.appearance`); ``asset_id`` for an object no longer in the world; None
    when they are not known."""
    drawn = world.appearance(object_id, asset_id)
    return None if drawn is None else drawn.words()


def carry(world: WorldBackend, object_id: str | None, yaw: float = 0.0) -> None:
    """Draw ``object_id`` held in front of the head camera, :data:`CARRY_OFFSET` from it and
    turning with the base from ``yaw`` (None: nothing held); call before ``pick``. Not drawn
    in habitat-sim (a departure: docs/findingdory.md)."""
    world.carry(object_id, CARRY_OFFSET, yaw)


def room_polygons(world: WorldBackend) -> dict[str, Polygon]:
    """Room id -> plan-view polygon (x, z)."""
    from shapely.geometry import Polygon

    return {r.id: Polygon(r.polygon) for r in world.rooms() if len(r.polygon) >= 3}


def clutter(
    world: WorldBackend, planned: set[str], receptacles: set[str], split: str
) -> list[tuple]:
    """The house's own small pickupable objects resting (through any parents) on one of
    ``receptacles``, not in ``planned``: (id, type, top-level receptacle, position). None in
    an HSSD scene: its own objects are furniture; the plan spawns every small one."""
    if world.name == HABITAT:
        return []
    from dataforge.pipelines.findingdory.creation import EXCLUDED_RECEPTACLES
    from dataforge.world.spawnable import receptacle_pairs, small_pickupable_types

    backend = cast("HouseBackend", world)
    pairs = receptacle_pairs(backend.catalogue, exclude=EXCLUDED_RECEPTACLES)
    small = set(small_pickupable_types(backend.catalogue, pairs, split))
    house = backend.world.house()
    parents = {o.id: o.parent_id for o in house.objects}
    out = []
    for o in house.objects:
        if o.id in planned or o.object_type not in small or o.parent_id is None:
            continue
        top = o.parent_id
        while (up := parents.get(top)) is not None:
            top = up
        if top in receptacles:
            out.append((o.id, o.object_type, top, o.position))
    return out


def scene_json(world: WorldBackend, stored: bytes) -> bytes:
    """The world as it stands, to store with the day's records: the house (embedded), or
    ``stored``, the scene instance it was rebuilt from (an HSSD scene)."""
    if world.name == HABITAT:
        return stored
    from dataforge.world.scene_sources import house_bytes

    return house_bytes(cast("HouseBackend", world).world.house().raw)


# -- building a day's world ------------------------------------------------------------------


def plan_world(
    scene_json: bytes,
    meta: Mapping[str, Any],
    plan: EpisodePlan,
    *,
    camera: HeadCamera,
    agent_radius: float,
    scenes_root: Path | None = None,
    catalogue: AssetCatalogue | None = None,
) -> WorldBackend:
    """The world of ``plan`` (every rearranged object and distractor at its recorded start
    pose) at ``camera``'s image size and field of view. ``scene_json``: the stored house or
    scene instance; ``meta``: a record naming its origin; ``scenes_root``: the HSSD data folder
    of a Habitat scene. Raises :class:`DatasetError` when an object does not rest at its
    recorded pose."""
    if is_habitat(meta):
        day: WorldBackend = _habitat_day(scene_json, meta, camera, agent_radius, scenes_root)
    else:
        day = embedded_world(scene_json, plan.scene, camera, agent_radius, catalogue)
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


def embedded_world(
    scene_json: bytes,
    name: str,
    camera: HeadCamera,
    agent_radius: float,
    catalogue: AssetCatalogue | None = None,
) -> EmbeddedWorld:
    """The embedded world of a stored house (``scene_json``) at ``camera``'s image size and
    field of view, its grid for an agent of ``agent_radius``."""
    from dataforge.simulators import EmbeddedWorld
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house

    catalogue = catalogue if catalogue is not None else load_catalogue()
    house = load_house(json.loads(scene_json), name=name, catalogue=catalogue)
    return EmbeddedWorld(
        house,
        catalogue,
        width=camera.width,
        height=camera.height,
        vfov_deg=camera.vfov_deg,
        agent_radius=agent_radius,
    )


def final_world(
    scene_json: bytes,
    meta: Mapping[str, Any],
    plan: EpisodePlan,
    events: Sequence[Mapping[str, Any]],
    *,
    camera: HeadCamera,
    agent_radius: float,
    scenes_root: Path | None = None,
    catalogue: AssetCatalogue | None = None,
) -> WorldBackend:
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
        day.pick(r.object)
        if ("place", k) in done:
            obj = HouseObject(r.object, r.asset, r.category, r.goal_position, r.goal_rotation)
            if not day.place_at(obj, r.goal_receptacle).ok:
                day.close()
                raise DatasetError(f"{plan.scene}: {r.object} does not rest at its goal pose")
    return day


def final_objects(plan: EpisodePlan, events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
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
    camera: HeadCamera,
    agent_radius: float,
    scenes_root: Path | None,
) -> HabitatWorld:
    """An HSSD scene's day rebuilt from a tasks record: every object of the metadata's
    ``final_objects`` added in order (so that each gets its handle back), at its final pose or,
    when absent, straight out of the scene."""
    day = _habitat_day(scene_json, meta, camera, agent_radius, scenes_root)
    for o in meta["final_objects"]:
        if not o["present"]:
            got = day.spawn_stowed(o["asset"])
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


def scenes_root_of(manifest: Manifest) -> Path | None:
    """The HSSD data folder a dataset's manifest records (``scenes`` location), if any."""
    from dataforge.inputs import Inputs

    return Inputs.from_dict(manifest.inputs).locations.get("scenes")


def _habitat_day(
    scene_json: bytes,
    meta: Mapping[str, Any],
    camera: HeadCamera,
    agent_radius: float,
    scenes_root: Path | None,
) -> HabitatWorld:
    from dataforge.pipelines.findingdory.habitat_scene import reopen_scene

    return reopen_scene(
        scenes_root,
        meta,
        scene_json,
        width=camera.width,
        height=camera.height,
        vfov_deg=camera.vfov_deg,
        agent_radius=agent_radius,
    )
