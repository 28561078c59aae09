"""One breaker per synthetic invariant: each changes a stored episode so that exactly that
invariant is broken, and re-seals the manifest (tests/test_conformance.py runs them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode

EPISODE = "scene-0000/ep-000"


def rigid_pose(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        a["pose"][0, 3] = [0.0, 0.0, 0.0, 2.0]  # the last row only: unprojection is untouched

    edit_episode(root, EPISODE, edit)


def depth_on_surface(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        d = a["depth"]
        d[d > 0] += 0.05  # 5 cm deeper everywhere something was hit; sky stays 0

    edit_episode(root, EPISODE, edit)


def sky_depth(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        t, v, u = (int(x[0]) for x in np.nonzero(a["instance"] == 0))
        a["depth"][t, v, u] = 7.0  # depth on a sky pixel (sky is never sampled for surfaces)

    edit_episode(root, EPISODE, edit)


def semantic_class(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        sphere = next(s for s in meta["spheres"] if (a["instance"] == s["instance"]).any())
        mask = a["instance"] == sphere["instance"]
        a["semantic"][mask] = (sphere["label"] - 1) % 3 + 2  # another of the classes 2..4

    edit_episode(root, EPISODE, edit)


def visible_mask(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        a["visible"][0, 0] = not a["visible"][0, 0]

    edit_episode(root, EPISODE, edit)


BREAKERS = {
    "rigid-pose": rigid_pose,
    "depth-on-surface": depth_on_surface,
    "sky-depth": sky_depth,
    "semantic-class": semantic_class,
    "visible-mask": visible_mask,
}
