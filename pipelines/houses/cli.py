"""``dataforge houses``: ProcTHOR houses in the embedded world (generate, inspect, draw)."""

from __future__ import annotations

from pathlib import Path

import click

from dataforge.cli.generation import generation_command
from dataforge.pipelines.houses import PIPELINE


@click.group()
def houses() -> None:
    """ProcTHOR houses in dataforge's embedded world: rooms, walls, objects with real asset
    sizes from the procthor databases, rendered on the CPU.

    'generate' makes new houses with procthor's own generator (the embedded world answers its
    simulator queries); 'show' draws a house.
    """


houses.add_command(
    generation_command(
        PIPELINE,
        help="Make --count new ProcTHOR houses into --out: houses/<id>.json (house JSON, "
        "loadable in AI2-THOR and 'houses show') plus stored reachable positions, checked by "
        "'dataforge validate'. Needs the procthor extra: pip install 'dataforge[procthor]'.",
    )
)


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
    from dataforge.pipelines.houses.show import show as run_show

    summary = run_show(house_file, out, views=views, graph_out=graph_out, sim=sim)
    click.echo(summary)
