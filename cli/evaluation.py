"""The options of every ``<benchmark> evaluate`` command (asking a model on an OpenAI-compatible
server), built from :class:`dataforge.llm.evaluate.EvalDefaults` so that each default is stated
once, and parsed into an :class:`~dataforge.llm.evaluate.EvalRun`::

    @spamem.command()
    @click.argument("tasks_dir", type=click.Path(file_okay=False))
    @evaluation_options(out_help="Predictions JSONL ({id, answer, ...}).", data_root_help="...")
    @click.option("--max-images", ...)                 # the benchmark's own options
    def evaluate(tasks_dir, **kw):
        run = evaluation_run(kw, inputs=[tasks_dir])   # pops the shared options from kw
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any

import click

from dataforge.cli.options import apply_options
from dataforge.llm.evaluate import EvalDefaults, EvalRun


def evaluation_options(
    *, out_help: str, data_root_help: str, defaults: EvalDefaults | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--llm-url, --llm-model, --out, --workers, --rate, --retries, --timeout, --max-tokens,
    --data-root, --quiet. ``out_help``: what one record holds; ``data_root_help``: which
    dataset the frames come from; ``defaults``: the benchmark's (only where upstream says)."""

    defaults = defaults or EvalDefaults()

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        return apply_options(
            [
                click.option(
                    "--llm-url",
                    required=True,
                    help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1.",
                ),
                click.option("--llm-model", required=True, help="Model name the server serves."),
                click.option(
                    "--out",
                    required=True,
                    type=click.Path(dir_okay=False),
                    help=f"{out_help} An existing file is resumed.",
                ),
                click.option(
                    "--workers",
                    type=click.IntRange(min=1),
                    default=defaults.workers,
                    show_default=True,
                    help="Requests in flight at once.",
                ),
                click.option(
                    "--rate",
                    type=click.FloatRange(min=0, min_open=True),
                    default=None,
                    help="At most R requests per second over all workers (default: no limit).",
                ),
                click.option(
                    "--retries",
                    type=click.IntRange(min=0),
                    default=defaults.retries,
                    show_default=True,
                    help="Retries of a request that timed out, lost its connection or got "
                    "HTTP 5xx or 429.",
                ),
                click.option(
                    "--timeout",
                    type=click.FloatRange(min=0, min_open=True),
                    default=defaults.timeout_s,
                    show_default=True,
                    help="Seconds to wait for one reply.",
                ),
                click.option(
                    "--max-tokens",
                    type=click.IntRange(min=1),
                    default=defaults.max_tokens,
                    show_default=True,
                    help=f"Answer length limit ({defaults.max_tokens_note}).",
                ),
                click.option(
                    "--data-root",
                    type=click.Path(file_okay=False),
                    default=None,
                    help=f"{data_root_help} It must be the one the tasks recorded (its "
                    "manifest's sha256).",
                ),
                click.option("--quiet", is_flag=True, help="No progress output."),
            ],
            f,
        )

    return decorate


def evaluation_run(
    kw: MutableMapping[str, Any], *, inputs: Iterable[Path | str | None] = ()
) -> EvalRun:
    """Pop the shared options from ``kw`` (``data_root`` stays: the benchmark reads it) and
    check that ``--out`` can be written apart from ``inputs`` (and ``--data-root``)."""
    from dataforge.llm.client import LLMSettings
    from dataforge.outputs import check_output_file

    out = check_output_file(str(kw.pop("out")), "--out", inputs=[*inputs, kw.get("data_root")])
    settings = LLMSettings(
        url=str(kw.pop("llm_url")),
        model=str(kw.pop("llm_model")),
        timeout_s=float(kw.pop("timeout")),
        max_tokens=int(kw.pop("max_tokens")),
    )
    return EvalRun(
        settings,
        out,
        workers=int(kw.pop("workers")),
        rate=kw.pop("rate"),
        retries=int(kw.pop("retries")),
        quiet=bool(kw.pop("quiet")),
    )
