"""The interaction log of a collected day (:class:`~.log.EpisodeLog`), from the plan, the
oracle's pick and place events and the frames' rooms.

Objects: the rearranged ones (interacted when both their pick and their place happened), their
distractors, and every other small pickupable object of the house resting on a receptacle with
viewpoints (``clutter``: not interacted; it is in the video as much as a distractor is, so a
task naming its category must accept it). An object's start receptacle is the piece of
furniture it rests on (its top-level ancestor). Pick and place rooms are the rooms of the
object's start and goal positions; a room's frames are the frames whose base position is in it.
``distance_from_end``: the geodesic from the final pose to each object (its centre snapped to
navigable space, :func:`.goals.reference_point`) and to each receptacle (its
nearest viewpoint), what upstream's "farthest from your current location" templates compare.
Attributes: the words for how each object is drawn (``drawn_words``: shape, colour, print or
design, material, per object, :mod:`dataforge.world.appearance`), with functionality (and a
material the drawing does not name) from the category table (:meth:`.EpisodeLog.with_attributes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.pipelines.findingdory.log import (
    Clock,
    EpisodeLog,
    Interaction,
    LoggedObject,
    LoggedReceptacle,
    LoggedRoom,
)
from dataforge.simulators.protocol import WorldBackend

if TYPE_CHECKING:
    from dataforge.pipelines.findingdory.plan import EpisodePlan


def episode_log(
    day: WorldBackend,
    plan: EpisodePlan,
    meta: Mapping[str, Any],
    views: np.ndarray,
    events: Sequence[Mapping[str, Any]],
    room_frames: Mapping[str, int],
    frames: int,
    end_pose: tuple[Sequence[float], float],
    clock: Clock,
    split: str,
) -> EpisodeLog:
    """See the module docstring. ``day``: the day's world (:mod:`.day_world`); ``views``: the
    scene's viewpoints with their receptacle index as a 4th column; ``meta``: the episodes
    dataset's scene metadata."""
    from dataforge.pipelines.findingdory.day_world import clutter, drawn_words, room_polygons
    from dataforge.pipelines.findingdory.goals import reference_point
    from dataforge.world.graph import room_of

    polygons = room_polygons(day)

    def room(p: Sequence[float]) -> str | None:
        return room_of((float(p[0]), float(p[1]), float(p[2])), polygons)

    recs = [dict(r) for r in meta["receptacles"]]
    rec_ids = {r["id"] for r in recs}
    spans: dict[tuple[str, int], tuple[int, int]] = {
        (str(e["kind"]), int(e["rearrangement"])): (int(e["first"]), int(e["last"])) for e in events
    }
    objects: list[LoggedObject] = []
    interactions: list[Interaction] = []
    final: dict[str, Sequence[float]] = {}
    drawn: dict[str, dict[str, str | None] | None] = {}
    planned = set()
    for k, r in enumerate(plan.rearrangements):
        planned.add(r.object)
        pick, place = spans.get(("pick", k)), spans.get(("place", k))
        if pick is None or place is None:
            continue  # the day ended first: a carried object is in no frame's world
        objects.append(
            LoggedObject(
                r.object,
                r.category,
                True,
                r.start_receptacle,
                r.goal_receptacle,
                pick,
                place,
                room(r.start_position),
                room(r.goal_position),
            )
        )
        interactions.append(Interaction(r.object, pick, place))
        final[r.object] = r.goal_position
        drawn[r.object] = drawn_words(day, r.object, r.asset)
    for d in plan.distractors:
        planned.add(d.object)
        objects.append(LoggedObject(d.object, d.category, False, d.receptacle))
        final[d.object] = d.position
        drawn[d.object] = drawn_words(day, d.object, d.asset)
    for oid, kind, top, position in clutter(day, planned, rec_ids, split):
        objects.append(LoggedObject(oid, kind, False, top))
        final[oid] = position
        drawn[oid] = drawn_words(day, oid)
    receptacles = tuple(LoggedReceptacle(r["id"], r["category"], r.get("room")) for r in recs)
    rooms = tuple(
        LoggedRoom(str(r["id"]), str(r["name"]), int(room_frames.get(r["id"], 0)))
        for r in meta["rooms"]
    )
    end = (float(end_pose[0][0]), float(end_pose[0][1]), float(end_pose[0][2]))
    grid = day.nav
    found: dict[str, float | None] = {}
    for oid, pos in final.items():
        ref = reference_point(day, pos)
        if ref is not None:
            found[oid] = _finite(grid.distances([end], [ref])[0, 0])
    for k, rec in enumerate(recs):
        pts = views[views[:, 3] == k, :3]
        if len(pts):
            found[rec["id"]] = _finite(float(np.min(grid.distances([end], list(pts))[0])))
    distance = {k: v for k, v in found.items() if v is not None}
    log = EpisodeLog(
        tuple(objects), receptacles, rooms, tuple(interactions), int(frames), clock, distance
    )
    return log.with_attributes(drawn)


def _finite(v: float) -> float | None:
    return round(float(v), 6) if np.isfinite(v) else None
