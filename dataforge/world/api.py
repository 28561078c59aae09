"""What ``dataforge houses`` commands call (no click in here)."""

from __future__ import annotations

import json
from pathlib import Path

from dataforge.world.assets import load_catalogue
from dataforge.world.graph import world_graph
from dataforge.world.house import load_house
from dataforge.world.show import show_house


def show(
    house_file: Path,
    out: Path,
    *,
    views: int = 4,
    graph_out: Path | None = None,
    sim: str = "embedded",
) -> str:
    """Write the picture (and optionally the world graph); return a one-line summary."""
    catalogue = load_catalogue()
    house = load_house(house_file, catalogue=catalogue)
    from dataforge.world.navigation import house_nav_grid

    reachable = house_nav_grid(house, catalogue).reachable_positions()
    show_house(house, catalogue, out, views=views, reachable=reachable, sim=sim)
    text = f"{house.name}: {len(house.rooms)} rooms, {len(house.objects)} objects; map in {out}"
    if graph_out is not None:
        graph = world_graph(house, catalogue)
        Path(graph_out).write_text(json.dumps(graph.to_dict(), indent=1) + "\n")
        text += f"; world graph in {graph_out}"
    return text
