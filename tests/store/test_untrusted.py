"""A dataset is untrusted input: manifests whose paths lead out of the directory, symbolic
links anywhere in it, a linked ``.dataforge``, and Ctrl-C while a run finalizes.

Every forged manifest here is re-signed (``manifest_bytes`` recomputes the self-digest), as an
attacker would do. "Nothing outside is read" is checked with an audit hook that records every
path Python opens or lists while a check runs."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import tree_digest, write_small

from dataforge.errors import DatasetError, Interrupted, SchemaError, UsageError
from dataforge.run import ExecutionOptions, Job, WorkUnit, run_job
from dataforge.store import ArraySpec, DatasetWriter, Episode, Schema, open_dataset, validate
from dataforge.store.builder import DatasetBuilder, DatasetHeader
from dataforge.store.layout import check_relative_path, link_in, path_problem
from dataforge.store.lock import DirLock
from dataforge.store.manifest import ShardEntry, check_digest, manifest_bytes, read_manifest

# -- helpers ------------------------------------------------------------------------------------

_OPENED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _OPENED is not None and event in ("open", "os.scandir", "os.listdir"):
        path = args[0] if args else None
        if isinstance(path, (str, bytes, os.PathLike)):
            _OPENED.append(os.fsdecode(path))


sys.addaudithook(_audit)


@contextmanager
def opened_paths() -> Iterator[list[str]]:
    """Every path Python opens or lists inside the block (h5py's C opens are not seen: HDF5
    cases check that the reader refuses before it is called)."""
    global _OPENED
    _OPENED = []
    try:
        yield _OPENED
    finally:
        _OPENED = None


def _touches(paths: list[str], outside: Path) -> list[str]:
    real = os.path.realpath(outside)
    return [p for p in paths if os.path.isabs(p) and os.path.realpath(p).startswith(real)]


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> dict[str, Path]:
    return {fmt: write_small(tmp_path_factory.mktemp(fmt) / "ds", fmt) for fmt in ("zarr", "hdf5")}


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


def _forge(root: Path, **changes) -> None:
    """Rewrite root's manifest with ``changes`` and re-sign it."""
    m = read_manifest(root)
    (root / "manifest.json").write_bytes(manifest_bytes(dataclasses.replace(m, **changes)))


def _forge_dict(root: Path, edit) -> None:
    """Edit the manifest as a dict (for values Manifest objects cannot hold), then re-sign it
    the way manifest_bytes does."""
    data = json.loads((root / "manifest.json").read_text())
    edit(data)
    data["manifest_sha256"] = "0" * 64
    text = json.dumps(data, indent=1) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()
    head, _, tail = text.rpartition("0" * 64)
    raw = (head + digest + tail).encode()
    assert check_digest(raw) is None
    (root / "manifest.json").write_bytes(raw)


def _outside_copy(root: Path, rel: str, outside: Path) -> Path:
    """An identical copy of root/rel outside the dataset (so following a link would 'pass')."""
    dst = outside / Path(rel).name
    if (root / rel).is_dir():
        shutil.copytree(root / rel, dst)
    else:
        shutil.copy2(root / rel, dst)
    return dst


# -- the path rule ------------------------------------------------------------------------------

BAD_PATHS = [
    "/etc/passwd",
    "../x",
    "a/../../x",
    "shards/../manifest.json",
    "shards\\u0.zarr",
    "..\\x",
    "C:/x",
    "c:x",
    "",
    "shards/u0\x00.zarr",
    "shards//u0.zarr",
    "shards/u0.zarr/",
    "./shards/u0.zarr",
    "shards/\nu0.zarr",
]


@pytest.mark.parametrize("rel", BAD_PATHS)
def test_check_relative_path_refuses(rel):
    assert path_problem(rel) is not None
    with pytest.raises(ValueError, match="shard path"):
        check_relative_path(rel, "shard path")


@pytest.mark.parametrize("rel", ["manifest.json", "shards/u0.zarr", "a/b.c/d-e_f", "x..y/..z"])
def test_check_relative_path_accepts(rel):
    assert check_relative_path(rel) == rel
    assert path_problem(7) is not None  # not a string


# -- manifests whose paths leave the directory --------------------------------------------------


def _bad_shard(root: Path, rel: str) -> None:
    m = read_manifest(root)
    first = m.shards[0]
    _forge(root, shards=(ShardEntry(first.unit, rel, first.episodes), *m.shards[1:]))


