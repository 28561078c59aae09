"""Streamed episodes (``Episode.blocks``): rows appended block by block write the same shard,
byte for byte, as the whole arrays; metadata may be computed after the blocks; bad blocks are
schema errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dataforge.errors import SchemaError
from dataforge.store import ArraySpec, Episode, Schema
from dataforge.store.shard import write_shard

SCHEMA = Schema(
    {
        "rgb": ArraySpec("uint8", (None, 6, 8, 3), kind="rgb", chunk_rows=1),
        "pose": ArraySpec("float64", (None, 4)),
        "k": ArraySpec("float32", (3, 3)),
    }
)


def _arrays(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "rgb": rng.integers(0, 255, (n, 6, 8, 3), dtype=np.uint8),
        "pose": rng.normal(size=(n, 4)),
        "k": np.eye(3, dtype=np.float32),
    }


def _blocks(a: dict[str, np.ndarray], size: int):  # type: ignore[no-untyped-def]
    for s in range(0, len(a["rgb"]), size):
        yield {"rgb": a["rgb"][s : s + size], "pose": a["pose"][s : s + size]}


def _shard_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_streamed_rows_write_the_same_shard(tmp_path: Path, fmt: str) -> None:
    eps = [(_arrays(11, 1), "a"), (_arrays(5, 2), "b")]
    for d in ("whole", "stream", "s"):
        (tmp_path / d).mkdir()
    whole = write_shard(
        tmp_path / "whole", "u", fmt, SCHEMA, [Episode(i, a, {"n": len(a["rgb"])}) for a, i in eps]
    )
    seen: list[int] = []

    def streamed(a: dict[str, np.ndarray], i: str) -> Episode:
        empty = {"rgb": a["rgb"][:0], "pose": a["pose"][:0], "k": a["k"]}

        def meta() -> dict[str, int]:
            seen.append(len(a["rgb"]))
            return {"n": len(a["rgb"])}

        return Episode(i, empty, meta, blocks=_blocks(a, 4))

    stream = write_shard(tmp_path / "stream", "u", fmt, SCHEMA, [streamed(a, i) for a, i in eps])
    assert seen == [11, 5]
    assert [e.to_dict() for e in whole.episodes] == [e.to_dict() for e in stream.episodes]
    assert _shard_bytes(tmp_path / "whole") == _shard_bytes(tmp_path / "stream")


def test_a_bad_block_is_a_schema_error(tmp_path: Path) -> None:
    a = _arrays(3, 0)
    (tmp_path / "s").mkdir()
    empty = {"rgb": a["rgb"][:0], "pose": a["pose"][:0], "k": a["k"]}
    for block, match in (
        ({"k": a["k"]}, "fixed size"),
        ({"depth": a["pose"]}, "not in the schema"),
        ({"pose": a["pose"][:, :3]}, "shape"),
    ):
        with pytest.raises(SchemaError, match=match):
            write_shard(tmp_path / "s", "u", "zarr", SCHEMA, [Episode("e", empty, blocks=[block])])
        assert not (tmp_path / "s" / "u.zarr").exists()
