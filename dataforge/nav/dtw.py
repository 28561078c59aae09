"""Dynamic time warping on precomputed distance matrices: DTW, nDTW and the tour-level t-nDTW.

Everything here takes a matrix ``dist[i, j]``: the distance between reference point ``i`` (rows)
and query point ``j`` (columns), so the same code serves a navigation graph (shortest-path
distances between viewpoints) and a navmesh (geodesic distances between 3D points). ``inf``
marks pairs that may never be aligned (unreachable points, points of different episodes).

- nDTW: Ilharco et al. 2019, "General Evaluation for Instruction Conditioned Navigation Agents".
- t-nDTW: Krantz et al., "Iterative Vision-and-Language Navigation" (CVPR 2023).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from dataforge.errors import UsageError


def _as_distance_matrix(dist: np.ndarray) -> np.ndarray:
    d = np.asarray(dist, dtype=np.float64)
    if d.ndim != 2:
        raise UsageError(f"a distance matrix must be 2-D, got shape {d.shape}")
    if np.isnan(d).any():
        raise UsageError("a distance matrix must not contain NaN")
    if (d < 0).any():
        raise UsageError("distances must be non-negative")
    return d


def _check_threshold(threshold: float) -> float:
    th = float(threshold)
    if not (math.isfinite(th) and th > 0):
        raise UsageError(f"the nDTW threshold must be a positive finite number, got {threshold!r}")
    return th


def _dtw(d: np.ndarray) -> float:
    """DTW of a validated matrix (see :func:`dtw_cost`)."""
    n, m = d.shape
    if n == 0 or m == 0:
        return math.inf
    # prev[j] is DTW(i-1, j) of the 1-based table, prev[0] the border (0 before the first row).
    prev = np.full(m + 1, np.inf)
    prev[0] = 0.0
    cur = np.empty(m + 1)
    for i in range(n):
        c = d[i]
        # Best of the vertical and the diagonal predecessor, plus the cell's own cost.
        a = c + np.minimum(prev[1:], prev[:-1])
        # The horizontal step makes the row a chain: D[j] = min(a[j], c[j] + D[j-1]).
        # Unrolled, D[j] = min over k <= j of a[k] + c[k+1] + ... + c[j] = S[j] + min_k (a[k] -
        # S[k]) with S the cumulative sum of c. An inf cost cuts the chain, so every run of
        # finite costs is solved on its own; cells of inf cost stay inf.
        cur.fill(np.inf)
        finite = np.isfinite(c)
        if finite.all():
            runs = [(0, m)]
        else:
            edges = np.flatnonzero(np.diff(np.concatenate(([False], finite, [False]))))
            runs = list(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))
        for start, stop in runs:
            s = np.cumsum(c[start:stop])
            best = s + np.minimum.accumulate(a[start:stop] - s)
            # The k = j term is a[j] itself; take it directly so it carries no rounding.
            cur[1 + start : 1 + stop] = np.minimum(a[start:stop], best)
        prev, cur = cur, prev
    return float(prev[m])


def dtw_cost(dist: np.ndarray) -> float:
    """Dynamic time warping cost of aligning the reference (rows) with the query (columns).

    ``DTW(i, j) = dist[i, j] + min(DTW(i-1, j), DTW(i, j-1), DTW(i-1, j-1))`` on a 1-based table
    whose ``[0][0]`` is 0 and whose other border cells are ``inf`` (Ilharco et al. 2019), so both
    sequences are covered from their first to their last point. ``inf`` when no alignment has a
    finite cost, including an empty reference or query.
    """
    return _dtw(_as_distance_matrix(dist))


def ndtw(dist: np.ndarray, threshold: float) -> float:
    """Normalised DTW: ``exp(-DTW / (n_ref * threshold))``, in ``[0, 1]``; 0.0 when DTW is inf.

    ``threshold`` is the success distance (3 m in R2R); it must be positive.
    """
    th = _check_threshold(threshold)
    d = _as_distance_matrix(dist)
    cost = _dtw(d)
    if not math.isfinite(cost):
        return 0.0
    return math.exp(-cost / (d.shape[0] * th))


def segmented_distance(
    dist: np.ndarray, ref_segments: ArrayLike, query_segments: ArrayLike
) -> np.ndarray:
    """A copy of ``dist`` with ``inf`` wherever the reference and query segment labels differ.

    This is t-nDTW's masking: points of different episodes of a tour are infinitely far apart.
    """
    d = _as_distance_matrix(dist).copy()
    ref = np.asarray(ref_segments)
    query = np.asarray(query_segments)
    if ref.shape != (d.shape[0],) or query.shape != (d.shape[1],):
        raise UsageError(
            f"segment labels ({ref.shape[0] if ref.ndim else '?'} reference, "
            f"{query.shape[0] if query.ndim else '?'} query) must match the {d.shape} "
            "distance matrix"
        )
    d[ref[:, None] != query[None, :]] = np.inf
    return d


def boundary_pins(ref_sizes: Sequence[int], agent_sizes: Sequence[int]) -> list[tuple[int, int]]:
    """(agent index, reference index) pairs pinned at every change of episode in a tour: the
    episode's stopping points, then the next episode's starting points."""
    pins: list[tuple[int, int]] = []
    a = g = 0
    for k in range(len(ref_sizes) - 1):
        a += agent_sizes[k]
        g += ref_sizes[k]
        pins += [(a - 1, g - 1), (a, g)]
    return pins


def tour_ndtw(dists: Sequence[np.ndarray], threshold: float, *, pinned: bool = False) -> float:
    """t-nDTW's per-tour term (Krantz et al., "Iterative Vision-and-Language Navigation").

    ``dists[k]`` is episode ``k``'s matrix (its reference points x the agent's points in it). The
    episodes are concatenated into one tour matrix whose off-diagonal blocks are ``inf``
    (candidate and target points of different episodes are infinitely far apart), DTW runs over
    the whole concatenation and the result is ``exp(-DTW / (total reference points *
    threshold))``. Only agent-phase points are passed in, so the oracle navigation between
    episodes is excluded. Because of the masking this equals
    ``exp(-sum_k DTW_k / (sum_k n_ref_k * threshold))``.

    ``pinned`` (the IVLN authors' ``compute_tour_ndtw`` window): at every change of episode
    the reference's stopping point may be matched only to the agent's stopping point and the
    next reference start only to the agent's next start (:func:`boundary_pins`; a later pin on
    the same reference point replaces an earlier one); the first cell stays allowed, as their
    DTW (dtw-python) always starts there.
    """
    th = _check_threshold(threshold)
    blocks = [_as_distance_matrix(d) for d in dists]
    if not blocks:
        raise UsageError("a tour needs at least one episode")
    for k, b in enumerate(blocks):
        if 0 in b.shape:
            raise UsageError(
                f"episode {k} of the tour has an empty distance matrix {b.shape}: every episode "
                "needs reference and agent points"
            )
    rows = [b.shape[0] for b in blocks]
    cols = [b.shape[1] for b in blocks]
    tour = np.zeros((sum(rows), sum(cols)))
    r0 = c0 = 0
    for b in blocks:
        tour[r0 : r0 + b.shape[0], c0 : c0 + b.shape[1]] = b
        r0 += b.shape[0]
        c0 += b.shape[1]
    ref_labels = np.repeat(np.arange(len(blocks)), rows)
    query_labels = np.repeat(np.arange(len(blocks)), cols)
    tour = segmented_distance(tour, ref_labels, query_labels)
    if pinned:
        allowed = np.ones(tour.shape, dtype=bool)
        for i, j in boundary_pins(rows, cols):
            allowed[j, :] = False
            allowed[j, i] = True
        allowed[0, 0] = True
        tour[~allowed] = np.inf
    cost = _dtw(tour)
    if not math.isfinite(cost):
        return 0.0
    return math.exp(-cost / (tour.shape[0] * th))


def weighted_tour_score(scores: Sequence[float], episodes_per_tour: Sequence[int]) -> float:
    """t-nDTW's aggregation over tours: ``sum_i |T_i| score_i / sum_j |T_j|``."""
    s = np.asarray(scores, dtype=np.float64)
    w = np.asarray(episodes_per_tour, dtype=np.float64)
    if s.ndim != 1 or s.shape != w.shape:
        raise UsageError(
            f"need one episode count per tour score, got {s.size} scores and {w.size} counts"
        )
    if s.size == 0:
        raise UsageError("no tours to aggregate")
    if (w <= 0).any() or not np.isfinite(w).all():
        raise UsageError("every tour must have a positive number of episodes")
    return float(np.dot(w, s) / w.sum())
