"""Invariants, statistics and the preview of FindingDory episode datasets (registered in
``__init__``).

Every check runs per stored scene (:func:`check_dataset`): the house is loaded from the stored
JSON and the navigation grid rebuilt once (the manifest's agent radius and cell), then each
episode's plan is checked against it and replayed in a fresh world.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from dataforge.registry import PipelineStats
from dataforge.store.manifest import Manifest
from dataforge.store.reader import Dataset, StoredEpisode

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

    from dataforge.nav.space import Point
    from dataforge.pipelines.findingdory.config import EpisodesConfig
    from dataforge.pipelines.findingdory.plan import EpisodePlan

INVARIANTS = {
    "plans": "every episode plan parses; its rearrangement count is in --rearrangements and "
    "matches the arrays; categories are distinct; each start and goal receptacle are known "
    "receptacles of different categories that procthor's statistics allow for the object; one "
    "distractor per category, of that category and not on its twin's start receptacle",
    "viewpoints": "every viewpoint is navigable on the grid rebuilt from the stored house, "
    "within reach of its receptacle's footprint, and its receptacle index is valid",
    "spots": "every pick (place) spot is a viewpoint of the start (goal) receptacle within "
    "reach of the object's start (goal) pose, facing it, and within robot_at_object's distance "
    "of the object's reference point by path (never behind a wall)",
    "replay": "in a world built from the stored house, every object spawned at its recorded "
    "pose rests stably without collisions, and every rearrangement, replayed in order, places "
    "its object stably at the recorded goal pose",
    "poses": "start and end poses are viewpoint-lattice points of the largest component; the "
    "start is at least min_start_distance (geodesic) from the first pick spot and the end at "
    "least walk_away_m from the last place spot",
}

SHOW = 3
TOL_M = 1e-4
YAW_TOL_DEG = 0.01


def _config(manifest: Manifest) -> EpisodesConfig:
    from dataforge.pipelines.findingdory.config import EpisodesConfig

    return EpisodesConfig.from_dict(dict(manifest.config))


def viewpoint_table(
    arrays: Mapping[str, np.ndarray], receptacles: list[dict[str, Any]]
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The stored viewpoints (V x 3), their receptacle indices, and the viewpoints by
    receptacle id."""
    views = np.asarray(arrays["viewpoints"], dtype=np.float64).reshape(-1, 3)
    idx = np.asarray(arrays["viewpoint_receptacle"], dtype=np.int64)
    return views, idx, {r["id"]: views[idx == k] for k, r in enumerate(receptacles)}


class CheckScene(Protocol):
    """What the checks ask of a stored scene rebuilt for checking: :class:`_Scene` (the
    embedded world) or :class:`.habitat_checks.HabitatCheckScene` (an HSSD scene)."""

    receptacles: list[dict[str, Any]]
    footprints: dict[str, BaseGeometry]
    views: np.ndarray
    view_index: np.ndarray
    by_receptacle: dict[str, np.ndarray]

    def allows(self, receptacle_category: str, category: str) -> str: ...

    def category_of(self, asset: str) -> str | None: ...

    def off_largest(self, points: np.ndarray) -> list[int]: ...

    def distance(self, a: Point, b: Point) -> float: ...

    def reference(self, point: Point) -> np.ndarray | None: ...

    def replay(self, plan: EpisodePlan) -> Iterator[str]: ...

    def close(self) -> None: ...


