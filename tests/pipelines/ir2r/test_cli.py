"""The real ``dataforge ir2r`` commands, in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dfhelpers import run_cli
from PIL import Image

pytestmark = pytest.mark.slow


def test_tours_stats_plot_score_validate(small_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "tours"
    d = ["--data-dir", str(small_data)]
    r = run_cli("ir2r", "tours", "--split", "val_seen", *d, "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "dropped 1 scenes with fewer than 2 paths (1 paths)" in r.stdout
    assert "tours 5" in r.stdout
    r = run_cli("ir2r", "stats", str(out), "--json")
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)
    assert set(t) == {
        "split",
        "scenes",
        "episodes",
        "tours",
        "duplicates_per_set",
        "tours_per_scene",
        "tour_length",
    }
    assert set(t["tour_length"]) == {"mean", "min", "max", "sd"}
    assert (t["scenes"], t["episodes"], t["tours"]) == (1, 16, 5)
    assert t["tour_length"] == {"mean": 3.2, "min": 2, "max": 4, "sd": pytest.approx(0.979795897)}
    png = tmp_path / "tour.png"
    r = run_cli("ir2r", "plot", str(out), "--scan", "lineA", "--out", str(png), *d)
    assert r.returncode == 0, r.stderr
    assert Image.open(png).size[0] > 600
    r = run_cli("ir2r", "plot", str(out), "--scan", "nope", "--out", str(png), *d)
    assert r.returncode == 2 and "scenes: lineA" in r.stderr
    refs = json.loads((small_data / "r2r" / "R2R_val_seen.json").read_text())
    preds = {f"{x['path_id']}_{k}": x["path"] for x in refs for k in range(len(x["instructions"]))}
    (tmp_path / "p.json").write_text(json.dumps(preds))
    r = run_cli(
        "ir2r",
        "score",
        "--tours",
        str(out / "tours_val_seen.json"),
        "--reference",
        str(small_data / "r2r" / "R2R_val_seen.json"),
        "--predictions",
        str(tmp_path / "p.json"),
        *d,
        "--json",
    )
    assert r.returncode == 0, r.stderr
    scores = json.loads(r.stdout)
    assert scores["t_ndtw"] == 1.0 and scores["protocol"] == "ivln"
    assert scores["rules"]["success"] == "NE < d"
    score_args = [
        "ir2r",
        "score",
        "--tours",
        str(out / "tours_val_seen.json"),
        "--reference",
        str(small_data / "r2r" / "R2R_val_seen.json"),
        *d,
    ]
    r = run_cli(*score_args, "--predictions", str(tmp_path / "p.json"), "--protocol", "paper")
    assert r.returncode == 0 and "(paper protocol)" in r.stdout, r.stderr
    off = {k: v[1:] if k.startswith("10_") else v for k, v in preds.items()}
    (tmp_path / "off.json").write_text(json.dumps(off))
    r = run_cli(*score_args, "--predictions", str(tmp_path / "off.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "episode 10_" in r.stderr and "--allow-offset-start" in r.stderr
    r = run_cli(*score_args, "--predictions", str(tmp_path / "off.json"), "--allow-offset-start")
    assert r.returncode == 0, r.stderr
    r = run_cli("validate", str(out))
    assert r.returncode == 0 and "ir2r invariants hold" in r.stdout


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: (d / "r2r" / "R2R_val_seen.json").unlink(), "Room-to-Room episodes not found"),
        (lambda d: (d / "r2r" / "R2R_val_seen.json").write_text("{oops"), "is not valid JSON"),
        (
            lambda d: (d / "r2r" / "R2R_val_seen.json").write_text('[{"path_id": "x"}]'),
            "record 0: missing 'scan'",
        ),
        (
            lambda d: (d / "mp3d_connectivity" / "lineA_connectivity.json").unlink(),
            "Matterport3D connectivity graph not found",
        ),
    ],
)
def test_bad_inputs_are_one_line_errors(small_data: Path, tmp_path: Path, mutate, needle) -> None:
    mutate(small_data)
    out = tmp_path / "out"
    r = run_cli(
        "ir2r", "tours", "--split", "val_seen", "--data-dir", str(small_data), "--out", str(out)
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and needle in r.stderr, r.stderr
    assert not out.exists() or not any(out.iterdir())


def test_help_explains_the_commands() -> None:
    r = run_cli("ir2r", "--help")
    assert r.returncode == 0
    for cmd in ("tours", "stats", "plot", "score", "export"):
        assert cmd in r.stdout
    r = run_cli("ir2r", "tours", "--help")
    assert "DATAFORGE_DATA" in r.stdout and "tip-to-tip" in r.stdout
    r = run_cli("ir2r", "score", "--help")
    assert "--protocol" in r.stdout and "--allow-offset-start" in r.stdout
