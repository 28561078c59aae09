"""What ``dataforge ir2r`` commands call: one function per command, no click in here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dataforge.errors import UsageError
from dataforge.pipelines.ir2r.config import IR2RConfig
from dataforge.pipelines.ir2r.generate import build_job, plan_continuous, plan_discrete
from dataforge.progress import Progress
from dataforge.run import ExecutionOptions, RunReport, run_job
from dataforge.tsp import require_solver


@dataclass
class ToursResult:
    report: RunReport
    dropped_scenes: dict[str, list[int]] = field(default_factory=dict)
    config: IR2RConfig | None = None


def generate_tours(
    *,
    split: str,
    out: Path,
    data_dir: Path,
    seed: int,
    fmt: str,
    options: ExecutionOptions,
    ordering: str | None = None,
    solver: str = "elkai",
    runs: int = 3,
    min_paths: int = 2,
    exact_time_limit_s: float = 60.0,
    continuous: bool = False,
    episodes: Path | None = None,
    scenes_dir: Path | None = None,
    navmesh: str = "habitat",
    command: Sequence[str] = (),
    progress: Progress | None = None,
) -> ToursResult:
    """Plan the split's units (reading and checking every input), then run the job."""
    ordering = ordering or IR2RConfig.default_ordering(split)
    base = IR2RConfig(
        split=split,
        ordering=ordering,
        solver=solver,
        runs=runs,
        min_paths=min_paths,
        exact_time_limit_s=exact_time_limit_s,
        continuous=continuous,
        navmesh=navmesh,
    )
    require_solver(solver)
    if continuous:
        if episodes is None or scenes_dir is None:
            raise UsageError("--continuous needs --episodes FILE and --scenes-dir DIR")
        units, facts = plan_continuous(base, episodes, scenes_dir)
    else:
        if episodes is not None or scenes_dir is not None:
            raise UsageError("--episodes and --scenes-dir are for --continuous (IR2R-CE) only")
        units, facts = plan_discrete(base, data_dir)
    if not units:
        raise UsageError(
            f"split {split}: no scene has at least {min_paths} paths, so there are no tours"
        )
    cfg = IR2RConfig(**{**base.to_dict(), "inputs": facts["inputs"]})
    job = build_job(cfg, units, seed=seed, fmt=fmt)
    report = run_job(job, out, options, command=command, progress=progress)
    return ToursResult(report, facts["dropped_scenes"], cfg)


def open_tours(directory: Path) -> Any:
    """Open a dataset written by ``dataforge ir2r tours`` (refusing any other pipeline's)."""
    from dataforge.store import open_dataset

    ds = open_dataset(directory)
    if ds.manifest.pipeline != "ir2r":
        ds.close()
        raise UsageError(
            f"{directory} is a {ds.manifest.pipeline} dataset, not IR2R tours "
            "(make one with 'dataforge ir2r tours')"
        )
    return ds


def split_table(directory: Path) -> dict[str, Any]:
    from dataforge.pipelines.ir2r.table import table1

    with open_tours(directory) as ds:
        return table1(ds)


def plot(
    directory: Path,
    scene: str,
    out: Path,
    *,
    data_dir: Path | None,
    set_index: int = 0,
    repetition: int = 0,
) -> Path:
    """Draw one tour on its scan's navigation graph (read from ``data_dir`` when present)."""
    from dataforge.nav.connectivity import connectivity_path, load_connectivity
    from dataforge.pipelines.ir2r.generate import CONNECTIVITY_DIR
    from dataforge.pipelines.ir2r.plot import plot_tour

    with open_tours(directory) as ds:
        graph = None
        if not ds.manifest.config.get("continuous") and data_dir is not None:
            gfile = connectivity_path(Path(data_dir) / CONNECTIVITY_DIR, scene)
            graph = load_connectivity(gfile) if gfile.is_file() else None
        return plot_tour(ds, scene, out, graph=graph, set_index=set_index, repetition=repetition)


def score(
    *,
    tours_file: Path,
    reference: Path,
    predictions_file: Path,
    data_dir: Path,
    split: str | None = None,
    distance: str = "auto",
    scenes_dir: Path | None = None,
    ndtw_threshold: float = 3.0,
    success_distance: float = 3.0,
) -> Any:
    """Score predictions against a tours file and its reference episodes (see ``score.py``)."""
    import functools

    from dataforge.nav.connectivity import connectivity_path, load_connectivity
    from dataforge.nav.oracle import GraphOracle, HabitatOracle
    from dataforge.pipelines.ir2r import score as sc
    from dataforge.pipelines.ir2r.episodes import load_r2r, load_vlnce
    from dataforge.pipelines.ir2r.generate import CONNECTIVITY_DIR

    name, tours = sc.load_tours(tours_file, split)
    continuous = reference.name.endswith(".gz") or "VLNCE" in reference.name
    paths = load_vlnce(reference) if continuous else load_r2r(reference)
    refs = sc.reference_routes(paths)
    predictions = sc.load_predictions(predictions_file)
    if distance == "auto":
        distance = "habitat" if continuous else "graph"
    if distance == "graph":

        @functools.cache
        def for_scene(scene: str) -> sc.Distance:
            gfile = connectivity_path(Path(data_dir) / CONNECTIVITY_DIR, scene)
            return GraphOracle(load_connectivity(gfile)).distances

    elif distance == "habitat":
        if scenes_dir is None:
            raise UsageError(
                "geodesic scoring needs --scenes-dir with the scenes' navmeshes "
                "(or --distance euclidean, an approximation)"
            )
        scene_files = {p.scene: p.scene_file for p in paths}

        @functools.cache
        def for_scene(scene: str) -> sc.Distance:
            navmesh = Path(scenes_dir) / Path(scene_files[scene]).with_suffix(".navmesh")
            return HabitatOracle(navmesh).distances

    elif distance == "euclidean":

        def for_scene(scene: str) -> sc.Distance:
            return sc.euclidean_distance

    else:
        raise UsageError(f"--distance must be auto, graph, habitat or euclidean, not {distance!r}")
    return sc.score_tours(
        name,
        tours,
        refs,
        predictions,
        for_scene,
        ndtw_threshold=ndtw_threshold,
        success_distance=success_distance,
    )
