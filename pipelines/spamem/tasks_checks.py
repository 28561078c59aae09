"""What ``dataforge validate`` and ``stats`` know about SpaMEM question sets (the
``spamem-tasks`` pipeline)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.records import question_problem
from dataforge.pipelines.spamem.tasks import episode_records, question_lines
from dataforge.registry import PipelineStats
from dataforge.store.hashing import sha256_file

INVARIANTS = {
    "records": "every question record names a known level, task, horizon and modality, its "
    "answer is well formed for the task's answer type, its frames belong to its sequence, and "
    "ids are unique",
    "files": "the question files beside the shards hold exactly the shards' records, in order",
}


def record_problem(r: dict[str, Any], episode: str) -> str | None:
    problem = question_problem(r)
    if problem:
        return problem
    if r["episode"] != episode or any(f["episode"] != episode for f in r["frames"]):
        return f"frames of another sequence than {episode}"
    if any(f["step"] > r["step"] for f in r["frames"]):
        return "a frame after the query step"
    return None


def check_episode(ep: Any) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for i, r in enumerate(episode_records(ep)):
        problem = record_problem(r, ep.id)
        if problem:
            yield "records", f"record {i} ({r.get('id', '?')}): {problem}"
        elif r["id"] in seen:
            yield "records", f"record {i}: duplicate id {r['id']}"
        seen.add(r.get("id", ""))


def check_dataset(ds: Any) -> Iterator[tuple[str | None, str, str]]:
    """The files against the shards' records, by sha256 (one streaming pass)."""
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


def stats(ds: Any) -> PipelineStats:
    """Questions per file and per task, answer distributions (how often a set is empty, a count
    0, and the share of the most frequent answer: the blind baseline's ceiling), and skips."""
    per_file: Counter[str] = Counter()
    per_task: dict[str, Counter[str]] = {}
    skipped: Counter[str] = Counter()
    sizes: list[float] = []
    for ep in ds.episodes():
        skipped.update(ep.metadata.get("skipped", {}))
        for r in episode_records(ep):
            per_file[qa.file_name(r["level"], r["task"], r["horizon"], r["modality"])] += 1
            c = per_task.setdefault(r["task"], Counter())
            c["questions"] += 1
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
                t: c for t in order if (c := per_task[t]["[]"] + per_task[t]["{}"])
            },
            "zero counts per task": {t: per_task[t]["0"] for t in order if per_task[t]["0"]},
            "most frequent answer's share": {t: round(top[t] / n[t], 3) for t in order},
            "question files": len(per_file),
            "skipped": dict(sorted(skipped.items())),
        },
        distributions={"answer_size": sizes},
    )


def _answer_key(a: Any) -> str:
    import json

    return json.dumps(a, sort_keys=True, separators=(",", ":"))


def preview(ep: Any, path: Any, step: int | None) -> None:
    from dataforge.pipelines.spamem.task_figures import preview as draw

    draw(ep, path, step)