def _bad_episode(root: Path, rel: str) -> None:
    m = read_manifest(root)
    eid, loc = next(iter(m.episodes.items()))
    _forge(root, episodes={**m.episodes, eid: dataclasses.replace(loc, shard=rel)})


def _bad_file(root: Path, rel: str) -> None:
    m = read_manifest(root)
    name, entry = next((k, v) for k, v in m.files.items() if k.startswith("shards/"))
    files = {k: v for k, v in m.files.items() if k != name}
    _forge(root, files={**files, rel: entry})


@pytest.mark.parametrize("where", ["shard", "episode", "file"])
@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_manifest_with_escaping_path_is_refused_everywhere(small, tmp_path, fmt, where):
    """The shard (or file) is copied outside and the manifest points there: before the fix,
    open_dataset served it and validate hashed it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = _copy(small[fmt], tmp_path / "ds")
    m = read_manifest(root)
    shard_rel = m.shards[0].path
    target = _outside_copy(root, shard_rel, outside)
    before = tree_digest(outside)
    forge = {"shard": _bad_shard, "episode": _bad_episode, "file": _bad_file}[where]
    for rel in [str(target), f"../outside/{target.name}", f"shards/../../outside/{target.name}"]:
        forge(root, rel)
        with opened_paths() as seen:
            with pytest.raises(DatasetError, match=r"manifest\.json: unsafe .*path") as exc:
                read_manifest(root)
            assert rel in str(exc.value) or repr(rel) in str(exc.value)
            assert "\n" not in str(exc.value)
            with pytest.raises(DatasetError, match="unsafe"):
                open_dataset(root)
            report = validate(root, deep=True)
        assert not report.ok
        assert [p.kind for p in report.problems] == ["path"], [p.line() for p in report.problems]
        assert report.problems[0].path == "manifest.json"
        assert repr(rel) in report.problems[0].message
        assert not _touches(seen, outside), _touches(seen, outside)
        shutil.rmtree(root)
        root = _copy(small[fmt], tmp_path / "ds")
    assert tree_digest(outside) == before


@pytest.mark.parametrize("rel", BAD_PATHS)
def test_every_bad_form_is_refused_as_shard_file_and_episode_shard(small, tmp_path, rel):
    for i, forge in enumerate((_bad_shard, _bad_episode, _bad_file)):
        root = _copy(small["zarr"], tmp_path / f"ds{i}")
        forge(root, rel)
        with pytest.raises(DatasetError, match=r"manifest\.json: unsafe"):
            open_dataset(root)
        report = validate(root)
        assert {p.kind for p in report.problems} == {"path"}, [p.line() for p in report.problems]


def test_non_string_paths_are_refused(small, tmp_path):
    root = _copy(small["zarr"], tmp_path / "ds")

    def edit(d):
        d["shards"][0]["path"] = 5

    _forge_dict(root, edit)
    with pytest.raises(DatasetError, match=r"unsafe shard path 5 .*not a string"):
        open_dataset(root)
    assert {p.kind for p in validate(root).problems} == {"path"}


def test_reader_refuses_a_bad_path_in_a_manifest_built_in_memory(small, tmp_path):
    """Dataset() can be built from any Manifest object: _shard checks the path again."""
    from dataforge.store.reader import Dataset

    root = _copy(small["zarr"], tmp_path / "ds")
    m = read_manifest(root)
    eid, loc = next(iter(m.episodes.items()))
    bad = dataclasses.replace(m, episodes={eid: dataclasses.replace(loc, shard="../x.zarr")})
    with Dataset(root, bad) as ds, pytest.raises(DatasetError, match="leaves the dataset"):
        ds[eid]["rgb"].read()


# -- symbolic links -----------------------------------------------------------------------------


def _kinds(report) -> set[tuple[str, str | None]]:
    return {(p.kind, p.path) for p in report.problems}


def test_link_to_a_directory_outside_is_reported(small, tmp_path):
    root = _copy(small["zarr"], tmp_path / "ds")
    os.symlink("/etc", root / "etclink")
    with opened_paths() as seen:
        report = validate(root)
    assert ("link", "etclink") in _kinds(report)
    assert "/etc" in next(p.message for p in report.problems if p.path == "etclink")
    assert not _touches(seen, Path("/etc"))


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_croissant_linked_to_an_identical_copy_outside_is_reported_not_hashed(small, tmp_path, fmt):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = _copy(small[fmt], tmp_path / "ds")
    copy = _outside_copy(root, "croissant.json", outside)
    (root / "croissant.json").unlink()
    os.symlink(copy, root / "croissant.json")
    with opened_paths() as seen:
        report = validate(root)
    assert _kinds(report) == {("link", "croissant.json")}, [p.line() for p in report.problems]
    assert not _touches(seen, outside)
    # a link to an unrelated file is not measured either (its size was reported before)
    (root / "croissant.json").unlink()
    os.symlink("/etc/passwd", root / "croissant.json")
    report = validate(root)
    assert _kinds(report) == {("link", "croissant.json")}
    assert not any("size" in p.message for p in report.problems)


def test_link_inside_a_zarr_shard_is_reported_and_the_shard_not_opened(small, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = _copy(small["zarr"], tmp_path / "ds")
    m = read_manifest(root)
    chunk = next(p for p in m.files if p.startswith("shards/u0.zarr/rgb/") and "zarr.json" not in p)
    copy = _outside_copy(root, chunk, outside)
    (root / chunk).unlink()
    os.symlink(copy, root / chunk)
    with opened_paths() as seen:
        report = validate(root, deep=True)
    assert ("link", chunk) in _kinds(report)
    assert ("shard", "shards/u0.zarr") in _kinds(report)
    assert not _touches(seen, outside)
    with open_dataset(root) as ds, pytest.raises(DatasetError, match="symbolic link"):
        ds["u0/e0"]["rgb"].read()
    with open_dataset(root) as ds:  # the other shard still reads
        assert ds["u1/e0"]["rgb"].read().shape == (3, 6, 8, 3)


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_a_shard_that_is_or_lies_under_a_link_is_refused(small, tmp_path, fmt):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = _copy(small[fmt], tmp_path / "ds")
    rel = read_manifest(root).shards[0].path
    copy = _outside_copy(root, rel, outside)
    shutil.rmtree(root / rel) if fmt == "zarr" else (root / rel).unlink()
    os.symlink(copy, root / rel)
    with opened_paths() as seen:
        report = validate(root)
        with open_dataset(root) as ds, pytest.raises(DatasetError, match=r"symbolic link"):
            ds["u0/e0"]["rgb"].read()
    assert ("link", rel) in _kinds(report)
    assert not any(p.kind == "missing" for p in report.problems)  # the link explains it
    assert not _touches(seen, outside)
    # the whole shards/ folder a link to an identical copy outside
    root2 = _copy(small[fmt], tmp_path / "ds2")
    shards_copy = _outside_copy(root2, "shards", outside / "all")
    shutil.rmtree(root2 / "shards")
    os.symlink(shards_copy, root2 / "shards")
    assert link_in(root2, rel) == "shards"
    with opened_paths() as seen:
        report = validate(root2)
        with open_dataset(root2) as ds, pytest.raises(DatasetError, match="shards is a symbolic"):
            ds["u1/e1"]["depth"][0]
    assert ("link", "shards") in _kinds(report)
    assert not any(p.kind == "missing" for p in report.problems)
    assert not _touches(seen, outside)


def test_links_in_dataforge_dir_and_fifos_are_reported(small, tmp_path):
    root = _copy(small["zarr"], tmp_path / "ds")
    (root / ".dataforge").mkdir()
    os.symlink("/etc/passwd", root / ".dataforge" / "journal.jsonl")
    os.mkfifo(root / "episodes.csv.fifo")
    (root / "episodes.csv").unlink()
    os.mkfifo(root / "episodes.csv")  # a listed file replaced by a fifo: reading would block
    report = validate(root)
    kinds = _kinds(report)
    assert ("link", ".dataforge/journal.jsonl") in kinds
    assert ("special", "episodes.csv") in kinds and ("special", "episodes.csv.fifo") in kinds
    # a .dataforge that is itself a link to a folder
    root2 = _copy(small["zarr"], tmp_path / "ds2")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", root2 / ".dataforge")
    assert ("link", ".dataforge") in _kinds(validate(root2))


def test_manifest_that_is_a_link_is_not_followed(small, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = _copy(small["zarr"], tmp_path / "ds")
    copy = _outside_copy(root, "manifest.json", outside)
    (root / "manifest.json").unlink()
    os.symlink(copy, root / "manifest.json")
    with opened_paths() as seen:
        report = validate(root)
        with pytest.raises(DatasetError, match=r"manifest\.json is a symbolic link"):
            open_dataset(root)
    assert _kinds(report) == {("link", "manifest.json")}
    assert not _touches(seen, outside)


def test_unfinished_run_with_linked_control_files_is_not_read(tmp_path):
    root, outside = tmp_path / "ds", tmp_path / "outside"
    (root / ".dataforge").mkdir(parents=True)
    outside.mkdir()
    (root / ".dataforge" / "run.json").write_text(json.dumps({"pipeline": "synthetic"}))
    (outside / "journal.jsonl").write_text("{}\n" * 5)
    os.symlink(outside / "journal.jsonl", root / ".dataforge" / "journal.jsonl")
    with opened_paths() as seen:
        report = validate(root)
    assert [p.kind for p in report.problems] == ["incomplete"]
    assert "(0 units committed" in report.problems[0].message
    assert not _touches(seen, outside)


# -- generation refuses a linked .dataforge (and links in the directory) ------------------------

SCHEMA = Schema({"obs": ArraySpec("float32", (None, 5))})


def _produce(unit: WorkUnit, rng: np.random.Generator):
    yield Episode(f"{unit.id}/0", {"obs": rng.normal(size=(3, 5)).astype(np.float32)})


def _job(extra_files=None) -> Job:
    return Job(
        pipeline="test",
        name="t",
        config={"n": 3},
        seed=5,
        format="zarr",
        schema=SCHEMA,
        units=tuple(WorkUnit(f"u{i}", {}) for i in range(3)),
        produce=_produce,
        extra_files=extra_files,
    )


def _linked_control(tmp_path: Path) -> tuple[Path, Path]:
    root, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, root / ".dataforge")
    return root, elsewhere


def test_dirlock_refuses_a_linked_dataforge_or_lock(tmp_path):
    root, elsewhere = _linked_control(tmp_path)
    with pytest.raises(UsageError, match=r"\.dataforge: it is a symbolic link"):
        DirLock(root).acquire()
    assert list(elsewhere.iterdir()) == []
    # the lock file itself a link to a file outside: never opened for writing
    root2 = tmp_path / "out2"
    (root2 / ".dataforge").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, root2 / ".dataforge" / "lock")
    with pytest.raises(UsageError, match=r"lock .* symbolic link"):
        DirLock(root2).acquire()
    assert victim.read_text() == "precious"


def test_builder_writer_and_run_job_refuse_a_linked_dataforge(tmp_path):
    root, elsewhere = _linked_control(tmp_path)
    header = DatasetHeader("t", "test", "zarr", 1, {}, SCHEMA)
    with pytest.raises(UsageError, match=r"\.dataforge: it is a symbolic link"):
        DatasetBuilder.open(root, header)
    with pytest.raises(UsageError, match=r"\.dataforge: it is a symbolic link"):
        DatasetWriter(root, schema=SCHEMA, name="t").open()
    with pytest.raises(UsageError, match=r"\.dataforge: it is a symbolic link") as exc:
        run_job(_job(), root, ExecutionOptions())
    assert "\n" not in str(exc.value)
    assert list(elsewhere.iterdir()) == []
    assert [p.name for p in root.iterdir()] == [".dataforge"]


def test_resume_refuses_a_dataset_holding_links_and_deletes_nothing_through_them(tmp_path):
    """shards/ -> a folder of the user's: a resume used to delete every entry there that is not
    a committed shard (and --overwrite to remove it)."""
    root = tmp_path / "out"
    run_job(_job(), root, ExecutionOptions())
    photos = tmp_path / "photos"
    shutil.copytree(root / "shards", photos)
    (photos / "precious.jpg").write_bytes(b"\xff\xd8 a photo")
    shutil.rmtree(root / "shards")
    os.symlink(photos, root / "shards")
    before = tree_digest(photos)
    for overwrite in (False, True):
        with pytest.raises(UsageError, match=r"shards is a symbolic link"):
            run_job(_job(), root, ExecutionOptions(overwrite=overwrite))
    with pytest.raises(UsageError, match=r"shards is a symbolic link"):
        run_job(_job(), root, ExecutionOptions(dry_run=True))
    assert tree_digest(photos) == before


def test_write_probe_is_never_written_through_a_link(tmp_path):
    root = tmp_path / "out"
    root.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, root / ".dataforge-write-test")
    with pytest.raises(UsageError, match="write-test is not a regular file"):
        run_job(_job(), root, ExecutionOptions())
    assert victim.read_text() == "precious"


def test_out_that_is_itself_a_link_to_a_folder_is_allowed(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "out")
    report = run_job(_job(), tmp_path / "out", ExecutionOptions())
    assert report.committed_now == 3
    assert (real / "manifest.json").is_file()
    assert validate(tmp_path / "out").ok


def test_extra_file_paths_follow_the_rule(tmp_path):
    for rel in ("../x.txt", "a\\b.txt", "a//b.txt", ".hidden", "shards/x"):
        root = tmp_path / f"out{abs(hash(rel))}"
        with pytest.raises(SchemaError, match="may not write the extra file"):
            run_job(_job(lambda ds, rel=rel: {rel: b"x"}), root, ExecutionOptions())
    assert not (tmp_path / "x.txt").exists()


# -- Ctrl-C or SIGTERM while finalizing ---------------------------------------------------------

_CALLS = {"n": 0}


def _interrupting_writer(how: str, path: Path) -> None:
    _CALLS["n"] += 1
    if _CALLS["n"] == 1:
        if how == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
        raise KeyboardInterrupt
    path.write_bytes(b"notes\n")


def _extras(how: str, ds) -> dict:
    return {"notes.txt": functools.partial(_interrupting_writer, how)}


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_interrupt_in_an_extra_file_writer_is_interrupted_and_a_rerun_finishes(tmp_path, how):
    _CALLS["n"] = 0
    root = tmp_path / "out"
    job = _job(functools.partial(_extras, how))
    with pytest.raises(Interrupted, match=r"3 of 3 units are committed.*rerun the same") as exc:
        run_job(job, root, ExecutionOptions())
    assert exc.value.exit_code == 130 and "\n" not in str(exc.value)
    assert not (root / "manifest.json").exists()
    assert not (root / ".dataforge" / "lock").exists()  # the lock was released
    report = run_job(job, root, ExecutionOptions())
    assert report.already_committed == 3 and report.committed_now == 0
    assert report.manifest is not None and "notes.txt" in report.manifest.files
    assert (root / "notes.txt").read_bytes() == b"notes\n"
    assert validate(root).ok
    assert not (root / ".dataforge").exists()


def test_interrupt_just_before_the_manifest_is_written(tmp_path, monkeypatch):
    import dataforge.store.builder as builder_mod

    root = tmp_path / "out"
    real = builder_mod.write_manifest

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(builder_mod, "write_manifest", interrupted)
    with pytest.raises(Interrupted, match="interrupted while finishing"):
        run_job(_job(), root, ExecutionOptions())
    assert (root / "croissant.json").exists() and not (root / "manifest.json").exists()
    monkeypatch.setattr(builder_mod, "write_manifest", real)
    report = run_job(_job(), root, ExecutionOptions())
    assert report.manifest is not None and report.committed_now == 0
    assert validate(root).ok


@pytest.mark.parametrize("kind", ["external-link", "external-storage", "soft-link"])
def test_hdf5_shard_naming_data_outside_is_refused(small, tmp_path, kind):
    """An HDF5 shard may name data in other files (links, external raw storage): the reader
    refuses it before reading anything, and validate reports the shard."""
    import h5py

    root = _copy(small["hdf5"], tmp_path / "ds")
    shard = root / read_manifest(root).shards[0].path
    secret = tmp_path / "secret.bin"
    secret.write_bytes(b"\x01" * 64)
    with h5py.File(shard, "r+") as f:
        if kind == "external-link":
            f["stolen"] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/x")
        elif kind == "external-storage":
            f.create_dataset("stolen", shape=(8,), dtype="u1", external=[(str(secret), 0, 8)])
        else:
            f["stolen"] = h5py.SoftLink("/rgb")
    from dataforge.store.hashing import file_entry

    _forge(
        root,
        files={**read_manifest(root).files, read_manifest(root).shards[0].path: file_entry(shard)},
    )
    report = validate(root)
    shard_problems = [p for p in report.problems if p.kind == "shard"]
    assert shard_problems and "stolen" in shard_problems[0].message, report.problems
    with open_dataset(root) as ds, pytest.raises(DatasetError, match="stolen"):
        ds[ds.episode_ids[0]]["rgb"].read()
