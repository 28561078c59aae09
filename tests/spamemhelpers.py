"""The SpaMEM question records of a hand-built sequence (tests/pipelines/spamem/conftest.py's
scenes), as ``spamem tasks`` builds them: rgb, both horizons, the standing azimuth-0 stream view."""

from __future__ import annotations

from typing import Any

import numpy as np

from dataforge.pipelines.spamem.questions import Builder, Settings
from dataforge.pipelines.spamem.sequence_view import SequenceView

SPAWNABLE = ("Apple", "Bowl", "Bread", "Cup", "Mug", "Pen")


def questions(
    seq: SequenceView,
    levels: tuple[int, ...],
    seed: int = 0,
    task: str | None = None,
    frames: str = "stream",
    sampling: bool = False,
) -> list[dict[str, Any]]:
    """Every record of ``seq`` at ``levels`` (of ``task`` only, if given), drawn with ``seed``;
    ``frames``: the tasks' --frames (these scenes' fixtures were written for the stream).
    Without ``sampling`` every SED/CSR control and TL object is asked and RSR/RSR-M
    need one candidate, so
    the small scenes test the answer rules; with it, the tasks' sampling rules apply."""
    settings = Settings(
        levels=levels,
        horizons=("short", "long"),
        modalities=("rgb",),
        stream_view=(0.0, "standing"),
        dataset="sequences",
        frames=frames,
        **(
            {}
            if sampling
            else {
                "control_share": 1.0,
                "min_candidates": 1,
                "near_margin_m": 0.0,
                "guess_limit": 1.0,
            }
        ),
    )
    builder = Builder(seq, settings, np.random.default_rng(seed), SPAWNABLE)
    return [r for r in builder.records() if task is None or r["task"] == task]
