"""``spamem evaluate`` sends only the frames of the sequences dataset its tasks were made from,
and one run at a time writes a predictions file (issue 36).

The datasets are real (``spamem generate`` twice, ``spamem tasks``); the expected digests are
read from the files with hashlib, not from the code under test. Every refused run is checked
for its exit code, its one-line message, a server that received no request at all, and input
datasets whose every file is byte for byte what it was."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dfhelpers import run_cli
from scripted_llm import (  # noqa: F401
    Delay,
    ScriptedServer,
    assert_second_run_locked_out,
    scripted_server_fixture,
)

from dataforge.cli.main import main

pytest.importorskip("jsonschema", reason="the LLM client needs the 'llm' extra (jsonschema)")
pytestmark = pytest.mark.slow  # two small generations per module

ANSWER = '{"answer": 1}'


def generate(out: Path, seed: int) -> Path:
    res = run_cli(
        "spamem",
        "generate",
        "--out",
        str(out),
        "--seed",
        str(seed),
        "--houses",
        "1",
        "--room-spec",
        "kitchen",
        "--sequences-per-house",
        "1",
        "--steps",
        "2",
        "--views-per-step",
        "4",
        "--resolution",
        "64x48",
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    return out


def make_tasks(sequences: Path, out: Path) -> Path:
    """The fixed stream: every question kept (at 64x48 the evidence rules keep no CC)."""
    res = run_cli(
        "spamem", "tasks", str(sequences), "--out", str(out), "--frames", "stream", "--quiet"
    )
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture(scope="module")
def sequences(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("spamem-seq") / "ds", seed=3)


@pytest.fixture(scope="module")
def other(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another dataset of the same pipeline (another seed)."""
    return generate(tmp_path_factory.mktemp("spamem-other") / "ds", seed=4)


