"""Tours of the real val splits (../shared/data): Table 1, invariants, optimality, determinism."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from dfhelpers import tree_digest
from ir2rhelpers import SHARED_DATA, build, needs_shared

from dataforge.inputs import Inputs
from dataforge.pipelines.ir2r.config import IR2RConfig
from dataforge.pipelines.ir2r.episodes import by_scene, load_r2r, r2r_file
from dataforge.pipelines.ir2r.generate import plan_discrete, scene_oracle
from dataforge.pipelines.ir2r.table import table1, table1_row
from dataforge.pipelines.ir2r.tours import transition_costs
from dataforge.store import open_dataset
from dataforge.tsp import mutually_reachable_groups, path_cost, solve_open_path, to_integer_costs
from dataforge.validation import validate

pytestmark = [needs_shared, pytest.mark.slow]

# The paper's Table 1, discrete rows, as printed.
PAPER_ROWS = {
    "val_seen": ["val_seen", "53", "1,011", "159", "3.0", "6.4", "2", "11", "2.1"],
    "val_unseen": ["val_unseen", "11", "2,349", "33", "3.0", "71.2", "6", "100", "34.0"],
}


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
def test_table1_row_reproduces_the_paper(shared_tours: Callable[[str], Path], split: str) -> None:
    with open_dataset(shared_tours(split)) as ds:
        t = table1(ds)
    assert table1_row(t) == PAPER_ROWS[split]
    assert t["duplicates_per_set"] == t["tours_per_scene"] == t["tours"] / t["scenes"]


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
def test_every_path_once_per_tour_n_times_per_set(
    shared_tours: Callable[[str], Path], split: str
) -> None:
    out = shared_tours(split)
    paths = load_r2r(r2r_file(SHARED_DATA, split))
    instr = {p.path_id: len(p.episodes) for p in paths}
    kept = {s: ps for s, ps in by_scene(paths).items() if len(ps) >= 2}
    doc = json.loads((out / f"tours_{split}.json").read_text())[split]
    assert sorted(doc) == sorted(kept)
    seen_ids: set[str] = set()
    for scene, tours in doc.items():
        n = min(instr[p.path_id] for p in kept[scene])  # every scan is one set here
        assert len(tours) == n
        for tour in tours:
            pids = [int(e.split("_")[0]) for e in tour]
            assert sorted(pids) == sorted(p.path_id for p in kept[scene])
            for e in tour:
                assert 0 <= int(e.split("_")[1]) < instr[int(e.split("_")[0])]
                assert e not in seen_ids
                seen_ids.add(e)
    report = validate(out)
    assert report.ok, report.problems[:3]


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
def test_elkai_matches_the_cp_sat_optimum_on_every_set(split: str) -> None:
    cfg = IR2RConfig(split=split)
    units, _ = plan_discrete(cfg, Inputs({"data-dir": SHARED_DATA}))
    from dataforge.pipelines.ir2r.episodes import NavPath

    checked = 0
    for unit in units:
        paths = [NavPath.from_dict(d) for d in unit.params["paths"]]
        cost_m = transition_costs(paths, scene_oracle(cfg, unit.params), cfg.ordering)
        for group in mutually_reachable_groups(cost_m < float("inf")):
            costs = to_integer_costs(cost_m[group][:, group])
            heuristic = solve_open_path(costs, "elkai", runs=cfg.runs)
            exact = solve_open_path(costs, "exact", time_limit_s=60)
            assert sorted(heuristic.order) == list(range(len(group)))
            assert path_cost(costs, heuristic.order) == heuristic.cost
            if exact.optimal:
                assert heuristic.cost == exact.cost, (unit.id, heuristic.cost, exact.cost)
            else:  # not proven in time: within 0.1% of the proven lower bound
                assert exact.bound is not None
                assert heuristic.cost <= 1.001 * exact.bound
            checked += 1
    assert checked == len(units)


def test_same_seed_writes_byte_identical_outputs(
    shared_tours: Callable[[str], Path], tmp_path: Path
) -> None:
    first = shared_tours("val_seen")
    again = tmp_path / "again"
    build(again, SHARED_DATA, "val_seen")
    a, b = tree_digest(first), tree_digest(again)
    # manifest.json records the command line and times; every data file must be identical.
    data = [k for k in a if k.startswith("shards/") or k.endswith((".csv", "tours_val_seen.json"))]
    assert data and all(a[k] == b[k] for k in data)
    assert a.keys() == b.keys()
    other = tmp_path / "other"
    build(other, SHARED_DATA, "val_seen", seed=1)
    t0 = json.loads((first / "tours_val_seen.json").read_text())["val_seen"]
    t1 = json.loads((other / "tours_val_seen.json").read_text())["val_seen"]
    strip = [[[e.split("_")[0] for e in t] for t in tours] for tours in t0.values()]
    assert strip == [[[e.split("_")[0] for e in t] for t in tours] for tours in t1.values()]
    assert t0 != t1  # another seed draws other instructions, never another order


def test_hdf5_gives_the_same_tours(shared_tours: Callable[[str], Path], tmp_path: Path) -> None:
    out = tmp_path / "h5"
    build(out, SHARED_DATA, "val_seen", fmt="hdf5")
    name = "tours_val_seen.json"
    assert (out / name).read_bytes() == (shared_tours("val_seen") / name).read_bytes()
    assert validate(out).ok


def test_a_broken_tour_is_caught_by_the_invariants(
    shared_tours: Callable[[str], Path], tmp_path: Path
) -> None:
    from dataforge.pipelines.ir2r.checks import check_dataset, check_episode

    src = shared_tours("val_seen")
    with open_dataset(src) as ds:
        assert list(check_dataset(ds)) == []
        ep = ds["17DRP5sb8fy/set-00/tour-1"]
        assert list(check_episode(ep)) == []

        class Tampered:
            """The same dataset, but one tour repeats another tour's instruction."""

            manifest = ds.manifest

            def episodes(self):
                for e in ds.episodes():
                    yield TamperedEpisode(e) if e.id == ep.id else e

        class TamperedEpisode:
            def __init__(self, e: object) -> None:
                self._e = e
                self.id = e.id
                self.metadata = e.metadata

            def __getitem__(self, name: str):
                if name != "instruction":
                    return self._e[name]
                arr = self._e["instruction"].read()
                other = ds["17DRP5sb8fy/set-00/tour-0"]["instruction"].read()
                arr[0] = other[0]

                class A:
                    def read(self):
                        return arr

                return A()

        problems = [(key, m) for _, key, m in check_dataset(Tampered())]
        assert any(k == "instructions" and "repeats an instruction" in m for k, m in problems)
        assert any(k == "episode-ids" and "is not '" in m for k, m in problems), problems


def test_rerun_resumes_and_refuses_changed_inputs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SHARED_DATA / "r2r", data / "r2r")
    (data / "mp3d_connectivity").symlink_to((SHARED_DATA / "mp3d_connectivity").resolve())
    out = tmp_path / "out"
    build(out, data, "val_seen")
    again = build(out, data, "val_seen")
    assert again.report.already_complete
    recs = json.loads((data / "r2r" / "R2R_val_seen.json").read_text())
    recs[0]["instructions"].append("one more")
    (data / "r2r" / "R2R_val_seen.json").write_text(json.dumps(recs))
    from dataforge.errors import ConfigMismatchError

    with pytest.raises(ConfigMismatchError):
        build(out, data, "val_seen")
