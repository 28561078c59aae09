"""FindingDory tasks (paper Table 3, appendix B.3): the 60 templates instantiated from each
collected day's interaction log, with goal entities, predicates and every valid goal frame.

Inputs
    a ``findingdory-collect`` experience dataset (``dataforge findingdory collect``; its
    manifest is recorded with its sha256, which covers every file of it).
Randomization and seeds
    one work unit per episode; the unit's stream draws, per template in table order, which of
    its valid fillings become tasks (``--cap``) and the minute of time-based tasks.
Outputs
    one stored record per episode (its id): ``checks`` uint8 (entities x frames, flattened: bit
    1 distance, 2 angle, 4 coverage; :mod:`.goal_frames`), ``frame_pose`` float64 (x, y, z,
    yaw per frame), ``frame_distance`` float32 (geodesic from the day's final pose, where the
    agent starts the task, to each frame's pose; inf: none), ``house_json`` (the world as the
    day left it), and the receptacle ``viewpoints`` / ``viewpoint_receptacle``. Metadata: the
    tasks (:class:`~.templates.Task` fields, ``id``, ``valid_frames``: one sorted list per
    subgoal, ``solvable``, ``shortest_m``: l of SPL), the skipped templates with reasons, the
    entities (id, kind, centre, ``counts_from``: the first frame that can be a label, an
    interacted object's place routine's first frame, :func:`.goal_frames.counts_from`;
    ``distance_m``: :func:`entity_distances`), the frame count,
    the final pose, the day's ``video`` (the experience's ``videos/<episode>.mp4`` when
    collected with ``--video mp4``, else null). Beside the shards,
    ``tasks.jsonl``: one line per task in the fields of the authors' released QA files
    (``ep_id``, ``video``, ``question``, ``answer``, ``task_id``, ``high_level_category``,
    ``low_level_category``, ``num_interactions``) plus ``id``, ``goals``, ``ordered``,
    ``predicate``, ``solvable``.
Invariants checked by validate
    see ``tasks_checks.INVARIANTS``.
Where it departs from the paper
    see docs/findingdory.md: templates are instantiated from the log by the rules of
    :mod:`.templates` (upstream's generator is not public); valid frames are computed for every
    frame of the day, not for subsampled ones.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Hashable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import DatasetError, UsageError
from dataforge.inputs import Inputs
from dataforge.pipelines.findingdory.config import (
    CITATION,
    LICENSE_URL,
    URL,
    CollectConfig,
    TasksConfig,
)
from dataforge.pipelines.findingdory.generate import SCENES
from dataforge.pipelines.findingdory.habitat_scene import carry_scenes
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema

if TYPE_CHECKING:
    from dataforge.nav.space import NavSpace
    from dataforge.pipelines.findingdory.goal_frames import Entity
    from dataforge.pipelines.findingdory.log import EpisodeLog
    from dataforge.pipelines.findingdory.templates import Task
    from dataforge.store.reader import Dataset

    Key = tuple[float, float, float]  # a frame position, rounded (FrameTours)

PIPELINE = "findingdory-tasks"
EXPERIENCE = "experience"
TASKS_FILE = "tasks.jsonl"


def schema(cfg: TasksConfig) -> Schema:
    return Schema(
        {
            "checks": ArraySpec("uint8", (None,), description="entities x frames check bits"),
            "frame_pose": ArraySpec("float64", (None, 4), description="x, y, z (m), yaw (deg)"),
            "frame_distance": ArraySpec(
                "float32", (None,), units="m", description="geodesic from the final pose"
            ),
            "house_json": ArraySpec("uint8", (None,), description="the world after the day"),
            "viewpoints": ArraySpec(
                "float32", (None, 3), units="m", description="receptacle viewpoints"
            ),
            "viewpoint_receptacle": ArraySpec(
                "int16", (None,), description="index into log receptacles"
            ),
        }
    )


def produce(
    cfg: TasksConfig,
    root: str,
    collect: dict[str, Any],
    scenes_root: str | None,
    unit: WorkUnit,
    rng: np.random.Generator,
) -> Iterator[Episode]:
    from dataforge.pipelines.findingdory.collect import VIDEOS_DIR
    from dataforge.pipelines.findingdory.day_world import (
        final_objects,
        final_world,
        is_habitat,
        scene_json,
    )
    from dataforge.pipelines.findingdory.goal_frames import (
        counts_from,
        entities_of,
        frame_checks,
        labels,
        valid_frames,
    )
    from dataforge.pipelines.findingdory.log import EpisodeLog
    from dataforge.pipelines.findingdory.plan import EpisodePlan
    from dataforge.pipelines.findingdory.templates import instantiate_all
    from dataforge.store import open_dataset

    ccfg = CollectConfig.from_dict(collect)
    with open_dataset(root) as ds:
        ep = ds[unit.id]
        meta = dict(ep.metadata)
        raw = ep["house_json"].read().tobytes()
        poses = np.column_stack([ep["position"].read(), ep["yaw"].read()]).astype(np.float64)
        rooms = ep["room"].read().astype(np.int64)
        views = ep["viewpoints"].read()
        view_rec = ep["viewpoint_receptacle"].read()
    log = EpisodeLog.from_dict(meta["log"])
    plan = EpisodePlan.from_dict(meta["plan"])
    tasks, skips = instantiate_all(log, rng, cfg.per_template)
    ids = sorted({e for t in tasks for g in t.goals for e in g})
    day = final_world(
        raw,
        meta,
        plan,
        meta["events"],
        camera=ccfg.camera,
        agent_radius=ccfg.agent_radius,
        scenes_root=None if scenes_root is None else Path(scenes_root),
    )
    entities = entities_of(day, ids, log)
    index = {e.id: k for k, e in enumerate(entities)}
    recs = [r.id for r in log.receptacles]
    by_rec = {rid: views[view_rec == k].astype(np.float64) for k, rid in enumerate(recs)}
    room_ids = [str(r["id"]) for r in meta["rooms"]]
    bits = frame_checks(day, entities, poses, rooms, room_ids, by_rec, ccfg.camera)
    since = counts_from(entities, log)
    tracked = labels(bits, since)
    grid = day.nav
    end = poses[-1, :3] if len(poses) else np.zeros(3)
    dist = grid.distances([end], list(poses[:, :3]))[0] if len(poses) else np.zeros(0)
    tours = FrameTours(grid, poses[:, :3], end)
    records = []
    counter: dict[str, int] = {}
    for t in tasks:
        k = counter.get(t.template, 0)
        counter[t.template] = k + 1
        valid = [valid_frames(tracked, index, g) for g in t.goals]
        solvable = all(valid)
        if not solvable:
            shortest, oracle = None, None
        elif not t.multi_goal:
            f = min(valid[0], key=lambda i: (float(dist[i]), i))
            shortest, oracle = (float(dist[f]) if np.isfinite(dist[f]) else None), [f]
        else:
            shortest, visits = tours.shortest(valid, t.ordered)
            oracle = None if visits is None else [f for _, f in visits]
            if oracle is not None and not _locks(t, oracle, tracked, index):
                oracle = [f for _, f in sorted(visits or [])]  # subgoal order always locks
        l_m = None if shortest is None else round(shortest, 6)
        records.append(
            {
                "id": f"{unit.id}/{t.template}-{k}",
                **t.to_dict(),
                "valid_frames": valid,
                "solvable": solvable,
                "shortest_m": l_m,
                "oracle_frames": oracle,
            }
        )
    arrays = {
        "checks": bits.reshape(-1),
        "frame_pose": poses,
        "frame_distance": np.where(np.isfinite(dist), dist, np.inf).astype(np.float32),
        "house_json": np.frombuffer(scene_json(day, raw), dtype=np.uint8),
        "viewpoints": views.astype(np.float32),
        "viewpoint_receptacle": view_rec.astype(np.int16),
    }
    day.close()
    habitat = (
        {"origin": dict(meta["origin"]), "final_objects": final_objects(plan, meta["events"])}
        if is_habitat(meta)
        else {}
    )
    yield Episode(
        unit.id,
        arrays,
        {
            "episode": unit.id,
            "scene": plan.scene,
            "frames": len(poses),
            "interactions": len(log.interactions),
            "tasks": records,
            "skipped": [{"template": s.template, "reason": s.reason} for s in skips],
            "entities": entity_records(
                entities, since, entity_distances(entities, log, bits, dist)
            ),
            "final_pose": [float(v) for v in poses[-1]] if len(poses) else None,
            "receptacles": recs,
            "rooms": room_ids,
            "camera": {
                "width": ccfg.camera.width,
                "height": ccfg.camera.height,
                "hfov_deg": ccfg.camera.hfov_deg,
                "height_m": ccfg.camera.height_m,
                "tilt_deg": ccfg.camera.tilt_deg,
            },
            "agent_radius": ccfg.agent_radius,
            "video": f"{VIDEOS_DIR}/{unit.id}.mp4" if collect.get("video") == "mp4" else None,
            **habitat,
        },
    )


def entity_records(
    entities: Sequence[Entity], since: list[int | None], distances: list[float | None]
) -> list[dict[str, Any]]:
    """The stored entities: id, kind, centre, ``counts_from`` (the first frame that can be a
    label: :func:`.goal_frames.counts_from`) and ``distance_m`` (:func:`entity_distances`)."""
    return [
        {**e.to_dict(), "counts_from": s, "distance_m": d}
        for e, s, d in zip(entities, since, distances, strict=True)
    ]


def entity_distances(
    entities: Sequence[Entity], log: EpisodeLog, bits: np.ndarray, dist: np.ndarray
) -> list[float | None]:
    """The geodesic (m) from the day's final pose, where a task starts, to each entity: what
    upstream's HL-SPL compares (``dist_to_goal`` of ``task/pddl/pddl.py::is_robot_at_position``
    and ``is_robot_in_room``, read by ``task/measures.py:736-762``). Objects: to the centre
    snapped to navigable space; receptacles: to the nearest viewpoint (both the log's
    ``distance_from_end``, :mod:`.experience`); rooms: to the nearest frame pose in the room (0
    when the day ends in it; upstream: to the nearest of up to 100 navigable points sampled in
    the region, ``task/utils.py:91``). None: not reachable or not known."""
    from dataforge.pipelines.findingdory.goal_frames import ALL

    out: list[float | None] = []
    for k, e in enumerate(entities):
        if e.kind == "room":
            inside = np.flatnonzero(bits[k] == ALL)
            d = float(np.min(dist[inside])) if len(inside) else math.inf
        else:
            d = float(log.distance_from_end.get(e.id, math.inf))
        out.append(round(d, 6) if math.isfinite(d) else None)
    return out


# -- shortest tours over valid frames ---------------------------------------------------------


class FrameTours:
    """Geodesics between frame positions (one distance field per distinct position, cached for
    the episode) and the shortest tours through one valid frame per subgoal."""

    def __init__(self, grid: NavSpace, positions: np.ndarray, start: np.ndarray) -> None:
        self.grid = grid
        self.keys = [_key(p) for p in positions]
        self.start = _key(start)
        pts = np.asarray(positions, dtype=np.float64)
        self.points = {k: pts[i] for i, k in enumerate(self.keys)}
        self.points[self.start] = np.asarray(start, dtype=np.float64)
        self._rows: dict[Key, dict[Key, float]] = {}

    def distance(self, a: Key, b: Key) -> float:
        row = self._rows.get(a)
        if row is None:
            order = list(self.points)
            d = self.grid.distances([self.points[a]], [self.points[k] for k in order])[0]
            row = self._rows[a] = dict(zip(order, (float(v) for v in d), strict=True))
        return row[b]

    def shortest(
        self, valid: list[list[int]], ordered: bool
    ) -> tuple[float | None, list[tuple[int, int]] | None]:
        """(l, the visits of the tour in order: (subgoal, frame)); l over distinct positions,
        each represented by its first valid frame."""
        from dataforge.pipelines.findingdory.metrics import shortest_tour_path

        reps: list[dict[Hashable, int]] = []
        for frames in valid:
            rep: dict[Hashable, int] = {}
            for f in frames:
                rep.setdefault(self.keys[f], f)
            reps.append(rep)
        length, visits = shortest_tour_path(
            self.start, [list(r) for r in reps], self.distance, ordered
        )
        if not math.isfinite(length):
            return None, None
        return float(length), [(i, reps[i][key]) for i, key in visits]


def _key(p: Sequence[float] | np.ndarray) -> Key:
    return (round(float(p[0]), 4), round(float(p[1]), 4), round(float(p[2]), 4))


def _locks(task: Task, frames: list[int], bits: np.ndarray, index: dict[str, int]) -> bool:
    """Whether presenting ``frames`` in this order solves ``task`` under the lock rules."""
    from dataforge.pipelines.findingdory.metrics import high_level_success
    from dataforge.pipelines.findingdory.scoring import frame_results

    results = [frame_results(bits, index, task.goals, f) for f in frames]
    return high_level_success(task.goals, task.ordered, results)


# -- the files beside the shards ------------------------------------------------------------


def task_lines(ds: Dataset) -> Iterator[dict[str, Any]]:
    """One record per task in the authors' QA fields plus ours, in episode order (``video``:
    the experience's MP4 when it was collected with one, as each episode's metadata says)."""
    for eid in ds.episode_ids:
        meta = ds[eid].metadata
        for t in meta["tasks"]:
            yield {
                "ep_id": eid,
                "video": meta.get("video"),
                "question": t["text"],
                "answer": t["valid_frames"],
                "task_id": t["template"],
                "high_level_category": t["group"],
                "low_level_category": t["category"],
                "num_interactions": meta["interactions"],
                "id": t["id"],
                "goals": t["goals"],
                "ordered": t["ordered"],
                "predicate": t["predicate"],
                "solvable": t["solvable"],
            }


def extras(ds: Dataset) -> dict[str, bytes]:
    """The files beside the shards (registered): ``tasks.jsonl``."""
    return {TASKS_FILE: tasks_file(ds)}


def tasks_file(ds: Dataset) -> bytes:
    return "".join(
        json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in task_lines(ds)
    ).encode()


def build_job(cfg: TasksConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    from dataforge.store import open_dataset

    inputs = inputs if inputs is not None else Inputs()
    if EXPERIENCE not in inputs:
        raise UsageError("tasks need the FindingDory experience dataset (DIR)")
    manifest = inputs.dataset(EXPERIENCE, "findingdory-collect", "dataforge findingdory collect")
    root = str(inputs.root(EXPERIENCE))
    recorded = Inputs.from_dict(manifest.inputs)
    scenes_root = carry_scenes(inputs, manifest, habitat=SCENES in recorded)
    with open_dataset(root) as ds:
        units = [WorkUnit(eid, {}) for eid in ds.episode_ids]
    if not units:
        raise DatasetError(f"{root} holds no collected episodes")
    return Job(
        pipeline=PIPELINE,
        name=f"{PIPELINE}-{manifest.config.get('split')}",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(cfg),
        units=tuple(units),
        produce=functools.partial(produce, cfg, root, dict(manifest.config), scenes_root),
        extra_files=extras,
        description=f"FindingDory tasks (the 60 templates of Table 3) over {len(units)} "
        f"collected days, with every valid goal frame.",
        url=URL,
        license_url=LICENSE_URL,
        citation=CITATION,
        inputs=inputs,
    )
