"""Killing a run (SIGKILL), Ctrl-C, and a second concurrent run, on the real command."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from dfhelpers import dataforge_cmd, run_cli, tree_digest

from dataforge.store import open_dataset
from dataforge.validation import validate

SLOW = [
    "synthetic",
    "generate",
    "--scenes",
    "10",
    "--episodes-per-scene",
    "2",
    "--frames",
    "16",
    "--resolution",
    "160x120",
    "--seed",
    "2",
]


def _journal_lines(root: Path) -> int:
    j = root / ".dataforge" / "journal.jsonl"
    return j.read_text().count("\n") if j.is_file() else 0


def _start(root: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        dataforge_cmd(*SLOW, "--out", str(root), *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_commits(proc: subprocess.Popen, root: Path, n: int, timeout: float = 120) -> None:
    t0 = time.time()
    while _journal_lines(root) < n:
        assert proc.poll() is None, f"run ended early: {proc.communicate()}"
        assert time.time() - t0 < timeout, "no progress"
        time.sleep(0.02)


@pytest.mark.slow
def test_sigkill_then_rerun_gives_the_uninterrupted_dataset(tmp_path):
    root, clean = tmp_path / "killed", tmp_path / "clean"
    proc = _start(root, "--workers", "2")
    _wait_for_commits(proc, root, 3)
    proc.kill()
    proc.wait()
    committed = _journal_lines(root)
    assert 3 <= committed < 10, "the run should have been killed mid-way"
    assert not (root / "manifest.json").exists()
    r = run_cli(*SLOW, "--out", str(root), "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert f"{committed} resumed" in r.stdout
    assert run_cli(*SLOW, "--out", str(clean)).returncode == 0
    report = validate(root)
    assert report.ok, [p.line() for p in report.problems]
    with open_dataset(root) as ds:
        ids = ds.episode_ids
        assert len(ids) == len(set(ids)) == 20
        assert sorted({ds[e].location.unit for e in ids}) == [f"scene-{i:04d}" for i in range(10)]
    files = lambda p: json.loads((p / "manifest.json").read_text())["files"]  # noqa: E731
    assert files(root) == files(clean)
    assert tree_digest(root / "shards") == tree_digest(clean / "shards")
    assert not (root / ".dataforge").exists()


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path, workers):
    root = tmp_path / "ds"
    proc = _start(root, "--workers", workers, "--quiet")
    _wait_for_commits(proc, root, 2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.count("\n") == 1 and err.startswith("error: interrupted"), err
    assert "rerun the same command to resume" in err
    report = validate(root)
    assert not report.ok and report.problems[0].kind == "incomplete"
    r = run_cli(*SLOW, "--out", str(root), "--workers", workers)
    assert r.returncode == 0, r.stderr
    assert validate(root).ok


@pytest.mark.slow
def test_second_concurrent_run_is_refused(tmp_path):
    root = tmp_path / "ds"
    proc = _start(root)
    try:
        _wait_for_commits(proc, root, 1)
        r = run_cli(*SLOW, "--out", str(root))
        assert r.returncode == 2
        assert r.stderr.count("\n") == 1, r.stderr
        assert "being written by another dataforge run" in r.stderr
        assert f"pid {proc.pid}" in r.stderr
    finally:
        proc.kill()
        proc.wait()
