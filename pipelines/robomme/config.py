"""Configuration of the RoboMME pipeline (everything that determines its output)."""

from __future__ import annotations

from dataclasses import dataclass

from dataforge.config import PipelineConfig, option
from dataforge.errors import UsageError
from dataforge.pipelines.robomme.seeds import SPLIT_SEEDS, EpisodeSpec
from dataforge.pipelines.robomme.suites import TASKS

NOISE_MODES = ("upstream", "waypoint", "none")
# --noise waypoint (ours): the probability of a detour per free-space keyframe, by split.
DEFAULT_NOISE = {"train": 0.05, "val": 0.0, "test": 0.0}


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


def show_tasks(tasks: tuple[str, ...]) -> str:
    return "all" if tasks == TASKS else ",".join(tasks)


@dataclass(frozen=True)
class RobommeConfig(PipelineConfig):
    tasks: tuple[str, ...] = option(
        TASKS,
        "'all' or a comma-separated list, e.g. PickXtimes,BinFill (names as in RoboMME).",
        parse=parse_tasks,
        show=show_tasks,
        metavar="all|TASK,...",
    )
    episodes_per_task: int = option(
        1, "Episodes per task (the paper: 100 train, 50 val/test).", min=1
    )
    split: str = option(
        "train", "Seed range (and default noise) of the split.", choices=tuple(SPLIT_SEEDS)
    )
    noise: str = option(
        "upstream",
        "Recovery demonstrations. upstream: RoboMME's (one missed grasp, 4 cm above or beside "
        "it, before a pick of metadata episodes 0-5); waypoint: ours (free-space keyframes "
        "displaced, then recovered, see --noise-prob); none.",
        choices=NOISE_MODES,
    )
    noise_prob: float | None = option(
        None,
        "--noise waypoint: probability that a free-space keyframe is displaced (then "
        "recovered). Default: 0.05 for train, 0 for val/test.",
        min=0.0,
        max=1.0,
    )
    noise_scale: float = option(
        0.05,
        "--noise waypoint: size of a displacement, as a fraction of the 1 m workspace.",
        min=0.0,
        max=1.0,
    )
    size: int = option(
        256, "Camera resolution (square) of the front and wrist cameras.", min=32, max=1024
    )
    max_retries: int = option(
        7,
        "Next seeds tried when an episode fails (planner or success check); filtered "
        "attempts are counted in the metadata and 'dataforge stats' (the released files: 1-7). "
        "Episodes from --metadata-dir keep their released seed: no retry.",
        min=0,
        max=99,
    )
    first_episode: int = option(
        0,
        "Index of the first episode (extend a dataset with new seeds of the same scheme).",
        min=0,
    )
    # From --metadata-dir (recorded): the released (task, episode, seed, difficulty) records;
    # empty: the seed scheme.
    episodes: tuple[EpisodeSpec, ...] = ()

    def __post_init__(self) -> None:
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown or not self.tasks:
            raise UsageError(
                f"unknown RoboMME task(s) {', '.join(unknown) or '(none)'}; "
                f"choose from: all, {', '.join(TASKS)}"
            )
        if self.noise_prob is None:
            prob = DEFAULT_NOISE[self.split] if self.noise == "waypoint" else 0.0
            object.__setattr__(self, "noise_prob", prob)
        elif self.noise != "waypoint" and self.noise_prob > 0:
            raise UsageError("--noise-prob needs --noise waypoint")
