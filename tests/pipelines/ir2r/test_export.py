"""``dataforge ir2r export``: split datasets merged into the authors' one tours file, read back
by the authors' loader logic.

``ivln_tours`` and ``ivln_ce_tours`` are written from what the authors' loaders expect (no code of
theirs): IVLN ``finetune_src/r2r/env.py`` (``R2RBatch.__init__``) indexes ``tours_iVLN.json`` by
split name, flattens the scans' tour lists, and looks every id up among the split's instructions,
named ``"<path_id>_<j>"`` (``data_utils.construct_instrs``); between episodes of a tour its
environment walks the shortest path from the agent's viewpoint to the next path's start in the
same scan. IVLN-CE ``habitat_extensions/task.py`` (``IterativeVLNCEDataset``) indexes
``data/tours.json`` by ``DATASET.SPLIT``, casts episode ids to strings and maps each to one tour;
its episode iterator finds a tour's order under the scene named by the episode's ``scene_id``
file stem.
"""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import run_cli
from ir2rhelpers import WalledOracle, build, r2r_record, write_r2r, write_vlnce

from dataforge.errors import DatasetError, UsageError
from dataforge.nav.connectivity import connectivity_path, load_connectivity
from dataforge.nav.oracle import GraphOracle
from dataforge.pipelines.ir2r import generate
from dataforge.pipelines.ir2r.export import export_tours


def ivln_tours(tours_file: Path, name: str, r2r_file: Path, data_dir: Path) -> list[list[str]]:
    """The tours IVLN's R2RBatch would run for split ``name``; fails where it would fail."""
    doc = json.loads(tours_file.read_text())
    scans = doc[name]  # R2RBatch: tour_data = json.load(...)[name]
    tours = [t for scan_tours in scans.values() for t in scan_tours]  # chain(*values())
    data = {}
    for item in json.loads(r2r_file.read_text()):
        for j in range(len(item["instructions"])):
            data["%s_%d" % (item["path_id"], j)] = item  # noqa: UP031 (the authors' id format)
    for scan, scan_tours in scans.items():
        graph = GraphOracle(
            load_connectivity(connectivity_path(data_dir / "mp3d_connectivity", scan))
        )
        for tour in scan_tours:
            items = [data[i] for i in tour]  # KeyError: an id IVLN cannot find
            assert all(it["scan"] == scan for it in items), "a tour leaves its scan"
            for prev, nxt in itertools.pairwise(items):
                # The oracle walks from the previous goal to the next start.
                d = graph.distances([prev["path"][-1]], [nxt["path"][0]])[0, 0]
                assert np.isfinite(d), f"no path from {prev['path_id']} to {nxt['path_id']}"
    return tours


def ivln_ce_tours(tours_file: Path, split: str, episodes_file: Path) -> list[list[str]]:
    """The tours IVLN-CE's IterativeVLNCEDataset would build for ``split``."""
    scenes = {
        k: [[str(e) for e in t] for t in v]
        for k, v in json.loads(tours_file.read_text())[split].items()
    }
    episodes = json.loads(gzip.decompress(episodes_file.read_bytes()))["episodes"]
    scene_of = {str(e["episode_id"]): Path(e["scene_id"]).stem for e in episodes}
    eid_to_tid: dict[str, int] = {}
    flat = [t for scene_tours in scenes.values() for t in scene_tours]
    for i, tour in enumerate(flat):
        for eid in tour:
            assert eid not in eid_to_tid, f"episode {eid} is in two tours"
            eid_to_tid[eid] = i
    for scene, scene_tours in scenes.items():
        for tour in scene_tours:
            assert all(scene_of[e] == scene for e in tour)  # KeyError: unknown episode
    return flat


@pytest.fixture
def two_splits(small_data: Path, tmp_path: Path) -> tuple[Path, Path]:
    """val_seen (small_data's) and a val_unseen of lineA with two corridor paths."""
    write_r2r(
        small_data,
        "val_unseen",
        [r2r_record(40, "lineA", ["v0", "v1"]), r2r_record(41, "lineA", ["v5", "v4"], n_instr=2)],
    )
    seen, unseen = tmp_path / "seen", tmp_path / "unseen"
    build(seen, small_data, "val_seen")
    build(unseen, small_data, "val_unseen")
    return seen, unseen


