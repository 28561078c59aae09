"""The configuration a command line builds, without running it: for tests that pin defaults
(the papers' constants, issue 35)."""

from __future__ import annotations

from typing import Any

import click
import pytest
from click.testing import CliRunner

from dataforge.registry import Pipeline


class _Built(Exception):
    """Raised instead of building the job: carries the config the command made."""

    def __init__(self, config: Any) -> None:
        super().__init__("config built")
        self.config = config


def cli_config(command: click.Command, *args: str) -> Any:
    """The config that ``command`` builds from ``args`` and its defaults, as a real run does
    (``Pipeline.job`` is intercepted, so nothing runs; ``--out`` is added)."""

    def capture(self: Pipeline, config: Any, **kw: Any) -> Any:
        raise _Built(config)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Pipeline, "job", capture)
        result = CliRunner().invoke(command, [*args, "--out", "unused"])
    assert isinstance(result.exception, _Built), result.output
    return result.exception.config
