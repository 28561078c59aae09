"""run_job in-process: resume after a failed unit, refusal of other configs, dry runs, extra
files, and one-line errors for a full disk."""

from __future__ import annotations

import errno
import functools
import json

import numpy as np
import pytest
from dfhelpers import tree_digest

from dataforge.errors import (
    ConfigMismatchError,
    DataforgeError,
    MalformedInputError,
    UnitFailedError,
    UsageError,
)
from dataforge.run import ExecutionOptions, Job, WorkUnit, run_job
from dataforge.store import ArraySpec, Episode, Schema, open_dataset, validate

SCHEMA = Schema({"obs": ArraySpec("float32", (None, 5)), "k": ArraySpec("int64", (2,))})


def produce(fail_on: str | None, unit: WorkUnit, rng: np.random.Generator):
    if unit.id == fail_on:
        raise RuntimeError("simulated crash")
    if unit.id == "bad-input":
        raise MalformedInputError("house.json: rooms: rooms 'a' and 'b' overlap")
    if unit.id == "disk-full":
        raise OSError(errno.ENOSPC, "No space left on device")
    for e in range(unit.params["episodes"]):
        yield Episode(
            f"{unit.id}/{e}",
            {"obs": rng.normal(size=(3 + e, 5)).astype(np.float32), "k": np.array([e, 7])},
            {"unit": unit.id},
        )


def make_job(fail_on=None, n=4, config=None, extra_files=None, units=None):
    units = units or tuple(WorkUnit(f"u{i}", {"episodes": 1 + i % 2}) for i in range(n))
    return Job(
        pipeline="test",
        name="t",
        config=config or {"n": n},
        seed=11,
        format="zarr",
        schema=SCHEMA,
        units=units,
        produce=functools.partial(produce, fail_on),
        extra_files=extra_files,
    )


def test_a_unit_with_bad_input_says_to_fix_it_before_resuming(tmp_path):
    units = (WorkUnit("u0", {"episodes": 1}), WorkUnit("bad-input", {"episodes": 1}))
    with pytest.raises(MalformedInputError) as exc:
        run_job(make_job(units=units), tmp_path / "ds", ExecutionOptions())
    assert str(exc.value).endswith(
        "overlap (1 of 2 units are committed; fix that input, then rerun the same command to "
        "resume)"
    )
    assert exc.value.exit_code == 2
    with pytest.raises(UnitFailedError) as crash:  # a crash is not the input's fault
        run_job(make_job(fail_on="u3"), tmp_path / "other", ExecutionOptions())
    assert "fix that input" not in str(crash.value)


def test_failed_unit_keeps_committed_and_rerun_resumes(tmp_path):
    root = tmp_path / "ds"
    with pytest.raises(
        UnitFailedError,
        match=r"unit u2 failed: RuntimeError: simulated crash.*"
        r"2 of 4 units are committed.*resume",
    ):
        run_job(make_job(fail_on="u2"), root, ExecutionOptions())
    assert sorted(p.name for p in (root / "shards").iterdir()) == ["u0.zarr", "u1.zarr"]
    before = {p: d for p, d in tree_digest(root / "shards").items()}
    report = run_job(make_job(), root, ExecutionOptions())
    assert report.already_committed == 2 and report.committed_now == 2
    assert {p: d for p, d in tree_digest(root / "shards").items() if p in before} == before
    assert validate(root).ok
    fresh = run_job(make_job(), tmp_path / "fresh", ExecutionOptions())
    assert dict(fresh.manifest.files) == dict(report.manifest.files)


def test_rerun_of_complete_dataset_changes_nothing(tmp_path):
    root = tmp_path / "ds"
    run_job(make_job(), root, ExecutionOptions())
    before = tree_digest(root)
    again = run_job(make_job(), root, ExecutionOptions(workers=2))
    assert again.already_complete and again.committed_now == 0
    assert tree_digest(root) == before


def test_rerun_regenerates_a_deleted_shard(tmp_path):
    import shutil

    root = tmp_path / "ds"
    first = run_job(make_job(), root, ExecutionOptions())
    shutil.rmtree(root / "shards" / "u2.zarr")
    assert not validate(root).ok
    again = run_job(make_job(), root, ExecutionOptions())
    assert again.committed_now == 1 and again.already_committed == 3
    assert validate(root).ok
    assert dict(again.manifest.files) == dict(first.manifest.files)


def test_other_config_refused_then_overwritten(tmp_path):
    root = tmp_path / "ds"
    run_job(make_job(), root, ExecutionOptions())
    before = tree_digest(root)
    with pytest.raises(ConfigMismatchError, match="another configuration"):
        run_job(make_job(n=5), root, ExecutionOptions())
    assert tree_digest(root) == before
    report = run_job(make_job(n=5), root, ExecutionOptions(overwrite=True))
    assert len(report.manifest.shards) == 5 and validate(root).ok


def test_dry_run_writes_nothing(tmp_path):
    root = tmp_path / "ds"
    report = run_job(make_job(), root, ExecutionOptions(dry_run=True))
    assert report.dry_run and "4 of 4 units" in report.plan_note
    assert not root.exists()
    with pytest.raises(UnitFailedError):
        run_job(make_job(fail_on="u3"), root, ExecutionOptions())
    before = tree_digest(root)
    report = run_job(make_job(), root, ExecutionOptions(dry_run=True))
    assert "1 of 4 units" in report.plan_note and "3 already committed" in report.plan_note
    assert tree_digest(root) == before


def tours_file(ds):
    order = [ds[e].metadata["unit"] for e in ds.episode_ids]
    return {"tours.json": json.dumps({"order": order}).encode()}


def test_extra_files_are_written_hashed_and_validated(tmp_path):
    root = tmp_path / "ds"
    report = run_job(make_job(extra_files=tours_file), root, ExecutionOptions())
    assert "tours.json" in report.manifest.files
    assert json.loads((root / "tours.json").read_text())["order"][0] == "u0"
    assert validate(root).ok
    (root / "tours.json").write_text("{}")
    bad = validate(root)
    assert [p.path for p in bad.problems] == ["tours.json"]


def test_full_disk_is_one_clear_error(tmp_path):
    units = (WorkUnit("u0", {"episodes": 1}), WorkUnit("disk-full", {"episodes": 1}))
    root = tmp_path / "ds"
    with pytest.raises(DataforgeError, match=r"no space left.*committed shards are intact"):
        run_job(make_job(units=units), root, ExecutionOptions())
    assert (root / "shards" / "u0.zarr").is_dir()


def test_unwritable_output_is_bad_input(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        run_job(make_job(), tmp_path / "file" / "ds", ExecutionOptions())


def test_episodes_are_read_back_in_unit_order(tmp_path):
    root = tmp_path / "ds"
    run_job(make_job(n=6), root, ExecutionOptions(workers=2))
    with open_dataset(root) as ds:
        assert [ds[e].metadata["unit"] for e in ds.episode_ids][:3] == ["u0", "u1", "u1"]
        assert ds["u1/1"]["obs"].shape == (4, 5)
