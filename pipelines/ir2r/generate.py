"""IR2R tours: Room-to-Room paths ordered into tours by an asymmetric TSP (Krantz et al. 2022).

Inputs
    discrete: ``<data-dir>/r2r/R2R_<split>.json`` and ``<data-dir>/mp3d_connectivity/
    <scan>_connectivity.json``; continuous (IR2R-CE): a VLN-CE episodes file
    (``R2R_VLNCE_<split>.json.gz``) and the scenes' navmeshes under ``--scenes-dir``.
Randomization and seeds
    one work unit per scene (its scan id); the unit's stream (global seed + scan id) permutes
    each path's instructions, in path-id order, to pick the instruction of each repetition. The
    tour order itself is deterministic (LKH with a fixed seed, or CP-SAT on one worker).
Outputs
    ``tours_<split>.json``, one split of the authors' tours file ``{split: {scene: [[instr_id,
    ...]]}}`` (IR2R-CE: episode ids; ``dataforge ir2r export`` merges splits), plus one stored
    episode per tour with one row per tour episode:
    ``path_id`` int64, ``instruction`` int16 (index of the path's instruction), ``transition_m``
    float64 (oracle distance from the previous episode's end, or start when tip-to-tip, to this
    start; 0 for the first), ``start_position`` / ``end_position`` float64 xyz; metadata: scene,
    set, repetition, episode ids, total oracle distance and the solver's result.
Invariants checked by validate
    see ``checks.INVARIANTS``: every path of a kept scene appears in exactly one set, exactly n
    times across its set's n tours, once per tour, each time with a different, valid instruction.
Where it departs from the paper
    the paper does not say how small sets are handled; scenes (and, in CE, sets) with fewer than
    ``--min-paths`` (2) paths are dropped, which reproduces Table 1. n is the smallest number of
    instructions of any path in a set (one val_seen path has 4). The order is LKH-3's (through
    elkai) on integer centimetres; ``--solver exact`` proves it optimal.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import MalformedInputError, UsageError
from dataforge.inputs import Inputs
from dataforge.nav.connectivity import WHAT, connectivity_path, load_connectivity
from dataforge.nav.graph import NavGraph
from dataforge.nav.oracle import GeodesicOracle, GraphOracle, HabitatOracle
from dataforge.pipelines.ir2r.config import IR2RConfig
from dataforge.pipelines.ir2r.episodes import (
    R2R_WHAT,
    NavPath,
    by_scene,
    load_r2r,
    load_vlnce,
    r2r_file,
)
from dataforge.pipelines.ir2r.tours import build_scene_tours
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema
from dataforge.tsp import require_solver

if TYPE_CHECKING:
    from dataforge.store.reader import Dataset

PIPELINE = "ir2r"
CONNECTIVITY_DIR = "mp3d_connectivity"
DATA_DIR = "data-dir"  # the input location of R2R and connectivity files
PAPER = (
    "Krantz, Banerjee, Zhu, Corso, Anderson, Lee, Thomason. Iterative Vision-and-Language "
    "Navigation. CVPR 2023."
)


def tours_filename(split: str) -> str:
    return f"tours_{split}.json"


def schema() -> Schema:
    return Schema(
        {
            "path_id": ArraySpec("int64", (None,), description="path (R2R path_id / trajectory)"),
            "instruction": ArraySpec(
                "int16", (None,), description="index of the path's instruction (episode)"
            ),
            "transition_m": ArraySpec(
                "float64",
                (None,),
                units="m",
                description="oracle distance into this episode from the previous one; 0 first",
            ),
            "start_position": ArraySpec(
                "float64", (None, 3), units="m", description="start of the path, scene frame"
            ),
            "end_position": ArraySpec(
                "float64", (None, 3), units="m", description="end of the path, scene frame"
            ),
        }
    )


# -- planning ----------------------------------------------------------------------------------


def plan_discrete(cfg: IR2RConfig, inputs: Inputs) -> tuple[list[WorkUnit], dict[str, list[int]]]:
    """Units of a discrete split (reading and recording the R2R file and each kept scan's
    connectivity file from ``--data-dir``), and the scenes dropped with their path ids."""
    source = inputs.file(DATA_DIR, r2r_file(Path(), cfg.split), R2R_WHAT)
    scenes = select_scenes(cfg, by_scene(load_r2r(source)), source)
    units, dropped = [], {}
    for scan, paths in scenes.items():
        if len(paths) < cfg.min_paths:
            dropped[scan] = [p.path_id for p in paths]
            continue
        gfile = inputs.file(DATA_DIR, connectivity_path(Path(CONNECTIVITY_DIR), scan), WHAT)
        check_viewpoints(source, paths, load_connectivity(gfile), gfile)
        units.append(WorkUnit(scan, {"paths": [p.to_dict() for p in paths], "graph": str(gfile)}))
    return units, dropped


def select_scenes(
    cfg: IR2RConfig, scenes: dict[str, list[NavPath]], source: Path
) -> dict[str, list[NavPath]]:
    """The scenes ``--scans`` names (all when it names none), in the input's order."""
    if not cfg.scans:
        return scenes
    unknown = [s for s in cfg.scans if s not in scenes]
    if unknown:
        raise UsageError(f"--scans: {', '.join(unknown)} not in {source} (no paths there)")
    return {s: paths for s, paths in scenes.items() if s in cfg.scans}


