"""Houses: new ProcTHOR houses from procthor's generator, with the embedded world as simulator.

Not a benchmark: the houses that SpaMEM, MultiON and FindingDory start from. See
``generate.py`` for inputs, seeds, outputs and invariants; the generator adapter is
``dataforge/world/procgen.py``.
"""

from dataforge.pipelines.houses.checks import (
    INVARIANTS,
    check_dataset,
    check_episode,
    stats,
)
from dataforge.registry import register_pipeline

register_pipeline(
    "houses",
    summary="ProcTHOR houses (procthor's generator on the embedded world)",
    check_episode=check_episode,
    check_dataset=check_dataset,
    stats=stats,
    invariants=INVARIANTS,
)
