"""validate: a shard whose array holds rows that no episode's range covers (rows before the first
episode, between two episodes or after the last) is reported, naming the shard, the array and the
rows, even when the shard's index, the manifest and every sha256 agree (re-sealed)."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import run_cli
from sealing import reseal

from dataforge.store.atomic import remove_path
from dataforge.store.croissant import episode_index_csv
from dataforge.store.episode import EpisodeLocation
from dataforge.store.formats import open_shard_writer
from dataforge.store.layout import EPISODE_INDEX, FORMAT_VERSION
from dataforge.store.manifest import read_manifest, write_manifest
from dataforge.store.reader import Dataset
from dataforge.store.validation import uncovered_rows
from dataforge.validation import validate

Arrays = dict[str, np.ndarray]


def _shard_episodes(root: Path, shard: str) -> list[tuple[str, Arrays, dict]]:
    """The episodes of ``shard`` in their order there: id, arrays and metadata."""
    manifest = read_manifest(root)
    ids = [e for e, loc in manifest.episodes.items() if loc.shard == shard]
    with Dataset(root, manifest) as ds:
        return [(e, ds[e].read(), dict(ds[e].metadata)) for e in ids]


def insert_uncovered(root: Path, shard: str, array: str, at: int, count: int) -> tuple[int, int]:
    """Rewrite ``shard`` with ``count`` extra rows of ``array`` (copies of its first rows) before
    the shard's episode number ``at`` (``at`` = the number of episodes: after the last), move
    the later episodes' ranges past them in the shard's index and the manifest, and re-seal.
    Returns the rows ``[start, stop)`` that no episode covers then."""
    manifest = read_manifest(root)
    episodes = _shard_episodes(root, shard)
    assert 0 <= at <= len(episodes), at
    unit = manifest.episodes[episodes[0][0]].unit
    filler = episodes[0][1][array][:count]
    assert len(filler) == count, "the first episode has too few rows to copy"
    with tempfile.TemporaryDirectory(dir=root.parent) as tmp:
        path = Path(tmp) / Path(shard).name
        writer = open_shard_writer(manifest.format, path, manifest.schema)
        locations: list[EpisodeLocation] = []
        gap = (0, 0)
        for k, (eid, arrays, _) in enumerate(episodes):
            if k == at:
                gap = (writer.rows[array], writer.rows[array] + count)
                writer.append(array, filler)
            starts = dict(writer.rows)
            for name, value in arrays.items():
                writer.append(name, value)
            rows = {name: (starts[name], writer.rows[name]) for name in arrays}
            locations.append(EpisodeLocation(eid, unit, shard, rows))
        if at == len(episodes):
            gap = (writer.rows[array], writer.rows[array] + count)
            writer.append(array, filler)
        index = [
            {"id": loc.id, "rows": loc.to_dict()["rows"], "metadata": meta}
            for loc, (_, _, meta) in zip(locations, episodes, strict=True)
        ]
        writer.close({"format_version": FORMAT_VERSION, "unit": unit, "episodes": index})
        remove_path(root / shard)
        shutil.move(str(path), str(root / shard))
    located = {**manifest.episodes, **{loc.id: loc for loc in locations}}
    write_manifest(root, dataclasses.replace(manifest, episodes=located))
    (root / EPISODE_INDEX).write_bytes(episode_index_csv(manifest.schema, list(located.values())))
    reseal(root)
    return gap


def test_uncovered_rows_lists_every_gap() -> None:
    assert uncovered_rows(10, [(0, 4), (4, 10)]) == []
    assert uncovered_rows(10, [(4, 10), (0, 4), (2, 3), (5, 5)]) == []  # any order, nested, empty
    assert uncovered_rows(10, [(2, 4), (6, 8)]) == [(0, 2), (4, 6), (8, 10)]
    assert uncovered_rows(10, [(0, 6), (3, 7)]) == [(7, 10)]  # overlapping ranges
    assert uncovered_rows(5, [(0, 3), (4, 9)]) == [(3, 4)]  # a range past the end
    assert uncovered_rows(3, []) == [(0, 3)]
    assert uncovered_rows(0, []) == []


# (array, the episode the rows go before, how many, the rows then uncovered): before the first,
# between the two and after the last episode of a synthetic shard (2 episodes of 4 frames; the
# 3x3 intrinsics take 3 rows per episode)
CASES = [("intrinsics", 0, 3, (0, 3)), ("depth", 1, 2, (4, 6)), ("rgb", 2, 1, (8, 9))]


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_rows_no_episode_covers_are_named(synthetic_dataset, tmp_path, fmt) -> None:
    src = synthetic_dataset(fmt)
    clean = validate(src)
    assert clean.ok, [p.line() for p in clean.problems]
    shard = read_manifest(src).shards[1].path
    assert len(_shard_episodes(src, shard)) == 2  # so positions 0, 1, 2 are before/between/after
    for array, at, count, (a, b) in CASES:
        root = Path(shutil.copytree(src, tmp_path / f"{array}-{at}"))
        assert insert_uncovered(root, shard, array, at, count) == (a, b)
        report = validate(root, deep=True)
        lines = [p.line() for p in report.problems]
        # re-sealed and re-indexed: no file, index, episode or invariant check objects
        assert [p.kind for p in report.problems] == ["uncovered"], lines
        problem = report.problems[0]
        assert problem.path == shard and problem.episode is None
        assert f"array {array!r}" in problem.message, lines
        assert f"rows [{a}, {b})" in problem.message and f"{count} of its" in problem.message
        assert "\n" not in problem.line() and problem.line().startswith(f"[uncovered] {shard}: ")


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_rewriting_a_shard_without_extra_rows_still_validates(synthetic_dataset, tmp_path, fmt):
    """The control for the test above: the same rewrite with no rows inserted leaves a dataset
    that validates (deep, invariants included), so the rows alone make it fail."""
    root = Path(shutil.copytree(synthetic_dataset(fmt), tmp_path / "ds"))
    shard = read_manifest(root).shards[1].path
    before = {e: a for e, a, _ in _shard_episodes(root, shard)}
    assert len(before) == 2
    assert insert_uncovered(root, shard, "depth", 1, 0) == (4, 4)  # after 4 frames
    report = validate(root, deep=True)
    assert report.ok, [p.line() for p in report.problems]
    assert report.checked["episodes"] == 6 and report.checked["invariants"]
    after = {e: a for e, a, _ in _shard_episodes(root, shard)}
    assert before.keys() == after.keys()
    for eid, arrays in before.items():
        assert all(np.array_equal(arrays[k], after[eid][k]) for k in arrays), eid


@pytest.mark.slow
def test_cli_prints_one_line_naming_shard_array_and_rows(synthetic_dataset, tmp_path) -> None:
    root = Path(shutil.copytree(synthetic_dataset("zarr"), tmp_path / "ds"))
    shard = read_manifest(root).shards[0].path
    assert insert_uncovered(root, shard, "pose", 2, 2) == (8, 10)  # after 2 episodes of 4
    r = run_cli("validate", str(root), "--quiet")
    assert r.returncode == 1, r.stdout + r.stderr
    found = [line for line in r.stdout.splitlines() if line.startswith("[")]
    assert found == [
        f"[uncovered] {shard}: array 'pose': 2 of its 10 rows belong to no episode: rows [8, 10)"
    ]
