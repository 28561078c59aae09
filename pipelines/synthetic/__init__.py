"""Synthetic pipeline: sphere scenes that exercise the store and run machinery (test and demo).

Not a benchmark. See ``generate.py`` for inputs, seeds, outputs and invariants.
"""

from dataforge.pipelines.synthetic.checks import INVARIANTS, check_episode, stats
from dataforge.registry import register_pipeline

register_pipeline(
    "synthetic",
    summary="Synthetic sphere scenes (store and run machinery test and demo)",
    check_episode=check_episode,
    stats=stats,
    invariants=INVARIANTS,
)
