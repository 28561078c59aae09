"""The navigable space a MultiON episode sampler draws from: :class:`GridSpace` in the embedded
world, :class:`HabitatSpace` on a Habitat navmesh. Where the scenes come from (``--scenes``) is
:mod:`dataforge.world.scene_sources`.

A space answers what the sampler asks: a random navigable point, the geodesic distance between
two points, whether two points are on one floor, the room of a point, and (embedded world)
whether every goal can still be walked up to once the goal cylinders stand in the way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.errors import UsageError
from dataforge.nav.space import Point

SAME_FLOOR_M = 0.5  # habitat's episode generators: points within 0.5 m in height share a floor
ISLAND_RADIUS_LIMIT = 1.5  # habitat's pointnav generator: starts on islands at least this big


# -- the embedded world ------------------------------------------------------------------------


class GridSpace:
    """A ProcTHOR house's navigable space on the embedded world's grid.

    Points are the centres of the free cells of the grid's largest component (the house's main
    floor area; an agent of ``agent_radius`` stands there), drawn uniformly, so equal floor
    areas are equally likely. Geodesics come from :class:`~dataforge.nav.hubs.HubGeodesics`.
    """

    kind = "embedded"

    def __init__(self, house: Any, catalogue: Any, *, agent_radius: float, cell: float) -> None:
        from dataforge.nav.hubs import HubGeodesics
        from dataforge.world.navigation import house_floor_y, house_nav_grid

        self.house = house
        self.floor_y = house_floor_y(house)
        grid = house_nav_grid(house, catalogue, agent_radius=agent_radius, cell=cell)
        self.grid = grid
        self.geodesics = HubGeodesics(grid)
        self.cells = np.argwhere(self.geodesics.mask)
        self.rooms = [(r.id, r.room_type) for r in house.rooms]

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        i, j = self.cells[int(rng.integers(len(self.cells)))]
        return np.round(self.grid.center((int(i), int(j)), self.floor_y), 6)

    def distance(self, a: Point, b: Point) -> float:
        return self.geodesics.distance(a, b)

    def same_floor(self, a: Point, b: Point) -> bool:
        return abs(float(a[1]) - float(b[1])) <= SAME_FLOOR_M

    def room_index(self, point: Point) -> int:
        """Index into ``rooms`` of the room holding ``point`` (-1: none)."""
        return int(self.room_indices(np.asarray(point, dtype=np.float64).reshape(1, 3))[0])

    def room_indices(self, points: np.ndarray) -> np.ndarray:
        """:meth:`room_index` of each of ``points`` (N x 3), at once."""
        from dataforge.world.validity import rooms_of

        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        if not len(pts):
            return np.zeros(0, dtype=np.int64)
        return np.asarray(rooms_of(self.house, pts[:, [0, 2]]), dtype=np.int64)

    def navigable(self, point: Point) -> bool:
        return self.geodesics.contains(point)

    def move_grid(self, goals: Sequence[Sequence[float]], config: Mapping[str, Any]) -> Any:
        """The grid an agent moves on in an episode with these goals: the goal cylinders
        blocked (a disc of cylinder + agent radius each) when the dataset's ``config`` says
        ``block``, else the scene's grid."""
        if not config.get("block", True):
            return self.grid
        radius = float(config.get("cylinder_radius", 0.1)) + float(config.get("agent_radius", 0.1))
        return self.grid.with_discs_blocked(goals, radius)

    def reachable_with(
        self, start: Point, goals: Sequence[Point] | np.ndarray, block_radius: float
    ) -> bool:
        """Whether, with a round obstacle of ``block_radius`` (cylinder + agent radius) around
        every goal, the start stays navigable and every goal can be walked up to: a free cell
        of the start's component lies within two cells of the obstacle's edge."""
        blocked = self.grid.with_discs_blocked(goals, block_radius)
        labels = blocked.components()
        sc = blocked.cell_of(start)
        if not blocked.inside(sc) or not blocked.free[sc]:
            return False
        label = labels[sc]
        reach = block_radius + 2 * self.grid.cell
        for g in goals:
            gi, gj = blocked.cell_of(g)
            r = math.ceil(reach / self.grid.cell) + 1
            i0, j0 = max(0, gi - r), max(0, gj - r)
            window = labels[i0 : gi + r + 1, j0 : gj + r + 1]
            zs = blocked.origin[1] + (np.arange(i0, i0 + window.shape[0]) + 0.5) * blocked.cell
            xs = blocked.origin[0] + (np.arange(j0, j0 + window.shape[1]) + 0.5) * blocked.cell
            near = (zs[:, None] - float(g[2])) ** 2 + (xs[None, :] - float(g[0])) ** 2
            if not np.any((window == label) & (near <= reach * reach)):
                return False
        return True


