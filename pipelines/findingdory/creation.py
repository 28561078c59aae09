"""FindingDory episode creation on the embedded world (paper appendix B.1).

Per scene (:class:`SceneContext`, built once): the house's receptacles (top-level furniture with
a usable support surface, the floor excluded) and each one's *viewpoints*: the points of a
:data:`~.config.EpisodesConfig.viewpoint_spacing_m` lattice on the navigation grid's largest
component that are within ``reach_m`` (plan view) of the receptacle's footprint and see it past
the walls (plan-view sight to the footprint's nearest point). The lattice is fine enough that
every navigable point near a receptacle is within 0.1 m of one of its viewpoints, which is what
``robot_at_receptacle`` measures (upstream: <= 0.1 m to the nearest viewpoint).

Per episode (:func:`draw_episode`), in this order of random draws:

1. R rearrangements, R uniform in ``--rearrangements``; R distinct small pickupable categories
   (:func:`dataforge.world.spawnable.small_pickupable_types`) among those the house can start
   and finish (a receptacle procthor's statistics put the category on, and one of another type).
2. Each object: an asset of the split, spawned by the world's placement search on a start
   receptacle drawn by procthor's likelihood of the category on its type; its *pick spots* are
   the start receptacle's viewpoints within ``reach_m`` of the object (straight line) and within
   ``robot_at_object``'s 2.0 m of its reference point by path (the rule the predicate measures,
   so no spot is behind a wall: :func:`spots_for`) from which a render of the head camera facing
   the object shows it on at least ``min_coverage`` of the image (nearest first, at most
   :data:`SPOTS` kept of :data:`SPOT_TRIES` tried, tried ones 0.3 m apart). An object with none
   is spawned again elsewhere (:data:`RECEPTACLE_TRIES` receptacles).
3. One distractor per category: another asset of it (the same one when it has only one) spawned
   on a receptacle other than the twin's start receptacle.
4. In order, each object is picked (leaves the world) and placed on a goal receptacle of a type
   other than its start receptacle's, drawn by likelihood, at a stable pose the placement search
   finds with everything placed so far in the world; its *place spots* are the goal
   receptacle's viewpoints from which the placed object is in reach and in view, as for picks.
   A goal receptacle without such a pose is replaced (:data:`RECEPTACLE_TRIES`).
5. The start pose: a uniform lattice point at least ``min_start_distance`` (geodesic) from the
   first pick spot, yaw a multiple of 10 degrees; the end pose (the walk-away goal, B.2): a
   lattice point at least ``walk_away_m`` from the last place spot, facing no small object and
   no receptacle near enough to count (:func:`_end_pose`).

A draw that fails returns a :class:`Rejection` with its reason; the caller counts them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
from shapely.geometry import LineString, Point

from dataforge.pipelines.findingdory.config import EpisodesConfig
from dataforge.pipelines.findingdory.plan import Distractor, EpisodePlan, Rearrangement, Spot
from dataforge.world.assets import AssetCatalogue
from dataforge.world.house import House

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

    from dataforge.nav.space import Point as NavPoint
    from dataforge.simulators.protocol import NavSpace, WorldBackend
    from dataforge.world.graph import WorldGraph
    from dataforge.world.placement import PlacementResult

SPOTS = 3  # pick / place spots kept per object
SPOT_TRIES = 8  # viewpoints rendered per object at most
SPOT_APART_M = 0.3  # tried viewpoints at least this far apart
RECEPTACLE_TRIES = 8  # receptacles tried per spawn / place (distractors: all)
END_TRIES = 12  # walk-away candidates (and yaws per candidate) tried
END_CLEAR_M = 0.25  # a receptacle with a viewpoint this close to the walk-away goal must be out
# of view there (the agent stops within 0.1 m of it, so farther viewpoints stay > 0.1 m away)
EXCLUDED_RECEPTACLES = frozenset({"Floor"})
TURN_DEG = 10.0

REASONS = (
    "too_few_categories",  # the house cannot start and finish R distinct categories
    "pick_unreachable",  # no start receptacle gave an object a visible pick spot
    "distractor_unplaced",  # no receptacle took a distractor
    "place_unreachable",  # no goal receptacle gave a stable, visible place pose
    "no_start_pose",  # no lattice point far enough from the first pick
    "no_end_pose",  # no lattice point far from the last place and clear of everything
)


@dataclass(frozen=True)
class Rejection:
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class Receptacle:
    id: str
    category: str
    footprint: BaseGeometry  # plan view


class SceneBase:
    """What every episode of one scene shares, whatever the world: the receptacles and their
    viewpoints, the category statistics, and the scene's navigation as loaded. Subclasses (one
    per scene source: ProcTHOR houses, HSSD scenes) set ``cfg``, ``backend``, ``pairs``
    (receptacle category -> object category -> likelihood), ``types`` (the small categories)
    and ``floor_y``, call :meth:`_explore` before they look for receptacles, and set
    ``receptacles`` and ``viewpoints`` with :meth:`_index_receptacles`; they say which assets a
    category has (:meth:`assets`, :meth:`category_of`). Everything else :func:`draw_episode`
    asks of the world goes through the :class:`~dataforge.simulators.protocol.WorldBackend`
    protocol."""

    cfg: EpisodesConfig
    backend: WorldBackend
    receptacles: tuple[Receptacle, ...]
    viewpoints: tuple[np.ndarray, ...]
    pairs: dict[str, dict[str, float]]
    types: tuple[str, ...]
    floor_y: float
    nav: NavSpace
    lattice: np.ndarray
    """The viewpoint lattice (N x 3) of the navigable area, as loaded."""

    def _explore(self) -> None:
        """The scene's navigable space and viewpoint lattice as loaded (before any episode
        opens a door that would change them)."""
        self.nav = self.backend.nav
        self.lattice = self.backend.reachable_positions(step=self.cfg.viewpoint_spacing_m)

    def _index_receptacles(self) -> None:
        self._index = {r.id: k for k, r in enumerate(self.receptacles)}

    # -- queries ---------------------------------------------------------------------------

    def receptacle(self, rid: str) -> Receptacle:
        return self.receptacles[self._index[rid]]

    def views_of(self, rid: str) -> np.ndarray:
        return self.viewpoints[self._index[rid]]

    def likelihood(self, category: str, rec: Receptacle) -> float:
        return float(self.pairs.get(rec.category, {}).get(category, 0.0))

    def starts(self, category: str) -> list[Receptacle]:
        return [r for r in self.receptacles if self.likelihood(category, r) > 0]

    def goals(self, category: str, start: Receptacle) -> list[Receptacle]:
        return [r for r in self.starts(category) if r.category != start.category]

    def usable_categories(self) -> list[str]:
        out = []
        for c in self.types:
            starts = self.starts(c)
            if len({r.category for r in starts}) >= 2:
                out.append(c)
        return out

    def distances(self, sources: Sequence[NavPoint], targets: Sequence[NavPoint]) -> np.ndarray:
        """Geodesics on the scene's navigable space as loaded."""
        return self.nav.distances(sources, targets)

    def fresh_world(self) -> WorldBackend:
        """The world back at the scene as loaded (renderer and navigation kept)."""
        self.backend.reset()
        return self.backend

    def small_objects(self, graph: WorldGraph) -> list[str]:
        """Ids of the small objects in ``graph`` (spawned or the scene's own)."""
        small = set(self.types)
        return [o.id for o in graph.objects if o.object_type in small]

    # -- the scene source's assets -----------------------------------------------------------

    def assets(self, category: str) -> tuple[str, ...]:
        """The assets of ``category`` usable in the configured split."""
        raise NotImplementedError

    def category_of(self, asset: str) -> str:
        raise NotImplementedError


