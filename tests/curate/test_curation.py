"""subset, merge and split on real synthetic datasets: the result validates, holds exactly the
episodes asked for with their parents' bytes, records its parents (path, manifest sha256) and
the operation, and `dataforge reproduce` makes it again from them; refusals are one line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import run_cli, synthetic_args

from dataforge.store import open_dataset
from dataforge.store.manifest import read_manifest


def one_line_error(r) -> str:
    assert r.returncode != 0 and r.stderr.startswith("error: "), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    return r.stderr


@pytest.fixture(scope="module")
def parents(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two runs of one config (seeds 0 and 1): 3 scenes x 2 episodes each."""
    root = tmp_path_factory.mktemp("parents")
    a, b = root / "a", root / "b"
    for out, seed in ((a, "0"), (b, "1")):
        r = run_cli(*synthetic_args(out, "--seed", seed))
        assert r.returncode == 0, r.stderr
    return a, b


def ids(root: Path) -> list[str]:
    return list(read_manifest(root).episodes)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def same_episode(child: Path, new_id: str, parent: Path, old_id: str) -> None:
    with open_dataset(child) as c, open_dataset(parent) as p:
        got, want = c[new_id].read(), p[old_id].read()
        assert set(got) == set(want)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name])
        assert c[new_id].metadata == p[old_id].metadata


