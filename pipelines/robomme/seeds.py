"""Which episodes to generate: RoboMME's released metadata, or the same seed scheme.

Released files (``env_metadata/<split>/record_dataset_<Task>_metadata.json``) list
``{task, episode, seed, difficulty}`` per episode. Their seeds follow
``seed = base + stride * task_index + 100 * block + retry`` (train base 0 / stride 1,000; val
1,000,000 / 10,000; test 500,000 / 10,000), difficulty ``[easy, easy, medium, hard][block % 4]``
and ``retry`` the next seed taken after a failed episode (``../shared/specs/robomme.md``).
In the released files episode k uses block k, except where a whole block failed and the next
block was taken (val StopCube from episode 34, val VideoPlaceButton): the difficulty follows the
block. dataforge uses block k for episode k and retries within the block.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataforge.errors import InputNotFoundError, MalformedInputError
from dataforge.pipelines.robomme.suites import TASK_SUITES

SPLIT_SEEDS = {"train": (0, 1_000), "val": (1_000_000, 10_000), "test": (500_000, 10_000)}
TASK_INDEX = {
    "PickXtimes": 1,
    "StopCube": 2,
    "SwingXtimes": 3,
    "BinFill": 4,
    "VideoUnmaskSwap": 5,
    "VideoUnmask": 6,
    "ButtonUnmaskSwap": 7,
    "ButtonUnmask": 8,
    "VideoRepick": 9,
    "VideoPlaceButton": 10,
    "VideoPlaceOrder": 11,
    "PickHighlight": 12,
    "InsertPeg": 13,
    "MoveCube": 14,
    "PatternLock": 15,
    "RouteStick": 16,
}
DIFFICULTY_CYCLE = ("easy", "easy", "medium", "hard")
MAX_RETRY = 99  # retries stay inside the episode's block of 100 seeds


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to generate: task, 0-based episode index, first seed, difficulty."""

    task: str
    episode: int
    seed: int
    difficulty: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "episode": self.episode,
            "seed": self.seed,
            "difficulty": self.difficulty,
        }


def scheme_seed(task: str, split: str, block: int, retry: int = 0) -> int:
    base, stride = SPLIT_SEEDS[split]
    return base + stride * TASK_INDEX[task] + 100 * block + retry


def scheme_episodes(task: str, split: str, count: int, start: int = 0) -> list[EpisodeSpec]:
    return [
        EpisodeSpec(task, k, scheme_seed(task, split, k), DIFFICULTY_CYCLE[k % 4])
        for k in range(start, start + count)
    ]


def metadata_file(directory: Path, task: str) -> Path:
    return Path(directory) / f"record_dataset_{task}_metadata.json"


def load_metadata(directory: Path, task: str) -> list[EpisodeSpec]:
    """The records of one task's released metadata file, checked."""
    path = metadata_file(directory, task)
    if not path.is_file():
        raise InputNotFoundError(f"no RoboMME metadata for {task}: {path} does not exist")
    try:
        doc = json.loads(path.read_text())
        records = doc["records"]
        specs = [
            EpisodeSpec(str(r["task"]), int(r["episode"]), int(r["seed"]), str(r["difficulty"]))
            for r in records
        ]
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise MalformedInputError(f"{path}: not a RoboMME metadata file ({exc})") from None
    for s in specs:
        if s.task != task or s.difficulty not in DIFFICULTY_CYCLE or s.episode < 0:
            raise MalformedInputError(f"{path}: bad record {s.to_dict()}")
    if doc.get("record_count", len(specs)) != len(specs):
        raise MalformedInputError(f"{path}: record_count {doc['record_count']} != {len(specs)}")
    if len({s.episode for s in specs}) != len(specs):
        raise MalformedInputError(f"{path}: an episode index appears twice")
    return specs


def known_task(task: str) -> bool:
    return task in TASK_SUITES
