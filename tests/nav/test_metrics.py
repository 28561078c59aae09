"""VLN episode metrics on a line graph (points 0..5, distance |a - b|), computed by hand."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from dataforge.nav.metrics import EpisodeMetrics, episode_metrics, mean_metrics


def line(a: Sequence[int], b: Sequence[int]) -> np.ndarray:
    """Distances on the line graph 0 - 1 - 2 - 3 - 4 - 5 (unit edges)."""
    return np.abs(np.subtract.outer(np.asarray(a, float), np.asarray(b, float)))


REF = [0, 1, 2, 3]  # goal 3, shortest path length 3


def score(traj: Sequence[int], **kw: float) -> EpisodeMetrics:
    return episode_metrics(REF, traj, line, success_distance=1.0, ndtw_threshold=3.0, **kw)


def test_perfect_trajectory() -> None:
    m = score([0, 1, 2, 3])
    # TL = 1 + 1 + 1; NE = |3 - 3|; SPL = 3 / max(3, 3); DTW = 0 on the diagonal.
    assert m == EpisodeMetrics(
        trajectory_length=3.0,
        navigation_error=0.0,
        oracle_success=True,
        success=True,
        spl=1.0,
        ndtw=1.0,
    )


def test_overshoot_that_comes_back_within_the_radius() -> None:
    m = score([0, 1, 2, 3, 4, 5, 4])
    # TL = 6 unit steps; NE = |4 - 3| = 1 <= 1 -> success; SPL = 3 / max(3, 6) = 0.5.
    # DTW: the first four points align on the diagonal for 0; query points 4, 5, 4 must each be
    # aligned to some reference point, at best to 3: 1 + 2 + 1 = 4 -> nDTW = exp(-4 / (4 * 3)).
    assert m.trajectory_length == pytest.approx(6.0)
    assert m.navigation_error == pytest.approx(1.0)
    assert m.oracle_success and m.success
    assert m.spl == pytest.approx(0.5)
    assert m.ndtw == pytest.approx(math.exp(-4 / 12))


def test_overshoot_that_stops_too_far() -> None:
    m = score([0, 1, 2, 3, 4, 5])
    # TL = 5; NE = |5 - 3| = 2 > 1 -> fail, but it passed the goal -> oracle success; SPL = 0.
    # DTW: 4 -> 3 costs 1, 5 -> 3 costs 2 -> 3; nDTW = exp(-3 / 12).
    assert m.trajectory_length == pytest.approx(5.0)
    assert m.navigation_error == pytest.approx(2.0)
    assert m.oracle_success and not m.success
    assert m.spl == 0.0
    assert m.ndtw == pytest.approx(math.exp(-3 / 12))


def test_failing_trajectory() -> None:
    m = score([0, 1, 0])
    # TL = 1 + 1 = 2; NE = |0 - 3| = 3; closest approach |1 - 3| = 2 > 1 -> no oracle success.
    # DTW, rows ref 0..3, cols query [0, 1, 0], dist rows [0,1,0] [1,0,1] [2,1,2] [3,2,3]:
    #   D11=0 D12=1 D13=1; D21=1 D22=0 D23=1; D31=3 D32=1 D33=2; D41=6 D42=3 D43=4 -> DTW 4.
    m_dict = m.to_dict()
    assert m_dict == {
        "trajectory_length": 2.0,
        "navigation_error": 3.0,
        "oracle_success": False,
        "success": False,
        "spl": 0.0,
        "ndtw": pytest.approx(math.exp(-4 / 12)),
    }


def test_default_radii_are_three() -> None:
    # With the R2R default of 3, ending at 0 (NE = 3) counts as a success; SPL = 3 / max(3, 2)
    # = 1 even though the agent walked only 2 (TL below the shortest path is capped by max).
    m = episode_metrics(REF, [0, 1, 0], line)
    assert m.success and m.oracle_success
    assert m.spl == 1.0
    assert m.ndtw == pytest.approx(math.exp(-4 / 12))


def test_start_equals_goal() -> None:
    # shortest = 0: a success scores SPL 1 whatever the path length.
    assert episode_metrics([2], [2], line, success_distance=0.5).spl == 1.0
    m = episode_metrics([2], [2, 3, 2], line, success_distance=0.5)
    assert m.trajectory_length == 2.0 and m.success and m.spl == 1.0
    assert episode_metrics([2], [2, 3], line, success_distance=0.5).spl == 0.0


def test_viewpoint_ids_and_unreachable_points() -> None:
    # Points need not be numbers: viewpoint ids with a lookup table; "z" is unreachable.
    pos = {"a": 0.0, "b": 1.0, "c": 2.5, "z": math.nan}

    def graph(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        out = np.abs(np.subtract.outer([pos[x] for x in a], [pos[y] for y in b]))
        return np.where(np.isnan(out), np.inf, out)

    m = episode_metrics(["a", "b", "c"], ["a", "b", "c"], graph)
    assert (m.trajectory_length, m.navigation_error, m.spl, m.ndtw) == (2.5, 0.0, 1.0, 1.0)
    lost = episode_metrics(["a", "b", "c"], ["a", "z"], graph)
    assert lost.trajectory_length == math.inf and lost.navigation_error == math.inf
    assert not lost.success and lost.oracle_success  # "a" is within 3 of "c"
    assert lost.spl == 0.0 and lost.ndtw == 0.0


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="empty trajectory"):
        episode_metrics(REF, [], line)
    with pytest.raises(ValueError, match="empty reference"):
        episode_metrics([], [0], line)
    with pytest.raises(ValueError, match="threshold"):
        episode_metrics(REF, [0], line, ndtw_threshold=0.0)
    with pytest.raises(ValueError, match="success_distance"):
        episode_metrics(REF, [0], line, success_distance=-1.0)
    with pytest.raises(ValueError, match="shape"):
        episode_metrics(REF, [0, 1], lambda a, b: np.zeros((1, 1)))


def test_mean_metrics() -> None:
    perfect = score([0, 1, 2, 3])
    overshoot = score([0, 1, 2, 3, 4, 5])
    failing = score([0, 1, 0])
    means = mean_metrics(iter([perfect, overshoot, failing]))
    assert means == {
        "trajectory_length": pytest.approx((3 + 5 + 2) / 3),
        "navigation_error": pytest.approx((0 + 2 + 3) / 3),
        "oracle_success": pytest.approx(2 / 3),
        "success": pytest.approx(1 / 3),
        "spl": pytest.approx(1 / 3),
        "ndtw": pytest.approx((1 + math.exp(-3 / 12) + math.exp(-4 / 12)) / 3),
    }
    assert all(isinstance(v, float) for v in means.values())
    with pytest.raises(ValueError, match="no episodes"):
        mean_metrics([])


def test_ivln_options_strict_success_reference_spl_and_path_distance() -> None:
    # Stop at 2: NE = 1 = d. Success under <= d, not under the strict < d (OS likewise).
    at_radius = score([0, 1, 2])
    strict = score([0, 1, 2], strict=True)
    assert at_radius.success and at_radius.oracle_success
    assert not strict.success and not strict.oracle_success and strict.spl == 0.0
    # A reference that detours: 0 2 1 3 has length 2 + 1 + 2 = 5, the shortest distance 3.
    # A trajectory 0 1 2 3 4 3 (TL 5): SPL 3 / max(3, 5) = 0.6 over the shortest distance,
    # 5 / max(5, 5, 0.01) = 1 over the reference length.
    detour = [0, 2, 1, 3]
    longer = [0, 1, 2, 3, 4, 3]
    over_short = episode_metrics(detour, longer, line, success_distance=1.0)
    over_ref = episode_metrics(detour, longer, line, success_distance=1.0, spl_over_reference=True)
    assert over_short.spl == pytest.approx(0.6) and over_ref.spl == pytest.approx(1.0)
    # path_distance measures TL and nDTW only: doubled steps double TL, NE stays |3 - 3|.
    doubled = episode_metrics(
        REF, [0, 1, 2, 3], line, success_distance=1.0, path_distance=lambda a, b: 2 * line(a, b)
    )
    assert doubled.trajectory_length == 6.0 and doubled.navigation_error == 0.0
    assert doubled.spl == pytest.approx(0.5)  # 3 / max(3, 6)
    assert doubled.ndtw == 1.0  # the diagonal is still 0


def test_trajectory_length_searches_once_per_distinct_point_and_sums_in_order() -> None:
    """A 200k-step walk over 4 viewpoints: TL is the ordered sum of the steps' distances (here
    known exactly: every step is 1 m or 2 m), found with one distance call per distinct point
    left from (the oracle's per-call search cost is paid 4 times, not 200k times)."""
    where = {"a": 0.0, "b": 1.0, "c": 2.0, "d": 3.0}
    calls: list[tuple[int, int]] = []

    def distance(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        calls.append((len(a), len(b)))
        return np.abs(np.array([where[p] for p in a])[:, None] - [where[q] for q in b])

    n = 200_000
    walk = [("a", "b", "c", "d", "b")[k % 5] for k in range(n)]  # steps 1, 1, 1, 2, 1 m
    m = episode_metrics(["a", "b"], walk, distance, reference_to_trajectory=np.zeros((2, n)))
    steps = n - 1
    assert m.trajectory_length == 6 * (steps // 5) + [0, 1, 2, 3, 5][steps % 5]
    # TL: a, b, c, d each left from once (b reaches c and d); then NE/OS (every point to the
    # goal) and the shortest distance (start to goal)
    assert sorted(calls) == sorted([(1, 1), (1, 2), (1, 1), (1, 1), (n, 1), (1, 1)])
    # points may be unhashable (numpy rows): compared by value
    rows = [np.array([0.0, 0.0, 0.0]), np.array([3.0, 4.0, 0.0]), np.array([0.0, 0.0, 0.0])]

    def euclid(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> np.ndarray:
        return np.linalg.norm(np.asarray(a)[:, None] - np.asarray(b)[None], axis=-1)

    assert episode_metrics(rows[:1], rows, euclid).trajectory_length == 10.0
