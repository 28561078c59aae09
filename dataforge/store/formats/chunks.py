"""Chunk encoding shared by both formats: cut rows into chunks, compress them in parallel.

Both shard formats store each chunk as one blosc-compressed buffer (Zarr's ``blosc`` codec and
HDF5's blosc filter 32001 both store the plain c-blosc frame), so dataforge encodes chunks
itself with numcodecs and hands the bytes to the format: Zarr shard files
(``zarr_sharding``) and HDF5 direct chunk writes. Encoding runs on a thread pool (c-blosc
releases the GIL), which is where the writer's throughput comes from; worker processes of a
parallel run use one thread each (``DATAFORGE_ENCODE_THREADS=1``). Each call is single-threaded
inside blosc, which keeps the compressed bytes deterministic (see below).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numcodecs.blosc
import numpy as np
from numcodecs import Blosc

from dataforge.store.schema import CODECS, ArraySpec

# c-blosc 1 with several internal threads stores blocks in the order the threads finish, so the
# same buffer can compress to different bytes. Determinism needs one blosc thread per call:
# numcodecs' context API (use_threads=False); parallelism comes from our own thread pool.
numcodecs.blosc.use_threads = False

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def encode_threads() -> int:
    value = os.environ.get("DATAFORGE_ENCODE_THREADS")
    return max(1, int(value)) if value else max(1, os.cpu_count() or 1)


def _pool() -> ThreadPoolExecutor | None:
    global _POOL
    if encode_threads() == 1:
        return None
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(encode_threads(), thread_name_prefix="dataforge-encode")
        return _POOL


def blosc_codec(codec: str, itemsize: int) -> Blosc | None:
    """The numcodecs Blosc codec of a schema codec name (None for ``"none"``)."""
    params = CODECS[codec]
    if params is None:
        return None
    return Blosc(
        cname=params[0],
        clevel=params[1],
        shuffle=Blosc.SHUFFLE if itemsize > 1 else Blosc.NOSHUFFLE,
        blocksize=0,
        typesize=itemsize,
    )


class ChunkStream:
    """Cuts appended rows of one array into chunks of ``chunk_rows`` rows and encodes them.

    ``sink(index, data)`` receives each encoded chunk in order. Rows of a chunk that straddles
    two appends are copied; nothing else is. Every ``append`` finishes encoding before it
    returns, so callers may reuse their buffers. ``close`` pads the last chunk with the fill
    value (0) to the full chunk shape, as both formats store edge chunks.
    """

    def __init__(self, spec: ArraySpec, sink: Callable[[int, bytes], None]) -> None:
        self.spec = spec
        self.dtype = np.dtype(spec.dtype)
        self.codec = blosc_codec(spec.codec, self.dtype.itemsize)
        self.sink = sink
        self.chunks_done = 0
        self._partial: np.ndarray | None = None

    def _encode(self, chunk: np.ndarray) -> bytes:
        raw = np.ascontiguousarray(chunk, dtype=self.dtype).reshape(-1).view(np.uint8)
        return bytes(self.codec.encode(raw)) if self.codec is not None else raw.tobytes()

    def _emit(self, chunks: list[np.ndarray]) -> None:
        pool = _pool() if len(chunks) > 1 else None
        encoded = list(pool.map(self._encode, chunks)) if pool else map(self._encode, chunks)
        for data in encoded:
            self.sink(self.chunks_done, data)
            self.chunks_done += 1

    def append(self, block: np.ndarray) -> None:
        cr = self.spec.chunk_rows
        ready: list[np.ndarray] = []
        if self._partial is not None:
            need = cr - self._partial.shape[0]
            self._partial = np.concatenate([self._partial, block[:need]])
            block = block[need:]
            if self._partial.shape[0] < cr:
                return
            ready.append(self._partial)
            self._partial = None
        full = block.shape[0] // cr
        ready += [block[c * cr : (c + 1) * cr] for c in range(full)]
        if block.shape[0] > full * cr:
            self._partial = np.array(block[full * cr :], copy=True)
        self._emit(ready)

    def close(self) -> None:
        if self._partial is not None:
            rows = self.spec.chunk_rows - self._partial.shape[0]
            pad = np.zeros((rows, *self._partial.shape[1:]), dtype=self.dtype)
            self._emit([np.concatenate([self._partial, pad])])
            self._partial = None
