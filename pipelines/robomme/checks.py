"""Invariants and statistics of RoboMME datasets (registered in ``__init__``). They read the
stored arrays only, so ``dataforge validate`` needs no simulator."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import h5py
import numpy as np

from dataforge.pipelines.robomme.episode import STEP_FIELDS, subgoal_boundaries
from dataforge.pipelines.robomme.h5layout import (
    ACTION_FIELDS,
    IMAGES,
    INFO_FLAGS,
    OBS_FIELDS,
    task_file,
)
from dataforge.pipelines.robomme.seeds import DIFFICULTY_CYCLE, scheme_seed
from dataforge.pipelines.robomme.suites import PAPER_AVG_STEPS, TASK_SUITES
from dataforge.registry import PipelineStats
from dataforge.store.formats.hdf5_shard import refuse_outside_data
from dataforge.store.reader import Dataset, StoredEpisode

# Franka Panda joint limits (rad), as in ManiSkill's panda_v3.urdf.
PANDA_LOWER = np.array([-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973])
PANDA_UPPER = np.array([2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973])
VIDEO_TASKS = {t for t, s in TASK_SUITES.items() if t.startswith("Video") or s == "Imitation"}


# the stored arrays that record_dataset_<Task>.h5 holds per step, by group (images apart)
H5_FIELDS = {
    **{f: "obs" for f in OBS_FIELDS if f not in IMAGES},
    **{f: "action" for f in ACTION_FIELDS},
    **{f: "info" for f in INFO_FLAGS},
}

INVARIANTS = {
    "rows": "every per-step array has one row per step; env_state holds (simulated steps + 1) x "
    "state_dim values",
    "limits": "joint actions and joint states are within the Panda's joint limits; gripper "
    "actions are -1 (close) or 1 (open); finger positions are within [0, 0.04] m (1 mm of "
    "simulation slack); depth is not negative",
    "boundaries": "is_subgoal_boundary is true exactly at the first step of each subgoal and at "
    "the first completed step (RoboMME's writer: its task index moves past the task list)",
    "completed": "is_completed is false, then true from the step the task succeeds to the last",
    "video": "is_video_demo frames form a prefix, present exactly for video-conditioned tasks",
    "subgoals": "subgoal indices are valid, non-decreasing and match the metadata's spans",
    "seed": "seed and difficulty follow the released scheme (or the --metadata-dir record), the "
    "seed advanced once per filtered attempt",
    "h5": "record_dataset_<Task>.h5 holds every episode in RoboMME's layout with the stored values",
}


def check_episode(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    meta = ep.metadata
    n = int(meta["steps"])
    arrays = {name: ep[name].read() for name in STEP_FIELDS}
    for name, arr in arrays.items():
        if len(arr) != n:
            yield "rows", f"{name} has {len(arr)} rows for {n} steps"
            return
    sim = int(meta.get("sim_steps", n))  # with the unrecorded (restaging) steps
    if ep["env_state"].shape[0] != (sim + 1) * int(meta["state_dim"]):
        have = ep["env_state"].shape[0]
        yield "rows", f"env_state holds {have} values, not {sim + 1} x state_dim"
    ja = arrays["joint_action"].astype(np.float64)
    for name, q in (("joint_action", ja[:, :7]), ("joint_state", arrays["joint_state"])):
        bad = np.flatnonzero(np.any((q < PANDA_LOWER - 1e-3) | (q > PANDA_UPPER + 1e-3), axis=1))
        if len(bad):
            yield "limits", f"{name} outside the Panda's joint limits at step {bad[0]}"
    if not np.all(np.isin(ja[:, 7], (-1.0, 1.0))):
        yield "limits", "a gripper action is neither -1 nor 1"
    g = arrays["gripper_state"]
    if np.any(g < -1e-3) or np.any(g > 0.04 + 1e-3):
        yield "limits", "gripper_state outside [0, 0.04]"
    if any(arrays[d].min() < 0 for d in ("front_depth", "wrist_depth")):
        yield "limits", "negative depth"
    expect = subgoal_boundaries(arrays["subgoal"], arrays["is_completed"])
    if not np.array_equal(arrays["is_subgoal_boundary"], expect):
        k = int(np.flatnonzero(arrays["is_subgoal_boundary"] != expect)[0])
        yield "boundaries", f"is_subgoal_boundary disagrees with the subgoal changes at step {k}"
    done = arrays["is_completed"]
    if not done[-1] or np.any(done[:-1] > done[1:]):
        yield "completed", "is_completed is not false then true up to the last step"
    video = arrays["is_video_demo"]
    nv = int(video.sum())
    if video[:nv].sum() != nv or nv != meta.get("video_steps"):
        yield "video", "is_video_demo frames are not a prefix of the episode matching video_steps"
    elif (nv > 0) != (meta["task"] in VIDEO_TASKS):
        yield (
            "video",
            f"{meta['task']} {'needs' if meta['task'] in VIDEO_TASKS else 'has no'} video",
        )
    for msg in _check_subgoals(arrays["subgoal"], arrays["subgoal_online"], meta["subgoals"], n):
        yield "subgoals", msg
    for msg in _check_seed(meta):
        yield "seed", msg


def _check_subgoals(
    sg: np.ndarray, online: np.ndarray, spans: list[dict[str, Any]], n: int
) -> Iterator[str]:
    if len(sg) and (sg.min() < 0 or sg.max() >= len(spans) or np.any(np.diff(sg) < 0)):
        yield "subgoal indices are out of range or decreasing"
        return
    if np.any(online < sg) or np.any(online > sg + 1):
        yield "subgoal_online is neither the planner's subgoal nor the next"
    for k, span in enumerate(spans):
        if not np.all(sg[span["start"] : span["end"]] == k):
            yield f"subgoal {k} ({span['simple']!r}) does not cover steps {span['start']}..."
            return
    if spans and spans[-1]["end"] != n:
        yield "the last subgoal does not end at the last step"


def _check_seed(meta: dict[str, Any]) -> Iterator[str]:
    retries = len(meta.get("filtered", []))
    if meta["seed"] != meta["requested_seed"] + retries:
        yield f"seed {meta['seed']} is not {meta['requested_seed']} + {retries} filtered"
    if meta.get("from_metadata"):
        return
    if meta["difficulty"] != DIFFICULTY_CYCLE[meta["episode"] % 4]:
        yield f"difficulty {meta['difficulty']} breaks the released cycle"
    want = scheme_seed(meta["task"], meta["split"], meta["episode"])
    if meta["requested_seed"] != want:
        yield f"seed {meta['requested_seed']} is not the scheme's {want}"


def check_dataset(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    by_task: dict[str, list[StoredEpisode]] = defaultdict(list)
    for ep in ds.episodes():
        by_task[ep.metadata["task"]].append(ep)
    for task, eps in sorted(by_task.items()):
        rel = task_file(task) if task in TASK_SUITES else None
        if rel is None or rel not in ds.manifest.files or not (ds.root / rel).is_file():
            yield None, "h5", f"the HDF5 file of task {task!r} is missing (or not a dataset file)"
            continue
        with h5py.File(ds.root / rel, "r") as f:
            try:
                refuse_outside_data(f)
            except ValueError as exc:
                yield None, "h5", f"{rel}: {exc}"
                continue
            if len(f) != len(eps):
                yield None, "h5", f"{rel} has {len(f)} episodes, the dataset {len(eps)}"
            for ep in eps:
                yield from ((ep.id, "h5", m) for m in _compare_h5(f, ep))


def _compare_h5(f: h5py.File, ep: StoredEpisode) -> Iterator[str]:
    """Every stored per-step value of ``ep`` against its group in the task's HDF5 file."""
    meta = ep.metadata
    name = f"episode_{meta['episode']}"
    if name not in f:
        yield f"{name} is missing from {task_file(meta['task'])}"
        return
    g = f[name]
    if (
        int(g["setup/seed"][()]) != meta["seed"]
        or g["setup/difficulty"].asstr()[()] != meta["difficulty"]
    ):
        yield f"{name}/setup seed or difficulty differs from the stored episode"
    steps = [k for k in g if k.startswith("timestep_")]
    if len(steps) != meta["steps"]:
        yield f"{name} has {len(steps)} timesteps, the stored episode {meta['steps']}"
        return
    # every value of every step, and the images of the keyframes (reading every image of a
    # full-size dataset would make validate slow; the file's sha256 guards the rest)
    stored = {field: ep[field].read() for field in H5_FIELDS}
    images = {field: ep[field] for field in IMAGES}
    keyframes = set(preview_frames(ep, len(meta["subgoals"]) + 1))
    for t in range(meta["steps"]):
        s = g[f"timestep_{t}"]
        fields = [(f, grp, stored[f][t]) for f, grp in H5_FIELDS.items()]
        if t in keyframes:
            fields += [(f, "obs", images[f][t]) for f in sorted(IMAGES)]
        for field, group, value in fields:
            if not np.array_equal(s[f"{group}/{field}"][()], value, equal_nan=True):
                yield f"{name}/timestep_{t}/{group}/{field} differs from the stored episode"
                return


