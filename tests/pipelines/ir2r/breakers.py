"""One breaker per IR2R invariant: each changes a stored tour so that exactly that invariant is
broken, and re-seals the manifest (tests/test_conformance.py runs them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode

from dataforge.store import open_dataset


def _edit_first_tour(root: Path, edit: Callable[[dict[str, np.ndarray], dict[str, Any]], None]):
    """``edit`` the first tour of the first scene (the one carrying the scene's facts)."""
    with open_dataset(root) as ds:
        first = next(ep.id for ep in ds.episodes() if "scene_paths" in ep.metadata)
    edit_episode(root, first, edit)


def sets_cover(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        meta["scene_paths"]["999999"] = 3  # a path of the scene in no set, not dropped

    _edit_first_tour(root, edit)


def tours_per_set(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        meta["repetition"] = 7

    _edit_first_tour(root, edit)


def once_per_tour(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        meta["episodes_per_path"]["999999"] = 9  # lists a path the set does not hold

    _edit_first_tour(root, edit)


def instructions(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        pid = int(a["path_id"][0])
        count = meta["episodes_per_path"][str(pid)]
        a["instruction"][0] = count  # one past the path's last instruction
        meta["episode_ids"][0] = f"{pid}_{count}"  # the id agrees with the arrays

    _edit_first_tour(root, edit)


def costs(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        meta["total_m"] += 1.0

    _edit_first_tour(root, edit)


def episode_ids(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        meta["episode_ids"][0] = "123456789_0"

    _edit_first_tour(root, edit)


BREAKERS = {
    "sets-cover": sets_cover,
    "tours-per-set": tours_per_set,
    "once-per-tour": once_per_tour,
    "instructions": instructions,
    "costs": costs,
    "episode-ids": episode_ids,
}
