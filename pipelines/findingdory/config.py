"""Configuration of FindingDory episode creation (everything that determines its output)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dataforge.config import PipelineConfig, option, parse_size, show_size
from dataforge.errors import UsageError

SPLITS = ("train", "val")
URL = "https://findingdory-benchmark.github.io"
LICENSE_URL = "https://github.com/findingdory-benchmark/findingdory-habitat"
CITATION = (
    "Yadav, Shah, Ramrakhya, Rao, Batra, Kira, Kolve, Mottaghi, Tolani. FindingDory: A "
    "Benchmark to Evaluate Memory in Embodied Agents. 2025."
)
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
    episodes: int = option(
        1, "Episodes per scene (the paper: 1,478 train / 100 val in 107 / 30 scenes).", min=1
    )
    rearrangements: tuple[int, int] = option(
        (MIN_REARRANGEMENTS, MAX_REARRANGEMENTS),
        "Pick-and-place rearrangements per episode: N, or A-B drawn uniformly per episode "
        "(the paper's 2-11; they set the experience video's length).",
        parse=parse_range,
        show=show_range,
        metavar="N|A-B",
    )
    room_spec: str | None = option(
        None,
        "Generated houses: a ProcTHOR-10K room spec id for every house, or several "
        "comma-separated, one drawn per house (default: sampled as in ProcTHOR-10K).",
    )
    max_attempts: int = option(10, "Generated houses: procthor seeds tried per house.", min=1)
    max_tries: int = option(
        20,
        "Episode draws tried per episode before the scene is given up (each failure is "
        "counted by its reason).",
        min=1,
    )
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


VIDEO_KINDS = ("none", "mp4")


def parse_hhmm(text: str) -> str:
    """``H:MM`` or ``HH:MM`` (00:00..23:59) -> zero-padded ``HH:MM``."""
    try:
        h, m = (int(v) for v in str(text).split(":"))
    except ValueError:
        h = m = -1
    if not (0 <= h <= 23 and 0 <= m <= 59):
        raise UsageError(f"{text!r} is not a time of day HH:MM, e.g. 06:00")
    return f"{h:02d}:{m:02d}"


@dataclass(frozen=True)
class CollectConfig(PipelineConfig):
    resolution: tuple[int, int] = option(
        (480, 640),
        "Head camera frames WIDTHxHEIGHT (upstream's Stretch head camera: portrait 480x640; "
        "the field of view stays 43 degrees horizontally).",
        parse=parse_size,
        show=show_size,
    )
    video: str = option(
        "none",
        "Also write each episode's RGB as videos/<episode>.mp4, each frame stamped with its "
        "clock top-left and its frame number top-right (H.264 via PyAV: pip install "
        "'dataforge[video]').",
        choices=VIDEO_KINDS,
    )
    fps: float = option(10.0, "Frames per second of the MP4 videos.", min=0.1, max=120.0)
    day_start: str = option(
        "06:00", "Clock at frame 0 (upstream: wake at 06:00).", parse=parse_hhmm, metavar="HH:MM"
    )
    day_end: str = option(
        "22:00",
        "Clock after day_steps frames (upstream: 22:00).",
        parse=parse_hhmm,
        metavar="HH:MM",
    )
    day_steps: int = option(
        4000, "Frames from day_start to day_end (upstream: 4,000, so 14.4 s a frame).", min=1
    )
    limit: int | None = option(
        None, "Only the first N episodes of each scene (default: all).", min=1
    )
    # Recorded facts
    forward_m: float = 0.25  # upstream forward_step_size
    turn_deg: float = 10.0  # upstream turn_angle
    max_frames: int = 4000  # upstream caps collection at the day's 4,000 steps
    hfov_deg: float = 43.0
    camera_height_m: float = 1.31
    tilt_deg: float = 30.0
    # Recorded from the episodes dataset (build_job)
    split: str = "val"
    agent_radius: float = 0.25
    min_coverage: float = 0.001  # "clearly visible" before a pick
    # Set by build_job: rgb is stored without the clock drawn in (stamps.py draws it where
    # frames are shown). Datasets made before record nothing: their rgb carries the clock.
    clean_rgb: bool = False

    def __post_init__(self) -> None:
        w, h = self.resolution
        if not (16 <= w <= 4096 and 16 <= h <= 4096):
            raise UsageError(f"--resolution must be 16..4096 per side, got {w}x{h}")
        if parse_hhmm(self.day_end) <= parse_hhmm(self.day_start):
            raise UsageError(
                f"--day-end {self.day_end} must come after --day-start {self.day_start}"
            )

    @property
    def camera(self) -> HeadCamera:
        w, h = self.resolution
        return HeadCamera(
            width=w,
            height=h,
            hfov_deg=self.hfov_deg,
            height_m=self.camera_height_m,
            tilt_deg=self.tilt_deg,
        )


@dataclass(frozen=True)
class TasksConfig(PipelineConfig):
    cap: int | None = option(
        1,
        "Tasks per template per episode at most, drawn among its valid fillings (the paper's "
        "density: 5,876 val tasks in 100 episodes, about one per template); 0: all.",
        min=0,
    )

    @property
    def per_template(self) -> int | None:
        return None if not self.cap else int(self.cap)
