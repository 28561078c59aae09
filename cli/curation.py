"""``dataforge subset``, ``merge`` and ``split``: curated datasets (dataforge.curate)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from dataforge.cli.options import DATASET, execution_options, output_options
from dataforge.cli.report import echo_run_report


def _run(job: Any, out: Path, kw: dict[str, Any]) -> None:
    from dataforge.progress import make_progress
    from dataforge.run import run_job

    options = execution_options(kw)
    report = run_job(
        job, out, options, command=["dataforge", *sys.argv[1:]], progress=make_progress(kw["quiet"])
    )
    echo_run_report(report)


WHERE_HELP = (
    "Which episodes to keep: fields (id, unit, length, any metadata field, nested with dots: "
    "origin.scene_id), literals, == != < <= > >=, in / not in [..], and / or / not. "
    "Example: 'task == \"BinFill\" and length < 300'."
)


@click.command()
@click.argument("dataset", type=DATASET)
@click.option("--where", "where", required=True, help=WHERE_HELP)
@output_options
def subset(dataset: Path, where: str, out: Path, **kw: Any) -> None:
    """Write the episodes of DATASET that --where keeps into --out: a dataset like any other
    (shards, manifest, Croissant; 'dataforge validate' runs the pipeline's checks), whose
    manifest records DATASET (path and manifest sha256) and the expression, so that
    'dataforge reproduce' makes it again from DATASET."""
    from dataforge.curate.plan import subset_job
    from dataforge.progress import make_progress

    job = subset_job(dataset, where, make_progress(kw["quiet"]))
    _run(job, out, kw)


@click.command()
@click.argument("datasets", nargs=-1, required=True, type=DATASET)
@click.option(
    "--rename",
    is_flag=True,
    help="Rename an episode id that an earlier dataset has to <id>-p<k> (k: the dataset's "
    "position, from 1) instead of refusing the merge.",
)
@output_options
def merge(datasets: tuple[Path, ...], rename: bool, out: Path, **kw: Any) -> None:
    """Write the episodes of two or more DATASETS (e.g. the outputs of several machines or
    seeds) into one dataset in --out. They must share pipeline, format version, shard format,
    arrays and config (seeds may differ): one line names the first difference otherwise.
    A unit id an earlier dataset has becomes <unit>-p<k>."""
    from dataforge.curate.plan import merge_job

    _run(merge_job(list(datasets), rename=rename), out, kw)


@click.command()
@click.argument("dataset", type=DATASET)
@click.option(
    "--by",
    required=True,
    help="The field whose values stay together (house, scene, task, unit, any --where field).",
)
@click.option(
    "--fractions",
    required=True,
    help="Parts and their shares of the episodes, e.g. train=0.9,val=0.1 (each part is a "
    "folder under --out).",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Shuffles the groups."
)
@output_options
def split(dataset: Path, by: str, fractions: str, seed: int, out: Path, **kw: Any) -> None:
    """Split DATASET into parts (--out/<part>) with no value of --by in two parts: the
    groups are shuffled with --seed and each goes to the part furthest below its fraction of
    the episodes. Each part is a dataset whose manifest records DATASET and the split."""
    from dataforge.curate.plan import split_jobs
    from dataforge.progress import make_progress

    jobs = split_jobs(
        dataset, by=by, fractions=fractions, seed=seed, progress=make_progress(kw["quiet"])
    )
    for name, job in jobs.items():
        _run(job, out / name, dict(kw))
