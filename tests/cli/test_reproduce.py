"""`dataforge reproduce`: a dataset rebuilt from its manifest is byte-identical, an altered data
file is named, and moved, changed or missing inputs are one-line errors before any work."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from dfhelpers import SHARED, run_cli, synthetic_args

from dataforge.store.builder import header_hash, run_identity
from dataforge.store.manifest import read_manifest, write_manifest

DATA = SHARED / "data"
SCANS = ("17DRP5sb8fy", "EDJbREhghzL")
needs_r2r = pytest.mark.skipif(
    not (DATA / "r2r" / "R2R_val_seen.json").is_file(),
    reason=f"needs R2R val_seen and the Matterport connectivity files in {DATA}",
)


def one_line_error(r) -> str:
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    return r.stderr


def flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def small_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory holding R2R val_seen and the connectivity of two scans."""
    if not (DATA / "r2r" / "R2R_val_seen.json").is_file():
        pytest.skip(f"needs R2R val_seen and the Matterport connectivity files in {DATA}")
    root = tmp_path_factory.mktemp("data") / "data"
    (root / "r2r").mkdir(parents=True)
    (root / "mp3d_connectivity").mkdir()
    shutil.copy(DATA / "r2r" / "R2R_val_seen.json", root / "r2r")
    for scan in SCANS:
        name = f"{scan}_connectivity.json"
        shutil.copy(DATA / "mp3d_connectivity" / name, root / "mp3d_connectivity")
    return root


def tours(out: Path, data: Path, *extra: str):
    args = ("ir2r", "tours", "--split", "val_seen", "--scans", ",".join(SCANS))
    return run_cli(*args, "--data-dir", str(data), "--out", str(out), "--quiet", *extra)


