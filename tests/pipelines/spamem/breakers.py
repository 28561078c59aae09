"""One breaker per SpaMEM invariant: each changes one stored sequence so that exactly that
invariant is broken, and re-seals the manifest (tests/test_conformance.py runs them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode

from dataforge.pipelines.spamem.capture import VIEW_COLUMNS
from dataforge.pipelines.spamem.episode import graphs_by_step, instance_keys

EPISODE = "house-000000/seq-00"
Arrays = dict[str, np.ndarray]


def _last_put(meta: dict[str, Any]) -> dict[str, Any]:
    """The last spawn or place step record of the sequence."""
    return next(r for r in reversed(meta["steps"]) if r["action"] in ("spawn", "place"))


def views_per_state(root: Path) -> None:
    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        meta["views_per_state"] += 1

    edit_episode(root, EPISODE, mutate)


def mask_ids_known(root: Path) -> None:
    """A wall seen in step 0 loses its entry in the instance table."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        keys = instance_keys(meta)
        seen = {int(i) for i in np.unique(a["instance"][0]) if i}
        wall = next(i for i in sorted(seen) if keys[i].startswith("wall"))
        meta["instances"] = [[i, k] for i, k in meta["instances"] if i != wall]

    edit_episode(root, EPISODE, mutate)


def removed_absent(root: Path) -> None:
    """The last placed object is recorded as removed, but stays in the graph."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        rec = _last_put(meta)
        rec["action"], rec["removed"] = "remove", [rec["object"]]

    edit_episode(root, EPISODE, mutate)


def rests_on_surface(root: Path) -> None:
    """The last placement names a receptacle the object is not on."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        rec = _last_put(meta)
        graph = graphs_by_step(a["graphs"], a["graph_index"])[rec["step"]]
        other = next(
            r
            for r in graph["receptacles"]
            if rec["object"] not in r["child_ids"] and r["id"] != rec["receptacle"]
        )
        rec["receptacle"] = other["id"]

    edit_episode(root, EPISODE, mutate)


def depth_on_surface(root: Path) -> None:
    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["depth"][0] = (a["depth"][0].astype(np.float64) * 1.5).astype(np.uint16)

    edit_episode(root, EPISODE, mutate)


def rigid_pose(root: Path) -> None:
    """A pose's last row is not 0 0 0 1 (unprojection, which uses the top rows, is unchanged)."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["pose"][0, 3, 2] = np.float32(0.5)

    edit_episode(root, EPISODE, mutate)


def box2d_encloses(root: Path) -> None:
    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        a["box2d"][0, 4] += 1  # x1 of the first box

    edit_episode(root, EPISODE, mutate)


def allowed_actions(root: Path) -> None:
    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        meta["steps"][1]["receptacle_type"] = "Toilet"

    edit_episode(root, EPISODE, mutate)


def acted_visible(root: Path) -> None:
    """The last spawn or place claims one more view showing its object than the masks do."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        rec = _last_put(meta)
        rec["acted_visible_views"] += 1

    edit_episode(root, EPISODE, mutate)


def views_apart(root: Path) -> None:
    """View 2 of step 0 becomes a copy of view 0 (images, pose, view row, boxes, metadata): a
    duplicate camera, consistent in every other respect."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        for name in ("rgb", "depth", "instance", "semantic", "pose", "view"):
            a[name][2] = a[name][0]
        box = a["box2d"]
        copy = box[box[:, 0] == 0].copy()
        copy[:, 0] = 2
        rest = box[box[:, 0] != 2]
        at = int(np.searchsorted(rest[:, 0], 2))
        a["box2d"] = np.concatenate([rest[:at], copy, rest[at:]])
        meta["viewpoints"][0][2] = dict(meta["viewpoints"][0][0])

    edit_episode(root, EPISODE, mutate)


def bearing_recorded(root: Path) -> None:
    """The first view's stored bearing (array and metadata) is its nominal azimuth + 10."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        col = VIEW_COLUMNS.index("bearing_deg")
        a["view"][0, col] = (a["view"][0, col] + 10.0) % 360.0
        meta["viewpoints"][0][0]["bearing_deg"] = float(a["view"][0, col])

    edit_episode(root, EPISODE, mutate)


def no_hole_window(root: Path) -> None:
    """The first window seen loses its depth (a hole, as when windows had no panes)."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        keys = instance_keys(meta)
        inst = a["instance"]
        row, win = next(
            (r, int(i))
            for r in range(len(inst))
            for i in np.unique(inst[r])
            if keys.get(int(i), "").startswith("window")
        )
        a["depth"][row][inst[row] == win] = 0

    edit_episode(root, EPISODE, mutate)


BREAKERS = {
    "views-per-state": views_per_state,
    "mask-ids-known": mask_ids_known,
    "removed-absent": removed_absent,
    "rests-on-surface": rests_on_surface,
    "depth-on-surface": depth_on_surface,
    "rigid-pose": rigid_pose,
    "box2d-encloses": box2d_encloses,
    "allowed-actions": allowed_actions,
    "acted-visible": acted_visible,
    "views-apart": views_apart,
    "bearing-recorded": bearing_recorded,
    "no-hole-window": no_hole_window,
}
