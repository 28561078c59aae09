"""What is drawn on a collected day's frames when they are shown: the clock ``HH:MM`` top-left
(the paper's Fig. 6) and, where a frame number is given, that number top-right.

An experience dataset stores the head camera's RGB clean (``rgb``) beside the clock
(``clock``, minutes since midnight); the stamps are drawn from those two, by :func:`stamp_frame`
only, wherever frames are shown: the day's MP4 (``collect --video mp4``: the day's frame
number), the frames sent to a model (``evaluate``: the number 0..K-1 of the kept frames), the
findingdory-train export (the same), and the previews (the clock). Upstream's raw observations
carry no stamp either; its VLM client draws "Frame: k" and "Time of Day: HH:MM" on the frames
it sends (``policies/llm/vlm_agent.py:195-223``, docs/findingdory_upstream.md §3).

Experience datasets made before the RGB was stored clean have the clock drawn into ``rgb``;
their manifest's config records no ``clean_rgb`` (:func:`rgb_is_clean`), and only the number is
added to their frames.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def hhmm(minutes: int) -> str:
    """Minutes since midnight as the zero-padded ``HH:MM`` drawn on frames."""
    m = int(minutes)
    return f"{m // 60:02d}:{m % 60:02d}"


def stamp_frame(
    rgb: np.ndarray, minutes: int, number: int | None = None, *, clock_drawn: bool = False
) -> np.ndarray:
    """A copy of ``rgb`` (``uint8`` ``(H, W, 3)``) with the clock ``minutes`` (since midnight)
    drawn top-left and ``number``, when given, top-right (:func:`dataforge.viz.overlay.stamp`).
    ``clock_drawn``: the frame already carries its clock (an experience dataset made before
    the RGB was stored clean), so only the number is drawn."""
    from dataforge.viz.overlay import stamp

    out = np.asarray(rgb) if clock_drawn else stamp(rgb, hhmm(minutes))
    if number is not None:
        out = stamp(out, str(int(number)), corner="top-right")
    return out


def rgb_is_clean(config: Mapping[str, Any]) -> bool:
    """Whether an experience dataset (its manifest's ``config``) stores its RGB without the
    clock drawn in."""
    return bool(config.get("clean_rgb", False))