class SceneContext(SceneBase):
    """A ProcTHOR house on the embedded world: the base house, the check renderer and grid, the
    receptacles and their viewpoints, the spawnable categories and procthor's statistics."""

    def __init__(self, house: House, catalogue: AssetCatalogue, cfg: EpisodesConfig) -> None:
        from dataforge.simulators import EmbeddedWorld
        from dataforge.world.spawnable import receptacle_pairs, small_pickupable_types
        from dataforge.world.surfaces import object_footprint, object_surfaces
        from dataforge.world.viewpoints import WallSight

        self.house, self.catalogue, self.cfg = house, catalogue, cfg
        self.backend = EmbeddedWorld(
            house,
            catalogue,
            width=cfg.check_width,
            height=cfg.check_height,
            vfov_deg=check_vfov(cfg),
            agent_radius=cfg.agent_radius,
        )
        self._explore()
        self.floor_y = float(self.backend.grid.y)
        self.pairs = receptacle_pairs(catalogue, exclude=EXCLUDED_RECEPTACLES)
        self.types = small_pickupable_types(catalogue, self.pairs, cfg.split)
        sight = WallSight(house)
        lattice = self.lattice
        pts = shapely.points(lattice[:, 0], lattice[:, 2]) if len(lattice) else np.array([])
        recs: list[Receptacle] = []
        views: list[np.ndarray] = []
        for obj in house.top_level_objects():
            info = catalogue.asset(obj.asset_id)
            if obj.object_type in EXCLUDED_RECEPTACLES or obj.object_type not in self.pairs:
                continue
            if not any(s.usable for s in object_surfaces(obj, info)):
                continue
            foot = object_footprint(obj, info)
            if foot.is_empty or not len(lattice):
                continue
            near = np.nonzero(shapely.distance(pts, foot) <= cfg.reach_m)[0]
            keep = [
                int(k)
                for k in near
                if sight.clear(
                    (lattice[k, 0], lattice[k, 2]),
                    _nearest_point(foot, lattice[k, 0], lattice[k, 2]),
                )
            ]
            if not keep:
                continue
            recs.append(Receptacle(obj.id, obj.object_type, foot))
            views.append(np.round(lattice[keep], 6))
        self.receptacles = tuple(recs)
        self.viewpoints = tuple(views)
        self._index_receptacles()

    def assets(self, category: str) -> tuple[str, ...]:
        from dataforge.world.spawnable import split_assets

        return split_assets(self.catalogue, category, self.cfg.split)

    def category_of(self, asset: str) -> str:
        return self.catalogue.asset(asset).object_type


