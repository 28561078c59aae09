"""``dataforge spamem score``: score a model's predictions on SpaMEM question sets.

Questions come from ``spamem tasks`` (``questions/L<level>/<task>.<horizon>.<modality>.jsonl``),
predictions from ``spamem evaluate`` (``{"id", "answer", "error", "raw"}`` per line; qa.py holds
both formats). Each question is scored with ``metrics.score_answer`` (or ``score_wrong`` when its
answer is null, missing or invalid); the report gives, per group of questions, each metric of the
group's tasks as mean ± SD, the paper's table layout (docs/spamem.md, "Metrics").
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataforge.errors import InputNotFoundError, MalformedInputError, UsageError
from dataforge.inputs import read_jsonl_by_id
from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.metrics import Scores, score_answer, score_wrong
from dataforge.pipelines.spamem.records import load_questions

if TYPE_CHECKING:
    from rich.table import Table


GROUP_FIELDS = ("level", "task", "horizon", "modality")
SHOWN_IDS = 5


def load_predictions(path: str | Path) -> dict[str, dict[str, Any]]:
    """Prediction records (JSONL) by id. A malformed line, a record without a string "id" or a
    duplicate id raises MalformedInputError naming file:line."""
    p = Path(path)
    if not p.is_file():
        raise InputNotFoundError(f"{p}: no such file")
    return read_jsonl_by_id(p, "prediction")


@dataclass(frozen=True)
class MetricSummary:
    """One metric over a group: mean and population SD (ddof=0) of the defined values, their
    count ``n``, and ``undefined`` (None values). mean / sd are None when n = 0."""

    mean: float | None
    sd: float | None
    n: int
    undefined: int

    @classmethod
    def of(cls, values: Sequence[float | None]) -> MetricSummary:
        xs = [float(v) for v in values if v is not None]
        undefined = len(values) - len(xs)
        if not xs:
            return cls(None, None, 0, undefined)
        mean = math.fsum(xs) / len(xs)
        sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / len(xs))
        return cls(mean, sd, len(xs), undefined)

    def to_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "sd": self.sd, "n": self.n, "undefined": self.undefined}


@dataclass
class GroupScore:
    key: dict[str, Any]  # the ``by`` fields' values
    questions: int
    metrics: dict[str, MetricSummary]  # in the paper's column order


@dataclass
class ScoreReport:
    by: tuple[str, ...]
    groups: list[GroupScore]
    counts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """{"groups": [{<by fields>, "questions", "metrics": {name: {mean, sd, n, undefined}}}],
        "counts": {questions, scored, malformed, missing, invalid, unknown}}."""
        groups = [
            {
                **g.key,
                "questions": g.questions,
                "metrics": {m: s.to_json() for m, s in g.metrics.items()},
            }
            for g in self.groups
        ]
        return {"groups": groups, "counts": dict(self.counts)}

    def columns(self) -> list[str]:
        """Every metric any group reports, in the order the (sorted) groups first list them."""
        return list(dict.fromkeys(m for g in self.groups for m in g.metrics))

    def table(self) -> Table:
        """A rich Table: one row per group, "mean ± sd" per metric ("-" when undefined or not
        reported), ↑ / ↓ (qa.METRICS) in the headers."""
        from rich.table import Table

        c = self.counts
        caption = (
            f"{c.get('questions', 0)} questions: {c.get('scored', 0)} scored, "
            f"{c.get('malformed', 0)} malformed, {c.get('missing', 0)} missing, "
            f"{c.get('invalid', 0)} invalid answers; {c.get('unknown', 0)} unknown prediction ids"
        )
        table = Table(title="SpaMEM scores (mean ± SD)", caption=caption)
        for f in self.by:
            table.add_column(f)
        table.add_column("questions", justify="right")
        cols = self.columns()
        for m in cols:
            table.add_column(f"{m} {'↑' if qa.METRICS[m] else '↓'}", justify="right")
        for g in self.groups:
            cells = [_cell(g.metrics.get(m)) for m in cols]
            table.add_row(*(str(g.key[f]) for f in self.by), str(g.questions), *cells)
        return table


def _cell(s: MetricSummary | None) -> str:
    if s is None or s.mean is None or s.sd is None:
        return "-"
    return f"{s.mean:.3f} ± {s.sd:.3f}"


def parse_by(by: str | Sequence[str]) -> tuple[str, ...]:
    """The grouping fields in their canonical order; UsageError for unknown ones."""
    names = [b.strip() for b in (by.split(",") if isinstance(by, str) else by) if b.strip()]
    unknown = [b for b in names if b not in GROUP_FIELDS]
    if unknown:
        raise UsageError(f"cannot group by {', '.join(unknown)}; use {','.join(GROUP_FIELDS)}")
    return tuple(f for f in GROUP_FIELDS if f in names)


def _sort_key(key: Mapping[str, Any]) -> tuple[Any, ...]:
    ranks = {
        "task": list(qa.TASKS),
        "horizon": list(qa.HORIZONS),
        "modality": list(qa.MODALITIES),
    }
    out: list[Any] = []
    for f in GROUP_FIELDS:
        if f in key:
            v = key[f]
            out.append(ranks[f].index(v) if f in ranks and v in ranks[f] else v)
    return tuple(out)


def _listing(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    return shown + (f", ... ({len(ids) - SHOWN_IDS} more)" if len(ids) > SHOWN_IDS else "")


def score(
    questions: Sequence[Mapping[str, Any]],
    predictions: Mapping[str, Mapping[str, Any]],
    *,
    by: Sequence[str] = GROUP_FIELDS,
    allow_missing: bool = False,
) -> ScoreReport:
    """Score every question and aggregate per group of the ``by`` fields.

    A null answer is a recorded malformed model answer: scored wrong (``score_wrong``), counted
    ``malformed``. A question without a prediction (``missing``) or whose answer fails
    ``qa.check_answer`` (``invalid``) raises UsageError unless ``allow_missing``, which scores
    them wrong. Prediction ids matching no question are ignored (``unknown``). Each group reports
    the metrics of its tasks' TaskSpec.metrics (a question adds only its own task's metrics):
    mean and population SD (ddof=0) of the defined values, n, and the undefined count.
    """
    by = parse_by(by)
    missing: list[str] = []
    invalid: list[str] = []
    malformed = 0
    scored: list[tuple[Mapping[str, Any], Scores]] = []
    for q in questions:
        spec = qa.TASKS.get(q["task"])
        if spec is None:
            raise MalformedInputError(f"question {q['id']}: unknown task {q['task']!r}")
        atype = spec.answer_type
        gold = qa.canonical(atype, q["answer"])
        pred = predictions.get(q["id"])
        if pred is None:
            missing.append(q["id"])
            s = score_wrong(atype, gold)
        elif pred.get("answer") is None:
            malformed += 1
            s = score_wrong(atype, gold)
        elif qa.check_answer(atype, pred["answer"]) is not None:
            invalid.append(q["id"])
            s = score_wrong(atype, gold)
        else:
            s = score_answer(atype, qa.canonical(atype, pred["answer"]), gold)
        scored.append((q, {m: s[m] for m in spec.metrics}))
    if (missing or invalid) and not allow_missing:
        parts = []
        if missing:
            parts.append(f"{len(missing)} questions have no prediction: {_listing(missing)}")
        if invalid:
            parts.append(f"{len(invalid)} predictions are not valid answers: {_listing(invalid)}")
        raise UsageError(
            "; ".join(parts) + "; rerun evaluate, or pass --allow-missing to score them as wrong"
        )
    ids = {q["id"] for q in questions}
    counts = {
        "questions": len(questions),
        "scored": len(questions) - malformed - len(missing) - len(invalid),
        "malformed": malformed,
        "missing": len(missing),
        "invalid": len(invalid),
        "unknown": sum(1 for i in predictions if i not in ids),
    }
    return ScoreReport(by, _aggregate(scored, by), counts)


def _metric_order(tasks: Collection[str]) -> list[str]:
    """The metrics of ``tasks``: each task's TaskSpec.metrics in turn, tasks in qa.TASKS order."""
    return list(
        dict.fromkeys(m for t, spec in qa.TASKS.items() if t in tasks for m in spec.metrics)
    )


