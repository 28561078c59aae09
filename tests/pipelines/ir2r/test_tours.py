"""Tour construction on small hand-made scans: sets, order, repetitions, dropped paths."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from ir2rhelpers import build, chain, line_positions, r2r_record, write_connectivity, write_r2r

from dataforge.errors import InputNotFoundError, MalformedInputError
from dataforge.nav.graph import NavGraph
from dataforge.nav.oracle import GraphOracle
from dataforge.pipelines.ir2r.episodes import NavPath
from dataforge.pipelines.ir2r.tours import build_scene_tours
from dataforge.store import open_dataset
from dataforge.validation import validate


def test_small_scan_sets_order_and_repetitions(small_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = build(out, small_data)
    assert result.job.notes == ("dropped 1 scenes with fewer than 2 paths (1 paths): solo",)
    doc = json.loads((out / "tours_val_seen.json").read_text())
    tours = doc["val_seen"]["lineA"]
    # Corridor set {10, 11, 12, 13}: n = min(3, 3, 4, 3) = 3; room set {20, 21}: n = 2.
    assert len(tours) == 5
    corridor, room = tours[:3], tours[3:]
    # On a line the cheapest open order walks the corridor once: 10 -> 12 -> 13 -> 11.
    for tour in corridor:
        assert [int(e.split("_")[0]) for e in tour] == [10, 12, 13, 11]
    for tour in room:
        assert sorted(int(e.split("_")[0]) for e in tour) == [20, 21]
    # Each path's instructions differ between repetitions and are valid indices.
    for pid, count in {10: 3, 11: 3, 12: 4, 13: 3}.items():
        used = [int(e.split("_")[1]) for t in corridor for e in t if e.startswith(f"{pid}_")]
        assert len(used) == 3 and len(set(used)) == 3 and max(used) < count
    with open_dataset(out) as ds:
        ep = ds["lineA/set-00/tour-0"]
        # end(10)=v2 -> start(12)=v3 is 1 m; v5 -> v6 1 m; v7 -> v8 1 m.
        np.testing.assert_allclose(ep["transition_m"].read(), [0, 1, 1, 1])
        np.testing.assert_allclose(ep["start_position"].read()[:, 0], [0, 3, 6, 8])
    report = validate(out)
    assert report.ok, report.problems


def one_way_graph() -> NavGraph:
    # a0 -> a1 -> a2 -> a3 one way; a3 -> a0 only through a long detour b0.
    pos = {**line_positions("a", 4), "b0": [1.5, 10.0, 1.5]}
    edges = [("a0", "a1"), ("a1", "a2"), ("a2", "a3"), ("a3", "b0"), ("b0", "a0")]
    return NavGraph.from_edges(pos, edges, directed=True)


def nav_path(pid: int, start: str, end: str, n: int = 3) -> NavPath:
    return NavPath(pid, "s", start, end, tuple(f"{pid}_{k}" for k in range(n)), (start, end))


def test_one_way_edges_make_an_asymmetric_order() -> None:
    paths = [nav_path(1, "a2", "a3"), nav_path(2, "a0", "a1"), nav_path(3, "a1", "a2")]
    res = build_scene_tours("s", paths, GraphOracle(one_way_graph()), np.random.default_rng(0))
    assert res.sets == ((2, 3, 1),)  # with the one-way flow, never against it
    assert res.tours[0].transition_m == (0.0, 0.0, 0.0)


def test_unreachable_paths_split_into_sets_and_small_sets_drop() -> None:
    pos = {**line_positions("a", 3), **line_positions("c", 3, x0=50)}
    graph = NavGraph.from_edges(pos, chain(["a0", "a1", "a2"]) + chain(["c0", "c1", "c2"]))
    paths = [nav_path(1, "a0", "a1"), nav_path(2, "a2", "a1"), nav_path(3, "c0", "c2")]
    res = build_scene_tours("s", paths, GraphOracle(graph), np.random.default_rng(0))
    assert [sorted(s) for s in res.sets] == [[1, 2]]
    assert res.dropped == (3,)
    kept = build_scene_tours("s", paths, GraphOracle(graph), np.random.default_rng(0), min_paths=1)
    assert sorted(sorted(s) for s in kept.sets) == [[1, 2], [3]]


def test_one_way_reachability_is_not_inter_navigable() -> None:
    # From path 2's end (x1) nothing leads back to path 1's start (x0): two separate sets.
    pos = line_positions("x", 3)
    graph = NavGraph.from_edges(pos, [("x0", "x1"), ("x1", "x2")], directed=True)
    paths = [nav_path(1, "x0", "x0"), nav_path(2, "x1", "x2")]
    res = build_scene_tours("s", paths, GraphOracle(graph), np.random.default_rng(0))
    assert res.sets == () and res.dropped == (1, 2)


def test_tip_to_tip_orders_by_starts() -> None:
    pos = line_positions("v", 10)
    graph = NavGraph.from_edges(pos, chain([f"v{i}" for i in range(10)]))
    # Ends are far from the next start, starts are close: tip-to-tip walks the starts in order.
    paths = [nav_path(1, "v0", "v9"), nav_path(2, "v2", "v0"), nav_path(3, "v1", "v8")]
    rng = np.random.default_rng(0)
    res = build_scene_tours("s", paths, GraphOracle(graph), rng, ordering="tip-to-tip")
    assert res.sets[0] in ((1, 3, 2), (2, 3, 1))
    assert res.tours[0].transition_m == (0.0, 1.0, 1.0)


def test_same_seed_same_instructions_other_seed_same_order() -> None:
    pos = line_positions("v", 10)
    graph = NavGraph.from_edges(pos, chain([f"v{i}" for i in range(10)]))
    paths = [nav_path(i, f"v{i}", f"v{i + 1}", n=5) for i in range(0, 8, 2)]
    oracle = GraphOracle(graph)
    a = build_scene_tours("s", paths, oracle, np.random.default_rng(1))
    b = build_scene_tours("s", paths, oracle, np.random.default_rng(1))
    c = build_scene_tours("s", paths, oracle, np.random.default_rng(2))
    assert [t.instruction for t in a.tours] == [t.instruction for t in b.tours]
    assert [t.instruction for t in a.tours] != [t.instruction for t in c.tours]
    assert a.sets == c.sets


def test_missing_and_malformed_inputs(small_data: Path, tmp_path: Path) -> None:
    with pytest.raises(InputNotFoundError, match=r"R2R_train.json: Room-to-Room episodes"):
        build(tmp_path / "o1", small_data, split="train")
    write_r2r(small_data, "val_unseen", [r2r_record(1, "lineA", ["v0", "v1"]), {"path_id": 2}])
    with pytest.raises(MalformedInputError, match=r"record 1: missing 'scan'"):
        build(tmp_path / "o2", small_data, split="val_unseen")
    write_r2r(
        small_data, "test", [r2r_record(1, "nowhere", ["v0"]), r2r_record(2, "nowhere", ["v1"])]
    )
    with pytest.raises(InputNotFoundError, match=r"nowhere_connectivity.json"):
        build(tmp_path / "o3", small_data, split="test")
    recs = [r2r_record(1, "lineA", ["v0", "zz"]), r2r_record(2, "lineA", ["v1", "v2"])]
    write_r2r(small_data, "train", recs)
    with pytest.raises(MalformedInputError, match=r"viewpoint zz"):
        build(tmp_path / "o4", small_data, split="train")
    bad = small_data / "mp3d_connectivity" / "lineA_connectivity.json"
    bad.write_text("[{]")
    with pytest.raises(MalformedInputError, match=r"lineA_connectivity.json: Matterport3D"):
        build(tmp_path / "o5", small_data)
    write_connectivity(small_data, "lineA", {"v0": [0, 0, 0]}, [])
    records = json.loads(bad.read_text())
    records[0]["pose"] = [1, 2]
    bad.write_text(json.dumps(records))
    with pytest.raises(MalformedInputError, match=r"viewpoint record 0: pose is not 16 numbers"):
        build(tmp_path / "o6", small_data)
    for k in range(1, 7):
        assert not (tmp_path / f"o{k}").exists() or not any((tmp_path / f"o{k}").iterdir())


def test_lkh_without_a_binary_fails_before_any_work(
    small_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataforge.errors import MissingDependencyError

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(MissingDependencyError, match="LKH-3 binary on PATH"):
        build(tmp_path / "out", small_data, solver="lkh")
    assert not (tmp_path / "out").exists()


def test_exact_solver_gives_the_same_corridor_tour(small_data: Path, tmp_path: Path) -> None:
    build(tmp_path / "a", small_data)
    build(tmp_path / "b", small_data, solver="exact")
    a = json.loads((tmp_path / "a" / "tours_val_seen.json").read_text())
    b = json.loads((tmp_path / "b" / "tours_val_seen.json").read_text())
    assert a == b


def test_test_split_is_tip_to_tip_over_starts_only(small_data: Path, tmp_path: Path) -> None:
    # R2R test records carry only a start viewpoint: tours chain starts (the test server's rule).
    recs = [r2r_record(i, "lineA", [f"v{s}"]) for i, s in enumerate([7, 0, 3, 9])]
    write_r2r(small_data, "test", recs)
    out = tmp_path / "test"
    result = build(out, small_data, split="test")
    assert result.config.ordering == "tip-to-tip"
    with open_dataset(out) as ds:
        ep = ds["lineA/set-00/tour-0"]
        starts = ep["start_position"].read()[:, 0].tolist()
        assert starts in ([0, 3, 7, 9], [9, 7, 3, 0])
        expected = [0, 3, 4, 2] if starts[0] == 0 else [0, 2, 4, 3]
        np.testing.assert_allclose(ep["transition_m"].read(), expected)
    assert validate(out).ok


def test_an_episode_in_two_tours_is_refused_naming_both() -> None:
    from dataforge.pipelines.ir2r.tours import check_episodes_once

    check_episodes_once({"s1": [["1_0", "2_0"], ["1_1"]], "s2": [[3]]}, "t.json")
    with pytest.raises(MalformedInputError) as err:
        check_episodes_once({"s1": [["1_0", "2_0"]], "s2": [["5_0"], ["2_0"]]}, "t.json")
    assert str(err.value) == "t.json: episode 2_0 is in s1 tour 0 and s2 tour 1"
    with pytest.raises(MalformedInputError, match=r"^t\.json: episode 7 is twice in s tour 0$"):
        check_episodes_once({"s": [[7, "8", 7]]}, "t.json")
    # ids are compared as scoring compares them, as strings (VLN-CE ids are integers)
    with pytest.raises(MalformedInputError, match="episode 4 is in s tour 0 and s tour 1"):
        check_episodes_once({"s": [[4], ["4"]]}, "t.json")
