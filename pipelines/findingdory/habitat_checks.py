"""Checking a FindingDory scene made on HSSD (``--scenes habitat:DIR``): the world is rebuilt in
habitat-sim from the data folder the manifest records (``scenes`` location), so validating
needs habitat-sim and that folder, as generating did (a one-line error names what is missing).

The same invariants as :mod:`.checks` with the Habitat world's answers: pairing allows every
category on every receptacle (:mod:`.habitat_scene`), navigability means being a point of the
viewpoint lattice on the largest navmesh island, geodesics are the navmesh's, and the replay
puts every object at its recorded pose on its receptacle and tests support and contacts
(``HabitatWorld.place_pose``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from shapely.geometry import Polygon

if TYPE_CHECKING:
    from dataforge.nav.space import Point
    from dataforge.pipelines.findingdory.config import EpisodesConfig
    from dataforge.pipelines.findingdory.plan import EpisodePlan

TOL_M = 1e-4


class HabitatCheckScene:
    """A stored HSSD scene rebuilt for checking (the interface of ``checks._Scene``)."""

    def __init__(
        self,
        arrays: Mapping[str, np.ndarray],
        meta: Mapping[str, Any],
        cfg: EpisodesConfig,
        scenes_root: Path | None,
    ) -> None:
        from dataforge.pipelines.findingdory.checks import viewpoint_table
        from dataforge.pipelines.findingdory.creation import check_vfov
        from dataforge.pipelines.findingdory.habitat_scene import reopen_scene

        self.world = reopen_scene(
            scenes_root,
            meta,
            np.asarray(arrays["house_json"]).tobytes(),
            width=cfg.check_width,
            height=cfg.check_height,
            vfov_deg=check_vfov(cfg),
            agent_radius=cfg.agent_radius,
        )
        self.templates = dict(self.world.templates())
        found = {r.id: r for r in self.world.receptacles()}
        self.receptacles = [dict(r) for r in meta.get("receptacles") or []]
        self.footprints = {
            r["id"]: found[r["id"]].footprint if r["id"] in found else Polygon()
            for r in self.receptacles
        }
        self.views, self.view_index, self.by_receptacle = viewpoint_table(arrays, self.receptacles)
        lattice = self.world.reachable_positions(step=cfg.viewpoint_spacing_m)
        self._lattice = lattice

    def allows(self, receptacle_category: str, category: str) -> str:
        return ""  # every category on every receptacle (habitat_scene's pairing)

    def category_of(self, asset: str) -> str | None:
        return self.templates.get(asset)

    def off_largest(self, points: np.ndarray) -> list[int]:
        lattice = self._lattice
        out = []
        for k, p in enumerate(np.asarray(points, dtype=np.float64).reshape(-1, 3)):
            d = np.abs(lattice[:, [0, 2]] - p[[0, 2]]).max(axis=1) if len(lattice) else []
            if not len(d) or float(np.min(d)) > TOL_M:
                out.append(k)
        return out

    def distance(self, a: Point, b: Point) -> float:
        return float(self.world.distances([a], [b])[0][0])

    def reference(self, point: Point) -> np.ndarray | None:
        """``point``'s reference point as ``robot_at_object`` measures it in this world
        (:func:`.goals.reference_point`: the nearest reachable position)."""
        from dataforge.pipelines.findingdory.goals import reference_point

        return reference_point(self.world, point)

    def replay(self, plan: EpisodePlan) -> Iterator[str]:
        world = self.world
        world.reset()
        handles: dict[str, str] = {}
        for obj, rid in plan.spawns():
            res = world.place_pose(obj.asset_id, rid, obj.position, obj.rotation)
            if not res.ok:
                yield f"{obj.id} does not rest on {rid} at its recorded pose ({res.status})"
                return
            handles[obj.id] = res.object_id
        for r in plan.rearrangements:
            res = world.place_pose(
                handles[r.object], r.goal_receptacle, r.goal_position, r.goal_rotation
            )
            if not res.ok:
                yield f"{r.object} does not rest on {r.goal_receptacle} at its goal ({res.status})"
                return

    def close(self) -> None:
        self.world.close()