def check_viewpoints(source: Path, paths: list[NavPath], graph: NavGraph, gfile: Path) -> None:
    for p in paths:
        for v in p.route:
            if v not in graph:
                raise MalformedInputError(
                    f"{source}: path {p.path_id} visits viewpoint {v}, which is not an included "
                    f"viewpoint of {gfile}"
                )


def plan_continuous(cfg: IR2RConfig, inputs: Inputs) -> tuple[list[WorkUnit], dict[str, list[int]]]:
    """Units of an IR2R-CE split from ``--episodes`` (recorded) and ``--scenes-dir``."""
    require_navmesh_backend(cfg.navmesh)
    episodes_file = inputs.file("episodes", "", "VLN-CE episodes")
    scenes = select_scenes(cfg, by_scene(load_vlnce(episodes_file)), episodes_file)
    units, dropped = [], {}
    for scene, paths in scenes.items():
        if len(paths) < cfg.min_paths:
            dropped[scene] = [p.path_id for p in paths]
            continue
        navmesh = inputs.root("scenes-dir") / Path(paths[0].scene_file).with_suffix(".navmesh")
        units.append(
            WorkUnit(scene, {"paths": [p.to_dict() for p in paths], "navmesh": str(navmesh)})
        )
    return units, dropped


def require_navmesh_backend(name: str) -> None:
    """Fail before any work when the continuous oracle's library is missing."""
    if name == "habitat":
        HabitatOracle.require()


# -- one unit ----------------------------------------------------------------------------------


def scene_oracle(cfg: IR2RConfig, params: Mapping[str, Any]) -> GeodesicOracle:
    """The geodesic oracle of one scene: its navigation graph, or its navmesh in CE."""
    if not cfg.continuous:
        return GraphOracle(load_connectivity(Path(params["graph"])))
    return HabitatOracle(Path(params["navmesh"]))


def _position(oracle: GeodesicOracle, point: Any) -> np.ndarray:
    if isinstance(oracle, GraphOracle):
        return oracle.graph.position(point)
    return np.asarray(point, dtype=np.float64)


def produce(cfg: IR2RConfig, unit: WorkUnit, rng: np.random.Generator) -> Iterator[Episode]:
    paths = [NavPath.from_dict(d) for d in unit.params["paths"]]
    oracle = scene_oracle(cfg, unit.params)
    assert cfg.ordering is not None  # IR2RConfig.__post_init__ resolves the split's default
    result = build_scene_tours(
        unit.id,
        paths,
        oracle,
        rng,
        ordering=cfg.ordering,
        solver=cfg.solver,
        min_paths=cfg.min_paths,
        runs=cfg.runs,
        time_limit_s=cfg.exact_time_limit_s,
    )
    scene_paths = {str(p.path_id): len(p.episodes) for p in paths}
    for t, tour in enumerate(result.tours):
        yield Episode(
            id=f"{unit.id}/set-{tour.set_index:02d}/tour-{tour.repetition}",
            arrays={
                "path_id": np.array([p.path_id for p in tour.paths], np.int64),
                "instruction": np.array(tour.instruction, np.int16),
                "transition_m": np.array(tour.transition_m, np.float64),
                "start_position": np.array([_position(oracle, p.start) for p in tour.paths]),
                "end_position": np.array([_position(oracle, p.end) for p in tour.paths]),
            },
            metadata={
                "scene": unit.id,
                "set": tour.set_index,
                "repetition": tour.repetition,
                "ordering": cfg.ordering,
                "episode_ids": tour.episode_ids,
                "episodes_per_path": {str(p.path_id): len(p.episodes) for p in tour.paths},
                "total_m": float(sum(tour.transition_m)),
                "cost_cm": tour.cost_cm,
                "solver": tour.solver,
                "optimal": tour.optimal,
                # Scene-wide facts on the scene's first tour, for the completeness check.
                **(
                    {"scene_paths": scene_paths, "dropped_paths": list(result.dropped)}
                    if t == 0
                    else {}
                ),
            },
        )


