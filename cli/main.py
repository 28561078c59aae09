"""The ``dataforge`` entry point: command groups, ``--version``, ``--debug``, exit codes."""

from __future__ import annotations

import importlib
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Sequence

import click

from dataforge._version import __version__
from dataforge.errors import DataforgeError, Interrupted

# The commands every dataset gets; each pipeline's command group comes from its registration
# (dataforge.registry). All are imported only when used (or when --help lists them): their
# modules import nothing heavy at the top.
DATASET_COMMANDS: dict[str, str] = {
    "validate": "dataforge.cli.dataset:validate",
    "inspect": "dataforge.cli.dataset:inspect",
    "stats": "dataforge.cli.dataset:stats",
    "reproduce": "dataforge.cli.reproduce:reproduce",
    "subset": "dataforge.cli.curation:subset",
    "merge": "dataforge.cli.curation:merge",
    "split": "dataforge.cli.curation:split",
    "export": "dataforge.cli.export:export",
    "view": "dataforge.cli.view:view",
}


def lazy_commands() -> dict[str, str]:
    """Command name -> "module:attribute": the dataset commands and every registered benchmark's
    group (a benchmark's further stages are commands in its group: dataforge.registry)."""
    from dataforge.registry import registered

    groups = {name: p.cli for name, p in registered().items() if p.cli is not None}
    return {**DATASET_COMMANDS, **groups}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(lazy_commands()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        commands = lazy_commands()
        if cmd_name in commands:
            module, attr = commands[cmd_name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="dataforge")
@click.option("--debug", is_flag=True, help="Show full tracebacks instead of one-line errors.")
def cli(debug: bool) -> None:
    """dataforge: generate, curate and verify datasets for benchmarking memory in embodied agents.

    Pipeline commands generate datasets (sharded Zarr or HDF5 with a checksummed manifest);
    validate, inspect, stats and reproduce work on any dataset; subset, merge and split curate
    them (the result is a dataset too, its parents recorded). Every command has --help.

    Exit status: 0 success, 1 failed validation or run, 2 bad usage or input, 130 Ctrl-C.
    """


def _quiet_abandoned_tasks() -> None:
    """Ctrl-C can land while zarr waits on its event loop; the abandoned coroutines (writing a
    shard in staging, which a resume discards, or reading) are then reported by asyncio and the
    warnings module at exit. Keep the interrupted command's output to its one line."""
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or bool(os.environ.get("DATAFORGE_DEBUG"))
    if not debug:  # a warning is one line too
        warnings.formatwarning = lambda message, *_a, **_k: f"warning: {_one_line(message)}\n"
    try:
        rv = cli.main(args=args, prog_name="dataforge", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        ctx = getattr(exc, "ctx", None)  # the command context of a click UsageError
        hint = f" (see '{ctx.command_path} --help')" if ctx else ""
        click.echo(f"error: {_one_line(exc.format_message())}{hint}", err=True)
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        _quiet_abandoned_tasks()
        return 130
    except DataforgeError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"error: {_one_line(str(exc))}", err=True)
        if isinstance(exc, Interrupted):
            _quiet_abandoned_tasks()
        return exc.exit_code
    except Exception as exc:  # a bug: one line unless --debug
        if debug:
            traceback.print_exc()
        else:
            click.echo(
                f"internal error: {type(exc).__name__}: {_one_line(str(exc))} "
                "(rerun with --debug for the traceback)",
                err=True,
            )
        return 1


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
