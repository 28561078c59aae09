"""What ``dataforge houses generate`` calls (no click in here)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dataforge.errors import UsageError
from dataforge.pipelines.houses.config import HousesConfig
from dataforge.pipelines.houses.generate import build_job
from dataforge.progress import Progress
from dataforge.run import ExecutionOptions, RunReport, run_job


def generate_houses(
    *,
    count: int,
    out: Path,
    seed: int,
    fmt: str,
    options: ExecutionOptions,
    split: str = "train",
    room_spec: str | None = None,
    max_attempts: int = 10,
    command: Sequence[str] = (),
    progress: Progress | None = None,
) -> RunReport:
    """Check that procthor's generator is importable (and the room spec known), then run."""
    from dataforge.world.assets import load_catalogue
    from dataforge.world.procgen import require_generator, room_spec_ids

    require_generator()
    if room_spec is not None and room_spec not in room_spec_ids():
        raise UsageError(
            f"unknown --room-spec {room_spec!r}; choose one of {', '.join(room_spec_ids())}"
        )
    cfg = HousesConfig(
        count=count,
        split=split,
        room_spec=room_spec,
        max_attempts=max_attempts,
        procthor=load_catalogue().version,
    )
    job = build_job(cfg, seed=seed, fmt=fmt)
    return run_job(job, out, options, command=command, progress=progress)
