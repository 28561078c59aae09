"""``dataforge robomme``: RoboMME manipulation demonstrations on ManiSkill (CPU)."""

from __future__ import annotations

import click

from dataforge.cli.generation import generation_command
from dataforge.pipelines.robomme import PIPELINE


@click.group()
def robomme() -> None:
    """RoboMME (Dai et al.): 16 memory-manipulation tasks for the Franka Panda on a tabletop,
    as ManiSkill environments built from primitives, with demonstrations replayed from keyframe
    waypoints. Needs: pip install 'dataforge[robomme]' and a Vulkan driver (make vulkan)."""


robomme.add_command(
    generation_command(
        PIPELINE,
        help="Generate demonstrations into --out: per-episode shards (checked by 'dataforge "
        "validate') and record_dataset_<Task>.h5 in RoboMME's released HDF5 layout. Pass 1 "
        "plans and simulates physics only, saving states; pass 2 replays them through the "
        "cameras.",
    )
)


@robomme.command()
def tasks() -> None:
    """List the 16 tasks, their suites and whether this install can run them (no: the
    'robomme' extra is not installed)."""
    from dataforge.errors import MissingDependencyError
    from dataforge.pipelines.robomme.sim import require_sim
    from dataforge.pipelines.robomme.suites import TASK_SUITES

    try:
        require_sim()  # chooses the Vulkan driver, then imports the simulator
    except MissingDependencyError:
        have: set[str] = set()
    else:
        # Past require_sim the simulator is there: a task module that fails to import is a
        # bug, and raises.
        from dataforge.pipelines.robomme import tasks as task_envs

        have = set(task_envs.implemented())
    for task, suite in TASK_SUITES.items():
        click.echo(f"{task:18s} {suite:11s} {'yes' if task in have else 'no'}")