# -- the job -----------------------------------------------------------------------------------


def tours_document(ds: Dataset, split: str) -> dict[str, dict[str, list[list[Any]]]]:
    """``{split: {scene: [[episode id, ...], ...]}}`` from a stored tour dataset."""
    scenes: dict[str, list[list[Any]]] = {}
    for ep in ds.episodes():
        meta = ep.metadata
        scenes.setdefault(meta["scene"], []).append(list(meta["episode_ids"]))
    return {split: {s: scenes[s] for s in sorted(scenes)}}


def extras(ds: Dataset) -> dict[str, bytes]:
    """The files beside the shards (registered): the tours file of the dataset's split."""
    return tours_json(ds, str(ds.manifest.config["split"]))


def tours_json(ds: Dataset, split: str) -> dict[str, bytes]:
    """The tours file: plain JSON, one tour per line (diffable, and any JSON reader loads it)."""
    doc = tours_document(ds, split)
    lines = ["{" + json.dumps(split) + ": {"]
    scenes = list(doc[split].items())
    for i, (scene, tours) in enumerate(scenes):
        lines.append(f" {json.dumps(scene)}: [")
        body = [f"  {json.dumps(t)}" for t in tours]
        lines.append(",\n".join(body))
        lines.append(" ]" + ("," if i + 1 < len(scenes) else ""))
    lines.append("}}")
    text = "\n".join(lines) + "\n"
    return {tours_filename(split): text.encode()}


def build_job(cfg: IR2RConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    """Plan the split's units (reading, checking and recording every input), then the job."""
    inputs = inputs if inputs is not None else Inputs()
    require_solver(cfg.solver)
    if cfg.continuous:
        if "episodes" not in inputs or "scenes-dir" not in inputs:
            raise UsageError("--continuous needs --episodes FILE and --scenes-dir DIR")
        units, dropped = plan_continuous(cfg, inputs)
    else:
        if "episodes" in inputs or "scenes-dir" in inputs:
            raise UsageError("--episodes and --scenes-dir are for --continuous (IR2R-CE) only")
        units, dropped = plan_discrete(cfg, inputs)
    if not units:
        raise UsageError(
            f"split {cfg.split}: no scene has at least {cfg.min_paths} paths, so there are no tours"
        )
    notes: tuple[str, ...] = ()
    if dropped:
        n_paths = sum(len(v) for v in dropped.values())
        notes = (
            f"dropped {len(dropped)} scenes with fewer than {cfg.min_paths} paths "
            f"({n_paths} paths): {', '.join(sorted(dropped))}",
        )
    kind = "IR2R-CE" if cfg.continuous else "IR2R"
    return Job(
        pipeline=PIPELINE,
        name=f"{PIPELINE}{'-ce' if cfg.continuous else ''}-{cfg.split}",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(),
        units=tuple(units),
        produce=functools.partial(produce, cfg),
        extra_files=extras,
        description=f"{kind} {cfg.split} tours ({cfg.ordering}): Room-to-Room episodes ordered "
        "into tours by an asymmetric TSP, as in Iterative Vision-and-Language Navigation.",
        license_url="https://github.com/peteanderson80/Matterport3DSimulator",
        url="https://jacobkrantz.github.io/ivln",
        citation=PAPER,
        inputs=inputs,
        notes=notes,
    )
