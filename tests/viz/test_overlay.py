"""Text stamps (time-of-day clocks) on experience frames."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from dataforge.errors import UsageError
from dataforge.viz import overlay
from dataforge.viz.overlay import CORNERS, font_size, stamp


def bright_image(h: int, w: int) -> np.ndarray:
    """A gradient with every channel >= 60, so the dark box changes every pixel it covers."""
    yy, xx = np.mgrid[0:h, 0:w]
    return np.stack(
        [60 + xx * 190 // w, 60 + yy * 190 // h, np.full_like(xx, 200)], axis=-1
    ).astype(np.uint8)


def changed_box(before: np.ndarray, after: np.ndarray) -> tuple[int, int, int, int]:
    """The changed pixels' bounding box (top, left, bottom, right; exclusive), asserting that
    exactly the pixels inside it changed."""
    mask = (before != after).any(axis=-1)
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    assert rows.size and cols.size, "the stamp changed nothing"
    top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    assert mask[top:bottom, left:right].all()
    assert mask.sum() == (bottom - top) * (right - left)
    return int(top), int(left), int(bottom), int(right)


@pytest.mark.parametrize(("h", "w"), [(48, 64), (480, 640)])
@pytest.mark.parametrize("corner", CORNERS)
def test_stamp_changes_only_a_box_in_the_named_corner(h, w, corner):
    img = bright_image(h, w)
    original = img.copy()
    out = stamp(img, "07:42", corner=corner)
    assert np.array_equal(img, original)  # the input is not modified
    assert out.shape == img.shape and out.dtype == np.uint8
    top, left, bottom, right = changed_box(img, out)
    margin = max(1, font_size(h) // 4) + 1
    if corner.startswith("top"):
        assert top <= margin and bottom <= h // 2
    else:
        assert bottom >= h - margin and top >= h // 2
    if corner.endswith("left"):
        assert left <= margin and right <= w // 2
    else:
        assert right >= w - margin and left >= w // 2
    # the box holds white text on a darkened background
    region = out[top:bottom, left:right].astype(int)
    assert region.max() >= 200
    assert np.median(region) < np.median(img[top:bottom, left:right])


@pytest.mark.parametrize(("h", "w"), [(48, 64), (480, 640)])
def test_stamp_is_deterministic_and_scales_with_the_image(h, w):
    img = bright_image(h, w)
    a, b = stamp(img, "07:42"), stamp(img.copy(), "07:42")
    assert np.array_equal(a, b)
    top, _, bottom, _ = changed_box(img, a)
    text_h = bottom - top
    assert font_size(h) <= text_h <= 3 * font_size(h)
    assert not np.array_equal(a, stamp(img, "07:43"))


def test_font_size_follows_the_height():
    assert font_size(480) == 27
    assert font_size(48) == 8  # the minimum
    assert font_size(1080) == 60


def test_bitmap_font_fallback_without_freetype(monkeypatch):
    """Without FreeType the stamp uses the one-size default font: its box is that font's text
    box plus the padding, in the bottom-left corner at the margin, with white text on it."""
    real = overlay.ImageFont.load_default
    asked: list[int | None] = []

    def no_freetype(size=None):
        asked.append(size)
        if size is not None:
            raise ImportError("The _imagingft C module is not installed")
        return real()

    monkeypatch.setattr(overlay.ImageFont, "load_default", no_freetype)
    overlay._font.cache_clear()
    try:
        h, w = 48, 64
        img = bright_image(h, w)
        out = stamp(img, "07:42", corner="bottom-left")
    finally:
        overlay._font.cache_clear()
    assert asked == [font_size(h), None]  # the sized font was refused, the default taken
    # the expected box, from the default font's own measure of the text (pad = margin = 2 at 8 px)
    left, top, right, bottom = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox(
        (0, 0), "07:42", font=real()
    )
    pad = margin = max(1, font_size(h) // 4)
    box_w, box_h = right - left + 2 * pad, bottom - top + 2 * pad
    expected = (h - margin - box_h, margin, h - margin, margin + box_w)
    assert changed_box(img, out) == expected
    t, lft, b, r = expected
    assert out[t:b, lft:r].max() >= 200  # white text drawn inside the darkened box


def test_bad_arguments_are_usage_errors():
    img = bright_image(48, 64)
    with pytest.raises(UsageError, match="corner"):
        stamp(img, "07:42", corner="middle")
    with pytest.raises(UsageError, match="uint8"):
        stamp(img.astype(np.float32), "07:42")
    with pytest.raises(UsageError, match="uint8"):
        stamp(img[..., 0], "07:42")