def _aggregate(
    scored: Sequence[tuple[Mapping[str, Any], Scores]], by: tuple[str, ...]
) -> list[GroupScore]:
    groups: dict[tuple[Any, ...], list[tuple[str, Scores]]] = {}
    for q, s in scored:
        groups.setdefault(tuple(q[f] for f in by), []).append((q["task"], s))
    out = []
    for key, rows in groups.items():
        order = _metric_order({t for t, _ in rows})
        metrics = {m: MetricSummary.of([s[m] for _, s in rows if m in s]) for m in order}
        out.append(GroupScore(dict(zip(by, key, strict=True)), len(rows), metrics))
    return sorted(out, key=lambda g: _sort_key(g.key))


def to_json_text(report: ScoreReport) -> str:
    """The report as JSON text; NaN / inf are refused (allow_nan=False), never written."""
    return json.dumps(report.to_json(), indent=1, allow_nan=False)


def print_table(table: Table) -> None:
    """Print a rich table at its natural width (wider than the terminal when need be), so that
    no "mean ± sd" cell is cut or wrapped."""
    from rich.console import Console
    from rich.measure import Measurement

    console = Console()
    width = Measurement.get(console, console.options.update_width(100_000), table).maximum
    if width > console.width:
        console = Console(width=width)
    console.print(table)


def run_score(
    tasks_dir: str | Path,
    predictions: str | Path,
    *,
    as_json: bool = False,
    by: str | Sequence[str] = GROUP_FIELDS,
    allow_missing: bool = False,
    tasks: str | Collection[str] | None = None,
) -> ScoreReport:
    """``dataforge spamem score``: load, score, and print the table (or, ``as_json``, JSON)."""
    import click

    if isinstance(tasks, str):
        tasks = [t.strip() for t in tasks.split(",") if t.strip()] or None
    by_fields = parse_by(by)
    report = score(
        load_questions(tasks_dir, tasks),
        load_predictions(predictions),
        by=by_fields,
        allow_missing=allow_missing,
    )
    if as_json:
        click.echo(to_json_text(report))
    else:
        print_table(report.table())
    return report
