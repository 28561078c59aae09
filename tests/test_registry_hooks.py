"""Every registered pipeline's checks hooks are annotated with the argument types the registry
declares for them (``dataforge.registry.EpisodeCheck`` ... ``Plot``: a
:class:`~dataforge.store.reader.StoredEpisode`, a :class:`~dataforge.store.reader.Dataset`, a
:class:`~dataforge.stats.DatasetStats`), so the type checker reads each hook's body against the
objects validate, stats and inspect really pass."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest

from dataforge import registry
from dataforge.errors import MissingDependencyError
from dataforge.registry import Hooks, registered
from dataforge.stats import DatasetStats
from dataforge.store.reader import Dataset, StoredEpisode

# what the registry's aliases name only for the type checker
NAMES = {"StoredEpisode": StoredEpisode, "Dataset": Dataset, "DatasetStats": DatasetStats}
HOOKS = ("check_episode", "check_dataset", "stats", "preview_frames", "preview", "plot")


def declared(hook: str) -> list[Any]:
    """The argument types the registry declares for ``hook``."""
    alias = typing.get_type_hints(Hooks, localns=NAMES)[hook]
    (callable_,) = (a for a in typing.get_args(alias) if a is not type(None))
    args = typing.get_args(callable_)
    # Python 3.11 flattens an evaluated Callable's parameter list into its arguments
    return list(args[0]) if isinstance(args[0], list) else list(args[:-1])


def test_the_aliases_name_the_reader_types() -> None:
    assert declared("check_episode") == [StoredEpisode]
    assert declared("check_dataset") == [Dataset]
    assert declared("stats") == [Dataset]
    assert declared("preview_frames") == [StoredEpisode, int]
    assert declared("preview")[0] is StoredEpisode
    assert declared("plot")[0] is DatasetStats


def test_import_registry_stays_light() -> None:
    """The reader types are the registry's for annotations only."""
    assert "Dataset" not in vars(registry) and "StoredEpisode" not in vars(registry)


def loaded_hooks() -> list[tuple[str, str, Callable[..., Any]]]:
    out = []
    for name, pipeline in registered().items():
        try:
            hooks = pipeline.hooks
        except MissingDependencyError:
            continue
        for hook in HOOKS:
            fn = getattr(hooks, hook)
            if fn is not None:
                out.append((name, hook, fn))
    return out


@pytest.mark.parametrize(
    ("pipeline", "hook", "fn"), loaded_hooks(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_hook_annotations_match_the_registry(
    pipeline: str, hook: str, fn: Callable[..., Any]
) -> None:
    params = list(inspect.signature(fn).parameters.values())
    want = declared(hook)
    required = [p for p in params if p.default is inspect.Parameter.empty]
    assert len(required) <= len(want) <= len(params), f"{pipeline}.{hook}: {params}"
    hints = typing.get_type_hints(fn, localns=NAMES)
    got = [hints.get(p.name, Any) for p in params[: len(want)]]
    assert got == want, f"{pipeline}.{hook} takes {got}, the registry declares {want}"


def loaded_extras() -> list[tuple[str, Callable[..., Any]]]:
    out = []
    for name, pipeline in registered().items():
        try:
            fn = pipeline.extras_hook()
        except MissingDependencyError:
            continue
        if fn is not None:
            out.append((name, fn))
    return out


def test_every_pipeline_that_writes_files_beside_its_shards_registers_them() -> None:
    """The pipelines whose jobs write extra files (RoboMME's H5 per task, the IR2R tours
    file, MultiON's challenge files, ...) register the function, so curation makes them
    again; a pipeline that writes none (synthetic, spamem, findingdory episodes) has none."""
    have = {name for name, p in registered().items() if p.extras is not None}
    assert have == {
        "houses",
        "ir2r",
        "robomme",
        "spamem-tasks",
        "multion",
        "multion-oracle",
        "findingdory-collect",
        "findingdory-tasks",
    }


@pytest.mark.parametrize(
    ("pipeline", "fn"), loaded_extras(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_extras_take_the_dataset_alone(pipeline: str, fn: Callable[..., Any]) -> None:
    params = list(inspect.signature(fn).parameters.values())
    assert len(params) == 1, f"{pipeline}.extras takes {params}: the dataset alone"
    assert params[0].annotation in ("Dataset", Dataset), f"{pipeline}.extras: {params[0]}"
