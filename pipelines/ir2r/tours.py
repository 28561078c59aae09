"""Tours of one scene: inter-navigable sets of paths, each ordered by an open ATSP, repeated.

1. Oracle distances between paths: tip-to-tail, cost(i, j) = geodesic end(i) -> start(j);
   tip-to-tip (the test-server variant), cost(i, j) = geodesic start(i) -> start(j).
2. Sets: strongly connected components of "j can follow i" (finite cost). Within a set every
   path can follow every other through the set; sets with fewer than ``min_paths`` paths are
   dropped (and reported), which also drops scenes with a single path.
3. Order: the open tour (free first and last path) of minimum total cost, solved on integer
   centimetres by ``dataforge.tsp``.
4. Repetitions: with n = the smallest episode count of any path in the set, the tour is repeated
   n times; each path's episodes are permuted once (seeded) and repetition r uses the r-th.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dataforge.errors import MalformedInputError
from dataforge.nav.oracle import GeodesicOracle
from dataforge.pipelines.ir2r.episodes import NavPath
from dataforge.tsp import mutually_reachable_groups, solve_open_path, to_integer_costs

ORDERINGS = ("tip-to-tail", "tip-to-tip")


@dataclass(frozen=True)
class Tour:
    """One repetition of one set's ordered tour."""

    scene: str
    set_index: int
    repetition: int
    paths: tuple[NavPath, ...]
    instruction: tuple[int, ...]  # index into each path's episodes
    transition_m: tuple[float, ...]  # oracle distance into each episode; 0 for the first
    cost_cm: int
    solver: str
    optimal: bool | None

    @property
    def episode_ids(self) -> list[Any]:
        return [p.episodes[k] for p, k in zip(self.paths, self.instruction, strict=True)]


@dataclass(frozen=True)
class SceneTours:
    scene: str
    tours: tuple[Tour, ...]
    sets: tuple[tuple[int, ...], ...]  # path ids of each kept set, in tour order of set index
    dropped: tuple[int, ...]  # path ids in sets smaller than min_paths


def check_episodes_once(scenes: Mapping[str, Sequence[Sequence[Any]]], where: str) -> None:
    """Every episode (ids compared as strings, as scoring does) is in one tour once: else one
    line naming ``where`` (the file or dataset read), the episode and both tours (``<scene>
    tour <k>``, k counted from 0 within the scene)."""
    seen: dict[str, str] = {}
    for scene, tours in scenes.items():
        for k, tour in enumerate(tours):
            here = f"{scene} tour {k}"
            for episode in tour:
                key = str(episode)
                if key in seen:
                    both = f"twice in {here}" if seen[key] == here else f"in {seen[key]} and {here}"
                    raise MalformedInputError(f"{where}: episode {key} is {both}")
                seen[key] = here


def transition_costs(paths: Sequence[NavPath], oracle: GeodesicOracle, ordering: str) -> np.ndarray:
    """``n x n`` metres: cost of following path i by path j (diagonal 0)."""
    if ordering not in ORDERINGS:
        raise ValueError(f"ordering must be one of {ORDERINGS}, got {ordering!r}")
    origins = [p.end if ordering == "tip-to-tail" else p.start for p in paths]
    d = np.array(oracle.distances(origins, [p.start for p in paths]), dtype=np.float64)
    np.fill_diagonal(d, 0.0)
    return d


def build_scene_tours(
    scene: str,
    paths: Sequence[NavPath],
    oracle: GeodesicOracle,
    rng: np.random.Generator,
    *,
    ordering: str = "tip-to-tail",
    solver: str = "elkai",
    min_paths: int = 2,
    runs: int = 3,
    time_limit_s: float = 60.0,
) -> SceneTours:
    """All tours of one scene (see the module docstring). ``paths`` sorted by path id."""
    paths = sorted(paths, key=lambda p: p.path_id)
    cost_m = transition_costs(paths, oracle, ordering)
    groups = mutually_reachable_groups(np.isfinite(cost_m))
    tours: list[Tour] = []
    sets: list[tuple[int, ...]] = []
    dropped: list[int] = []
    for group in groups:
        if len(group) < min_paths:
            dropped += [paths[i].path_id for i in group]
            continue
        sub = cost_m[np.ix_(group, group)]
        solution = solve_open_path(
            to_integer_costs(sub), solver, runs=runs, time_limit_s=time_limit_s
        )
        order = [group[k] for k in solution.order]
        transition = [0.0] + [float(cost_m[a, b]) for a, b in itertools.pairwise(order)]
        n = min(len(paths[i].episodes) for i in group)
        # One permutation per path, drawn in path-id order, so the tour order does not
        # change which instructions a path gets.
        perms = {i: rng.permutation(len(paths[i].episodes))[:n] for i in group}
        set_index = len(sets)
        sets.append(tuple(paths[i].path_id for i in order))
        for r in range(n):
            tours.append(
                Tour(
                    scene=scene,
                    set_index=set_index,
                    repetition=r,
                    paths=tuple(paths[i] for i in order),
                    instruction=tuple(int(perms[i][r]) for i in order),
                    transition_m=tuple(transition),
                    cost_cm=solution.cost,
                    solver=solution.solver,
                    optimal=solution.optimal,
                )
            )
    return SceneTours(scene, tuple(tours), tuple(sets), tuple(sorted(dropped)))
