"""``dataforge findingdory``: episodes with pick-and-place rearrangements (more to come:
experience collection, tasks, evaluation, scores)."""

from __future__ import annotations

import click

from dataforge.cli.generation import generation_command
from dataforge.pipelines.findingdory import COLLECT, PIPELINE, TASKS


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

COLLECT_HELP = (
    "Play every episode of the FindingDory episodes dataset DIR with the oracle agent into "
    "--out: per frame the head camera's RGB (clock stamped top-left), depth, instance and "
    "semantic masks, pose, action, time of day and room, plus the interaction log the tasks "
    "are made from; --video mp4 also writes videos/<episode>.mp4. Example: dataforge "
    "findingdory collect fd/episodes --video mp4 --out fd/experience"
)
findingdory.add_command(
    generation_command(COLLECT, name="collect", argument="episodes", help=COLLECT_HELP)
)


@click.group(name="findingdory-collect")
def findingdory_collect() -> None:
    """FindingDory experience collection (the same as 'dataforge findingdory collect', with
    --episodes)."""


findingdory_collect.add_command(generation_command(COLLECT, help=COLLECT_HELP))

TASKS_HELP = (
    "Instantiate the 60 templates of the paper's Table 3 from every collected day of DIR into "
    "--out: instruction, goal entities, predicate and every valid goal frame (teleport to the "
    "frame's pose in the world as the day left it, render and check), per subgoal, with "
    "solvability and tasks.jsonl in the authors' QA fields. Example: dataforge findingdory "
    "tasks fd/experience --out fd/tasks"
)
findingdory.add_command(
    generation_command(TASKS, name="tasks", argument="experience", help=TASKS_HELP)
)


@click.group(name="findingdory-tasks")
def findingdory_tasks() -> None:
    """FindingDory tasks (the same as 'dataforge findingdory tasks', with --experience)."""


findingdory_tasks.add_command(generation_command(TASKS, help=TASKS_HELP))
