"""The two scoring protocols of ``dataforge ir2r score``: the authors' code and the paper's text.

``ivln`` (the default) follows what the published numbers were computed with:

- discrete, IVLN ``finetune_src/r2r/env.py`` (``R2RBatch._eval_item``): success is NE < d
  (``ERROR_MARGIN`` = 3), oracle success likewise strict; SPL = success x L_ref / max(TL, L_ref,
  0.01) with L_ref the length of the reference path (graph distances between its consecutive
  viewpoints), not the shortest start-goal distance; a trajectory must start at the reference
  path's first viewpoint (an assertion there).
- t-nDTW, IVLN ``finetune_src/r2r/eval_utils.py::compute_tour_ndtw`` and IVLN-CE
  ``habitat_extensions/tour_ndtw.py::compute_tour_ndtw``: one DTW (step pattern symmetric1, the
  plain recursion) over the concatenated agent and reference points with a window that pins
  every episode boundary: wherever the episode changes, the reference's stopping point may be
  matched only to the agent's stopping point and the next reference start only to the agent's
  next start (``alignments_from_paths``, ``window_align_func``). The tour's first start and last
  stop are not pinned (``dataforge.nav.dtw.tour_ndtw(pinned=True)``). exp(-DTW / (reference
  points x d_th)).
- continuous (IR2R-CE): IVLN-CE's ``tour_ndtw.py`` calls ``dtw.dtw`` without ``dist_method``, so
  its t-nDTW uses straight-line (Euclidean) distances between positions; ``novel_only`` drops
  consecutive repeated agent points (the reference keeps them); ``compute_episodes_per_tour``
  counts the episode changes along a tour, so a tour of n episodes weighs n - 1. Episodic
  measures are VLN-CE's and habitat-lab's: success and oracle success strict (< 3 m, geodesic),
  SPL over the geodesic start-goal distance, path length and episode nDTW Euclidean with
  repeated points dropped. The agent starts an episode where IVLN-CE's oracle left it: within
  ``FORWARD_STEP_SIZE`` (0.25 m, the shortest-path follower's goal radius) of the start, unless
  ``PRECISE_EPISODE_START`` teleports it there.

``paper`` keeps the paper's wording (Eq. 2: points of different episodes are infinitely far apart)
and the R2R definitions dataforge used before: NE <= d, SPL over the shortest distance, every
distance from the scorer's distance function, tours weighted by their episode count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dataforge.errors import MalformedInputError, UsageError
from dataforge.nav.metrics import EpisodeMetrics, episode_metrics

PROTOCOLS = ("ivln", "paper")
# IVLN-CE's oracle stops within FORWARD_STEP_SIZE of the next start (ShortestPathFollower's goal
# radius in VLNCEIterativeEnv); PRECISE_EPISODE_START defaults to False.
CE_START_TOLERANCE_M = 0.25

Distance = Callable[[Sequence[Any], Sequence[Any]], np.ndarray]


@dataclass(frozen=True)
class Rules:
    """What a protocol decides, for one setting (discrete or continuous)."""

    protocol: str
    success: str  # "NE < d" or "NE <= d"
    spl_denominator: str  # "reference path length" or "shortest distance"
    tour_alignment: str  # "pinned boundaries" or "infinite across episodes"
    tour_distance: str  # "scorer" or "euclidean"
    tour_weight: str  # "episodes" or "episodes - 1"
    episode_distance: str  # TL and episode nDTW: "scorer" or "euclidean"
    drop_repeated_points: bool  # agent points equal to the previous one are dropped

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def rules(protocol: str, *, continuous: bool) -> Rules:
    if protocol == "paper":
        return Rules(
            protocol="paper",
            success="NE <= d",
            spl_denominator="shortest distance",
            tour_alignment="infinite across episodes",
            tour_distance="scorer",
            tour_weight="episodes",
            episode_distance="scorer",
            drop_repeated_points=False,
        )
    if protocol != "ivln":
        raise UsageError(f"--protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    if continuous:
        return Rules(
            protocol="ivln",
            success="NE < d",
            spl_denominator="shortest distance",
            tour_alignment="pinned boundaries",
            tour_distance="euclidean",
            tour_weight="episodes - 1",
            episode_distance="euclidean",
            drop_repeated_points=True,
        )
    return Rules(
        protocol="ivln",
        success="NE < d",
        spl_denominator="reference path length",
        tour_alignment="pinned boundaries",
        tour_distance="scorer",
        tour_weight="episodes",
        episode_distance="scorer",
        drop_repeated_points=False,
    )


def euclidean(a: Sequence[Any], b: Sequence[Any]) -> np.ndarray:
    pa = np.asarray(a, dtype=np.float64).reshape(-1, 3)
    pb = np.asarray(b, dtype=np.float64).reshape(-1, 3)
    return np.linalg.norm(pa[:, None, :] - pb[None, :, :], axis=-1)


def drop_repeats(points: Sequence[Any]) -> list[Any]:
    """The points without those equal to their predecessor (IVLN-CE's ``novel_only``)."""
    out: list[Any] = []
    for p in points:
        if not out or p != out[-1]:
            out.append(p)
    return out


def check_start(eid: str, route: Sequence[Any], traj: Sequence[Any], continuous: bool) -> None:
    """A trajectory starts at its episode's start (IVLN asserts it; IVLN-CE's oracle leaves the
    agent within ``CE_START_TOLERANCE_M`` of it)."""
    start, first = route[0], traj[0]
    if isinstance(start, str) or isinstance(first, str):
        if first == start:
            return
        offset = ""
    else:
        gap = float(euclidean([first], [start])[0, 0])
        tol = CE_START_TOLERANCE_M if continuous else 1e-6
        if gap <= tol:
            return
        offset = f", {gap:.2f} m away (tolerance {tol:g} m)"
    raise MalformedInputError(
        f"episode {eid}: the trajectory starts at {_show(first)}, not at the episode's start "
        f"{_show(start)}{offset} (IVLN requires it; --allow-offset-start scores it anyway)"
    )


def _show(p: str | Sequence[float]) -> str:
    if isinstance(p, str):
        return p
    return "[" + ", ".join(f"{float(v):.3f}" for v in p) + "]"


def ivln_episode(
    route: Sequence[Any],
    traj: Sequence[Any],
    distance: Distance,
    r: Rules,
    *,
    success_distance: float,
    ndtw_threshold: float,
    reference_to_trajectory: np.ndarray | None = None,
) -> EpisodeMetrics:
    """One episode's TL, NE, OS, SR, SPL, nDTW under the ``ivln`` rules (see the module doc):
    :func:`dataforge.nav.metrics.episode_metrics` with strict success, the rules' SPL
    denominator and point distance, on the agent's points without repeats where the rules
    drop them."""
    agent = drop_repeats(traj) if r.drop_repeated_points else list(traj)
    return episode_metrics(
        list(route),
        agent,
        distance,
        success_distance=success_distance,
        ndtw_threshold=ndtw_threshold,
        reference_to_trajectory=reference_to_trajectory,
        strict=True,
        spl_over_reference=r.spl_denominator == "reference path length",
        path_distance=euclidean if r.episode_distance == "euclidean" else None,
    )


def tour_weight(r: Rules, episodes: int) -> int:
    return episodes - 1 if r.tour_weight == "episodes - 1" else episodes


def weighted_mean(scores: Sequence[float], weights: Sequence[int], r: Rules) -> float:
    total = sum(weights)
    if total <= 0:
        raise UsageError(
            f"no tour weighs anything under protocol {r.protocol} (tour weight: {r.tour_weight})"
        )
    return float(np.dot(np.asarray(weights, float), np.asarray(scores, float)) / total)
