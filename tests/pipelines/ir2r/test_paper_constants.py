"""The IVLN / IR2R paper's constants and rules, pinned at what a run gets without flags (issue 35).

Values are read where a default run takes them: the config ``dataforge ir2r tours`` builds from
its defaults (``Pipeline.job`` is intercepted, so nothing runs) and the defaults of ``dataforge
ir2r score``. Sources: ``../shared/papers/ivln-ir2r.txt`` (§3 "Generating Tours from VLN Data"
and "Metrics for Iterative Evaluation", appendix "test split modifications"),
``../shared/specs/ir2r.md`` and the authors' code as ``pipelines/ir2r/protocols.py`` cites it.
"""

from __future__ import annotations

import inspect

import numpy as np
from clihelpers import cli_config

from dataforge.nav.graph import NavGraph
from dataforge.nav.oracle import GraphOracle
from dataforge.pipelines.ir2r import api
from dataforge.pipelines.ir2r import protocols as pr
from dataforge.pipelines.ir2r import score as sc
from dataforge.pipelines.ir2r.cli import ir2r
from dataforge.pipelines.ir2r.config import IR2RConfig
from dataforge.pipelines.ir2r.episodes import NavPath
from dataforge.pipelines.ir2r.tours import build_scene_tours


def tours_defaults(split: str) -> IR2RConfig:
    cfg = cli_config(ir2r.commands["tours"], "--split", split)
    assert isinstance(cfg, IR2RConfig)
    return cfg


def test_tours_are_ordered_tip_to_tail_by_lkh() -> None:
    cfg = tours_defaults("val_seen")
    assert cfg.ordering == "tip-to-tail", (
        "paper §3: navigation from the end of episode i to the start of i+1"
    )
    assert cfg.solver == "elkai", "paper §3: ATSP solved with the Lin-Kernighan heuristic (LKH)"
    assert cfg.runs == 3
    assert cfg.continuous is False, "discrete IR2R unless --continuous (IR2R-CE)"
    for split in ("train", "val_unseen"):
        assert tours_defaults(split).ordering == "tip-to-tail", split


def test_the_test_split_is_ordered_tip_to_tip() -> None:
    assert tours_defaults("test").ordering == "tip-to-tip", (
        "paper appendix (test split modifications): start-to-start (tip-to-tip) ordering"
    )


def test_sets_of_fewer_than_two_paths_are_dropped() -> None:
    assert tours_defaults("val_seen").min_paths == 2, (
        "spec notes: keep only scans (sets) with >= 2 paths; reproduces Table 1"
    )


def test_tour_rules_at_the_defaults() -> None:
    """On a corridor v0..v9 and a separate room w0..w1, with the default settings: the corridor
    paths form one set whose tour is repeated n = the smallest instruction count times (spec
    notes), each repetition a different instruction of each path (paper §3: sampled without
    replacement), costs measured end(i) -> start(j) (tip-to-tail); the room's single path is
    dropped."""
    cfg = tours_defaults("val_seen")
    pos = {f"v{i}": [float(i), 0.0, 0.0] for i in range(10)}
    pos |= {f"w{i}": [20.0 + i, 0.0, 0.0] for i in range(2)}
    edges = [(f"v{i}", f"v{i + 1}") for i in range(9)] + [("w0", "w1")]
    oracle = GraphOracle(NavGraph.from_edges(pos, edges))

    def path(pid: int, start: str, end: str, n: int) -> NavPath:
        return NavPath(pid, "s", start, end, tuple(f"{pid}_{k}" for k in range(n)), (start, end))

    paths = [path(1, "v0", "v2", 3), path(2, "v3", "v5", 4), path(3, "v6", "v9", 3)]
    paths.append(path(4, "w0", "w1", 3))
    result = build_scene_tours(
        "s",
        paths,
        oracle,
        np.random.default_rng(0),
        ordering=cfg.ordering,
        solver=cfg.solver,
        min_paths=cfg.min_paths,
        runs=cfg.runs,
        time_limit_s=cfg.exact_time_limit_s,
    )
    assert result.dropped == (4,)
    assert len(result.tours) == 3, "n = min(3, 4, 3) repetitions"
    for tour in result.tours:
        assert [p.path_id for p in tour.paths] == [1, 2, 3]
        assert tour.transition_m == (0.0, 1.0, 1.0), "end(i) -> start(i+1): v2->v3, v5->v6"
    for k in range(3):
        used = [t.instruction[k] for t in result.tours]
        assert len(set(used)) == 3, "each repetition takes another instruction of the path"


def test_score_defaults_are_r2rs_3_m_and_the_authors_protocol() -> None:
    params = {p.name: p.default for p in ir2r.commands["score"].params}
    assert params["threshold"] == 3.0, "spec notes: nDTW d_th = R2R's standard 3.0 m"
    assert params["success_distance"] == 3.0, "R2R success: within 3 m (IVLN env.py)"
    assert params["protocol"] == "ivln", "spec notes: the authors' code is the default"
    for fn in (api.score, sc.score_tours):
        sig = inspect.signature(fn).parameters
        assert sig["ndtw_threshold"].default == 3.0, fn.__qualname__
        assert sig["success_distance"].default == 3.0, fn.__qualname__
    assert inspect.signature(api.score).parameters["protocol"].default == "ivln"


def test_success_is_strictly_within_3_m_under_the_authors_protocol() -> None:
    """IVLN ``env.py``: success is NE < ERROR_MARGIN (3); the paper's wording: NE <= d."""
    params = {p.name: p.default for p in ir2r.commands["score"].params}
    route = [(0.0, 0.0, 0.0), (10.0, 0.0, 0.0)]

    def ends_at(x: float, protocol: str) -> bool:
        traj = [(0.0, 0.0, 0.0), (x, 0.0, 0.0)]
        m = pr.ivln_episode(
            route,
            traj,
            pr.euclidean,
            pr.rules(protocol, continuous=False),
            success_distance=params["success_distance"],
            ndtw_threshold=params["threshold"],
        )
        return bool(m.success)

    assert pr.rules(params["protocol"], continuous=False).success == "NE < d"
    assert ends_at(7.01, params["protocol"]) and not ends_at(7.0, params["protocol"])
    assert pr.rules("paper", continuous=False).success == "NE <= d"


def test_continuous_trajectories_may_start_0_25_m_off() -> None:
    # IVLN-CE: the oracle stops within FORWARD_STEP_SIZE (0.25 m) of the next start
    assert pr.CE_START_TOLERANCE_M == 0.25
