"""A benchmark registers once with its stages and tools; the command line shows exactly those.

Expectations written by hand from the papers' pipelines (MultiON: episodes then oracle
trajectories; FindingDory: episodes, collected days, tasks; SpaMEM: sequences then questions)
and from the issue: no hidden ``<stage> generate`` command on the public CLI."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from dataforge.cli.main import cli
from dataforge.errors import DataforgeError
from dataforge.registry import Example, InputLocation, Pipeline, registered

PIPELINES = registered()
BENCHMARKS = sorted(n for n, p in PIPELINES.items() if p.stage_of is None)


def test_the_multi_stage_benchmarks_and_their_stages() -> None:
    stages = {n: [s.name for s in PIPELINES[n].stages()] for n in BENCHMARKS}
    assert stages["multion"] == ["multion", "multion-oracle"]
    assert stages["findingdory"] == ["findingdory", "findingdory-collect", "findingdory-tasks"]
    assert stages["spamem"] == ["spamem", "spamem-tasks"]
    for one in ("houses", "ir2r", "robomme", "synthetic"):
        assert stages[one] == [one]
    paths = {n: PIPELINES[n].command_path for n in PIPELINES}
    assert paths["multion-oracle"] == ("multion", "oracle")
    assert paths["findingdory-collect"] == ("findingdory", "collect")
    assert paths["findingdory-tasks"] == ("findingdory", "tasks")
    assert paths["spamem-tasks"] == ("spamem", "tasks")
    assert paths["findingdory"] == ("findingdory", "episodes")
    assert paths["ir2r"] == ("ir2r", "tours")


@pytest.mark.parametrize("name", BENCHMARKS)
def test_a_benchmarks_group_holds_exactly_its_stages_and_tools(name: str) -> None:
    bench = PIPELINES[name]
    group = bench.command_group()
    declared = {s.command for s in bench.stages()} | set(bench.tools)
    assert set(group.commands) == declared, "a command neither a stage nor a declared tool"
    for stage in bench.stages():
        assert stage.generation_command() is group.commands[stage.command]


@pytest.mark.parametrize("name", sorted(n for n, p in PIPELINES.items() if p.stage_of))
def test_a_stage_reads_an_earlier_stage_of_its_benchmark(name: str) -> None:
    stage = PIPELINES[name]
    order = [s.name for s in PIPELINES[stage.benchmark].stages()]
    assert stage.tiny is not None and stage.tiny.reads, "a stage reads the previous stage"
    for location, read in stage.tiny.reads:
        assert PIPELINES[read].benchmark == stage.benchmark
        assert order.index(read) < order.index(name)
        assert location == stage.argument  # `dataforge <benchmark> <stage> DIR`


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_stages_are_not_top_level_commands() -> None:
    top = invoke("--help")
    assert top.exit_code == 0
    for name, p in PIPELINES.items():
        listed = f"  {name} " in top.output
        assert listed == (p.stage_of is None), name
        if p.stage_of is not None:
            r = invoke(name, "--help")
            assert r.exit_code == 2 and "No such command" in r.output, name


def test_a_stages_example_gives_the_dataset_it_reads_as_the_argument(tmp_path: Any) -> None:
    oracle = PIPELINES["multion-oracle"]
    args = oracle.example_args(tmp_path / "out", reads={"multion": "EPISODES"})
    assert args[:2] == ["multion", "oracle"] and args[-1] == "EPISODES"
    assert "--episodes" not in args and "generate" not in args
    with pytest.raises(DataforgeError, match="reads multion's tiny dataset"):
        oracle.example_args(tmp_path / "out")


def _pipeline(**kw: Any) -> Pipeline:
    base: dict[str, Any] = {
        "name": "x",
        "summary": "x",
        "config": PIPELINES["synthetic"].config,
        "build_job": "m:f",
        "tiny": Example("--n 1"),
    }
    return Pipeline(**{**base, **kw})


@pytest.mark.parametrize(
    ("kw", "error"),
    [
        ({}, "a benchmark names its cli group, a stage its stage_of"),
        ({"cli": "m:g", "stage_of": "y"}, "a benchmark names its cli group, a stage its stage_of"),
        ({"stage_of": "y", "tools": ("score",)}, "tools belong to the benchmark"),
        ({"cli": "m:g", "argument": "episodes"}, "argument 'episodes' is no input"),
    ],
)
def test_registrations_that_cannot_be_commands_are_refused(kw: dict[str, Any], error: str) -> None:
    with pytest.raises(DataforgeError, match=error):
        _pipeline(**kw)
    assert _pipeline(stage_of="y", argument="d", inputs=(InputLocation("d", "h"),)).benchmark == "y"