def check_vfov(cfg: EpisodesConfig) -> float:
    """The vertical field of view of the Stretch head camera at the check resolution."""
    cam = cfg.camera
    return math.degrees(
        2 * math.atan(math.tan(math.radians(cam.hfov_deg) / 2) * cfg.check_height / cfg.check_width)
    )


def draw_episode(ctx: SceneBase, rng: np.random.Generator, scene: str) -> EpisodePlan | Rejection:
    """One episode drawn as the module docstring says, or why it failed."""
    cfg = ctx.cfg
    lo, hi = cfg.rearrangements
    r = int(rng.integers(lo, hi + 1))
    usable = ctx.usable_categories()
    if len(usable) < r:
        return Rejection("too_few_categories", f"{len(usable)} usable categories, {r} needed")
    categories = [usable[int(k)] for k in rng.choice(len(usable), size=r, replace=False)]
    backend = ctx.fresh_world()
    picks: list[tuple[str, str, str, Receptacle, tuple[Spot, ...]]] = []
    for c in categories:
        asset = _asset(ctx, c, rng)
        got = _spawn_visible(ctx, backend, asset, ctx.starts(c), rng)
        if got is None:
            return Rejection("pick_unreachable", c)
        rec, res, spots = got
        oid = res.object_id
        picks.append((oid, c, asset, rec, spots))
    distractors: list[Distractor] = []
    for _oid, c, asset, rec, _ in picks:
        others = [x for x in ctx.starts(c) if x.id != rec.id]
        d_asset = _asset(ctx, c, rng, avoid=asset)
        spawned = _spawn_any(backend, d_asset, others, ctx, c, rng)
        if spawned is None:
            return Rejection("distractor_unplaced", c)
        distractors.append(
            Distractor(
                spawned.object_id,
                c,
                d_asset,
                spawned.receptacle_id,
                _v(spawned.position),
                _v(spawned.rotation),
            )
        )
    starts = {oid: backend.pose(oid) for oid, *_ in picks}
    rearrangements: list[Rearrangement] = []
    for oid, c, asset, rec, pick_spots in picks:
        backend.pick(oid)
        placed = _place_visible(ctx, backend, oid, ctx.goals(c, rec), c, rng)
        if placed is None:
            return Rejection("place_unreachable", c)
        goal, res, place_spots = placed
        rearrangements.append(
            Rearrangement(
                object=oid,
                category=c,
                asset=asset,
                start_receptacle=rec.id,
                goal_receptacle=goal.id,
                start_position=_v(starts[oid][0]),
                start_rotation=_v(starts[oid][1]),
                goal_position=_v(res.position),
                goal_rotation=_v(res.rotation),
                pick_spots=pick_spots,
                place_spots=place_spots,
            )
        )
    start = _pose_far_from(ctx, rearrangements[0].pick_spots[0], cfg.min_start_distance, rng)
    if start is None:
        return Rejection("no_start_pose")
    end = _end_pose(ctx, backend, rearrangements[-1].place_spots[0], rng)
    if end is None:
        return Rejection("no_end_pose")
    return EpisodePlan(
        scene,
        tuple(rearrangements),
        tuple(distractors),
        start,
        end,
        tuple(x.id for x in ctx.receptacles),
    )


