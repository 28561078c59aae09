"""``dataforge findingdory``: episodes with pick-and-place rearrangements (more to come:
experience collection, tasks, evaluation, scores)."""

from __future__ import annotations

import click

from dataforge.cli.generation import generation_command
from dataforge.pipelines.findingdory import PIPELINE


@click.group()
def findingdory() -> None:
    """FindingDory: memory tasks over an embodied agent's day of pick-and-place
    rearrangements. 'episodes' draws the rearrangements (objects, start and goal receptacles,
    distractors, pick and place spots, receptacle viewpoints) in ProcTHOR houses. Check a
    dataset with 'dataforge validate', summarise it with 'dataforge stats', draw an episode's
    plan with 'dataforge inspect --preview'.
    """


findingdory.add_command(
    generation_command(
        PIPELINE,
        name="episodes",
        help="Draw FindingDory episodes into --out, one work unit per scene (resumable, "
        "deterministic per --seed; draws that fail are counted by reason). Example: "
        "dataforge findingdory episodes --scenes generate:30 --split val --episodes 4 "
        "--out findingdory/episodes",
    )
)
