"""Scoring IR2R predictions: episodic TL/NE/OS/nDTW/SR/SPL and the tour-level t-nDTW.

Two protocols (``protocols.py``): ``ivln``, the default, is what the authors' code computes
(IVLN ``env.py`` and ``eval_utils.py``, IVLN-CE ``tour_ndtw.py``); ``paper`` is the paper's
wording. Under ``paper``, t-nDTW (Krantz et al., Eq. 2) is, per tour, DTW over the concatenated
agent-phase points and the concatenated reference paths, where points of different episodes are
infinitely far apart (oracle navigation between episodes is not part of either path); normalised
by the tour's reference points x d_th; tours weighted by their number of episodes. Point
distances are shortest-path distances on the navigation graph (discrete) or geodesics
(continuous), "as in tour generation"; d_th defaults to R2R's 3.0 m (the paper does not state
it). Under both, a trajectory must start at its episode's start unless ``allow_offset_start``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.errors import MalformedInputError, UsageError
from dataforge.inputs import read_json
from dataforge.nav.dtw import tour_ndtw
from dataforge.nav.metrics import EpisodeMetrics, episode_metrics, mean_metrics
from dataforge.nav.oracle import GeodesicOracle
from dataforge.pipelines.ir2r import protocols as pr
from dataforge.pipelines.ir2r.episodes import NavPath, is_xyz
from dataforge.pipelines.ir2r.tours import check_episodes_once

PREDICTIONS_WHAT = "predictions"
TOURS_WHAT = "IVLN tours"
Distance = Callable[[Sequence[Any], Sequence[Any]], np.ndarray]


@dataclass(frozen=True)
class Score:
    split: str
    episodes: int
    tours: int
    t_ndtw: float
    episodic: dict[str, float]
    per_episode: dict[str, dict[str, Any]]
    protocol: str = "ivln"
    rules: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, *, per_episode: bool = False) -> dict[str, Any]:
        d = {
            "split": self.split,
            "protocol": self.protocol,
            "rules": self.rules,
            "episodes": self.episodes,
            "tours": self.tours,
            "t_ndtw": self.t_ndtw,
            **self.episodic,
        }
        if per_episode:
            d["per_episode"] = self.per_episode
        return d


def load_tours(path: Path, split: str | None = None) -> tuple[str, dict[str, list[list[Any]]]]:
    doc = read_json(path, TOURS_WHAT)
    if not isinstance(doc, dict) or not doc:
        raise MalformedInputError(f"{path}: {TOURS_WHAT} must be {{split: {{scene: [[id, ...]]}}}}")
    if split is None:
        if len(doc) != 1:
            raise UsageError(f"{path} holds splits {sorted(doc)}: choose one with --split")
        split = next(iter(doc))
    if split not in doc:
        raise UsageError(f"{path} has no split {split!r} (it has {sorted(doc)})")
    scenes = doc[split]
    if not isinstance(scenes, dict):
        raise MalformedInputError(f"{path}: split {split!r} is not {{scene: [[id, ...]]}}")
    for scene, tours in scenes.items():
        if not (isinstance(tours, list) and all(isinstance(t, list) and t for t in tours)):
            raise MalformedInputError(f"{path}: scene {scene}: tours are not non-empty lists")
    check_episodes_once(scenes, str(path))
    return split, scenes


def load_predictions(path: Path) -> dict[str, list[Any]]:
    """``{id: [viewpoint, ...]}``, ``{id: {"trajectory": [[x, y, z], ...]}}`` or the R2R
    submission list ``[{"instr_id": id, "trajectory": [[viewpoint, heading, elevation], ...]}]``.
    Keys are compared as strings."""
    doc = read_json(path, PREDICTIONS_WHAT)
    items: list[tuple[Any, Any]]
    if isinstance(doc, dict):
        items = list(doc.items())
    elif isinstance(doc, list):
        try:
            items = [(r["instr_id"], r["trajectory"]) for r in doc]
        except (TypeError, KeyError):
            raise MalformedInputError(
                f"{path}: a list of predictions needs instr_id and trajectory in every record"
            ) from None
    else:
        raise MalformedInputError(f"{path}: {PREDICTIONS_WHAT} must be a JSON object or list")
    out: dict[str, list[Any]] = {}
    for key, value in items:
        if str(key) in out:
            raise MalformedInputError(f"{path}: prediction {key}: two trajectories for this id")
        traj = value.get("trajectory") if isinstance(value, dict) else value
        if not isinstance(traj, list) or not traj:
            raise MalformedInputError(f"{path}: prediction {key}: empty or not a trajectory")
        out[str(key)] = [_point(p, path, key, step) for step, p in enumerate(traj)]
    return out


def _point(p: object, path: Path, key: object, step: int) -> str | tuple[float, ...]:
    if isinstance(p, str):
        return p
    if isinstance(p, list) and p and isinstance(p[0], str):
        return p[0]  # [viewpoint, heading, elevation]
    if isinstance(p, list) and is_xyz(p):
        xyz = tuple(float(v) for v in p)
        if not all(math.isfinite(v) for v in xyz):
            raise MalformedInputError(f"{path}: prediction {key}: step {step}: {p} is not finite")
        return xyz
    raise MalformedInputError(
        f"{path}: prediction {key}: step {step}: {p!r} is not a viewpoint or xyz point"
    )


def reference_routes(paths: Sequence[NavPath]) -> dict[str, tuple[str, tuple[Any, ...]]]:
    """Episode id (as a string) -> (scene, reference route)."""
    return {str(e): (p.scene, p.route) for p in paths for e in p.episodes}


def score_tours(
    split: str,
    tours: Mapping[str, list[list[Any]]],
    references: Mapping[str, tuple[str, tuple[Any, ...]]],
    predictions: Mapping[str, list[Any]],
    distance_for_scene: Callable[[str], Distance],
    *,
    ndtw_threshold: float = 3.0,
    success_distance: float = 3.0,
    protocol: str = "ivln",
    continuous: bool = False,
    allow_offset_start: bool = False,
) -> Score:
    """Score every episode of every tour; every tour episode needs a prediction.

    ``protocol``: ``ivln`` (the authors' code) or ``paper`` (see ``protocols.py``);
    ``continuous`` picks IVLN-CE's rules under ``ivln`` and the start tolerance.
    """
    r = pr.rules(protocol, continuous=continuous)
    wanted = [str(e) for scene_tours in tours.values() for t in scene_tours for e in t]
    missing = [e for e in wanted if e not in predictions]
    if missing:
        raise UsageError(
            f"{len(missing)} of {len(wanted)} tour episodes have no prediction "
            f"(first: {missing[0]})"
        )
    unknown = [e for e in wanted if e not in references]
    if unknown:
        raise UsageError(
            f"{len(unknown)} tour episodes are not in the reference file (first: {unknown[0]})"
        )
    per_episode: dict[str, EpisodeMetrics] = {}
    tour_scores: list[float] = []
    weights: list[int] = []
    for scene in sorted(tours):
        distance = distance_for_scene(scene)
        tour_distance = pr.euclidean if r.tour_distance == "euclidean" else distance
        for tour in tours[scene]:
            mats = []
            for eid in map(str, tour):
                ref_scene, route = references[eid]
                if ref_scene != scene:
                    raise UsageError(f"episode {eid} is in scene {ref_scene}, its tour in {scene}")
                traj = predictions[eid]
                if not allow_offset_start:
                    pr.check_start(eid, route, traj, continuous)
                agent = pr.drop_repeats(traj) if r.drop_repeated_points else list(traj)
                matrix = np.asarray(tour_distance(list(route), agent), dtype=np.float64)
                # One reference x trajectory matrix serves the episode's nDTW and the tour's
                # when both measure points alike (every protocol's rules do).
                shared = matrix if r.tour_distance == r.episode_distance else None
                if r.protocol == "paper":
                    per_episode[eid] = episode_metrics(
                        list(route),
                        traj,
                        distance,
                        success_distance=success_distance,
                        ndtw_threshold=ndtw_threshold,
                        reference_to_trajectory=shared,
                    )
                else:
                    per_episode[eid] = pr.ivln_episode(
                        route,
                        traj,
                        distance,
                        r,
                        success_distance=success_distance,
                        ndtw_threshold=ndtw_threshold,
                        reference_to_trajectory=shared,
                    )
                mats.append(matrix)
            pinned = r.tour_alignment == "pinned boundaries"
            tour_scores.append(tour_ndtw(mats, ndtw_threshold, pinned=pinned))
            weights.append(pr.tour_weight(r, len(tour)))
    return Score(
        split=split,
        episodes=len(per_episode),
        tours=len(weights),
        t_ndtw=pr.weighted_mean(tour_scores, weights, r),
        episodic=mean_metrics(per_episode.values()),
        per_episode={k: v.to_dict() for k, v in per_episode.items()},
        protocol=r.protocol,
        rules=r.to_dict(),
    )


def oracle_distance(oracle: GeodesicOracle) -> Distance:
    return oracle.distances


def euclidean_distance(a: Sequence[Any], b: Sequence[Any]) -> np.ndarray:
    pa = np.asarray(a, dtype=np.float64).reshape(-1, 3)
    pb = np.asarray(b, dtype=np.float64).reshape(-1, 3)
    return np.linalg.norm(pa[:, None, :] - pb[None, :, :], axis=-1)


def write_json(path: Path, doc: object) -> None:
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")
