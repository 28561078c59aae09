"""The one shape of every generation command: options -> config -> job -> run -> report.

A pipeline's click group adds its generation command with :func:`generation_command`; the
options come from the pipeline's config dataclass (defaults and help written once, in the
config), its declared input locations, and the options every run shares::

    synthetic.add_command(generation_command(PIPELINE, help="Generate ... into --out."))
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dataforge.cli.options import (
    config_options,
    execution_options,
    generation_options,
    input_options,
)
from dataforge.cli.report import echo_run_report
from dataforge.registry import Pipeline

# after(report, job): what a pipeline prints beyond the run report (e.g. IR2R's Table 1 row)
After = Callable[[Any, Any], None]


def generation_command(
    pipeline: Pipeline,
    *,
    help: str,
    after: After | None = None,
) -> click.Command:
    """The generation command of ``pipeline`` (named ``pipeline.command`` in its benchmark's
    group): parse the options into its config, build its job (reading and recording the
    inputs), run it into ``--out``, print the report. ``pipeline.argument``: an input location
    given as the command's argument instead of an option (e.g. the dataset a stage works on:
    ``dataforge multion oracle DIR``)."""
    name, argument = pipeline.command, pipeline.argument

    def command(**kw: Any) -> None:
        from dataforge.inputs import Inputs
        from dataforge.progress import make_progress
        from dataforge.run import run_job

        options = execution_options(kw)
        out, seed, fmt, quiet = kw.pop("out"), kw.pop("seed"), kw.pop("fmt"), kw.pop("quiet")
        inputs = Inputs({loc.name: kw.pop(loc.param) for loc in pipeline.inputs})
        config = pipeline.config(**kw)
        job = pipeline.job(config, seed=seed, fmt=fmt, inputs=inputs)
        report = run_job(
            job,
            out,
            options,
            command=["dataforge", *sys.argv[1:]],
            progress=make_progress(quiet),
        )
        echo_run_report(report)
        if not report.dry_run:
            for note in job.notes:
                click.echo(note)
        if after is not None:
            after(report, job)

    command.__doc__ = help
    # click lists the options of the outermost decorator first: the pipeline's own first
    decorated = config_options(pipeline.config)(
        input_options(pipeline.inputs, argument=argument)(generation_options(command))
    )
    if argument is not None:
        loc = next(loc for loc in pipeline.inputs if loc.name == argument)
        decorated = click.argument(
            loc.param, metavar=loc.name.upper(), type=click.Path(path_type=Path)
        )(decorated)
    return click.command(name, help=help)(decorated)
