"""FindingDory episodes (Yadav et al., 2025; appendix B.1): pick-and-place rearrangements of
small objects between receptacles of different categories, with same-category distractors,
pick and place spots, and receptacle viewpoints, in ProcTHOR houses on the embedded world.

Inputs
    scenes from ``--scenes`` (:mod:`dataforge.world.scene_sources`): ``generate:K``
    (procthor's generator on the embedded world, as ``dataforge houses generate``), a folder of
    ProcTHOR house JSON or a ``.jsonl(.gz)`` of houses (each file read is recorded with its
    sha256), or ``habitat:SCENES_DIR`` (HSSD scenes through habitat-sim; see the docs).
Randomization and seeds
    one work unit per scene. A generated house comes first from the unit's stream (as in
    ``houses generate``: same unit id and seed, same house), then the episodes one after the
    other, each draw in the order of :mod:`.creation`; a failed draw is counted by its reason
    and the next draw continues the same stream.
Outputs
    one stored record per scene (id: the scene's name): ``house_json`` (the house as read or
    generated, before any episode's objects; an HSSD scene's scene instance JSON as read),
    ``viewpoints`` float32 (V x 3: x, floor y, z; the receptacles' viewpoint lattice points)
    with ``viewpoint_receptacle`` int16 (V: index into the metadata's ``receptacles``), and per
    episode ``start_pose`` / ``end_pose`` float64 (x, y, z, yaw) and ``rearrangements`` int8.
    Metadata: the scene, where it came from, the receptacles (id, category, room), the rooms,
    the episodes (id and :class:`~.plan.EpisodePlan`), the draws rejected by reason and the
    episodes given up.
Invariants checked by validate
    see ``checks.INVARIANTS``: plans follow the pairing rules; every spot is a viewpoint of its
    receptacle within reach of the object; replaying the spawns and the rearrangements in a
    world built from the stored house puts every object on a stable, collision-free pose; the
    start and end poses keep their geodesic distances.
Where it departs from the paper
    see docs/findingdory.md: by default ProcTHOR houses and objects on the embedded world
    instead of HSSD and OVMM objects in Habitat (HSSD: every receptacle takes every category
    alike, there being no co-occurrence statistics); the place search records the placement
    search's stable pose and checks it is in reach and in view from a spot, instead of
    replaying a heuristic place policy's actions; receptacle viewpoints see the receptacle past
    the walls in plan view (the predicates check true visibility per frame).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.inputs import Inputs
from dataforge.pipelines.findingdory.config import (
    CITATION,
    LICENSE_URL,
    URL,
    EpisodesConfig,
    show_range,
)
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema
from dataforge.world.house_sources import HouseSource

if TYPE_CHECKING:
    from dataforge.pipelines.findingdory.creation import SceneBase

PIPELINE = "findingdory"
SCENES = "scenes"


def schema(cfg: EpisodesConfig) -> Schema:
    return Schema(
        {
            "house_json": ArraySpec("uint8", (None,), description="the scene's house JSON"),
            "viewpoints": ArraySpec(
                "float32", (None, 3), units="m", description="receptacle viewpoints x, y, z"
            ),
            "viewpoint_receptacle": ArraySpec(
                "int16", (None,), description="index into metadata receptacles"
            ),
            "start_pose": ArraySpec(
                "float64", (None, 4), description="per episode: x, y, z (m), yaw (degrees)"
            ),
            "end_pose": ArraySpec(
                "float64", (None, 4), description="per episode: the walk-away goal x, y, z, yaw"
            ),
            "rearrangements": ArraySpec("int8", (None,), description="per episode"),
        }
    )


def episode_id(scene: str, k: int) -> str:
    return f"{scene}-{k:03d}"


def produce(
    cfg: EpisodesConfig,
    source: HouseSource | None,
    habitat_root: str | None,
    unit: WorkUnit,
    rng: np.random.Generator,
) -> Iterator[Episode]:
    if cfg.scene_kind == "habitat":
        yield _habitat_record(cfg, Path(str(habitat_root)), unit, rng)
        return
    from dataforge.pipelines.findingdory.creation import SceneContext
    from dataforge.pipelines.findingdory.goals import room_of
    from dataforge.world.assets import load_catalogue
    from dataforge.world.scene_sources import house_bytes, load_scene_house

    catalogue = load_catalogue()
    house, raw, origin = load_scene_house(
        cfg.scene_kind,
        source,
        unit,
        rng,
        split=cfg.split,
        room_spec=cfg.room_spec,
        max_attempts=cfg.max_attempts,
        catalogue=catalogue,
    )
    ctx = SceneContext(house, catalogue, cfg)
    graph = ctx.backend.world_graph()
    rooms = [{"id": r.id, "name": r.room_type} for r in house.rooms]
    where = {r.id: room_of(graph, np.asarray(house.object(r.id).position)) for r in ctx.receptacles}
    yield _record(ctx, unit, rng, house_bytes(raw), origin, rooms, where)


def _habitat_record(
    cfg: EpisodesConfig, root: Path, unit: WorkUnit, rng: np.random.Generator
) -> Episode:
    """One HSSD scene's record (:mod:`.habitat_scene`): the scene instance JSON is stored where
    a house's JSON would be, and the origin names the scene and the dataset config."""
    import hashlib

    from dataforge.pipelines.findingdory.day_world import HABITAT
    from dataforge.pipelines.findingdory.goals import room_of
    from dataforge.pipelines.findingdory.habitat_scene import (
        HabitatSceneContext,
        open_habitat_world,
        scene_instance_bytes,
    )
    from dataforge.world.scene_sources import hssd_layout

    layout = hssd_layout(root)
    scene_id = str(unit.params["scene_id"])
    raw = scene_instance_bytes(layout, scene_id)
    world = open_habitat_world(layout, scene_id, cfg)
    try:
        ctx = HabitatSceneContext(world, cfg)
        graph = world.world_graph()
        rooms = [{"id": r.id, "name": r.room_type} for r in graph.rooms]
        centres = {r.id: r.aabb.center for r in world.receptacles()}
        where = {r.id: room_of(graph, centres[r.id]) for r in ctx.receptacles}
        origin = {
            "source": HABITAT,
            "scene_id": scene_id,
            "dataset_config": layout.dataset_config.relative_to(root).as_posix(),
            "scene_instance_sha256": hashlib.sha256(raw).hexdigest(),
        }
        return _record(ctx, unit, rng, raw, origin, rooms, where)
    finally:
        world.close()


