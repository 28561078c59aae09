"""Atomic commits and resume at the store level: staging is never data, orphans are removed,
a torn journal line loses only its own unit, finished datasets are left untouched."""

from __future__ import annotations

import json

import numpy as np
import pytest
from dfhelpers import tree_digest

from dataforge.errors import ConfigMismatchError, SchemaError, UsageError
from dataforge.store import ArraySpec, DatasetWriter, Episode, Schema, open_dataset, validate
from dataforge.store.layout import CONTROL_DIR, JOURNAL_FILE

SCHEMA = Schema({"x": ArraySpec("int64", (None, 3))})


def ep(eid: str, n: int, v: int) -> Episode:
    return Episode(eid, {"x": np.full((n, 3), v, np.int64)}, {"v": v})


def writer(root, **kw):
    return DatasetWriter(root, schema=SCHEMA, name="t", units=["u0", "u1", "u2"], **kw)


def test_resume_after_abort_keeps_committed_and_finishes(tmp_path):
    root = tmp_path / "ds"
    w = writer(root).open()
    w.write_unit("u0", [ep("a", 2, 0)])
    w.write_unit("u1", [ep("b", 3, 1)])
    w.abort()
    # a crash after the rename but before the journal line: an orphan shard
    (root / "shards" / "u2.zarr").mkdir()
    (root / "shards" / "u2.zarr" / "junk").write_text("x")
    # a crash while staging
    (root / CONTROL_DIR / "staging" / "run-x").mkdir(parents=True)
    w2 = writer(root).open()
    assert sorted(w2.committed_units) == ["u0", "u1"]
    assert not (root / "shards" / "u2.zarr").exists()
    assert not (root / CONTROL_DIR / "staging").exists()
    w2.write_unit("u2", [ep("c", 1, 2)])
    w2.close()
    assert validate(root).ok
    with open_dataset(root) as ds:
        assert ds.episode_ids == ["a", "b", "c"]
        assert ds["b"]["x"].read().tolist() == [[1, 1, 1]] * 3
    assert not (root / CONTROL_DIR).exists()


def test_torn_journal_line_loses_only_that_unit(tmp_path):
    root = tmp_path / "ds"
    w = writer(root).open()
    w.write_unit("u0", [ep("a", 2, 0)])
    w.write_unit("u1", [ep("b", 2, 1)])
    w.abort()
    journal = root / CONTROL_DIR / JOURNAL_FILE
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text(lines[0] + lines[1][: len(lines[1]) // 2])
    w2 = writer(root).open()
    assert w2.committed_units == ["u0"]
    assert not (root / "shards" / "u1.zarr").exists()
    w2.abort()


def test_manifest_only_references_committed_shards(tmp_path):
    root = tmp_path / "ds"
    with writer(root) as w:
        for i in range(3):
            w.write_unit(f"u{i}", [ep(f"e{i}", i + 1, i)])
    manifest = json.loads((root / "manifest.json").read_text())
    assert [s["unit"] for s in manifest["shards"]] == ["u0", "u1", "u2"]
    assert all((root / f).is_file() for f in manifest["files"])
    assert manifest["summary"]["episodes"] == 3 and manifest["summary"]["rows"]["x"] == 6


def test_close_refuses_when_units_are_missing(tmp_path):
    w = writer(tmp_path / "ds").open()
    w.write_unit("u0", [ep("a", 1, 0)])
    with pytest.raises(Exception, match="not committed"):
        w.close()
    assert not (tmp_path / "ds" / "manifest.json").exists()


def test_reopening_a_finished_dataset_with_same_config_changes_nothing(tmp_path):
    root = tmp_path / "ds"
    with writer(root) as w:
        for i in range(3):
            w.write_unit(f"u{i}", [ep(f"e{i}", 1, i)])
    before = tree_digest(root)
    w = writer(root).open()
    assert sorted(w.committed_units) == ["u0", "u1", "u2"]
    w.abort()
    assert tree_digest(root) == before


def test_other_config_is_refused_unless_overwrite(tmp_path):
    root = tmp_path / "ds"
    with writer(root, config={"n": 1}) as w:
        for i in range(3):
            w.write_unit(f"u{i}", [ep(f"e{i}", 1, i)])
    before = tree_digest(root)
    with pytest.raises(ConfigMismatchError, match="n 1 -> 2") as exc:
        writer(root, config={"n": 2}).open()
    assert "--overwrite" in str(exc.value)
    assert tree_digest(root) == before
    with writer(root, config={"n": 2}, overwrite=True) as w:
        assert w.committed_units == []
        for i in range(3):
            w.write_unit(f"u{i}", [ep(f"e{i}", 2, i)])
    assert validate(root).ok


def test_foreign_directory_is_refused(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(UsageError, match="not empty"):
        writer(tmp_path).open()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_bad_episodes_are_refused_and_not_committed(tmp_path):
    root = tmp_path / "ds"
    w = writer(root).open()
    with pytest.raises(SchemaError, match="dtype"):
        w.write_unit("u0", [Episode("a", {"x": np.zeros((2, 3), np.float32)})])
    with pytest.raises(SchemaError, match="written twice"):
        w.write_unit("u0", [ep("a", 1, 0), ep("a", 1, 0)])
    with pytest.raises(SchemaError, match="not JSON"):
        w.write_unit("u0", [Episode("a", {"x": np.zeros((1, 3), np.int64)}, {"v": float("nan")})])
    w.write_unit("u0", [ep("a", 1, 0)])
    with pytest.raises(SchemaError, match="already written by unit"):
        w.write_unit("u1", [ep("a", 1, 0)])
    with pytest.raises(ValueError, match="unit id"):
        w.write_unit("../evil", [ep("z", 1, 0)])
    assert w.committed_units == ["u0"]
    assert sorted(p.name for p in (root / "shards").iterdir()) == ["u0.zarr"]
    w.abort()