# -- Habitat scenes ----------------------------------------------------------------------------


class HabitatSpace:
    """A Habitat scene's navmesh through :class:`~dataforge.nav.pathfinder.NavmeshPathfinder`
    (habitat-sim's ``PathFinder``; needs habitat-sim). Points come from
    ``get_random_navigable_point`` (float32, uniform over the navmesh's area), kept on islands of
    radius at least 1.5 m (habitat's episode generators' rule, ``island_radius``). ``seed``
    comes from the unit's stream; habitat-sim's ``PathFinder.seed`` seeds the C library's
    process-wide ``rand`` (``srand``), so the points are deterministic while one space at a
    time samples in a process (the runner's units run one after another in a worker).
    ``floor_y`` is the navmesh's lowest height (its bounds). Distances follow the pathfinder's
    off-mesh rule, habitat-sim's own: both points snapped to the navmesh as ``find_path`` snaps
    them (no limit but Detour's query box), ``inf`` for a point with nothing to snap to or a
    pair no path joins."""

    kind = "habitat"

    def __init__(self, navmesh: Path, seed: int) -> None:
        from dataforge.nav.pathfinder import NavmeshPathfinder

        self.pathfinder = NavmeshPathfinder.load(navmesh, seed=seed)
        self.rooms: list[tuple[str, str]] = []
        self.floor_y = float(self.pathfinder.bounds()[0][1])

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        return self.pathfinder.sample(min_island_radius=ISLAND_RADIUS_LIMIT)

    def distance(self, a: Point, b: Point) -> float:
        return self.pathfinder.distance(a, b)

    def same_floor(self, a: Point, b: Point) -> bool:
        return abs(float(a[1]) - float(b[1])) <= SAME_FLOOR_M

    def room_index(self, point: Point) -> int:
        return -1

    def room_indices(self, points: np.ndarray) -> np.ndarray:
        return np.full(len(points), -1, dtype=np.int64)

    def navigable(self, point: Point) -> bool:
        return self.pathfinder.is_navigable(point)

    def reachable_with(
        self, start: Point, goals: Sequence[Point] | np.ndarray, block_radius: float
    ) -> bool:
        """Habitat's navmesh is not rebuilt around the cylinders (as in the reference): always
        True."""
        return True


# -- a stored scene ----------------------------------------------------------------------------


def scenes_root(manifest: Any) -> Path | None:
    """The Habitat scenes folder a ``multion`` dataset was made from (its manifest's recorded
    input location), or None."""
    where = (manifest.inputs or {}).get("locations", {}).get("scenes")
    return Path(where) if where else None


def stored_space(
    metadata: dict[str, Any],
    house_json: bytes,
    config: dict[str, Any],
    scenes_root: Path | None = None,
) -> Any:
    """The navigable space of one stored scene of a ``multion`` dataset (its episode table's
    metadata, its ``house_json`` bytes and the dataset's config), rebuilt as generation built it
    (for validate, the oracle and scoring). A Habitat scene's navmesh is
    ``<scenes_root>/<scene_id>`` with the suffix ``.navmesh`` (:func:`scenes_root`)."""
    import json

    if metadata.get("space") == "habitat":
        if scenes_root is None:
            raise UsageError(f"{metadata.get('scene')}: the Habitat scenes folder is not recorded")
        navmesh = Path(scenes_root) / Path(str(metadata["scene_id"])).with_suffix(".navmesh")
        return HabitatSpace(navmesh, 0)
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house

    catalogue = load_catalogue()
    house = load_house(json.loads(house_json), name=str(metadata["scene"]), catalogue=catalogue)
    return GridSpace(
        house,
        catalogue,
        agent_radius=float(config.get("agent_radius", 0.1)),
        cell=float(config.get("cell", 0.05)),
    )
