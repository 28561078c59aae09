"""A house's walkable space for :class:`dataforge.nav.grid.NavGrid`.

Free space is the union of the rooms' floor polygons. Obstacles are the walls (as segments,
with door holes that reach the floor left open, except where a door leaf is closed: a
``Doorway`` asset with ``openness`` 0) and the footprints of objects standing on the floor
(top-level objects whose box starts below ``FLOOR_OBJECT_MAX_Y``; pictures and TVs hung on walls
do not block the floor). Objects on receptacles ride on their receptacle's footprint.

An object's footprint is the union of its parts' footprints (:func:`part_boxes`): an L-shaped
counter blocks an L, not its bounding square. A table blocks its whole top: the space between its
legs is under the top, lower than the agent (AI2-THOR's agent is a capsule 0.2 m in radius and
about 1.8 m tall), so the agent cannot stand there, as in AI2-THOR, whose navigation mesh is
baked under the same rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapely.geometry import LineString
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from dataforge.world.assets import AssetCatalogue
from dataforge.world.boxes import object_box
from dataforge.world.house import House
from dataforge.world.surfaces import object_footprint

if TYPE_CHECKING:
    from dataforge.nav.grid import NavGrid

FLOOR_OBJECT_MAX_Y = 0.3  # m above the floor: boxes starting higher hang on walls
DOOR_MAX_SILL = 0.3  # m: a hole whose bottom is lower than this is walkable (a door)


def walkable_floor(house: House) -> BaseGeometry:
    from shapely.geometry import Polygon

    return unary_union([Polygon(r.polygon_xz) for r in house.rooms])


def closed_door_ids(house: House, catalogue: AssetCatalogue) -> frozenset[str]:
    """Doors whose leaf is closed (``openness`` 0 on a ``Doorway`` asset; frames have no leaf)."""
    return frozenset(
        d.id
        for d in house.doors
        if d.openness is not None
        and d.openness <= 0
        and catalogue.asset(d.asset_id).object_type == "Doorway"
    )


def wall_obstacles(house: House, catalogue: AssetCatalogue | None = None) -> list[BaseGeometry]:
    closed = closed_door_ids(house, catalogue) if catalogue is not None else frozenset()
    out: list[BaseGeometry] = []
    for wall in house.walls:
        if wall.empty or wall.height <= 0:
            continue
        line = LineString([wall.start, wall.end])
        doors = sorted(
            (s0, s1) for s0, s1, h0, _ in house.wall_holes(wall, skip=closed) if h0 < DOOR_MAX_SILL
        )
        s = 0.0
        for s0, s1 in [*doors, (line.length, line.length)]:
            if s0 > s + 1e-6:
                out.append(
                    LineString([line.interpolate(s).coords[0], line.interpolate(s0).coords[0]])
                )
            s = max(s, s1)
    return out


def object_obstacles(
    house: House, catalogue: AssetCatalogue, hidden: frozenset[str] = frozenset()
) -> list[BaseGeometry]:
    out: list[BaseGeometry] = []
    for obj in house.top_level_objects():
        if obj.id in hidden:
            continue
        box = object_box(obj, catalogue)
        if box.bottom - house_floor_y(house) < FLOOR_OBJECT_MAX_Y:
            fp = object_footprint(obj, catalogue.asset(obj.asset_id))
            if not fp.is_empty:
                out.append(fp)
    return out


def house_floor_y(house: House) -> float:
    return min((r.floor_y for r in house.rooms), default=0.0)


def house_nav_grid(
    house: House,
    catalogue: AssetCatalogue,
    *,
    agent_radius: float = 0.2,
    cell: float = 0.05,
    hidden: frozenset[str] = frozenset(),
) -> NavGrid:
    """The navigation grid of ``house`` for an agent of ``agent_radius`` (AI2-THOR's default
    agent is a 0.2 m radius capsule)."""
    from dataforge.nav.grid import NavGrid

    obstacles = wall_obstacles(house, catalogue) + object_obstacles(house, catalogue, hidden)
    return NavGrid.build(
        walkable_floor(house),
        obstacles,
        agent_radius=agent_radius,
        cell=cell,
        y=house_floor_y(house),
    )
