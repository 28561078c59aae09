"""One breaker per invariant of MultiON's oracle trajectories: each rewrites one stored
trajectory so that exactly that invariant is broken (the others still hold: poses are replayed
again after every change of the actions), and re-seals the manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode

from dataforge.pipelines.multion import agent, oracle_checks
from dataforge.store import open_dataset

Arrays = dict[str, np.ndarray]


def _first(root: Path) -> str:
    with open_dataset(root) as ds:
        return ds.episode_ids[0]


def _replayed(root: Path, eid: str, actions: list[int]) -> dict[str, np.ndarray]:
    """Poses, headings and goal indices of ``actions`` replayed as validate replays them."""
    with open_dataset(root) as ds:
        ep = ds[eid]
        space, arrays, config, orc = oracle_checks._scene(ep)
        i = oracle_checks._row(arrays, ep.metadata["episode_id"])
    goals = arrays["goal_position"][i]
    grid = space.move_grid(goals, config)
    start = agent.start_pose(arrays["start_position"][i], arrays["start_rotation"][i])
    poses = agent.rollout(start, actions, grid, orc["forward_step"], orc["turn_angle"])
    index = np.concatenate([[0], np.cumsum(np.array(actions) == agent.FOUND)])
    return {
        "action": np.array(actions, np.int8),
        "position": np.array([p.xyz for p in poses]),
        "rotation": np.array([agent.rotation_from_yaw(p.yaw) for p in poses]),
        "goal_index": np.minimum(index, len(goals)).astype(np.int8),
    }


def _rewrite(root: Path, eid: str, actions: list[int]) -> None:
    new = _replayed(root, eid, actions)

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        n = len(actions) + 1
        for k in ("geodesic_to_goal", "rgb", "depth", "semantic"):
            if k in a:
                a[k] = np.concatenate([a[k], a[k][-1:].repeat(max(0, n - len(a[k])), 0)])[:n]
        a.update(new)

    edit_episode(root, eid, mutate)


def replay(root: Path) -> None:
    """One stored position 1 cm off where the actions lead."""
    eid = _first(root)

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["position"][1, 0] += 0.01

    edit_episode(root, eid, mutate)


def found(root: Path) -> None:
    """The first FOUND is called at the start, before walking (still m FOUNDs, the last one
    last): the walk is replayed so that only the early FOUND is wrong."""
    eid = _first(root)
    with open_dataset(root) as ds:
        actions = ds[eid]["action"].read().astype(int).tolist()
    k = actions.index(agent.FOUND)
    _rewrite(root, eid, [agent.FOUND, *actions[:k], *actions[k + 1 :]])


def success(root: Path) -> None:
    """The last FOUND is dropped: one goal is never found."""
    eid = _first(root)
    with open_dataset(root) as ds:
        actions = ds[eid]["action"].read().astype(int).tolist()
    _rewrite(root, eid, actions[:-1])


BREAKERS = {"replay": replay, "found": found, "success": success}
