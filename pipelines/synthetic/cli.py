"""``dataforge synthetic``: the store's test and demo pipeline (sphere scenes)."""

from __future__ import annotations

import click

from dataforge.cli.generation import generation_command
from dataforge.pipelines.synthetic import PIPELINE


@click.group()
def synthetic() -> None:
    """Synthetic sphere scenes (RGB, depth, instance, semantic, poses): exercise the store.

    Not a benchmark: a small, real generation for demos and tests of sharding, manifests,
    validation, resume and executors.
    """


synthetic.add_command(
    generation_command(
        PIPELINE, help="Generate synthetic scenes into --out (resumable, deterministic per --seed)."
    )
)