# -- steps -----------------------------------------------------------------------------------


def _asset(ctx: SceneBase, category: str, rng: np.random.Generator, avoid: str = "") -> str:
    assets = ctx.assets(category)
    pool = [a for a in assets if a != avoid] or list(assets)
    return pool[int(rng.integers(len(pool)))]


def _weighted(
    ctx: SceneBase,
    recs: Sequence[Receptacle],
    category: str,
    rng: np.random.Generator,
    limit: int = RECEPTACLE_TRIES,
) -> list[Receptacle]:
    """Up to ``limit`` of ``recs`` drawn without replacement by likelihood."""
    if not recs:
        return []
    w = np.array([ctx.likelihood(category, r) for r in recs], dtype=np.float64)
    k = min(limit, len(recs))
    order = rng.choice(len(recs), size=k, replace=False, p=w / w.sum())
    return [recs[int(i)] for i in order]


def _spawn_any(
    backend: WorldBackend,
    asset: str,
    recs: Sequence[Receptacle],
    ctx: SceneBase,
    category: str,
    rng: np.random.Generator,
) -> PlacementResult | None:
    for rec in _weighted(ctx, recs, category, rng, limit=len(recs)):
        res = backend.spawn(asset, rec.id, rng)
        if res.ok:
            return res
    return None


def _visible_on(
    ctx: SceneBase,
    backend: WorldBackend,
    recs: Sequence[Receptacle],
    category: str,
    rng: np.random.Generator,
    attempt: Callable[[str], PlacementResult],
    undo: Callable[[PlacementResult], None],
) -> tuple[Receptacle, PlacementResult, tuple[Spot, ...]] | None:
    """The first of up to :data:`RECEPTACLE_TRIES` receptacles (drawn by likelihood) on which
    ``attempt(receptacle_id)`` places the object with pick or place spots; ``undo(result)``
    takes back a placement without spots."""
    for rec in _weighted(ctx, recs, category, rng):
        res = attempt(rec.id)
        if not res.ok:
            continue
        spots = spots_for(ctx, backend, res.object_id, rec.id)
        if spots:
            return rec, res, spots
        undo(res)
    return None