class _Scene:
    """A stored scene rebuilt for checking: house, grid, receptacle footprints."""

    def __init__(
        self, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any], cfg: EpisodesConfig
    ):

        from dataforge.pipelines.findingdory.creation import EXCLUDED_RECEPTACLES
        from dataforge.world.assets import load_catalogue
        from dataforge.world.house import load_house
        from dataforge.world.navigation import house_nav_grid, wall_obstacles
        from dataforge.world.spawnable import receptacle_pairs
        from dataforge.world.surfaces import object_footprint

        self.catalogue = load_catalogue()
        raw = json.loads(np.asarray(arrays["house_json"]).tobytes())
        self.house = load_house(raw, name=str(meta["scene"]), catalogue=self.catalogue)
        self.grid = house_nav_grid(
            self.house, self.catalogue, agent_radius=cfg.agent_radius, cell=cfg.cell
        )
        self.pairs = receptacle_pairs(self.catalogue, exclude=EXCLUDED_RECEPTACLES)
        self.receptacles = [dict(r) for r in meta.get("receptacles") or []]
        self.footprints = {}
        for r in self.receptacles:
            obj = self.house.object(r["id"])
            info = self.catalogue.asset(obj.asset_id)
            self.footprints[r["id"]] = object_footprint(obj, info)
        self.views, self.view_index, self.by_receptacle = viewpoint_table(arrays, self.receptacles)
        self.walls = wall_obstacles(self.house, self.catalogue)

    def allows(self, receptacle_category: str, category: str) -> str:
        """Why ``category`` may not start or end on ``receptacle_category`` ('' when it may)."""
        if self.pairs.get(receptacle_category, {}).get(category, 0.0) > 0:
            return ""
        return f"procthor never puts a {category} on a {receptacle_category}"

    def category_of(self, asset: str) -> str | None:
        return self.catalogue.asset(asset).object_type

    def off_largest(self, points: np.ndarray) -> list[int]:
        """Indices of ``points`` off the largest navigable component."""
        grid = self.grid
        labels, keep = grid.components(), grid.largest_component()
        return [
            k
            for k, p in enumerate(points)
            if not (grid.inside(c := grid.cell_of(p)) and labels[c] == keep)
        ]

    def distance(self, a: Point, b: Point) -> float:
        return float(self.grid.distance(a, b))

    def reference(self, point: Point) -> np.ndarray | None:
        """``point``'s reference point as ``robot_at_object`` measures it
        (:func:`.goals.reference_point` on this grid and the house's walls)."""
        from types import SimpleNamespace

        from dataforge.pipelines.findingdory.goals import reference_point

        return reference_point(SimpleNamespace(grid=self.grid, walls=self.walls), point)

    def replay(self, plan: EpisodePlan) -> Iterator[str]:
        from dataforge.world.house import HouseObject
        from dataforge.world.placement import World

        world = World(self.house, self.catalogue)
        for obj, rid in plan.spawns():
            if obj.id in world:
                yield f"{obj.id} already exists in the house"
                return
            res = world.place_at(obj, rid)
            if not res.ok:
                yield f"{obj.id} does not rest on {rid} at its recorded pose ({res.status})"
                return
        for r in plan.rearrangements:
            (obj,) = world.remove(r.object)
            moved = HouseObject(
                obj.id, obj.asset_id, obj.object_type, r.goal_position, r.goal_rotation
            )
            res = world.place_at(moved, r.goal_receptacle)
            if not res.ok:
                yield f"{r.object} does not rest on {r.goal_receptacle} at its goal ({res.status})"
                return

    def close(self) -> None:
        pass


def check_scene(
    arrays: Mapping[str, np.ndarray],
    meta: Mapping[str, Any],
    cfg: EpisodesConfig,
    scenes_root: Path | None = None,
) -> Iterator[tuple[str, str]]:
    """``(invariant, message)`` for one stored scene (``scenes_root``: where a Habitat
    scene's data folder is, the manifest's recorded ``scenes`` location)."""
    scene = _open_scene(arrays, meta, cfg, scenes_root)
    try:
        yield from _scene_checks(scene, arrays, meta, cfg)
    finally:
        scene.close()


def _open_scene(
    arrays: Mapping[str, np.ndarray],
    meta: Mapping[str, Any],
    cfg: EpisodesConfig,
    scenes_root: Path | None,
) -> CheckScene:
    from dataforge.pipelines.findingdory.day_world import is_habitat

    if is_habitat(meta):
        from dataforge.pipelines.findingdory.habitat_checks import HabitatCheckScene

        return HabitatCheckScene(arrays, meta, cfg, scenes_root)
    return _Scene(arrays, meta, cfg)


def _scene_checks(
    scene: CheckScene,
    arrays: Mapping[str, np.ndarray],
    meta: Mapping[str, Any],
    cfg: EpisodesConfig,
) -> Iterator[tuple[str, str]]:
    from dataforge.pipelines.findingdory.plan import EpisodePlan

    yield from _viewpoint_checks(scene, cfg)
    plans: list[tuple[str, EpisodePlan]] = []
    for d in meta.get("episodes") or []:
        try:
            plans.append((str(d["id"]), EpisodePlan.from_dict(d)))
        except Exception as exc:
            yield "plans", f"episode {d.get('id')!r}: {exc}"
    counts = np.asarray(arrays["rearrangements"]).tolist()
    if len(counts) != len(plans):
        yield "plans", f"{len(counts)} rearrangement counts for {len(plans)} episodes"
    for k, (eid, plan) in enumerate(plans):
        for msg in _plan_problems(scene, plan, cfg):
            yield "plans", f"{eid}: {msg}"
        if k < len(counts) and counts[k] != len(plan.rearrangements):
            yield "plans", f"{eid}: stored count {counts[k]} != {len(plan.rearrangements)}"
        for key in ("start_pose", "end_pose"):
            row = np.asarray(arrays[key], dtype=np.float64)
            spot = plan.start if key == "start_pose" else plan.end
            if k < len(row) and not np.allclose(row[k], [*spot.position, spot.yaw], atol=1e-9):
                yield "plans", f"{eid}: {key} differs from the plan's"
        for msg in _spot_problems(scene, plan, cfg):
            yield "spots", f"{eid}: {msg}"
        for msg in scene.replay(plan):
            yield "replay", f"{eid}: {msg}"
        for msg in _pose_problems(scene, plan, cfg):
            yield "poses", f"{eid}: {msg}"


