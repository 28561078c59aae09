"""The one stamping function of FindingDory frames: clock top-left, number top-right, drawn
from the stored clean frame and clock; on a frame whose clock was drawn at collection (datasets
made before the RGB was stored clean) only the number is added, so what evaluate sends is the
same either way."""

from __future__ import annotations

import numpy as np

from dataforge.pipelines.findingdory.stamps import hhmm, rgb_is_clean, stamp_frame
from dataforge.viz.overlay import stamp


def test_clock_top_left_number_top_right_and_older_datasets_alike() -> None:
    rng = np.random.default_rng(0)
    clean = rng.integers(0, 256, (128, 96, 3), dtype=np.uint8)
    minutes = 6 * 60 + 7
    assert hhmm(minutes) == "06:07" and hhmm(22 * 60) == "22:00"
    with_clock = stamp(clean, "06:07")  # what collect stored before
    np.testing.assert_array_equal(stamp_frame(clean, minutes), with_clock)
    sent_before = stamp(with_clock, "5", corner="top-right")  # what evaluate sent before
    np.testing.assert_array_equal(stamp_frame(clean, minutes, 5), sent_before)
    np.testing.assert_array_equal(
        stamp_frame(with_clock, minutes, 5, clock_drawn=True), sent_before
    )
    np.testing.assert_array_equal(stamp_frame(with_clock, minutes, clock_drawn=True), with_clock)
    assert not np.array_equal(stamp_frame(clean, minutes + 1, 5), sent_before)
    assert rgb_is_clean({"clean_rgb": True}) and not rgb_is_clean({})