@pytest.mark.slow
@needs_r2r
def test_val_seen_reproduces_and_an_altered_file_is_named(tmp_path: Path) -> None:
    out = tmp_path / "val_seen"
    args = ("ir2r", "tours", "--split", "val_seen", "--data-dir", str(DATA), "--out", str(out))
    assert run_cli(*args, "--quiet").returncode == 0
    r = run_cli("reproduce", str(out), "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    n = len(read_manifest(out).files)
    assert r.stdout.splitlines() == [
        f"reproduced {out}: all {n} data files are identical (sha256) to a fresh ir2r rebuild"
    ]
    copy = Path(shutil.copytree(out, tmp_path / "altered"))
    # another scan's chunk: it decodes, to other values; a flipped byte does not decode
    first, second, third = sorted((copy / "shards").glob("*/transition_m/c/0"))[:3]
    shutil.copy(second, first)
    flip(third)
    rels = [p.relative_to(copy).as_posix() for p in (first, third)]
    r = run_cli("reproduce", str(copy), "--quiet")
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert [line.split(": ")[0] for line in lines] == [f"[differs] {rel}" for rel in rels]
    assert "first difference: array 'transition_m' of episode '" in lines[0]
    assert "does not decode in the dataset" in lines[1]
    assert one_line_error(r).startswith(f"error: {copy}: 2 of {n} data files differ")


@pytest.mark.slow
def test_an_altered_extra_file_and_a_missing_one_are_named(small_data: Path, tmp_path: Path):
    out = tmp_path / "ds"
    assert tours(out, small_data).returncode == 0
    (out / "tours_val_seen.json").write_text("{}\n")
    (out / "episodes.csv").unlink()
    r = run_cli("reproduce", str(out), "--quiet")
    assert r.returncode == 1
    assert r.stdout.splitlines() == [
        "[differs] episodes.csv: missing on disk (or not a regular file)",
        "[differs] tours_val_seen.json: the bytes on disk differ from the manifest and the rebuild",
    ]


@pytest.mark.slow
def test_inputs_are_checked_before_any_work(small_data: Path, tmp_path: Path) -> None:
    data = Path(shutil.copytree(small_data, tmp_path / "data"))
    out = tmp_path / "ds"
    assert tours(out, data).returncode == 0
    recorded = read_manifest(out).inputs
    assert sorted(recorded["files"]) == [
        *(f"data-dir:mp3d_connectivity/{s}_connectivity.json" for s in SCANS),
        "data-dir:r2r/R2R_val_seen.json",
    ]
    assert recorded["locations"] == {"data-dir": str(data.resolve())}
    moved = data.rename(tmp_path / "moved")
    r = run_cli("reproduce", str(out), "--keep", str(tmp_path / "rebuilt"))
    assert r.returncode == 2 and "_connectivity.json not found" in one_line_error(r)
    assert "with --data-dir" in r.stderr
    assert not (tmp_path / "rebuilt").exists(), "nothing is built before the inputs are checked"
    r = run_cli("reproduce", str(out), "--data-dir", str(moved), "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    conn = moved / "mp3d_connectivity" / f"{SCANS[1]}_connectivity.json"
    conn.write_text(json.dumps(json.loads(conn.read_text()), indent=2))  # same graph, other bytes
    r = run_cli("reproduce", str(out), "--data-dir", str(moved))
    assert r.returncode == 2
    assert f"input data-dir:mp3d_connectivity/{SCANS[1]}_connectivity.json" in one_line_error(r)
    assert "differs from the file the dataset was made from" in r.stderr


def _resign(root: Path, **changes) -> None:
    manifest = read_manifest(root)
    write_manifest(root, dataclasses.replace(manifest, **changes))


@pytest.mark.slow
def test_a_forged_or_unreadable_manifest_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "ds"
    assert run_cli(*synthetic_args(src, scenes=2)).returncode == 0
    cases = {}
    for name, changes in {
        "seed": {"seed": 5},  # re-signed, but the config hash no longer matches
        "setting": {"config": {**read_manifest(src).config, "sparkle": 3}},
        "future": {"format_version": 99},
    }.items():
        cases[name] = Path(shutil.copytree(src, tmp_path / name))
        _resign(cases[name], **changes)
    for name in ("seed", "setting"):
        r = run_cli("reproduce", str(cases[name]))
        assert r.returncode == 2 and "do not give its config hash" in one_line_error(r)
    # a consistent manifest from a dataforge with another setting: named, nothing built
    newer = Path(shutil.copytree(src, tmp_path / "newer"))
    m = read_manifest(newer)
    config = {**m.config, "sparkle": 3}
    identity = run_identity(m.pipeline, m.format, m.seed, config)
    _resign(newer, config=config, config_hash=header_hash(identity, m.schema, {}))
    r = run_cli("reproduce", str(newer))
    assert r.returncode == 2 and "does not know: sparkle" in one_line_error(r)
    r = run_cli("reproduce", str(cases["future"]))
    assert r.returncode == 2 and "newer" in one_line_error(r)
    unsigned = Path(shutil.copytree(src, tmp_path / "unsigned"))
    m = json.loads((unsigned / "manifest.json").read_text())
    m["seed"] = 5
    (unsigned / "manifest.json").write_text(json.dumps(m))
    r = run_cli("reproduce", str(unsigned))
    assert r.returncode == 2 and "manifest.json was altered" in one_line_error(r)


@pytest.mark.slow
def test_keep_keeps_the_rebuild_and_refuses_the_dataset_itself(tmp_path: Path) -> None:
    src = tmp_path / "ds"
    assert run_cli(*synthetic_args(src, scenes=2)).returncode == 0
    kept = tmp_path / "kept"
    r = run_cli("reproduce", str(src), "--keep", str(kept), "--quiet")
    assert r.returncode == 0 and f"rebuild kept in {kept}" in r.stdout
    assert run_cli("validate", str(kept)).returncode == 0
    r = run_cli("reproduce", str(src), "--keep", str(src / "inside"))
    assert r.returncode == 2 and "lies inside the input" in one_line_error(r)
    r = run_cli("reproduce", str(src), "--input", "nonsense")
    assert r.returncode == 2 and "NAME=PATH" in one_line_error(r)