def _viewpoint_checks(scene: CheckScene, cfg: EpisodesConfig) -> Iterator[tuple[str, str]]:
    import shapely

    n = len(scene.receptacles)
    idx = scene.view_index
    if len(idx) != len(scene.views):
        yield "viewpoints", f"{len(idx)} receptacle indices for {len(scene.views)} viewpoints"
        return
    bad = np.nonzero((idx < 0) | (idx >= n))[0]
    if len(bad):
        yield "viewpoints", f"viewpoints {bad[:SHOW].tolist()}: receptacle index out of range"
        return
    off = scene.off_largest(scene.views)
    if off:
        yield "viewpoints", f"viewpoints {off[:SHOW]} are not on the largest navigable component"
    for k, r in enumerate(scene.receptacles):
        pts = scene.views[idx == k]
        if not len(pts):
            yield "viewpoints", f"receptacle {r['id']} has no viewpoints"
            continue
        d = shapely.distance(shapely.points(pts[:, 0], pts[:, 2]), scene.footprints[r["id"]])
        far = np.nonzero(d > cfg.reach_m + TOL_M)[0]
        if len(far):
            yield "viewpoints", f"{r['id']}: {len(far)} viewpoints beyond reach ({d.max():.3f} m)"


def _plan_problems(scene: CheckScene, plan: EpisodePlan, cfg: EpisodesConfig) -> Iterator[str]:
    lo, hi = cfg.rearrangements
    n = len(plan.rearrangements)
    if not lo <= n <= hi:
        yield f"{n} rearrangements, outside {lo}-{hi}"
    cats = [r.category for r in plan.rearrangements]
    if len(set(cats)) != len(cats):
        yield f"categories repeat: {sorted(c for c, m in Counter(cats).items() if m > 1)}"
    known = {r["id"]: r["category"] for r in scene.receptacles}
    for r in plan.rearrangements:
        for role, rid in (("start", r.start_receptacle), ("goal", r.goal_receptacle)):
            if rid not in known:
                yield f"{r.object}: unknown {role} receptacle {rid}"
            elif why := scene.allows(known[rid], r.category):
                yield f"{r.object}: {why}"
        if known.get(r.start_receptacle) == known.get(r.goal_receptacle):
            yield f"{r.object}: start and goal receptacles are both {known.get(r.goal_receptacle)}"
        if scene.category_of(r.asset) != r.category:
            yield f"{r.object}: asset {r.asset} is not a {r.category}"
    twins = {r.category: r for r in plan.rearrangements}
    dcats = [d.category for d in plan.distractors]
    if sorted(dcats) != sorted(cats):
        yield f"distractor categories {sorted(dcats)} != rearranged {sorted(cats)}"
    for d in plan.distractors:
        twin = twins.get(d.category)
        if twin is not None and d.receptacle == twin.start_receptacle:
            yield f"distractor {d.object} shares its twin's start receptacle {d.receptacle}"
        if d.receptacle not in known:
            yield f"distractor {d.object}: unknown receptacle {d.receptacle}"
    ids = plan.objects
    if len(set(ids)) != len(ids):
        yield "object ids repeat"


