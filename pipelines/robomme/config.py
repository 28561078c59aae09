"""Configuration of the RoboMME pipeline (everything that determines its output)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from dataforge.errors import UsageError
from dataforge.pipelines.robomme.seeds import SPLIT_SEEDS, EpisodeSpec
from dataforge.pipelines.robomme.suites import TASKS

# The paper injects noise into training demos only ("5% noise to keyframe waypoints").
DEFAULT_NOISE = {"train": 0.05, "val": 0.0, "test": 0.0}
DEFAULT_NOISE_SCALE = 0.05


@dataclass(frozen=True)
class RobommeConfig:
    tasks: tuple[str, ...] = TASKS
    episodes_per_task: int = 1
    split: str = "train"
    noise_prob: float = 0.05  # probability that a free-space keyframe waypoint is displaced
    noise_scale: float = DEFAULT_NOISE_SCALE  # displacement, fraction of the 1 m workspace
    size: int = 256  # camera resolution (square)
    max_retries: int = 7  # next seeds tried after a failed episode (the released files: 1-7)
    episodes: tuple[EpisodeSpec, ...] = ()  # from --metadata-dir; empty: the seed scheme
    first_episode: int = 0

    def __post_init__(self) -> None:
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown or not self.tasks:
            raise UsageError(
                f"unknown RoboMME task(s) {', '.join(unknown) or '(none)'}; "
                f"choose from: all, {', '.join(TASKS)}"
            )
        if self.split not in SPLIT_SEEDS:
            raise UsageError(f"--split must be one of {', '.join(SPLIT_SEEDS)}")
        if self.episodes_per_task < 1:
            raise UsageError("--episodes-per-task must be positive")
        for name in ("noise_prob", "noise_scale"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise UsageError(f"--{name.replace('_', '-')} must be in [0, 1], got {v}")
        if not 32 <= self.size <= 1024:
            raise UsageError(f"--size must be in [32, 1024], got {self.size}")
        if not 0 <= self.max_retries <= 99:
            raise UsageError("--max-retries must be in [0, 99]")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tasks"] = list(self.tasks)
        d["episodes"] = [e.to_dict() for e in self.episodes]
        return d
