"""What ``dataforge validate``, ``stats`` and ``inspect --preview`` know about MultiON oracle
trajectories (the ``multion-oracle`` pipeline). The checks read the episodes dataset the
trajectories were made from (its location is in the manifest's inputs)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.pipelines.multion.agent import FOUND, rollout, start_pose, yaw_from_rotation
from dataforge.pipelines.multion.scenes import SceneSpace
from dataforge.registry import PipelineStats
from dataforge.store.reader import Dataset, StoredEpisode

INVARIANTS = {
    "replay": "the actions, replayed from the episode's start through the motion model (cylinders "
    "blocking as in the episodes dataset), give the stored positions and headings, and the goal "
    "index advances exactly at each FOUND",
    "found": "every FOUND is called within the success distance (geodesic) of the current goal",
    "success": "every episode finds all its goals in order within the step limit, the last action "
    "being the last FOUND",
}
# (episodes dataset, scene) -> the scene's navigable space, arrays and the episodes' config
_CACHE: OrderedDict[tuple[str, str], tuple[SceneSpace, dict[str, np.ndarray], dict[str, Any]]] = (
    OrderedDict()
)


def _scene(
    ep: StoredEpisode,
) -> tuple[SceneSpace, dict[str, np.ndarray], dict[str, Any], dict[str, Any]]:
    """The episodes dataset's stored scene of ``ep``: its space, arrays, and the episodes'
    and the oracle's configs (cached for the scenes last used)."""
    from dataforge.pipelines.multion.scenes import stored_space
    from dataforge.store import open_dataset

    manifest = ep.dataset.manifest
    root = str(manifest.inputs.get("locations", {}).get("episodes", ""))
    scene = ep.metadata["scene"]
    key = (root, scene)
    if key not in _CACHE:
        if not root or not (Path(root) / "manifest.json").is_file():
            raise FileNotFoundError(f"the episodes dataset {root or '?'} is not there")
        with open_dataset(root) as ds:
            stored = ds[scene]
            arrays = {k: stored[k].read() for k in stored}
            meta = dict(stored.metadata)
            config = dict(ds.manifest.config)
        space = stored_space(meta, arrays["house_json"].tobytes(), config)
        _CACHE[key] = (space, arrays, config)
        while len(_CACHE) > 2:
            _CACHE.popitem(last=False)
    space, arrays, config = _CACHE[key]
    return space, arrays, config, dict(manifest.config)


def _row(arrays: dict[str, np.ndarray], episode_id: str) -> int:
    hits = np.nonzero(arrays["episode_id"] == int(episode_id))[0]
    if not len(hits):
        raise KeyError(f"episode {episode_id} is not in the episodes dataset")
    return int(hits[0])


