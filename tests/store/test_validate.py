"""validate: passes on an untouched dataset; names the file when any byte changes, a file goes
missing or an extra one appears; runs the pipeline's invariants."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import write_small

from dataforge.store import DatasetWriter, Episode
from dataforge.store.layout import MANIFEST
from dataforge.store.validation import validate as validate_store
from dataforge.validation import validate


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _all_files(root: Path) -> list[str]:
    listed = list(json.loads((root / MANIFEST).read_text())["files"])
    return [*listed, MANIFEST]


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_untouched_dataset_passes(family_datasets, synthetic_dataset, fmt):
    root, _ = family_datasets[fmt]
    report = validate(root, deep=True)
    assert report.ok, [p.line() for p in report.problems]
    assert report.checked["episodes"] == 6
    assert report.checked["files"] == len(json.loads((root / MANIFEST).read_text())["files"])
    synth = validate(synthetic_dataset(fmt))
    assert synth.ok, [p.line() for p in synth.problems]
    assert synth.checked["invariants"]  # the synthetic pipeline's invariants ran


@pytest.fixture(scope="module")
def small_datasets(tmp_path_factory):
    return {fmt: write_small(tmp_path_factory.mktemp(fmt) / "ds", fmt) for fmt in ("zarr", "hdf5")}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_flipping_any_byte_of_any_file_is_caught_and_named(small_datasets, tmp_path, fmt):
    src = small_datasets[fmt]
    files = _all_files(src)
    assert any(f.endswith(".json") for f in files) and any("shards/" in f for f in files)
    for i, rel in enumerate(files):
        size = (src / rel).stat().st_size
        positions = {0, size // 2, size - 1} if not rel.startswith("shards/") else {size // 2}
        for pos in sorted(positions):
            root = _copy(src, tmp_path / f"{i}-{pos}")
            data = bytearray((root / rel).read_bytes())
            data[pos] ^= 0x01
            (root / rel).write_bytes(bytes(data))
            report = validate(root)
            assert not report.ok, f"flip at {rel}:{pos} went unnoticed"
            assert rel in {p.path for p in report.problems}, (
                rel,
                [p.line() for p in report.problems],
            )
            shutil.rmtree(root)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")  # zarr warns about the deleted zarr.json
@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_missing_and_extra_files_are_named(small_datasets, tmp_path, fmt):
    src = small_datasets[fmt]
    for i, rel in enumerate(_all_files(src)):
        root = _copy(src, tmp_path / f"del{i}")
        (root / rel).unlink()
        if rel == MANIFEST:
            with pytest.raises(Exception, match=r"manifest\.json is missing"):
                validate(root)
        else:
            report = validate(root)
            assert any(p.kind == "missing" and p.path == rel for p in report.problems), rel
        shutil.rmtree(root)
    root = _copy(src, tmp_path / "extra")
    (root / "shards" / "stray.bin").write_bytes(b"x")
    (root / "notes.txt").write_text("hello")
    report = validate(root)
    extra = {p.path for p in report.problems if p.kind == "extra"}
    assert extra == {"shards/stray.bin", "notes.txt"}


def test_the_store_checks_invariants_only_through_a_lookup(synthetic_dataset):
    """The store sits below the registry: without a lookup it checks files, schema and
    episodes only; with one, the pipeline's invariants too (as ``dataforge validate`` does)."""
    from dataforge.registry import invariant_hooks

    root = synthetic_dataset("zarr")
    alone = validate_store(root)
    assert alone.ok and "invariants" not in alone.checked
    looked_up = validate_store(root, hooks_for=invariant_hooks)
    assert looked_up.checked["invariants"] == validate(root).checked["invariants"] != []
    unknown = validate_store(root, hooks_for=lambda name: None)
    assert any("no invariants are registered" in n for n in unknown.notes)


def test_invariant_violation_is_reported_with_episode(synthetic_dataset, tmp_path):
    """Rewrite one synthetic episode with a depth that is off by 5 cm, with valid checksums:
    only the pipeline's invariant can catch it."""
    from dataforge.store import open_dataset

    src = synthetic_dataset("zarr")
    with open_dataset(src) as ds:
        schema = ds.schema
        episodes = []
        for eid in ds.episode_ids:
            ep = ds[eid]
            arrays = ep.read()
            if eid == ds.episode_ids[1]:
                arrays["depth"] = np.where(arrays["depth"] > 0, arrays["depth"] + 0.05, 0).astype(
                    np.float32
                )
            episodes.append((ep.location.unit, Episode(eid, arrays, ep.metadata)))
        bad_id = ds.episode_ids[1]
        config = ds.manifest.config
    root = tmp_path / "tampered"
    with DatasetWriter(root, schema=schema, name="t", pipeline="synthetic", config=config) as w:
        for unit in dict.fromkeys(u for u, _ in episodes):
            w.write_unit(unit, [e for u, e in episodes if u == unit])
    report = validate(root)
    assert not report.ok
    assert {p.kind for p in report.problems} == {"invariant"}
    assert {p.episode for p in report.problems} == {bad_id}
    assert any("off its surface" in p.message for p in report.problems)
    assert {p.invariant for p in report.problems} == {"depth-on-surface"}


def test_unfinished_run_is_reported(tmp_path):
    from dataforge.store import ArraySpec, Schema

    schema = Schema({"x": ArraySpec("float32", (None, 2))})
    w = DatasetWriter(tmp_path / "ds", schema=schema, name="x", units=["a", "b"]).open()
    w.write_unit("a", [Episode("a/0", {"x": np.zeros((3, 2), np.float32)})])
    w.abort()
    report = validate(tmp_path / "ds")
    assert not report.ok and report.problems[0].kind == "incomplete"
    assert "1 units committed" in report.problems[0].message
