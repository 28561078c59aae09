"""NavSpace: the one interface to a navigable space, whichever simulator holds it.

A space answers what samplers, path followers and goal checks ask: a random navigable point
(:meth:`~NavSpace.sample`), whether a point is navigable, geodesic distances, a shortest path
and whether a straight segment stays clear. Its points are (x, y, z) in the space's own frame.
The ones here: :class:`~dataforge.nav.grid.NavGrid` (an occupancy grid: the embedded world),
:class:`~dataforge.nav.hubs.HubGeodesics` (one component of a grid with fast geodesics),
:class:`~dataforge.nav.pathfinder.NavmeshPathfinder` (habitat-sim's navmesh, habitat's frame)
and :class:`~dataforge.simulators.habitat.NavMeshPaths` (that navmesh in dataforge's frame, a
``HabitatWorld``'s ``nav``). A world's space is its ``nav``
(:class:`~dataforge.simulators.protocol.WorldBackend`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeAlias

import numpy as np

Point: TypeAlias = "Sequence[float] | np.ndarray"
"""A point (x, y, z): three floats, a sequence or an array."""


class NavSpace(Protocol):
    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """A random navigable point (uniform over the navigable area)."""
        ...

    def navigable(self, point: Point) -> bool:
        """Whether an agent may stand at ``point``."""
        ...

    def distance(self, a: Point, b: Point) -> float:
        """The geodesic distance (m), ``inf`` when no path joins them."""
        ...

    def distances(self, sources: Sequence[Point], targets: Sequence[Point]) -> np.ndarray:
        """Geodesics (m) from every source to every target (sources x targets)."""
        ...

    def shortest_path(self, a: Point, b: Point) -> list[np.ndarray]:
        """Waypoints from ``a`` to ``b``; ``[]`` when there is no path."""
        ...

    def segment_clear(self, p: Point, q: Point) -> bool:
        """Whether the straight segment ``p`` -> ``q`` stays navigable."""
        ...
