"""The embedded world (the default simulator): :class:`EmbeddedWorld` — the house's shaped
archetypes (or real meshes from ``--assets``) rendered on the CPU (``dataforge.render``),
geodesics on an occupancy grid (``dataforge.nav.grid``), placement by
``dataforge.world.placement``. Needs nothing but pip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from dataforge.errors import UsageError
from dataforge.render.mesh import Scene
from dataforge.render.renderer import Frame
from dataforge.world.assets import AssetCatalogue
from dataforge.world.graph import RoomNode, WorldGraph
from dataforge.world.house import House, HouseObject
from dataforge.world.materials import SKY_COLOR
from dataforge.world.placement import PlacementResult, World
from dataforge.world.scene import InstanceIds, SceneParts, SemanticTable
from dataforge.world.surfaces import WorldSurface
from dataforge.world.vectors import Vec3

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

    from dataforge.nav.grid import NavGrid
    from dataforge.nav.space import Point
    from dataforge.render.renderer import Renderer, StoredFrames
    from dataforge.simulators.protocol import Camera
    from dataforge.world.appearance import Appearance
    from dataforge.world.mesh_assets import MeshLibrary
    from dataforge.world.scene import HouseScene

_LayoutKey = tuple[tuple[str, str, Vec3, Vec3, float | None], ...]


class HouseObjects:
    """What a simulator that builds a ProcTHOR house answers from its mirrored
    :class:`~dataforge.world.placement.World` (``self.world``): objects and their poses, the
    floor, the rooms, the world graph. :class:`EmbeddedWorld` and
    :class:`~dataforge.simulators.thor.ThorWorld` share it."""

    world: World

    def has(self, object_id: str) -> bool:
        return object_id in self.world

    def position(self, object_id: str) -> tuple[float, float, float]:
        return cast("tuple[float, float, float]", tuple(self.world.object(object_id).position))

    def center(self, object_id: str) -> tuple[float, float, float]:
        c = self.world.box(object_id).center
        return (float(c[0]), float(c[1]), float(c[2]))

    def pose(self, object_id: str) -> tuple[Vec3, Vec3]:
        obj = self.world.object(object_id)
        return obj.position, obj.rotation

    def floor_y(self) -> float:
        return float(self.world.house().rooms[0].floor_y)

    def rooms(self) -> tuple[RoomNode, ...]:
        """The house's rooms in its order, each with its floor polygon (x, z)."""
        from shapely.geometry import Polygon

        return tuple(
            RoomNode(r.id, r.room_type, r.floor_polygon, float(Polygon(r.floor_polygon).area))
            for r in self.world.house().rooms
        )

    def world_graph(self) -> WorldGraph:
        return self.world.graph()


