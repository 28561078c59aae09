"""Pipelines register what the shared commands need from them: invariants and statistics.

A pipeline module (``dataforge.pipelines.<name>``) calls :func:`register_pipeline` at import time.
``validate`` and ``stats`` look a dataset's pipeline up by the name its manifest records and import
that module only then, so listing commands never imports a simulator. Hooks receive the dataset
(``dataforge.store.reader.Dataset``) or one stored episode and must not modify anything.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dataforge.errors import DataforgeError

EpisodeCheck = Callable[[Any], Iterable[str]]
DatasetCheck = Callable[[Any], Iterable[tuple[str | None, str]]]
StatsFn = Callable[[Any], "PipelineStats"]
PreviewFrames = Callable[[Any, int], list[int]]


@dataclass(frozen=True)
class PipelineStats:
    """What ``dataforge stats`` shows for a pipeline.

    ``counts``: named numbers (or small tables as nested dicts) for the summary;
    ``distributions``: named lists of numbers drawn as histograms by ``--plot``.
    """

    counts: Mapping[str, Any] = field(default_factory=dict)
    distributions: Mapping[str, list[float]] = field(default_factory=dict)


@dataclass(frozen=True)
class PipelineHooks:
    """Hooks of one pipeline. ``check_episode`` yields one message per broken invariant of an
    episode; ``check_dataset`` yields ``(episode_id or None, message)`` for dataset-wide ones."""

    name: str
    summary: str = ""
    check_episode: EpisodeCheck | None = None
    check_dataset: DatasetCheck | None = None
    stats: StatsFn | None = None
    invariants: tuple[str, ...] = ()
    preview_frames: PreviewFrames | None = None  # which frames 'inspect --preview' shows


_REGISTRY: dict[str, PipelineHooks] = {}
PIPELINES_PACKAGE = "dataforge.pipelines"


def register_pipeline(
    name: str,
    *,
    summary: str = "",
    check_episode: EpisodeCheck | None = None,
    check_dataset: DatasetCheck | None = None,
    stats: StatsFn | None = None,
    invariants: Iterable[str] = (),
    preview_frames: PreviewFrames | None = None,
) -> PipelineHooks:
    hooks = PipelineHooks(
        name=name,
        summary=summary,
        check_episode=check_episode,
        check_dataset=check_dataset,
        stats=stats,
        invariants=tuple(invariants),
        preview_frames=preview_frames,
    )
    _REGISTRY[name] = hooks
    return hooks


def known_pipelines() -> list[str]:
    """Names of the pipeline packages installed under ``dataforge.pipelines``."""
    pkg = importlib.import_module(PIPELINES_PACKAGE)
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.ispkg)


def get_pipeline(name: str) -> PipelineHooks | None:
    """The hooks of pipeline ``name`` (importing its package), or None if no such pipeline."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name not in known_pipelines():
        return None
    try:
        importlib.import_module(f"{PIPELINES_PACKAGE}.{name}")
    except ImportError as exc:
        raise DataforgeError(
            f"pipeline {name!r} cannot be loaded ({exc}); is its extra installed? "
            f"pip install 'dataforge[{name}]'"
        ) from exc
    return _REGISTRY.get(name)
