"""An episode as pipelines produce it, and where a committed episode lives."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dataforge.store.layout import check_episode_id


def check_metadata(metadata: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Metadata must be strict JSON (no NaN/inf, string keys); return a plain-dict copy."""
    try:
        return json.loads(json.dumps(dict(metadata), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: metadata is not JSON-serialisable: {exc}") from None


@dataclass(frozen=True)
class Episode:
    """One episode: named arrays (all sharing the schema) plus JSON-serialisable metadata.

    A long episode may stream its rows: ``blocks`` yields mappings of array names to more rows,
    appended after ``arrays`` (which then holds zero-row arrays, or the first rows, and every
    fixed-size array whole), so that one block at a time is in memory. ``metadata`` may then be
    a callable, called once the blocks are written (what the episode learnt on the way)."""

    id: str
    arrays: Mapping[str, np.ndarray]
    metadata: Mapping[str, Any] | Callable[[], Mapping[str, Any]] = field(default_factory=dict)
    blocks: Iterable[Mapping[str, np.ndarray]] | None = None

    def __post_init__(self) -> None:
        check_episode_id(self.id)


@dataclass(frozen=True)
class EpisodeLocation:
    """Where a committed episode lives: its shard (path relative to the dataset root) and, per
    array, the rows ``[start, stop)`` it occupies there."""

    id: str
    unit: str
    shard: str
    rows: Mapping[str, tuple[int, int]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "shard": self.shard,
            "rows": {k: [int(a), int(b)] for k, (a, b) in self.rows.items()},
        }

    @classmethod
    def from_dict(cls, episode_id: str, d: Mapping[str, Any]) -> EpisodeLocation:
        rows = {}
        for name, span in d["rows"].items():
            a, b = span
            if not (isinstance(a, int) and isinstance(b, int) and 0 <= a <= b):
                raise ValueError(f"episode {episode_id!r}: bad rows {span!r} for array {name!r}")
            rows[name] = (a, b)
        return cls(id=episode_id, unit=str(d["unit"]), shard=str(d["shard"]), rows=rows)
