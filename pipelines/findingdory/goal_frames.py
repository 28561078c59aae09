"""Which frames of a collected day are valid goal frames: teleport to the frame's pose in the
world as the day left it, render, and check the goal predicates (paper B.3; spec
"Predicates"), for every entity a task names.

The world is the final one (every completed rearrangement's object at its goal pose), as
upstream evaluates after collection: a frame that showed a mug where it was picked up is not a
frame of that mug any more. For each entity and frame three checks are stored as bits
(:data:`DISTANCE`, :data:`ANGLE`, :data:`COVERAGE`; :data:`ALL` = the predicate holds):

- objects (``robot_at_object``): geodesic from the base to the object's reference point (its
  centre snapped to the navigable cell nearest by path, walls blocking, so never one behind a
  wall: :func:`dataforge.pipelines.findingdory.goals.reference_point`) <= 2.0 m; floor-plane angle
  between the heading and the object's centre <= 45 degrees; instance coverage >= 0.1 %;
- receptacles (``robot_at_receptacle``): geodesic to the receptacle's nearest viewpoint
  <= 0.1 m (a base within 0.1 m of a viewpoint in a straight, navigable line; farther is never
  within 0.1 m); angle to its centre <= 90 degrees; coverage of the whole piece of furniture
  (:func:`dataforge.pipelines.findingdory.goals.coverage_keys`) >= 0.1 %;
- rooms (``robot_in_room``): the base is inside the room (all bits set, or none).

Every frame is rendered once (instance ids only are used); an entity's coverage is read from
the frame's id histogram. Thresholds: :data:`.metrics.THRESHOLDS`.

These bits are what scoring reads: upstream scores a predicted frame by teleporting to its pose
after the day and checking the predicates there
(``findingdory_task.py::_run_pddl_vlm_verification``).
The *labels* (a task's valid frames, its answer and oracle frames) follow upstream's tracking
during the day instead (``findingdory_task.py::track_valid_keyframes``, lines 626-646): an
object the day rearranges counts only from the first frame of its place routine, when it is
where the final world has it; before that it was elsewhere, and a frame of the spot it was later
put on is no frame of it (:func:`counts_from`, :func:`labels`). Upstream also fills the frames
of the place routine in which the arm hid the object (``_validate_and_fill_keyframes``); here a
frame is a label only where its checks pass, so every label also passes teleport-and-check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.pipelines.findingdory.day_world import room_polygons
from dataforge.pipelines.findingdory.metrics import THRESHOLDS
from dataforge.pipelines.findingdory.templates import PREDICATES
from dataforge.simulators.protocol import WorldBackend

if TYPE_CHECKING:
    from dataforge.nav.space import NavSpace
    from dataforge.pipelines.findingdory.config import HeadCamera
    from dataforge.pipelines.findingdory.log import EpisodeLog
    from dataforge.store.reader import StoredEpisode

DISTANCE, ANGLE, COVERAGE = 1, 2, 4
ALL = DISTANCE | ANGLE | COVERAGE
BITS = {"distance": DISTANCE, "angle": ANGLE, "coverage": COVERAGE}


@dataclass(frozen=True)
class Entity:
    id: str
    kind: str  # object | receptacle | room
    point: tuple[float, float, float]  # centre in the final world (room: a point inside)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "point": list(self.point)}


def entities_of(day: WorldBackend, ids: Sequence[str], log: EpisodeLog) -> list[Entity]:
    """The entities named ``ids`` (objects, receptacles or rooms of ``log``) with their centres
    in the day's world (:mod:`.day_world`)."""
    kinds = {o.id: "object" for o in log.objects}
    kinds.update({r.id: "receptacle" for r in log.receptacles})
    kinds.update({r.id: "room" for r in log.rooms})
    rooms = room_polygons(day)
    out = []
    for eid in ids:
        kind = kinds[eid]
        if kind == "room":
            p = rooms[eid].representative_point()
            point = (float(p.x), day.floor_y(), float(p.y))
        else:
            point = day.center(eid)
        out.append(Entity(eid, kind, point))
    return out


