"""How a run executes (not what it produces): never part of the config hash."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dataforge.errors import UsageError

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class ExecutionOptions:
    """``workers``: local processes (1 = in this process); ``executor``: local or ray;
    ``ray_address``: an existing Ray cluster (``auto`` or ``host:port``), else a local one."""

    workers: int = 1
    executor: str = "local"
    ray_address: str | None = None
    overwrite: bool = False
    dry_run: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.workers, int) or self.workers < 1:
            raise UsageError(f"--workers must be at least 1, got {self.workers!r}")
        if self.executor not in EXECUTORS:
            raise UsageError(
                f"unknown executor {self.executor!r}: choose one of {', '.join(EXECUTORS)}"
            )
        if self.ray_address and self.executor != "ray":
            raise UsageError("--ray-address needs --executor ray")

    def to_dict(self) -> dict[str, Any]:
        return {"workers": self.workers, "executor": self.executor, "ray_address": self.ray_address}
