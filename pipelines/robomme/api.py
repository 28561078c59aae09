"""What ``dataforge robomme`` calls (no click in here)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dataforge.errors import UsageError
from dataforge.pipelines.robomme.config import DEFAULT_NOISE, DEFAULT_NOISE_SCALE, RobommeConfig
from dataforge.pipelines.robomme.generate import build_job
from dataforge.pipelines.robomme.seeds import load_metadata
from dataforge.pipelines.robomme.suites import TASKS
from dataforge.progress import Progress
from dataforge.run import ExecutionOptions, RunReport, run_job


def parse_tasks(text: str) -> tuple[str, ...]:
    """``all`` or a comma-separated list of task names (case-insensitive)."""
    if text.strip().lower() == "all":
        return TASKS
    by_lower = {t.lower(): t for t in TASKS}
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in names if p.lower() not in by_lower]
    if unknown or not names:
        raise UsageError(
            f"unknown task(s) {', '.join(unknown) or repr(text)}; choose all or from: "
            + ", ".join(TASKS)
        )
    return tuple(dict.fromkeys(by_lower[p.lower()] for p in names))


def make_config(
    *,
    tasks: str,
    episodes_per_task: int,
    split: str,
    metadata_dir: Path | None = None,
    noise_prob: float | None = None,
    noise_scale: float | None = None,
    size: int = 256,
    max_retries: int = 7,
    first_episode: int = 0,
) -> RobommeConfig:
    names = parse_tasks(tasks)
    episodes: tuple = ()
    if metadata_dir is not None:
        specs = [s for t in names for s in load_metadata(metadata_dir, t)[:episodes_per_task]]
        episodes = tuple(specs)
    return RobommeConfig(
        tasks=names,
        episodes_per_task=episodes_per_task,
        split=split,
        noise_prob=DEFAULT_NOISE[split] if noise_prob is None else noise_prob,
        noise_scale=DEFAULT_NOISE_SCALE if noise_scale is None else noise_scale,
        size=size,
        max_retries=max_retries,
        episodes=episodes,
        first_episode=first_episode,
    )


def generate_demos(
    cfg: RobommeConfig,
    *,
    out: Path,
    seed: int,
    fmt: str,
    options: ExecutionOptions,
    command: Sequence[str] = (),
    progress: Progress | None = None,
) -> RunReport:
    """Check the simulator stack (unless a dry run), then run."""
    if not options.dry_run:
        from dataforge.pipelines.robomme.sim import require_sim

        require_sim()
    job = build_job(cfg, seed=seed, fmt=fmt)
    return run_job(job, out, options, command=command, progress=progress)
