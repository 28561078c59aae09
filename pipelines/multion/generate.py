"""MultiON: m-ON episodes (Wani et al., NeurIPS 2020) by goal-object insertion under geodesic
constraints, in the challenge's episode format.

Inputs
    scenes from ``--scenes``: ``generate:K`` (procthor's generator on the embedded world, as
    ``dataforge houses generate``; by default ProcTHOR-10K's specs of 4 to 7 rooms, whose 3-ON
    totals match the released minival's, ``config.HOUSE_SPECS``), a folder of ProcTHOR house
    JSON or a ``.jsonl(.gz)`` of houses (each file read is recorded with its sha256), or
    ``habitat:SCENES_DIR`` (navmeshes read through habitat-sim, which must be installed).
    ``--data-dir`` (optional): the challenge's goal meshes
    ``multion/objects/cylinder_<colour>.glb`` (recorded); without it the cylinders are built
    from the same facts (:mod:`.cylinders`).
Randomization and seeds
    one work unit per scene. A generated house comes first from the unit's stream (as in
    ``houses generate``: same unit id and seed, same house), then the episodes, each drawn in
    the order of :mod:`.sampling` (start, goals, heading, categories).
Outputs
    one stored episode per scene (id: the scene's name) with one row per MultiON episode:
    ``episode_id`` int64 (0, 1, ... in each scene: the number habitat-lab's loader gives the
    scene's episodes, so an episode is named by its scene and id), ``start_position`` (x, y, z) and
    ``start_rotation`` ([x, y, z, w]) float64, ``goal_position`` (m x 3) float64,
    ``goal_category`` int8 (task category ids), ``leg_geodesic`` (m) and
    ``geodesic_distance`` (their sum) float64 in metres, ``start_room`` / ``goal_room`` int16
    (index into the metadata's ``rooms``, -1 none), and ``house_json`` (the house, empty for a
    Habitat scene). Beside the shards, in the challenge's layout: ``<split>/<split>.json.gz``
    (no episodes, the category maps) and ``<split>/content/<scene>.json.gz`` per scene, and
    ``scenes/procthor/<scene>.json`` (each house, which the episodes' ``scene_id`` names).
Invariants checked by validate
    see ``checks.INVARIANTS``; every geodesic is measured again from the stored house.
Where it departs from the paper
    see ``docs/multion.md``: ProcTHOR houses in the embedded world instead of Matterport3D by
    default; goal points on the 5 cm grid's cell centres; cylinders of the meshes' size (1.5 m,
    radius 0.1 m, centred on the floor point as the reference simulator places them) that block
    navigation unless ``--no-block``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.inputs import Inputs
from dataforge.pipelines.multion.config import MultionConfig
from dataforge.pipelines.multion.cylinders import NAMES, OBJECTS_DIR, cylinders
from dataforge.pipelines.multion.episodes import (
    category_maps,
    content_file,
    document,
    episode_dicts,
    gz_json,
    split_file,
)
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema
from dataforge.world.house_sources import HouseSource
from dataforge.world.scene_sources import (
    house_bytes,
    load_scene_house,
    plan_scene_units,
    resolve_scenes,
)

if TYPE_CHECKING:
    from dataforge.pipelines.multion.sampling import Rules
    from dataforge.pipelines.multion.scenes import SceneSpace
    from dataforge.store.builder import ExtraFile
    from dataforge.store.reader import Dataset

PIPELINE = "multion"
SCENES = "scenes"
DATA_DIR = "data-dir"
PAPER = (
    "Wani, Patel, Jain, Chang, Savva. MultiON: Benchmarking Semantic Map Memory using "
    "Multi-Object Navigation. NeurIPS 2020."
)
HOUSES_DIR = "scenes/procthor"


def schema(cfg: MultionConfig) -> Schema:
    m = cfg.m
    return Schema(
        {
            "episode_id": ArraySpec(
                "int64", (None,), description="episode id (0, 1, ... in the scene, as habitat-lab)"
            ),
            "start_position": ArraySpec(
                "float64", (None, 3), units="m", description="agent start x, y, z"
            ),
            "start_rotation": ArraySpec(
                "float64", (None, 4), description="start heading: quaternion x, y, z, w about +y"
            ),
            "goal_position": ArraySpec(
                "float64", (None, m, 3), units="m", description="goal cylinder centres in order"
            ),
            "goal_category": ArraySpec(
                "int8", (None, m), description="goal task category ids (cylinders.CATEGORIES)"
            ),
            "leg_geodesic": ArraySpec(
                "float64",
                (None, m),
                units="m",
                description="geodesic start -> g1, g1 -> g2, ...",
            ),
            "geodesic_distance": ArraySpec(
                "float64", (None,), units="m", description="total geodesic start -> g1 -> ... -> gm"
            ),
            "start_room": ArraySpec(
                "int16", (None,), description="index into metadata rooms, -1: none"
            ),
            "goal_room": ArraySpec(
                "int16", (None, m), description="index into metadata rooms, -1: none"
            ),
            "house_json": ArraySpec(
                "uint8",
                (None,),
                codec="blosc-zstd",
                description="the ProcTHOR house (JSON); empty for a Habitat scene",
            ),
        }
    )


# -- one unit ----------------------------------------------------------------------------------


def open_space(
    cfg: MultionConfig, source: HouseSource | None, unit: WorkUnit, rng: np.random.Generator
) -> tuple[SceneSpace, dict[str, Any], bytes]:
    """The unit's navigable space, what to record of where the scene came from, and the house
    JSON bytes (empty for a Habitat scene)."""
    from dataforge.pipelines.multion.scenes import habitat_space, house_space

    if cfg.scene_kind == "habitat":
        space = habitat_space(Path(unit.params["navmesh"]), int(rng.integers(0, 2**31 - 1)))
        # the navmesh is <scenes>/<scene_id>.navmesh: the folder is the recorded input location
        return space, {"source": "habitat", "scene_id": unit.params["scene_id"]}, b""
    from dataforge.world.assets import load_catalogue

    catalogue = load_catalogue()
    house, raw, origin = load_scene_house(
        cfg.scene_kind,
        source,
        unit,
        rng,
        split=cfg.split,
        room_spec=cfg.generator_room_spec,
        max_attempts=cfg.max_attempts,
        catalogue=catalogue,
        min_floor_area=cfg.min_floor_area,
    )
    space = house_space(house, catalogue, agent_radius=cfg.agent_radius, cell=cfg.cell)
    return space, origin, house_bytes(raw)


def scene_id_of(cfg: MultionConfig, unit: WorkUnit) -> str:
    """The episodes' ``scene_id``: the glb under the scenes folder (Habitat), else the house
    file written beside the shards (relative to the dataset's ``scenes/`` folder)."""
    if cfg.scene_kind == "habitat":
        return str(unit.params["scene_id"])
    return f"procthor/{unit.id}.json"


def rules_of(cfg: MultionConfig) -> Rules:
    from dataforge.pipelines.multion.sampling import Rules

    return Rules(
        m=cfg.m,
        min_geodesic=cfg.min_geodesic,
        max_geodesic=cfg.max_geodesic,
        cylinder_radius=cfg.cylinder_radius,
        agent_radius=cfg.agent_radius,
        block=cfg.block and cfg.scene_kind != "habitat",
    )


def produce(
    cfg: MultionConfig, source: HouseSource | None, unit: WorkUnit, rng: np.random.Generator
) -> Iterator[Episode]:
    from dataforge.pipelines.multion.sampling import draw_episodes

    space, origin, house = open_space(cfg, source, unit, rng)
    drawn, tally = draw_episodes(space, rules_of(cfg), rng, cfg.episodes)
    n, m = len(drawn), cfg.m
    arrays: dict[str, np.ndarray] = {
        # habitat-lab's MultiNav-v1 loader numbers each content file's episodes 0, 1, ...
        # (multi_nav_dataset.py: episode.episode_id = str(i)): write exactly those ids
        "episode_id": np.arange(n, dtype=np.int64),
        "start_position": np.array([d.start for d in drawn], dtype=np.float64).reshape(n, 3),
        "start_rotation": np.array([d.rotation for d in drawn], dtype=np.float64).reshape(n, 4),
        "goal_position": np.array([d.goals for d in drawn], dtype=np.float64).reshape(n, m, 3),
        "goal_category": np.array([d.categories for d in drawn], dtype=np.int8).reshape(n, m),
        "leg_geodesic": np.array([d.legs for d in drawn], dtype=np.float64).reshape(n, m),
        "start_room": space.room_indices(np.array([d.start for d in drawn]).reshape(n, 3)).astype(
            np.int16
        ),
        "goal_room": space.room_indices(np.array([d.goals for d in drawn]).reshape(n * m, 3))
        .astype(np.int16)
        .reshape(n, m),
        "house_json": np.frombuffer(house, dtype=np.uint8),
    }
    arrays["geodesic_distance"] = arrays["leg_geodesic"].sum(axis=1)
    yield Episode(
        unit.id,
        arrays,
        {
            "scene": unit.id,
            "scene_id": scene_id_of(cfg, unit),
            "origin": origin,
            "space": space.kind,
            "floor_y": float(space.floor_y),
            **(
                {
                    "room_spec": space.house.metadata.get("roomSpecId"),
                    "floor_area_m2": round(float(space.house.floor_area), 2),
                }
                if space.house is not None
                else {}
            ),
            "rooms": [list(r) for r in space.rooms],
            "sampling": tally.to_dict(),
            **(space.geodesics_stats() or {}),
        },
    )


# -- the files beside the shards ---------------------------------------------------------------


def extras(ds: Dataset) -> dict[str, ExtraFile]:
    """The files beside the shards (registered): the challenge files of the dataset's split."""
    return challenge_files(ds, str(ds.manifest.config["split"]))


def challenge_files(ds: Dataset, split: str) -> dict[str, ExtraFile]:
    """``<split>/<split>.json.gz``, ``<split>/content/<scene>.json.gz`` and the houses."""
    files: dict[str, ExtraFile] = {split_file(split): gz_json({**category_maps(), "episodes": []})}
    for eid in ds.episode_ids:
        files[content_file(split, eid)] = functools.partial(_write_content, ds, eid)
        ep = ds[eid]
        if ep["house_json"].shape[0]:  # a ProcTHOR house (not a Habitat scene)
            files[f"{HOUSES_DIR}/{eid}.json"] = functools.partial(_write_house, ds, eid)
    return files


def _write_content(ds: Dataset, eid: str, path: Path) -> None:
    ep = ds[eid]
    arrays = {k: ep[k].read() for k in ep if k != "house_json"}
    path.write_bytes(gz_json(document(episode_dicts(arrays, ep.metadata))))


def _write_house(ds: Dataset, eid: str, path: Path) -> None:
    path.write_bytes(ds[eid]["house_json"][:].tobytes())


# -- the job -----------------------------------------------------------------------------------


def resolve_cylinders(cfg: MultionConfig, inputs: Inputs) -> MultionConfig:
    """Read the goal meshes from ``--data-dir`` when given (recording them) and record their
    size; else the built-in cylinders."""
    objects = None
    if DATA_DIR in inputs:
        for name in NAMES:
            inputs.file(DATA_DIR, f"{OBJECTS_DIR}/{name}.glb", "MultiON goal mesh")
        objects = inputs.root(DATA_DIR) / OBJECTS_DIR
    meshes = cylinders(objects)
    radius = round(max(c.radius for c in meshes.values()), 4)
    height = round(max(c.height for c in meshes.values()), 4)
    return cfg.with_(
        cylinders="glb" if objects is not None else "built-in",
        cylinder_radius=radius,
        cylinder_height=height,
    )


def build_job(cfg: MultionConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    """Resolve the scenes and goal meshes (recording every file read), then the job."""
    from dataforge.world.assets import load_catalogue

    inputs = inputs if inputs is not None else Inputs()
    spec = resolve_scenes(
        inputs,
        SCENES,
        kind=cfg.scene_kind,
        generated_count=cfg.generated_scenes,
        room_spec=cfg.generator_room_spec,
    )
    cfg = cfg.with_(
        scene_kind=spec.kind,
        generated_scenes=spec.count,
        procthor=load_catalogue().version,
    )
    cfg = resolve_cylinders(cfg, inputs)
    units, source = plan_scene_units(spec, inputs, SCENES, split=cfg.split)
    n = len(units)
    notes = (
        f"goal cylinders: {cfg.cylinders} (radius {cfg.cylinder_radius} m, length "
        f"{cfg.cylinder_height} m)",
    )
    return Job(
        pipeline=PIPELINE,
        name=f"{PIPELINE}-{cfg.m}-on-{cfg.split}",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(cfg),
        units=tuple(units),
        produce=functools.partial(produce, cfg, source),
        extra_files=extras,
        description=f"MultiON {cfg.m}-ON {cfg.split} episodes in {n} scenes, "
        f"{cfg.episodes} per scene, in the challenge's episode format.",
        url="https://github.com/saimwani/multiON",
        license_url="https://github.com/saimwani/multion-challenge",
        citation=PAPER,
        inputs=inputs,
        notes=notes,
    )
