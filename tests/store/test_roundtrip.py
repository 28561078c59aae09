"""Round trip of every dtype and shape family through both formats, lazily read back."""

from __future__ import annotations

import numpy as np
import pytest
from dfhelpers import FAMILY_UNITS, family_schema

from dataforge.store import open_dataset


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_every_array_round_trips_exactly(family_datasets, fmt):
    root, written = family_datasets[fmt]
    with open_dataset(root) as ds:
        assert ds.format == fmt
        assert ds.episode_ids == [
            f"{u}/ep{i}" for u, ls in FAMILY_UNITS.items() for i in range(len(ls))
        ]
        for eid, ep in written.items():
            stored = ds[eid]
            assert stored.metadata == ep.metadata
            for name, expected in ep.arrays.items():
                got = stored[name].read()
                assert got.dtype == np.asarray(expected).dtype, name
                assert got.shape == np.asarray(expected).shape, name
                np.testing.assert_array_equal(got, expected, err_msg=f"{eid}:{name}")


def test_formats_read_identically(family_datasets):
    (zroot, _), (hroot, _) = family_datasets["zarr"], family_datasets["hdf5"]
    with open_dataset(zroot) as z, open_dataset(hroot) as h:
        assert z.episode_ids == h.episode_ids
        assert z.schema.to_dict() == h.schema.to_dict()
        for eid in z.episode_ids:
            assert z[eid].metadata == h[eid].metadata
            for name in z.schema:
                a, b = z[eid][name], h[eid][name]
                assert a.shape == b.shape and a.dtype == b.dtype
                np.testing.assert_array_equal(a.read(), b.read())
                if len(a):
                    np.testing.assert_array_equal(a[-1], b[-1])


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_lazy_indexing_matches_numpy(family_datasets, fmt):
    root, written = family_datasets[fmt]
    expected = np.asarray(written["unit-c/ep0"].arrays["rgb"])  # 13 frames, 4 per zarr file
    with open_dataset(root) as ds:
        rgb = ds["unit-c/ep0"]["rgb"]
        assert len(rgb) == 13 and rgb.shape == expected.shape
        for key in [
            0,
            5,
            12,
            -1,
            -13,
            slice(2, 9),
            slice(None, None, 3),
            slice(11, 3, -2),
            slice(20, 30),
            (4, slice(1, 5), 2),
            Ellipsis,
            (slice(3, 7), Ellipsis, 1),
        ]:
            np.testing.assert_array_equal(rgb[key], expected[key], err_msg=str(key))
        np.testing.assert_array_equal(np.asarray(rgb), expected)
        with pytest.raises(IndexError):
            rgb[13]
        with pytest.raises(IndexError):
            rgb[-14]


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_zero_length_and_fixed_shape_episodes(family_datasets, fmt):
    root, written = family_datasets[fmt]
    with open_dataset(root) as ds:
        empty = ds["unit-a/ep1"]
        assert empty["rgb"].shape == (0, 12, 16, 3)
        assert empty["rgb"][:].shape == (0, 12, 16, 3)
        assert empty["intrinsics"].shape == (3, 3)
        np.testing.assert_array_equal(
            empty["intrinsics"].read(), written["unit-a/ep1"].arrays["intrinsics"]
        )


def test_zarr_uses_sharding_with_one_frame_chunks(family_datasets):
    root, _ = family_datasets["zarr"]
    import zarr

    group = zarr.open_group(str(root / "shards" / "unit-c.zarr"), mode="r")
    rgb = group["rgb"]
    assert rgb.chunks == (1, 12, 16, 3)  # one frame per inner chunk
    assert rgb.shards == (4, 12, 16, 3)  # four frames per file: 15 frames -> 4 files
    files = sorted(p.name for p in (root / "shards" / "unit-c.zarr" / "rgb" / "c").iterdir())
    assert files == ["0", "1", "2", "3"]
    spec = family_schema()["pose"]
    assert group["pose"].chunks == spec.chunks and spec.chunk_rows > 1


def test_hdf5_chunks_one_frame_and_blosc(family_datasets):
    root, _ = family_datasets["hdf5"]
    import h5py

    with h5py.File(root / "shards" / "unit-c.h5", "r") as f:
        assert f["depth"].chunks == (1, 12, 16)
        assert "32001" in f["depth"]._filters  # blosc
        assert not f["joint"]._filters  # codec "none"


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_reading_across_more_shards_than_stay_open(family_datasets, fmt):
    root, written = family_datasets[fmt]
    with open_dataset(root) as ds:
        ds.max_open_shards = 1
        arrays = {eid: ds[eid]["depth"] for eid in written}  # lazy handles on 3 shards
        for eid, arr in arrays.items():  # each access may reopen an evicted shard
            np.testing.assert_array_equal(arr.read(), written[eid].arrays["depth"])
        assert len(ds._readers) == 1
