"""Invariants and statistics of IR2R tour datasets (registered in ``__init__``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import numpy as np

from dataforge.pipelines.ir2r.episodes import instr_id
from dataforge.pipelines.ir2r.table import table1
from dataforge.registry import PipelineStats
from dataforge.store.reader import Dataset, StoredEpisode

INVARIANTS = {
    "sets-cover": "every path of a kept scene is in exactly one set, or listed as dropped",
    "tours-per-set": "a set with n = min instruction count has exactly n tours, repetitions "
    "0..n-1, in one order",
    "once-per-tour": "every path of a set appears exactly once per tour, so exactly n times "
    "across its tours",
    "instructions": "a path's instruction index is valid and differs between the set's n tours",
    "costs": "consecutive oracle costs are finite and non-negative, the first is 0; total_m is "
    "their sum",
    "episode-ids": "episode ids are unique; discrete ids are '<path_id>_<instruction>'",
}

# one tour of a set: its episode id, metadata, path ids and instruction indices
_Tour = tuple[str, dict[str, Any], np.ndarray, np.ndarray]


def check_episode(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    arr = ep.read()
    meta = ep.metadata
    pids, instr, cost = arr["path_id"], arr["instruction"], arr["transition_m"]
    per_path = meta["episodes_per_path"]
    if len(set(pids.tolist())) != len(pids):
        yield "once-per-tour", "a path appears more than once in the tour"
    for pid, k in zip(pids.tolist(), instr.tolist(), strict=True):
        count = per_path.get(str(pid))
        if count is None:
            yield "once-per-tour", f"path {pid} is not listed in episodes_per_path"
        elif not 0 <= k < count:
            yield "instructions", f"path {pid}: instruction index {k} is not in 0..{count - 1}"
    if len(cost) and cost[0] != 0:
        yield "costs", f"first transition is {cost[0]} m, not 0"
    if not np.all(np.isfinite(cost)) or np.any(cost < 0):
        yield "costs", "an oracle transition cost is infinite, NaN or negative"
    elif not np.isclose(meta["total_m"], float(cost.sum()), rtol=1e-9, atol=1e-9):
        yield "costs", f"total_m {meta['total_m']} differs from the sum of transitions {cost.sum()}"
    if len(meta["episode_ids"]) != len(pids):
        yield "episode-ids", "episode_ids and path_id differ in length"


def check_dataset(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    discrete = not ds.manifest.config.get("continuous", False)
    sets: dict[tuple[str, int], list[_Tour]] = defaultdict(list)
    scene_info: dict[str, list[dict[str, Any]]] = defaultdict(list)
    seen_ids: dict[str, str] = {}
    for ep in ds.episodes():
        meta = ep.metadata
        pids, instr = ep["path_id"].read(), ep["instruction"].read()
        sets[(meta["scene"], meta["set"])].append((ep.id, meta, pids, instr))
        if "scene_paths" in meta:
            scene_info[meta["scene"]].append(meta)
        for k, eid in enumerate(meta["episode_ids"]):
            key = json_key(eid)
            if key in seen_ids:
                yield ep.id, "episode-ids", f"episode id {eid!r} is also in {seen_ids[key]}"
            seen_ids[key] = ep.id
            if discrete and k < len(pids) and eid != instr_id(int(pids[k]), int(instr[k])):
                yield ep.id, "episode-ids", f"episode id {eid!r} is not '{pids[k]}_{instr[k]}'"
    yield from _check_sets(sets)
    yield from _check_scenes(sets, scene_info)


def json_key(value: object) -> str:
    return f"{type(value).__name__}:{value}"


def _check_sets(
    sets: dict[tuple[str, int], list[_Tour]],
) -> Iterator[tuple[str | None, str, str]]:
    for (scene, s), tours in sorted(sets.items()):
        first_id, meta, order, _ = tours[0]
        per_path = meta["episodes_per_path"]
        n = min(per_path.values())
        where = f"scene {scene} set {s}"
        if len(tours) != n:
            yield first_id, "tours-per-set", f"{where}: {len(tours)} tours, expected n = {n}"
        reps = sorted(m["repetition"] for _, m, _, _ in tours)
        if reps != list(range(len(tours))):
            yield first_id, "tours-per-set", f"{where}: repetitions are {reps}"
        if sorted(per_path) != sorted(str(p) for p in order.tolist()):
            msg = f"{where}: episodes_per_path does not list exactly the set's paths"
            yield first_id, "once-per-tour", msg
        used: dict[int, list[int]] = defaultdict(list)
        for eid, _, pids, instr in tours:
            if not np.array_equal(pids, order):
                yield eid, "tours-per-set", f"{where}: tour order differs from the set's first tour"
            for p, k in zip(pids.tolist(), instr.tolist(), strict=True):
                used[p].append(k)
        for p, ks in used.items():
            if len(ks) != n:
                msg = f"{where}: path {p} appears {len(ks)} times, expected {n}"
                yield first_id, "once-per-tour", msg
            if len(set(ks)) != len(ks):
                msg = f"{where}: path {p} repeats an instruction ({sorted(ks)})"
                yield first_id, "instructions", msg


def _check_scenes(
    sets: dict[tuple[str, int], list[_Tour]], scene_info: dict[str, list[dict[str, Any]]]
) -> Iterator[tuple[str | None, str, str]]:
    members: dict[str, list[int]] = defaultdict(list)
    for (scene, _), tours in sets.items():
        members[scene] += tours[0][2].tolist()
    for scene in sorted(members):
        infos = scene_info.get(scene, [])
        if len(infos) != 1:
            msg = f"scene {scene}: {len(infos)} tours carry scene_paths, expected 1"
            yield None, "sets-cover", msg
            continue
        listed = sorted(int(p) for p in infos[0]["scene_paths"])
        covered = members[scene] + [int(p) for p in infos[0]["dropped_paths"]]
        if len(set(covered)) != len(covered):
            msg = f"scene {scene}: a path is in two sets (or both kept and dropped)"
            yield None, "sets-cover", msg
        if sorted(set(covered)) != listed:
            missing = sorted(set(listed) - set(covered))
            msg = f"scene {scene}: paths {missing[:5]} are in no set and not dropped"
            yield None, "sets-cover", msg


def stats(ds: Dataset) -> PipelineStats:
    t = table1(ds)
    transitions: list[float] = []
    totals: list[float] = []
    lengths: list[int] = []
    for ep in ds.episodes():
        cost = ep["transition_m"].read()
        transitions += cost[1:].tolist()
        totals.append(float(cost.sum()))
        lengths.append(len(cost))
    return PipelineStats(
        counts={
            "scenes": t["scenes"],
            "R2R episodes in tours": t["episodes"],
            "tours": t["tours"],
            "tours per scene": round(t["tours_per_scene"], 2),
            "tour length mean": round(t["tour_length"]["mean"], 2),
            "tour length SD": round(t["tour_length"]["sd"], 2),
        },
        distributions={
            "tour length (episodes)": [float(v) for v in lengths],
            "oracle transition between episodes (m)": transitions,
            "tour oracle distance (m)": totals,
        },
    )
