"""The real command line: help, version, exit codes, one-line errors, and a dozen malformed
inputs that must change nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dfhelpers import run_cli, synthetic_args, tree_digest


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "ds"
    r = run_cli(*synthetic_args(root, scenes=2))
    assert r.returncode == 0, r.stderr
    assert "wrote 4 episodes in 2 shards" in r.stdout
    return root


def test_help_lists_command_groups_without_heavy_imports():
    r = run_cli("--help")
    assert r.returncode == 0
    for group in ("synthetic", "validate", "inspect", "stats"):
        assert group in r.stdout
    code = (
        "import sys; from dataforge.cli.main import main; main(['--help']); "
        "print(sorted(m for m in ('zarr','h5py','ray','torch','mani_skill','ai2thor',"
        "'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_version_and_subcommand_help():
    from dataforge import __version__

    r = run_cli("--version")
    assert r.returncode == 0 and __version__ in r.stdout
    r = run_cli("synthetic", "generate", "--help")
    assert r.returncode == 0
    for opt in (
        "--out",
        "--seed",
        "--format",
        "--workers",
        "--executor",
        "--overwrite",
        "--dry-run",
        "--quiet",
    ):
        assert opt in r.stdout


@pytest.mark.slow
def test_validate_exit_codes_and_report(dataset, tmp_path):
    r = run_cli("validate", str(dataset), "--quiet")
    assert r.returncode == 0 and r.stdout.startswith("OK"), r.stdout + r.stderr
    r = run_cli("validate", str(dataset), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["ok"] is True
    bad = Path(shutil.copytree(dataset, tmp_path / "bad"))
    shard_file = next(
        p for p in sorted((bad / "shards").rglob("*")) if p.is_file() and p.name == "0"
    )
    data = bytearray(shard_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard_file.write_bytes(bytes(data))
    r = run_cli("validate", str(bad), "--quiet")
    rel = shard_file.relative_to(bad).as_posix()
    assert r.returncode == 1
    assert f"[altered] {rel}" in r.stdout
    assert r.stderr.strip().count("\n") == 0 and "problems found" in r.stderr
    r = run_cli("validate", str(bad), "--json")
    report = json.loads(r.stdout)
    assert r.returncode == 1 and report["problems"][0]["path"] == rel


@pytest.mark.slow
def test_inspect_and_stats(dataset, tmp_path):
    r = run_cli("inspect", str(dataset))
    assert r.returncode == 0 and "synthetic" in r.stdout and "depth" in r.stdout
    png = tmp_path / "p.png"
    r = run_cli("inspect", str(dataset), "--episode", "scene-0001/ep-001", "--preview", str(png))
    assert r.returncode == 0, r.stderr
    from PIL import Image

    with Image.open(png) as im:
        assert im.format == "PNG" and im.width > 100 and im.height > 100
    r = run_cli("stats", str(dataset), "--json", "--plot", str(tmp_path / "s.png"))
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    assert stats["dataset"]["episodes"] == 4 and stats["counts"]["scenes"] == 2
    assert stats["counts"]["frames"] == 16
    assert (tmp_path / "s.png").stat().st_size > 1000


def test_rerun_and_dry_run_leave_a_complete_dataset_alone(dataset):
    before = tree_digest(dataset)
    r = run_cli(*synthetic_args(dataset, scenes=2))
    assert r.returncode == 0 and "already complete" in r.stdout
    r = run_cli(*synthetic_args(dataset, "--dry-run", scenes=2))
    assert r.returncode == 0 and "0 of 2 units" in r.stdout
    assert tree_digest(dataset) == before


def test_debug_shows_traceback(tmp_path):
    r = run_cli("--debug", "validate", str(tmp_path / "missing"))
    assert r.returncode == 2 and "Traceback" in r.stderr


def _corrupt_manifests(dataset: Path, tmp: Path) -> dict[str, Path]:
    out = {}
    for name, mutate in {
        "garbage": lambda m: b"\x00\xffnot json",
        "fields": lambda m: json.dumps({"format_version": 1, "name": "x"}).encode(),
        "future": lambda m: json.dumps({**json.loads(m), "format_version": 99}).encode(),
    }.items():
        root = Path(shutil.copytree(dataset, tmp / name))
        (root / "manifest.json").write_bytes(mutate((root / "manifest.json").read_bytes()))
        out[name] = root
    return out


@pytest.mark.slow
def test_a_dozen_malformed_inputs_get_one_line_exit_2_and_change_nothing(dataset, tmp_path):
    (tmp_path / "afile").write_text("x")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("mine")
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = _corrupt_manifests(dataset, tmp_path)
    before = {p: tree_digest(p) for p in (dataset, foreign, *bad.values())}
    cases = [
        ["validate", str(tmp_path / "nope")],
        ["validate", str(tmp_path / "afile")],
        ["validate", str(empty)],
        ["inspect", str(bad["garbage"])],
        ["stats", str(bad["fields"])],
        ["inspect", str(bad["future"])],
        ["inspect", str(dataset), "--episode", "no/such/episode"],
        [*synthetic_args(dataset, "--format", "parquet")],
        [*synthetic_args(dataset, "--scenes", "-3")],
        [*synthetic_args(dataset, "--workers", "0")],
        [*synthetic_args(dataset, "--resolution", "10by10")],
        [*synthetic_args(dataset, "--hfov", "500")],
        [*synthetic_args(tmp_path / "afile" / "sub")],
        [*synthetic_args(dataset, scenes=3)],  # another configuration in an existing dataset
        [*synthetic_args(foreign)],  # somebody else's directory
        [*synthetic_args(dataset, "--ray-address", "auto", scenes=2)],
        ["synthetic", "generate", "--scenes", "2"],  # no --out
        ["frobnicate"],
    ]
    for args in cases:
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, (args, r.stderr)
        assert "Traceback" not in r.stderr
    for path, digest in before.items():
        assert tree_digest(path) == digest, f"{path} changed"
    assert (
        "future" in run_cli("inspect", str(bad["future"])).stderr.lower()
        or "newer" in run_cli("inspect", str(bad["future"])).stderr
    )
    assert not any(empty.iterdir())
