"""MP4 videos via PyAV: round trip, determinism, odd sizes, atomic writes, missing PyAV."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.store.atomic import TMP_PREFIX
from dataforge.viz.video import Mp4Writer, mp4_frame_count, read_mp4_frames, write_mp4

HERE = Path(__file__).resolve().parent


@pytest.fixture
def av():
    return pytest.importorskip(
        "av", reason="PyAV is not installed (pip install 'dataforge[video]')"
    )


def gradient_frames(n: int = 12, h: int = 48, w: int = 64) -> list[np.ndarray]:
    """A moving colour gradient: smooth, so H.264 at the default CRF stays close to it."""
    yy, xx = np.mgrid[0:h, 0:w]
    frames = []
    for i in range(n):
        r = 40 + (xx * 160 // w + 5 * i) % 170
        g = 40 + (yy * 160 // h)
        b = np.full_like(xx, 40 + 10 * i)
        frames.append(np.stack([r, g, b], axis=-1).astype(np.uint8))
    return frames


def mean_abs_error(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


def test_round_trip(av, tmp_path):
    frames = gradient_frames()
    path = tmp_path / "experience.mp4"
    assert write_mp4(frames, path, fps=10) == 12
    assert path.is_file() and path.stat().st_size > 0
    assert mp4_frame_count(path) == 12
    decoded = list(read_mp4_frames(path))
    assert len(decoded) == 12
    for orig, dec in zip(frames, decoded, strict=True):
        assert dec.shape == (48, 64, 3) and dec.dtype == np.uint8
        assert mean_abs_error(orig, dec) < 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["experience.mp4"]


def test_same_frames_give_identical_bytes(av, tmp_path):
    frames = gradient_frames()
    write_mp4(frames, tmp_path / "a.mp4", fps=10)
    write_mp4(iter(frames), tmp_path / "b.mp4", fps=10)
    with Mp4Writer(tmp_path / "c.mp4", 64, 48, fps=10) as writer:
        for frame in frames:
            writer.write(frame)
    data = (tmp_path / "a.mp4").read_bytes()
    assert data == (tmp_path / "b.mp4").read_bytes() == (tmp_path / "c.mp4").read_bytes()
    assert b"Lavf" not in data  # bitexact container: no FFmpeg version tag


@pytest.mark.parametrize(("h", "w"), [(48, 64), (50, 66), (24, 32)])
def test_repeated_writes_of_tiny_frames_are_identical(av, tmp_path, h, w):
    # x264's auto-detected AVX-512 code gave differing bytes here now and then (see _X264_CPU)
    frames = gradient_frames(12, h, w)
    digests = set()
    for i in range(10):
        write_mp4(frames, tmp_path / f"{i}.mp4", fps=10)
        digests.add(hashlib.sha256((tmp_path / f"{i}.mp4").read_bytes()).hexdigest())
    assert len(digests) == 1


@pytest.mark.slow
def test_another_process_writes_the_same_bytes(av, tmp_path):
    write_mp4(gradient_frames(), tmp_path / "here.mp4", fps=10)
    script = (
        "import sys; from test_video import gradient_frames; "
        "from dataforge.viz.video import write_mp4; "
        "write_mp4(gradient_frames(), sys.argv[1], fps=10)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "there.mp4")], check=True, env=env)
    assert (tmp_path / "here.mp4").read_bytes() == (tmp_path / "there.mp4").read_bytes()


def test_settings_change_the_file(av, tmp_path):
    frames = gradient_frames()
    write_mp4(frames, tmp_path / "a.mp4", fps=10)
    write_mp4(frames, tmp_path / "b.mp4", fps=10, crf=40)
    assert (tmp_path / "a.mp4").read_bytes() != (tmp_path / "b.mp4").read_bytes()


def test_odd_size_is_padded_by_edge_replication(av, tmp_path):
    frames = [f[:47, :63] for f in gradient_frames()]
    path = tmp_path / "odd.mp4"
    with Mp4Writer(path, 63, 47, fps=10) as writer:
        assert writer.encoded_size == (64, 48)
        for frame in frames:
            writer.write(frame)
    decoded = list(read_mp4_frames(path))
    assert len(decoded) == 12
    for orig, dec in zip(frames, decoded, strict=True):
        assert dec.shape == (48, 64, 3)
        assert mean_abs_error(orig, dec[:47, :63]) < 6
        padded = np.pad(orig, ((0, 1), (0, 1), (0, 0)), mode="edge")
        assert mean_abs_error(padded[:, -1], dec[:, -1]) < 8
        assert mean_abs_error(padded[-1], dec[-1]) < 8


def test_overwrites_atomically_and_leaves_no_temp_file(av, tmp_path):
    path = tmp_path / "v.mp4"
    path.write_bytes(b"old")
    write_mp4(gradient_frames(4), path, fps=5)
    assert mp4_frame_count(path) == 4
    assert [p.name for p in tmp_path.iterdir()] == ["v.mp4"]


def test_failure_keeps_the_old_file_and_removes_the_temp_file(av, tmp_path):
    path = tmp_path / "v.mp4"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError), Mp4Writer(path, 64, 48, fps=10) as writer:
        for frame in gradient_frames(80):  # enough for x264 to emit packets to the temp file
            writer.write(frame)
        assert any(p.name.startswith(TMP_PREFIX) for p in tmp_path.iterdir())
        raise RuntimeError("the producer failed")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["v.mp4"]


def test_bad_input_is_a_usage_error(av, tmp_path):
    frames = gradient_frames(2)
    with (
        pytest.raises(UsageError, match="expected uint8"),
        Mp4Writer(tmp_path / "v.mp4", 32, 48, fps=10) as writer,
    ):
        writer.write(frames[0])
    with pytest.raises(UsageError, match="expected uint8"):
        write_mp4([frames[0], frames[1].astype(np.float32)], tmp_path / "v.mp4", fps=10)
    with pytest.raises(UsageError, match="no frames"):
        write_mp4([], tmp_path / "v.mp4", fps=10)
    with pytest.raises(UsageError, match="fps"):
        write_mp4(frames, tmp_path / "v.mp4", fps=0)
    with pytest.raises(UsageError, match="crf"):
        write_mp4(frames, tmp_path / "v.mp4", fps=10, crf=99)
    assert list(tmp_path.iterdir()) == []


def test_missing_pyav_names_the_video_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "av", None)  # makes `import av` raise ImportError
    with pytest.raises(MissingDependencyError) as info:
        write_mp4([np.zeros((4, 4, 3), np.uint8)], tmp_path / "v.mp4", fps=10)
    message = str(info.value)
    assert "'av'" in message and "dataforge[video]" in message and "\n" not in message
    with pytest.raises(MissingDependencyError):
        read_mp4_frames(tmp_path / "v.mp4")
