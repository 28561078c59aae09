"""Reading question and prediction files (formats: :mod:`.qa`): one validator of question
records and one loader, for ``evaluate``, ``score``, ``baseline`` and ``validate``."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from dataforge.errors import InputNotFoundError, MalformedInputError, UsageError
from dataforge.inputs import read_jsonl
from dataforge.pipelines.spamem import qa

QUESTION_FIELDS = (
    "id",
    "level",
    "task",
    "horizon",
    "modality",
    "episode",
    "step",
    "prompt",
    "frames",
    "answer_type",
    "answer",
    "context",
)


def _frame_ok(f: object) -> bool:
    return (
        isinstance(f, dict)
        and isinstance(f.get("dataset"), str)
        and isinstance(f.get("episode"), str)
        and isinstance(f.get("step"), int)
        and isinstance(f.get("view"), int)
        and f.get("modality") in ("rgb", "depth")
    )


def question_problem(q: dict[str, Any]) -> str | None:
    """What is wrong with a question record, or None."""
    missing = [k for k in QUESTION_FIELDS if k not in q]
    if missing:
        return f"question record without {', '.join(missing)}"
    if not isinstance(q["id"], str) or not isinstance(q["prompt"], str):
        return "question id and prompt are strings"
    spec = qa.TASKS.get(q["task"])
    if spec is None:
        return f"unknown task {q['task']!r}"
    if q["answer_type"] != spec.answer_type:
        return f"{q['task']} answers are {spec.answer_type}, not {q['answer_type']!r}"
    if q["level"] not in spec.levels or q["horizon"] not in spec.horizons:
        return f"{q['task']} has no level {q['level']!r} / horizon {q['horizon']!r}"
    if q["modality"] not in qa.MODALITIES:
        return f"unknown modality {q['modality']!r}"
    if not isinstance(q["frames"], list) or not q["frames"]:
        return "a question needs frames"
    bad_frame = next((f for f in q["frames"] if not _frame_ok(f)), None)
    if bad_frame is not None:
        return f"not a frame reference: {bad_frame!r}"
    bad = qa.check_answer(spec.answer_type, q["answer"])
    return f"bad gold answer: {bad}" if bad else None


def check_tasks(tasks: Collection[str] | None) -> None:
    """UsageError for task names that qa.TASKS does not know."""
    unknown = sorted(set(tasks or ()) - set(qa.TASKS))
    if unknown:
        raise UsageError(f"unknown tasks {', '.join(unknown)}; known: {', '.join(qa.TASKS)}")


def load_questions(
    tasks_dir: str | Path, tasks: Collection[str] | None = None
) -> list[dict[str, Any]]:
    """Every question record of ``tasks_dir/questions/L*/*.jsonl`` (sorted path order), only
    those of ``tasks`` when given. Malformed lines, bad records and duplicate ids raise
    MalformedInputError naming file:line; no question files raise UsageError."""
    root = Path(tasks_dir)
    if not root.is_dir():
        raise InputNotFoundError(f"{root}: no such directory")
    check_tasks(tasks)
    files = sorted(root.glob(f"{qa.QUESTIONS_DIR}/L*/*.jsonl"))
    if not files:
        raise UsageError(
            f"{root} has no question files ({qa.QUESTIONS_DIR}/L*/*.jsonl): "
            "run 'dataforge spamem tasks' first"
        )
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in files:
        if tasks is not None and path.name.split(".")[0] not in tasks:
            continue
        for n, q in read_jsonl(path):
            problem = question_problem(q)
            if problem:
                raise MalformedInputError(f"{path}:{n}: {problem}")
            if q["id"] in seen:
                raise MalformedInputError(f"{path}:{n}: duplicate question id {q['id']!r}")
            seen.add(q["id"])
            if tasks is None or q["task"] in tasks:
                out.append(q)
    if not out:
        raise UsageError(f"{root}: no questions of tasks {', '.join(sorted(tasks or ()))}")
    return out
