"""FindingDory's metrics: hand-computed cases for the predicates' thresholds and relaxations,
upstream's multi-goal lock rules, malformed predictions, SPL, shortest tours (DP vs brute
force, exact vs the TSP path), low-level success with the step cap, and the summary."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from dataforge.errors import UsageError
from dataforge.pipelines.findingdory import metrics
from dataforge.pipelines.findingdory.goals import GoalCheck
from dataforge.pipelines.findingdory.metrics import (
    RELAXATIONS,
    THRESHOLDS,
    TaskScore,
    high_level_success,
    is_solvable,
    low_level_success,
    path_length,
    prediction_problem,
    satisfied,
    shortest_tour,
    spl,
    success_rates,
    summarize,
)
from dataforge.tsp import solve_open_path

OK, FAR = (), ("distance",)  # failed-check names


@dataclass(frozen=True)
class T:
    goals: tuple[tuple[str, ...], ...]
    ordered: bool = False
    predicate: str = "robot_at_object"


# ------------------------------------------------------------------ predicates


def test_thresholds_and_relaxations() -> None:
    obj, rec = THRESHOLDS["robot_at_object"], THRESHOLDS["robot_at_receptacle"]
    assert (obj.max_distance_m, obj.max_angle_deg, obj.min_coverage) == (2.0, 45.0, 0.001)
    assert (rec.max_distance_m, rec.max_angle_deg, rec.min_coverage) == (0.1, 90.0, 0.001)
    assert THRESHOLDS["robot_in_room"] is None
    assert RELAXATIONS == {"HL-SR": (), "DTG-SR": ("coverage",), "SC-SR": ("distance",)}


def test_satisfied_goal_checks_names_and_rooms() -> None:
    near = GoalCheck(distance_m=2.0, angle_deg=45.0, coverage=0.001)  # bounds inclusive
    assert satisfied(near, "robot_at_object")
    assert not satisfied(near, "robot_at_receptacle")  # 2.0 m > 0.1 m
    assert satisfied(GoalCheck(0.1, 80.0, 0.01), "robot_at_receptacle")
    assert not satisfied(GoalCheck(0.1, 91.0, 0.01), "robot_at_receptacle")
    assert satisfied(OK) and not satisfied(FAR) and satisfied(FAR, relax=("distance",))
    assert satisfied(True) and not satisfied(False) and not satisfied(("room",))
    assert not satisfied(("room",), relax=("distance", "coverage"))  # rooms never relax
    with pytest.raises(UsageError):
        satisfied(near)  # a measured result needs its predicate
    with pytest.raises(UsageError):
        satisfied(near, "robot_in_room")
    with pytest.raises(UsageError):
        satisfied(OK, relax=("room",))


# ------------------------------------------------------------------ high level


def test_single_goal_any_acceptable_entity() -> None:
    goals = [["mug1", "mug2"]]
    assert high_level_success(goals, False, [{"mug1": FAR, "mug2": OK}])
    assert not high_level_success(goals, False, [{"mug1": FAR, "mug2": ("coverage",)}])
    assert not high_level_success(goals, False, [{"cup9": OK}])  # not an acceptable entity
    assert not high_level_success(goals, False, [{"mug1": OK}, {"mug1": OK}])  # two frames


def test_dtg_and_sc_relaxations() -> None:
    task = T(goals=(("mug",),))
    hidden = GoalCheck(1.0, 10.0, 0.0)  # close, facing it, not in view
    far = GoalCheck(5.0, 10.0, 0.05)  # in view, too far
    askew = GoalCheck(1.0, 60.0, 0.0)  # angle stays on in both relaxations
    unsnapped = GoalCheck(math.inf, 10.0, 0.05)  # dropped distance (upstream: 10,000 m fails)
    rates = {"HL-SR": False, "DTG-SR": True, "SC-SR": False}
    assert success_rates(task, [{"mug": hidden}]) == rates
    assert success_rates(task, [{"mug": far}]) == {"HL-SR": False, "DTG-SR": False, "SC-SR": True}
    assert not any(success_rates(task, [{"mug": askew}]).values())
    assert success_rates(task, [{"mug": unsnapped}])["SC-SR"]
    both = success_rates(task, [{"mug": GoalCheck(0.5, 5.0, 0.01)}])
    assert all(both.values())


def test_multi_goal_count_mismatch_fails() -> None:
    goals = [["a"], ["b"]]
    assert not high_level_success(goals, False, [{"a": OK, "b": OK}])
    assert not high_level_success(goals, False, [{"a": OK}, {"b": OK}, {"a": OK}])
    assert high_level_success(goals, False, [{"a": OK}, {"b": OK}])


def test_a_frame_completing_two_subgoals_counts_one() -> None:
    goals = [["a"], ["b"]]
    both = {"a": OK, "b": OK}
    assert high_level_success(goals, False, [both, {"b": OK}])  # frame 1 locks a, frame 2 b
    assert high_level_success(goals, False, [both, both])
    # upstream's lock order: frame 1 locks a (first in subgoal order); frame 2 reaches only a,
    # locks nothing new, fails
    assert not high_level_success(goals, False, [both, {"a": OK}])
    assert not high_level_success(goals, False, [{"a": OK}, {"a": OK}])
    assert not high_level_success(goals, False, [{"a": OK}, {"c": OK}])


def test_ordered_and_unordered() -> None:
    goals = [["a"], ["b"], ["c"]]
    in_order = [{"a": OK}, {"b": OK}, {"c": OK}]
    shuffled = [{"b": OK}, {"c": OK}, {"a": OK}]
    assert high_level_success(goals, True, in_order)
    assert high_level_success(goals, False, in_order)
    assert high_level_success(goals, False, shuffled)  # unordered: any order
    assert not high_level_success(goals, True, shuffled)  # b before its predecessor a
    # a frame satisfying the next subgoal and a later one locks only the next
    assert high_level_success(goals, True, [{"a": OK, "c": OK}, {"b": OK}, {"c": OK}])
    assert not high_level_success(goals, True, [{"a": OK}, {"c": OK}, {"b": OK}])
    # acceptable alternatives per subgoal
    assert high_level_success([["a1", "a2"], ["b"]], True, [{"a2": OK}, {"b": OK}])


def test_prediction_problem() -> None:
    single, multi = T(goals=(("a",),)), T(goals=(("a",), ("b",), ("c",)), ordered=True)
    assert prediction_problem(single, [3], 10) is None
    assert prediction_problem(multi, [1, 2, 9], 10) is None
    assert "parsed" in prediction_problem(single, [-1], 10)
    assert prediction_problem(multi, [1, 2], 10) == "expected 3 frame indices, got 2"
    assert prediction_problem(single, [1, 2], 10) == "expected 1 frame index, got 2"
    assert prediction_problem(multi, [1, 10, -2], 10) == "frame indices [10, -2] outside 0..9"
    assert "integers" in prediction_problem(single, ["3"], 10)
    assert "integers" in prediction_problem(single, [True], 10)


# ------------------------------------------------------------------ SPL and tours


def line(a: float, b: float) -> float:
    return abs(a - b)


def test_spl() -> None:
    assert spl(True, 5.0, 5.0) == 1.0
    assert spl(True, 5.0, 10.0) == 0.5
    assert spl(True, 5.0, 4.0) == 1.0  # p < l (e.g. a rounding of geodesics): capped at 1
    assert spl(False, 5.0, 5.0) == 0.0
    assert spl(False, math.inf, math.nan) == 0.0
    assert spl(True, 0.0, 0.0) == 1.0
    assert spl(True, 0.0, 3.0) == 0.0
    with pytest.raises(UsageError):
        spl(True, math.inf, 3.0)
    assert path_length(0.0, [2.0, 5.0, 1.0], line) == 2 + 3 + 4
    assert path_length(0.0, [], line) == 0.0


def test_shortest_tour_by_hand() -> None:
    # start 0 on a line; first subgoal at 2 or -1, second at 5
    assert shortest_tour(0.0, [[2.0, -1.0], [5.0]], line, ordered=True) == 5.0
    assert shortest_tour(0.0, [[5.0], [-1.0]], line, ordered=True) == 11.0
    assert shortest_tour(0.0, [[5.0], [-1.0]], line, ordered=False) == 7.0  # -1 then 5
    assert shortest_tour(0.0, [], line, ordered=False) == 0.0
    assert shortest_tour(0.0, [[3.0]], line, ordered=False) == 3.0
    assert shortest_tour(0.0, [[3.0], []], line, ordered=True) == math.inf
    assert shortest_tour(0.0, [[3.0], [4.0]], lambda a, b: math.inf, ordered=False) == math.inf


def _points(rng: np.random.Generator, n: int) -> list[tuple[float, float]]:
    return [tuple(p) for p in rng.uniform(0, 20, size=(n, 2)).round(3)]


def euclid(a: Any, b: Any) -> float:
    return math.dist(a, b)


def _brute(start: Any, subgoals: list[list[Any]], orders: Any) -> float:
    best = math.inf
    for order in orders:
        for choice in itertools.product(*(subgoals[i] for i in order)):
            best = min(best, path_length(start, list(choice), euclid))
    return best


def test_ordered_tour_dp_equals_brute_force() -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        start = _points(rng, 1)[0]
        subgoals = [_points(rng, int(k)) for k in rng.integers(1, 4, size=4)]
        got = shortest_tour(start, subgoals, euclid, ordered=True)
        assert got == pytest.approx(_brute(start, subgoals, [range(len(subgoals))]))


def test_unordered_tour_exact_and_tsp(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def spy(costs: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        calls.append(costs.shape[0])
        return solve_open_path(costs, *args, **kwargs)

    monkeypatch.setattr(metrics, "solve_open_path", spy)
    rng = np.random.default_rng(7)
    start = _points(rng, 1)[0]
    six = [_points(rng, int(k)) for k in rng.integers(1, 3, size=6)]
    exact6 = _brute(start, six, itertools.permutations(range(6)))
    assert shortest_tour(start, six, euclid, ordered=False) == pytest.approx(exact6)
    seven = [[p] for p in _points(rng, 7)]  # 7 goals: the TSP open path from the start
    exact7 = _brute(start, seven, itertools.permutations(range(7)))
    tsp = shortest_tour(start, seven, euclid, ordered=False)
    assert calls == [8]  # solved by the TSP solver only beyond 6 subgoals: start + 7 goals
    assert exact7 - 1e-9 <= tsp <= exact7 + 0.05  # at most the centimetre rounding's slack
    assert shortest_tour(start, seven, euclid, ordered=True) >= tsp


# ------------------------------------------------------------------ low level


def test_low_level_single_goal() -> None:
    task = T(goals=(("mug",),))
    steps: list[dict[str, Any]] = [{"mug": FAR}] * 1200
    steps[40] = steps[1000] = {"mug": OK}
    assert low_level_success(task, steps, [40])
    assert not low_level_success(task, steps, [])  # never stopped
    assert not low_level_success(task, steps, [10, 40])  # the first stop decides
    assert not low_level_success(task, steps, [1000])  # step 1,001: past the cap
    assert low_level_success(task, steps, [1000], max_steps=1001)
    assert not low_level_success(task, steps, [40], max_steps=40)


def test_low_level_multi_goal() -> None:
    ordered = T(goals=(("a",), ("b",)), ordered=True)
    unordered = T(goals=(("a",), ("b",)))
    steps: list[dict[str, Any]] = [{}] * 50
    steps[10], steps[20] = {"a": OK}, {"b": OK}
    assert low_level_success(ordered, steps, [20, 10])  # stops taken in step order
    assert low_level_success(ordered, steps, [10, 20, 30])  # done at 20; later stops ignored
    assert not low_level_success(ordered, steps, [10])  # one subgoal never stopped at
    steps_rev = [{}] * 50
    steps_rev[10], steps_rev[20] = {"b": OK}, {"a": OK}
    assert not low_level_success(ordered, steps_rev, [10, 20])
    assert low_level_success(unordered, steps_rev, [10, 20])
    assert not low_level_success(unordered, steps_rev, [10, 20], max_steps=20)
    with pytest.raises(UsageError):
        low_level_success(ordered, steps[:15], [10, 20])


# ------------------------------------------------------------------ summary


def _walk(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [v for y in x.values() for v in _walk(y)]
    return [x]


def test_summary_solvable_unsolvable_and_empty_categories() -> None:
    records = [
        TaskScore(
            "object_recall", True, hl=True, dtg=True, sc=True, hl_spl=0.5, ll=True, ll_spl=0.8
        ),
        TaskScore("object_recall", True, hl=False, dtg=True, sc=False, hl_spl=0.0),
        TaskScore("object_recall", True, hl=True, dtg=True, sc=True, hl_spl=1.0, ll=False),
        {
            "category": "ordered_revisitation",
            "solvable": True,
            "hl": True,
            "dtg": True,
            "sc": False,
            "hl_spl": None,
            "ll": None,
        },
        TaskScore("room_visitation", False, hl=False, dtg=False, sc=True),
    ]
    out = summarize(records, categories=["time_based"])
    solv, unsolv = out["solvable"], out["unsolvable"]
    assert solv["overall"]["tasks"] == 4 and unsolv["overall"]["tasks"] == 1
    assert solv["overall"]["HL-SR"] == {"mean": 0.75, "n": 4}
    assert solv["overall"]["DTG-SR"] == {"mean": 1.0, "n": 4}
    assert solv["overall"]["SC-SR"] == {"mean": 0.5, "n": 4}
    assert solv["overall"]["HL-SPL"] == {"mean": 0.5, "n": 3}  # the None one left out
    rec = solv["categories"]["object_recall"]
    # LL: the HL failure counts as an LL failure (the agent does not run); the HL success
    # without a low-level result is left out
    assert rec["LL-SR"] == {"mean": pytest.approx(1 / 3), "n": 3}
    assert rec["LL-SR|HL"] == {"mean": 0.5, "n": 2}
    assert rec["LL-SPL"] == {"mean": pytest.approx(0.8 / 3), "n": 3}
    assert solv["categories"]["ordered_revisitation"]["LL-SR"] == {"mean": None, "n": 0}
    empty = solv["categories"]["time_based"]
    assert empty["tasks"] == 0 and all(
        empty[m] == {"mean": None, "n": 0} for m in ("HL-SR", "HL-SPL", "LL-SR")
    )
    assert unsolv["categories"]["room_visitation"]["SC-SR"] == {"mean": 1.0, "n": 1}
    assert unsolv["categories"]["object_recall"]["HL-SR"] == {"mean": None, "n": 0}
    assert not any(isinstance(v, float) and math.isnan(v) for v in _walk(out))
    # without any low-level result, LL is not reported (not 0 from HL failures)
    no_ll = summarize([TaskScore("a", True, hl=False, dtg=False, sc=False)])
    assert no_ll["solvable"]["overall"]["LL-SR"] == {"mean": None, "n": 0}


def test_is_solvable() -> None:
    assert is_solvable([[3, 4], [9]])
    assert not is_solvable([[3], [-1]])
    assert not is_solvable([[3], []])
    assert not is_solvable([])
