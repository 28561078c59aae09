"""One breaker per FindingDory task invariant: each changes one stored episode (rewriting
tasks.jsonl to match where the invariant is not about it) so that exactly that invariant is
broken, and re-seals the manifest (tests/test_conformance.py runs them on the tiny example)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode, edit_file

from dataforge.pipelines.findingdory.tasks import TASKS_FILE, tasks_file
from dataforge.store.reader import open_dataset

Arrays = dict[str, np.ndarray]


def _first(root: Path) -> str:
    with open_dataset(root) as ds:
        return ds.episode_ids[0]


def _rewrite_tasks_file(root: Path) -> None:
    with open_dataset(root) as ds:
        data = tasks_file(ds)
    edit_file(root, TASKS_FILE, lambda p: p.write_bytes(data))


def templates(root: Path) -> None:
    """A skipped template's record is lost: it is neither instantiated nor skipped."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        meta["skipped"].pop()

    edit_episode(root, _first(root), mutate)


def valid_frames(root: Path) -> None:
    """The first task with a valid frame loses it (tasks.jsonl rewritten to match)."""

    def mutate(a: Arrays, meta: dict[str, Any]) -> None:
        task = next(t for t in meta["tasks"] if len(t["valid_frames"][0]) > 1)
        task["valid_frames"][0].pop(0)

    edit_episode(root, _first(root), mutate)
    _rewrite_tasks_file(root)


def files(root: Path) -> None:
    """tasks.jsonl loses its last line."""

    def edit(path: Path) -> None:
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(lines[:-1]))

    edit_file(root, TASKS_FILE, edit)


BREAKERS: dict[str, Callable[[Path], None]] = {
    "templates": templates,
    "valid_frames": valid_frames,
    "files": files,
}
