"""The scene a MultiON episode sampler draws from: a core navigable space
(:class:`~dataforge.nav.space.NavSpace`) with the scene's rooms and the benchmark's rules on
it. Where the scenes come from (``--scenes``) is :mod:`dataforge.world.scene_sources`.

A ProcTHOR house (:func:`house_space`) is its grid's largest component with fast geodesics
(:class:`~dataforge.nav.hubs.HubGeodesics`: points are the centres of its free cells, drawn
uniformly, where an agent of ``agent_radius`` stands); a Habitat scene (:func:`habitat_space`) is
its navmesh through :class:`~dataforge.nav.pathfinder.NavmeshPathfinder` in habitat's frame,
points from ``get_random_navigable_point`` kept on islands of radius at least 1.5 m (habitat's
episode generators' rule, ``island_radius``). The rules: two points share a floor within 0.5 m in
height (:func:`same_floor`); in a house the goal cylinders block the grid
(:meth:`SceneSpace.move_grid`, :meth:`SceneSpace.reachable_with`); Habitat's navmesh is not
rebuilt around them (as in the reference).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import UsageError
from dataforge.nav.space import NavSpace, Point

if TYPE_CHECKING:
    from dataforge.nav.grid import NavGrid
    from dataforge.store.manifest import Manifest
    from dataforge.world.assets import AssetCatalogue
    from dataforge.world.house import House

SAME_FLOOR_M = 0.5  # habitat's episode generators: points within 0.5 m in height share a floor
ISLAND_RADIUS_LIMIT = 1.5  # habitat's pointnav generator: starts on islands at least this big


def same_floor(a: Point, b: Point) -> bool:
    """Whether ``a`` and ``b`` are on one floor (habitat's generators' 0.5 m rule)."""
    return abs(float(a[1]) - float(b[1])) <= SAME_FLOOR_M


@dataclass
class SceneSpace:
    """One scene's navigable space (``nav``) and what the benchmark adds: ``kind`` names the
    simulator (``embedded``, ``habitat``), ``floor_y`` is the floor's height, ``rooms`` are
    (id, type) pairs; a ProcTHOR house also keeps its ``house`` (rooms of points) and its
    ``grid`` (what the goal cylinders block)."""

    kind: str
    nav: NavSpace
    floor_y: float
    rooms: list[tuple[str, str]]
    house: House | None = None
    grid: NavGrid | None = None

    def room_index(self, point: Point) -> int:
        """Index into ``rooms`` of the room holding ``point`` (-1: none)."""
        return int(self.room_indices(np.asarray(point, dtype=np.float64).reshape(1, 3))[0])

    def room_indices(self, points: np.ndarray) -> np.ndarray:
        """:meth:`room_index` of each of ``points`` (N x 3), at once."""
        from dataforge.world.validity import rooms_of

        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        if self.house is None or not len(pts):
            return np.full(len(pts), -1, dtype=np.int64)
        return np.asarray(rooms_of(self.house, pts[:, [0, 2]]), dtype=np.int64)

    def move_grid(self, goals: Sequence[Point] | np.ndarray, config: Mapping[str, Any]) -> NavGrid:
        """The grid an agent moves on in an episode with these goals: the goal cylinders
        blocked (a disc of cylinder + agent radius each) when the dataset's ``config`` says
        ``block``, else the scene's grid. A ProcTHOR house's only."""
        grid = self._grid()
        if not config.get("block", True):
            return grid
        radius = float(config.get("cylinder_radius", 0.1)) + float(config.get("agent_radius", 0.1))
        return grid.with_discs_blocked(goals, radius)

    def reachable_with(
        self, start: Point, goals: Sequence[Point] | np.ndarray, block_radius: float
    ) -> bool:
        """Whether, with a round obstacle of ``block_radius`` (cylinder + agent radius) around
        every goal, the start stays navigable and every goal can be walked up to: a free cell
        of the start's component lies within two cells of the obstacle's edge. Always True on a
        Habitat navmesh (not rebuilt around the cylinders)."""
        if self.grid is None:
            return True
        grid = self.grid
        blocked = grid.with_discs_blocked(goals, block_radius)
        labels = blocked.components()
        sc = blocked.cell_of(start)
        if not blocked.inside(sc) or not blocked.free[sc]:
            return False
        label = labels[sc]
        reach = block_radius + 2 * grid.cell
        for g in goals:
            gi, gj = blocked.cell_of(g)
            r = math.ceil(reach / grid.cell) + 1
            i0, j0 = max(0, gi - r), max(0, gj - r)
            window = labels[i0 : gi + r + 1, j0 : gj + r + 1]
            zs = blocked.origin[1] + (np.arange(i0, i0 + window.shape[0]) + 0.5) * blocked.cell
            xs = blocked.origin[0] + (np.arange(j0, j0 + window.shape[1]) + 0.5) * blocked.cell
            near = (zs[:, None] - float(g[2])) ** 2 + (xs[None, :] - float(g[0])) ** 2
            if not np.any((window == label) & (near <= reach * reach)):
                return False
        return True

    def geodesics_stats(self) -> dict[str, int] | None:
        """A house's fast-geodesics size (hubs, free cells of the component); None otherwise."""
        from dataforge.nav.hubs import HubGeodesics

        if not isinstance(self.nav, HubGeodesics):
            return None
        return {"hubs": self.nav.hub_count, "cells": int(self.nav.mask.sum())}

    def _grid(self) -> NavGrid:
        if self.grid is None:
            raise UsageError(f"a {self.kind} scene has no grid for the goal cylinders to block")
        return self.grid