def _spawn_visible(
    ctx: SceneBase,
    backend: WorldBackend,
    asset: str,
    recs: Sequence[Receptacle],
    rng: np.random.Generator,
) -> tuple[Receptacle, PlacementResult, tuple[Spot, ...]] | None:
    return _visible_on(
        ctx,
        backend,
        recs,
        ctx.category_of(asset),
        rng,
        lambda rid: backend.spawn(asset, rid, rng),
        lambda res: backend.remove(res.object_id),
    )


def _place_visible(
    ctx: SceneBase,
    backend: WorldBackend,
    object_id: str,
    recs: Sequence[Receptacle],
    category: str,
    rng: np.random.Generator,
) -> tuple[Receptacle, PlacementResult, tuple[Spot, ...]] | None:
    return _visible_on(
        ctx,
        backend,
        recs,
        category,
        rng,
        lambda rid: backend.place(object_id, rid, rng),
        lambda res: backend.pick(object_id),
    )


def spots_for(
    ctx: SceneBase, backend: WorldBackend, object_id: str, receptacle_id: str
) -> tuple[Spot, ...]:
    """Viewpoints of ``receptacle_id`` within reach of the object from which the head camera,
    turned to face it, sees it on at least ``min_coverage`` of the image (best coverage
    first; see the module docstring). Within reach: ``reach_m`` in a straight line (the arm)
    and, by the rule ``robot_at_object`` measures, at most its ``max_distance_m`` by path from
    the object's reference point (:func:`.goals.reference_point`); a viewpoint
    the straight line puts in reach but the path does not (behind a wall) is refused, so every
    spot passes the predicate's distance check."""
    from dataforge.nav.follower import heading_to
    from dataforge.pipelines.findingdory.goals import coverage_of, instance_ids_of, reference_point
    from dataforge.pipelines.findingdory.metrics import ROBOT_AT_OBJECT

    cfg, cam = ctx.cfg, ctx.cfg.camera
    centre = np.asarray(backend.center(object_id), dtype=np.float64)
    views = ctx.views_of(receptacle_id)
    d = np.hypot(views[:, 0] - centre[0], views[:, 2] - centre[2])
    order = [int(k) for k in np.argsort(d, kind="stable") if d[k] <= cfg.reach_m]
    ref = reference_point(backend, centre) if order else None
    if ref is None:
        return ()
    path = np.asarray(ctx.distances([ref], list(views[order])), dtype=np.float64)[0]
    order = [k for k, p in zip(order, path, strict=True) if p <= ROBOT_AT_OBJECT.max_distance_m]
    tried: list[np.ndarray] = []
    found: list[Spot] = []
    for k in order:
        p = views[k]
        if any(math.hypot(p[0] - q[0], p[2] - q[2]) < SPOT_APART_M for q in tried):
            continue
        tried.append(p)
        yaw = round(heading_to(p, centre), 6)
        eye = (float(p[0]), float(p[1]) + cam.height_m, float(p[2]))
        frame = backend.render(eye, yaw, cam.tilt_deg)
        cov = coverage_of(frame.instance, instance_ids_of(backend.ids, [object_id]))
        if cov >= cfg.min_coverage:
            found.append(Spot(_v(p), yaw, round(cov, 6)))
        if len(tried) >= SPOT_TRIES or len(found) >= SPOTS:
            break
    found.sort(key=lambda s: -s.coverage)
    return tuple(found)


def _pose_far_from(
    ctx: SceneBase, spot: Spot, min_m: float, rng: np.random.Generator
) -> Spot | None:
    """A uniform lattice point at least ``min_m`` (geodesic) from ``spot``; yaw a multiple of
    :data:`TURN_DEG`."""
    lattice = ctx.lattice
    d = ctx.distances([spot.position], list(lattice))[0]
    ok = np.nonzero(np.isfinite(d) & (d >= min_m))[0]
    if not len(ok):
        return None
    k = int(ok[int(rng.integers(len(ok)))])
    yaw = TURN_DEG * int(rng.integers(round(360 / TURN_DEG)))
    return Spot(_v(np.round(lattice[k], 6)), float(yaw))


