"""``dataforge robomme``: RoboMME manipulation demonstrations on ManiSkill (CPU)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from dataforge.cli.options import execution_options, generation_options
from dataforge.cli.report import echo_run_report


@click.group()
def robomme() -> None:
    """RoboMME (Dai et al.): 16 memory-manipulation tasks for the Franka Panda on a tabletop,
    as ManiSkill environments built from primitives, with demonstrations replayed from keyframe
    waypoints. Needs: pip install 'dataforge[robomme]' and a Vulkan driver (make vulkan)."""


@robomme.command()
@click.option(
    "--tasks", default="all", show_default=True,
    help="'all' or a comma-separated list, e.g. PickXtimes,BinFill (names as in RoboMME).",
)  # fmt: skip
@click.option(
    "--episodes-per-task", type=click.IntRange(min=1), default=1, show_default=True,
    help="Episodes per task (the paper: 100 train, 50 val/test).",
)  # fmt: skip
@click.option(
    "--split", type=click.Choice(("train", "val", "test")), default="train", show_default=True,
    help="Seed range (and default noise) of the split.",
)  # fmt: skip
@click.option(
    "--metadata-dir", type=click.Path(path_type=Path, file_okay=False, exists=True), default=None,
    help="RoboMME's env_metadata/<split>/ folder: generate exactly its (task, seed, "
    "difficulty) episodes, the first --episodes-per-task of each task.",
)  # fmt: skip
@click.option(
    "--noise", "--noise-prob", "noise_prob", type=click.FloatRange(0, 1), default=None,
    help="Probability that a free-space keyframe waypoint is displaced (then recovered). "
    "Default: 0.05 for train, 0 for val/test.",
)  # fmt: skip
@click.option(
    "--noise-scale", type=click.FloatRange(0, 1), default=None,
    help="Size of a displacement, as a fraction of the 1 m workspace  [default: 0.05]",
)  # fmt: skip
@click.option(
    "--size", type=click.IntRange(32, 1024), default=256, show_default=True,
    help="Camera resolution (square) of the front and wrist cameras.",
)  # fmt: skip
@click.option(
    "--max-retries", type=click.IntRange(0, 99), default=7, show_default=True,
    help="Next seeds tried when an episode fails (planner or success check); filtered "
    "attempts are counted in the metadata and 'dataforge stats'.",
)  # fmt: skip
@click.option(
    "--first-episode", type=click.IntRange(min=0), default=0, show_default=True,
    help="Index of the first episode (extend a dataset with new seeds of the same scheme).",
)  # fmt: skip
@generation_options
def generate(**kw: Any) -> None:
    """Generate demonstrations into --out: per-episode shards (checked by 'dataforge
    validate') and record_dataset_<Task>.h5 in RoboMME's released HDF5 layout. Pass 1 plans and
    simulates physics only, saving states; pass 2 replays them through the cameras."""
    from dataforge.pipelines.robomme.api import generate_demos, make_config
    from dataforge.progress import make_progress

    options = execution_options(kw)
    cfg = make_config(
        tasks=kw["tasks"],
        episodes_per_task=kw["episodes_per_task"],
        split=kw["split"],
        metadata_dir=kw["metadata_dir"],
        noise_prob=kw["noise_prob"],
        noise_scale=kw["noise_scale"],
        size=kw["size"],
        max_retries=kw["max_retries"],
        first_episode=kw["first_episode"],
    )
    report = generate_demos(
        cfg,
        out=kw["out"],
        seed=kw["seed"],
        fmt=kw["fmt"],
        options=options,
        command=["dataforge", *sys.argv[1:]],
        progress=make_progress(kw["quiet"]),
    )
    echo_run_report(report)


@robomme.command()
def tasks() -> None:
    """List the 16 tasks, their suites and whether this install implements them."""
    from dataforge.pipelines.robomme.suites import TASK_SUITES

    try:
        from dataforge.pipelines.robomme.sim import require_sim

        require_sim()
        from dataforge.manip.vulkan import ensure_vulkan

        ensure_vulkan()
        from dataforge.pipelines.robomme import tasks as task_envs

        have = set(task_envs.implemented())
    except ImportError:
        have = set()
    for task, suite in TASK_SUITES.items():
        click.echo(f"{task:18s} {suite:11s} {'yes' if task in have else 'no'}")
