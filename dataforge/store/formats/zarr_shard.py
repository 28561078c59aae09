"""Zarr v3 shards: one group per work unit, one array per modality, the sharding codec inside.

Each array stores ``chunk_rows`` rows per inner chunk (one frame for images) and ``shard_rows``
rows per file. Chunks are encoded as rows arrive and each shard file is written once, whole
(``zarr_sharding``); the tail shard is written at close, then the array's shape is set. Only one
process writes a shard (concurrent writes to one zarr shard can lose data), and the whole group
is renamed into place only after it is complete.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import zarr
from zarr.codecs import BloscCodec
from zarr.storage import LocalStore

from dataforge.store.formats.base import ShardReader, ShardWriter, index_bytes
from dataforge.store.formats.zarr_sharding import ShardStream
from dataforge.store.layout import SHARD_META_ARRAY
from dataforge.store.schema import CODECS, Schema

if TYPE_CHECKING:
    from zarr.core.array_spec import ArrayConfigParams

_WRITE_CONFIG: ArrayConfigParams = {"write_empty_chunks": True}


def _compressors(spec_codec: str, itemsize: int) -> Any:
    params = CODECS[spec_codec]
    if params is None:
        return None
    cname, clevel = params
    shuffle: Literal["shuffle", "noshuffle"] = "shuffle" if itemsize > 1 else "noshuffle"
    return BloscCodec(cname=cname, clevel=clevel, shuffle=shuffle, typesize=itemsize)


class ZarrShardWriter(ShardWriter):
    """zarr creates the group and array metadata; shard files are streamed by
    :class:`~dataforge.store.formats.zarr_sharding.ShardStream` (see there for why)."""

    def __init__(self, path: Path, schema: Schema) -> None:
        super().__init__(path, schema)
        self._group = zarr.create_group(store=LocalStore(str(self.path)), zarr_format=3)
        self._arrays: dict[str, Any] = {}
        self._streams: dict[str, ShardStream] = {}
        for name, spec in schema.items():
            self._arrays[name] = self._group.create_array(
                name,
                shape=(0, *spec.trailing),
                chunks=spec.chunks,
                shards=(spec.shard_rows, *spec.trailing),
                dtype=spec.dtype,
                compressors=_compressors(spec.codec, np.dtype(spec.dtype).itemsize),
                fill_value=np.zeros((), spec.dtype).item(),
                config=_WRITE_CONFIG,
            )
            self._streams[name] = ShardStream(spec, self.path / name)

    def _append(self, name: str, block: np.ndarray) -> None:
        if block.shape[0]:
            self._streams[name].append(block)

    def close(self, index: dict[str, Any]) -> None:
        for name, spec in self.schema.items():
            self._streams[name].close()
            self._arrays[name].resize((self.rows[name], *spec.trailing))
        raw = np.frombuffer(index_bytes(index), dtype=np.uint8)
        meta = self._group.create_array(
            SHARD_META_ARRAY,
            shape=raw.shape,
            chunks=(max(1, raw.shape[0]),),
            dtype="uint8",
            compressors=_compressors("blosc-zstd", 1),
            fill_value=0,
            config=_WRITE_CONFIG,
        )
        meta[:] = raw


def _codec_name(arr: Any) -> str:
    comps = arr.compressors
    if not comps:
        return "none"
    c = comps[0]
    if isinstance(c, BloscCodec):
        for name, params in CODECS.items():
            if params is not None and (c.cname.value, c.clevel) == params:
                return name
        return f"blosc-{c.cname.value}-{c.clevel}"
    return type(c).__name__


class ZarrShardReader(ShardReader):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._group = zarr.open_group(store=LocalStore(str(self.path), read_only=True), mode="r")
        self._cache: dict[str, Any] = {}

    def array(self, name: str) -> Any:
        if name not in self._cache:
            self._cache[name] = self._group[name]
        return self._cache[name]

    def array_names(self) -> list[str]:
        return sorted(k for k in self._group.array_keys() if k != SHARD_META_ARRAY)

    def describe(self, name: str) -> dict[str, Any]:
        arr = self.array(name)
        return {
            "dtype": str(arr.dtype),
            "shape": tuple(arr.shape),
            "chunks": tuple(arr.chunks),
            "shards": tuple(arr.shards) if arr.shards is not None else None,
            "codec": _codec_name(arr),
        }

    def _index_bytes(self) -> bytes:
        meta: Any = self._group[SHARD_META_ARRAY]  # an array (a group member may be a group)
        return bytes(meta[:])
