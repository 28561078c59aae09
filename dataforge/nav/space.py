"""SampleSpace: the navigable space an episode sampler draws from, whichever simulator holds it.

A space answers what a sampler asks: a random navigable point, the geodesic distance between
two points, whether two points are on one floor, the room of a point (an index into ``rooms``),
whether a point is navigable, and whether every goal can still be walked up to once obstacles
of a radius stand around the goals. ``kind`` names the simulator (``embedded``, ``habitat``);
``floor_y`` is the floor's height. MultiON's ``GridSpace`` (the embedded world's grid) and
``HabitatSpace`` (a habitat navmesh through :class:`~dataforge.nav.pathfinder.NavmeshPathfinder`)
are ones; the benchmark's rules (island radius, same-floor limit) stay with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

Point = Any
"""A point (x, y, z): three floats, a sequence or an array (what the spaces take)."""


class SampleSpace(Protocol):
    kind: str
    floor_y: float
    rooms: list[tuple[str, str]]

    def sample(self, rng: np.random.Generator) -> np.ndarray: ...

    def distance(self, a: Point, b: Point) -> float: ...

    def same_floor(self, a: Point, b: Point) -> bool: ...

    def room_index(self, point: Point) -> int: ...

    def room_indices(self, points: np.ndarray) -> np.ndarray: ...

    def navigable(self, point: Point) -> bool: ...

    def reachable_with(
        self, start: Point, goals: Sequence[Point] | np.ndarray, block_radius: float
    ) -> bool: ...
