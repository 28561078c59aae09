"""Commands every dataset gets: ``validate``, ``inspect``, ``stats``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dataforge.errors import ValidationFailed


@click.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--deep", is_flag=True, help="Decode every row of every array (slower).")
@click.option("--quiet", is_flag=True, help="No progress output.")
def validate(directory: Path, as_json: bool, deep: bool, quiet: bool) -> None:
    """Check DIRECTORY: sha256 and size of every file, missing/extra files, schema, every
    episode, and the invariants its pipeline registers. Exit 0 if all hold, 1 otherwise."""
    from dataforge.progress import make_progress
    from dataforge.validation import validate as run_validate

    report = run_validate(directory, deep=deep, progress=make_progress(quiet or as_json))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=1))
    else:
        for note in report.notes:
            click.echo(f"note: {note}")
        for p in report.problems:
            click.echo(p.line())
        c = report.checked
        if report.ok:
            inv = len(c.get("invariants", []))
            click.echo(
                f"OK {directory}: {c.get('episodes', 0)} episodes in {c.get('shards', 0)} "
                f"shards, {c.get('files', 0)} files sha256-verified"
                + (f", {inv} {c.get('pipeline')} invariants hold" if inv else "")
            )
    if not report.ok:
        raise ValidationFailed(f"{directory}: {len(report.problems)} problems found")


@click.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--episode", "episode_id", default=None, help="Show this episode's arrays.")
@click.option(
    "--preview",
    type=click.Path(path_type=Path),
    default=None,
    help="Write a contact sheet PNG of the episode's images (first episode by default).",
)
@click.option(
    "--frames",
    type=click.IntRange(min=1, max=32),
    default=4,
    show_default=True,
    help="Frames per array in the preview.",
)
@click.option(
    "--step",
    type=click.IntRange(min=0),
    default=None,
    help="For pipelines whose episodes are steps seen from several views (spamem): the step "
    "to preview (default: the first action).",
)
def inspect(
    directory: Path, episode_id: str | None, preview: Path | None, frames: int, step: int | None
) -> None:
    """Summarise DIRECTORY: what it is, how it was made, its arrays; optionally one episode and a
    preview image."""
    from rich.console import Console

    from dataforge.errors import UsageError
    from dataforge.outputs import check_output_file
    from dataforge.store import open_dataset
    from dataforge.viz.preview import write_preview
    from dataforge.viz.tables import dataset_table, episode_table, schema_table

    if preview is not None:  # before any work: a bad path is one line, not a late traceback
        check_output_file(preview, "--preview", inputs=[directory])
    console = Console()
    with open_dataset(directory) as ds:
        eid = None
        if episode_id is not None or preview is not None:
            eid = episode_id if episode_id is not None else next(iter(ds.episode_ids), None)
            if eid is None:
                raise UsageError(f"{directory} holds no episodes to preview")
            if eid not in ds:
                raise UsageError(
                    f"no episode {eid!r} in {directory} (see 'dataforge inspect {directory}' "
                    "for ids)"
                )
            _ = ds[eid].metadata  # opens its shard: a refusal comes before any output
        console.print(dataset_table(ds))
        console.print(schema_table(ds.schema))
        if eid is None:
            ids = ds.episode_ids
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            console.print(f"episodes: {shown}")
            return
        ep = ds[eid]
        console.print(episode_table(ep))
        meta = json.dumps(ep.metadata, sort_keys=True)
        console.print(f"metadata: {meta[:800]}{' ...' if len(meta) > 800 else ''}", markup=False)
        if preview is not None:
            from dataforge.registry import get_pipeline

            pipeline = get_pipeline(ds.manifest.pipeline)
            hooks = pipeline.hooks if pipeline is not None else None
            if hooks is not None and hooks.preview is not None:
                hooks.preview(ep, preview, step)
            else:
                choose = hooks.preview_frames if hooks is not None else None
                chosen = choose(ep, frames) if choose is not None else None
                try:
                    write_preview(ep, preview, frames=frames, indices=chosen)
                except ValueError as exc:
                    raise UsageError(str(exc)) from None
            console.print(f"preview written to {preview}")


@click.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@click.option(
    "--plot",
    type=click.Path(path_type=Path),
    default=None,
    help="Write histograms of the distributions to this PNG.",
)
def stats(directory: Path, as_json: bool, plot: Path | None) -> None:
    """Counts and distributions of DIRECTORY (generic, plus those its pipeline defines)."""
    from rich.console import Console

    from dataforge.outputs import check_output_file
    from dataforge.stats import compute_stats
    from dataforge.store import open_dataset
    from dataforge.viz.tables import stats_table

    if plot is not None:  # before any work: a bad path is one line, not a late traceback
        check_output_file(plot, "--plot", inputs=[directory])
    with open_dataset(directory) as ds:
        result = compute_stats(ds)
    summary = result.to_dict()
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        Console().print(stats_table(summary))
    if plot is not None:
        from dataforge.registry import get_pipeline
        from dataforge.viz.plots import plot_distributions

        pipeline = get_pipeline(summary["dataset"]["pipeline"])
        if pipeline is not None and pipeline.hooks.plot is not None:
            pipeline.hooks.plot(result, plot)
        else:
            plot_distributions(result.distributions, plot, title=summary["dataset"]["name"])
        if not as_json:
            click.echo(f"plot written to {plot}")
