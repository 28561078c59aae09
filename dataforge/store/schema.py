"""Array schema of a dataset: dtype, shape, chunking, codec and units of every named array.

A pipeline declares its schema before it writes; the manifest records it and ``validate`` checks
every shard against it. Shapes have a leading row axis (``None`` = any number of rows per episode,
e.g. frames) followed by fixed dimensions; episodes are concatenated along the row axis inside a
shard, so the fixed dimensions must agree across the whole dataset (pad if they would not).

Chunking: image-like arrays (``kind`` rgb, depth, mask) get one frame per chunk, so one frame of one
modality is read without decompressing anything else; small per-row arrays (poses, actions) get as
many rows per chunk as fit in ~1 MiB. Zarr stores many chunks in one file with the sharding codec
(``shard_rows`` rows per file: ~64 MiB raw, at most 256 chunks); HDF5 keeps all chunks in its one
file per shard.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from dataforge.store.layout import check_array_name

KINDS = ("rgb", "depth", "mask", "data")
IMAGE_KINDS = ("rgb", "depth", "mask")

# A compressor of c-blosc (the names numcodecs, zarr and hdf5plugin accept).
BloscName = Literal["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"]
# codec name -> (blosc compressor, level); "none" stores raw bytes.
CODECS: dict[str, tuple[BloscName, int] | None] = {
    "blosc-lz4": ("lz4", 5),
    "blosc-zstd": ("zstd", 3),
    "none": None,
}
DEFAULT_CODEC = "blosc-lz4"

# Numeric dtypes a dataset may hold (strings and objects belong in episode metadata).
DTYPES = (
    "bool",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
)

CHUNK_TARGET_BYTES = 1 << 20
SHARD_TARGET_BYTES = 64 << 20
MAX_CHUNK_ROWS = 1 << 16
# Chunks per Zarr shard file are capped: the shard index has an entry per chunk, and zarr 3.1's
# partial-shard writer walks all of them in Morton order with quadratic cost.
MAX_CHUNKS_PER_SHARD = 256


def _pow2_floor(x: float) -> int:
    return 1 << max(0, math.floor(math.log2(max(x, 1.0))))


@dataclass(frozen=True)
class ArraySpec:
    """One named array of every episode.

    ``shape``: ``(None, *fixed)`` for a variable number of rows per episode, or fully fixed.
    ``kind``: how previews draw it (``rgb`` H×W×3 uint8, ``depth`` H×W, ``mask`` H×W integer ids,
    ``data`` anything else). ``units``: physical units of the values (``"m"``, ``"mm"``, ``"rad"``).
    """

    dtype: str
    shape: tuple[int | None, ...]
    kind: str = "data"
    units: str | None = None
    description: str = ""
    codec: str = DEFAULT_CODEC
    chunk_rows: int = 0
    shard_rows: int = 0

    def __post_init__(self) -> None:
        dtype = str(np.dtype(self.dtype)) if self.dtype in DTYPES else self.dtype
        if dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        object.__setattr__(self, "dtype", dtype)
        shape = tuple(self.shape)
        if len(shape) < 1:
            raise ValueError("shape needs at least one (row) axis; put scalars in metadata")
        if shape[0] is not None and (not isinstance(shape[0], int) or shape[0] < 0):
            raise ValueError(f"leading dimension must be None or a non-negative int, got {shape!r}")
        for d in shape[1:]:
            if not isinstance(d, int) or isinstance(d, bool) or d < 1:
                raise ValueError(f"fixed dimensions must be positive ints, got shape {shape!r}")
        object.__setattr__(self, "shape", shape)
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.codec not in CODECS:
            raise ValueError(f"codec {self.codec!r} is not one of {', '.join(CODECS)}")
        if self.chunk_rows <= 0:
            object.__setattr__(self, "chunk_rows", self._default_chunk_rows())
        if self.shard_rows <= 0:
            per_chunk = self.chunk_rows * self.row_bytes
            k = min(MAX_CHUNKS_PER_SHARD, max(1, SHARD_TARGET_BYTES // max(per_chunk, 1)))
            object.__setattr__(self, "shard_rows", self.chunk_rows * int(k))
        if self.shard_rows % self.chunk_rows:
            raise ValueError(
                f"shard_rows {self.shard_rows} must be a multiple of chunk_rows {self.chunk_rows}"
            )

    @property
    def trailing(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.shape[1:])  # type: ignore[arg-type]

    @property
    def row_bytes(self) -> int:
        return int(np.dtype(self.dtype).itemsize * math.prod(self.trailing))

    @property
    def chunks(self) -> tuple[int, ...]:
        return (self.chunk_rows, *self.trailing)

    def _default_chunk_rows(self) -> int:
        if self.kind in IMAGE_KINDS:
            return 1
        return min(MAX_CHUNK_ROWS, _pow2_floor(CHUNK_TARGET_BYTES / max(self.row_bytes, 1)))

    def check(self, name: str, value: Any) -> np.ndarray:
        """Return ``value`` as an array of this spec, or raise ValueError naming what differs."""
        arr = np.asarray(value)
        if arr.dtype != np.dtype(self.dtype):
            raise ValueError(f"array {name!r}: dtype {arr.dtype} != schema {self.dtype}")
        if arr.ndim != len(self.shape):
            raise ValueError(
                f"array {name!r}: {arr.ndim} dimensions {arr.shape} != schema {self.shape_str()}"
            )
        if tuple(arr.shape[1:]) != self.trailing or (
            self.shape[0] is not None and arr.shape[0] != self.shape[0]
        ):
            raise ValueError(f"array {name!r}: shape {arr.shape} != schema {self.shape_str()}")
        return np.ascontiguousarray(arr)

    def shape_str(self) -> str:
        return "(" + ", ".join("T" if d is None else str(d) for d in self.shape) + ")"

    def to_dict(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype,
            "shape": list(self.shape),
            "kind": self.kind,
            "units": self.units,
            "description": self.description,
            "codec": self.codec,
            "chunks": list(self.chunks),
            "chunk_rows": self.chunk_rows,
            "shard_rows": self.shard_rows,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ArraySpec:
        return cls(
            dtype=d["dtype"],
            shape=tuple(d["shape"]),
            kind=d.get("kind", "data"),
            units=d.get("units"),
            description=d.get("description", ""),
            codec=d.get("codec", DEFAULT_CODEC),
            chunk_rows=int(d.get("chunk_rows", 0)),
            shard_rows=int(d.get("shard_rows", 0)),
        )


@dataclass(frozen=True)
class Schema(Mapping[str, ArraySpec]):
    """The named arrays every episode of a dataset holds, in a fixed order."""

    arrays: Mapping[str, ArraySpec] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.arrays:
            raise ValueError("a schema needs at least one array")
        for name, spec in self.arrays.items():
            check_array_name(name)
            if not isinstance(spec, ArraySpec):
                raise TypeError(f"schema entry {name!r} must be an ArraySpec, got {spec!r}")
        object.__setattr__(self, "arrays", dict(self.arrays))

    def __getitem__(self, name: str) -> ArraySpec:
        return self.arrays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.arrays)

    def __len__(self) -> int:
        return len(self.arrays)

    def check_episode(self, arrays: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Check an episode's arrays against the schema; return them as contiguous arrays."""
        missing = [n for n in self.arrays if n not in arrays]
        extra = [n for n in arrays if n not in self.arrays]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing arrays {missing}")
            if extra:
                parts.append(f"arrays not in the schema {extra}")
            raise ValueError("episode " + " and ".join(parts))
        return {n: spec.check(n, arrays[n]) for n, spec in self.arrays.items()}

    def to_dict(self) -> dict[str, Any]:
        return {name: spec.to_dict() for name, spec in self.arrays.items()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Schema:
        return cls({name: ArraySpec.from_dict(s) for name, s in d.items()})