def house_space(
    house: House, catalogue: AssetCatalogue, *, agent_radius: float, cell: float
) -> SceneSpace:
    """A ProcTHOR house's space: its grid's largest component with fast geodesics."""
    from dataforge.nav.hubs import HubGeodesics
    from dataforge.world.navigation import house_floor_y, house_nav_grid

    grid = house_nav_grid(house, catalogue, agent_radius=agent_radius, cell=cell)
    return SceneSpace(
        "embedded",
        HubGeodesics(grid),
        house_floor_y(house),
        [(r.id, r.room_type) for r in house.rooms],
        house=house,
        grid=grid,
    )


def habitat_space(navmesh: Path, seed: int) -> SceneSpace:
    """A Habitat scene's navmesh (needs habitat-sim), habitat's frame. ``seed`` comes from the
    unit's stream; habitat-sim's ``PathFinder.seed`` seeds the C library's process-wide
    ``rand`` (``srand``), so the points are deterministic while one space at a time samples in
    a process (the runner's units run one after another in a worker). ``floor_y`` is the
    navmesh's lowest height (its bounds). Distances follow the pathfinder's off-mesh rule,
    habitat-sim's own: both points snapped as ``find_path`` snaps them, ``inf`` for a point
    with nothing to snap to or a pair no path joins."""
    from dataforge.nav.pathfinder import NavmeshPathfinder

    nav = NavmeshPathfinder.load(navmesh, seed=seed, min_island_radius=ISLAND_RADIUS_LIMIT)
    return SceneSpace("habitat", nav, float(nav.bounds()[0][1]), [])


# -- a stored scene ----------------------------------------------------------------------------


def scenes_root(manifest: Manifest) -> Path | None:
    """The Habitat scenes folder a ``multion`` dataset was made from (its manifest's recorded
    input location), or None."""
    where = (manifest.inputs or {}).get("locations", {}).get("scenes")
    return Path(where) if where else None


def stored_space(
    metadata: dict[str, Any],
    house_json: bytes,
    config: dict[str, Any],
    scenes_root: Path | None = None,
) -> SceneSpace:
    """The navigable space of one stored scene of a ``multion`` dataset (its episode table's
    metadata, its ``house_json`` bytes and the dataset's config), rebuilt as generation built it
    (for validate, the oracle and scoring). A Habitat scene's navmesh is
    ``<scenes_root>/<scene_id>`` with the suffix ``.navmesh`` (:func:`scenes_root`)."""
    import json

    if metadata.get("space") == "habitat":
        if scenes_root is None:
            raise UsageError(f"{metadata.get('scene')}: the Habitat scenes folder is not recorded")
        navmesh = Path(scenes_root) / Path(str(metadata["scene_id"])).with_suffix(".navmesh")
        return habitat_space(navmesh, 0)
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house

    catalogue = load_catalogue()
    house = load_house(json.loads(house_json), name=str(metadata["scene"]), catalogue=catalogue)
    return house_space(
        house,
        catalogue,
        agent_radius=float(config.get("agent_radius", 0.1)),
        cell=float(config.get("cell", 0.05)),
    )