def frame_checks(
    day: WorldBackend,
    entities: Sequence[Entity],
    poses: np.ndarray,
    rooms: np.ndarray,
    room_ids: Sequence[str],
    viewpoints: Mapping[str, np.ndarray],
    camera: HeadCamera,
) -> np.ndarray:
    """(E, F) uint8 check bits of each entity at each frame (module docstring). ``poses``:
    F x 4 (x, floor y, z, yaw); ``rooms``: each frame's index into ``room_ids`` (-1 none);
    ``viewpoints``: receptacle id -> V x 3."""
    from dataforge.pipelines.findingdory.goals import (
        coverage_keys,
        instance_ids_of,
        reference_point,
    )

    n = len(poses)
    out = np.zeros((len(entities), n), dtype=np.uint8)
    if n == 0 or not entities:
        return out
    grid = day.nav
    pos = np.asarray(poses[:, :3], dtype=np.float64)
    yaw = np.asarray(poses[:, 3], dtype=np.float64)
    graph = day.world_graph()
    limits = [THRESHOLDS[PREDICATES[e.kind]] for e in entities]  # None: robot_in_room
    # distances and angles
    for k, e in enumerate(entities):
        if e.kind == "room":
            inside = rooms == room_ids.index(e.id) if e.id in room_ids else np.zeros(n, bool)
            out[k, inside] = ALL
            continue
        t = limits[k]
        assert t is not None
        if e.kind == "object":
            ref = reference_point(day, e.point)
            d = np.full(n, np.inf) if ref is None else grid.distances([ref], list(pos))[0]
            near = d <= t.max_distance_m
        else:
            near = _near_viewpoints(
                grid, pos, viewpoints.get(e.id, np.zeros((0, 3))), t.max_distance_m
            )
        out[k, near] |= DISTANCE
        out[k, _angles(pos, yaw, e.point) <= t.max_angle_deg] |= ANGLE
    # coverage: one render per frame
    keyed = [None if e.kind == "room" else coverage_keys(graph, e.id) for e in entities]
    id_sets: list[np.ndarray | None] = [None] * len(entities)
    for f in range(n):
        x, y, z = pos[f]
        frame = day.render((x, y + camera.height_m, z), float(yaw[f]), camera.tilt_deg)
        if f == 0:
            for k, keys in enumerate(keyed):
                if keys is not None:
                    id_sets[k] = np.asarray(instance_ids_of(day.ids, keys), dtype=np.int64)
        counts = np.bincount(frame.instance.ravel().astype(np.int64))
        size = float(frame.instance.size)
        for k, ids in enumerate(id_sets):
            if ids is None or not len(ids):
                continue
            hit = ids[ids < len(counts)]
            cov = float(counts[hit].sum()) / size if len(hit) else 0.0
            t = limits[k]
            assert t is not None
            if cov >= t.min_coverage:
                out[k, f] |= COVERAGE
    return out


def counts_from(entities: Sequence[Entity], log: EpisodeLog) -> list[int | None]:
    """The first frame at which each entity can be a label (module docstring): the first frame
    of an interacted object's place routine (None: never placed), frame 0 for everything else."""
    placed = {
        o.id: (None if o.place is None else int(o.place[0])) for o in log.objects if o.interacted
    }
    return [placed.get(e.id, 0) for e in entities]


def labels(bits: np.ndarray, since: Sequence[int | None]) -> np.ndarray:
    """``bits`` with each entity's frames before ``since`` (:func:`counts_from`; None: all)
    cleared: the check bits the labels are read from."""
    out = bits.copy()
    for k, first in enumerate(since):
        out[k, : out.shape[1] if first is None else first] = 0
    return out


def valid_frames(
    bits: np.ndarray, index: Mapping[str, int], subgoal: Sequence[str], skip: int = 0
) -> list[int]:
    """Frames at which some entity of ``subgoal`` satisfies its predicate (the bits in
    ``skip`` dropped: DTG-SR drops :data:`COVERAGE`, SC-SR :data:`DISTANCE`)."""
    want = ALL & ~skip
    rows = [index[e] for e in subgoal if e in index]
    if not rows:
        return []
    ok = np.any((bits[rows] & want) == want, axis=0)
    return [int(f) for f in np.nonzero(ok)[0]]


def _angles(pos: np.ndarray, yaw: np.ndarray, point: Sequence[float]) -> np.ndarray:
    """:func:`dataforge.pipelines.findingdory.goals.heading_angle_deg` of every pose at once."""
    dx, dz = point[0] - pos[:, 0], point[2] - pos[:, 2]
    t = np.radians(yaw)
    fx, fz = np.sin(t), np.cos(t)
    ang = np.abs(np.degrees(np.arctan2(fx * dz - fz * dx, fx * dx + fz * dz)))
    ang[np.hypot(dx, dz) < 1e-9] = 0.0
    return ang


def _near_viewpoints(
    grid: NavSpace, pos: np.ndarray, views: np.ndarray, radius: float
) -> np.ndarray:
    """Whether each position is within ``radius`` (geodesic) of one of ``views``: within it in
    a straight line that stays on navigable cells (geodesic >= straight-line distance)."""
    out = np.zeros(len(pos), dtype=bool)
    if not len(views):
        return out
    for f, p in enumerate(pos):
        d = np.hypot(views[:, 0] - p[0], views[:, 2] - p[2])
        for k in np.nonzero(d <= radius)[0][np.argsort(d[d <= radius], kind="stable")]:
            if grid.segment_clear(p, views[k]):
                out[f] = True
                break
    return out


def stored_world(
    ep: StoredEpisode, scenes_root: Path | None = None
) -> tuple[WorldBackend, HeadCamera]:
    """The day's world of a tasks record as the day left it (its stored house JSON, not the
    replay that made the checks; for an HSSD scene, the scene rebuilt from ``scenes_root`` with
    the stored final objects) and the head camera, for teleport-and-check renders."""
    from dataforge.pipelines.findingdory.config import HeadCamera
    from dataforge.pipelines.findingdory.day_world import embedded_world, is_habitat, stored_day

    meta = ep.metadata
    cam = HeadCamera(**meta["camera"])
    radius = float(meta["agent_radius"])
    raw = ep["house_json"].read().tobytes()
    if is_habitat(meta):
        return stored_day(raw, meta, camera=cam, agent_radius=radius, scenes_root=scenes_root), cam
    return embedded_world(raw, ep.id, cam, radius), cam
