"""One interface for geodesic distances between points of a scene.

A :class:`GeodesicOracle` answers ``distances(sources, targets)`` with a matrix, ``inf`` where no
path exists. Points are whatever the oracle's scene uses: viewpoint ids on a navigation graph
(:class:`GraphOracle`), xyz positions on a navmesh (:class:`HabitatOracle`, through
:mod:`dataforge.nav.pathfinder`, the one wrapper of habitat-sim's pathfinder).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from dataforge.nav.graph import NavGraph
from dataforge.nav.pathfinder import NavmeshPathfinder, require_habitat_sim

if TYPE_CHECKING:
    from types import ModuleType


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
    """Geodesic distances on a scene's ``.navmesh`` through
    :class:`~dataforge.nav.pathfinder.NavmeshPathfinder` (habitat-sim's pathfinder).

    Points are xyz in habitat's frame (y up), under the pathfinder's off-mesh rule, habitat-sim's
    own: each is snapped to the navmesh as ``find_path`` snaps the ends of upstream's
    ``geodesic_distance`` (no limit but Detour's query box); one with nothing to snap to, or a
    pair no path joins, gives ``inf``.
    """

    name = "habitat"

    @staticmethod
    def require() -> ModuleType:
        """The ``habitat_sim`` module, or a one-line error saying how to install it."""
        return require_habitat_sim()

    def __init__(self, navmesh: Path) -> None:
        self.pathfinder = NavmeshPathfinder.load(navmesh)

    def distances(self, sources: Sequence[Any], targets: Sequence[Any]) -> np.ndarray:
        return self.pathfinder.distances(sources, targets)
