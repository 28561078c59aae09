"""One breaker per MultiON invariant: each changes one stored scene (and, where the invariant is
not about the files beside the shards, writes that scene's content file again to match) so that
exactly that invariant is broken, and re-seals the manifest (tests/test_conformance.py runs
them on the tiny example)."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode, edit_file

from dataforge.pipelines.multion.episodes import content_file, document, episode_dicts, gz_json
from dataforge.store.manifest import read_manifest
from dataforge.store.reader import open_dataset

SCENE = "procthor-val-000000"
OTHER = "procthor-val-000001"
Arrays = dict[str, np.ndarray]
Mutate = Callable[[Arrays, dict[str, Any]], None]


def _split(root: Path) -> str:
    return str(read_manifest(root).config["split"])


def _edit_scene(root: Path, scene: str, mutate: Mutate) -> None:
    """Change a stored scene, then write its content file from what is now stored (so the
    challenge files stay consistent)."""
    edit_episode(root, scene, mutate)
    with open_dataset(root) as ds:
        ep = ds[scene]
        arrays = {k: ep[k].read() for k in ep if k != "house_json"}
        data = gz_json(document(episode_dicts(arrays, ep.metadata)))
    edit_file(root, content_file(_split(root), scene), lambda p: p.write_bytes(data))


def episode_ids(root: Path) -> None:
    """The other scene's ids continue from this scene's (one numbering across the split, as
    dataforge wrote before issue 40): habitat-lab's loader would renumber them from 0."""
    with open_dataset(root) as ds:
        offset = len(ds[SCENE]["episode_id"].read())

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["episode_id"] += offset

    _edit_scene(root, OTHER, mutate)


def challenge_files(root: Path) -> None:
    """The content file loses its last episode (as if it had moved to the split file)."""

    def edit(path: Path) -> None:
        doc = json.loads(gzip.decompress(path.read_bytes()))
        doc["episodes"].pop()
        path.write_bytes(gz_json(doc))

    edit_file(root, content_file(_split(root), SCENE), edit)


def geodesics(root: Path) -> None:
    """The first leg is stored 0.5 m too long (the total still its sum)."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["leg_geodesic"][0, 0] += 0.5
        a["geodesic_distance"] = a["leg_geodesic"].sum(axis=1)

    _edit_scene(root, SCENE, mutate)


def navigable(root: Path) -> None:
    """The last goal is lifted 1 m: same x/z (so the same legs, rooms and clearances), another
    floor."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["goal_position"][0, -1, 1] += 1.0

    _edit_scene(root, SCENE, mutate)


def goals(root: Path) -> None:
    """The second goal gets the first one's category."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["goal_category"][0, 1] = a["goal_category"][0, 0]

    _edit_scene(root, SCENE, mutate)


def _move_start(root: Path, want: str) -> None:
    """Move one episode's start right beside its last goal, off the cell centre, where
    - ``want == "separation"``: closer than agent + cylinder radius to the goal, while the
      start's cell stays free of the cylinder (so every goal is still reachable);
    - ``want == "reachable"``: at least that far from every goal, while the disc blocked around
      the goal covers the start's cell (the start is walled in);
    with the first leg, the total and the start's room measured again, so that no other
    invariant is broken."""
    from dataforge.pipelines.multion.scenes import stored_space

    with open_dataset(root) as ds:
        config = dict(ds.manifest.config)
        ep = ds[SCENE]
        meta = dict(ep.metadata)
        arrays = ep.read()
    space = stored_space(meta, arrays["house_json"].tobytes(), config)
    e, start, leg = _find_start(space, arrays["goal_position"], config, want)

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["start_position"][e] = start
        a["leg_geodesic"][e, 0] = leg
        a["geodesic_distance"] = a["leg_geodesic"].sum(axis=1)
        a["start_room"][e] = space.room_index(start)

    _edit_scene(root, SCENE, mutate)


def _find_start(
    space: Any, all_goals: np.ndarray, config: dict[str, Any], want: str
) -> tuple[int, np.ndarray, float]:
    """(episode row, new start, its first leg) for :func:`_move_start`."""
    clearance = float(config["agent_radius"]) + float(config["cylinder_radius"])
    lo, hi = float(config["min_geodesic"]), float(config["max_geodesic"])
    cell = float(config["cell"])
    offsets = np.arange(-6, 7) * cell  # cell centres around the goal, then a shift in the cell
    shifts = [(sx * 0.4 * cell, sz * 0.4 * cell) for sx in (-1, 1) for sz in (-1, 1)]
    for e, goals in enumerate(all_goals):
        g = goals[-1]
        for dx in offsets:
            for dz in offsets:
                for sx, sz in shifts:
                    s = np.array([g[0] + dx + sx, g[1], g[2] + dz + sz])
                    nearest = min(math.hypot(s[0] - q[0], s[2] - q[2]) for q in goals)
                    if want == "separation":
                        fits = clearance / 2 < nearest < clearance - 1e-6
                    else:
                        fits = clearance + 1e-6 < nearest < clearance + 2 * cell
                    if not fits or not space.nav.navigable(s):
                        continue
                    leg = space.nav.distance(s, goals[0])
                    if not lo <= leg <= hi:
                        continue
                    if space.reachable_with(s, goals, clearance) == (want == "separation"):
                        return e, s, leg
    raise AssertionError(f"no start position found that breaks only {want!r}")


def separation(root: Path) -> None:
    _move_start(root, "separation")


def reachable(root: Path) -> None:
    _move_start(root, "reachable")


def rotation(root: Path) -> None:
    """A start heading that is no longer a unit quaternion."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["start_rotation"][0] *= 1.01

    _edit_scene(root, SCENE, mutate)


def rooms(root: Path) -> None:
    """The start's room is an index past the metadata's rooms."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["start_room"][0] = len(meta["rooms"])

    _edit_scene(root, SCENE, mutate)


BREAKERS = {
    "episode_ids": episode_ids,
    "challenge_files": challenge_files,
    "geodesics": geodesics,
    "navigable": navigable,
    "goals": goals,
    "separation": separation,
    "reachable": reachable,
    "rotation": rotation,
    "rooms": rooms,
}
