"""``dataforge view DIR --episode ID --out x.rrd``: an episode as a Rerun recording."""

from __future__ import annotations

from pathlib import Path

import click

from dataforge.cli.options import DATASET


@click.command()
@click.argument("dataset", type=DATASET)
@click.option("--episode", "episode_id", required=True, help="The episode's id.")
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The recording to write (.rrd); open it with the Rerun viewer: rerun x.rrd",
)
@click.option(
    "--every",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Log every N-th row of the episode.",
)
def view(dataset: Path, episode_id: str, out: Path, every: int) -> None:
    """Write one episode of DATASET as a Rerun recording: its images (RGB, depth, instance and
    semantic masks) on the timeline 'frame', the camera's pose, pinhole and path where the
    episode stores poses, its numeric series (actions, states) as plots, its metadata and the
    dataset's manifest sha256 as a document, and what its pipeline adds (docs/curation.md)."""
    from dataforge.outputs import check_apart, check_output_file
    from dataforge.registry import get_pipeline
    from dataforge.store import open_dataset
    from dataforge.viz.rerun_view import require_rerun, write_recording

    check_apart(out, "--out", [dataset])
    check_output_file(out, "--out")
    require_rerun()
    with open_dataset(dataset) as ds:
        if episode_id not in ds:
            some = ", ".join(list(ds)[:3])
            raise click.UsageError(f"no episode {episode_id!r} in {dataset} (it has {some}, ...)")
        pipeline = get_pipeline(ds.manifest.pipeline)
        viewer = None if pipeline is None else pipeline.viewer_hook()
        done = write_recording(ds[episode_id], out, every=every, viewer=viewer)
    click.echo(f"wrote {done['rows']} rows of {episode_id} to {out}; open it with: rerun {out}")
