"""Configuration of the houses pipeline (everything that determines its output)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from dataforge.errors import UsageError
from dataforge.world.procgen import SPLITS  # procthor's asset splits


@dataclass(frozen=True)
class HousesConfig:
    count: int = 1
    split: str = "train"  # procthor's asset split
    room_spec: str | None = None  # a ProcTHOR-10K room spec id; None: sampled per house
    max_attempts: int = 10  # seeds tried per house before the run stops
    procthor: str = "unknown"  # version of procthor's generator and databases

    def __post_init__(self) -> None:
        if not isinstance(self.count, int) or self.count < 1:
            raise UsageError(f"--count must be a positive integer, got {self.count!r}")
        if self.split not in SPLITS:
            raise UsageError(f"--split must be one of {', '.join(SPLITS)}, got {self.split!r}")
        if not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise UsageError(f"--max-attempts must be positive, got {self.max_attempts!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
