"""``dataforge houses show``: a top-down map of a house and a few rendered views, as one PNG."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from shapely.geometry import Polygon

from dataforge.world.assets import AssetCatalogue
from dataforge.world.house import House
from dataforge.world.navigation import wall_obstacles
from dataforge.world.scene import type_color
from dataforge.world.surfaces import object_footprint

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from dataforge.world.mesh_assets import MeshLibrary


def draw_plan(
    ax: Axes, house: House, catalogue: AssetCatalogue, reachable: np.ndarray | None
) -> None:
    """Rooms, walls (holes left open), object footprints and reachable positions on ``ax``."""
    for room in house.rooms:
        poly = np.asarray(room.polygon_xz)
        ax.fill(
            poly[:, 0], poly[:, 1], color=np.array(type_color(room.room_type)) / 255, alpha=0.25
        )
        c = Polygon(poly).representative_point()
        ax.text(c.x, c.y, f"{room.room_type}\n{room.id}", fontsize=7, ha="center", color="#333")
    for segment in wall_obstacles(house, catalogue):
        x, z = segment.xy
        ax.plot(x, z, color="#222", lw=1.6)
    for obj in house.objects:
        if obj.parent_id is not None:
            continue
        shadow = object_footprint(obj, catalogue.asset(obj.asset_id))
        for fp in getattr(shadow, "geoms", [shadow]):
            if fp.is_empty or not hasattr(fp, "exterior"):
                continue
            x, z = fp.exterior.xy
            ax.fill(x, z, color=np.array(type_color(obj.object_type)) / 255, alpha=0.8, lw=0)
    if reachable is not None and len(reachable):
        ax.scatter(reachable[:, 0], reachable[:, 2], s=2, c="#1b9e77", label="reachable")
        ax.legend(loc="upper right", fontsize=7)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")


def show_house(
    house: House,
    catalogue: AssetCatalogue,
    out: Path,
    *,
    views: int = 4,
    width: int = 320,
    height: int = 240,
    reachable: np.ndarray | None = None,
    sim: str = "embedded",
    library: MeshLibrary | None = None,
) -> Path:
    """Draw the plan and ``views`` rendered views into the PNG ``out`` (its folder must exist)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dataforge.simulators import open_world

    rooms = sorted(house.rooms, key=lambda r: -Polygon(r.polygon_xz).area)[: max(1, views)]
    frames = []
    if views > 0:
        world = open_world(sim, house, catalogue, width=width, height=height, library=library)
        try:
            for k in range(views):
                room = rooms[k % len(rooms)]
                c = Polygon(room.polygon_xz).representative_point()
                frames.append((room, world.render([c.x, 1.5, c.y], 90.0 * k, 20.0).rgb))
        finally:
            world.close()
    cols = max(1, min(views, 2))
    rows = (views + cols - 1) // cols if views else 0
    fig = plt.figure(figsize=(6 + 3.2 * cols, max(6.0, 2.6 * rows)))
    grid = fig.add_gridspec(max(rows, 1), 1 + cols, width_ratios=[2.2] + [1] * cols)
    draw_plan(fig.add_subplot(grid[:, 0]), house, catalogue, reachable)
    for k, (room, rgb) in enumerate(frames):
        ax = fig.add_subplot(grid[k // cols, 1 + k % cols])
        ax.imshow(rgb)
        ax.set_title(f"{room.room_type} ({room.id}), yaw {90 * k}", fontsize=8)
        ax.axis("off")
    fig.suptitle(
        f"{house.name}: {len(house.rooms)} rooms, {len(house.objects)} objects", fontsize=10
    )
    fig.tight_layout()
    out = Path(out)  # its folder must exist: it is not created
    try:
        fig.savefig(out, dpi=110)
    finally:
        plt.close(fig)
    return out
