"""``dataforge reproduce``: rebuild a dataset from its manifest and compare every data file."""

from __future__ import annotations

from pathlib import Path

import click

from dataforge.cli.options import GL_DEVICE, execution_options, executor_options
from dataforge.errors import UsageError


def _locations(values: tuple[str, ...]) -> dict[str, Path]:
    out = {}
    for v in values:
        name, sep, path = (part.strip() for part in v.partition("="))
        if not sep or not name or not path:
            raise UsageError(f"--input takes NAME=PATH (e.g. metadata-dir=/data/meta), got {v!r}")
        out[name] = Path(path)
    return out


@click.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="DATAFORGE_DATA",
    default=None,
    show_envvar=True,
    help="Where the recorded --data-dir inputs are now (default: where the manifest says).",
)
@click.option(
    "--input",
    "inputs",
    multiple=True,
    metavar="NAME=PATH",
    help="Where another recorded input location is now (e.g. metadata-dir=/data/meta); repeatable.",
)
@executor_options
@GL_DEVICE
@click.option(
    "--keep",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Rebuild into this directory and keep it (a rerun resumes there); default: a "
    "temporary directory, removed afterwards.",
)
@click.option("--quiet", is_flag=True, help="No progress output.")
def reproduce(
    directory: Path,
    data_dir: Path | None,
    inputs: tuple[str, ...],
    keep: Path | None,
    quiet: bool,
    **run: object,
) -> None:
    """Rebuild DIRECTORY from what its manifest records (pipeline, config, seed, format and the
    sha256 of every input file) and compare every data file with the rebuild.

    Exit 0 with one line when every data file's sha256 equals the manifest's and the rebuild's;
    1 naming each file that differs (for a shard, the first episode and array that differ);
    2 when an input is missing or changed, or the manifest is not readable.
    """
    from dataforge.errors import ReproductionFailed
    from dataforge.progress import make_progress
    from dataforge.reproduce import reproduce as run_reproduce

    locations = _locations(inputs)
    if data_dir is not None:
        locations["data-dir"] = data_dir
    options = execution_options(dict(run))
    report = run_reproduce(
        directory, locations=locations, options=options, keep=keep, progress=make_progress(quiet)
    )
    for note in report.notes:
        click.echo(f"note: {note}")
    for d in report.differences:
        click.echo(d.line())
    kept = f"; rebuild kept in {report.kept}" if report.kept else ""
    if not report.ok:
        raise ReproductionFailed(
            f"{directory}: {len(report.differences)} of {report.files} data files differ from "
            f"a rebuild{kept}"
        )
    click.echo(
        f"reproduced {directory}: all {report.files} data files are identical (sha256) to a "
        f"fresh {report.pipeline} rebuild{kept}"
    )
