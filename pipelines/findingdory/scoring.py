"""Scoring FindingDory predictions against a tasks dataset (paper B.3): the stored check bits
of every entity at every frame are what teleporting to a frame and checking the predicates
gives (:mod:`.goal_frames`), so high-level scores are look-ups; low-level trajectories are
checked by rendering their stop poses in the stored final world.

Prediction records (``evaluate``, ``baseline``): ``{"id": task id, "frame_indices": [int, ...],
"error": null | "malformed: ..."}``, one per line. Trajectory records (``--trajectories``):
``{"id": task id, "positions": [[x, y, z], ...], "yaws": [deg, ...], "stops": [step, ...]}``:
the low-level agent's base pose at every step from the day's final pose, and the steps at which
it called stop (one per subgoal).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import MalformedInputError, UsageError
from dataforge.pipelines.findingdory.day_world import room_polygons
from dataforge.pipelines.findingdory.goal_frames import BITS
from dataforge.pipelines.findingdory.metrics import (
    LL_MAX_STEPS,
    TaskScore,
    entity_hl_spl,
    high_level_success,
    low_level_success,
    path_length,
    prediction_problem,
    spl,
    success_rates,
    summarize,
)

if TYPE_CHECKING:
    from rich.table import Table
    from shapely.geometry import Polygon

    from dataforge.nav.grid import NavGrid
    from dataforge.nav.space import NavSpace
    from dataforge.pipelines.findingdory.config import HeadCamera
    from dataforge.simulators.protocol import WorldBackend
    from dataforge.store.reader import Dataset, StoredEpisode


def frame_results(
    bits: np.ndarray, index: Mapping[str, int], goals: Sequence[Sequence[str]], frame: int
) -> dict[str, tuple[str, ...]]:
    """{entity: the names of its failed checks} at ``frame`` for the entities of ``goals``."""
    out = {}
    for g in goals:
        for e in g:
            if e in index:
                b = int(bits[index[e], frame])
                out[e] = tuple(name for name, bit in BITS.items() if not b & bit)
    return out


@dataclass
class EpisodeTasks:
    """One tasks record: its tasks by id, check bits, frame poses and distances."""

    id: str
    tasks: dict[str, dict[str, Any]]
    bits: np.ndarray
    index: dict[str, int]
    poses: np.ndarray
    distance: np.ndarray
    ep: StoredEpisode  # the stored record (house JSON, viewpoints) for geodesics and renders
    scenes_root: Path | None = None  # an HSSD scene's data folder (the manifest's)
    entity_distance: dict[str, float | None] = field(default_factory=dict)  # from the start
    entity_point: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    _grid: NavGrid | None = None
    _day: tuple[WorldBackend, HeadCamera] | None = None

    @property
    def frames(self) -> int:
        return len(self.poses)

    def day(self) -> tuple[WorldBackend, HeadCamera]:
        """The stored final world and head camera (:func:`.goal_frames.stored_world`), built
        once; :meth:`close` closes it."""
        if self._day is None:
            from dataforge.pipelines.findingdory.goal_frames import stored_world

            self._day = stored_world(self.ep, self.scenes_root)
        return self._day

    def close(self) -> None:
        if self._day is not None:
            self._day[0].close()
            self._day = None

    def grid(self, agent_radius: float) -> NavSpace:
        """Geodesics in the stored world: the house's grid (embedded), the navmesh (HSSD)."""
        from dataforge.pipelines.findingdory.day_world import is_habitat

        if is_habitat(self.ep.metadata):
            return self.day()[0].nav
        if self._grid is None:
            from dataforge.world.assets import load_catalogue
            from dataforge.world.house import load_house
            from dataforge.world.navigation import house_nav_grid

            cat = load_catalogue()
            house = load_house(
                json.loads(self.ep["house_json"].read().tobytes()), name=self.id, catalogue=cat
            )
            self._grid = house_nav_grid(house, cat, agent_radius=agent_radius)
        return self._grid


