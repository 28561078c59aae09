"""Edit a dataset and re-seal it: rewrite files and the manifest's entries and self-digest, so
that the sha256 checks pass and only a pipeline's invariants can catch what was changed
(importable: tests/ is on pythonpath).

A breaker (``tests/pipelines/<name>/breakers.py``) uses :func:`edit_episode` to change one
episode's arrays or metadata inside its shard, or :func:`edit_file` for a file beside the shards.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.store.atomic import remove_path
from dataforge.store.croissant import episode_index_csv
from dataforge.store.episode import Episode
from dataforge.store.hashing import file_entry, hash_files
from dataforge.store.layout import CROISSANT, EPISODE_INDEX
from dataforge.store.manifest import read_manifest, write_manifest
from dataforge.store.reader import Dataset
from dataforge.store.shard import write_shard

Arrays = dict[str, np.ndarray]
Mutate = Callable[[Arrays, dict[str, Any]], None]  # (arrays, metadata) -> None, in place


def edit_episode(root: Path, episode_id: str, mutate: Mutate) -> None:
    """Rewrite the shard of ``episode_id`` with ``mutate`` applied to that episode's arrays and
    metadata (in place), then re-seal: the manifest's episode index, ``episodes.csv``,
    ``croissant.json`` and every sha256 follow the change."""
    manifest = read_manifest(root)
    loc = manifest.episodes[episode_id]
    shard_eps = [e for e, x in manifest.episodes.items() if x.shard == loc.shard]
    with Dataset(root, manifest) as ds:
        episodes = [Episode(e, ds[e].read(), dict(ds[e].metadata)) for e in shard_eps]
    mutate(*next((ep.arrays, ep.metadata) for ep in episodes if ep.id == episode_id))
    with tempfile.TemporaryDirectory(dir=root.parent) as tmp:
        rec = write_shard(Path(tmp), loc.unit, manifest.format, manifest.schema, episodes)
        remove_path(root / loc.shard)
        shutil.move(str(Path(tmp) / Path(rec.path).name), str(root / rec.path))
    index = {**manifest.episodes, **{e.id: e for e in rec.episodes}}
    write_manifest(root, dataclasses.replace(manifest, episodes=index))
    (root / EPISODE_INDEX).write_bytes(episode_index_csv(manifest.schema, list(index.values())))
    reseal(root)


def edit_file(root: Path, rel: str, edit: Callable[[Path], None]) -> None:
    """Change the file ``rel`` with ``edit(path)``, then re-seal the manifest."""
    edit(root / rel)
    reseal(root)


def reseal(root: Path) -> None:
    """Recompute every listed file's size and sha256 (and list the files now in each shard),
    update croissant.json's file entries, then rewrite the manifest with its self-digest."""
    manifest = read_manifest(root)
    files = {rel: e for rel, e in manifest.files.items() if manifest.shard_of(rel) is None}
    for shard in manifest.shards:
        files.update(hash_files(root, shard.path))
    for rel in files:
        files[rel] = file_entry(root / rel)
    doc = json.loads((root / CROISSANT).read_text())
    for item in doc.get("distribution", []):
        entry = files.get(item.get("@id"))
        if item.get("@type") == "cr:FileObject" and entry is not None:
            item.update(sha256=entry.sha256, contentSize=f"{entry.size} B")
    (root / CROISSANT).write_text(json.dumps(doc, indent=1) + "\n")
    files[CROISSANT] = file_entry(root / CROISSANT)
    write_manifest(root, dataclasses.replace(manifest, files=dict(sorted(files.items()))))
