"""What ``dataforge validate`` and ``stats`` know about SpaMEM question sets (the
``spamem-tasks`` pipeline)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.records import question_problem
from dataforge.pipelines.spamem.tasks import episode_records, question_lines
from dataforge.registry import PipelineStats
from dataforge.store.hashing import sha256_file
from dataforge.store.reader import Dataset, StoredEpisode

if TYPE_CHECKING:
    from dataforge.pipelines.spamem.evaluate import FrameSource

INVARIANTS = {
    "records": "every question record names a known level, task, horizon and modality, its "
    "answer is well formed for the task's answer type, its frames belong to its sequence, and "
    "ids are unique",
    "files": "the question files beside the shards hold exactly the shards' records, in order",
    "evidence": "every frame an evidence entry names is among its record's frames, and every "
    "instance id it lists is in the box table of one of those frames (when the sequences "
    "dataset the frames name can be opened)",
}

Boxes = Callable[[int, int], set[int]]
"""(step, view) -> the instance ids of that frame's box table."""


def evidence_problem(r: dict[str, Any], boxes: Boxes | None) -> str | None:
    """Why record ``r``'s ``evidence`` does not fit its frames (None if it does): an entry's
    frame that the record does not give, or (with ``boxes``) an instance id in none of its
    entry's frames' box tables. Records written before evidence have none to check."""
    given = {(int(f["step"]), int(f["view"])) for f in r["frames"]}
    for e in r.get("evidence", []):
        frames = [(int(s), int(v)) for s, v in e["frames"]]
        for s, v in frames:
            if (s, v) not in given:
                return f"evidence {e['item']!r}: frame [{s}, {v}] is not among its frames"
        if boxes is None:
            continue
        boxed = set().union(*(boxes(s, v) for s, v in frames))
        if stray := sorted(set(e["instances"]) - boxed):
            return f"evidence {e['item']!r}: instances {stray} in no box table of its frames"
    return None


def record_problem(r: dict[str, Any], episode: str) -> str | None:
    problem = question_problem(r)
    if problem:
        return problem
    if r["episode"] != episode or any(f["episode"] != episode for f in r["frames"]):
        return f"frames of another sequence than {episode}"
    if any(f["step"] > r["step"] for f in r["frames"]):
        return "a frame after the query step"
    return None


def check_episode(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for i, r in enumerate(episode_records(ep)):
        problem = record_problem(r, ep.id)
        if problem:
            yield "records", f"record {i} ({r.get('id', '?')}): {problem}"
        elif r["id"] in seen:
            yield "records", f"record {i}: duplicate id {r['id']}"
        seen.add(r.get("id", ""))


def check_dataset(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    """The files against the shards' records, by sha256 (one streaming pass); every record's
    evidence against its frames and their box tables (:func:`evidence_problem`)."""
    yield from _check_files(ds)
    yield from _check_evidence(ds)


def _check_evidence(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    from dataforge.pipelines.spamem.evaluate import FrameSource

    try:
        source: FrameSource | None = FrameSource(Path(ds.root))
    except Exception:  # no tasks manifest inputs: the frames half only
        source = None
    try:
        for ep in ds.episodes():
            table: Boxes | None = None
            for i, r in enumerate(episode_records(ep)):
                if not r.get("evidence") or question_problem(r):
                    continue  # "records" reports a malformed one
                if table is None and source is not None:
                    table = _box_table(source, r)
                if problem := evidence_problem(r, table):
                    yield ep.id, "evidence", f"record {i} ({r['id']}): {problem}"
    finally:
        if source is not None:
            source.close()


def _box_table(source: FrameSource, r: dict[str, Any]) -> Boxes | None:
    """(step, view) -> instance ids of the box table of record ``r``'s sequence, None when its
    dataset cannot be opened."""
    try:
        ds, _ = source.dataset(r["frames"][0]["dataset"])
        seq = ds[r["episode"]]
        views = int(seq.metadata["views_per_state"])
        rows = seq["box2d"].read()
    except Exception:
        return None
    ids: dict[int, set[int]] = {}
    for row in rows:
        ids.setdefault(int(row[0]), set()).add(int(row[1]))
    return lambda step, view: ids.get(step * views + view, set())


def _check_files(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    want: dict[str, Any] = {}
    for rel, line in question_lines(ds):
        want.setdefault(rel, hashlib.sha256()).update(line)
    have = {rel for rel in ds.manifest.files if rel.startswith(qa.QUESTIONS_DIR + "/")}
    for rel in sorted(set(want) | have):
        path = Path(ds.root) / rel
        if rel not in want:
            yield None, "files", f"{rel} holds records of no shard"
        elif not path.is_file() or sha256_file(path) != want[rel].hexdigest():
            yield None, "files", f"{rel} differs from the shards' records"


def stats(ds: Dataset) -> PipelineStats:
    """Questions per file and per task, answer distributions (how often a set is empty, a count
    0, and the share of the most frequent answer: the blind baseline's ceiling), skips, and per
    task x horizon x level the share of records whose every gold item has evidence (a frame
    that shows it, or at L2 the text history; records without evidence are not counted)."""
    from dataforge.pipelines.spamem.questions import shown

    per_file: Counter[str] = Counter()
    evidenced: dict[str, Counter[str]] = {}
    per_task: dict[str, Counter[str]] = {}
    skipped: Counter[str] = Counter()
    sizes: list[float] = []
    for ep in ds.episodes():
        skipped.update(ep.metadata.get("skipped", {}))
        for r in episode_records(ep):
            per_file[qa.file_name(r["level"], r["task"], r["horizon"], r["modality"])] += 1
            c = per_task.setdefault(r["task"], Counter())
            c["questions"] += 1
            if "evidence" in r:
                e = evidenced.setdefault(f"{r['task']} {r['horizon']} L{r['level']}", Counter())
                e["records"] += 1
                e["complete"] += shown(r)
            a = r["answer"]
            c[_answer_key(a)] += 1
            if isinstance(a, (list, dict)):
                sizes.append(float(len(a)))
    order = [t for t in qa.TASKS if t in per_task]
    n = {t: per_task[t]["questions"] for t in order}
    top = {t: max(v for k, v in per_task[t].items() if k != "questions") for t in order}
    return PipelineStats(
        counts={
            "sequences": len(ds.manifest.episodes),
            "questions": sum(per_file.values()),
            "questions per task": n,
            "empty answers per task": {
                t: empty for t in order if (empty := per_task[t]["[]"] + per_task[t]["{}"])
            },
            "zero counts per task": {t: per_task[t]["0"] for t in order if per_task[t]["0"]},
            "most frequent answer's share": {t: round(top[t] / n[t], 3) for t in order},
            "question files": len(per_file),
            "skipped": dict(sorted(skipped.items())),
            "complete evidence share": {
                k: round(evidenced[k]["complete"] / evidenced[k]["records"], 3)
                for k in sorted(evidenced, key=_cell_order)
            },
        },
        distributions={"answer_size": sizes},
    )


def _cell_order(cell: str) -> tuple[int, int, str]:
    """ "SOR-M short L3" in the tasks' order, then the horizons', then by level."""
    task, horizon, level = cell.split(" ")
    return list(qa.TASKS).index(task), list(qa.HORIZONS).index(horizon), level


def _answer_key(a: object) -> str:
    import json

    return json.dumps(a, sort_keys=True, separators=(",", ":"))


def preview(ep: StoredEpisode, path: Path, step: int | None) -> None:
    from dataforge.pipelines.spamem.task_figures import preview as draw

    draw(ep, path, step)