def load_tasks(ds: Dataset, only: Sequence[str] | None = None) -> list[EpisodeTasks]:
    """Every episode's tasks (templates in ``only``, e.g. ``["T01"]``, when given)."""
    from dataforge.pipelines.findingdory.day_world import scenes_root_of

    root = scenes_root_of(ds.manifest)
    out = []
    for eid in ds.episode_ids:
        ep = ds[eid]
        meta = ep.metadata
        ents = [e["id"] for e in meta["entities"]]
        n = int(meta["frames"])
        bits = ep["checks"].read().reshape(len(ents), n) if ents else np.zeros((0, n), np.uint8)
        tasks = {t["id"]: t for t in meta["tasks"] if not only or t["template"] in only}
        index = {e: k for k, e in enumerate(ents)}
        poses, dist = ep["frame_pose"].read(), ep["frame_distance"].read()
        out.append(
            EpisodeTasks(
                eid,
                tasks,
                bits,
                index,
                poses,
                dist,
                ep,
                root,
                entity_distance={e["id"]: e.get("distance_m") for e in meta["entities"]},
                entity_point={e["id"]: tuple(e["point"]) for e in meta["entities"]},
            )
        )
    return out


def read_records(path: Path, what: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """{id: record} of a JSONL file; a line that is not a JSON object with ``keys``, or a
    second record of an id, is one line of error naming the file and line(s)."""
    from dataforge.inputs import read_jsonl_by_id

    if not path.is_file():
        from dataforge.errors import InputNotFoundError

        raise InputNotFoundError(f"{what} {path} not found")
    return read_jsonl_by_id(path, what, needs=keys)


def check_trajectories(trajectories: Mapping[str, Mapping[str, Any]], path: Path) -> None:
    """Every trajectory record has positions (x, y, z per step), as many yaws and integer
    stops, all finite: else one line naming the file, the record and the step."""
    for tid, rec in trajectories.items():
        where = f"{path}: trajectory {tid}"
        try:
            pos = np.asarray(rec["positions"], dtype=np.float64)
            yaws = np.asarray(rec["yaws"], dtype=np.float64)
        except (TypeError, ValueError):
            raise MalformedInputError(f"{where}: positions and yaws must be numbers") from None
        pos = pos.reshape(0, 3) if pos.size == 0 else pos
        if pos.ndim != 2 or pos.shape[1] != 3 or yaws.shape != (len(pos),):
            raise MalformedInputError(
                f"{where}: positions must be [[x, y, z], ...] with one yaw each, got shapes "
                f"{list(pos.shape)} and {list(yaws.shape)}"
            )
        bad = np.flatnonzero(~(np.isfinite(pos).all(axis=1) & np.isfinite(yaws)))
        if len(bad):
            k = int(bad[0])
            raise MalformedInputError(
                f"{where}: step {k}: position {pos[k].tolist()}, yaw {yaws[k]} is not finite"
            )
        stops = rec["stops"]
        if not _indices_ok(stops):
            raise MalformedInputError(f"{where}: stops must be a list of integers (steps)")


class _Task:
    def __init__(self, t: Mapping[str, Any]) -> None:
        self.goals = [tuple(g) for g in t["goals"]]
        self.ordered = bool(t["ordered"])
        self.predicate = str(t["predicate"])


def score_predictions(
    episodes: Sequence[EpisodeTasks],
    predictions: Mapping[str, Mapping[str, Any]],
    *,
    allow_missing: bool = False,
    trajectories: Mapping[str, Mapping[str, Any]] | None = None,
    agent_radius: float = 0.25,
    world: Any = None,
) -> tuple[list[tuple[str, TaskScore]], dict[str, int]]:
    """Every task's :class:`TaskScore` and counts of malformed / missing predictions."""
    wanted = {tid for e in episodes for tid in e.tasks}
    missing = sorted(wanted - set(predictions))
    if missing and not allow_missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise UsageError(
            f"no prediction for {len(missing)} task(s): {', '.join(missing[:5])}"
            f"{more} (--allow-missing scores them as failures)"
        )
    bad = [
        tid
        for tid in sorted(wanted & set(predictions))
        if not _indices_ok(predictions[tid].get("frame_indices"))
    ]
    if bad:
        raise MalformedInputError(
            f"frame_indices must be a list of integers: {', '.join(bad[:5])}"
            + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        )
    out: list[tuple[str, TaskScore]] = []
    counts = {"malformed": 0, "missing": len(missing)}
    for ep in episodes:
        for tid, t in ep.tasks.items():
            task = _Task(t)
            pred = predictions.get(tid)
            indices = list(pred["frame_indices"]) if pred is not None else [-1]
            problem = prediction_problem(task, indices, ep.frames)
            if pred is not None and (problem or pred.get("error")):
                counts["malformed"] += 1
            if problem:
                rates = {"HL-SR": False, "DTG-SR": False, "SC-SR": False}
            else:
                results = [frame_results(ep.bits, ep.index, task.goals, int(f)) for f in indices]
                rates = success_rates(task, results)
            hl_spl = _entity_spl(ep, t, rates["HL-SR"], indices)
            hl_spl_frames = _hl_spl(ep, t, rates["HL-SR"], indices, agent_radius)
            ll, ll_spl = (None, None)
            if trajectories is not None and rates["HL-SR"] and tid in trajectories:
                ll, ll_spl = _low_level(ep, t, trajectories[tid], agent_radius, world)
            score = TaskScore(
                t["category"],
                bool(t["solvable"]),
                rates["HL-SR"],
                rates["DTG-SR"],
                rates["SC-SR"],
                hl_spl,
                ll,
                ll_spl,
                hl_spl_frames,
            )
            out.append((tid, score))
    return out, counts


def _indices_ok(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in v)


def chosen_entity(ep: EpisodeTasks, subgoal: Sequence[str], frame: int) -> str | None:
    """The entity of ``subgoal`` the predicted ``frame`` satisfied (all checks pass): of
    several, the one whose centre is nearest the frame's base in the floor plane (upstream
    takes the one with the smallest geodesic ``dist_to_goal`` from the frame,
    ``measures.py:721-734``); None when it satisfied none."""
    from dataforge.pipelines.findingdory.goal_frames import ALL

    done = [e for e in subgoal if e in ep.index and int(ep.bits[ep.index[e], frame]) == ALL]
    if not done:
        return None
    x, _, z = (float(v) for v in ep.poses[frame, :3])

    def away(e: str) -> float:
        p = ep.entity_point.get(e)
        return math.inf if p is None else math.hypot(p[0] - x, p[2] - z)

    return min(done, key=away)


def _entity_spl(
    ep: EpisodeTasks, t: Mapping[str, Any], ok: bool, indices: Sequence[int]
) -> float | None:
    """HL-SPL as upstream (:func:`.metrics.entity_hl_spl`)."""
    multi = bool(t.get("multi_goal", len(t["goals"]) > 1))
    if multi or not ok:
        return entity_hl_spl(ok, multi, {}, None)
    subgoal = t["goals"][0]
    chosen = chosen_entity(ep, subgoal, int(indices[0]))
    return entity_hl_spl(ok, False, {e: ep.entity_distance.get(e) for e in subgoal}, chosen)


def _hl_spl(
    ep: EpisodeTasks, t: Mapping[str, Any], ok: bool, indices: Sequence[int], agent_radius: float
) -> float | None:
    """HL-SPL-frames: :func:`.metrics.spl` with l = ``shortest_m`` (to the nearest valid frame
    or the shortest tour) and p the geodesic path through the predicted frames' poses."""
    l_m = t.get("shortest_m")
    if l_m is None:
        return None
    if not ok:
        return 0.0
    if len(indices) == 1:
        p = float(ep.distance[int(indices[0])])
    else:
        grid = ep.grid(agent_radius)
        pts = [tuple(ep.poses[-1, :3]), *(tuple(ep.poses[int(f), :3]) for f in indices)]
        p = path_length(pts[0], pts[1:], lambda a, b: float(grid.distance(a, b)))
    if not np.isfinite(p):
        return None
    return spl(True, float(l_m), p)


def _low_level(
    ep: EpisodeTasks,
    t: Mapping[str, Any],
    traj: Mapping[str, Any],
    agent_radius: float,
    world: Callable[[EpisodeTasks], tuple[WorldBackend, HeadCamera]],
) -> tuple[bool, float | None]:
    """LL success and LL-SPL of one trajectory: its stop poses rendered in the stored final
    world and checked (:func:`.goal_frames.frame_checks`)."""
    from dataforge.pipelines.findingdory.goal_frames import Entity, frame_checks

    try:
        pos = np.asarray(traj["positions"], dtype=np.float64).reshape(-1, 3)
        yaws = np.asarray(traj["yaws"], dtype=np.float64).reshape(-1)
        stops = [int(s) for s in traj["stops"]]
    except (TypeError, ValueError, KeyError) as exc:
        raise MalformedInputError(f"trajectory {t['id']}: {exc}") from None
    if len(pos) != len(yaws):
        raise MalformedInputError(f"trajectory {t['id']}: {len(pos)} positions, {len(yaws)} yaws")
    task = _Task(t)
    kept = sorted({s for s in stops if 0 <= s < min(len(pos), LL_MAX_STEPS)})[: len(task.goals)]
    backend, camera = world(ep)
    meta = ep.ep.metadata
    ents = [Entity(e["id"], e["kind"], tuple(e["point"])) for e in meta["entities"]]
    views = ep.ep["viewpoints"].read().astype(np.float64)
    idx = ep.ep["viewpoint_receptacle"].read()
    by_rec = {rid: views[idx == k] for k, rid in enumerate(meta["receptacles"])}
    poses = np.column_stack([pos[kept], yaws[kept]]) if kept else np.zeros((0, 4))
    rooms = _rooms_of(room_polygons(backend), poses, meta["rooms"])
    bits = frame_checks(backend, ents, poses, rooms, meta["rooms"], by_rec, camera)
    index = {e.id: k for k, e in enumerate(ents)}
    step_results: list[dict[str, tuple[str, ...]]] = [{} for _ in range(len(pos))]
    for j, s in enumerate(kept):
        step_results[s] = frame_results(bits, index, task.goals, j)
    ok = low_level_success(task, step_results[:LL_MAX_STEPS], kept)
    l_m = t.get("shortest_m")
    if l_m is None:
        return ok, None
    grid = ep.grid(agent_radius)
    last = (max(kept) if kept else len(pos) - 1) + 1
    p = path_length(
        tuple(pos[0]), [tuple(q) for q in pos[1:last]], lambda a, b: float(grid.distance(a, b))
    )
    return ok, spl(ok, float(l_m), p) if np.isfinite(p) else None


def _rooms_of(
    polys: Mapping[str, Polygon], poses: np.ndarray, room_ids: Sequence[str]
) -> np.ndarray:
    from dataforge.world.graph import room_of

    out = []
    for p in poses:
        r = room_of((p[0], p[1], p[2]), polys)
        out.append(room_ids.index(r) if r in room_ids else -1)
    return np.asarray(out, dtype=np.int64)


def summary(
    scores: Sequence[tuple[str, TaskScore]], categories: Sequence[str] = ()
) -> dict[str, Any]:
    return summarize([s for _, s in scores], categories=categories)


__all__ = [
    "EpisodeTasks",
    "frame_results",
    "high_level_success",
    "load_tasks",
    "read_records",
    "score_predictions",
    "summary",
]


# -- the command --------------------------------------------------------------------------------

METRIC_COLUMNS = ("HL-SR", "HL-SPL", "HL-SPL-frames", "DTG-SR", "SC-SR")
LL_COLUMNS = ("LL-SR", "LL-SR|HL", "LL-SPL")


def run_score(
    tasks_dir: str | Path,
    predictions: str | Path,
    *,
    trajectories: str | Path | None = None,
    allow_missing: bool = False,
    templates: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The scores of ``predictions`` (and ``trajectories``) on ``tasks_dir``: the metrics'
    summary (:func:`.metrics.summarize`) plus counts."""
    from dataforge.pipelines.findingdory.templates import GROUPS
    from dataforge.store import open_dataset

    preds = read_records(Path(predictions), "prediction", ("id", "frame_indices"))
    trajs = (
        read_records(Path(trajectories), "trajectory", ("id", "positions", "yaws", "stops"))
        if trajectories is not None
        else None
    )
    if trajs is not None:
        check_trajectories(trajs, Path(str(trajectories)))
    with open_dataset(tasks_dir) as ds:
        if ds.manifest.pipeline != "findingdory-tasks":
            raise UsageError(f"{tasks_dir} is not a tasks dataset (dataforge findingdory tasks)")
        episodes = load_tasks(ds, templates)
        radius = float(ds[ds.episode_ids[0]].metadata.get("agent_radius", 0.25))
        wanted = {tid for e in episodes for tid in e.tasks}
        unknown = sorted(set(preds) - wanted)
        scores, counts = score_predictions(
            episodes,
            preds,
            allow_missing=allow_missing,
            trajectories=trajs,
            agent_radius=radius,
            world=EpisodeTasks.day,
        )
        for ep in episodes:
            ep.close()
    cats = [c for g in GROUPS.values() for c in g]
    return {
        "scores": summary(scores, cats),
        "tasks": len(scores),
        "malformed": counts["malformed"],
        "missing": counts["missing"],
        "unknown_ids": len(unknown),
        "parse": parse_modes(preds, wanted),
        "low_level": trajs is not None,
    }


def parse_modes(preds: Mapping[str, Mapping[str, Any]], ids: Iterable[str]) -> dict[str, int]:
    """How many of the predictions for ``ids`` each way of reading replies gave (their
    ``parse``, :data:`.evaluate.PARSE_MODES`; ``unrecorded`` for records without one, e.g.
    baselines): the scores depend on it (upstream scores an unusable answer as frame 0)."""
    counts = Counter(str(preds[t].get("parse", "unrecorded")) for t in ids if t in preds)
    return dict(sorted(counts.items()))


def table(report: Mapping[str, Any]) -> Table:
    """A rich table of a :func:`run_score` report: solvable tasks per category and overall,
    then the unsolvable ones overall."""
    from rich.table import Table

    cols = METRIC_COLUMNS + (LL_COLUMNS if report["low_level"] else ())
    modes = ", ".join(f"{k} {v}" for k, v in report.get("parse", {}).items()) or "none"
    t = Table(
        title=f"FindingDory scores ({report['tasks']} tasks; {report['malformed']} "
        f"malformed, {report['missing']} missing predictions; "
        f"parse: {modes})"
    )
    t.add_column("tasks")
    t.add_column("n", justify="right")
    for c in cols:
        t.add_column(c, justify="right")

    def row(name: str, block: Mapping[str, Any]) -> None:
        cells = []
        for c in cols:
            m = block[c]["mean"]
            cells.append("-" if m is None else f"{m:.3f}")
        t.add_row(name, str(block["tasks"]), *cells)

    solv = report["scores"]["solvable"]
    for name, block in solv["categories"].items():
        if block["tasks"]:
            row(name, block)
    row("solvable: all", solv["overall"])
    row("unsolvable: all", report["scores"]["unsolvable"]["overall"])
    return t