def _end_pose(
    ctx: SceneBase, backend: WorldBackend, spot: Spot, rng: np.random.Generator
) -> Spot | None:
    """The walk-away goal (B.2): a lattice point at least ``walk_away_m`` (geodesic) from the
    last place spot, facing a yaw from which (and :data:`TURN_DEG` either side) no small object
    is in view and no receptacle whose viewpoints come within :data:`END_CLEAR_M` of the point
    covers ``min_coverage`` of the image, so that the last frame of the day answers no object
    or receptacle task by itself. Points clear of every viewpoint are tried first, then the
    others (:data:`END_TRIES` in all, each with :data:`END_TRIES` yaws), in random order."""
    from scipy.spatial import cKDTree

    from dataforge.pipelines.findingdory.goals import furniture_keys

    cfg, cam = ctx.cfg, ctx.cfg.camera
    lattice = ctx.lattice
    d = ctx.distances([spot.position], list(lattice))[0]
    far = np.isfinite(d) & (d >= cfg.walk_away_m)
    if not far.any():
        return None
    trees = [cKDTree(v[:, [0, 2]]) for v in ctx.viewpoints]
    near = [t.query(lattice[:, [0, 2]])[0] < END_CLEAR_M for t in trees]
    crowded = np.any(near, axis=0) if near else np.zeros(len(lattice), dtype=bool)
    order = [
        *rng.permutation(np.nonzero(far & ~crowded)[0]),
        *rng.permutation(np.nonzero(far & crowded)[0]),
    ][:END_TRIES]
    graph = backend.world_graph()
    small = ctx.small_objects(graph)
    turns = round(360 / TURN_DEG)
    for k in order:
        p = lattice[int(k)]
        eye = (float(p[0]), float(p[1]) + cam.height_m, float(p[2]))
        recs = [ctx.receptacles[j].id for j in range(len(trees)) if near[j][int(k)]]
        keys = [key for rid in recs for key in furniture_keys(graph, rid)]
        for step in rng.permutation(turns)[:END_TRIES]:
            yaw = TURN_DEG * int(step)
            if all(
                _clear_view(
                    backend, eye, (yaw + dy) % 360.0, cam.tilt_deg, small, keys, cfg.min_coverage
                )
                for dy in (0.0, -TURN_DEG, TURN_DEG)
            ):
                return Spot(_v(np.round(p, 6)), float(yaw))
    return None


def _clear_view(
    backend: WorldBackend,
    eye: tuple[float, float, float],
    yaw: float,
    tilt: float,
    small: list[str],
    furniture: list[str],
    min_coverage: float,
) -> bool:
    """No small object in view, and the given furniture below ``min_coverage``."""
    from dataforge.pipelines.findingdory.goals import coverage_of, instance_ids_of

    frame = backend.render(eye, yaw, tilt)
    if coverage_of(frame.instance, instance_ids_of(backend.ids, small)) > 0:
        return False
    return coverage_of(frame.instance, instance_ids_of(backend.ids, furniture)) < min_coverage


def _nearest_point(geom: BaseGeometry, x: float, z: float) -> tuple[float, float]:
    line = shapely.shortest_line(Point(x, z), geom)
    px, pz = line.coords[1] if isinstance(line, LineString) else (x, z)
    # stop just short of the footprint: the wall test must not hit a wall the furniture touches
    dx, dz = px - x, pz - z
    n = math.hypot(dx, dz)
    if n > 0.05:
        px, pz = x + dx * (n - 0.05) / n, z + dz * (n - 0.05) / n
    return px, pz


def _v(p: Any) -> tuple[float, float, float]:
    a, b, c = (round(float(v), 6) for v in p)
    return (a, b, c)
