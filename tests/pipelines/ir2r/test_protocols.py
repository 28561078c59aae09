"""The two scoring protocols on hand-computed tours: ``ivln`` (the authors' code, the default) and
``paper`` (the paper's wording). Every number below is worked out in the comments.

Discrete cases live on a corridor p0 .. p20 (p<k> at x = k, one edge between neighbours), so the
graph distance between p<a> and p<b> is |a - b|. Continuous cases use xyz points on the x axis.
d_th = 3, so a tour of 6 reference points has t-nDTW exp(-DTW / 18).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from ir2rhelpers import chain, line_positions

from dataforge.errors import MalformedInputError
from dataforge.nav.dtw import boundary_pins, tour_ndtw
from dataforge.nav.graph import NavGraph
from dataforge.nav.oracle import GraphOracle
from dataforge.pipelines.ir2r import protocols as pr
from dataforge.pipelines.ir2r.score import Score, score_tours

CORRIDOR = GraphOracle(
    NavGraph.from_edges(line_positions("p", 21), chain([f"p{i}" for i in range(21)]))
)


def p(*ks: int) -> list[str]:
    return [f"p{k}" for k in ks]


def x(*xs: float) -> list[tuple[float, float, float]]:
    return [(float(v), 0.0, 0.0) for v in xs]


def run(
    tours: list[list[str]],
    routes: dict[str, Sequence[Any]],
    agent: dict[str, Sequence[Any]],
    protocol: str,
    *,
    continuous: bool = False,
    distance: Any = None,
    **kw: Any,
) -> Score:
    if distance is None:
        distance = pr.euclidean if continuous else CORRIDOR.distances
    return score_tours(
        "val_seen",
        {"scene": tours},
        {e: ("scene", tuple(r)) for e, r in routes.items()},
        {e: list(t) for e, t in agent.items()},
        lambda scene: distance,
        protocol=protocol,
        continuous=continuous,
        **kw,
    )


def both(*args: Any, **kw: Any) -> tuple[Score, Score]:
    return run(*args, "paper", **kw), run(*args, "ivln", **kw)


# A two-episode tour: E1 follows p0 p1 p2, E2 follows p3 p4 p5 (6 reference points).
TOUR = [["1_0", "2_0"]]
ROUTES = {"1_0": p(0, 1, 2), "2_0": p(3, 4, 5)}
PERFECT = dict(ROUTES)


def t18(dtw: float) -> float:
    return math.exp(-dtw / 18)


def test_perfect_tour_scores_one_under_both() -> None:
    paper, ivln = both(TOUR, ROUTES, PERFECT)
    assert paper.t_ndtw == ivln.t_ndtw == 1.0
    assert paper.episodic == ivln.episodic
    assert (paper.protocol, ivln.protocol) == ("paper", "ivln")
    assert ivln.to_dict()["rules"]["tour_alignment"] == "pinned boundaries"


def test_overshoot_is_pinned_to_the_agent_stop() -> None:
    # E1 goes one viewpoint past its goal: p0 p1 p2 p3.
    # paper: DTW may match ref p2 to agent p2 (0) and p3 (1): DTW 1.
    # ivln: E1's stopping point (ref p2) may only match the agent's stop (p3), so agent p2 is
    #   matched to ref p1: 0 + 0 + |1-2| + |2-3| = 2.
    paper, ivln = both(TOUR, ROUTES, {**PERFECT, "1_0": p(0, 1, 2, 3)})
    assert paper.t_ndtw == pytest.approx(t18(1), rel=1e-12)
    assert ivln.t_ndtw == pytest.approx(t18(2), rel=1e-12)
    # Episodic: NE 1, TL 3; SPL 2/3 under both (reference length = shortest distance = 2);
    # nDTW of the episode alone is the same standard DTW 1 under both: exp(-1/9).
    for s in (paper, ivln):
        e = s.per_episode["1_0"]
        assert (e["navigation_error"], e["trajectory_length"], e["success"]) == (1.0, 3.0, True)
        assert e["spl"] == pytest.approx(2 / 3) and e["ndtw"] == pytest.approx(math.exp(-1 / 9))


def test_wrong_turn_at_an_episode_start() -> None:
    # E2 first steps back: p3 p2 p3 p4 p5.
    # paper: ref p3 takes agent p3, p2 (1), p3 (0); then p4, p5: DTW 1.
    # ivln: ref p3 (a start) may only take the agent's start, so agent p2 goes to ref p4 (2) and
    #   the second p3 to ref p4 (1): DTW 3.
    paper, ivln = both(TOUR, ROUTES, {**PERFECT, "2_0": p(3, 2, 3, 4, 5)})
    assert paper.t_ndtw == pytest.approx(t18(1), rel=1e-12)
    assert ivln.t_ndtw == pytest.approx(t18(3), rel=1e-12)


@pytest.mark.parametrize(
    ("agent", "paper_dtw", "ivln_dtw"),
    [
        # Repeated start of E2 (p3 p3 p4 p5): paper matches both p3 to ref p3 (0); ivln pins ref
        # p3 to the first one, the second goes to ref p4: DTW 1.
        ({"2_0": p(3, 3, 4, 5)}, 0, 1),
        # Repeated end of E1 (p0 p1 p2 p2): ivln pins ref p2 to the last p2, the other p2 goes to
        # ref p1: DTW 1.
        ({"1_0": p(0, 1, 2, 2)}, 0, 1),
        # The tour's own first start and last stop are not pinned (the authors pin only where
        # the episode changes): repeating them costs nothing under either.
        ({"1_0": p(0, 0, 1, 2), "2_0": p(3, 4, 5, 5)}, 0, 0),
    ],
)
def test_repeated_start_or_end_point(agent: dict, paper_dtw: float, ivln_dtw: float) -> None:
    paper, ivln = both(TOUR, ROUTES, {**PERFECT, **agent})
    assert paper.t_ndtw == pytest.approx(t18(paper_dtw), rel=1e-12)
    assert ivln.t_ndtw == pytest.approx(t18(ivln_dtw), rel=1e-12)


def test_stop_early_exactly_at_the_success_distance() -> None:
    # E1 follows p0..p4 but stops at p1: NE = 3 = d. paper: NE <= 3 is a success (OS too), SPL =
    # 4 / max(4, TL 1) = 1. ivln: NE < 3 fails, so SR, OS and SPL are 0.
    # t-nDTW is the same: ref p2, p3, p4 all match agent p1 (1 + 2 + 3); pinning ref p4 to the
    # agent's stop changes nothing. 5 + 3 reference points: exp(-6 / 24).
    routes = {"1_0": p(0, 1, 2, 3, 4), "2_0": p(5, 6, 7)}
    paper, ivln = both(TOUR, routes, {**routes, "1_0": p(0, 1)})
    for s in (paper, ivln):
        assert s.t_ndtw == pytest.approx(math.exp(-6 / 24), rel=1e-12)
        assert s.per_episode["1_0"]["navigation_error"] == 3.0
    e = paper.per_episode["1_0"]
    assert (e["success"], e["oracle_success"], e["spl"]) == (True, True, 1.0)
    e = ivln.per_episode["1_0"]
    assert (e["success"], e["oracle_success"], e["spl"]) == (False, False, 0.0)
    assert (paper.episodic["success"], ivln.episodic["success"]) == (1.0, 0.5)


def test_spl_divides_by_the_reference_length_under_ivln() -> None:
    # Triangle a (0,0), b (3,0), c (3,4): edges a-b 3, b-c 4, a-c 5. The reference goes a b c
    # (length 7) although a-c is 5. Replaying it: paper SPL = 5 / 7; ivln SPL = 7 / 7 = 1.
    pos = {"a": [0, 0, 0], "b": [3, 0, 0], "c": [3, 4, 0]}
    tri = GraphOracle(NavGraph.from_edges(pos, [("a", "b"), ("b", "c"), ("a", "c")])).distances
    routes = {"9_0": ["a", "b", "c"]}
    paper, ivln = both([["9_0"]], routes, routes, distance=tri)
    assert paper.episodic["spl"] == pytest.approx(5 / 7) and ivln.episodic["spl"] == 1.0
    # Taking the shortcut a c: TL 5, SPL 1 (paper: 5/5) and 1 (ivln: 7 / max(5, 7)).
    paper, ivln = both([["9_0"]], routes, {"9_0": ["a", "c"]}, distance=tri)
    assert paper.episodic["spl"] == 1.0 and ivln.episodic["spl"] == 1.0


@pytest.mark.parametrize("protocol", ["ivln", "paper"])
def test_a_trajectory_off_its_start_is_an_error_naming_the_episode(protocol: str) -> None:
    agent = {**PERFECT, "2_0": p(4, 5)}
    with pytest.raises(MalformedInputError, match=r"episode 2_0: .*starts at p4, not .* p3"):
        run(TOUR, ROUTES, agent, protocol)
    s = run(TOUR, ROUTES, agent, protocol, allow_offset_start=True)
    assert s.per_episode["2_0"]["navigation_error"] == 0.0


# -- continuous (IR2R-CE): IVLN-CE's tour_ndtw.py and VLN-CE's measures -----------------------

CE_TOUR = [["101", "102"]]
CE_ROUTES = {"101": x(0, 1, 2), "102": x(3, 4, 5)}


def test_ce_overshoot_and_wrong_turn() -> None:
    # The same shapes as the discrete cases, Euclidean on the x axis: the same DTWs.
    paper, ivln = both(CE_TOUR, CE_ROUTES, {**CE_ROUTES, "101": x(0, 1, 2, 3)}, continuous=True)
    assert paper.t_ndtw == pytest.approx(t18(1)) and ivln.t_ndtw == pytest.approx(t18(2))
    paper, ivln = both(CE_TOUR, CE_ROUTES, {**CE_ROUTES, "102": x(3, 2, 3, 4, 5)}, continuous=True)
    assert paper.t_ndtw == pytest.approx(t18(1)) and ivln.t_ndtw == pytest.approx(t18(3))


def test_ce_repeated_points_are_dropped_under_ivln() -> None:
    # IVLN-CE drops an agent point equal to the one before (novel_only).
    # Repeated end, E1 = 0 1 2.5 2.5: paper matches ref 2 to both 2.5 (0.5 + 0.5 = 1); ivln
    # keeps 0 1 2.5 and pins ref 2 to 2.5: 0.5.
    agent = {**CE_ROUTES, "101": x(0, 1, 2.5, 2.5)}
    paper, ivln = both(CE_TOUR, CE_ROUTES, agent, continuous=True)
    assert paper.t_ndtw == pytest.approx(t18(1.0)) and ivln.t_ndtw == pytest.approx(t18(0.5))
    # Repeated start 0.2 m off (inside the 0.25 m the oracle leaves), E2 = 3.2 3.2 4 5: paper
    # 0.2 + 0.2; ivln 0.2.
    agent = {**CE_ROUTES, "102": x(3.2, 3.2, 4, 5)}
    paper, ivln = both(CE_TOUR, CE_ROUTES, agent, continuous=True)
    assert paper.t_ndtw == pytest.approx(t18(0.4)) and ivln.t_ndtw == pytest.approx(t18(0.2))
    # Episode nDTW likewise: E2 alone has 3 reference points, exp(-0.4 / 9) vs exp(-0.2 / 9).
    assert paper.per_episode["102"]["ndtw"] == pytest.approx(math.exp(-0.4 / 9))
    assert ivln.per_episode["102"]["ndtw"] == pytest.approx(math.exp(-0.2 / 9))


def test_ce_stop_early_at_the_success_distance() -> None:
    # NE = 3 exactly: a success only under paper (habitat-lab's Success is distance < 3).
    routes = {"101": x(0, 1, 2, 3, 4), "102": x(5, 6, 7)}
    paper, ivln = both(CE_TOUR, routes, {**routes, "101": x(0, 1)}, continuous=True)
    assert paper.per_episode["101"]["success"] is True
    assert ivln.per_episode["101"]["success"] is False and ivln.per_episode["101"]["spl"] == 0.0
    assert paper.t_ndtw == ivln.t_ndtw == pytest.approx(math.exp(-6 / 24))


def test_ce_tours_weigh_their_episode_changes_under_ivln() -> None:
    # Tour A (2 episodes) with E1 overshooting; tour B (3 episodes) perfect.
    # paper weighs 2 and 3: (2 exp(-1/18) + 3) / 5; ivln weighs the episode changes, 1 and 2
    # (compute_episodes_per_tour): (exp(-2/18) + 2) / 3.
    routes = {**CE_ROUTES, "201": x(6, 7), "202": x(8, 9), "203": x(10, 11)}
    tours = [["101", "102"], ["201", "202", "203"]]
    agent = {**routes, "101": x(0, 1, 2, 3)}
    paper, ivln = both(tours, routes, agent, continuous=True)
    assert paper.t_ndtw == pytest.approx((2 * t18(1) + 3) / 5, rel=1e-12)
    assert ivln.t_ndtw == pytest.approx((t18(2) + 2) / 3, rel=1e-12)
    assert ivln.to_dict()["rules"]["tour_weight"] == "episodes - 1"


def test_ce_tour_points_are_euclidean_under_ivln() -> None:
    # A navmesh where every geodesic is twice the straight line. IVLN-CE's t-nDTW, path length
    # and episode nDTW are Euclidean; NE (and so success) stays geodesic.
    def doubled(a: Sequence[Any], b: Sequence[Any]) -> np.ndarray:
        return 2 * pr.euclidean(a, b)

    agent = {**CE_ROUTES, "102": x(3, 2, 3, 4, 5)}  # the wrong turn: Euclidean DTW 1 / pinned 3
    paper, ivln = both(CE_TOUR, CE_ROUTES, agent, continuous=True, distance=doubled)
    assert paper.t_ndtw == pytest.approx(t18(2)) and ivln.t_ndtw == pytest.approx(t18(3))
    assert paper.per_episode["102"]["trajectory_length"] == 8.0
    assert ivln.per_episode["102"]["trajectory_length"] == 4.0
    stop = {**CE_ROUTES, "101": x(0, 1)}  # 1 m short of the goal: geodesic NE 2 under both
    for s in both(CE_TOUR, CE_ROUTES, stop, continuous=True, distance=doubled):
        assert s.per_episode["101"]["navigation_error"] == 2.0


def test_ce_start_tolerance() -> None:
    near = {**CE_ROUTES, "102": x(3.2, 4, 5)}
    assert run(CE_TOUR, CE_ROUTES, near, "ivln", continuous=True).episodes == 2
    far = {**CE_ROUTES, "102": x(3.3, 4, 5)}
    with pytest.raises(MalformedInputError, match=r"episode 102: .*0\.30 m away"):
        run(CE_TOUR, CE_ROUTES, far, "ivln", continuous=True)
    s = run(CE_TOUR, CE_ROUTES, far, "ivln", continuous=True, allow_offset_start=True)
    assert s.episodes == 2


def test_boundary_pins_follow_the_episode_changes() -> None:
    # Reference sizes 3, 3, 2 and agent sizes 4, 1, 2: stops then starts at each change.
    assert boundary_pins([3, 3, 2], [4, 1, 2]) == [(3, 2), (4, 3), (4, 5), (5, 6)]


def test_one_point_first_reference_keeps_the_seeded_start() -> None:
    # Reference episodes [6] and [8, 9, 9]; agent [0, 5] and [0, 3] (points on a line). The pins
    # give ref 6 only to the agent's stop 5, but the authors' DTW (dtw-python) always starts at
    # the first cell: 6 -> 0 (6), 6 -> 5 (1), then 8 -> 0 (8), 9 -> 3 (6), 9 -> 3 (6): 27 over
    # 4 reference points: exp(-27 / 12). (Checked against dtw-python with the authors' window.)
    blocks = [
        pr.euclidean(x(6), x(0, 5)),
        pr.euclidean(x(8, 9, 9), x(0, 3)),
    ]
    assert tour_ndtw(blocks, 3.0, pinned=True) == pytest.approx(math.exp(-27 / 12), rel=1e-12)
