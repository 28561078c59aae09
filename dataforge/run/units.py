"""Work units and their random streams.

A run is split into units (one house, one scan, one task seed); each unit becomes one shard. A
unit's random stream depends only on the global seed and the unit's id — never on which worker
runs it or in what order — so any executor and any worker count give the same bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dataforge.store.layout import check_unit_id


@dataclass(frozen=True)
class WorkUnit:
    """One unit of work: an id (names its shard) and JSON-able parameters for the pipeline."""

    id: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_unit_id(self.id)


def unit_seed_sequence(seed: int, unit_id: str) -> np.random.SeedSequence:
    """The unit's SeedSequence: the global seed as entropy, a hash of the id as spawn key."""
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    digest = hashlib.sha256(unit_id.encode("utf-8")).digest()
    words = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(entropy=seed, spawn_key=words)


def unit_rng(seed: int, unit_id: str) -> np.random.Generator:
    """A numpy Generator for one unit, independent of execution order."""
    return np.random.Generator(np.random.PCG64(unit_seed_sequence(seed, unit_id)))


def unit_seed(seed: int, unit_id: str) -> int:
    """A 31-bit integer seed for libraries that take ints (simulators), derived the same way."""
    return int(unit_seed_sequence(seed, unit_id).generate_state(1, np.uint32)[0] >> 1)
