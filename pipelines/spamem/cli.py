"""``dataforge spamem``: generate SpaMEM interaction sequences."""

from __future__ import annotations

import click

from dataforge.cli.generation import generation_command
from dataforge.pipelines.spamem import PIPELINE


@click.group()
def spamem() -> None:
    """SpaMEM: spawn / place / remove sequences in ProcTHOR houses, each state captured from 8
    azimuths x 2 heights (RGB, depth, instance and semantic masks, poses, 2D/3D boxes, world
    graphs). Check a dataset with 'dataforge validate', summarise it with 'dataforge stats',
    look at a step with 'dataforge inspect DIR --preview p.png'.
    """


spamem.add_command(
    generation_command(
        PIPELINE,
        help="Generate SpaMEM sequences into --out (resumable, deterministic per --seed). "
        "Example: dataforge spamem generate --houses 1000 --out spamem/",
    )
)
