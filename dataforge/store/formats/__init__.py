"""Shard file formats behind one interface: Zarr v3 (sharding codec) and HDF5 (hdf5plugin)."""

from __future__ import annotations

from pathlib import Path

from dataforge.errors import UsageError
from dataforge.store.formats.base import ShardReader, ShardWriter
from dataforge.store.layout import FORMATS
from dataforge.store.schema import Schema

__all__ = ["ShardReader", "ShardWriter", "open_shard_reader", "open_shard_writer"]


def check_format(name: str) -> str:
    if name not in FORMATS:
        raise UsageError(f"unknown format {name!r}: choose one of {', '.join(FORMATS)}")
    return name


def open_shard_writer(fmt: str, path: Path, schema: Schema) -> ShardWriter:
    if check_format(fmt) == "zarr":
        from dataforge.store.formats.zarr_shard import ZarrShardWriter

        return ZarrShardWriter(path, schema)
    from dataforge.store.formats.hdf5_shard import Hdf5ShardWriter

    return Hdf5ShardWriter(path, schema)


def open_shard_reader(fmt: str, path: Path) -> ShardReader:
    if check_format(fmt) == "zarr":
        from dataforge.store.formats.zarr_shard import ZarrShardReader

        return ZarrShardReader(path)
    from dataforge.store.formats.hdf5_shard import Hdf5ShardReader

    return Hdf5ShardReader(path)