def test_subset_keeps_what_where_says_and_reproduces(parents, tmp_path: Path) -> None:
    a, _ = parents
    out = tmp_path / "s"
    where = 'unit != "scene-0001" and id != "scene-0000/ep-001"'
    r = run_cli("subset", str(a), "--where", where, "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    # by hand: scenes 0 and 2 (2 episodes each) less scene-0000/ep-001
    assert ids(out) == ["scene-0000/ep-000", "scene-0002/ep-000", "scene-0002/ep-001"]
    for eid in ids(out):
        same_episode(out, eid, a, eid)
    m = read_manifest(out)
    assert m.pipeline == "synthetic" and dict(m.config) == dict(read_manifest(a).config)
    assert m.curation["op"] == "subset" and m.curation["where"] == where
    assert m.inputs["files"] == {"parent1:manifest.json": sha256(a / "manifest.json")}
    assert Path(m.inputs["locations"]["parent1"]) == a.resolve()
    assert [s.unit for s in m.shards] == ["scene-0000", "scene-0002"]
    v = run_cli("validate", str(out))
    assert v.returncode == 0 and "5 synthetic invariants hold" in v.stdout, v.stdout + v.stderr
    rep = run_cli("reproduce", str(out), "--quiet")
    assert rep.returncode == 0 and "identical" in rep.stdout, rep.stdout + rep.stderr
    # a rerun into the same folder finds it done; another expression is another dataset
    again = run_cli("subset", str(a), "--where", where, "--out", str(out), "--quiet")
    assert again.returncode == 0, again.stderr
    other = run_cli("subset", str(a), "--where", "length > 0", "--out", str(out), "--quiet")
    assert "--overwrite" in one_line_error(other)


def test_subset_refusals_are_one_line(parents, tmp_path: Path) -> None:
    a, _ = parents
    none = run_cli(
        "subset", str(a), "--where", "length > 100", "--out", str(tmp_path / "n"), "--quiet"
    )
    assert "keeps none of the 6 episodes" in one_line_error(none)
    assert not (tmp_path / "n").exists()
    bad = run_cli("subset", str(a), "--where", "open('x')", "--out", str(tmp_path / "x"))
    assert "call is not in the grammar" in one_line_error(bad)
    inside = run_cli("subset", str(a), "--where", "True", "--out", str(a / "sub"), "--quiet")
    assert "--out" in one_line_error(inside)


def test_reproduce_refuses_a_changed_parent(tmp_path: Path) -> None:
    copy = tmp_path / "a"
    r = run_cli(*synthetic_args(copy, "--seed", "0"))
    assert r.returncode == 0
    out = tmp_path / "s"
    assert (
        run_cli("subset", str(copy), "--where", "True", "--out", str(out), "--quiet").returncode
        == 0
    )
    data = json.loads((copy / "manifest.json").read_text())
    data["name"] = "renamed"  # any change to the parent's manifest bytes
    (copy / "manifest.json").write_text(json.dumps(data))
    rep = run_cli("reproduce", str(out), "--quiet")
    assert "parent1:manifest.json" in one_line_error(rep)


def test_merge_refuses_shared_ids_unless_renamed(parents, tmp_path: Path) -> None:
    a, b = parents
    r = run_cli("merge", str(a), str(b), "--out", str(tmp_path / "m0"), "--quiet")
    assert "--rename" in one_line_error(r) and "scene-0000/ep-000" in r.stderr
    out = tmp_path / "m"
    r = run_cli("merge", str(a), str(b), "--rename", "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    got = ids(out)
    assert got[:6] == ids(a) and got[6:] == [f"{e}-p2" for e in ids(b)]
    same_episode(out, "scene-0001/ep-001-p2", b, "scene-0001/ep-001")
    m = read_manifest(out)
    assert [s.unit for s in m.shards][3:] == ["scene-0000-p2", "scene-0001-p2", "scene-0002-p2"]
    assert [p["seed"] for p in m.curation["parents"]] == [0, 1] and m.seed == 0
    assert set(m.inputs["files"]) == {"parent1:manifest.json", "parent2:manifest.json"}
    assert run_cli("validate", str(out)).returncode == 0
    rep = run_cli("reproduce", str(out), "--quiet")
    assert rep.returncode == 0, rep.stdout + rep.stderr


def test_merge_refuses_another_config_naming_it(parents, tmp_path: Path) -> None:
    a, _ = parents
    other = tmp_path / "c"
    r = run_cli(*synthetic_args(other, "--frames", "5"))
    assert r.returncode == 0
    r = run_cli("merge", str(a), str(other), "--out", str(tmp_path / "m"), "--quiet")
    err = one_line_error(r)
    assert "config differs" in err and "--frames 4 -> 5" in err


def test_split_keeps_each_unit_in_one_part_and_follows_the_seed(parents, tmp_path: Path) -> None:
    a, b = parents
    merged = tmp_path / "m"
    assert (
        run_cli("merge", str(a), str(b), "--rename", "--out", str(merged), "--quiet").returncode
        == 0
    )
    out = tmp_path / "sp"
    args = ("split", str(merged), "--by", "unit", "--fractions", "train=0.5,val=0.5")
    r = run_cli(*args, "--seed", "3", "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    train, val = ids(out / "train"), ids(out / "val")
    assert sorted(train + val) == sorted(ids(merged))  # every episode, once
    units = {
        p: {read_manifest(out / p).episodes[e].unit for e in ids(out / p)} for p in ("train", "val")
    }
    assert not units["train"] & units["val"]
    assert len(train) == len(val) == 6  # six units of two episodes: three each
    m = read_manifest(out / "val")
    assert m.curation["op"] == "split" and m.curation["part"] == "val" and m.curation["seed"] == 3
    assert run_cli("validate", str(out / "train")).returncode == 0
    assert run_cli("reproduce", str(out / "val"), "--quiet").returncode == 0
    # the same seed, the same parts; the groups are shuffled by it
    same = tmp_path / "same"
    assert run_cli(*args, "--seed", "3", "--out", str(same), "--quiet").returncode == 0
    assert ids(same / "val") == val
    parts = set()
    for seed in range(6):
        o = tmp_path / f"s{seed}"
        assert run_cli(*args, "--seed", str(seed), "--out", str(o), "--quiet").returncode == 0
        parts.add(tuple(ids(o / "val")))
    assert len(parts) > 1


def test_split_refusals_are_one_line(parents, tmp_path: Path) -> None:
    a, _ = parents
    base = ("split", str(a), "--out", str(tmp_path / "x"), "--quiet")
    r = run_cli(*base, "--by", "house", "--fractions", "train=0.5,val=0.5")
    assert "has no such field" in one_line_error(r)
    r = run_cli(*base, "--by", "unit", "--fractions", "train=0.9,val=0.2")
    assert "summing to 1" in one_line_error(r)
    r = run_cli(*base, "--by", "unit", "--fractions", "a=0.25,b=0.25,c=0.25,d=0.25")
    assert "fewer than the 4 parts" in one_line_error(r)
    r = run_cli(*base, "--by", "unit", "--fractions", "train=0.95,val=0.05")
    assert "part 'val' gets no unit" in one_line_error(r)
