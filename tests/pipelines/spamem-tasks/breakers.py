"""One breaker per spamem-tasks invariant (tests/test_conformance.py runs them on the tiny
example); each re-seals the manifest so that only the invariant can catch the change."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode, edit_file

from dataforge.pipelines.spamem.tasks import question_lines
from dataforge.store.reader import open_dataset


def _first_episode(root: Path) -> str:
    with open_dataset(root) as ds:
        return next(iter(ds.manifest.episodes))


def _rewrite_first(root: Path, change: Callable[[dict[str, Any]], bool]) -> None:
    """``change`` applied to the first episode's records until it returns True for one; the
    question files are written again from the shards, so they still match."""

    def mutate(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        lines = a["questions"].tobytes().splitlines()
        for i, line in enumerate(lines):
            r = json.loads(line)
            if change(r):
                lines[i] = json.dumps(r, sort_keys=True, separators=(",", ":")).encode()
                break
        a["questions"] = np.frombuffer(b"".join(x + b"\n" for x in lines), np.uint8)

    edit_episode(root, _first_episode(root), mutate)
    files: dict[str, bytes] = {}
    with open_dataset(root) as ds:
        for rel, line in question_lines(ds):
            files[rel] = files.get(rel, b"") + line
    for rel, data in files.items():
        edit_file(root, rel, lambda p, data=data: p.write_bytes(data))


def records(root: Path) -> None:
    """One count question's answer becomes -1."""

    def change(r: dict[str, Any]) -> bool:
        if r["answer_type"] != "count":
            return False
        r["answer"] = -1
        return True

    _rewrite_first(root, change)


def evidence(root: Path) -> None:
    """One record's evidence names a frame of a view the record does not give."""

    def change(r: dict[str, Any]) -> bool:
        entry = next((e for e in r.get("evidence", []) if e["frames"]), None)
        if entry is None:
            return False
        step, view = entry["frames"][0]
        entry["frames"][0] = [step, view + 1000]
        return True

    _rewrite_first(root, change)


def files(root: Path) -> None:
    """A question file loses its last record."""
    with open_dataset(root) as ds:
        rel = next(question_lines(ds))[0]

    def edit(path: Path) -> None:
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:-1]))

    edit_file(root, rel, edit)


BREAKERS = {"records": records, "files": files, "evidence": evidence}
