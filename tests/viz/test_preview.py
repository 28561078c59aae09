"""Contact sheets and colour maps."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from dataforge.store import open_dataset
from dataforge.viz.colors import colorize_depth, colorize_ids, depth_range
from dataforge.viz.preview import contact_sheet, frame_indices


def test_id_colours_are_consistent_and_background_black():
    ids = np.array([[0, 1, 2], [2, 1, 70000]])
    rgb = colorize_ids(ids)
    assert rgb.shape == (2, 3, 3) and rgb.dtype == np.uint8
    assert (rgb[0, 0] == 0).all()
    assert (rgb[0, 2] == rgb[1, 0]).all() and (rgb[0, 1] == rgb[1, 1]).all()
    assert not (rgb[0, 1] == rgb[0, 2]).all()


def test_depth_colours_mark_invalid_and_span_the_range():
    d = np.array([[0.0, 1.0, 2.0, np.nan, 3.0]])
    lo, hi = depth_range([d])
    assert 1.0 <= lo < hi <= 3.0
    rgb = colorize_depth(d, 1.0, 3.0)
    assert (rgb[0, 0] == 0).all() and (rgb[0, 3] == 0).all()
    assert not (rgb[0, 1] == rgb[0, 4]).all()


def test_frame_indices_spread_over_the_episode():
    assert frame_indices(10, 4) == [0, 3, 6, 9]
    assert frame_indices(2, 4) == [0, 1]
    assert frame_indices(0, 4) == []


def test_contact_sheet_has_a_row_per_image_array_and_a_column_per_frame(synthetic_dataset):
    with open_dataset(synthetic_dataset("zarr")) as ds:
        ep = ds[ds.episode_ids[0]]
        sheet = contact_sheet(ep, frames=3, tile_height=36)
        assert isinstance(sheet, Image.Image)
        # 4 image arrays (rgb, depth, instance, semantic) x 3 frames of 48x36 tiles
        assert sheet.size == (4 + 3 * (48 + 4), 4 + 4 * (36 + 14 + 4))
        # the first RGB tile is the episode's first frame
        tile = np.asarray(sheet)[4 + 14 : 4 + 14 + 36, 4 : 4 + 48]
        np.testing.assert_allclose(tile.astype(int), ep["rgb"][0].astype(int), atol=1)


def test_contact_sheet_needs_images(family_datasets):
    root, _ = family_datasets["zarr"]
    with open_dataset(root) as ds:
        assert contact_sheet(ds[ds.episode_ids[0]], frames=2).width > 0
    from dataforge.store import ArraySpec, DatasetWriter, Episode, Schema

    schema = Schema({"x": ArraySpec("float32", (None, 3))})
    tmp = root.parent / "noimg"
    with DatasetWriter(tmp, schema=schema, name="n") as w:
        w.write_unit("u", [Episode("e", {"x": np.zeros((2, 3), np.float32)})])
    with open_dataset(tmp) as ds, pytest.raises(ValueError, match="no image-like arrays"):
        contact_sheet(ds["e"])
