"""``dataforge houses``: ProcTHOR houses in the embedded world (generate, inspect, draw)."""

from __future__ import annotations

from pathlib import Path

import click

from dataforge.cli.generation import generation_command
from dataforge.pipelines.houses import PIPELINE

ASSETS_OPTION = click.option(
    "--assets",
    "assets_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    envvar="DATAFORGE_ASSETS",
    help="Folder of real meshes, one <assetId>.glb/.gltf/.obj each, fitted to the asset boxes; "
    "assets without one keep their archetypes [env: DATAFORGE_ASSETS].",
)


@click.group()
def houses() -> None:
    """ProcTHOR houses in dataforge's embedded world: rooms, walls, objects with real asset
    sizes from the procthor databases, rendered with OpenGL (a GPU, or the CPU through Mesa's
    llvmpipe).

    'generate' makes new houses with procthor's own generator (the embedded world answers its
    simulator queries); 'show' draws a house; 'assets' draws the shapes of every object type.
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
    "--views",
    type=click.IntRange(min=0, max=8),
    default=4,
    show_default=True,
    help="Rendered views beside the map (0: map only).",
)
@click.option(
    "--graph",
    "graph_out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the house's world graph as JSON here.",
)
@click.option(
    "--sim",
    type=click.Choice(("embedded", "ai2thor")),
    default="embedded",
    show_default=True,
    help="Renderer of the views: the embedded world (OpenGL: a GPU or Mesa's llvmpipe), or "
    "AI2-THOR (needs its Unity build).",
)
@ASSETS_OPTION
def show(
    house_file: Path,
    out: Path,
    views: int,
    graph_out: Path | None,
    sim: str,
    assets_dir: Path | None,
) -> None:
    """Draw HOUSE_FILE: a top-down map (rooms, walls, doors, objects, reachable positions on
    AI2-THOR's 0.25 m grid) and rendered views."""
    from dataforge.pipelines.houses.show import show as run_show

    summary = run_show(
        house_file, out, views=views, graph_out=graph_out, sim=sim, assets=assets_dir
    )
    click.echo(summary)


@houses.command()
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="PNG contact sheet to write.",
)
@click.option(
    "--types",
    default="",
    metavar="A,B",
    help="Object types to draw (comma-separated; default: all 109 of procthor's database).",
)
@click.option(
    "--json",
    "json_out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write, per type: archetype, parts, fill and support surfaces (kind, height_m, "
    "height_frac, area_m2).",
)
@click.option(
    "--boxes",
    is_flag=True,
    help="Draw the assets' bounding boxes instead (the look before shaped archetypes).",
)
@ASSETS_OPTION
def assets(
    out: Path, types: str, json_out: Path | None, boxes: bool, assets_dir: Path | None
) -> None:
    """Draw every asset archetype (one asset per type, of median size) on a floor before a
    wall, as a contact sheet; optionally write each shape's parts and support surfaces."""
    from dataforge.config import parse_list
    from dataforge.pipelines.houses.show import assets as run_assets

    chosen = tuple(parse_list(types)) if types else ()
    summary = run_assets(out, types=chosen, json_out=json_out, assets_dir=assets_dir, boxes=boxes)
    click.echo(summary)
