"""``dataforge synthetic``: the store's test and demo pipeline (sphere scenes)."""

from __future__ import annotations

import sys
from typing import Any

import click

from dataforge.cli.options import execution_options, generation_options
from dataforge.cli.report import echo_run_report


@click.group()
def synthetic() -> None:
    """Synthetic sphere scenes (RGB, depth, instance, semantic, poses): exercise the store.

    Not a benchmark: a small, real generation for demos and tests of sharding, manifests,
    validation, resume and executors.
    """


def _resolution(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in value.lower().split("x"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not WIDTHxHEIGHT, e.g. 96x72") from None
    return w, h


@synthetic.command()
@click.option(
    "--scenes",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Number of scenes (one work unit and one shard each).",
)
@click.option(
    "--episodes-per-scene",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Camera orbits per scene.",
)
@click.option(
    "--frames", type=click.IntRange(min=1), default=8, show_default=True, help="Frames per episode."
)
@click.option(
    "--resolution",
    default="96x72",
    show_default=True,
    callback=_resolution,
    help="Image size WIDTHxHEIGHT.",
)
@click.option(
    "--spheres",
    type=click.IntRange(min=1, max=64),
    default=4,
    show_default=True,
    help="Spheres per scene.",
)
@click.option(
    "--hfov",
    type=float,
    default=79.0,
    show_default=True,
    help="Horizontal field of view in degrees.",
)
@generation_options
def generate(**kwargs: Any) -> None:
    """Generate synthetic scenes into --out (resumable, deterministic per --seed)."""
    from dataforge.pipelines.synthetic.config import SyntheticConfig
    from dataforge.pipelines.synthetic.generate import build_job
    from dataforge.progress import make_progress
    from dataforge.run import run_job

    options = execution_options(kwargs)
    width, height = kwargs.pop("resolution")
    cfg = SyntheticConfig(
        scenes=kwargs["scenes"],
        episodes_per_scene=kwargs["episodes_per_scene"],
        frames=kwargs["frames"],
        width=width,
        height=height,
        spheres=kwargs["spheres"],
        hfov_deg=kwargs["hfov"],
    )
    job = build_job(cfg, seed=kwargs["seed"], fmt=kwargs["fmt"])
    report = run_job(
        job,
        kwargs["out"],
        options,
        command=["dataforge", *sys.argv[1:]],
        progress=make_progress(kwargs["quiet"]),
    )
    echo_run_report(report)
