"""DTW, nDTW and t-nDTW against hand-computed cases and an independent naive implementation."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from dataforge.nav.dtw import (
    dtw_cost,
    ndtw,
    segmented_distance,
    tour_ndtw,
    weighted_tour_score,
)

INF = math.inf


def line_dist(ref: list[float], query: list[float]) -> np.ndarray:
    """|a - b| between 1-D points: reference rows, query columns."""
    return np.abs(np.subtract.outer(np.asarray(ref, float), np.asarray(query, float)))


def naive_dtw(dist: np.ndarray) -> float:
    """The textbook recursion, memoised; 1-based with D(0, 0) = 0 and inf borders."""
    n, m = dist.shape

    @cache
    def d(i: int, j: int) -> float:
        if i == 0 and j == 0:
            return 0.0
        if i == 0 or j == 0:
            return INF
        return float(dist[i - 1, j - 1]) + min(d(i - 1, j), d(i, j - 1), d(i - 1, j - 1))

    return d(n, m)


@pytest.mark.parametrize(
    "ref, query, expected",
    [
        # dist = [[0,2],[1,1],[2,0]]. Table (1-based): D11=0, D12=2+0=2; D21=1+0=1,
        # D22=1+min(D12=2, D21=1, D11=0)=1; D31=2+1=3, D32=0+min(D22=1, D31=3, D21=1)=1.
        ([0, 1, 2], [0, 2], 1.0),
        # dist = [[0,1,2],[2,1,0]]. D11=0, D12=1, D13=3; D21=2, D22=1+min(1,2,0)=1,
        # D23=0+min(D13=3, D22=1, D12=1)=1.
        ([0, 2], [0, 1, 2], 1.0),
        # One query point: every reference point aligns to it: 1 + 1 + 1.
        ([0, 0, 0], [1], 3.0),
        # One point each: |3 - 5|.
        ([3], [5], 2.0),
        # dist = [[0,3],[1,2],[2,1],[3,0]]. D11=0, D12=3; D21=1, D22=2+min(3,1,0)=2;
        # D31=3, D32=1+min(D22=2, D31=3, D21=1)=2; D41=6, D42=0+min(D32=2, D41=6, D31=3)=2.
        # (ref 1 -> query 0 costs 1, ref 2 -> query 3 costs 1.)
        ([0, 1, 2, 3], [0, 3], 2.0),
        # Identical paths: the diagonal costs nothing.
        ([0, 1, 2, 3, 4], [0, 1, 2, 3, 4], 0.0),
    ],
)
def test_dtw_hand_cases(ref: list[float], query: list[float], expected: float) -> None:
    dist = line_dist(ref, query)
    assert dtw_cost(dist) == pytest.approx(expected, abs=1e-12)
    assert naive_dtw(dist) == pytest.approx(expected, abs=1e-12)


def test_dtw_empty_and_infinite() -> None:
    assert dtw_cost(np.zeros((0, 3))) == INF
    assert dtw_cost(np.zeros((2, 0))) == INF
    assert dtw_cost(np.zeros((0, 0))) == INF
    assert dtw_cost(np.array([[INF]])) == INF
    # The diagonal step jumps over the inf corners.
    assert dtw_cost(np.array([[0.0, INF], [INF, 0.0]])) == 0.0
    # Every way from (1,1) to (2,3) passes (1,2) or (2,2), both inf.
    assert dtw_cost(np.array([[0.0, INF, INF], [INF, INF, 0.0]])) == INF
    # The last cell is inf: no finite alignment.
    assert dtw_cost(np.array([[0.0, 1.0], [1.0, INF]])) == INF


def test_dtw_rejects_bad_matrices() -> None:
    with pytest.raises(ValueError, match="2-D"):
        dtw_cost(np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        dtw_cost(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="non-negative"):
        dtw_cost(np.array([[0.0, -1.0]]))


@pytest.mark.parametrize("seed", range(40))
def test_dtw_matches_naive_recursion(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 25, size=2)
    dist = rng.exponential(2.0, size=(n, m))
    if seed % 2:  # sprinkle infs, sometimes enough to block every alignment
        dist[rng.random((n, m)) < 0.15] = INF
    expected = naive_dtw(dist)
    got = dtw_cost(dist)
    if math.isinf(expected):
        assert got == INF
    else:
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_dtw_matches_naive_on_structured_infs() -> None:
    # Tour-like matrices: finite diagonal blocks, inf elsewhere.
    rng = np.random.default_rng(7)
    for _ in range(20):
        rows = rng.integers(1, 6, size=3)
        cols = rng.integers(1, 6, size=3)
        dist = rng.random((rows.sum(), cols.sum())) * 5
        dist = segmented_distance(dist, np.repeat([0, 1, 2], rows), np.repeat([0, 1, 2], cols))
        assert dtw_cost(dist) == pytest.approx(naive_dtw(dist), rel=1e-12)


def test_ndtw_identical_paths_is_one() -> None:
    pts = [0.0, 1.5, 2.0, 7.0]
    assert ndtw(line_dist(pts, pts), threshold=3.0) == 1.0


@pytest.mark.parametrize("n, d, th", [(5, 1.5, 3.0), (1, 0.3, 1.0), (12, 4.0, 2.0)])
def test_ndtw_shifted_path(n: int, d: float, th: float) -> None:
    # Reference (i, 0), query (i, d): every cell costs >= d and the diagonal costs exactly d per
    # reference point, so DTW = n * d and nDTW = exp(-n * d / (n * th)) = exp(-d / th).
    ref = np.stack([np.arange(n, dtype=float), np.zeros(n)], axis=1)
    query = ref + np.array([0.0, d])
    dist = np.linalg.norm(ref[:, None, :] - query[None, :, :], axis=-1)
    assert dtw_cost(dist) == pytest.approx(n * d)
    assert ndtw(dist, th) == pytest.approx(math.exp(-n * d / (n * th)))


def test_ndtw_edge_cases() -> None:
    assert ndtw(np.array([[INF]]), 3.0) == 0.0
    assert ndtw(np.zeros((0, 2)), 3.0) == 0.0
    # ref [0, 1, 2], query [0, 2]: DTW = 1 (hand case above), n_ref = 3.
    assert ndtw(line_dist([0, 1, 2], [0, 2]), 3.0) == pytest.approx(math.exp(-1 / 9))
    for bad in (0.0, -1.0, INF, math.nan):
        with pytest.raises(ValueError, match="threshold"):
            ndtw(np.zeros((1, 1)), bad)


def test_segmented_distance_masks_across_segments() -> None:
    dist = np.arange(12, dtype=float).reshape(3, 4)
    out = segmented_distance(dist, [0, 0, 1], [0, 1, 1, 1])
    expected = np.array(
        [
            [0.0, INF, INF, INF],
            [4.0, INF, INF, INF],
            [INF, 9.0, 10.0, 11.0],
        ]
    )
    np.testing.assert_array_equal(out, expected)
    assert dist[0, 1] == 1.0  # the input is not modified
    with pytest.raises(ValueError, match="segment labels"):
        segmented_distance(dist, [0, 1], [0, 1, 1, 1])


@pytest.mark.parametrize("seed", range(15))
def test_tour_ndtw_equals_block_decomposition(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    th = 3.0
    k = int(rng.integers(1, 5))
    dists = [rng.random((rng.integers(1, 8), rng.integers(1, 8))) * 4 for _ in range(k)]
    total_dtw = sum(naive_dtw(d) for d in dists)
    total_ref = sum(d.shape[0] for d in dists)
    assert tour_ndtw(dists, th) == pytest.approx(math.exp(-total_dtw / (total_ref * th)))


def test_tour_ndtw_perfect_tour_is_one() -> None:
    episodes = [[0.0, 1.0, 2.0], [5.0, 4.0], [2.0, 2.5, 3.0, 9.0]]
    assert tour_ndtw([line_dist(p, p) for p in episodes], 3.0) == 1.0


def test_tour_ndtw_masking_matters() -> None:
    # Episode 1: ref [0, 1], agent [0, 1] -> DTW 0.
    # Episode 2: ref [5, 6], agent [1, 6]; dist = [[4, 1], [5, 0]]:
    #   D11=4, D12=1+4=5, D21=5+4=9, D22=0+min(D12=5, D21=9, D11=4)=4 -> DTW 4.
    # Masked tour: DTW = 0 + 4, n_ref = 4 -> exp(-4 / 12).
    # Unmasked, the agent's point 1 of episode 2 aligns to reference point 1 of episode 1 for
    # free: (0,0)=0, (1,1)=0, (1,1')=0, (5,6')=1, (6,6')=0 -> DTW 1 -> exp(-1 / 12), higher.
    ref1, agent1 = [0.0, 1.0], [0.0, 1.0]
    ref2, agent2 = [5.0, 6.0], [1.0, 6.0]
    th = 3.0
    masked = tour_ndtw([line_dist(ref1, agent1), line_dist(ref2, agent2)], th)
    unmasked = ndtw(line_dist(ref1 + ref2, agent1 + agent2), th)
    assert masked == pytest.approx(math.exp(-4 / 12))
    assert unmasked == pytest.approx(math.exp(-1 / 12))
    assert unmasked > masked


def test_tour_ndtw_infinite_episode_and_bad_input() -> None:
    # An episode whose only alignment is inf zeroes the whole tour.
    assert tour_ndtw([np.zeros((2, 2)), np.array([[INF]])], 3.0) == 0.0
    with pytest.raises(ValueError, match="at least one episode"):
        tour_ndtw([], 3.0)
    with pytest.raises(ValueError, match="episode 1"):
        tour_ndtw([np.zeros((2, 2)), np.zeros((0, 2))], 3.0)
    with pytest.raises(ValueError, match="threshold"):
        tour_ndtw([np.zeros((1, 1))], 0.0)


def test_weighted_tour_score() -> None:
    # (2 * 1.0 + 4 * 0.5 + 2 * 0.0) / (2 + 4 + 2) = 4 / 8.
    assert weighted_tour_score([1.0, 0.5, 0.0], [2, 4, 2]) == pytest.approx(0.5)
    assert weighted_tour_score([0.3], [7]) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="one episode count"):
        weighted_tour_score([1.0, 0.5], [2])
    with pytest.raises(ValueError, match="no tours"):
        weighted_tour_score([], [])
    with pytest.raises(ValueError, match="positive"):
        weighted_tour_score([1.0], [0])
