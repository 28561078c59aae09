"""The Permanence suite's VideoUnmaskSwap task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from dataforge.pipelines.robomme.tasks.permanence.base import _Permanence


class VideoUnmaskSwap(_Permanence):
    """The video shows the covering and 1-2 / 1-2 / 2-3 swaps of 3 / 4 / 4 containers on a
    rotated triangle, line or square; then 1-2 / 1 / 2 picks (``VideoUnmaskSwap.py`` configs).
    Task list: "static" until the last swap ends (video), pick selected_bins[0],
    [put down, pick selected_bins[1]]. Departs from upstream only as the package docstring
    lists."""

    TASK = "VideoUnmaskSwap"
    VIDEO = True
    SWAPS = True
