"""dataforge's shard-file encoder writes exactly what zarr's sharding codec writes."""

from __future__ import annotations

import numpy as np
import pytest
import zarr
from zarr.storage import LocalStore

from dataforge.store import ArraySpec
from dataforge.store.formats.zarr_shard import _compressors
from dataforge.store.formats.zarr_sharding import ShardStream, shard_key

SPECS = {
    "rgb": ArraySpec("uint8", (None, 6, 5, 3), kind="rgb", shard_rows=4),
    "depth": ArraySpec("float32", (None, 6, 5), kind="depth", shard_rows=3),
    "pose": ArraySpec("float64", (None, 4, 4), chunk_rows=2, shard_rows=6),
    "flags": ArraySpec("bool", (None,), chunk_rows=4, shard_rows=8),
    "raw": ArraySpec("int16", (None, 3), codec="none", chunk_rows=2, shard_rows=4),
    "zstd": ArraySpec("uint16", (None, 7), codec="blosc-zstd", chunk_rows=1, shard_rows=5),
}


def _data(spec: ArraySpec, rows: int, rng: np.random.Generator) -> np.ndarray:
    shape = (rows, *spec.trailing)
    if spec.dtype == "bool":
        return rng.random(shape) < 0.5
    if spec.dtype.startswith("float"):
        return rng.normal(size=shape).astype(spec.dtype)
    info = np.iinfo(spec.dtype)
    return rng.integers(info.min, info.max, shape, dtype=spec.dtype)


def _zarr_array(path, spec: ArraySpec, rows: int):
    return zarr.create_array(
        LocalStore(str(path)),
        shape=(rows, *spec.trailing),
        chunks=spec.chunks,
        shards=(spec.shard_rows, *spec.trailing),
        dtype=spec.dtype,
        compressors=_compressors(spec.codec, np.dtype(spec.dtype).itemsize),
        fill_value=np.zeros((), spec.dtype).item(),
        config={"write_empty_chunks": True},
    )


@pytest.mark.parametrize("name", list(SPECS))
def test_full_shards_are_byte_identical_to_zarrs(tmp_path, name):
    spec = SPECS[name]
    rows = 2 * spec.shard_rows
    block = _data(spec, rows, np.random.default_rng(0))
    theirs = _zarr_array(tmp_path / "zarr", spec, rows)
    theirs[:] = block
    stream = ShardStream(spec, tmp_path / "ours")
    for part in np.array_split(block, [1, 3, rows - 1]):  # appends of uneven sizes
        stream.append(part)
    stream.close()
    assert stream.shards_written == 2
    for i in range(2):
        ours = shard_key(tmp_path / "ours", i, len(spec.shape)).read_bytes()
        zarr_bytes = shard_key(tmp_path / "zarr", i, len(spec.shape)).read_bytes()
        assert ours == zarr_bytes


@pytest.mark.parametrize("name", list(SPECS))
def test_tail_shards_read_back_through_zarr(tmp_path, name):
    spec = SPECS[name]
    rows = spec.shard_rows + spec.chunk_rows + 1  # one full shard, then a partial edge chunk
    block = _data(spec, rows, np.random.default_rng(1))
    arr = _zarr_array(tmp_path / "a", spec, rows)
    stream = ShardStream(spec, tmp_path / "a")
    stream.append(block)
    stream.close()
    np.testing.assert_array_equal(arr[:], block)
    np.testing.assert_array_equal(arr[rows - 1], block[rows - 1])


def test_chunk_encoding_is_deterministic_across_threads():
    """c-blosc with internal threads can emit blocks in completion order; dataforge must not."""
    from concurrent.futures import ThreadPoolExecutor

    from dataforge.store.formats.chunks import ChunkStream

    spec = ArraySpec("bool", (None, 4), chunk_rows=1 << 16, shard_rows=1 << 16)
    block = np.zeros((8, 4), bool)
    block[::3, 1] = True

    def encode(_: int) -> bytes:
        out: list[bytes] = []
        stream = ChunkStream(spec, lambda i, data: out.append(data))
        stream.append(block)
        stream.close()
        return out[0]

    import numcodecs.blosc

    before = numcodecs.blosc.get_nthreads()
    numcodecs.blosc.set_nthreads(2)  # what numcodecs picks on a 2-core machine
    try:
        in_main = {encode(i) for i in range(100)}
        with ThreadPoolExecutor(4) as ex:
            in_threads = set(ex.map(encode, range(100)))
    finally:
        numcodecs.blosc.set_nthreads(before)
    assert len(in_main) == 1 and in_main == in_threads
