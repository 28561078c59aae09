"""Options that every generation command shares, parsed into ``ExecutionOptions``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dataforge.run.options import EXECUTORS, ExecutionOptions
from dataforge.store.layout import FORMATS


def generation_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--out, --seed, --format, --workers, --executor, --ray-address, --overwrite, --dry-run,
    --quiet."""
    decorators = [
        click.option(
            "--out",
            "out",
            required=True,
            type=click.Path(path_type=Path),
            help="Output dataset directory (created; an unfinished run there resumes).",
        ),
        click.option(
            "--seed",
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            help="Global seed; each unit's stream derives from it and the unit id.",
        ),
        click.option(
            "--format",
            "fmt",
            type=click.Choice(FORMATS),
            default="zarr",
            show_default=True,
            help="Shard format: Zarr v3 (sharded) or HDF5.",
        ),
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            default=1,
            show_default=True,
            help="Parallel worker processes (or CPUs of a local Ray instance).",
        ),
        click.option(
            "--executor",
            type=click.Choice(EXECUTORS),
            default="local",
            show_default=True,
            help="Run units in local processes or on Ray.",
        ),
        click.option(
            "--ray-address",
            default=None,
            help="Ray cluster to join ('auto' or host:port); needs --executor ray.",
        ),
        click.option(
            "--overwrite",
            is_flag=True,
            help="Replace a dataset made with another configuration in --out.",
        ),
        click.option("--dry-run", is_flag=True, help="Say what would be generated; write nothing."),
        click.option("--quiet", is_flag=True, help="No progress output."),
    ]
    return functools.reduce(lambda acc, d: d(acc), reversed(decorators), f)


def execution_options(kwargs: dict[str, Any]) -> ExecutionOptions:
    """Pop the shared execution options from a command's kwargs."""
    return ExecutionOptions(
        workers=kwargs.pop("workers"),
        executor=kwargs.pop("executor"),
        ray_address=kwargs.pop("ray_address"),
        overwrite=kwargs.pop("overwrite"),
        dry_run=kwargs.pop("dry_run"),
    )


def data_dir_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--data-dir (env DATAFORGE_DATA, default ./data): external inputs, laid out like
    ``../shared/data/`` (``r2r/``, ``mp3d_connectivity/``, ...)."""
    return click.option(
        "--data-dir",
        type=click.Path(path_type=Path, file_okay=False),
        envvar="DATAFORGE_DATA",
        default=Path("data"),
        show_default=True,
        show_envvar=True,
        help="Directory of external inputs, laid out like the project's shared data "
        "(r2r/, mp3d_connectivity/, ...).",
    )(f)