def _record(
    ctx: SceneBase,
    unit: WorkUnit,
    rng: np.random.Generator,
    scene_json: bytes,
    origin: dict[str, Any],
    rooms: list[dict[str, Any]],
    room_of_receptacle: dict[str, str | None],
) -> Episode:
    """Draw the scene's episodes (rejections counted, give-ups after ``max_tries``) and make
    its stored record."""
    from dataforge.pipelines.findingdory.creation import Rejection, draw_episode

    cfg = ctx.cfg
    rejected: Counter[str] = Counter()
    plans: list[dict[str, Any]] = []
    given_up = 0
    for k in range(cfg.episodes):
        for _ in range(cfg.max_tries):
            got = draw_episode(ctx, rng, unit.id)
            if isinstance(got, Rejection):
                rejected[got.reason] += 1
                continue
            plans.append({"id": episode_id(unit.id, k), **got.to_dict()})
            break
        else:
            given_up += 1
    views = ctx.viewpoints
    receptacles = [
        {"id": r.id, "category": r.category, "room": room_of_receptacle[r.id]}
        for r in ctx.receptacles
    ]
    n = len(plans)

    def pose(p: dict[str, Any]) -> list[float]:
        return [*p["position"], p["yaw"]]

    arrays = {
        "house_json": np.frombuffer(scene_json, dtype=np.uint8),
        "viewpoints": (np.concatenate(views) if views else np.zeros((0, 3))).astype(np.float32),
        "viewpoint_receptacle": np.concatenate(
            [np.full(len(v), k, dtype=np.int16) for k, v in enumerate(views)]
        )
        if views
        else np.zeros(0, dtype=np.int16),
        "start_pose": np.array([pose(p["start"]) for p in plans], dtype=np.float64).reshape(n, 4),
        "end_pose": np.array([pose(p["end"]) for p in plans], dtype=np.float64).reshape(n, 4),
        "rearrangements": np.array([len(p["rearrangements"]) for p in plans], dtype=np.int8),
    }
    return Episode(
        unit.id,
        arrays,
        {
            "scene": unit.id,
            "origin": origin,
            "floor_y": ctx.floor_y,
            "rooms": rooms,
            "receptacles": receptacles,
            "episodes": plans,
            "rejected": dict(sorted(rejected.items())),
            "given_up": given_up,
        },
    )


def build_job(cfg: EpisodesConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    """Resolve the scenes (recording every file read), then the job."""
    from dataforge.world.assets import load_catalogue
    from dataforge.world.scene_sources import plan_scene_units, resolve_scenes

    inputs = inputs if inputs is not None else Inputs()
    spec = resolve_scenes(
        inputs,
        SCENES,
        kind=cfg.scene_kind,
        generated_count=cfg.generated_scenes,
        room_spec=cfg.room_spec,
    )
    cfg = cfg.with_(
        scene_kind=spec.kind, generated_scenes=spec.count, procthor=load_catalogue().version
    )
    units, source = plan_scene_units(spec, inputs, SCENES, split=cfg.split, hssd=True)
    habitat_root = str(Path(spec.path or ".").resolve()) if spec.kind == "habitat" else None
    notes = (
        f"{cfg.episodes} episode(s) per scene, {show_range(cfg.rearrangements)} rearrangements "
        f"each; Stretch head camera {cfg.camera.width}x{cfg.camera.height} for visibility "
        f"checks at {cfg.check_width}x{cfg.check_height}",
    )
    return Job(
        pipeline=PIPELINE,
        name=f"{PIPELINE}-{cfg.split}",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(cfg),
        units=tuple(units),
        produce=functools.partial(produce, cfg, source, habitat_root),
        description=f"FindingDory {cfg.split} episodes in {len(units)} scenes, "
        f"{cfg.episodes} per scene: pick-and-place rearrangements with distractors.",
        url=URL,
        license_url=LICENSE_URL,
        citation=CITATION,
        inputs=inputs,
        notes=notes,
    )
