"""IR2R: Room-to-Room episodes ordered into tours (Iterative Vision-and-Language Navigation).

See ``generate.py`` for inputs, seeds, outputs and invariants; ``score.py`` for t-nDTW.
"""

from dataforge.pipelines.ir2r.config import IR2RConfig
from dataforge.registry import Example, InputLocation, Pipeline, register

PIPELINE = register(
    Pipeline(
        name="ir2r",
        summary="Iterative Room-to-Room tours (ATSP-ordered R2R episodes)",
        config=IR2RConfig,
        build_job="dataforge.pipelines.ir2r.generate:build_job",
        extras="dataforge.pipelines.ir2r.generate:extras",
        cli="dataforge.pipelines.ir2r.cli:ir2r",
        command="tours",
        tools=("stats", "plot", "score", "export"),
        checks="dataforge.pipelines.ir2r.checks",
        inputs=(
            InputLocation(
                "data-dir",
                "Directory of external inputs, laid out like the project's shared data "
                "(r2r/R2R_<split>.json, mp3d_connectivity/<scan>_connectivity.json).",
                envvar="DATAFORGE_DATA",
                default="data",
            ),
            InputLocation(
                "episodes",
                "--continuous: the VLN-CE episodes file, e.g. R2R_VLNCE_v1-3_preprocessed/"
                "val_seen/val_seen.json.gz.",
                file=True,
            ),
            InputLocation(
                "scenes-dir",
                "--continuous: scene datasets root holding mp3d/<scan>/<scan>.navmesh.",
            ),
        ),
        tiny=Example(
            "--split val_seen --scans 17DRP5sb8fy,EDJbREhghzL",
            data=(
                "r2r/R2R_val_seen.json",
                "mp3d_connectivity/17DRP5sb8fy_connectivity.json",
                "mp3d_connectivity/EDJbREhghzL_connectivity.json",
            ),
        ),
    )
)
