"""Configuration of IR2R tour generation (everything that determines the output)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from dataforge.errors import UsageError
from dataforge.pipelines.ir2r.tours import ORDERINGS
from dataforge.tsp import SOLVERS

SPLITS = ("train", "val_seen", "val_unseen", "test")
NAVMESH_BACKENDS = ("habitat",)


@dataclass(frozen=True)
class IR2RConfig:
    """``inputs`` maps each input file (relative name) to its sha256, so a rerun over changed
    inputs is refused as a different configuration rather than silently mixed."""

    split: str
    ordering: str = "tip-to-tail"
    solver: str = "elkai"
    runs: int = 3
    min_paths: int = 2
    exact_time_limit_s: float = 60.0
    continuous: bool = False
    navmesh: str = "habitat"
    inputs: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_]+", self.split):
            raise UsageError(f"--split must be letters, digits or '_', got {self.split!r}")
        if self.ordering not in ORDERINGS:
            raise UsageError(f"--ordering must be one of {', '.join(ORDERINGS)}")
        if self.solver not in SOLVERS:
            raise UsageError(f"--solver must be one of {', '.join(SOLVERS)}")
        if self.runs < 1:
            raise UsageError(f"--runs must be at least 1, got {self.runs}")
        if self.min_paths < 1:
            raise UsageError(f"--min-paths must be at least 1, got {self.min_paths}")
        if self.exact_time_limit_s <= 0:
            raise UsageError("--exact-time-limit must be positive")
        if self.navmesh not in NAVMESH_BACKENDS:
            raise UsageError(f"--navmesh must be one of {', '.join(NAVMESH_BACKENDS)}")

    @staticmethod
    def default_ordering(split: str) -> str:
        """The test split has no goals, so its tours are tip-to-tip (the paper's appendix)."""
        return "tip-to-tip" if split == "test" else "tip-to-tail"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
