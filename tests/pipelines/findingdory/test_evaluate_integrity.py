"""``findingdory evaluate`` sends only the frames of the experience dataset its tasks were made
from, and one run at a time writes a predictions file (issue 36).

The datasets are real (one day drawn, collected twice at two resolutions, tasks made from the
first); the expected digests are read from the files with hashlib, not from the code under
test. Every refused run is checked for its exit code, its one-line message, a server that
received no request at all, and input datasets whose every file is byte for byte what it was."""

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
from dataforge.store import open_dataset

pytest.importorskip("jsonschema", reason="the LLM client needs the 'llm' extra (jsonschema)")
pytestmark = pytest.mark.slow  # one small day per module

ANSWER = '{"frame_indices": [0]}'
TEMPLATES = "T01,T02"


def findingdory(*args: str) -> None:
    res = run_cli("findingdory", *args, "--quiet", timeout=900)
    assert res.returncode == 0, res.stderr


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``experience`` and ``other`` (the same day collected at another resolution: another
    dataset of the same pipeline), and ``tasks`` made from ``experience``."""
    base = tmp_path_factory.mktemp("fd-integrity")
    eps = base / "episodes"
    findingdory(
        "episodes",
        "--scenes",
        "generate:1",
        "--room-spec",
        "kitchen",
        "--episodes",
        "1",
        "--rearrangements",
        "3-4",
        "--seed",
        "2",
        "--out",
        str(eps),
    )
    out = {"experience": base / "experience", "other": base / "other", "tasks": base / "tasks"}
    findingdory("collect", str(eps), "--resolution", "48x64", "--out", str(out["experience"]))
    findingdory("collect", str(eps), "--resolution", "64x48", "--out", str(out["other"]))
    findingdory("tasks", str(out["experience"]), "--out", str(out["tasks"]))
    return out


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def digests(*roots: Path) -> dict[str, str]:
    """sha256 of every file under the roots."""
    return {str(p): sha(p) for r in roots for p in sorted(r.rglob("*")) if p.is_file()}


def task_ids(tasks_dir: Path) -> list[str]:
    with open_dataset(tasks_dir) as ds:
        return [
            t["id"]
            for eid in ds.episode_ids
            for t in ds[eid].metadata["tasks"]
            if t["template"] in TEMPLATES.split(",")
        ]


def evaluate(tasks_dir: Path, server: ScriptedServer, out: Path, *extra: str) -> list[str]:
    return [
        "findingdory",
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
        "--frames",
        "4",
        "--max-side",
        "32",
        "--templates",
        TEMPLATES,
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


def test_another_experience_given_as_data_root_is_refused(
    days: dict[str, Path],
    tmp_path: Path,
    scripted_server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    exp, other, tasks = days["experience"], days["other"], days["tasks"]
    want, got = sha(exp / "manifest.json"), sha(other / "manifest.json")
    assert want != got
    args = evaluate(tasks, scripted_server, tmp_path / "p.jsonl", "--data-root", str(other))
    err = refused(args, scripted_server, capsys, exp, other, tasks)
    assert "the experience dataset" in err and str(other) in err
    assert f"manifest sha256 {got[:12]}..., expected {want[:12]}..." in err
    assert "--data-root" in err


def test_the_recorded_location_holding_another_experience_is_refused(
    days: dict[str, Path],
    tmp_path: Path,
    scripted_server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    exp, other, tasks = days["experience"], days["other"], days["tasks"]
    place = tmp_path / "experience"
    shutil.copytree(exp, place)
    moved = tmp_path / "tasks"
    findingdory("tasks", str(place), "--out", str(moved))
    recorded = json.loads((moved / "manifest.json").read_text())["inputs"]
    assert recorded["locations"]["experience"] == str(place.resolve())
    shutil.rmtree(place)
    shutil.copytree(other, place)  # the recorded place now holds another dataset
    out = tmp_path / "p.jsonl"
    err = refused(evaluate(moved, scripted_server, out), scripted_server, capsys, other, moved)
    want, got = sha(exp / "manifest.json"), sha(other / "manifest.json")
    assert f"manifest sha256 {got[:12]}..., expected {want[:12]}..." in err
    assert "pass --data-root" in err
    # saying where the right one is now works: the refusals were not blanket ones
    n = len(task_ids(tasks))
    assert n >= 1
    scripted_server.push(*[ANSWER] * n)
    assert main(evaluate(moved, scripted_server, out, "--data-root", str(exp))) == 0
    assert len(scripted_server.chat_requests) == n == len(out.read_text().splitlines())


def test_a_second_run_on_the_same_out_is_refused_while_the_first_asks(
    days: dict[str, Path],
    tmp_path: Path,
    scripted_server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tasks = days["tasks"]
    ids = task_ids(tasks)
    out = tmp_path / "p.jsonl"
    args = evaluate(tasks, scripted_server, out)
    scripted_server.push(*[Delay(2.0 / len(ids), ANSWER)] * len(ids))
    assert_second_run_locked_out(args, scripted_server, out, ids, capsys)
    assert main(args) == 0  # a rerun finds everything done and asks nothing
    assert len(scripted_server.chat_requests) == len(ids)


def test_a_killed_runs_lock_does_not_block(
    days: dict[str, Path], tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "p.jsonl"
    lock = out.with_name(out.name + ".lock")
    lock.write_text(json.dumps({"pid": dead.pid, "host": "here", "started": 0}))
    n = len(task_ids(days["tasks"]))
    scripted_server.push(*[ANSWER] * n)
    assert main(evaluate(days["tasks"], scripted_server, out)) == 0
    assert len(out.read_text().splitlines()) == n == len(scripted_server.chat_requests)
    assert not lock.exists()