def _spot_problems(scene: CheckScene, plan: EpisodePlan, cfg: EpisodesConfig) -> Iterator[str]:
    from dataforge.nav.follower import heading_to, wrap
    from dataforge.pipelines.findingdory.metrics import ROBOT_AT_OBJECT

    limit = ROBOT_AT_OBJECT.max_distance_m
    for r in plan.rearrangements:
        for kind, rid, spots, where in (
            ("pick", r.start_receptacle, r.pick_spots, r.start_position),
            ("place", r.goal_receptacle, r.place_spots, r.goal_position),
        ):
            if not spots:
                yield f"{r.object}: no {kind} spot"
                continue
            views = scene.by_receptacle.get(rid, np.zeros((0, 3)))
            ref = scene.reference(where)
            for s in spots:
                p = np.asarray(s.position)
                if not len(views) or np.min(np.abs(views - p).max(axis=1)) > TOL_M:
                    yield f"{r.object}: {kind} spot {list(s.position)} is not a viewpoint of {rid}"
                if math.hypot(p[0] - where[0], p[2] - where[2]) > cfg.reach_m + TOL_M:
                    yield f"{r.object}: {kind} spot {list(s.position)} is out of reach"
                if ref is None or not scene.distance(p, ref) <= limit + TOL_M:
                    yield (
                        f"{r.object}: {kind} spot {list(s.position)} is over {limit} m by path "
                        "from the object's reference point"
                    )
                if abs(wrap(heading_to(p, where) - s.yaw)) > YAW_TOL_DEG:
                    yield f"{r.object}: {kind} spot yaw {s.yaw} does not face the object"


def _pose_problems(scene: CheckScene, plan: EpisodePlan, cfg: EpisodesConfig) -> Iterator[str]:
    for name, spot in (("start", plan.start), ("end", plan.end)):
        if scene.off_largest(np.asarray([spot.position], dtype=np.float64)):
            yield f"the {name} pose is not on the largest navigable component"
        if abs(spot.yaw / 10.0 - round(spot.yaw / 10.0)) > 1e-9:
            yield f"the {name} yaw {spot.yaw} is not a multiple of 10 degrees"
    first = plan.rearrangements[0].pick_spots[:1]
    last = plan.rearrangements[-1].place_spots[:1]
    if first:
        d = scene.distance(plan.start.position, first[0].position)
        if not d >= cfg.min_start_distance - TOL_M:
            yield f"start {d:.2f} m from the first pick spot (< {cfg.min_start_distance})"
    if last:
        d = scene.distance(plan.end.position, last[0].position)
        if not d >= cfg.walk_away_m - TOL_M:
            yield f"end {d:.2f} m from the last place spot (< {cfg.walk_away_m})"


def check_dataset(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    cfg = _config(ds.manifest)
    where = (ds.manifest.inputs or {}).get("locations", {}).get("scenes")
    scenes_root = Path(where) if where else None
    seen: dict[str, str] = {}
    for ep in ds.episodes():
        for d in ep.metadata.get("episodes") or []:
            eid = str(d.get("id"))
            if eid in seen:
                yield ep.id, "plans", f"episode id {eid} also in scene {seen[eid]}"
            seen[eid] = ep.id
        for key, msg in check_scene(ep.read(), ep.metadata, cfg, scenes_root):
            yield ep.id, key, msg


# -- statistics and the preview --------------------------------------------------------------


def stats(ds: Dataset) -> PipelineStats:
    rejected: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    counts: list[float] = []
    views: list[float] = []
    scenes = given_up = 0
    for ep in ds.episodes():
        meta = ep.metadata
        scenes += 1
        rejected.update(meta.get("rejected") or {})
        given_up += int(meta.get("given_up") or 0)
        recs = {r["id"]: r["category"] for r in meta.get("receptacles") or []}
        for d in meta.get("episodes") or []:
            rs = d["rearrangements"]
            counts.append(float(len(rs)))
            for r in rs:
                categories[r["category"]] += 1
                pairs[f"{recs.get(r['start_receptacle'])} -> {recs.get(r['goal_receptacle'])}"] += 1
        idx = np.asarray(ep["viewpoint_receptacle"].read())
        views += np.bincount(idx, minlength=len(recs)).astype(float).tolist() if len(recs) else []
    return PipelineStats(
        counts={
            "scenes": scenes,
            "episodes": len(counts),
            "episodes given up": given_up,
            "rejected draws": dict(sorted(rejected.items())),
            "rearrangements": int(sum(counts)),
            "object categories": len(categories),
            "top receptacle pairs": dict(pairs.most_common(8)),
            "paper (val)": "100 episodes in 30 HSSD scenes, 2-11 rearrangements each",
        },
        distributions={
            "rearrangements_per_episode": counts,
            "viewpoints_per_receptacle": views,
        },
    )


def preview(ep: StoredEpisode, path: Path, step: int | None) -> None:
    """A plan view of the scene: receptacles, viewpoints, and episode ``step`` (default 0)'s
    rearrangements as arrows from start to goal, with the start and end poses."""
    from dataforge.pipelines.findingdory.figures import plan_figure

    plan_figure(ep, path, 0 if step is None else int(step))
