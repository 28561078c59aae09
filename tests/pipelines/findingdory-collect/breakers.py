"""One breaker per FindingDory experience invariant: each changes one stored episode (or a video)
so that exactly that invariant is broken, and re-seals the manifest (tests/test_conformance.py
runs them on the tiny example)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode, edit_file

from dataforge.store.reader import open_dataset

Arrays = dict[str, np.ndarray]


def _first(root: Path) -> str:
    with open_dataset(root) as ds:
        return ds.episode_ids[0]


def replay(root: Path) -> None:
    """Frame 5's yaw is off by one degree (no action turns by one degree)."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["yaw"][5] = (a["yaw"][5] + 1.0) % 360.0

    edit_episode(root, _first(root), mutate)


def clock(root: Path) -> None:
    """Frame 3 is stamped a minute late."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["clock"][3] += 1

    edit_episode(root, _first(root), mutate)


def log(root: Path) -> None:
    """The log says one more frame was spent in the first room."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        meta["log"]["rooms"][0]["frames"] += 1

    edit_episode(root, _first(root), mutate)


def visibility(root: Path) -> None:
    """A pixel of the first carried object shows in the frame after its pick."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        first = meta["log"]["interactions"][0]
        iid = meta["instances"][first["object"]]
        a["instance"][first["pick"][1] + 1, 0, 0] = iid

    edit_episode(root, _first(root), mutate)


def videos(root: Path) -> None:
    """The first episode's video loses its last frames (a shorter, still valid MP4)."""
    from dataforge.viz.video import read_mp4_frames, write_mp4

    eid = _first(root)

    def edit(path: Path) -> None:
        frames = list(read_mp4_frames(path))[:-3]
        write_mp4(frames, path, fps=10.0)

    edit_file(root, f"videos/{eid}.mp4", edit)


BREAKERS: dict[str, Callable[[Path], None]] = {
    "replay": replay,
    "clock": clock,
    "log": log,
    "visibility": visibility,
    "videos": videos,
}
