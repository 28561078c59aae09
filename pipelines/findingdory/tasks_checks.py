"""Invariants, statistics and the preview of FindingDory task datasets (``findingdory-tasks``,
registered in ``__init__``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.registry import PipelineStats
from dataforge.store.reader import Dataset, StoredEpisode

INVARIANTS = {
    "templates": "every one of the 60 templates is instantiated or skipped with a reason in each "
    "episode; each task's category, group, predicate, order and subgoal count are its "
    "template's, its goals name known entities, its id is unique",
    "valid_frames": "each subgoal's valid frames are exactly the frames whose stored checks "
    "satisfy the predicate for one of its entities, from that entity's counts_from on (an "
    "interacted object: its place routine's first frame, never before; others: frame 0); "
    "solvable = every subgoal has one; and "
    "teleporting to the first valid frame of the episode's first solvable task in the stored "
    "world (render + geodesic) satisfies its predicate again",
    "files": "tasks.jsonl holds exactly the stored tasks, in order, in the released QA fields",
}


def check_episode(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    from dataforge.pipelines.findingdory.goal_frames import labels, valid_frames
    from dataforge.pipelines.findingdory.templates import load_templates

    meta = ep.metadata
    templates = {t.id: t for t in load_templates()}
    seen = {t["template"] for t in meta["tasks"]} | {s["template"] for s in meta["skipped"]}
    if seen != set(templates):
        missing = sorted(set(templates) - seen)
        yield "templates", f"templates neither instantiated nor skipped: {missing[:5]}"
    for s in meta["skipped"]:
        if not str(s.get("reason") or "").strip():
            yield "templates", f"{s['template']} skipped without a reason"
    entities = {e["id"]: k for k, e in enumerate(meta["entities"])}
    ids = [t["id"] for t in meta["tasks"]]
    if len(set(ids)) != len(ids):
        yield "templates", "task ids repeat"
    for t in meta["tasks"]:
        tpl = templates.get(t["template"])
        if tpl is None:
            yield "templates", f"{t['id']}: unknown template"
            continue
        if (t["category"], t["group"]) != (tpl.category, tpl.group):
            yield "templates", f"{t['id']}: category or group differ from {tpl.id}'s"
        if t["multi_goal"] != (tpl.group == "multi_goal") or (
            not t["multi_goal"] and len(t["goals"]) != 1
        ):
            yield "templates", f"{t['id']}: subgoals do not fit a {tpl.group} template"
        unknown = [e for g in t["goals"] for e in g if e not in entities]
        if unknown:
            yield "templates", f"{t['id']}: goals name unknown entities {unknown[:3]}"
    n = int(meta["frames"])
    bits = ep["checks"].read().reshape(len(entities), n) if entities else np.zeros((0, n))
    tracked = labels(bits, [e.get("counts_from", 0) for e in meta["entities"]])
    for t in meta["tasks"]:
        want = [valid_frames(tracked, entities, g) for g in t["goals"]]
        if want != t["valid_frames"]:
            yield "valid_frames", f"{t['id']}: stored valid frames differ from the checks'"
        if bool(t["solvable"]) != all(want):
            yield "valid_frames", f"{t['id']}: solvable is {t['solvable']}"
    yield from _teleport(ep, meta)


def _teleport(ep: StoredEpisode, meta: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Build the world from the stored house JSON (an HSSD scene: from its data folder and the
    stored final objects; not the replay that made the checks),
    teleport to the first valid frame of the first solvable robot_at_* task, render and check
    its predicate again."""
    from dataforge.pipelines.findingdory.goal_frames import ALL, Entity, frame_checks

    task = next(
        (t for t in meta["tasks"] if t["solvable"] and t["predicate"] != "robot_in_room"), None
    )
    if task is None:
        return
    from dataforge.pipelines.findingdory.day_world import scenes_root_of
    from dataforge.pipelines.findingdory.goal_frames import stored_world

    world, cam = stored_world(ep, scenes_root_of(ep.dataset.manifest))
    f = task["valid_frames"][0][0]
    pose = ep["frame_pose"].read()[f : f + 1]
    views = ep["viewpoints"].read().astype(np.float64)
    idx = ep["viewpoint_receptacle"].read()
    by_rec = {rid: views[idx == k] for k, rid in enumerate(meta["receptacles"])}
    ents = [
        Entity(e["id"], e["kind"], tuple(e["point"]))
        for e in meta["entities"]
        if e["id"] in task["goals"][0]
    ]
    bits = frame_checks(world, ents, pose, np.array([-1]), [], by_rec, cam)
    world.close()
    if not np.any(bits[:, 0] == ALL):
        yield "valid_frames", f"{task['id']}: frame {f}, teleported to, fails {task['predicate']}"


def check_dataset(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    from dataforge.pipelines.findingdory.tasks import TASKS_FILE, tasks_file

    path = ds.root / TASKS_FILE
    if TASKS_FILE not in ds.manifest.files or not path.is_file():
        yield None, "files", f"{TASKS_FILE} is missing"
        return
    if path.read_bytes() != tasks_file(ds):
        yield None, "files", f"{TASKS_FILE} differs from the stored tasks"


def stats(ds: Dataset) -> PipelineStats:
    by_cat: Counter[str] = Counter()
    solvable: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    per_ep: list[float] = []
    frames: list[float] = []
    for ep in ds.episodes():
        meta = ep.metadata
        per_ep.append(float(len(meta["tasks"])))
        frames.append(float(meta["frames"]))
        for t in meta["tasks"]:
            by_cat[t["category"]] += 1
            solvable[t["category"]] += int(bool(t["solvable"]))
        skipped.update(s["template"] for s in meta["skipped"])
    total = sum(by_cat.values())
    return PipelineStats(
        counts={
            "episodes": len(per_ep),
            "tasks": total,
            "solvable share": round(sum(solvable.values()) / total, 3) if total else None,
            "tasks per category": dict(sorted(by_cat.items())),
            "solvable per category": dict(sorted(solvable.items())),
            "most skipped templates": dict(skipped.most_common(8)),
            "paper (val)": "100 episodes, 5,876 tasks (58.8 per episode)",
        },
        distributions={"tasks_per_episode": per_ep, "frames_per_episode": frames},
    )


def preview(ep: StoredEpisode, path: Path, step: int | None) -> None:
    """Task ``step`` (default 0) of the episode: its instruction and up to six of its valid
    goal frames per subgoal, from the experience dataset."""
    from dataforge.pipelines.findingdory.figures import task_figure

    task_figure(ep, path, 0 if step is None else int(step))
