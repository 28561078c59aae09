"""Read any dataforge dataset the same way, whatever its format.

    ds = open_dataset("out/")            # reads manifest.json only
    ds.episode_ids                       # ["scene-0000/ep-000", ...]
    ep = ds["scene-0000/ep-000"]
    ep["rgb"][5]                         # one frame, read and decoded on access
    ep["depth"].shape, ep.metadata       # lazy: shards open on first use

Results are identical numpy arrays for Zarr and HDF5 datasets of the same content.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.errors import DatasetError
from dataforge.store.episode import EpisodeLocation
from dataforge.store.formats import ShardReader, open_shard_reader
from dataforge.store.hashing import scan_tree
from dataforge.store.layout import dataset_path, entry_kind, link_in
from dataforge.store.manifest import Manifest, read_manifest
from dataforge.store.schema import ArraySpec, Schema


class LazyArray:
    """One episode's rows of one array; indexing reads only the chunks it needs. The shard is
    looked up on every access, so a dataset may close shards it has not used lately."""

    def __init__(
        self, dataset: Dataset, shard: str, start: int, stop: int, spec: ArraySpec, name: str
    ) -> None:
        self._dataset = dataset
        self._shard = shard
        self._start = start
        self._stop = stop
        self.spec = spec
        self.name = name

    @property
    def _source(self) -> Any:
        return self._dataset._shard(self._shard).array(self.name)

    def _rows(self, key: int | slice) -> np.ndarray:
        """Rows of the shard's array (``key`` is in range): a chunk that does not decode (a
        damaged or truncated shard) is a one-line ``DatasetError`` naming the dataset."""
        try:
            return np.asarray(self._source[key])
        except DatasetError:
            raise
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            root = self._dataset.root
            raise DatasetError(
                f"{root}: array {self.name!r} of shard {self._shard} cannot be read "
                f"({type(exc).__name__}: {exc}); check the dataset with 'dataforge validate "
                f"{root}'"
            ) from None

    @property
    def shape(self) -> tuple[int, ...]:
        return (self._stop - self._start, *self.spec.trailing)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.spec.dtype)

    @property
    def ndim(self) -> int:
        return len(self.spec.shape)

    def __len__(self) -> int:
        return self._stop - self._start

    def __repr__(self) -> str:
        return f"LazyArray({self.name!r}, shape={self.shape}, dtype={self.spec.dtype})"

    def read(self) -> np.ndarray:
        """All rows of this episode."""
        if self._stop == self._start:
            return np.zeros(self.shape, dtype=self.dtype)
        return self._rows(slice(self._start, self._stop))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.read()
        return out.astype(dtype) if dtype is not None else out

    def __getitem__(self, key: Any) -> np.ndarray:
        first, rest = (key[0], key[1:]) if isinstance(key, tuple) and key else (key, ())
        n = len(self)
        if first is Ellipsis:
            return self.read()[key]
        if isinstance(first, (int, np.integer)) and not isinstance(first, bool):
            i = int(first) + n if first < 0 else int(first)
            if not 0 <= i < n:
                raise IndexError(f"row {first} out of range for {self.name!r} with {n} rows")
            row = self._rows(self._start + i)
            return row[rest] if rest else row
        if isinstance(first, slice):
            a, b, step = first.indices(n)
            if step == 1:
                block = (
                    self._rows(slice(self._start + a, self._start + b))
                    if b > a
                    else np.zeros((0, *self.spec.trailing), self.dtype)
                )
            else:
                block = self.read()[first]
            return block[(slice(None), *rest)] if rest else block
        return self.read()[key]


class StoredEpisode(Mapping[str, LazyArray]):
    """A committed episode: lazy arrays by name, plus its metadata."""

    def __init__(self, dataset: Dataset, location: EpisodeLocation) -> None:
        self._dataset = dataset
        self.location = location
        self.id = location.id

    def __getitem__(self, name: str) -> LazyArray:
        if name not in self._dataset.schema:
            raise KeyError(f"no array {name!r}; arrays are {list(self._dataset.schema)}")
        start, stop = self.location.rows[name]
        return LazyArray(
            self._dataset, self.location.shard, start, stop, self._dataset.schema[name], name
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self._dataset.schema)

    def __len__(self) -> int:
        return len(self._dataset.schema)

    @property
    def dataset(self) -> Dataset:
        """The dataset the episode is in (its manifest, schema, root)."""
        return self._dataset

    @property
    def metadata(self) -> dict[str, Any]:
        return self._dataset._shard_metadata(self.location.shard)[self.id]

    def read(self) -> dict[str, np.ndarray]:
        """Every array of this episode, fully read."""
        return {name: self[name].read() for name in self}

    def __repr__(self) -> str:
        return f"StoredEpisode({self.id!r}, arrays={list(self)})"


class Dataset(Mapping[str, StoredEpisode]):
    """A dataset on disk: manifest, schema and lazily opened shards."""

    max_open_shards = 64  # HDF5 readers hold a file handle each

    def __init__(self, root: Path, manifest: Manifest) -> None:
        self.root = Path(root)
        self.manifest = manifest
        self._readers: OrderedDict[str, ShardReader] = OrderedDict()
        self._metadata: dict[str, dict[str, Any]] = {}

    @property
    def schema(self) -> Schema:
        return self.manifest.schema

    @property
    def format(self) -> str:
        return self.manifest.format

    @property
    def episode_ids(self) -> list[str]:
        return self.manifest.episode_ids

    def __getitem__(self, episode_id: str) -> StoredEpisode:
        try:
            loc = self.manifest.episodes[episode_id]
        except KeyError:
            raise KeyError(f"no episode {episode_id!r} in {self.root}") from None
        return StoredEpisode(self, loc)

    def __iter__(self) -> Iterator[str]:
        return iter(self.manifest.episodes)

    def __len__(self) -> int:
        return len(self.manifest.episodes)

    def episodes(self) -> Iterator[StoredEpisode]:
        for eid in self.manifest.episodes:
            yield self[eid]

    def _shard(self, rel: str) -> ShardReader:
        if rel in self._readers:
            self._readers.move_to_end(rel)
            return self._readers[rel]
        path = self._shard_path(rel)
        try:
            reader = open_shard_reader(self.format, path)
        except (OSError, ValueError, KeyError) as exc:
            raise DatasetError(f"shard {rel} cannot be opened: {exc}") from None
        self._readers[rel] = reader
        while len(self._readers) > self.max_open_shards:
            _, oldest = self._readers.popitem(last=False)
            oldest.close()
        return reader

    def _shard_path(self, rel: str) -> Path:
        """Where shard ``rel`` is, after refusing what would lead out of the dataset: an unsafe
        path, a shard that is or lies under a symbolic link, a Zarr shard holding a link (the
        store would follow it) and anything but a regular file (HDF5) or folder (Zarr)."""
        try:
            path = dataset_path(self.root, rel, "shard path")
        except ValueError as exc:
            raise DatasetError(str(exc)) from None
        if (link := link_in(self.root, rel)) is not None:
            raise DatasetError(
                f"shard {rel} cannot be opened: {link} is a symbolic link (links in a dataset "
                "are not followed)"
            )
        kind = entry_kind(path)
        if kind is None:
            raise DatasetError(f"shard {rel} is missing from {self.root}")
        if kind != ("dir" if self.format == "zarr" else "file"):
            raise DatasetError(f"shard {rel} cannot be opened: it is not a {self.format} shard")
        if kind == "dir":
            try:
                inside = scan_tree(self.root, rel)
            except OSError as exc:
                raise DatasetError(f"shard {rel} cannot be opened: {exc.strerror}") from None
            bad = inside.links or inside.other or inside.unreadable
            if bad:
                what = (
                    "a symbolic link (links in a dataset are not followed)"
                    if inside.links
                    else "not a regular file or folder"
                    if inside.other
                    else "a folder that cannot be read"
                )
                raise DatasetError(f"shard {rel} cannot be opened: {bad[0]} is {what}")
        return path

    def _shard_metadata(self, rel: str) -> dict[str, Any]:
        if rel not in self._metadata:
            index = self._shard(rel).index()
            self._metadata[rel] = {e["id"]: e["metadata"] for e in index["episodes"]}
        return self._metadata[rel]

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()

    def __enter__(self) -> Dataset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Dataset({str(self.root)!r}, pipeline={self.manifest.pipeline!r}, "
            f"format={self.format!r}, episodes={len(self)})"
        )


def open_dataset(path: str | Path) -> Dataset:
    """Open a dataset directory written by dataforge (either format)."""
    root = Path(path)
    return Dataset(root, read_manifest(root))
