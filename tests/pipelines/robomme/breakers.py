"""One breaker per RoboMME invariant: each changes a stored episode (and, where the HDF5 file
copies the value, the same value there) so that exactly that invariant is broken, and re-seals
the manifest (tests/test_conformance.py runs them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import numpy as np
from sealing import edit_episode, edit_file

from dataforge.pipelines.robomme.checks import H5_FIELDS
from dataforge.pipelines.robomme.h5layout import task_file

EPISODE = "PickXtimes-00000"
H5 = task_file("PickXtimes")


def _set_step(root: Path, field: str, t: int, value: Any) -> None:
    """Set ``field`` at step ``t`` (negative: from the end) in the stored episode and in its
    HDF5 copy alike; ``value`` may be a function of the current value."""
    new: dict[str, Any] = {}

    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        new["t"] = t % len(a[field])
        new["value"] = value(a[field][t]) if callable(value) else value
        a[field][t] = new["value"]

    edit_episode(root, EPISODE, edit)

    def edit_h5(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            step = f"episode_0/timestep_{new['t']}/{H5_FIELDS[field]}/{field}"
            f[step][()] = new["value"]

    edit_file(root, H5, edit_h5)


def _set_meta(root: Path, key: str, value: Any) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        meta[key] = value(meta[key]) if callable(value) else value

    edit_episode(root, EPISODE, edit)


def rows(root: Path) -> None:
    _set_meta(root, "state_dim", lambda d: d + 1)


def limits(root: Path) -> None:
    _set_step(root, "gripper_state", 0, np.array([0.05, 0.05], np.float32))


def boundaries(root: Path) -> None:
    _set_step(root, "is_subgoal_boundary", -2, lambda v: not v)  # flip the second-last step


def completed(root: Path) -> None:
    _set_step(root, "is_completed", 0, True)


def video(root: Path) -> None:
    _set_step(root, "is_video_demo", 0, True)  # PickXtimes has no video, video_steps is 0


def subgoals(root: Path) -> None:
    def edit(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        # the online view two subgoals ahead (the planner view is left alone: boundaries
        # follow it)
        a["subgoal_online"][0] = a["subgoal"][0] + 2

    edit_episode(root, EPISODE, edit)


def seed(root: Path) -> None:
    _set_meta(root, "filtered", lambda f: [*f, {"seed": -1, "reason": "forged"}])


def h5(root: Path) -> None:
    def edit_h5(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            d = f["episode_1/timestep_3/action/joint_action"]
            d[0] = d[0] + 0.001

    edit_file(root, H5, edit_h5)


BREAKERS = {
    "rows": rows,
    "limits": limits,
    "boundaries": boundaries,
    "completed": completed,
    "video": video,
    "subgoals": subgoals,
    "seed": seed,
    "h5": h5,
}
