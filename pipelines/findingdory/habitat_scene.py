"""FindingDory episode creation on HSSD scenes with OVMM objects (``--scenes habitat:DIR``).

The same draws as :mod:`.creation` (:func:`~.creation.draw_episode`) over
:class:`~dataforge.simulators.habitat.HabitatWorld` instead of the embedded world. What
differs from a ProcTHOR house:

* **Receptacles** are the scene's furniture with ``receptacle_mesh_*`` support surfaces and a
  category in ``objects/hssd-receptacles.csv`` (the world's :meth:`receptacles`); a footprint is
  the plan-view hull of the furniture's box.
* **Categories** are the object templates' categories in ``objects/object_categories.csv``
  (every loaded OVMM template with one); the OVMM object set is shared by the splits (the
  scenes are what is split), so both splits draw from all of them.
* **Pairing**: no co-occurrence statistics come with HSSD (procthor's are for ProcTHOR's
  types), so every receptacle takes every category with the same likelihood, as OVMM's
  object sampler draws receptacles uniformly; start and goal receptacles still differ in
  category.
* **Viewpoints**: lattice points within ``reach_m`` of the footprint from which a ray cast at
  camera height reaches the furniture's top (``HabitatWorld.sees``) instead of the plan-view
  wall test.
* **Picks**: the object stays in the world while its goal pose is searched (habitat moves a
  rigid object in place; the start receptacle is never the goal, so the two do not meet).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely

from dataforge.pipelines.findingdory.config import EpisodesConfig
from dataforge.pipelines.findingdory.creation import Receptacle, SceneBase, check_vfov
from dataforge.world.scene_sources import HssdLayout

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

    from dataforge.inputs import Inputs
    from dataforge.simulators.habitat import HabitatAgent, HabitatWorld
    from dataforge.store.manifest import Manifest

SIGHT_INSET_M = 0.05  # the sight target: this far inside the footprint's nearest point
SIGHT_BELOW_TOP_M = 0.02  # and this far below the furniture's top
# The Stretch as habitat's navmesh agent (upstream config/agents/stretch.yaml; the paper's
# low-level policy appendix: 1.41 m tall); its base radius is EpisodesConfig.agent_radius.
STRETCH_HEIGHT_M = 1.41
STRETCH_MAX_CLIMB_M = 0.01
STRETCH_MAX_SLOPE_DEG = 5.0


def stretch_agent(radius: float) -> HabitatAgent:
    """The Stretch as a :class:`~dataforge.simulators.habitat.HabitatAgent` with base radius
    ``radius`` (the episodes' ``agent_radius``, 0.25 m): what every FindingDory habitat world is
    built with."""
    from dataforge.simulators.habitat import HabitatAgent

    return HabitatAgent(
        radius=float(radius),
        height=STRETCH_HEIGHT_M,
        max_climb=STRETCH_MAX_CLIMB_M,
        max_slope=STRETCH_MAX_SLOPE_DEG,
    )


def open_habitat_world(layout: HssdLayout, scene_id: str, cfg: EpisodesConfig) -> HabitatWorld:
    """The check world for one HSSD scene at the check resolution (habitat-sim required)."""
    return open_scene(
        layout,
        scene_id,
        None,
        width=cfg.check_width,
        height=cfg.check_height,
        vfov_deg=check_vfov(cfg),
        agent_radius=cfg.agent_radius,
    )


def open_scene(
    layout: HssdLayout,
    scene_id: str,
    stored: bytes | None,
    *,
    width: int,
    height: int,
    vfov_deg: float,
    agent_radius: float,
) -> HabitatWorld:
    """A ``HabitatWorld`` of one HSSD scene with the layout's categories and object configs,
    the Stretch (:func:`stretch_agent`) as its navmesh agent and the given camera.
    ``stored``: the scene instance JSON stored with the records; a folder whose instance
    differs is a :class:`DatasetError` (the records were made in another scene)."""
    from dataforge.errors import DatasetError
    from dataforge.simulators.habitat import HabitatScene, HabitatWorld, read_categories

    if stored is not None and scene_instance_bytes(layout, scene_id) != bytes(stored):
        raise DatasetError(
            f"scene {scene_id}: {layout.root} holds another scene instance than the one "
            "stored with the records"
        )
    scene = HabitatScene(
        dataset_config=str(layout.dataset_config),
        scene_id=scene_id,
        categories=read_categories(layout.object_csv),
        receptacle_categories=read_categories(layout.receptacle_csv, receptacles=True),
        object_dirs=tuple(str(d) for d in layout.object_dirs),
    )
    return HabitatWorld(
        scene,
        width=width,
        height=height,
        vfov_deg=vfov_deg,
        agent=stretch_agent(agent_radius),
    )


def reopen_scene(
    scenes_root: Path | str | None,
    meta: Mapping[str, Any],
    stored: bytes,
    *,
    width: int,
    height: int,
    vfov_deg: float,
    agent_radius: float,
) -> HabitatWorld:
    """The ``HabitatWorld`` of a stored record's HSSD scene (``meta["origin"]``), from the data
    folder a manifest records; a one-line error when none is recorded or it holds another
    scene instance than ``stored``."""
    from dataforge.errors import InputNotFoundError
    from dataforge.world.scene_sources import hssd_layout

    scene_id = str(dict(meta.get("origin") or {}).get("scene_id"))
    if scenes_root is None:
        raise InputNotFoundError(
            f"scene {scene_id}: no HSSD data folder is recorded to rebuild it from"
        )
    return open_scene(
        hssd_layout(Path(scenes_root)),
        scene_id,
        stored,
        width=width,
        height=height,
        vfov_deg=vfov_deg,
        agent_radius=agent_radius,
    )


class HabitatSceneContext(SceneBase):
    """One HSSD scene's receptacles, viewpoints and categories over a ``HabitatWorld``."""

    def __init__(self, world: HabitatWorld, cfg: EpisodesConfig) -> None:
        self.backend, self.cfg = world, cfg
        self.templates: dict[str, str] = dict(world.templates())
        self.types = tuple(sorted(set(self.templates.values())))
        found = world.receptacles()
        self.pairs = {r.category: dict.fromkeys(self.types, 1.0) for r in found}
        self._explore()
        lattice = self.lattice
        self.floor_y = float(np.median(lattice[:, 1])) if len(lattice) else 0.0
        pts = shapely.points(lattice[:, 0], lattice[:, 2]) if len(lattice) else np.array([])
        eye_h = cfg.camera.height_m
        recs: list[Receptacle] = []
        views: list[np.ndarray] = []
        for r in found:
            if not len(lattice) or r.footprint.is_empty:
                continue
            near = np.nonzero(shapely.distance(pts, r.footprint) <= cfg.reach_m)[0]
            top = float(r.aabb.hi[1]) - SIGHT_BELOW_TOP_M
            keep = []
            for k in near:
                x, y, z = (float(v) for v in lattice[k])
                tx, tz = _inside_point(r.footprint, x, z)
                if world.sees((x, y + eye_h, z), (tx, top, tz), r.id):
                    keep.append(int(k))
            if not keep:
                continue
            recs.append(Receptacle(r.id, r.category, r.footprint))
            views.append(np.round(lattice[keep], 6))
        self.receptacles = tuple(recs)
        self.viewpoints = tuple(views)
        self._index_receptacles()

    def assets(self, category: str) -> tuple[str, ...]:
        return tuple(t for t, c in sorted(self.templates.items()) if c == category)

    def category_of(self, asset: str) -> str:
        return self.templates[asset]


def _inside_point(footprint: BaseGeometry, x: float, z: float) -> tuple[float, float]:
    """The footprint's nearest point to (x, z), moved :data:`SIGHT_INSET_M` towards its
    centroid (a ray aimed at the edge itself may graze past it)."""
    from shapely.geometry import Point

    line = shapely.shortest_line(Point(x, z), footprint)
    px, pz = line.coords[1]
    c = footprint.centroid
    dx, dz = c.x - px, c.y - pz
    n = float(np.hypot(dx, dz))
    if n > SIGHT_INSET_M:
        px, pz = px + dx * SIGHT_INSET_M / n, pz + dz * SIGHT_INSET_M / n
    return px, pz


def scene_instance_bytes(layout: HssdLayout, scene_id: str) -> bytes:
    """The scene instance JSON as read (stored with the episodes, like a house's JSON)."""
    path = dict(layout.scenes).get(scene_id)
    if path is None:
        from dataforge.errors import InputNotFoundError

        raise InputNotFoundError(f"{layout.root}: no scene instance {scene_id!r}")
    return Path(path).read_bytes()


def carry_scenes(inputs: Inputs, manifest: Manifest, *, habitat: bool) -> str | None:
    """For a stage that reads a dataset made on HSSD scenes (``habitat``): the same data folder
    as that dataset's manifest records under ``scenes`` (unless given, e.g. by reproduce),
    every file it read from there hashed again (so reproduce checks them), and the folder's
    path; None when the dataset is not Habitat's."""
    from dataforge.inputs import Inputs, split_key
    from dataforge.pipelines.findingdory.generate import SCENES

    if not habitat:
        return None
    recorded = Inputs.from_dict(manifest.inputs)
    if SCENES not in inputs:
        if SCENES not in recorded:
            from dataforge.errors import DatasetError

            raise DatasetError(
                "the dataset was made on HSSD scenes but its manifest records no scenes folder"
            )
        inputs.locations[SCENES] = recorded.locations[SCENES]
    for key in sorted(recorded.files):
        location, rel = split_key(key)
        if location == SCENES:
            inputs.file(SCENES, rel, "HSSD scene data")
    return str(inputs.root(SCENES))
