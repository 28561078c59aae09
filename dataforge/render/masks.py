"""What instance masks show: 2D boxes and pixel counts of every instance in an image."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

BOX_COLUMNS = ("instance", "x0", "y0", "x1", "y1", "pixels")


def mask_boxes(mask: np.ndarray) -> np.ndarray:
    """Inclusive pixel boxes of the instances in ``mask`` (H x W integer ids, 0 = nothing).

    Returns an int64 array (K, 6) of rows ``(instance, x0, y0, x1, y1, pixels)`` sorted by id:
    columns ``x0..x1`` and rows ``y0..y1`` both inclusive, so the box of a single pixel at
    (u, v) is (u, v, u, v). Instances absent from the mask have no row."""
    mask = np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D, got shape {mask.shape}")
    labels = mask.astype(np.int64, copy=False)
    if labels.size == 0 or int(labels.max(initial=0)) <= 0:
        return np.zeros((0, len(BOX_COLUMNS)), np.int64)
    counts = np.bincount(labels.ravel())
    slices = ndimage.find_objects(labels)
    rows = [
        (k + 1, sl[1].start, sl[0].start, sl[1].stop - 1, sl[0].stop - 1, counts[k + 1])
        for k, sl in enumerate(slices)
        if sl is not None
    ]
    return np.array(rows, np.int64).reshape(-1, len(BOX_COLUMNS))
