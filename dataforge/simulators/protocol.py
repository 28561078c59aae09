"""The one interface pipelines use to a house-scale world, whichever simulator holds it.

:class:`WorldBackend` is what pipelines use: render RGB / depth / instance / semantic from a
camera (position, yaw, horizon; AI2-THOR's conventions), list reachable positions, measure
geodesics, open containers, spawn / place / remove objects, and log the world graph. The
backends: :mod:`dataforge.simulators.embedded`, :mod:`~dataforge.simulators.thor`,
:mod:`~dataforge.simulators.habitat`; :func:`dataforge.simulators.open_world` opens one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from dataforge.nav.space import NavSpace
from dataforge.render.renderer import Frame, StoredFrames
from dataforge.world.appearance import Appearance
from dataforge.world.assets import AssetCatalogue
from dataforge.world.graph import RoomNode, WorldGraph
from dataforge.world.house import HouseObject
from dataforge.world.placement import PlacementResult, World
from dataforge.world.scene import InstanceIds, SemanticTable
from dataforge.world.vectors import Vec3

if TYPE_CHECKING:
    from dataforge.nav.space import Point

Camera = tuple["np.ndarray | Sequence[float]", float, float]
"""A camera of :meth:`WorldBackend.render_stored`: position, yaw and horizon (degrees, as
:meth:`WorldBackend.render` takes them)."""


class WorldBackend(Protocol):
    """One simulator's world, in dataforge's frame (y up; AI2-THOR's camera conventions).

    Objects are named by id: the house's ids (embedded, ai2thor) or rigid-object handles
    (habitat). A member a simulator cannot do raises a one-line
    :class:`~dataforge.errors.UsageError` naming it."""

    name: str
    ids: InstanceIds
    """Instance ids of what :meth:`render` draws (element id -> int), stable per world."""

    @property
    def semantics(self) -> SemanticTable:
        """The semantic classes of :meth:`render`'s semantic image."""
        ...

    @property
    def nav(self) -> NavSpace:
        """The navigable space: geodesics, shortest paths, straight-line clearance."""
        ...

    def render(
        self, position: np.ndarray | Sequence[float], yaw: float, horizon: float = 0.0
    ) -> Frame: ...

    def render_stored(self, cameras: Sequence[Camera], out: StoredFrames) -> None:
        """Render each (position, yaw, horizon) of ``cameras`` into ``out``'s views in order, as
        datasets store them (what :meth:`render` draws, through :meth:`StoredFrames.store`);
        a simulator that can draws them all before reading any back."""
        ...

    def reachable_positions(self, step: float = 0.25) -> np.ndarray:
        """Where the agent may stand: an (N, 3) lattice of ``step`` metres (AI2-THOR's
        ``GetReachablePositions``) on the largest navigable component."""
        ...

    def distances(self, sources: Sequence[Point], targets: Sequence[Point]) -> np.ndarray: ...

    def floor_y(self) -> float:
        """The floor's height (m)."""
        ...

    def rooms(self) -> tuple[RoomNode, ...]:
        """The rooms with their plan-view (x, z) polygons."""
        ...

    def has(self, object_id: str) -> bool:
        """Whether ``object_id`` is an object in the world now (not picked, not removed)."""
        ...

    def position(self, object_id: str) -> tuple[float, float, float]:
        """Where ``object_id`` stands: its recorded position (the pose :meth:`place_at` takes)."""
        ...

    def center(self, object_id: str) -> tuple[float, float, float]:
        """The centre of ``object_id``'s box in the world."""
        ...

    def pose(self, object_id: str) -> tuple[Vec3, Vec3]:
        """``object_id``'s (position, rotation) as a plan records them (:meth:`place_at`'s)."""
        ...

    def appearance(self, object_id: str, asset_id: str | None = None) -> Appearance | None:
        """How ``object_id`` is drawn, in words; None when not known."""
        ...

    def open(self, object_id: str) -> bool: ...

    def open_surface(self, object_id: str, surface: int) -> str | None: ...

    def reclose(self, was: HouseObject) -> list[str]: ...

    def spawn(
        self, asset_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult: ...

    def place(
        self, object_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        """Move ``object_id`` (in the world, or taken out by :meth:`pick`) onto
        ``receptacle_id`` by the world's placement search, drawing from ``rng``."""
        ...

    def place_at(self, obj: HouseObject, receptacle_id: str) -> PlacementResult:
        """``obj`` (an object picked or new) at its recorded pose on ``receptacle_id``."""
        ...

    def pick(self, object_id: str) -> None:
        """Take ``object_id`` out of the world, keeping it and its id: :meth:`place` or
        :meth:`place_at` puts it back."""
        ...

    def carry(self, object_id: str | None, offset: Sequence[float] = ..., yaw: float = 0.0) -> None:
        """Draw ``object_id`` held ``offset`` (right, up, forward) from the camera (None:
        nothing); call before :meth:`pick`."""
        ...

    def remove(self, object_id: str) -> None: ...

    def reset(self) -> None:
        """Back to the scene as opened (what was spawned gone, what moved back, nothing picked);
        the renderer and the instance ids are kept."""
        ...

    def world_graph(self) -> WorldGraph: ...

    def close(self) -> None: ...


class HouseBackend(WorldBackend, Protocol):
    """A simulator that builds a ProcTHOR house (embedded, ai2thor): its
    :class:`~dataforge.world.placement.World` (objects, boxes, surfaces) mirrors the simulator."""

    world: World
    catalogue: AssetCatalogue


def render_one_by_one(backend: WorldBackend, cameras: Sequence[Camera], out: StoredFrames) -> None:
    """:meth:`WorldBackend.render_stored` for a simulator that renders one view per call."""
    for k, (position, yaw, horizon) in enumerate(cameras):
        out.store(k, backend.render(position, yaw, horizon))