def check_episode(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    meta = ep.metadata
    try:
        space, arrays, config, oracle = _scene(ep)
        i = _row(arrays, meta["episode_id"])
    except (FileNotFoundError, KeyError) as exc:
        yield "replay", str(exc).strip("'\"")
        return
    actions = ep["action"].read().astype(int)
    positions = ep["position"].read()
    rotations = ep["rotation"].read()
    goal_index = ep["goal_index"].read().astype(int)
    goals = arrays["goal_position"][i]
    m = len(goals)
    grid = space.move_grid(goals, config)
    start = start_pose(arrays["start_position"][i], arrays["start_rotation"][i])
    if len(positions) != len(actions) + 1 or len(rotations) != len(actions) + 1:
        yield "replay", f"{len(actions)} actions but {len(positions)} positions"
        return
    if np.any((actions < 0) | (actions > 3)):
        yield "replay", "an action id outside 0..3"
        return
    poses = rollout(start, actions.tolist(), grid, oracle["forward_step"], oracle["turn_angle"])
    xyz = np.array([p.xyz for p in poses])
    yaw = np.array([p.yaw for p in poses])
    stored_yaw = np.array([yaw_from_rotation(r) for r in rotations])
    turn = np.abs((yaw - stored_yaw + 180.0) % 360.0 - 180.0)
    expected_index = np.concatenate([[0], np.cumsum(actions == FOUND)])
    if not np.allclose(xyz, positions, atol=1e-6) or turn.max(initial=0.0) > 1e-6:
        bad = int(np.argmax(np.any(np.abs(xyz - positions) > 1e-6, axis=1) | (turn > 1e-6)))
        yield "replay", f"the stored pose after action {bad - 1} is not where the actions lead"
    elif not np.array_equal(np.minimum(expected_index, m), goal_index):
        yield "replay", "goal_index does not advance exactly at each FOUND"
    success = float(oracle["success_distance"])
    found = np.nonzero(actions == FOUND)[0]
    for n, k in enumerate(found[:m]):
        d = space.nav.distance(positions[k], goals[n])
        if not d <= success + 1e-9:
            yield "found", f"FOUND at action {k} is {d:.2f} m from goal {n + 1} (> {success} m)"
            break
    if len(found) != m or (len(actions) and actions[-1] != FOUND) or not meta.get("success"):
        yield "success", f"{len(found)} of {m} goals found ({meta.get('ended')})"
    elif len(actions) > int(oracle["max_steps"]):
        yield "success", f"{len(actions)} actions, over the limit of {oracle['max_steps']}"


def stats(ds: Dataset) -> PipelineStats:
    lengths: list[float] = []
    ratio: list[float] = []
    ends: dict[str, int] = {}
    for ep in ds.episodes():
        meta = ep.metadata
        lengths.append(float(ep["action"].shape[0]))
        if meta["geodesic_distance_m"] > 0:
            ratio.append(meta["path_length_m"] / meta["geodesic_distance_m"])
        ends[meta["ended"]] = ends.get(meta["ended"], 0) + 1
    n = len(lengths)
    return PipelineStats(
        counts={
            "episodes": n,
            "success": round(ends.get("success", 0) / n, 4) if n else 0.0,
            "ended": dict(sorted(ends.items())),
            "actions": int(sum(lengths)),
            "observations": int(sum(lengths)) + n,
        },
        distributions={
            "actions_per_episode": lengths,
            "path_over_geodesic": ratio,
        },
    )


def preview(ep: StoredEpisode, path: Path, step: int | None) -> None:
    """The episode on the house map (shortest path, the oracle's path) beside its frames at the
    start and at each FOUND (``step``: unused)."""
    from dataforge.pipelines.multion.figures import episode_figure, shortest_route

    space, arrays, config, _ = _scene(ep)
    i = _row(arrays, ep.metadata["episode_id"])
    goals = arrays["goal_position"][i]
    start = arrays["start_position"][i]
    grid = space.move_grid(goals, config)
    actions = ep["action"].read()
    frames, titles = [], []
    if "rgb" in ep:
        rgb = ep["rgb"]
        picks = [0, *(int(k) + 1 for k in np.nonzero(actions == FOUND)[0])]
        for k in picks[:6]:
            frames.append(rgb[k])
            titles.append("start" if k == 0 else f"FOUND, step {k}")
    meta = ep.metadata
    episode_figure(
        path,
        grid,
        start,
        yaw_from_rotation(arrays["start_rotation"][i]),
        goals,
        arrays["goal_category"][i],
        title=f"{ep.id}: {len(actions)} actions, path {meta['path_length_m']:.1f} m, geodesic "
        f"{meta['geodesic_distance_m']:.1f} m ({meta['ended']})",
        shortest=shortest_route(grid, [start, *goals]),
        walked=list(ep["position"].read()),
        frames=frames,
        frame_titles=titles,
    )


def preview_frames(ep: StoredEpisode, count: int) -> list[int]:
    n = int(ep["action"].shape[0]) + 1
    return [round(k * (n - 1) / max(count - 1, 1)) for k in range(min(count, n))]
