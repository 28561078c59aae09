"""The real command line on untrusted datasets: forged manifests, symbolic links, a linked
``.dataforge``, and output images that cannot be written. Every refusal is one line on stderr
with the right exit code, and nothing outside the dataset is read or changed.

"Not read" is made observable across the process boundary with fifos: a path outside the
dataset that leads to a fifo would block the command (and time the test out) if it were opened.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest
from dfhelpers import run_cli, synthetic_args, tree_digest

from dataforge.store.manifest import ShardEntry, manifest_bytes, read_manifest

pytestmark = pytest.mark.slow  # the real command, in subprocesses

TIMEOUT = 120


def _one_line_error(r, code: int) -> str:
    assert r.returncode == code, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    return r.stderr


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder beside the dataset: a secret file, and a 'shard' whose zarr.json is a fifo."""
    out = tmp_path / "outside"
    (out / "trap.zarr").mkdir(parents=True)
    os.mkfifo(out / "trap.zarr" / "zarr.json")
    os.mkfifo(out / "trap.h5")
    (out / "secret.txt").write_text("secret\n")
    return out


def _outside_state(outside: Path) -> tuple:
    """What the outside folder holds (without opening the fifos)."""
    listing = sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))
    return listing, (outside / "secret.txt").read_bytes()


def _forge_shard_path(root: Path, rel: str) -> None:
    """Point the first shard and its episodes at ``rel`` and re-sign the manifest."""
    m = read_manifest(root)
    first = m.shards[0]
    episodes = {
        k: dataclasses.replace(v, shard=rel) if v.shard == first.path else v
        for k, v in m.episodes.items()
    }
    forged = dataclasses.replace(
        m, shards=(ShardEntry(first.unit, rel, first.episodes), *m.shards[1:]), episodes=episodes
    )
    (root / "manifest.json").write_bytes(manifest_bytes(forged))


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_forged_shard_paths_are_refused_by_every_command(
    synthetic_dataset, tmp_path, outside, where
):
    root = _copy(synthetic_dataset("zarr"), tmp_path / "ds")
    trap = outside / "trap.zarr"
    _forge_shard_path(root, "../outside/trap.zarr" if where == "relative" else str(trap))
    eid = "scene-0000/ep-000"
    before = _outside_state(outside)
    for args in (
        ["inspect", str(root)],
        ["inspect", str(root), "--episode", eid],
        ["stats", str(root)],
        ["stats", str(root), "--json"],
    ):
        r = run_cli(*args, timeout=TIMEOUT)
        err = _one_line_error(r, 2)
        assert "unsafe shard path" in err and "trap.zarr" in err, err
        assert r.stdout == "", (args, r.stdout)
    r = run_cli("validate", str(root), "--deep", "--quiet", timeout=TIMEOUT)
    _one_line_error(r, 1)
    assert "[path] manifest.json: unsafe shard path" in r.stdout, r.stdout
    assert _outside_state(outside) == before


def test_links_are_reported_by_validate_and_never_followed(synthetic_dataset, tmp_path, outside):
    root = _copy(synthetic_dataset("zarr"), tmp_path / "ds")
    os.symlink("/etc", root / "etclink")
    # croissant.json a link to an identical copy outside: following it would 'pass'
    shutil.copy2(root / "croissant.json", outside / "croissant.json")
    (root / "croissant.json").unlink()
    os.symlink(outside / "croissant.json", root / "croissant.json")
    # a chunk file of a shard a link to a fifo outside: opening it would block
    chunk = next(p for p in read_manifest(root).files if p.startswith("shards/") and "/c/" in p)
    (root / chunk).unlink()
    os.symlink(outside / "trap.h5", root / chunk)
    before = _outside_state(outside)
    r = run_cli("validate", str(root), "--deep", "--quiet", timeout=TIMEOUT)
    _one_line_error(r, 1)
    for rel in ("etclink", "croissant.json", chunk):
        assert f"[link] {rel}: symbolic link" in r.stdout, r.stdout
    assert "size" not in r.stdout.split("[link] croissant.json")[1].split("\n")[0]
    shard = chunk.split("/")[0] + "/" + chunk.split("/")[1]
    eid = next(k for k, v in read_manifest(root).episodes.items() if v.shard == shard)
    r = run_cli("inspect", str(root), "--episode", eid, timeout=TIMEOUT)
    assert "symbolic link" in _one_line_error(r, 2)
    assert r.stdout == ""
    assert _outside_state(outside) == before


