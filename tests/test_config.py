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
    return PIPELINES[name].generation_command()


def parsed_config(name: str) -> Any:
    """The config the tiny example's command line makes (parsed by click, as the CLI does)."""
    pipeline = PIPELINES[name]
    command = generation_command(name)
    assert pipeline.tiny is not None
    given = [f"{loc}-dir" for loc, _ in pipeline.tiny.reads if loc == pipeline.argument]
    ctx = command.make_context(command.name, [*pipeline.tiny.args, *given, "--out", "x"])
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


# -- declared limits, enforced in one place ------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Limited(PipelineConfig):
    count: int = option(2, "A count.", min=1, max=5)
    scale: float = option(0.5, "A scale.", min=0.0)
    mode: str = option("a", "A mode.", choices=("a", "b"))
    cap: int | None = option(None, "Computed when None.", min=1)

    def __post_init__(self) -> None:
        if self.count == 4:  # a rule the declarations cannot say, checked after them
            raise UsageError("--count 4 is reserved")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"count": 0}, "--count must be in [1, 5], got 0"),
        ({"count": 6}, "--count must be in [1, 5], got 6"),
        ({"count": 2.5}, "--count must be an integer, got 2.5"),
        ({"count": True}, "--count must be a number, got True"),
        ({"scale": -0.1}, "--scale must be at least 0, got -0.1"),
        ({"mode": "c"}, "--mode must be one of a, b, got 'c'"),
        ({"cap": 0}, "--cap must be at least 1, got 0"),
        ({"count": 4}, "--count 4 is reserved"),
    ],
)
def test_declared_limits_are_checked_before_the_configs_own_rules(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError) as e:
        Limited(**changes)
    assert str(e.value) == message
    assert Limited(cap=None).cap is None and Limited(count=5, scale=0.0, mode="b").count == 5


def _outside(f: dataclasses.Field) -> list[Any]:
    """Values just outside a field's declared limits."""
    from dataforge.config import option_spec

    spec = option_spec(f)
    assert spec is not None
    out: list[Any] = []
    if spec.choices is not None:
        out.append("no-such-choice")
    if spec.min is not None:
        out.append(spec.min - 1)
    if spec.max is not None:
        out.append(spec.max + 1)
    return out


@pytest.mark.parametrize("name", list(PIPELINES))
def test_every_declared_limit_is_enforced_by_the_config(name: str) -> None:
    """No limit lives only in --help: a value outside any declared choice or range is refused
    by the config itself (from Python or a manifest, not just the command line), naming the
    option."""
    pipeline = PIPELINES[name]
    base = parsed_config(name)
    checked = 0
    for f in pipeline.config.options():
        for value in _outside(f):
            with pytest.raises(UsageError, match=option_flags(f)[0]):
                dataclasses.replace(base, **{f.name: value})
            with pytest.raises(UsageError, match=option_flags(f)[0]):
                pipeline.config.from_dict({**base.to_dict(), f.name: value})
            checked += 1
    assert checked, f"{name} declares no limits"
