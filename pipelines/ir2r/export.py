"""``dataforge ir2r export``: several split datasets merged into the authors' one tours file.

IVLN (``finetune_src/r2r/env.py``, ``R2RBatch``) reads one ``tours_iVLN.json`` and indexes it by
split name (its training entry point always asks for ``train``); IVLN-CE
(``habitat_extensions/task.py``, ``IterativeVLNCEDataset``) reads one ``data/tours.json`` and
indexes it by ``DATASET.SPLIT``. Both files have the layout each ``tours_<split>.json`` already
has, ``{split: {scene: [[episode id, ...], ...]}}`` (IR2R: ``"<path_id>_<k>"`` instr ids; IR2R-CE:
VLN-CE ``episode_id`` integers, which IVLN-CE casts to strings), so export only merges them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataforge.errors import UsageError

# The authors' file names: IVLN reads ``../tours_iVLN.json``, IVLN-CE ``data/tours.json``.
IVLN_FILE = "tours_iVLN.json"
IVLN_CE_FILE = "tours.json"
# Splits in this order first (the R2R order), any others after them alphabetically.
SPLIT_ORDER = ("train", "val_seen", "val_unseen", "test")


@dataclass(frozen=True)
class Export:
    path: Path
    continuous: bool
    splits: tuple[str, ...]
    tours: dict[str, int]  # split -> number of tours

    @property
    def kind(self) -> str:
        return "IR2R-CE" if self.continuous else "IR2R"

    @property
    def reader(self) -> str:
        if self.continuous:
            return f"IVLN-CE's data/{IVLN_CE_FILE} (DATASET.TOURS_FILE)"
        return f"IVLN's {IVLN_FILE}"


def split_order(splits: Sequence[str]) -> list[str]:
    known = [s for s in SPLIT_ORDER if s in splits]
    return known + sorted(s for s in splits if s not in SPLIT_ORDER)


def read_split(directory: Path) -> tuple[str, bool, dict[str, list[list[Any]]]]:
    """(split, continuous, {scene: tours}) of one dataset written by ``dataforge ir2r tours``."""
    from dataforge.pipelines.ir2r.api import open_tours
    from dataforge.pipelines.ir2r.generate import tours_document
    from dataforge.pipelines.ir2r.tours import check_episodes_once

    with open_tours(Path(directory)) as ds:
        config = ds.manifest.config
        split = config.get("split")
        if not isinstance(split, str) or not split:
            raise UsageError(f"{directory}: its manifest records no split (not an IR2R tours run)")
        continuous = bool(config.get("continuous", False))
        scenes = tours_document(ds, split)[split]
    check_episodes_once(scenes, str(directory))
    return split, continuous, scenes


def merge(directories: Sequence[Path]) -> tuple[bool, dict[str, dict[str, list[list[Any]]]]]:
    """``{split: {scene: tours}}`` of every directory; one split per directory, never two of one
    split, never discrete and continuous together."""
    if not directories:
        raise UsageError("name at least one tours dataset directory to export")
    by_split: dict[str, tuple[Path, dict[str, list[list[Any]]]]] = {}
    kind: tuple[Path, bool] | None = None
    for directory in directories:
        split, continuous, scenes = read_split(directory)
        if kind is not None and kind[1] != continuous:
            ce, discrete = (directory, kind[0]) if continuous else (kind[0], directory)
            raise UsageError(
                f"{ce} holds continuous (IR2R-CE) tours and {discrete} discrete (IR2R) tours: "
                "IVLN and IVLN-CE read separate files, export each kind on its own"
            )
        kind = (directory, continuous)
        if split in by_split:
            raise UsageError(
                f"{by_split[split][0]} and {directory} both hold split {split!r}: "
                "the tours file keeps one entry per split, export one of them"
            )
        by_split[split] = (directory, scenes)
    assert kind is not None
    return kind[1], {s: by_split[s][1] for s in split_order(list(by_split))}


def tours_text(doc: dict[str, dict[str, list[list[Any]]]]) -> str:
    """Plain JSON, one tour per line (diffable; any JSON reader loads it)."""
    lines = ["{"]
    for i, (split, scenes) in enumerate(doc.items()):
        lines.append(f" {json.dumps(split)}: {{")
        items = list(scenes.items())
        for k, (scene, tours) in enumerate(items):
            lines.append(f"  {json.dumps(scene)}: [")
            lines.append(",\n".join(f"   {json.dumps(t)}" for t in tours))
            lines.append("  ]" + ("," if k + 1 < len(items) else ""))
        lines.append(" }" + ("," if i + 1 < len(doc) else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def export_tours(directories: Sequence[Path], out: Path) -> Export:
    """Merge the tours of ``directories`` (one split each) into ``out``, written atomically."""
    from dataforge.store.atomic import atomic_write_text

    continuous, doc = merge(directories)
    out = Path(out)
    if out.is_dir():
        raise UsageError(f"--out {out} is a directory: name the file to write")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: folder {out.parent} does not exist")
    atomic_write_text(out, tours_text(doc))
    return Export(
        path=out,
        continuous=continuous,
        splits=tuple(doc),
        tours={s: sum(len(t) for t in scenes.values()) for s, scenes in doc.items()},
    )
