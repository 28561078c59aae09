"""Run every SpaMEM baseline on a tasks directory and print, per task x horizon x level, each
kind's headline metric (qa.TaskSpec.headline), with the share of empty answers and of the most
frequent answer per task (issue 37's measurement of answers reachable without looking), and
the share of records whose every gold item has evidence in the record's own frames (``visible``;
at L2, items before the query step count as given by the text history):

    python scripts/spamem_validity.py demo_out/spamem_tasks [MORE_TASKS ...] [--modality rgb]
        [--json out.json]

Several tasks directories are scored as one set (each record's id prefixed by its directory's
position, since two datasets may both hold a ``house-000000``).

``--stream DIR [DIR ...]``: question sets of the same sequences made with ``--frames stream``
(the paper's fixed stream); the table then also gives, per cell, their number of records and
the share whose evidence is complete, beside the scores of the (evidence-framed) sets: the
docs' "Measured" table.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.baselines import KINDS, answers
from dataforge.pipelines.spamem.questions import shown
from dataforge.pipelines.spamem.records import load_questions
from dataforge.pipelines.spamem.score import score

BY = ("level", "task", "horizon")


def headlines(
    questions: Sequence[Mapping[str, Any]], tasks_dirs: Sequence[str]
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """(level, task, horizon) -> {"questions": n, "visible": share with evidence, kind: headline
    mean (None if undefined)}; the evidence oracle reads L2 histories too. A record's ``dir``
    is the index of its tasks directory in ``tasks_dirs``."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for q in questions:
        row = out.setdefault(tuple(q[f] for f in BY), {"questions": 0, "visible": 0.0})
        row["questions"] += 1
        row["visible"] += "evidence" in q and shown(q)
    for row in out.values():
        row["visible"] /= row["questions"]
    frames = all((Path(d) / "manifest.json").is_file() for d in tasks_dirs)  # datasets
    for kind in KINDS if frames else [k for k in KINDS if k != "evidence"]:
        asked = questions
        if kind == "evidence":  # frames are read per directory
            preds = {
                p["id"]: p
                for i, d in enumerate(tasks_dirs)
                for p in answers([q for q in asked if q["dir"] == i], kind, d)
            }
        else:
            preds = {p["id"]: p for p in answers(asked, kind)}
        for g in score(asked, preds, by=BY).to_json()["groups"]:
            row = out.setdefault(tuple(g[f] for f in BY), {"questions": g["questions"]})
            row[kind] = g["metrics"][qa.TASKS[g["task"]].headline]["mean"]
    return out


def answer_shares(questions: Sequence[Mapping[str, Any]]) -> dict[str, tuple[float, float]]:
    """task -> (share of empty gold answers, share of the most frequent gold answer)."""
    by_task: dict[str, list[str]] = {}
    empty: Counter[str] = Counter()
    for q in questions:
        a = q["answer"]
        by_task.setdefault(q["task"], []).append(json.dumps(a, sort_keys=True))
        empty[q["task"]] += a in ([], {})
    return {
        t: (empty[t] / len(v), Counter(v).most_common(1)[0][1] / len(v)) for t, v in by_task.items()
    }


def load(tasks_dirs: Sequence[str], modality: str) -> list[dict[str, Any]]:
    """The records of ``modality`` of every directory, ids prefixed by its position when
    several, ``dir`` its index."""
    return [
        {**q, "id": f"{i}:{q['id']}" if len(tasks_dirs) > 1 else q["id"], "dir": i}
        for i, d in enumerate(tasks_dirs)
        for q in load_questions(d)
        if q["modality"] == modality
    ]


def visible_shares(questions: Sequence[Mapping[str, Any]]) -> dict[tuple[Any, ...], list[float]]:
    """(level, task, horizon) -> [records, share whose evidence is complete]."""
    out: dict[tuple[Any, ...], list[float]] = {}
    for q in questions:
        row = out.setdefault(tuple(q[f] for f in BY), [0, 0.0])
        row[0] += 1
        row[1] += "evidence" in q and shown(q)
    return {k: [n, v / n] for k, (n, v) in out.items()}


def print_compared(
    rows: Mapping[tuple[Any, ...], Mapping[str, Any]],
    stream: Mapping[tuple[Any, ...], list[float]],
) -> None:
    """The docs' table: per cell the stream set's size and visible share, the evidence-framed
    set's size and its baselines' headlines, and the paper's InternVL3 (``qa.PAPER_INTERNVL3``)."""
    print(
        "| task | horizon | level | headline | stream n | stream visible | kept n "
        "| evidence oracle | blind | prior | rule | InternVL3 (paper) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    order = {t: i for i, t in enumerate(qa.TASKS)}
    hz = {h: i for i, h in enumerate(qa.HORIZONS)}
    for key in sorted(set(rows) | set(stream), key=lambda k: (order[k[1]], hz[k[2]], k[0])):
        level, task, horizon = key
        row = rows.get(key, {})
        n, vis = stream.get(key, [0, None])
        cells = " | ".join(_num(row.get(k)) for k in ("evidence", "blind", "prior", "rule"))
        print(
            f"| {task} | {horizon} | L{level} | {qa.TASKS[task].headline} | {int(n)} "
            f"| {_num(vis)} | {row.get('questions', 0)} | {cells} "
            f"| {_num(qa.PAPER_INTERNVL3.get(key))} |"
        )


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tasks_dir", nargs="+")
    ap.add_argument("--modality", default="rgb", choices=qa.MODALITIES)
    ap.add_argument("--json", default=None, help="Also write the numbers to this JSON file.")
    ap.add_argument("--stream", nargs="+", default=None, help="--frames stream sets to compare.")
    args = ap.parse_args()
    questions = load(args.tasks_dir, args.modality)
    rows = headlines(questions, args.tasks_dir)
    if args.stream:
        print_compared(rows, visible_shares(load(args.stream, args.modality)))
        return
    shares = answer_shares(questions)
    print(f"{len(questions)} {args.modality} questions; each task's headline, higher is better\n")
    kinds = " | ".join(KINDS)
    print(f"| task | horizon | level | n | headline | visible | {kinds} | empty | most frequent |")
    print("|---|---|---|---|---|---|" + "---|" * len(KINDS) + "---|---|")
    order = {t: i for i, t in enumerate(qa.TASKS)}
    hz = {h: i for i, h in enumerate(qa.HORIZONS)}
    for key in sorted(rows, key=lambda k: (order[k[1]], hz[k[2]], k[0])):
        level, task, horizon = key
        row = rows[key]
        cells = " | ".join(_num(row.get(k)) for k in KINDS)
        e, top = shares[task]
        print(
            f"| {task} | {horizon} | L{level} | {row['questions']} | {qa.TASKS[task].headline} "
            f"| {row['visible']:.2f} | {cells} | {e:.2f} | {top:.2f} |"
        )
    if args.json:
        doc = {
            "modality": args.modality,
            "headlines": [dict(zip(BY, k, strict=True), **v) for k, v in rows.items()],
            "answers": {t: {"empty": e, "most_frequent": m} for t, (e, m) in shares.items()},
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1, allow_nan=False)


if __name__ == "__main__":
    main()
