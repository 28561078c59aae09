"""Fixtures for IR2R tests (helpers in tests/ir2rhelpers.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from ir2rhelpers import (
    HAVE_SHARED,
    SHARED_DATA,
    build,
    chain,
    line_positions,
    r2r_record,
    write_connectivity,
    write_r2r,
)


@pytest.fixture
def small_data(tmp_path: Path) -> Path:
    """Scan 'lineA' (a corridor v0..v9 with a separate room w0..w3), scan 'solo' (one path)."""
    data = tmp_path / "data"
    pos = {**line_positions("v", 10), **line_positions("w", 4, x0=20.0)}
    edges = chain([f"v{i}" for i in range(10)]) + chain([f"w{i}" for i in range(4)])
    write_connectivity(data, "lineA", pos, edges)
    write_connectivity(data, "solo", line_positions("s", 3), chain(["s0", "s1", "s2"]))
    records = [
        r2r_record(10, "lineA", ["v0", "v1", "v2"]),
        r2r_record(11, "lineA", ["v8", "v9"]),
        r2r_record(12, "lineA", ["v3", "v4", "v5"], n_instr=4),
        r2r_record(13, "lineA", ["v6", "v7"]),
        r2r_record(20, "lineA", ["w0", "w1"], n_instr=2),
        r2r_record(21, "lineA", ["w3", "w2"], n_instr=3),
        r2r_record(30, "solo", ["s0", "s2"]),
    ]
    write_r2r(data, "val_seen", records)
    return data


@pytest.fixture(scope="session")
def shared_tours(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Tours of a shared val split, built once per session (zarr, seed 0)."""
    built: dict[str, Path] = {}

    def get(split: str) -> Path:
        if not HAVE_SHARED:
            pytest.skip("needs ../shared/data (r2r/ and mp3d_connectivity/), absent here")
        if split not in built:
            out = tmp_path_factory.mktemp(f"tours-{split}")
            shutil.rmtree(out)
            build(out, SHARED_DATA, split)
            built[split] = out
        return built[split]

    return get
