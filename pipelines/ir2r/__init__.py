"""IR2R: Room-to-Room episodes ordered into tours (Iterative Vision-and-Language Navigation).

See ``generate.py`` for inputs, seeds, outputs and invariants; ``score.py`` for t-nDTW.
"""

from dataforge.pipelines.ir2r.checks import INVARIANTS, check_dataset, check_episode, stats
from dataforge.registry import register_pipeline

register_pipeline(
    "ir2r",
    summary="Iterative Room-to-Room tours (ATSP-ordered R2R episodes)",
    check_episode=check_episode,
    check_dataset=check_dataset,
    stats=stats,
    invariants=INVARIANTS,
)
