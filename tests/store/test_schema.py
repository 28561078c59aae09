"""Schema rules: chunk sizes, validation of specs and of episodes against them."""

from __future__ import annotations

import numpy as np
import pytest

from dataforge.store import ArraySpec, Schema
from dataforge.store.schema import CHUNK_TARGET_BYTES


def test_image_arrays_get_one_frame_per_chunk():
    spec = ArraySpec("uint8", (None, 480, 640, 3), kind="rgb")
    assert spec.chunks == (1, 480, 640, 3)
    assert spec.shard_rows % spec.chunk_rows == 0
    assert spec.shard_rows * spec.row_bytes <= 64 << 20


def test_small_rows_are_batched_near_one_mib():
    spec = ArraySpec("float64", (None, 4, 4))
    assert spec.chunk_rows * spec.row_bytes <= CHUNK_TARGET_BYTES
    assert spec.chunk_rows * spec.row_bytes * 2 > CHUNK_TARGET_BYTES


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"dtype": "complex64", "shape": (None, 2)}, "dtype"),
        ({"dtype": "uint8", "shape": ()}, "row"),
        ({"dtype": "uint8", "shape": (None, None)}, "fixed"),
        ({"dtype": "uint8", "shape": (None, 0)}, "fixed"),
        ({"dtype": "uint8", "shape": (None, 2), "kind": "video"}, "kind"),
        ({"dtype": "uint8", "shape": (None, 2), "codec": "gzip"}, "codec"),
        ({"dtype": "uint8", "shape": (None, 2), "chunk_rows": 3, "shard_rows": 4}, "multiple"),
    ],
)
def test_bad_specs_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ArraySpec(**kwargs)


def test_episode_checks_name_what_differs():
    schema = Schema(
        {"rgb": ArraySpec("uint8", (None, 2, 2, 3), kind="rgb"), "k": ArraySpec("float64", (3, 3))}
    )
    ok = {"rgb": np.zeros((5, 2, 2, 3), np.uint8), "k": np.eye(3)}
    assert schema.check_episode(ok)["rgb"].shape == (5, 2, 2, 3)
    with pytest.raises(ValueError, match="dtype"):
        schema.check_episode({**ok, "rgb": np.zeros((5, 2, 2, 3), np.float32)})
    with pytest.raises(ValueError, match="shape"):
        schema.check_episode({**ok, "rgb": np.zeros((5, 2, 3, 3), np.uint8)})
    with pytest.raises(ValueError, match="shape"):
        schema.check_episode({**ok, "k": np.eye(4)})
    with pytest.raises(ValueError, match="missing"):
        schema.check_episode({"rgb": ok["rgb"]})
    with pytest.raises(ValueError, match="not in the schema"):
        schema.check_episode({**ok, "extra": np.zeros(3)})


def test_schema_round_trips_through_dict():
    schema = Schema(
        {
            "d": ArraySpec(
                "float32",
                (None, 4, 5),
                kind="depth",
                units="m",
                description="z",
                codec="blosc-zstd",
            )
        }
    )
    again = Schema.from_dict(schema.to_dict())
    assert again.to_dict() == schema.to_dict()
    with pytest.raises(ValueError, match="array name"):
        Schema({"Bad-Name": ArraySpec("uint8", (None,))})


def test_zarr_shard_files_hold_a_bounded_number_of_chunks():
    tiny = ArraySpec("float32", (None, 12, 16), kind="depth")
    assert tiny.shard_rows // tiny.chunk_rows <= 256
    big = ArraySpec("float32", (None, 480, 640), kind="depth")
    assert big.shard_rows * big.row_bytes <= 64 << 20
