"""The store's public writer: write a dataset in-process, shard by shard.

    schema = Schema({"rgb": ArraySpec("uint8", (None, 48, 64, 3), kind="rgb"),
                     "pose": ArraySpec("float64", (None, 4, 4), units="m")})
    with DatasetWriter("out/", schema=schema, name="demo", fmt="zarr", seed=0) as w:
        w.write_unit("scene-0000", [Episode("scene-0000/ep-0", {"rgb": rgb, "pose": pose})])

Each ``write_unit`` commits one shard atomically; leaving the ``with`` block normally writes the
manifest. Generation runs with many units use ``dataforge.run`` instead, which drives the same
machinery from worker processes or Ray.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dataforge.store.builder import DatasetBuilder, DatasetHeader
from dataforge.store.episode import Episode
from dataforge.store.formats import check_format
from dataforge.store.lock import DirLock
from dataforge.store.manifest import Manifest
from dataforge.store.schema import Schema
from dataforge.store.shard import ShardRecord, write_shard


class DatasetWriter:
    """Write a dataset directory in this process (one writer per directory, under its lock)."""

    def __init__(
        self,
        root: str | Path,
        *,
        schema: Schema,
        name: str,
        pipeline: str = "custom",
        fmt: str = "zarr",
        seed: int = 0,
        config: Mapping[str, Any] | None = None,
        units: Sequence[str] | None = None,
        description: str = "",
        overwrite: bool = False,
        command: Sequence[str] = (),
    ) -> None:
        self.root = Path(root)
        self.header = DatasetHeader(
            name=name,
            pipeline=pipeline,
            format=check_format(fmt),
            seed=int(seed),
            config=dict(config or {}),
            schema=schema,
            units=tuple(units) if units is not None else None,
            description=description,
        )
        self._overwrite = overwrite
        self._command = tuple(command)
        self._lock: DirLock | None = None
        self._builder: DatasetBuilder | None = None
        self.manifest: Manifest | None = None

    def open(self) -> DatasetWriter:
        self._lock = DirLock(self.root).acquire()
        try:
            self._builder = DatasetBuilder.open(self.root, self.header, overwrite=self._overwrite)
        except BaseException:
            self._lock.release()
            raise
        return self

    @property
    def committed_units(self) -> list[str]:
        assert self._builder is not None, "call open() or use the writer as a context manager"
        return list(self._builder.committed)

    def write_unit(self, unit_id: str, episodes: Iterable[Episode]) -> ShardRecord:
        """Write and commit the shard of one unit."""
        assert self._builder is not None, "call open() or use the writer as a context manager"
        self._builder.staging.mkdir(parents=True, exist_ok=True)
        record = write_shard(
            self._builder.staging, unit_id, self.header.format, self.header.schema, episodes
        )
        self._builder.commit(record)
        return record

    def close(self) -> Manifest:
        """Write the manifest (all declared units must be committed) and release the lock."""
        assert self._builder is not None and self._lock is not None
        try:
            self.manifest = self._builder.finalize(command=self._command)
        finally:
            self._lock.release()
        return self.manifest

    def abort(self) -> None:
        """Stop without a manifest; committed shards stay and a new writer resumes."""
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> DatasetWriter:
        return self.open()

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