@pytest.fixture(scope="module")
def tasks(sequences: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tasks(sequences, tmp_path_factory.mktemp("spamem-tasks") / "tasks")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def digests(*roots: Path) -> dict[str, str]:
    """sha256 of every file under the roots."""
    return {str(p): sha(p) for r in roots for p in sorted(r.rglob("*")) if p.is_file()}


def evaluate(tasks_dir: Path, server: ScriptedServer, out: Path, *extra: str) -> list[str]:
    return [
        "spamem",
        "evaluate",
        str(tasks_dir),
        "--llm-url",
        server.url,
        "--llm-model",
        "test-model",
        "--out",
        str(out),
        "--quiet",
        "--retries",
        "0",
        *extra,
    ]


def refused(
    args: list[str], server: ScriptedServer, capsys: pytest.CaptureFixture[str], *roots: Path
) -> str:
    """Run the command line, which must refuse with exit 2 in one line before sending
    anything and change no input file; return the message."""
    before = digests(*roots)
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert server.requests == []  # not even the model check: nothing was sent
    out = Path(args[args.index("--out") + 1])
    assert not out.exists() and not out.with_name(out.name + ".lock").exists()
    assert digests(*roots) == before
    return err


def questions_of(tasks_dir: Path, task: str) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted((tasks_dir / "questions").glob(f"L*/{task}.*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def test_another_dataset_given_as_data_root_is_refused(
    sequences: Path,
    other: Path,
    tasks: Path,
    tmp_path: Path,
    scripted_server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    want, got = sha(sequences / "manifest.json"), sha(other / "manifest.json")
    assert want != got
    args = evaluate(tasks, scripted_server, tmp_path / "p.jsonl", "--data-root", str(other))
    err = refused(args, scripted_server, capsys, sequences, other, tasks)
    assert "the sequences dataset" in err and str(other) in err
    assert f"manifest sha256 {got[:12]}..., expected {want[:12]}..." in err
    assert "--data-root" in err
    # the same through a folder holding a dataset of the recorded dataset's name
    holder = tmp_path / "holder"
    shutil.copytree(other, holder / sequences.name)
    args = evaluate(tasks, scripted_server, tmp_path / "p.jsonl", "--data-root", str(holder))
    err = refused(args, scripted_server, capsys, sequences, other, tasks, holder)
    assert f"manifest sha256 {got[:12]}..., expected {want[:12]}..." in err


def test_the_recorded_location_holding_another_dataset_is_refused(
    sequences: Path,
    other: Path,
    tmp_path: Path,
    scripted_server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    place = tmp_path / "seq"
    shutil.copytree(sequences, place)
    tasks = make_tasks(place, tmp_path / "tasks")
    recorded = json.loads((tasks / "manifest.json").read_text())["inputs"]
    assert recorded["locations"]["sequences"] == str(place.resolve())
    shutil.rmtree(place)
    shutil.copytree(other, place)  # the recorded place now holds another dataset
    out = tmp_path / "p.jsonl"
    err = refused(evaluate(tasks, scripted_server, out), scripted_server, capsys, other, tasks)
    want, got = sha(sequences / "manifest.json"), sha(other / "manifest.json")
    assert f"manifest sha256 {got[:12]}..., expected {want[:12]}..." in err
    assert "pass --data-root" in err
    # saying where the right one is now works: the refusals were not blanket ones
    n = len(questions_of(tasks, "CC"))
    scripted_server.push(*[ANSWER] * n)
    assert (
        main(evaluate(tasks, scripted_server, out, "--tasks", "CC", "--data-root", str(sequences)))
        == 0
    )
    assert len(scripted_server.chat_requests) == n == len(out.read_text().splitlines())


@pytest.mark.parametrize("kind", ["absolute", "parent", "subpath", "unrecorded"])
def test_frames_outside_the_recorded_inputs_are_refused(
    kind: str,
    sequences: Path,
    other: Path,
    tasks: Path,
    tmp_path: Path,
    scripted_server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ref = {"absolute": str(other), "parent": "../ds", "subpath": "x/ds", "unrecorded": "ds"}[kind]
    edited = tmp_path / "tasks"
    shutil.copytree(tasks, edited)
    path = sorted((edited / "questions").glob("L1/CC.*.jsonl"))[0]
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[-1]["frames"][0]["dataset"] = ref
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "ds").symlink_to(other)  # what "../ds" and "ds" would reach from the tasks
    args = evaluate(edited, scripted_server, tmp_path / "p.jsonl")
    err = refused(args, scripted_server, capsys, sequences, other, edited)
    assert f"question {records[-1]['id']}: frame dataset {ref!r}" in err
    why = {
        "absolute": "is an absolute path",
        "parent": "is a path",
        "subpath": "is a path",
        "unrecorded": "is not an input the tasks manifest recorded",
    }[kind]
    assert why in err and "(sequences)" in err


def test_a_second_run_on_the_same_out_is_refused_while_the_first_asks(
    tasks: Path, tmp_path: Path, scripted_server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [q["id"] for q in questions_of(tasks, "CC") + questions_of(tasks, "SOR")]
    assert len(ids) >= 2
    out = tmp_path / "p.jsonl"
    args = evaluate(tasks, scripted_server, out, "--tasks", "CC,SOR")
    scripted_server.push(*[Delay(0.5, ANSWER)] * len(ids))
    assert_second_run_locked_out(args, scripted_server, out, ids, capsys)
    assert main(args) == 0  # a rerun finds everything done and asks nothing
    assert len(scripted_server.chat_requests) == len(ids)


def test_a_killed_runs_lock_does_not_block(
    tasks: Path, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "p.jsonl"
    lock = out.with_name(out.name + ".lock")
    lock.write_text(json.dumps({"pid": dead.pid, "host": "here", "started": 0}))
    n = len(questions_of(tasks, "CC"))
    scripted_server.push(*[ANSWER] * n)
    assert main(evaluate(tasks, scripted_server, out, "--tasks", "CC")) == 0
    assert len(out.read_text().splitlines()) == n == len(scripted_server.chat_requests)
    assert not lock.exists()
