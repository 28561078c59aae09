"""The interface every shard format implements.

A shard writer receives rows of each array in order (episodes appended one after another) and the
shard's JSON index at the end; a shard reader gives array-likes that support numpy basic slicing
on the row axis, the JSON index back, and a description of how each array is stored (for schema
checks). Formats know nothing of episodes, manifests or pipelines.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.store.layout import SHARD_META_ARRAY
from dataforge.store.schema import Schema


class ShardWriter(ABC):
    """Writes one shard at ``path`` (a directory for Zarr, a file for HDF5)."""

    def __init__(self, path: Path, schema: Schema) -> None:
        self.path = Path(path)
        self.schema = schema
        self.rows = dict.fromkeys(schema, 0)

    def append(self, name: str, block: np.ndarray) -> None:
        """Append rows to array ``name`` (the block was checked against the schema)."""
        self._append(name, block)
        self.rows[name] += int(block.shape[0])

    @abstractmethod
    def _append(self, name: str, block: np.ndarray) -> None: ...

    @abstractmethod
    def close(self, index: dict[str, Any]) -> None:
        """Flush everything and store the shard's JSON index; the shard is then complete."""

    def abort(self) -> None:  # noqa: B027 - optional hook
        """Release resources after a failure (the caller deletes the partial shard)."""


class ShardReader(ABC):
    """Reads one committed shard."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @abstractmethod
    def array(self, name: str) -> Any:
        """An array-like (zarr.Array / h5py.Dataset) over all rows of ``name``."""

    @abstractmethod
    def array_names(self) -> list[str]: ...

    @abstractmethod
    def describe(self, name: str) -> dict[str, Any]:
        """How an array is stored: ``dtype``, ``shape``, ``chunks``, ``codec`` (schema names)."""

    @abstractmethod
    def _index_bytes(self) -> bytes: ...

    def index(self) -> dict[str, Any]:
        """The shard's JSON index written by ``ShardWriter.close``."""
        try:
            return json.loads(self._index_bytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"its episode index ({SHARD_META_ARRAY}) is corrupt: {exc}") from None

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


def index_bytes(index: dict[str, Any]) -> bytes:
    """Canonical, deterministic JSON bytes of a shard index."""
    return json.dumps(index, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
