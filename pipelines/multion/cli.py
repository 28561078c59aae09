"""``dataforge multion``: generate MultiON episodes, their oracle trajectories, and score."""

from __future__ import annotations

import click

from dataforge.cli.generation import generation_command
from dataforge.pipelines.multion import PIPELINE


@click.group()
def multion() -> None:
    """MultiON: navigate to an ordered sequence of goal cylinders (m-ON). 'generate' writes
    episodes in the challenge's format (<split>/<split>.json.gz + content/<scene>.json.gz),
    'oracle' the shortest-path follower's actions and observations, 'score' SUCCESS, PROGRESS,
    SPL and PPL. Check a dataset with 'dataforge validate', plot it with 'dataforge stats
    --plot', draw an episode with 'dataforge inspect --preview'.
    """


multion.add_command(
    generation_command(
        PIPELINE,
        help="Generate m-ON episodes into --out (resumable, deterministic per --seed). "
        "Example: dataforge multion generate --m 3 --split train --scenes generate:10 "
        "--episodes-per-scene 1000 --out multion/",
    )
)
