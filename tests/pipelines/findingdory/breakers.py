"""One breaker per FindingDory episode invariant: each changes one stored scene so that exactly
that invariant is broken, and re-seals the manifest (tests/test_conformance.py runs them on the
tiny example)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode

SCENE = "procthor-val-000000"
Arrays = dict[str, np.ndarray]


def plans(root: Path) -> None:
    """The first episode's stored rearrangement count says one more than its plan."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["rearrangements"][0] += 1

    edit_episode(root, SCENE, mutate)


def viewpoints(root: Path) -> None:
    """A viewpoint far outside the house is added to the first receptacle (no spot uses it)."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["viewpoints"] = np.concatenate(
            [a["viewpoints"], np.array([[1000.0, 0.0, 1000.0]], dtype=np.float32)]
        )
        a["viewpoint_receptacle"] = np.concatenate(
            [a["viewpoint_receptacle"], np.zeros(1, dtype=np.int16)]
        )

    edit_episode(root, SCENE, mutate)


def spots(root: Path) -> None:
    """The first pick spot turns 20 degrees away from its object."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        spot = meta["episodes"][0]["rearrangements"][0]["pick_spots"][0]
        spot["yaw"] = (spot["yaw"] + 20.0) % 360.0

    edit_episode(root, SCENE, mutate)


def replay(root: Path) -> None:
    """The first distractor floats 0.5 m above where it rested."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        meta["episodes"][0]["distractors"][0]["position"][1] += 0.5

    edit_episode(root, SCENE, mutate)


def poses(root: Path) -> None:
    """The first episode's start yaw is 5 degrees (not a multiple of the 10-degree turn), in
    the plan and the array alike."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        meta["episodes"][0]["start"]["yaw"] = 5.0
        a["start_pose"][0, 3] = 5.0

    edit_episode(root, SCENE, mutate)


BREAKERS: dict[str, Callable[[Path], None]] = {
    "plans": plans,
    "viewpoints": viewpoints,
    "spots": spots,
    "replay": replay,
    "poses": poses,
}
