"""MP4 videos of RGB frames (H.264 via PyAV), e.g. an embodied agent's experience video.

Frames are ``uint8`` arrays of shape ``(H, W, 3)``. Files are written atomically (under a
temporary name beside the target, then renamed) and deterministically: the same frames and
settings give byte-identical files with the same PyAV build. To that end x264 runs on one thread
with its SIMD level pinned (SSE2 on x86-64, see ``_X264_CPU``), the container is written with
FFmpeg's ``bitexact`` flag (no ``Lavf`` version tag, no creation time), and RGB -> YUV 4:2:0 is
done here in integer arithmetic (BT.601, limited range, tagged in the stream) rather than by
swscale, whose SIMD paths can differ between CPUs. x264 still writes its version and settings into
the stream; they are constant for a given PyAV wheel.

H.264 in ``yuv420p`` needs an even width and height. An odd-sized frame is padded by one pixel
of edge replication (the last column and/or row repeated), so a 63x47 video is stored, and
decoded, as 64x48; :attr:`Mp4Writer.encoded_size` says which.

Needs the optional ``video`` extra (PyAV, which bundles FFmpeg and libx264).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import numbers
import os
import platform
from collections.abc import Iterable, Iterator
from fractions import Fraction
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import numpy as np

from dataforge.errors import InputNotFoundError, UsageError, missing_dependency
from dataforge.store.atomic import TMP_PREFIX, fsync_dir, fsync_tree

_tmp_counter = itertools.count()

# x264's SIMD level, pinned on x86-64 to SSE2 (MMX|MMX2|SSE|SSE2 = 15; every x86-64 CPU has it).
# With the auto-detected level the bytes depend on the CPU, and its AVX-512 code made tiny frames
# (64x48) differ from one write to the next in one process; the SSE2 code matched x264's C code
# in our checks, at ~80% of the auto speed. Other architectures keep x264's detection.
_X264_CPU = {"x264-params": "asm=15"} if platform.machine().lower() in ("x86_64", "amd64") else {}


def _av(what: str) -> ModuleType:
    try:
        import av
    except ImportError:
        raise missing_dependency("av", "video", what) from None
    return av


def _rgb_to_yuv420p(rgb: np.ndarray) -> np.ndarray:
    """BT.601 limited-range YUV 4:2:0 in PyAV's planar layout ``(H * 3 // 2, W)``; integer
    arithmetic only, so identical on every machine. Chroma is taken from 2x2 RGB sums."""
    h, w = rgb.shape[:2]
    px = rgb.astype(np.int32)
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    y = ((66 * r + 129 * g + 25 * b + 128) >> 8) + 16
    s = px.reshape(h // 2, 2, w // 2, 2, 3).sum(axis=(1, 3))
    rs, gs, bs = s[..., 0], s[..., 1], s[..., 2]
    u = ((-38 * rs - 74 * gs + 112 * bs + 512) >> 10) + 128
    v = ((112 * rs - 94 * gs - 18 * bs + 512) >> 10) + 128
    planes = [y.astype(np.uint8).ravel(), u.astype(np.uint8).ravel(), v.astype(np.uint8).ravel()]
    return np.concatenate(planes).reshape(h * 3 // 2, w)


def _check_fps(fps: float) -> Fraction:
    if isinstance(fps, bool) or not isinstance(fps, numbers.Real) or not math.isfinite(fps):
        raise UsageError(f"fps must be a finite number, got {fps!r}")
    if not 0 < fps <= 1000:
        raise UsageError(f"fps must be in (0, 1000], got {fps}")
    return Fraction(float(fps)).limit_denominator(1001)


def _check_crf(crf: int) -> int:
    if isinstance(crf, bool) or not isinstance(crf, numbers.Integral) or not 0 <= crf <= 51:
        raise UsageError(f"crf must be an integer in 0..51, got {crf!r}")
    return int(crf)


class Mp4Writer:
    """Write RGB frames of one size to an H.264 MP4 at ``path``, as a context manager::

        with Mp4Writer(path, width=640, height=480, fps=10) as w:
            for frame in frames:
                w.write(frame)

    ``width`` and ``height`` are the frames' size; odd ones are padded to even (module doc).
    ``crf`` is x264's constant rate factor (0 lossless luma .. 51 worst; 23 is its default).
    The file appears at ``path`` only when :meth:`close` succeeds; leaving the ``with`` block
    with an exception (or calling :meth:`abort`) removes the temporary file and leaves ``path``
    as it was. Closing a writer that got no frames raises :class:`UsageError`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        width: int,
        height: int,
        *,
        fps: float = 30.0,
        crf: int = 23,
    ) -> None:
        for name, value in (("width", width), ("height", height)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise UsageError(f"{name} must be a positive integer, got {value!r}")
        rate = _check_fps(fps)
        crf = _check_crf(crf)
        av = _av("Writing MP4 videos")
        self.path = Path(path)
        self.width, self.height = int(width), int(height)
        self.encoded_size = (self.width + self.width % 2, self.height + self.height % 2)
        self.frames = 0
        self._closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(
            f"{TMP_PREFIX}{self.path.name}.{os.getpid()}.{next(_tmp_counter)}"
        )
        self._container: Any = av.open(
            str(self._tmp),
            "w",
            format="mp4",
            container_options={"fflags": "+bitexact", "movflags": "+faststart"},
        )
        try:
            stream = self._container.add_stream("libx264", rate=rate)
            stream.width, stream.height = self.encoded_size
            stream.pix_fmt = "yuv420p"
            cc = stream.codec_context
            cc.thread_count = 1  # x264's output depends on its thread count
            # BT.601 (SMPTE 170M), limited range: what _rgb_to_yuv420p produces.
            cc.colorspace, cc.color_primaries, cc.color_trc, cc.color_range = 6, 6, 6, 1
            stream.options = {"crf": str(crf), "preset": "medium", **_X264_CPU}
            self._stream = stream
        except BaseException:
            self.abort()
            raise
        self._av = av

    def write(self, frame: np.ndarray) -> None:
        """Append one ``uint8`` ``(height, width, 3)`` RGB frame."""
        if self._closed:
            raise UsageError(f"{self.path}: write() on a closed Mp4Writer")
        arr = np.asarray(frame)
        if arr.dtype != np.uint8 or arr.shape != (self.height, self.width, 3):
            raise UsageError(
                f"{self.path}: frame {self.frames} is {arr.dtype} {arr.shape}; expected uint8 "
                f"({self.height}, {self.width}, 3)"
            )
        if (self.width, self.height) != self.encoded_size:
            pad_h, pad_w = self.height % 2, self.width % 2
            arr = np.pad(arr, ((0, pad_h), (0, pad_w), (0, 0)), mode="edge")
        try:
            vf = self._av.VideoFrame.from_ndarray(_rgb_to_yuv420p(arr), format="yuv420p")
            vf.pts = self.frames
            for packet in self._stream.encode(vf):
                self._container.mux(packet)
        except BaseException:
            self.abort()
            raise
        self.frames += 1

    def close(self) -> None:
        """Flush the encoder, finish the file and move it to ``path``. Idempotent."""
        if self._closed:
            return
        if self.frames == 0:
            self.abort()
            raise UsageError(f"{self.path}: no frames were written; an MP4 needs at least one")
        try:
            for packet in self._stream.encode():
                self._container.mux(packet)
            self._container.close()
            self._closed = True
            fsync_tree(self._tmp)
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        fsync_dir(self.path.parent)

    def abort(self) -> None:
        """Discard the video: close the container and remove the temporary file."""
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):
                self._container.close()
        with contextlib.suppress(OSError):
            self._tmp.unlink()

    def __enter__(self) -> Mp4Writer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_mp4(
    frames: Iterable[np.ndarray], path: str | os.PathLike[str], *, fps: float, crf: int = 23
) -> int:
    """Write ``frames`` (``uint8`` ``(H, W, 3)`` RGB, all one size) to an H.264 MP4 at ``path``
    atomically and deterministically; return the number of frames. See :class:`Mp4Writer`."""
    it = iter(frames)
    first = next(it, None)
    if first is None:
        raise UsageError(f"{path}: no frames to write; an MP4 needs at least one")
    first = np.asarray(first)
    if first.ndim != 3 or first.shape[2] != 3:
        raise UsageError(f"{path}: frames must be (H, W, 3) RGB, got shape {first.shape}")
    height, width = int(first.shape[0]), int(first.shape[1])
    with Mp4Writer(path, width, height, fps=fps, crf=crf) as writer:
        writer.write(first)
        for frame in it:
            writer.write(frame)
    return writer.frames


def _check_readable(path: str | os.PathLike[str]) -> Any:
    av = _av("Reading MP4 videos")
    if not Path(path).is_file():
        raise InputNotFoundError(f"no such video file: {path}")
    return av


def read_mp4_frames(path: str | os.PathLike[str]) -> Iterator[np.ndarray]:
    """Decode the first video stream of ``path`` to ``uint8`` ``(H, W, 3)`` RGB frames, in order
    (for tests and validation; sizes are the stored, even ones). A missing file or PyAV raises
    here, not at the first frame."""
    av = _check_readable(path)

    def frames() -> Iterator[np.ndarray]:
        with av.open(str(path), "r") as container:
            stream = container.streams.video[0]
            for frame in container.decode(stream):
                yield frame.to_ndarray(format="rgb24")

    return frames()


def mp4_frame_count(path: str | os.PathLike[str]) -> int:
    """Number of frames in the first video stream of ``path`` (from the MP4 index; decoded and
    counted if the container does not say)."""
    av = _check_readable(path)
    with av.open(str(path), "r") as container:
        stream = container.streams.video[0]
        if stream.frames:
            return int(stream.frames)
        return sum(1 for _ in container.decode(stream))
