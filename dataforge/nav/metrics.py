"""Episode metrics of vision-and-language navigation: TL, NE, OS, SR, SPL and nDTW.

Definitions follow Anderson et al. 2018 (R2R; SPL from "On Evaluation of Embodied Navigation
Agents") and Ilharco et al. 2019 (nDTW). Distances come from a callable ``distance(A, B)`` that
returns the ``len(A) x len(B)`` matrix of distances (``inf``: unreachable), so the same code scores
a navigation graph (points are viewpoint ids, shortest-path distances) and a navmesh (points are
xyz positions, geodesic distances); a :class:`~dataforge.nav.oracle.GeodesicOracle`'s
``distances`` method fits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from itertools import pairwise
from typing import Any, TypeVar

import numpy as np

from dataforge.errors import UsageError
from dataforge.nav.dtw import ndtw as _ndtw

P = TypeVar("P")

DistanceFn = Callable[[Sequence[Any], Sequence[Any]], np.ndarray]
SPL_FLOOR_M = 0.01  # IVLN env.py: SPL over the reference length divides by max(TL, L, 0.01)


@dataclass(frozen=True)
class EpisodeMetrics:
    """One episode's scores. Lengths and errors are in the distance function's units."""

    trajectory_length: float
    navigation_error: float
    oracle_success: bool
    success: bool
    spl: float
    ndtw: float

    def to_dict(self) -> dict[str, float | bool]:
        return asdict(self)


def _length(distance: DistanceFn, points: list[Any]) -> float:
    """The sum of distances between consecutive points, in order. One ``distance`` call per
    distinct point that a step leaves from, to the distinct points reached from it: a step
    costs no search of its own (a long trajectory on a navigation graph revisits its
    viewpoints), and no call is larger than one point x the trajectory's points."""
    keys = [_key(p) for p in points]
    point: dict[Any, Any] = {}
    targets: dict[Any, dict[Any, None]] = {}
    for k, p in zip(keys, points, strict=True):
        point.setdefault(k, p)
    for a, b in pairwise(keys):
        targets.setdefault(a, {})[b] = None
    found: dict[tuple[Any, Any], float] = {}
    for a, reached in targets.items():
        row = _matrix(distance, [point[a]], [point[b] for b in reached])[0]
        found.update(((a, b), float(d)) for b, d in zip(reached, row, strict=True))
    return float(math.fsum(found[step] for step in pairwise(keys)))


def _key(point: Any) -> Any:
    """A point as a dict key: itself when hashable (a viewpoint id, a tuple), else its values."""
    try:
        hash(point)
    except TypeError:
        return ("values", tuple(np.ravel(np.asarray(point, dtype=object)).tolist()))
    return point


def _matrix(distance: DistanceFn, a: list[Any], b: list[Any]) -> np.ndarray:
    d = np.asarray(distance(a, b), dtype=np.float64)
    if d.shape != (len(a), len(b)):
        raise UsageError(
            f"the distance function returned shape {d.shape} for {len(a)} x {len(b)} points"
        )
    return d


def episode_metrics(
    reference: Sequence[P],
    trajectory: Sequence[P],
    distance: Callable[[Sequence[P], Sequence[P]], np.ndarray],
    *,
    success_distance: float = 3.0,
    ndtw_threshold: float = 3.0,
    reference_to_trajectory: np.ndarray | None = None,
    strict: bool = False,
    spl_over_reference: bool = False,
    path_distance: DistanceFn | None = None,
) -> EpisodeMetrics:
    """Score one trajectory against its reference path; the goal is ``reference[-1]``.

    - trajectory length (TL): sum of distances between consecutive trajectory points;
    - navigation error (NE): distance from the final trajectory point to the goal;
    - oracle success (OS): some trajectory point lies within ``success_distance`` of the goal;
    - success (SR): NE <= ``success_distance`` (``strict``: NE < it, and OS likewise, as
      IVLN's ``env.py`` counts);
    - SPL: ``success * shortest / max(shortest, TL)`` with shortest = distance(start, goal),
      where start is ``reference[0]``; 1.0 for a success when start and goal coincide. With
      ``spl_over_reference`` (IVLN's ``env.py``): ``success * L / max(TL, L, 0.01)``, L the
      reference path's length (distances between its consecutive points);
    - nDTW: :func:`dataforge.nav.dtw.ndtw` of the reference x trajectory distances
      (``reference_to_trajectory`` when the caller already has that matrix).

    ``path_distance`` (default ``distance``) measures TL and nDTW; NE, OS and the shortest
    distance always use ``distance``.
    """
    ref = list(reference)
    traj = list(trajectory)
    if not traj:
        raise UsageError("cannot score an empty trajectory: it needs at least the start point")
    if not ref:
        raise UsageError("cannot score against an empty reference path")
    if not (success_distance >= 0):
        raise UsageError(f"success_distance must be >= 0, got {success_distance!r}")
    goal = ref[-1]
    local = distance if path_distance is None else path_distance

    trajectory_length = _length(local, traj)
    to_goal = _matrix(distance, traj, [goal])[:, 0]
    navigation_error = float(to_goal[-1])
    if strict:
        oracle_success = bool(np.min(to_goal) < success_distance)
        success = navigation_error < success_distance
    else:
        oracle_success = bool(np.min(to_goal) <= success_distance)
        success = navigation_error <= success_distance
    if spl_over_reference:
        best = _length(distance, ref)
        spl = (
            best / max(trajectory_length, best, SPL_FLOOR_M)
            if success and math.isfinite(best)
            else 0.0
        )
    else:
        shortest = float(_matrix(distance, [ref[0]], [goal])[0, 0])
        if not success or not math.isfinite(shortest):
            spl = 0.0
        elif shortest == 0:
            spl = 1.0
        else:
            spl = shortest / max(shortest, trajectory_length)
    if reference_to_trajectory is None:
        reference_to_trajectory = _matrix(local, ref, traj)
    elif np.shape(reference_to_trajectory) != (len(ref), len(traj)):
        raise UsageError(
            f"reference_to_trajectory has shape {np.shape(reference_to_trajectory)}, "
            f"expected {len(ref)} x {len(traj)}"
        )
    score = _ndtw(reference_to_trajectory, ndtw_threshold)
    return EpisodeMetrics(
        trajectory_length=trajectory_length,
        navigation_error=navigation_error,
        oracle_success=oracle_success,
        success=success,
        spl=spl,
        ndtw=score,
    )


def mean_metrics(items: Iterable[EpisodeMetrics]) -> dict[str, float]:
    """Mean of every field over episodes; booleans become rates (OS and SR in ``[0, 1]``)."""
    rows = list(items)
    if not rows:
        raise UsageError("no episodes to average")
    return {
        f.name: float(np.mean([float(getattr(r, f.name)) for r in rows]))
        for f in fields(EpisodeMetrics)
    }
