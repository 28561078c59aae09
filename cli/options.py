"""Click options: those every generation command shares (parsed into ``ExecutionOptions``), and
those built from a pipeline's config dataclass and input locations."""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import click

from dataforge.config import PipelineConfig, option_flags, option_spec
from dataforge.errors import UsageError
from dataforge.registry import InputLocation
from dataforge.run.options import EXECUTORS, ExecutionOptions
from dataforge.store.layout import FORMATS


def apply_options(
    decorators: list[Callable[..., Any]], f: Callable[..., Any]
) -> Callable[..., Any]:
    """``f`` under ``decorators`` (click options), the first of them outermost (on top)."""
    return functools.reduce(lambda acc, d: d(acc), reversed(decorators), f)


def executor_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--workers, --executor, --ray-address: how units run (generation and reproduce)."""
    return apply_options(
        [
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
        ],
        f,
    )


DATASET = click.Path(exists=True, file_okay=False, path_type=Path)  # a dataset argument
OUT = click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path),
    help="Output dataset directory (created; an unfinished run there resumes).",
)
OVERWRITE = click.option(
    "--overwrite",
    is_flag=True,
    help="Replace a dataset made with another configuration in --out.",
)
DRY_RUN = click.option("--dry-run", is_flag=True, help="Say what would be written; write nothing.")
QUIET = click.option("--quiet", is_flag=True, help="No progress output.")


def _set_gl_device(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check --gl-device (or DATAFORGE_GL_DEVICE) and set the variable before any worker starts:
    spawned workers inherit it, Ray workers get it through the job's runtime env."""
    if value is None:
        return None
    from dataforge.render.device import set_device

    try:
        return set_device(value, source="")  # click's message names the option and variable
    except UsageError as exc:
        raise click.BadParameter(str(exc)) from None


GL_DEVICE = click.option(
    "--gl-device",
    envvar="DATAFORGE_GL_DEVICE",  # dataforge.render.device.ENV
    show_envvar=True,
    default=None,
    metavar="auto|N",
    expose_value=False,
    callback=_set_gl_device,
    help="OpenGL device of the pipelines that render, for every worker: 'auto' (EGL's first "
    "device: usually a GPU's where there is one, else Mesa's llvmpipe) or an EGL device index. "
    "Left unset on a Ray cluster, each node's own DATAFORGE_GL_DEVICE holds.",
)


def generation_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--out, --seed, --format, --workers, --executor, --ray-address, --gl-device, --overwrite,
    --dry-run, --quiet."""
    return apply_options(
        [
            OUT,
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
            executor_options,
            GL_DEVICE,
            OVERWRITE,
            DRY_RUN,
            QUIET,
        ],
        f,
    )


def output_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--out, --workers, --executor, --ray-address, --overwrite, --dry-run, --quiet: a command
    that writes a dataset from others (dataforge subset, merge, split)."""
    return apply_options([OUT, executor_options, OVERWRITE, DRY_RUN, QUIET], f)


def execution_options(kwargs: dict[str, Any]) -> ExecutionOptions:
    """Pop the shared execution options from a command's kwargs (``--overwrite`` and
    ``--dry-run`` only where the command has them)."""
    return ExecutionOptions(
        workers=kwargs.pop("workers"),
        executor=kwargs.pop("executor"),
        ray_address=kwargs.pop("ray_address"),
        overwrite=kwargs.pop("overwrite", False),
        dry_run=kwargs.pop("dry_run", False),
    )


# -- options from a pipeline's config dataclass ------------------------------------------------


def config_option(config_cls: type, f: dataclasses.Field) -> Callable[[Callable[..., Any]], Any]:
    """The click option of one config field (see ``dataforge.config.option``): its flags, help,
    default and type all come from the field."""
    spec = option_spec(f)
    if spec is None:
        raise TypeError(f"{config_cls.__name__}.{f.name} is not declared with option()")
    flags = option_flags(f)
    hint = typing.get_type_hints(config_cls)[f.name]
    inner = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    base = inner[0] if len(inner) == 1 else None
    default = f.default
    kw: dict[str, Any] = {"help": spec.help, "metavar": spec.metavar}
    ranged = spec.min is not None or spec.max is not None
    if spec.parse is not None:
        parse = spec.parse

        def convert(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
            if not isinstance(value, str):
                return value
            try:
                return parse(value)
            except (UsageError, ValueError) as exc:
                raise click.BadParameter(str(exc)) from None

        kw.update(type=str, callback=convert)
        if default is not None and default is not dataclasses.MISSING:
            kw["default"] = spec.show(default) if spec.show else str(default)
    elif base is bool:
        if default:
            flags = (f"{flags[0]}/--no-{flags[0].lstrip('-')}", *flags[1:])
        kw.update(is_flag=True, default=bool(default))
    elif spec.choices is not None:
        kw.update(type=click.Choice([str(c) for c in spec.choices]), default=default)
    elif base is int:
        low, high = cast("int | None", spec.min), cast("int | None", spec.max)  # int limits
        kw.update(type=click.IntRange(low, high) if ranged else int, default=default)
    elif base is float:
        kw.update(type=click.FloatRange(spec.min, spec.max) if ranged else float, default=default)
    else:
        kw["default"] = default
    if default is dataclasses.MISSING:
        kw.pop("default", None)
        kw["required"] = True
    elif default is not None and base is not bool:
        kw["show_default"] = True
    return click.option(*flags, f.name, **kw)


def config_options(
    config_cls: type[PipelineConfig],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Every option field of ``config_cls`` as click options, in declaration order."""

    def apply(fn: Callable[..., Any]) -> Callable[..., Any]:
        for f in reversed(config_cls.options()):
            fn = config_option(config_cls, f)(fn)
        return fn

    return apply


def input_options(
    locations: Sequence[InputLocation], argument: str | None = None
) -> Callable[[Callable[..., Any]], Any]:
    """``--<location>`` path options of a pipeline's declared input locations (but the one
    named ``argument``, which the command takes as its argument)."""

    def apply(fn: Callable[..., Any]) -> Callable[..., Any]:
        for loc in reversed(locations):
            if loc.name == argument:
                continue
            fn = click.option(
                f"--{loc.name}",
                loc.param,
                type=click.Path(
                    path_type=Path, dir_okay=loc.file is not True, file_okay=loc.file is not False
                ),
                envvar=loc.envvar,
                show_envvar=loc.envvar is not None,
                default=loc.default,
                show_default=loc.default is not None,
                help=loc.help,
            )(fn)
        return fn

    return apply
