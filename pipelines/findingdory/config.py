"""Configuration of FindingDory episode creation (everything that determines its output)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dataforge.config import PipelineConfig, option
from dataforge.errors import UsageError

SPLITS = ("train", "val")
SCENE_KINDS = ("generate", "dir", "jsonl", "habitat")
MIN_REARRANGEMENTS, MAX_REARRANGEMENTS = 2, 11  # paper §3, B.2


def parse_range(text: str) -> tuple[int, int]:
    """``N`` or ``A-B`` -> ``(A, B)``."""
    s = str(text).strip()
    try:
        a, b = (int(v) for v in s.split("-")) if "-" in s else (int(s), int(s))
    except ValueError:
        raise UsageError(f"{text!r} is not N or A-B, e.g. 2-11") from None
    return a, b


def show_range(value: tuple[int, int]) -> str:
    return str(value[0]) if value[0] == value[1] else f"{value[0]}-{value[1]}"


@dataclass(frozen=True)
class HeadCamera:
    """The Stretch head camera (upstream ``config/agents/stretch.yaml``): portrait 480 wide x
    640 tall, 43 degrees horizontal field of view, 1.31 m above the floor, tilted 30 degrees
    down."""

    width: int = 480
    height: int = 640
    hfov_deg: float = 43.0
    height_m: float = 1.31
    tilt_deg: float = 30.0  # AI2-THOR horizon: positive looks down

    @property
    def vfov_deg(self) -> float:
        t = math.tan(math.radians(self.hfov_deg) / 2) * self.height / self.width
        return math.degrees(2 * math.atan(t))


@dataclass(frozen=True)
class EpisodesConfig(PipelineConfig):
    split: str = option(
        "val",
        "Dataset split: procthor's asset split for generated houses and spawned objects "
        "(the paper builds attribute tasks for val only).",
        choices=SPLITS,
    )
    episodes: int = option(1, "Episodes per scene (the paper: 1,478 train / 100 val in "
                           "107 / 30 scenes).", min=1)  # fmt: skip
    rearrangements: tuple[int, int] = option(
        (MIN_REARRANGEMENTS, MAX_REARRANGEMENTS),
        "Pick-and-place rearrangements per episode: N, or A-B drawn uniformly per episode "
        "(the paper's 2-11; they set the experience video's length).",
        parse=parse_range,
        show=show_range,
        metavar="N|A-B",
    )
    room_spec: str | None = option(
        None, "Generated houses: a ProcTHOR-10K room spec id for every house (default: sampled)."
    )
    max_attempts: int = option(10, "Generated houses: procthor seeds tried per house.", min=1)
    max_tries: int = option(
        20, "Episode draws tried per episode before the scene is given up (each failure is "
        "counted by its reason).", min=1,
    )  # fmt: skip
    # Recorded facts (set by build_job or fixed by the benchmark)
    scene_kind: str = "generate"  # generate | dir | jsonl | habitat
    generated_scenes: int = 0  # --scenes generate:K
    agent_radius: float = 0.25  # m, Stretch base (navmesh radius upstream)
    cell: float = 0.05  # m, navigation grid cell (embedded world)
    reach_m: float = 1.0  # base centre to a receptacle's footprint / an object, plan view
    viewpoint_spacing_m: float = 0.14  # receptacle viewpoint lattice: every point within 0.1 m
    min_coverage: float = 0.001  # "clearly visible": the predicates' 0.1 % of the image
    check_width: int = 120  # visibility checks render at a quarter of the head camera's size
    check_height: int = 160
    min_start_distance: float = 1.5  # m, geodesic from the start to the first pick spot
    walk_away_m: float = 3.0  # m, geodesic from the last interaction to the final pose
    procthor: str = "unknown"

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise UsageError(f"--split must be one of {', '.join(SPLITS)}, got {self.split!r}")
        a, b = self.rearrangements
        if not MIN_REARRANGEMENTS - 1 <= a <= b:
            raise UsageError(
                f"--rearrangements must be N or A-B with 1 <= A <= B, got {show_range((a, b))}"
            )
        if b > 40:
            raise UsageError(f"--rearrangements at most 40 (the paper's 2-11), got {b}")
        if self.scene_kind not in SCENE_KINDS:
            raise UsageError(f"unknown scene kind {self.scene_kind!r}")

    @property
    def camera(self) -> HeadCamera:
        return HeadCamera()