def preview_frames(ep: StoredEpisode, count: int) -> list[int]:
    """Preview frames: the first step of each subgoal (keyframes) and the last step, thinned
    evenly to ``max(count, 4)``."""
    meta = ep.metadata
    frames = sorted({sg["start"] for sg in meta["subgoals"]} | {meta["steps"] - 1})
    count = max(count, 4)
    if len(frames) > count:
        frames = [frames[round(k)] for k in np.linspace(0, len(frames) - 1, count)]
    return frames


def stats(ds: Dataset) -> PipelineStats:
    episodes: Counter[str] = Counter()
    steps: Counter[str] = Counter()
    by_difficulty: dict[str, Counter[str]] = defaultdict(Counter)
    filtered: Counter[str] = Counter()
    lengths: list[float] = []
    video: list[float] = []
    detours = missed = 0
    for ep in ds.episodes():
        m = ep.metadata
        episodes[m["task"]] += 1
        steps[m["task"]] += m["steps"]
        by_difficulty[m["task"]][m["difficulty"]] += 1
        filtered[m["task"]] += len(m.get("filtered", []))
        lengths.append(float(m["steps"]))
        video.append(float(m["video_steps"]))
        detours += len(m["noise"]["detours"])
        missed += m["noise"].get("missed_grasp") is not None
    table = {
        t: {
            "episodes": episodes[t],
            "steps": steps[t],
            "avg steps": round(steps[t] / episodes[t]),
            "paper avg steps": PAPER_AVG_STEPS.get(t),
            "easy/medium/hard": "/".join(str(by_difficulty[t][d]) for d in DIFFICULTY_CYCLE[1:]),
            "filtered": filtered[t],
        }
        for t in TASK_SUITES
        if episodes[t]
    }
    return PipelineStats(
        counts={
            "episodes": sum(episodes.values()),
            "steps": sum(steps.values()),
            "filtered attempts": sum(filtered.values()),
            "noise detours": detours,
            "missed grasps (recovery)": missed,
            "per task": table,
        },
        distributions={"steps per episode": lengths, "video steps per episode": video},
    )