def test_merged_file_is_what_ivln_loads(
    two_splits: tuple[Path, Path], small_data: Path, tmp_path: Path
) -> None:
    seen, unseen = two_splits
    out = tmp_path / "tours_iVLN.json"
    result = export_tours([unseen, seen], out)
    assert result.splits == ("val_seen", "val_unseen") and not result.continuous
    assert result.tours == {"val_seen": 5, "val_unseen": 2}
    doc = json.loads(out.read_text())
    assert list(doc) == ["val_seen", "val_unseen"]
    # Each split's entry is exactly its dataset's tours_<split>.json entry.
    for directory, split in ((seen, "val_seen"), (unseen, "val_unseen")):
        assert doc[split] == json.loads((directory / f"tours_{split}.json").read_text())[split]
        r2r = small_data / "r2r" / f"R2R_{split}.json"
        tours = ivln_tours(out, split, r2r, small_data)
        assert sum(len(t) for t in tours) == sum(len(t) for t in doc[split]["lineA"])
    assert ivln_tours(out, "val_unseen", small_data / "r2r" / "R2R_val_unseen.json", small_data)
    with pytest.raises(KeyError):  # IVLN's training asks for 'train', absent here
        ivln_tours(out, "train", small_data / "r2r" / "R2R_val_seen.json", small_data)
    before = out.read_bytes()
    export_tours([seen, unseen], out)  # order of the arguments does not matter
    assert out.read_bytes() == before


def test_duplicate_split_names_both_folders(two_splits: tuple[Path, Path], tmp_path: Path) -> None:
    seen, _ = two_splits
    copy = tmp_path / "seen-again"
    shutil.copytree(seen, copy)
    with pytest.raises(UsageError, match=rf"{seen} and {copy} both hold split 'val_seen'"):
        export_tours([seen, copy], tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()


def test_a_folder_that_is_not_a_tours_dataset(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="is not a dataforge dataset"):
        export_tours([tmp_path / "empty"], tmp_path / "t.json")


def ce_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split: str, first_id: int
) -> tuple[Path, Path]:
    monkeypatch.setattr(generate, "scene_oracle", lambda cfg, params: WalledOracle())
    monkeypatch.setattr(generate, "require_navmesh_backend", lambda name: None)
    episodes = write_vlnce(tmp_path / f"{split}.json.gz", first_id=first_id)
    out = tmp_path / f"ce-{split}"
    where = {"episodes": episodes, "scenes-dir": tmp_path / "scenes"}
    build(out, None, split, fmt="hdf5", continuous=True, inputs=where)
    return out, episodes


def test_ce_merged_file_is_what_ivln_ce_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_splits: tuple[Path, Path]
) -> None:
    seen, seen_eps = ce_dataset(tmp_path, monkeypatch, "val_seen", 100)
    unseen, unseen_eps = ce_dataset(tmp_path, monkeypatch, "val_unseen", 500)
    out = tmp_path / "tours.json"
    result = export_tours([seen, unseen], out)
    assert result.continuous and result.splits == ("val_seen", "val_unseen")
    for split, eps in (("val_seen", seen_eps), ("val_unseen", unseen_eps)):
        tours = ivln_ce_tours(out, split, eps)
        assert len(tours) == 2 and all(len(t) == 3 for t in tours)
    assert json.loads(out.read_text())["val_unseen"]["sceneA"][0][0] >= 500  # ids stay ints
    with pytest.raises(UsageError, match=r"continuous \(IR2R-CE\) tours and .* discrete"):
        export_tours([seen, two_splits[0]], tmp_path / "mixed.json")


@pytest.mark.slow
def test_export_command(two_splits: tuple[Path, Path], tmp_path: Path) -> None:
    seen, unseen = two_splits
    out = tmp_path / "tours_iVLN.json"
    r = run_cli("ir2r", "export", str(seen), str(unseen), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "splits val_seen (5 tours), val_unseen (2 tours)" in r.stdout
    assert "not in the file: train, test; the authors' training reads 'train'" in r.stdout
    assert list(json.loads(out.read_text())) == ["val_seen", "val_unseen"]
    r = run_cli("ir2r", "export", str(seen), str(seen), "--out", str(tmp_path / "x.json"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "both hold split" in r.stderr
    r = run_cli("ir2r", "export", "--help")
    assert "tours_iVLN.json" in r.stdout and "data/tours.json" in r.stdout
