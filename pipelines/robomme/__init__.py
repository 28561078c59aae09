"""RoboMME: demonstrations of 16 memory-manipulation tasks on ManiSkill (CPU).

See ``generate.py`` for inputs, seeds, outputs and invariants; the tasks are ManiSkill envs in
``tasks/`` (importing them imports ManiSkill), the tabletop machinery in ``dataforge/manip``.
"""

from dataforge.pipelines.robomme.checks import (
    INVARIANTS,
    check_dataset,
    check_episode,
    keyframes,
    stats,
)
from dataforge.registry import register_pipeline

register_pipeline(
    "robomme",
    summary="RoboMME manipulation demos (ManiSkill, keyframe waypoints, noise and recovery)",
    check_episode=check_episode,
    check_dataset=check_dataset,
    stats=stats,
    invariants=INVARIANTS,
    preview_frames=keyframes,
)
