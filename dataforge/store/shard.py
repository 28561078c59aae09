"""Write one work unit's episodes into one shard, and describe the result for the manifest.

``write_shard`` is what a worker runs: it writes under the staging directory, fsyncs, hashes
every file, and returns a :class:`ShardRecord`; the driver then commits it (rename + journal).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataforge.errors import SchemaError
from dataforge.store.atomic import fsync_tree, remove_path
from dataforge.store.episode import Episode, EpisodeLocation, check_metadata
from dataforge.store.formats import open_shard_writer
from dataforge.store.hashing import FileEntry, hash_files
from dataforge.store.layout import FORMAT_VERSION, SHARDS_DIR, shard_name
from dataforge.store.schema import Schema


@dataclass(frozen=True)
class ShardRecord:
    """A finished shard: its unit, path relative to the dataset root, episodes and files, and
    the OpenGL contexts its worker rendered it with (``dataforge.render.device.describe``; empty
    when it rendered nothing), which the builder records in the manifest's ``environment``."""

    unit: str
    path: str
    episodes: tuple[EpisodeLocation, ...]
    files: Mapping[str, FileEntry]
    opengl: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        rendered = {"opengl": [dict(d) for d in self.opengl]} if self.opengl else {}
        return {
            "unit": self.unit,
            "path": self.path,
            "episodes": [{"id": e.id, **e.to_dict()} for e in self.episodes],
            "files": {p: f.to_dict() for p, f in self.files.items()},
            **rendered,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ShardRecord:
        return cls(
            unit=str(d["unit"]),
            path=str(d["path"]),
            episodes=tuple(EpisodeLocation.from_dict(e["id"], e) for e in d["episodes"]),
            files={p: FileEntry.from_dict(f) for p, f in d["files"].items()},
            opengl=tuple(dict(g) for g in d.get("opengl", ())),
        )


def write_shard(
    staging: Path, unit_id: str, fmt: str, schema: Schema, episodes: Iterable[Episode]
) -> ShardRecord:
    """Write ``episodes`` as the shard of ``unit_id`` under ``staging``; fsync and hash it."""
    name = shard_name(unit_id, fmt)
    rel = f"{SHARDS_DIR}/{name}"
    path = Path(staging) / name
    remove_path(path)
    writer = open_shard_writer(fmt, path, schema)
    locations: list[EpisodeLocation] = []
    index_entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    try:
        for ep in episodes:
            if not isinstance(ep, Episode):
                raise SchemaError(f"unit {unit_id}: expected an Episode, got {type(ep).__name__}")
            if ep.id in seen:
                raise SchemaError(f"unit {unit_id}: episode id {ep.id!r} written twice")
            seen.add(ep.id)
            try:
                arrays = schema.check_episode(ep.arrays)
                if not callable(ep.metadata):
                    metadata = check_metadata(ep.metadata, f"episode {ep.id!r}")
            except ValueError as exc:
                raise SchemaError(f"unit {unit_id}, episode {ep.id!r}: {exc}") from None
            starts = {name: writer.rows[name] for name in arrays}
            for arr_name, arr in arrays.items():
                writer.append(arr_name, arr)
            for block in ep.blocks or ():
                _append_block(writer, schema, block, f"unit {unit_id}, episode {ep.id!r}")
            if callable(ep.metadata):
                try:
                    metadata = check_metadata(ep.metadata(), f"episode {ep.id!r}")
                except ValueError as exc:
                    raise SchemaError(f"unit {unit_id}, episode {ep.id!r}: {exc}") from None
            rows = {name: (starts[name], writer.rows[name]) for name in arrays}
            loc = EpisodeLocation(id=ep.id, unit=unit_id, shard=rel, rows=rows)
            locations.append(loc)
            index_entries.append({"id": ep.id, "rows": loc.to_dict()["rows"], "metadata": metadata})
            # let go of this episode's arrays before the producer makes the next one: a
            # pipeline with large episodes then holds one of them in memory, not two
            del ep, arrays
        writer.close({"format_version": FORMAT_VERSION, "unit": unit_id, "episodes": index_entries})
    except BaseException:
        writer.abort()
        remove_path(path)
        raise
    fsync_tree(path)
    if path.is_dir():
        files = {f"{SHARDS_DIR}/{p}": e for p, e in hash_files(Path(staging), name).items()}
    else:
        files = {rel: next(iter(hash_files(Path(staging), name).values()))}
    return ShardRecord(unit=unit_id, path=rel, episodes=tuple(locations), files=files)


def _append_block(writer: Any, schema: Schema, block: Mapping[str, Any], where: str) -> None:
    """Append a streamed block of rows (see :class:`Episode`)."""
    for name, value in block.items():
        spec = schema.arrays.get(name)
        if spec is None or spec.shape[0] is not None:
            what = "not in the schema" if spec is None else "of fixed size: give it whole"
            raise SchemaError(f"{where}: a streamed block has array {name!r} {what}")
        try:
            writer.append(name, spec.check(name, value))
        except ValueError as exc:
            raise SchemaError(f"{where}: {exc}") from None
