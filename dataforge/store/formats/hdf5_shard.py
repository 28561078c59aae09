"""HDF5 shards: one file per work unit, one chunked dataset per modality, blosc via hdf5plugin.

Chunks are compressed by dataforge (in parallel) and stored with direct chunk writes; HDF5's
blosc filter, declared on every dataset, decodes them, so any HDF5 reader with hdf5plugin (or
the blosc filter) reads the files. Files are written with creation-time tracking off and a
fixed library-version range, so the same rows written in the same order give byte-identical
files.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import Any

import h5py
import hdf5plugin
import numpy as np

from dataforge.store.formats.base import ShardReader, ShardWriter, index_bytes
from dataforge.store.formats.chunks import ChunkStream
from dataforge.store.layout import SHARD_META_ARRAY
from dataforge.store.schema import CODECS, Schema

BLOSC_FILTER_ID = 32001
# c-blosc compressor codes, as stored in the filter's client data (cd_values[6]).
_BLOSC_CODES = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "snappy": 3, "zlib": 4, "zstd": 5}
_LIBVER = ("v110", "v110")


def _filter_kwargs(codec: str, itemsize: int) -> dict[str, Any]:
    params = CODECS[codec]
    if params is None:
        return {}
    cname, clevel = params
    shuffle = hdf5plugin.Blosc.SHUFFLE if itemsize > 1 else hdf5plugin.Blosc.NOSHUFFLE
    return dict(hdf5plugin.Blosc(cname=cname, clevel=clevel, shuffle=shuffle))


class Hdf5ShardWriter(ShardWriter):
    """Chunks are encoded by :class:`~dataforge.store.formats.chunks.ChunkStream` (in parallel)
    and stored with HDF5 direct chunk writes; HDF5's blosc filter (32001) reads them back."""

    def __init__(self, path: Path, schema: Schema) -> None:
        super().__init__(path, schema)
        self._file = h5py.File(self.path, "w", libver=_LIBVER, track_order=False)
        self._file.attrs["dataforge_shard"] = 1
        self._streams: dict[str, ChunkStream] = {}
        for name, spec in schema.items():
            self._file.create_dataset(
                name,
                shape=(0, *spec.trailing),
                maxshape=(None, *spec.trailing),
                chunks=spec.chunks,
                dtype=np.dtype(spec.dtype),
                track_times=False,
                **_filter_kwargs(spec.codec, np.dtype(spec.dtype).itemsize),
            )
            self._streams[name] = ChunkStream(spec, functools.partial(self._write_chunk, name))

    def _write_chunk(self, name: str, index: int, data: bytes) -> None:
        spec = self.schema[name]
        origin = (index * spec.chunk_rows, *([0] * len(spec.trailing)))
        self._file[name].id.write_direct_chunk(origin, data, 0)

    def _append(self, name: str, block: np.ndarray) -> None:
        if block.shape[0] == 0:
            return
        dset = self._file[name]
        dset.resize(dset.shape[0] + block.shape[0], axis=0)
        self._streams[name].append(block)

    def close(self, index: dict[str, Any]) -> None:
        for stream in self._streams.values():
            stream.close()
        raw = np.frombuffer(index_bytes(index), dtype=np.uint8)
        self._file.create_dataset(
            SHARD_META_ARRAY, data=raw, track_times=False, **_filter_kwargs("blosc-zstd", 1)
        )
        self._file.close()

    def abort(self) -> None:
        with contextlib.suppress(Exception):  # best effort on the failure path
            self._file.close()


def _codec_name(dset: h5py.Dataset) -> str:
    filters = dset._filters
    if not filters:
        return "none"
    cd = filters.get(str(BLOSC_FILTER_ID))
    if cd is None:
        return ",".join(sorted(filters))
    clevel, code = int(cd[4]), int(cd[6])
    for name, params in CODECS.items():
        if params is not None and (_BLOSC_CODES[params[0]], params[1]) == (code, clevel):
            return name
    return f"blosc-code{code}-{clevel}"


class Hdf5ShardReader(ShardReader):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._file = h5py.File(self.path, "r")
        try:
            refuse_outside_data(self._file)
        except BaseException:
            self._file.close()
            raise

    def array(self, name: str) -> Any:
        return self._file[name]

    def array_names(self) -> list[str]:
        return sorted(k for k in self._file if k != SHARD_META_ARRAY)

    def describe(self, name: str) -> dict[str, Any]:
        dset = self._file[name]
        return {
            "dtype": str(dset.dtype),
            "shape": tuple(dset.shape),
            "chunks": tuple(dset.chunks) if dset.chunks else None,
            "shards": None,
            "codec": _codec_name(dset),
        }

    def _index_bytes(self) -> bytes:
        return self._file[SHARD_META_ARRAY][()].tobytes()

    def close(self) -> None:
        self._file.close()


def refuse_outside_data(f: h5py.Group) -> None:
    """An HDF5 file in a dataset is untrusted input: it can name data in other files (external
    and soft links, external raw storage, virtual datasets), which h5py would read from
    anywhere. Raise ``ValueError`` for any of them; only hard links to groups and datasets of
    the file itself are allowed (all dataforge and RoboMME files are such)."""

    def check(name: str, link: Any) -> str | None:  # a problem stops the visit
        if not isinstance(link, h5py.HardLink):
            return f"{name!r} is a {type(link).__name__}, not data inside the file"
        obj = f[name]
        if isinstance(obj, h5py.Dataset) and (obj.external or obj.is_virtual):
            return f"{name!r} stores its data outside the file"
        return None

    problem = f.visititems_links(check)
    if problem is not None:
        raise ValueError(problem)
