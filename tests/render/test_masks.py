"""2D boxes of instance masks (dataforge.render.masks), checked against a brute-force reference
and against a rendered frame."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from renderhelpers import needs_egl

from dataforge.render import (
    Renderer,
    Scene,
    box_corners,
    box_mesh,
    polygon_slab,
    project_box,
    shared_context,
    thor_camera_pose,
)
from dataforge.render.masks import BOX_COLUMNS, mask_boxes


def reference_boxes(mask: np.ndarray) -> np.ndarray:
    """The same table computed one id at a time with np.nonzero."""
    rows = []
    for k in sorted(int(i) for i in np.unique(mask) if i > 0):
        v, u = np.nonzero(mask == k)
        rows.append((k, u.min(), v.min(), u.max(), v.max(), len(u)))
    return np.array(rows, np.int64).reshape(-1, 6)


def test_columns_and_a_hand_made_mask() -> None:
    assert BOX_COLUMNS == ("instance", "x0", "y0", "x1", "y1", "pixels")
    mask = np.zeros((6, 8), np.int32)
    mask[2, 5] = 9  # a single pixel: (u, v, u, v)
    mask[1:4, 0:3] = 4  # rows 1..3, columns 0..2
    mask[5, 7] = 4  # a second, disjoint piece of id 4 stretches its box
    mask[0, 6:8] = 2
    got = mask_boxes(mask)
    assert got.dtype == np.int64 and got.shape == (3, 6)
    np.testing.assert_array_equal(
        got,
        [
            [2, 6, 0, 7, 0, 2],
            [4, 0, 1, 7, 5, 10],
            [9, 5, 2, 5, 2, 1],
        ],
    )


def test_single_pixel_box_is_inclusive() -> None:
    for v, u in ((0, 0), (4, 6), (9, 0), (0, 11)):
        mask = np.zeros((10, 12), np.uint16)
        mask[v, u] = 3
        np.testing.assert_array_equal(mask_boxes(mask), [[3, u, v, u, v, 1]])
    full = np.full((5, 7), 1, np.int32)
    np.testing.assert_array_equal(mask_boxes(full), [[1, 0, 0, 6, 4, 35]])


def test_empty_masks_give_no_rows() -> None:
    for mask in (np.zeros((4, 5), np.int32), np.zeros((0, 3), np.int32), np.zeros((3, 0), int)):
        got = mask_boxes(mask)
        assert got.shape == (0, 6) and got.dtype == np.int64


def test_absent_ids_have_no_row() -> None:
    mask = np.zeros((4, 4), np.int32)
    mask[0, 0], mask[3, 3] = 2, 7  # ids 1, 3..6 absent
    assert mask_boxes(mask)[:, 0].tolist() == [2, 7]


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4), (), (1, 2, 2, 1)])
def test_non_2d_input_is_refused(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="2-D"):
        mask_boxes(np.ones(shape, np.int32))


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.uint16, np.int64])
def test_agrees_with_brute_force_on_random_masks(dtype: type) -> None:
    rng = np.random.default_rng(11)
    for trial in range(40):
        h, w = rng.integers(1, 40, size=2)
        ids = int(rng.integers(1, 12))
        mask = rng.integers(0, ids + 1, size=(h, w)).astype(dtype)
        if trial % 3 == 0:  # sparse: mostly background, ids with gaps
            mask[rng.random((h, w)) < 0.9] = 0
            mask[mask > 0] += 20
        got = mask_boxes(mask)
        np.testing.assert_array_equal(got, reference_boxes(mask.astype(np.int64)))
        assert (np.diff(got[:, 0]) > 0).all()  # sorted by id, one row each
        assert got[:, 5].sum() == np.count_nonzero(mask)


# ------------------------------------------------------------------------- a rendered frame

BOX_ID, FLOOR_ID = 5, 1
BOX = ((2.0, 0.4, 3.0), (0.8, 0.8, 0.6), 25.0)  # centre, size, yaw


@pytest.fixture(scope="module")
def renderer() -> Iterator[Renderer]:
    mark = needs_egl()
    if mark.args[0]:
        pytest.skip(mark.kwargs["reason"])
    shared_context()
    floor = [(0.0, 0.0), (4.0, 0.0), (4.0, 6.0), (0.0, 6.0)]
    scene = Scene(
        [
            polygon_slab(floor, 0.0, 0.05, instance_id=FLOOR_ID, semantic_id=1),
            box_mesh(*BOX, color=(200, 40, 40), instance_id=BOX_ID, semantic_id=2),
        ]
    )
    with Renderer(160, 120, 90.0) as r:
        r.set_scene(scene)
        yield r


@pytest.mark.parametrize(
    "pose_args",
    [((2.0, 1.2, 1.0), 0.0, 20.0), ((0.6, 1.5, 1.5), 45.0, 30.0), ((3.5, 0.9, 4.8), 220.0, 5.0)],
)
def test_box_of_a_rendered_box_matches_its_projection(renderer: Renderer, pose_args: tuple) -> None:
    pose = thor_camera_pose(*pose_args)
    frame = renderer.render(pose)
    rows = mask_boxes(frame.instance)
    np.testing.assert_array_equal(rows, reference_boxes(frame.instance))
    assert set(rows[:, 0].tolist()) == {FLOOR_ID, BOX_ID}
    (row,) = rows[rows[:, 0] == BOX_ID]
    _, x0, y0, x1, y1, pixels = row.tolist()
    assert pixels == np.count_nonzero(frame.instance == BOX_ID) > 100
    # The box is seen whole and unoccluded: its mask spans the projected box (pixel centres
    # inside, so within a pixel of the continuous outline; x1, y1 are inclusive).
    u0, v0, u1, v1 = project_box(box_corners(*BOX), renderer.K, pose, 160, 120)
    assert u0 > 0 and v0 > 0 and u1 < 160 and v1 < 120
    np.testing.assert_allclose([x0, y0, x1 + 1, y1 + 1], [u0, v0, u1, v1], atol=1.0)
    # and the box's pixels fill a good part of (not more than) its 2D box
    assert pixels <= (x1 - x0 + 1) * (y1 - y0 + 1)
    assert pixels >= 0.4 * (x1 - x0 + 1) * (y1 - y0 + 1)
