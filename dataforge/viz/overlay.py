"""Text stamps on frames: a short label in a dark, semi-opaque box in one corner.

Made for the time-of-day clock ("07:42") stamped on an agent's experience frames, as in
FindingDory's experience videos (Fig. 6), but any short label works. The font size follows the
image height (about 1/18 of it, at least 8 px), so a stamp reads well at 480x640 and is still
legible at 64x48. Pixels are deterministic for a given Pillow build: Pillow's embedded default
font (Aileron) with the basic layout engine, or its bitmap font where FreeType is missing.
"""

from __future__ import annotations

import functools

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from dataforge.errors import UsageError

CORNERS = ("top-left", "top-right", "bottom-left", "bottom-right")
BOX_RGBA = (0, 0, 0, 160)  # dark, semi-opaque
TEXT_RGBA = (255, 255, 255, 255)
MIN_FONT_PX = 8


def font_size(height: int) -> int:
    """The stamp's font size in pixels for an image ``height`` pixels tall."""
    return max(MIN_FONT_PX, round(height / 18))


@functools.lru_cache(maxsize=32)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)  # Pillow >= 10.1 with FreeType
    except (ImportError, OSError, TypeError):
        return ImageFont.load_default()  # bitmap font, one size


def stamp(rgb: np.ndarray, text: str, *, corner: str = "top-left") -> np.ndarray:
    """Return a copy of ``rgb`` (``uint8`` ``(H, W, 3)``) with ``text`` in a dark box at
    ``corner`` (one of :data:`CORNERS`). Only the box's pixels change; a label wider than the
    image is clipped."""
    if corner not in CORNERS:
        raise UsageError(f"corner must be one of {', '.join(CORNERS)}; got {corner!r}")
    arr = np.asarray(rgb)
    if arr.dtype != np.uint8 or arr.ndim != 3 or arr.shape[2] != 3:
        raise UsageError(f"stamp needs a uint8 (H, W, 3) RGB image, got {arr.dtype} {arr.shape}")
    h, w = arr.shape[:2]
    size = font_size(h)
    font = _font(size)
    pad = max(1, size // 4)  # inside the box, around the text
    margin = max(1, size // 4)  # between the box and the image's edges

    measure = ImageDraw.Draw(Image.new("L", (1, 1)))
    left, top, right, bottom = measure.textbbox((0, 0), text, font=font)
    box_w, box_h = right - left + 2 * pad, bottom - top + 2 * pad
    x0 = margin if corner.endswith("left") else w - margin - box_w
    y0 = margin if corner.startswith("top") else h - margin - box_h

    layer = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    draw.rectangle((x0, y0, x0 + box_w - 1, y0 + box_h - 1), fill=BOX_RGBA)
    draw.text((x0 + pad - left, y0 + pad - top), text, font=font, fill=TEXT_RGBA)
    out = Image.alpha_composite(Image.fromarray(arr, "RGB").convert("RGBA"), layer)
    return np.asarray(out.convert("RGB")).copy()
