"""Pipeline configs are the one source of defaults: the generation commands' options come from
their fields, and the config recorded in a manifest rebuilds the same config."""

from __future__ import annotations

import dataclasses
from typing import Any

import click
import pytest

from dataforge.config import PipelineConfig, option, option_flags
from dataforge.errors import UsageError
from dataforge.registry import registered

PIPELINES = registered()


def generation_command(name: str) -> click.Command:
    pipeline = PIPELINES[name]
    assert pipeline.tiny is not None
    group = pipeline.command_group()
    return group.commands[pipeline.tiny.args[0]]


def parsed_config(name: str) -> Any:
    """The config the tiny example's command line makes (parsed by click, as the CLI does)."""
    pipeline = PIPELINES[name]
    command = generation_command(name)
    ctx = command.make_context(command.name, [*pipeline.tiny.args[1:], "--out", "x"])
    fields = {f.name for f in dataclasses.fields(pipeline.config)}
    return pipeline.config(**{k: v for k, v in ctx.params.items() if k in fields})


@pytest.mark.parametrize("name", list(PIPELINES))
def test_every_config_field_option_is_a_command_option_with_the_same_default(name: str) -> None:
    pipeline = PIPELINES[name]
    assert issubclass(pipeline.config, PipelineConfig)
    params = {p.name: p for p in generation_command(name).params}
    for f in pipeline.config.options():
        param = params[f.name]
        assert set(option_flags(f)) <= set(param.opts) | {o.split("/")[0] for o in param.opts}, (
            f.name
        )
        if f.default is dataclasses.MISSING:
            assert param.required
        elif param.default is not None and not isinstance(param.default, str):
            assert param.default == f.default, f.name
        assert param.help == f.metadata["option"].help


@pytest.mark.parametrize("name", list(PIPELINES))
def test_the_recorded_config_rebuilds_the_same_config(name: str) -> None:
    config = parsed_config(name)
    recorded = config.to_dict()
    again = type(config).from_dict(recorded)
    assert again == config and again.to_dict() == recorded


def test_from_dict_refuses_unknown_and_malformed_settings() -> None:
    @dataclasses.dataclass(frozen=True)
    class Demo(PipelineConfig):
        count: int = option(1, "How many.", min=1)
        size: tuple[int, int] = option((2, 3), "Size.")
        name: str | None = option(None, "A name.")
        ratio: float = option(0.5, "A ratio.")

    assert Demo.from_dict({"count": 2, "size": [4, 5], "ratio": 1}) == Demo(2, (4, 5), None, 1.0)
    with pytest.raises(UsageError, match="does not know: sparkle"):
        Demo.from_dict({"sparkle": 1})
    with pytest.raises(UsageError, match=r"count=1\.5 is malformed"):
        Demo.from_dict({"count": 1.5})
    with pytest.raises(UsageError, match=r"size=\[1\] is malformed"):
        Demo.from_dict({"size": [1]})
    with pytest.raises(UsageError, match="name=3 is malformed"):
        Demo.from_dict({"name": 3})
