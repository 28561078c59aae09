"""``dataforge houses``: ProcTHOR houses in the embedded world (generate, inspect, draw)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from dataforge.cli.options import execution_options, generation_options
from dataforge.cli.report import echo_run_report


@click.group()
def houses() -> None:
    """ProcTHOR houses in dataforge's embedded world: rooms, walls, objects with real asset
    sizes from the procthor databases, rendered on the CPU.

    'generate' makes new houses with procthor's own generator (the embedded world answers its
    simulator queries); 'show' draws a house.
    """


@houses.command()
@click.option(
    "--count", required=True, type=click.IntRange(min=1), help="Number of houses to make."
)
@click.option(
    "--split", type=click.Choice(("train", "val", "test")), default="train", show_default=True,
    help="procthor's asset split the houses draw from.",
)  # fmt: skip
@click.option(
    "--room-spec", default=None,
    help="A ProcTHOR-10K room spec id for every house (e.g. kitchen, 2-bed-1-bath, "
    "8-room-3-bed); default: sampled per house as in ProcTHOR-10K.",
)  # fmt: skip
@click.option(
    "--max-attempts", type=click.IntRange(min=1), default=10, show_default=True,
    help="Seeds tried per house: a house that procthor gives up on, or that fails the "
    "usability checks (a room unreachable from the start, ...), is replaced by the next.",
)  # fmt: skip
@generation_options
def generate(**kw: Any) -> None:
    """Make --count new ProcTHOR houses into --out: houses/<id>.json (house JSON, loadable in
    AI2-THOR and 'houses show') plus stored reachable positions, checked by 'dataforge
    validate'. Needs the procthor extra: pip install 'dataforge[procthor]'."""
    from dataforge.pipelines.houses.api import generate_houses
    from dataforge.progress import make_progress

    options = execution_options(kw)
    report = generate_houses(
        count=kw["count"],
        out=kw["out"],
        seed=kw["seed"],
        fmt=kw["fmt"],
        options=options,
        split=kw["split"],
        room_spec=kw["room_spec"],
        max_attempts=kw["max_attempts"],
        command=["dataforge", *sys.argv[1:]],
        progress=make_progress(kw["quiet"]),
    )
    echo_run_report(report)


@houses.command()
@click.argument("house_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--out", required=True, type=click.Path(path_type=Path, dir_okay=False), help="PNG to write."
)
@click.option(
    "--views", type=click.IntRange(min=0, max=8), default=4, show_default=True,
    help="Rendered views beside the map (0: map only).",
)  # fmt: skip
@click.option("--graph", "graph_out", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Also write the house's world graph as JSON here.")  # fmt: skip
@click.option(
    "--sim", type=click.Choice(("embedded", "ai2thor")), default="embedded", show_default=True,
    help="Renderer of the views: the embedded CPU world, or AI2-THOR (needs its Unity build).",
)  # fmt: skip
def show(house_file: Path, out: Path, views: int, graph_out: Path | None, sim: str) -> None:
    """Draw HOUSE_FILE: a top-down map (rooms, walls, doors, objects, reachable positions on
    AI2-THOR's 0.25 m grid) and rendered views."""
    from dataforge.world.api import show as run_show

    summary = run_show(house_file, out, views=views, graph_out=graph_out, sim=sim)
    click.echo(summary)