class EmbeddedWorld(HouseObjects):
    """The default backend (see the module docstring)."""

    name = "embedded"

    def __init__(
        self,
        house: House,
        catalogue: AssetCatalogue,
        *,
        width: int = 640,
        height: int = 480,
        vfov_deg: float = 90.0,
        agent_radius: float = 0.2,
        library: MeshLibrary | None = None,
    ) -> None:
        self.catalogue = catalogue
        self.library = library  # a MeshLibrary of real meshes (--assets), or None
        self.world = World(house, catalogue)
        self.opened = house  # what reset() returns to
        self.ids = InstanceIds()
        self.size = (width, height, vfov_deg)
        self.agent_radius = agent_radius
        self._picked: dict[str, HouseObject] = {}  # picked objects, by id (place() takes them)
        self._renderer: Renderer | None = None
        self._scene: HouseScene | None = None
        self._parts = SceneParts()  # meshes kept between scenes: only what changed is rebuilt
        self._uploaded: HouseScene | None = None
        self._grid: NavGrid | None = None
        self._grid_key: _LayoutKey = ()
        self._walls: list[BaseGeometry] | None = None
        self._carried: tuple[dict[str, np.ndarray], float, np.ndarray] | None = None

    @property
    def scene(self) -> HouseScene:
        from dataforge.world.scene import house_scene

        if self._scene is None:
            self._scene = house_scene(
                self.world.house(),
                self.catalogue,
                ids=self.ids,
                library=self.library,
                parts=self._parts,
            )
        return self._scene

    @property
    def grid(self) -> NavGrid:
        """The navigation grid, rebuilt only when a floor-standing object moved, opened or
        went (objects resting on others are no obstacles: :func:`house_nav_grid`)."""
        from dataforge.world.navigation import house_nav_grid

        key = self._layout_key()
        if self._grid is None or key != self._grid_key:
            self._grid = house_nav_grid(
                self.world.house(), self.catalogue, agent_radius=self.agent_radius
            )
            self._grid_key = key
        return self._grid

    @property
    def walls(self) -> list[BaseGeometry]:
        """The house's standing walls in plan view (shapely LineStrings in x, z), door holes
        left open except where a door leaf is closed (:func:`wall_obstacles`, what the grid
        blocks): what a goal check's reference point may not be snapped across. Objects never
        change them; kept until :meth:`reset`."""
        from dataforge.world.navigation import wall_obstacles

        if self._walls is None:
            self._walls = wall_obstacles(self.world.house(), self.catalogue)
        return self._walls

    def reset(self, house: House | None = None) -> None:
        """Start again from ``house``, by default the house opened (e.g. before another
        episode's changes): the renderer and the instance ids are kept, and the grid while the
        floor-standing objects are the same."""
        if house is not None:
            self.opened = house
        self.world = World(self.opened, self.catalogue)
        self._walls = None
        self._carried = None
        self._picked.clear()
        self._changed()

    @property
    def semantics(self) -> SemanticTable:
        return cast(SemanticTable, self.scene.semantics)

    @property
    def nav(self) -> NavGrid:
        """The navigation grid (:attr:`grid`), a :class:`~.protocol.NavSpace`."""
        return cast("NavGrid", self.grid)

    def _layout_key(self) -> _LayoutKey:
        return tuple(
            (o.id, o.asset_id, o.position, o.rotation, o.openness)
            for o in self.world.objects
            if o.parent_id is None
        )

    def _changed(self) -> None:
        self._scene = None

    def _ready_renderer(self) -> Renderer:
        """The renderer, with the current scene uploaded."""
        from dataforge.render import Renderer

        if self._renderer is None:
            w, h, fov = self.size
            self._renderer = Renderer(w, h, vfov_deg=fov, background=SKY_COLOR)
        if self._uploaded is None or self._uploaded is not self._scene:
            self._renderer.set_scene(self.scene.scene)
            self._uploaded = self._scene
        return self._renderer

    def _extra(
        self, position: np.ndarray | Sequence[float], yaw: float
    ) -> dict[str, np.ndarray] | None:
        return None if self._carried is None else _carried_at(*self._carried, position, yaw)

    def render(
        self, position: np.ndarray | Sequence[float], yaw: float, horizon: float = 0.0
    ) -> Frame:
        from dataforge.render import thor_camera_pose

        renderer = self._ready_renderer()
        return renderer.render(thor_camera_pose(position, yaw, horizon), self._extra(position, yaw))

    def render_stored(self, cameras: Sequence[Camera], out: StoredFrames) -> None:
        from dataforge.render import thor_camera_pose

        renderer = self._ready_renderer()
        poses = [thor_camera_pose(p, y, h) for p, y, h in cameras]
        extras = None if self._carried is None else [self._extra(p, y) for p, y, _ in cameras]
        renderer.render_stored(poses, out, extras)

    def carry(
        self, object_id: str | None, offset: Sequence[float] = (0.0, -0.5, 0.5), yaw: float = 0.0
    ) -> None:
        """Draw ``object_id`` as carried from now on (None: nothing): its meshes as they are in
        the world now (so call this before :meth:`remove`), centred ``offset`` metres (right,
        up, forward) from every camera position rendered, turned with the camera's yaw from
        ``yaw`` (the yaw it was picked at). It keeps its instance and semantic ids, and is in no
        world graph, grid or placement: a carried object is not in the world."""
        if object_id is None:
            self._carried = None
            return
        hs = self.scene
        ids = [
            i
            for i, info in hs.instances.items()
            if info.element_id == object_id or info.element_id.startswith(f"{object_id}|")
        ]
        part = Scene(m for m in hs.scene.meshes if m.instance_id in ids).buffers()
        if not len(part["positions"]):
            raise UsageError(f"{object_id} is not drawn in this world: nothing to carry")
        centre = (part["positions"].min(axis=0) + part["positions"].max(axis=0)) / 2.0
        part["positions"] = part["positions"] - centre.astype(np.float32)
        self._carried = (part, float(yaw), np.asarray(offset, dtype=np.float64))

    def reachable_positions(self, step: float = 0.25) -> np.ndarray:
        return self.grid.reachable_positions(step=step)

    def distances(self, sources: Sequence[Point], targets: Sequence[Point]) -> np.ndarray:
        return self.grid.distances(sources, targets)

    def appearance(self, object_id: str, asset_id: str | None = None) -> Appearance | None:
        """How object ``object_id`` is drawn, in words (an
        :class:`~dataforge.world.appearance.Appearance`: colour, shape, print or design,
        material); ``asset_id`` names its asset when it is not in the world (carried). None
        when a real mesh from ``--assets`` replaces its archetype (its colours are the mesh's)."""
        from dataforge.world.appearance import object_appearance

        if object_id in self.world:
            obj = self.world.object(object_id)
        elif asset_id is not None:
            obj = HouseObject(object_id, asset_id, "", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        else:
            raise UsageError(f"no object {object_id!r} in the world and no asset named")
        if self.library is not None and self.library.path_of(obj.asset_id) is not None:
            return None
        return object_appearance(obj, self.catalogue.asset(obj.asset_id))

    def open(self, object_id: str) -> bool:
        ok = self.world.open(object_id)
        self._changed()
        return ok

    def open_surface(self, object_id: str, surface: int) -> str | None:
        """Open what surface ``surface`` (its index) of ``object_id`` needs open (a drawer, a
        fridge's door); the id of what was opened, None when nothing."""
        found = _surface(self.world, object_id, surface)
        opened = None if found is None else self.world.open_surface(object_id, found)
        self._changed()
        return opened

    def reclose(self, was: HouseObject) -> list[str]:
        """Shut again what has opened on ``was.id`` since ``was`` (see World.reclose)."""
        closed = self.world.reclose(was)
        self._changed()
        return closed

    def spawn(
        self, asset_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        res = self.world.spawn(asset_id, receptacle_id, rng, **kw)
        self._changed()
        return res

    def place(
        self, object_id: str, receptacle_id: str, rng: np.random.Generator, **kw: Any
    ) -> PlacementResult:
        obj = self._picked.get(object_id) if object_id not in self.world else None
        res = self.world.place(obj or object_id, receptacle_id, rng, **kw)
        if res.ok:
            self._picked.pop(object_id, None)
        self._changed()
        return res

    def place_at(self, obj: HouseObject, receptacle_id: str) -> PlacementResult:
        """``obj`` at its recorded pose on ``receptacle_id`` (World.place_at)."""
        res = self.world.place_at(obj, receptacle_id)
        if res.ok:
            self._picked.pop(obj.id, None)
        self._changed()  # World.place_at does not mark the backend's scene stale
        return res

    def pick(self, object_id: str) -> None:
        """A pick: the object leaves the world, kept for :meth:`place` (:meth:`carry` draws it
        as carried)."""
        self._picked[object_id] = self.world.object(object_id)
        self.remove(object_id)

    def remove(self, object_id: str) -> None:
        self.world.remove(object_id)
        self._changed()

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.release()
            self._renderer = None


def _carried_at(
    part: dict[str, np.ndarray],
    yaw0: float,
    offset: np.ndarray,
    position: np.ndarray | Sequence[float],
    yaw: float,
) -> dict[str, np.ndarray]:
    """:meth:`EmbeddedWorld.carry`'s object for a camera at ``position`` facing ``yaw``
    (AI2-THOR: 0 faces +z, 90 +x; right is (cos, 0, -sin)): turned about y by the yaw since the
    pick and centred at ``offset`` (right, up, forward) from the camera."""
    t, d = np.radians(float(yaw)), np.radians(float(yaw) - yaw0)
    forward = np.array([np.sin(t), 0.0, np.cos(t)])
    right = np.array([np.cos(t), 0.0, -np.sin(t)])
    at = np.asarray(position, dtype=np.float64) + offset[0] * right + offset[2] * forward
    at[1] += offset[1]
    c, s = np.cos(d), np.sin(d)
    turn = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])  # forward(yaw0) -> forward(yaw)
    out = dict(part)
    out["positions"] = (part["positions"] @ turn.T + at).astype(np.float32)
    out["normals"] = (part["normals"] @ turn.T).astype(np.float32)
    return out


def _surface(world: World, object_id: str, index: int) -> WorldSurface | None:
    """Surface ``index`` of ``object_id`` as it stands (None when it has no such surface)."""
    found = [s for s in world.surfaces(object_id, all_surfaces=True) if s.index == index]
    return found[0] if found else None
