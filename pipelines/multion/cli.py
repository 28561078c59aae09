"""``dataforge multion``: generate MultiON episodes, their oracle trajectories, and score."""

from __future__ import annotations

import click

from dataforge.cli.generation import generation_command
from dataforge.pipelines.multion import ORACLE, PIPELINE


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

ORACLE_HELP = (
    "Follow every episode of the MultiON dataset DIR with the shortest-path oracle into --out: "
    "its actions (FOUND 0, MOVE_FORWARD 1, TURN_LEFT 2, TURN_RIGHT 3), poses and, with "
    "--render, egocentric observations (ready-made imitation-learning demonstrations). "
    "Example: dataforge multion oracle multion/ --render rgb,depth --out demos/"
)
multion.add_command(generation_command(ORACLE, help=ORACLE_HELP))


@multion.command()
@click.argument(
    "directories", metavar="DIR...", nargs=-1, required=True, type=click.Path(file_okay=False)
)
@click.option(
    "--trajectories",
    "-t",
    multiple=True,
    required=True,
    type=click.Path(),
    help="The agent's trajectories for the DIR in the same position (repeat it, one per "
    "DIR): a JSON list or JSONL file of {scene_id, episode_id, actions, positions "
    "(optional)} records keyed as habitat-lab's loader keys episodes (ids restart at 0 in "
    "each scene; scene_id may be left out where an id is in one scene only), or a "
    "multion-oracle dataset.",
)
@click.option(
    "--success-distance",
    type=float,
    default=1.5,
    show_default=True,
    help="FOUND counts within this geodesic distance (m) of the current goal.",
)
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=2500,
    show_default=True,
    help="Actions per episode at most (the paper's 2,500); the rest are ignored.",
)
@click.option(
    "--forward-step", type=float, default=0.25, show_default=True, help="MOVE_FORWARD (m)."
)
@click.option(
    "--turn-angle",
    type=float,
    default=30.0,
    show_default=True,
    help="TURN_LEFT / TURN_RIGHT (degrees).",
)
@click.option(
    "--allow-missing",
    is_flag=True,
    help="Score episodes without a trajectory as failures (default: an error).",
)
@click.option(
    "--subset",
    is_flag=True,
    help="Score only the episodes the trajectories cover (e.g. 1,000 evaluation episodes, or "
    "an oracle run with --limit).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON, with every episode's result.")
def score(directories: tuple[str, ...], trajectories: tuple[str, ...], **kw: object) -> None:
    """The paper's SUCCESS, PROGRESS, SPL and PPL of trajectories on the MultiON episodes of
    each DIR (dataforge multion generate), averaged per m and overall."""
    from rich.console import Console

    from dataforge.pipelines.multion.score import ScoreSettings, report_table, score_datasets

    settings = ScoreSettings(
        success_distance=float(kw["success_distance"]),  # type: ignore[arg-type]
        max_steps=int(kw["max_steps"]),  # type: ignore[call-overload]
        forward_step=float(kw["forward_step"]),  # type: ignore[arg-type]
        turn_angle=float(kw["turn_angle"]),  # type: ignore[arg-type]
    )
    if kw["allow_missing"] and kw["subset"]:
        raise click.UsageError("--allow-missing and --subset exclude each other")
    report = score_datasets(
        directories,
        trajectories,
        settings,
        allow_missing=bool(kw["allow_missing"]),
        subset=bool(kw["subset"]),
    )
    if kw["as_json"]:
        click.echo(report.to_json())
        return
    Console().print(report_table(report))
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
