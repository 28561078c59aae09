"""What ``dataforge ir2r`` commands other than ``tours`` call (no click in here); ``tours`` is the
pipeline's generation command (``generate.build_job``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataforge.errors import UsageError

if TYPE_CHECKING:
    from dataforge.pipelines.ir2r.export import Export
    from dataforge.pipelines.ir2r.score import Score
    from dataforge.store.reader import Dataset


def open_tours(directory: Path) -> Dataset:
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
    protocol: str = "ivln",
    allow_offset_start: bool = False,
) -> Score:
    """Score predictions against a tours file and its reference episodes (see ``score.py``;
    ``protocol`` ivln or paper, see ``protocols.py``)."""
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

        @functools.cache
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
        protocol=protocol,
        continuous=continuous,
        allow_offset_start=allow_offset_start,
    )


def export(directories: list[Path], out: Path) -> Export:
    """Merge tours datasets of several splits into the authors' one tours file (``export.py``)."""
    from dataforge.pipelines.ir2r.export import export_tours

    return export_tours(directories, out)
