"""Reference answers for a question set (``dataforge spamem baseline``): what a model must beat.

- ``oracle``: the ground truth (scores perfectly: the scorer's self-test).
- ``prior``: procthor's receptacle co-occurrence statistics (``receptacles.json``: how likely an
  object type is on a receptacle type), never the images or the history: the likeliest types
  for the receptacle a question names, one object where one is asked for, and the whole window
  for a lifespan.
- ``blind``: per task, the most frequent answer of the question set (for boxes the per-task
  median box, for distances the median distance), so a benchmark whose answers cluster on one
  value shows it.
- ``rule``: the simplest prompt-only rules (issue 37), reading only a record's ``prompt``,
  ``step``, ``labels`` and ``task`` / ``answer_type``, never its ``answer``, ``context``,
  ``evidence`` or a world graph: a lifespan is [the step the prompt names the object at, the
  query step]; neighbours are the first 3 listed candidates, each "left"; a count is the task's
  most common count over the question set (``Blind``'s mode, so the one rule that uses the set's
  answers, as the issue names it); a set or a sequence is empty; boxes are the image-centre
  half box (the image size from the prompt); every distance is the capture radius, 1.5 m.
- ``evidence``: the answers a perfect perceiver reads from the record's own frames and, at
  L2, the prompt's text history (:mod:`.evidence_oracle`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from dataforge.errors import UsageError
from dataforge.pipelines.spamem import qa

KINDS = ("oracle", "prior", "blind", "rule", "evidence")
PRIOR_SET = 3  # types the prior names for a receptacle's contents
PRIOR_PRESENT = 0.3  # an object type counts as present where its co-occurrence is at least this


def answers(
    questions: Sequence[Mapping[str, Any]], kind: str, tasks_dir: str | None = None
) -> list[dict[str, Any]]:
    """One prediction record per question (ids in question order); ``evidence`` reads the
    frames through ``tasks_dir``'s manifest."""
    if kind not in KINDS:
        raise UsageError(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "evidence":
        if tasks_dir is None:
            raise UsageError("--kind evidence reads the frames: it needs the tasks directory")
        from dataforge.pipelines.spamem.evidence_oracle import answers as read

        got = read(questions, tasks_dir)
    else:
        if kind == "oracle":
            pick = lambda q: q["answer"]  # noqa: E731
        elif kind == "prior":
            pick = Prior().answer
        elif kind == "rule":
            pick = Rule(questions).answer
        else:
            pick = Blind(questions).answer
        got = [pick(q) for q in questions]
    return [
        {"id": q["id"], "answer": qa.canonical(q["answer_type"], a), "error": None, "raw": None}
        if a is not None
        else {"id": q["id"], "answer": None, "error": "no answer", "raw": None}
        for q, a in zip(questions, got, strict=True)
    ]


def _window(q: Mapping[str, Any]) -> tuple[int, int]:
    a, b = q["context"].get("window", [q["step"], q["step"]])
    return int(a), int(b)


class Prior:
    def __init__(self) -> None:
        from dataforge.world.assets import load_catalogue

        self.catalogue = load_catalogue()
        self._cache: dict[str, list[tuple[str, float]]] = {}

    def ranked(self, receptacle: Mapping[str, Any] | None) -> list[tuple[str, float]]:
        """(object type, p) for the receptacle, likeliest first (a sub-receptacle without
        statistics takes its furniture's, as the generator's planner does)."""
        if receptacle is None:
            return []
        for t in (receptacle.get("type"), receptacle.get("parent_type")):
            if not t:
                continue
            if t not in self._cache:
                try:
                    pairs = self.catalogue.receptacle_pairs(t)
                except UsageError:  # a type the catalogue does not know
                    pairs = {}
                self._cache[t] = sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
            if self._cache[t]:
                return self._cache[t]
        return []

    def answer(self, q: Mapping[str, Any]) -> Any:
        ctx, task, kind = q["context"], q["task"], q["answer_type"]
        recs = ctx.get("receptacles") or [ctx.get("receptacle")]
        if kind == "set":
            n = 1 if task.startswith(("SED", "CSR")) else PRIOR_SET
            return sorted({t for r in recs for t, _ in self.ranked(r)[:n]})
        if kind == "count":
            ranked = self.ranked(ctx.get("receptacle"))
            if task == "IC":
                return int(dict(ranked).get(ctx["category"], 0.0) >= PRIOR_PRESENT)
            return sum(1 for _, p in ranked if p >= PRIOR_PRESENT)
        if kind == "boxes":
            w, h = ctx.get("image_size", [0, 0])
            box = ctx.get("receptacle_box") or [w // 4, h // 4, 3 * w // 4, 3 * h // 4]
            return [box]
        if kind == "distances":
            r = float(ctx.get("camera_radius_m", 1.5))
            return {label: r for label in q.get("labels", [])}
        if kind == "neighbours":
            return {label: "left" for label in q.get("labels", [])[: qa.K_NEIGHBOURS]}
        if kind == "interval":
            a, b = _window(q)
            return {"first": a, "last": b}
        if kind == "sequence":
            rec = ctx.get("receptacle") or {}
            return [rec["type"]] if rec.get("type") else []
        raise ValueError(kind)


class Blind:
    """Per task, the most frequent answer (ties: the first in JSON order)."""

    def __init__(self, questions: Iterable[Mapping[str, Any]]) -> None:
        by_task: dict[str, list[Mapping[str, Any]]] = {}
        for q in questions:
            by_task.setdefault(q["task"], []).append(q)
        self.mode: dict[str, Any] = {}
        for task, qs in by_task.items():
            kind = qa.TASKS[task].answer_type
            if kind == "boxes":
                boxes = [b for q in qs for b in q["answer"]]
                self.mode[task] = (
                    [np.median(np.array(boxes), axis=0).round().tolist()] if boxes else []
                )
            elif kind == "distances":
                d = [v for q in qs for v in q["answer"].values()]
                self.mode[task] = float(np.median(d)) if d else 1.0
            elif kind == "neighbours":
                dirs = Counter(v for q in qs for v in q["answer"].values())
                self.mode[task] = _most_common(dirs) if dirs else "left"
            elif kind == "interval":
                offs = Counter(
                    json.dumps(
                        [q["answer"]["first"] - _window(q)[0], q["answer"]["last"] - _window(q)[0]]
                    )
                    for q in qs
                )
                self.mode[task] = json.loads(_most_common(offs))
            else:
                values = Counter(json.dumps(q["answer"], sort_keys=True) for q in qs)
                self.mode[task] = json.loads(_most_common(values))

    def answer(self, q: Mapping[str, Any]) -> Any:
        m, kind = self.mode[q["task"]], q["answer_type"]
        if kind == "distances":
            return {label: m for label in q.get("labels", [])}
        if kind == "neighbours":
            return {label: m for label in q.get("labels", [])[: qa.K_NEIGHBOURS]}
        if kind == "interval":
            a, b = _window(q)
            return {"first": min(a + m[0], b), "last": min(max(a + m[1], a + m[0]), b)}
        return m


RULE_RADIUS_M = 1.5  # capture.py's camera radius: every camera stands about this far away
_NAMED_STEP = re.compile(r"\bat step (\d+)\. Between step \d+ and step \d+")
_IMAGE_SIZE = re.compile(r"\b(\d+)x(\d+) pixels")


class Rule:
    """Prompt-only rules (module docstring). ``answer`` reads a record's ``prompt``, ``step``,
    ``labels``, ``task`` and ``answer_type`` only; the count rule's per-task mode comes from
    ``Blind`` over the set's count questions."""

    def __init__(self, questions: Iterable[Mapping[str, Any]]) -> None:
        self.counts = Blind(q for q in questions if q["answer_type"] == "count")

    def answer(self, q: Mapping[str, Any]) -> Any:
        kind, prompt, labels = q["answer_type"], q["prompt"], q.get("labels", [])
        if kind in ("set", "sequence"):
            return []
        if kind == "count":
            return self.counts.mode[q["task"]]
        if kind == "neighbours":
            return {label: "left" for label in labels[: qa.K_NEIGHBOURS]}
        if kind == "distances":
            return {label: RULE_RADIUS_M for label in labels}
        if kind == "boxes":
            m = _IMAGE_SIZE.search(prompt)
            if m is None:
                return []
            w, h = int(m.group(1)), int(m.group(2))
            return [[w // 4, h // 4, 3 * w // 4, 3 * h // 4]]
        if kind == "interval":
            last = int(q["step"])
            m = _NAMED_STEP.search(prompt)
            first = min(int(m.group(1)), last) if m else last
            return {"first": first, "last": last}
        raise ValueError(kind)


def _most_common(c: Counter[str]) -> str:
    top = max(c.values())
    return min(k for k, v in c.items() if v == top)


def run_baseline(tasks_dir: str, *, kind: str, out: str, tasks: str | None) -> int:
    """Write the ``kind`` baseline's predictions for TASKS_DIR's questions to ``out`` (JSONL,
    atomically); returns how many."""
    from pathlib import Path

    from dataforge.pipelines.spamem.records import check_tasks, load_questions
    from dataforge.store.atomic import atomic_write_bytes

    wanted = [t.strip() for t in tasks.split(",") if t.strip()] if tasks else None
    check_tasks(wanted)
    questions = load_questions(tasks_dir, wanted)
    preds = answers(questions, kind, tasks_dir)
    text = "".join(json.dumps(p, sort_keys=True, allow_nan=False) + "\n" for p in preds)
    atomic_write_bytes(Path(out), text.encode())
    return len(preds)
