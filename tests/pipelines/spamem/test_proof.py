"""Issue 37's proof on a house no other test uses (a generated 2-bed-1-bath house, seed 4747):
generate -> validate -> tasks (frames chosen per question) -> every baseline. The benchmark is
valid where the evidence oracle, which reads only each record's own frames, scores about 1 and
every no-look baseline (prior, blind, rule) stays at or below 0.5, on every task's headline
metric (qa.TaskSpec.headline), pooled over its levels and horizons.

The numbers this asserts were measured when it was written (docs/spamem.md, "Baselines"); the
thresholds are the issue's, not those numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from dfhelpers import run_cli

from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.baselines import answers
from dataforge.pipelines.spamem.checks import stats
from dataforge.pipelines.spamem.questions import shown
from dataforge.pipelines.spamem.records import load_questions
from dataforge.pipelines.spamem.score import score
from dataforge.store import open_dataset
from dataforge.validation import validate

pytestmark = pytest.mark.slow
GENERATE = [
    "--houses",
    "1",
    "--room-spec",
    "2-bed-1-bath",
    "--seed",
    "4747",
    "--sequences-per-house",
    "3",
    "--steps",
    "8",
    "--resolution",
    "160x120",
    "--quiet",
]
EVIDENCE_MIN = 0.95
NO_LOOK_MAX = 0.5
POOLED_MIN = 10
"""No-look scores are asserted on tasks with at least this many records: ``blind`` answers a
task's most frequent gold answer, which on a handful of records is the gold itself."""


def cli(*args: str) -> None:
    res = run_cli(*args)
    assert res.returncode == 0, res.stderr


@pytest.fixture(scope="module")
def proof(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("proof")
    seq, tasks = root / "seq", root / "tasks"
    cli("spamem", "generate", "--out", str(seq), *GENERATE)
    cli("spamem", "tasks", str(seq), "--out", str(tasks), "--modality", "rgb", "--quiet")
    return seq, tasks


def headline_by_task(records: list[dict], kind: str, tasks: Path) -> dict[str, tuple[int, float]]:
    """task -> (records, the kind's mean headline) over every level and horizon it answers."""
    asked = [r for r in records if kind != "evidence" or r["level"] in (1, 3)]
    preds = {p["id"]: p for p in answers(asked, kind, str(tasks) if kind == "evidence" else None)}
    out = {}
    for g in score(asked, preds, by=("task",)).to_json()["groups"]:
        out[g["task"]] = (g["questions"], g["metrics"][qa.TASKS[g["task"]].headline]["mean"])
    return out


def test_sequences_hold_every_invariant(proof: tuple[Path, Path]) -> None:
    seq, _ = proof
    report = validate(seq)  # rests-on-surface, views-apart, bearing-recorded, no-hole-window, ...
    assert report.ok, report.problems[:5]
    with open_dataset(seq) as ds:
        counts = stats(ds).counts
    assert counts["redraws (draws without any action, dropped)"] == 0
    assert counts["sequences ended early"] == 0
    assert counts["unusable views (every camera position too close to something)"] == 0


def test_every_question_has_its_evidence_and_the_evidence_oracle_answers_it(
    proof: tuple[Path, Path],
) -> None:
    _, tasks = proof
    records = load_questions(tasks)
    assert records and all(shown(r) for r in records)
    got = headline_by_task(records, "evidence", tasks)
    assert {"SOR", "VGL", "DPE", "CC", "SOR-M", "LOR", "VGL-M", "SED-Add"} <= set(got)
    low = {t: v for t, (n, v) in got.items() if v is not None and v < EVIDENCE_MIN}
    assert not low, low


@pytest.mark.parametrize("kind", ["prior", "blind", "rule"])
def test_no_look_baselines_stay_at_or_below_half(proof: tuple[Path, Path], kind: str) -> None:
    _, tasks = proof
    records = load_questions(tasks)
    got = headline_by_task(records, kind, tasks)
    pooled = {t: v for t, (n, v) in got.items() if n >= POOLED_MIN}
    assert len(pooled) >= 6, got  # most memory tasks are measured
    high = {t: v for t, v in pooled.items() if v is not None and v > NO_LOOK_MAX}
    assert not high, high
