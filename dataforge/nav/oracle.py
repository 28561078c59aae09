"""One interface for geodesic distances between points of a scene.

A :class:`GeodesicOracle` answers ``distances(sources, targets)`` with a matrix, ``inf`` where no
path exists. Points are whatever the oracle's scene uses: viewpoint ids on a navigation graph
(:class:`GraphOracle`), xyz positions on a navmesh (:class:`HabitatOracle`; the project's own
navmesh oracle joins here with the world layer).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from dataforge.errors import InputNotFoundError, MissingDependencyError
from dataforge.nav.graph import NavGraph


class GeodesicOracle(Protocol):
    name: str

    def distances(self, sources: Sequence[Any], targets: Sequence[Any]) -> np.ndarray:
        """``len(sources) x len(targets)`` geodesic distances in metres (``inf``: no path)."""
        ...


class GraphOracle:
    """Shortest-path distances on a navigation graph; points are node ids."""

    name = "graph"

    def __init__(self, graph: NavGraph) -> None:
        self.graph = graph

    def distances(self, sources: Sequence[str], targets: Sequence[str]) -> np.ndarray:
        return self.graph.distances(sources, targets)


class HabitatOracle:
    """Geodesic distances from habitat-sim's pathfinder on a scene's ``.navmesh``.

    Points are xyz in habitat's frame (y up). A point is snapped to the navmesh first, as
    habitat-lab does for episode starts and goals; ``find_path`` failing gives ``inf``.
    """

    name = "habitat"

    @staticmethod
    def require() -> Any:
        """The ``habitat_sim`` module, or a one-line error saying how to install it."""
        try:
            import habitat_sim
        except ImportError:
            raise MissingDependencyError(
                "geodesics on Habitat scenes need habitat-sim, which is not installed (no Linux "
                "wheel on PyPI): conda install habitat-sim -c conda-forge -c aihabitat"
            ) from None
        return habitat_sim

    def __init__(self, navmesh: Path) -> None:
        habitat_sim = self.require()
        navmesh = Path(navmesh)
        if not navmesh.is_file():
            raise InputNotFoundError(f"{navmesh}: scene navmesh not found")
        self._hs = habitat_sim
        self.pathfinder = habitat_sim.PathFinder()
        if not self.pathfinder.load_nav_mesh(str(navmesh)):
            raise InputNotFoundError(f"{navmesh}: habitat-sim could not load this navmesh")

    def distances(self, sources: Sequence[Any], targets: Sequence[Any]) -> np.ndarray:
        return pathfinder_distances(self._hs, self.pathfinder, sources, targets)


def pathfinder_distances(
    habitat_sim: Any, pathfinder: Any, sources: Sequence[Any], targets: Sequence[Any]
) -> np.ndarray:
    """``len(sources) x len(targets)`` geodesics (m) on a habitat-sim ``PathFinder`` between
    points in habitat's frame, each snapped to the navmesh first; ``inf`` when a point does not
    snap or no path joins them (another island)."""
    snap = pathfinder.snap_point
    src = [snap(np.asarray(p, np.float32)) for p in sources]
    dst = [snap(np.asarray(p, np.float32)) for p in targets]
    out = np.full((len(src), len(dst)), np.inf)
    path = habitat_sim.ShortestPath()
    for i, a in enumerate(src):
        if not np.all(np.isfinite(a)):
            continue  # off the navmesh: unreachable
        for j, b in enumerate(dst):
            if not np.all(np.isfinite(b)):
                continue
            path.requested_start, path.requested_end = a, b
            if pathfinder.find_path(path) and np.isfinite(path.geodesic_distance):
                out[i, j] = float(path.geodesic_distance)
    return out
