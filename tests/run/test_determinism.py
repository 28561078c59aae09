"""Same seed -> byte-identical files with --workers 1, --workers 2 and --executor ray."""

from __future__ import annotations

import importlib.util
import json

import pytest
from dfhelpers import run_cli, synthetic_args, tree_digest


def _files(root):
    return json.loads((root / "manifest.json").read_text())["files"]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_worker_count_does_not_change_a_byte(tmp_path, fmt):
    runs = {}
    for name, extra in {"w1": ["--workers", "1"], "w2": ["--workers", "2"]}.items():
        out = tmp_path / name
        r = run_cli(*synthetic_args(out, "--format", fmt, "--seed", "9", *extra))
        assert r.returncode == 0, r.stderr
        runs[name] = out
    assert _files(runs["w1"]) == _files(runs["w2"])
    assert tree_digest(runs["w1"]).keys() == tree_digest(runs["w2"]).keys()
    for rel in ("episodes.csv", "croissant.json"):
        assert (runs["w1"] / rel).read_bytes() == (runs["w2"] / rel).read_bytes()
    other_seed = tmp_path / "seed10"
    assert run_cli(*synthetic_args(other_seed, "--format", fmt, "--seed", "10")).returncode == 0
    shards = [k for k in _files(other_seed) if k.startswith("shards/")]
    assert any(_files(other_seed)[k] != _files(runs["w1"])[k] for k in shards)


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray is not installed (pip install 'dataforge[ray]')",
)
def test_ray_executor_gives_the_same_bytes(tmp_path):
    local, ray = tmp_path / "local", tmp_path / "ray"
    assert run_cli(*synthetic_args(local, "--seed", "4")).returncode == 0
    r = run_cli(*synthetic_args(ray, "--seed", "4", "--executor", "ray", "--workers", "2"))
    assert r.returncode == 0, r.stderr
    assert _files(local) == _files(ray)
    manifest = json.loads((ray / "manifest.json").read_text())
    assert manifest["execution"]["executor"] == "ray"
