"""``spamem score``: loading question and prediction files, scoring rules (missing, malformed,
invalid, unknown), aggregation, JSON and table output, and the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dataforge.cli.main import cli, main
from dataforge.errors import MalformedInputError, UsageError
from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.score import (
    load_predictions,
    load_questions,
    score,
    to_json_text,
)

approx = pytest.approx

GOLD: dict[str, Any] = {
    "set": ["Apple", "Mug"],
    "boxes": [[0, 0, 9, 9], [20, 20, 29, 29]],
    "distances": {"Apple": 1.5, "Book": 3.0, "Mug": 2.0},
    "neighbours": {"Apple": "left", "Mug": "behind"},
    "count": 3,
    "interval": {"first": 2, "last": 5},
    "sequence": ["CounterTop", "Fridge", "CounterTop"],
}


def question(
    task: str,
    answer: Any = None,
    *,
    level: int | None = None,
    horizon: str | None = None,
    modality: str = "rgb",
    n: int = 0,
) -> dict[str, Any]:
    spec = qa.TASKS[task]
    level = spec.levels[0] if level is None else level
    horizon = spec.horizons[0] if horizon is None else horizon
    return {
        "id": f"L{level}/{task}/{horizon}/{modality}/{n}",
        "level": level,
        "task": task,
        "horizon": horizon,
        "modality": modality,
        "episode": "ep0",
        "step": 0,
        "prompt": "?",
        "frames": [
            {"dataset": "sequences", "episode": "ep0", "step": 0, "view": 0, "modality": "rgb"}
        ],
        "answer_type": spec.answer_type,
        "answer": GOLD[spec.answer_type] if answer is None else answer,
        "labels": [],
        "context": {},
    }


def all_tasks() -> list[dict[str, Any]]:
    """One question of every task (so every answer type), L1 and L2 / L3."""
    return [question(t) for t in qa.TASKS] + [question("SOR-M", level=3, horizon="long")]


def write_questions(root: Path, questions: list[dict[str, Any]]) -> Path:
    for q in questions:
        path = root / qa.file_name(q["level"], q["task"], q["horizon"], q["modality"])
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            f.write(json.dumps(q) + "\n")
    return root


def write_preds(path: Path, preds: dict[str, Any]) -> Path:
    lines = [
        json.dumps({"id": i, "answer": a, "error": None, "raw": None}) for i, a in preds.items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def perfect(questions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {q["id"]: {"id": q["id"], "answer": q["answer"]} for q in questions}


def test_perfect_predictions_score_best_on_every_metric() -> None:
    qs = all_tasks()
    report = score(qs, perfect(qs))
    assert report.counts == {
        "questions": len(qs),
        "scored": len(qs),
        "malformed": 0,
        "missing": 0,
        "invalid": 0,
        "unknown": 0,
    }
    seen = set()
    for g in report.groups:
        assert tuple(g.metrics) == qa.TASKS[g.key["task"]].metrics
        for m, s in g.metrics.items():
            seen.add(m)
            assert s.mean == approx(1.0 if qa.METRICS[m] else 0.0), (g.key, m)
            assert s.sd == 0.0
            assert (s.n, s.undefined) == (1, 0)
    assert seen == set(qa.METRICS)


def test_groups_sorted_by_level_task_horizon_modality() -> None:
    qs = all_tasks()
    keys = [tuple(g.key.values()) for g in score(list(reversed(qs)), perfect(qs)).groups]
    assert keys[0] == (1, "SOR", "static", "rgb")
    assert keys[5] == (1, "IC", "static", "rgb")
    assert keys[6] == (2, "SOR-M", "short", "rgb")
    assert keys[-1] == (3, "SOR-M", "long", "rgb")
    assert [k[1] for k in keys[6:-1]] == list(qa.TASKS)[6:]


def test_missing_predictions_are_an_error_naming_them() -> None:
    qs = all_tasks()
    preds = perfect(qs)
    del preds[qs[0]["id"]], preds[qs[3]["id"]]
    with pytest.raises(UsageError) as err:
        score(qs, preds)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("2 questions have no prediction")
    assert qs[0]["id"] in msg and qs[3]["id"] in msg
    assert "--allow-missing" in msg


def test_many_missing_ids_are_abridged() -> None:
    qs = [question("CC", n=i) for i in range(8)]
    with pytest.raises(UsageError, match=r"8 questions .*\(3 more\)"):
        score(qs, {})


def test_allow_missing_scores_them_wrong() -> None:
    qs = [question("SOR"), question("SOR", n=1), question("CC"), question("CC", answer=0, n=1)]
    preds = {qs[0]["id"]: {"id": qs[0]["id"], "answer": ["Apple", "Mug"]}}
    report = score(qs, preds, by=("task",), allow_missing=True)
    assert report.counts["missing"] == 3 and report.counts["scored"] == 1
    sor, cc = report.groups
    assert sor.metrics["F1"].mean == approx(0.5) and sor.metrics["F1"].sd == approx(0.5)
    assert cc.metrics["AE"].mean == approx((3 + 1) / 2)  # AE = max(Cg, 1)
    assert cc.metrics["MAPE"].mean == approx(1.0)


def test_null_answer_is_malformed_and_wrong() -> None:
    q = question("SOR")
    report = score([q], {q["id"]: {"id": q["id"], "answer": None, "error": "unparseable"}})
    assert report.counts["malformed"] == 1 and report.counts["scored"] == 0
    assert {m: s.mean for m, s in report.groups[0].metrics.items()} == {
        "F1": 0.0,
        "P": 0.0,
        "R": 0.0,
    }


def test_invalid_answer_is_an_error_unless_allowed() -> None:
    q = question("IC")
    preds = {q["id"]: {"id": q["id"], "answer": "three"}}
    with pytest.raises(UsageError, match="1 predictions are not valid answers"):
        score([q], preds)
    report = score([q], preds, allow_missing=True)
    assert report.counts["invalid"] == 1
    assert report.groups[0].metrics["Acc@1"].mean == 0.0


def test_unknown_prediction_ids_are_counted() -> None:
    q = question("TL")
    preds = {**perfect([q]), "nope": {"id": "nope", "answer": 1}}
    assert score([q], preds).counts["unknown"] == 1


def test_canonical_prediction_spelling() -> None:
    q = question("SOR")
    preds = {q["id"]: {"id": q["id"], "answer": ["Mug", "Apple", "Mug"]}}
    assert score([q], preds).groups[0].metrics["F1"].mean == 1.0


def test_undefined_values_are_null_in_json() -> None:
    one = question("DPE", answer={"Apple": 1.0})  # one object: rho undefined
    two = question("DPE", answer={"Apple": 1.0, "Mug": 2.0}, n=1)
    preds = {
        one["id"]: {"id": one["id"], "answer": {"Apple": 2.0}},
        two["id"]: {"id": two["id"], "answer": {"Apple": 1.0, "Mug": 2.0}},
    }
    text = to_json_text(score([one, two], preds))
    assert "NaN" not in text and "Infinity" not in text
    metrics = json.loads(text)["groups"][0]["metrics"]
    assert metrics["AbsRel"] == {"mean": 0.5, "sd": 0.5, "n": 2, "undefined": 0}
    assert metrics["rho"] == {"mean": approx(1.0), "sd": 0.0, "n": 1, "undefined": 1}
    rho = json.loads(to_json_text(score([one], {}, allow_missing=True)))["groups"][0]
    assert rho["metrics"]["rho"] == {"mean": None, "sd": None, "n": 0, "undefined": 1}


def test_by_task_merges_levels() -> None:
    l2, l3 = question("SOR-M", level=2), question("SOR-M", level=3)
    preds = {l2["id"]: {"id": l2["id"], "answer": l2["answer"]}}
    preds[l3["id"]] = {"id": l3["id"], "answer": []}
    report = score([l2, l3], preds, by=("task",))
    (g,) = report.groups
    assert g.key == {"task": "SOR-M"} and g.questions == 2
    assert g.metrics["F1"].mean == approx(0.5)
    assert g.metrics["F1"].sd == approx(0.5)  # population SD (ddof=0)
    assert len(score([l2, l3], preds).groups) == 2


def test_group_of_several_tasks_keeps_each_tasks_metrics() -> None:
    cc, ic = question("CC"), question("IC")
    report = score([cc, ic], perfect([cc, ic]), by=("level",))
    m = report.groups[0].metrics
    assert list(m) == ["AE", "MAPE", "Acc@0", "Acc@1"]
    assert (m["AE"].n, m["MAPE"].n, m["Acc@0"].n, m["Acc@1"].n) == (2, 2, 2, 1)


def test_bad_group_field() -> None:
    with pytest.raises(UsageError, match="cannot group by"):
        score([], {}, by=("episode",))


# files
def test_load_questions(tmp_path: Path) -> None:
    qs = all_tasks()
    write_questions(tmp_path, qs)
    loaded = load_questions(tmp_path)
    assert sorted(q["id"] for q in loaded) == sorted(q["id"] for q in qs)
    assert [q["task"] for q in load_questions(tmp_path, ["SOR", "TL"])] == ["SOR", "TL"]
    with pytest.raises(UsageError, match="unknown tasks XYZ"):
        load_questions(tmp_path, ["XYZ"])


def test_load_questions_malformed_line(tmp_path: Path) -> None:
    path = tmp_path / qa.file_name(1, "SOR", "static", "rgb")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(question("SOR")) + "\n{not json\n")
    with pytest.raises(MalformedInputError, match=r"SOR\.static\.rgb\.jsonl:2: not JSON"):
        load_questions(tmp_path)
    path.write_text(json.dumps(question("SOR", answer="Apple")) + "\n")
    with pytest.raises(MalformedInputError, match=r"jsonl:1: bad gold answer"):
        load_questions(tmp_path)


def test_load_questions_without_question_files(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="run 'dataforge spamem tasks' first") as err:
        load_questions(tmp_path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("second", "error"),
    [
        ("{oops", "preds.jsonl:2: not JSON"),
        ('{"answer": 1}', "preds.jsonl:2: prediction record without a string 'id'"),
        ('{"id": 7, "answer": 1}', "preds.jsonl:2: prediction record without a string 'id'"),
        ('{"id": "a", "answer": 2}', "preds.jsonl:2: duplicate prediction id 'a'"),
        ("[1, 2]", "preds.jsonl:2: not a JSON object"),
    ],
)
def test_load_predictions_malformed(tmp_path: Path, second: str, error: str) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text('{"id": "a", "answer": 1}\n' + second + "\n")
    with pytest.raises(MalformedInputError, match=error):
        load_predictions(path)


def test_load_predictions(tmp_path: Path) -> None:
    path = write_preds(tmp_path / "p.jsonl", {"a": 1, "b": None})
    assert load_predictions(path) == {
        "a": {"id": "a", "answer": 1, "error": None, "raw": None},
        "b": {"id": "b", "answer": None, "error": None, "raw": None},
    }


# command line
def test_cli_json(tmp_path: Path) -> None:
    qs = all_tasks()
    write_questions(tmp_path / "tasks", qs)
    preds = write_preds(tmp_path / "preds.jsonl", {q["id"]: q["answer"] for q in qs})
    args = ["spamem", "score", str(tmp_path / "tasks"), "--predictions", str(preds), "--json"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["counts"]["scored"] == len(qs)
    assert len(out["groups"]) == len(qs)
    assert out["groups"][0]["metrics"]["F1"]["mean"] == 1.0

    res = CliRunner().invoke(cli, [*args, "--by", "task", "--tasks", "SOR-M,CC"])
    assert res.exit_code == 0, res.output
    groups = json.loads(res.output)["groups"]
    assert [(g["task"], g["questions"]) for g in groups] == [("CC", 1), ("SOR-M", 2)]


def test_cli_table(tmp_path: Path) -> None:
    write_questions(tmp_path, [question("SOR"), question("SOR", n=1)])
    preds = write_preds(tmp_path / "p.jsonl", {question("SOR")["id"]: ["Apple"]})
    args = ["spamem", "score", str(tmp_path), "-p", str(preds), "--allow-missing"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "F1 ↑" in res.output
    assert "0.333 ± 0.333" in res.output  # F1 of {Apple} vs {Apple, Mug} = 2/3, and 0


def test_cli_missing_is_one_line_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qs = [question("SOR"), question("TL")]
    write_questions(tmp_path, qs)
    preds = write_preds(tmp_path / "p.jsonl", {qs[0]["id"]: ["Apple"]})
    assert main(["spamem", "score", str(tmp_path), "-p", str(preds)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("error: 1 questions have no prediction: L2/TL/short/rgb/0;")