def test_a_linked_manifest_is_refused(synthetic_dataset, tmp_path, outside):
    root = _copy(synthetic_dataset("zarr"), tmp_path / "ds")
    shutil.copy2(root / "manifest.json", outside / "manifest.json")
    (root / "manifest.json").unlink()
    os.symlink(outside / "manifest.json", root / "manifest.json")
    r = run_cli("stats", str(root), timeout=TIMEOUT)
    assert "manifest.json is a symbolic link" in _one_line_error(r, 2)
    r = run_cli("validate", str(root), "--quiet", timeout=TIMEOUT)
    _one_line_error(r, 1)
    assert "[link] manifest.json" in r.stdout


def test_unwritable_plot_and_preview_fail_first_in_one_line(synthetic_dataset, tmp_path):
    root = synthetic_dataset("zarr")
    before = tree_digest(root)
    (tmp_path / "adir.png").mkdir()
    cases = [
        (["stats", str(root), "--plot", "/proc/x.png"], "--plot"),
        (["stats", str(root), "--json", "--plot", str(tmp_path / "no" / "such" / "x.png")], "no"),
        (["stats", str(root), "--plot", str(tmp_path / "adir.png")], "adir.png"),
        (["inspect", str(root), "--preview", str(tmp_path / "a" / "b" / "c.png")], "--preview"),
        (["inspect", str(root), "--preview", "/proc/x.png"], "--preview"),
        (["inspect", str(root), "--episode", "nosuch"], "nosuch"),
    ]
    for args, needle in cases:
        r = run_cli(*args, timeout=TIMEOUT)
        assert needle in _one_line_error(r, 2), (args, r.stderr)
        assert r.stdout == "", (args, r.stdout)  # checked before any table is printed
    assert not (tmp_path / "a").exists() and not (tmp_path / "no").exists()
    assert tree_digest(root) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_plot_into_a_read_only_folder_fails_first(synthetic_dataset, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        r = run_cli("stats", str(synthetic_dataset("zarr")), "--plot", str(ro / "x.png"))
        assert "--plot" in _one_line_error(r, 2) and r.stdout == ""
    finally:
        ro.chmod(0o755)


def test_generation_refuses_a_linked_dataforge_and_links_in_a_dataset(tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, out / ".dataforge")
    r = run_cli(*synthetic_args(out, scenes=1), timeout=TIMEOUT)
    assert "symbolic link" in _one_line_error(r, 2)
    assert list(elsewhere.iterdir()) == [] and [p.name for p in out.iterdir()] == [".dataforge"]
    # a finished dataset whose shards/ is a link to a folder of the user's: a rerun (resume)
    # or --overwrite must not delete anything there
    ds = tmp_path / "ds"
    r = run_cli(*synthetic_args(ds, scenes=1), timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    photos = tmp_path / "photos"
    shutil.copytree(ds / "shards", photos)
    (photos / "precious.jpg").write_bytes(b"a photo")
    shutil.rmtree(ds / "shards")
    os.symlink(photos, ds / "shards")
    before = tree_digest(photos)
    for extra in ([], ["--overwrite"]):
        r = run_cli(*synthetic_args(ds, *extra, scenes=1), timeout=TIMEOUT)
        assert "shards is a symbolic link" in _one_line_error(r, 2)
    assert tree_digest(photos) == before
