"""Configuration of the SpaMEM pipeline (everything that determines its output)."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field
from typing import Any

from dataforge.config import PipelineConfig, option, parse_size, show_size
from dataforge.errors import UsageError
from dataforge.simulators import HOUSE_SIMS as SIMS
from dataforge.world.procgen import SPLITS

PLANNERS = ("heuristic", "llm", "replay:DIR")
VIEWS = (2, 4, 8, 16)  # azimuths x 2 heights; the paper: 8 x 2
MAX_STEPS = 200


def parse_houses(text: str) -> tuple[int, int]:
    """``N`` (the first N houses) or ``A:B`` (houses A..B-1) -> ``(A, B)``."""
    s = str(text).strip()
    try:
        if ":" in s:
            a, b = (int(v) for v in s.split(":"))
        else:
            a, b = 0, int(s)
    except ValueError:
        raise UsageError(f"--houses takes N or A:B (e.g. 1000 or 200:300), got {text!r}") from None
    return a, b


def show_houses(value: tuple[int, int]) -> str:
    return str(value[1]) if value[0] == 0 else f"{value[0]}:{value[1]}"


def planner_kind(planner: str) -> str:
    """``heuristic``, ``llm`` or ``replay``."""
    return "replay" if planner.startswith("replay:") else planner


@dataclass(frozen=True)
class SpamemConfig(PipelineConfig):
    houses: tuple[int, int] = option(
        MISSING,
        "Houses: N (the first N) or A:B (indices A..B-1) of --house-source. One house is one "
        "work unit (one shard).",
        parse=parse_houses,
        show=show_houses,
        metavar="N|A:B",
    )
    sequences_per_house: int = option(
        25, "Interaction sequences per house, each from the house's initial state.", min=1
    )
    steps: int = option(
        25,
        "Successful actions per sequence (captured states: steps + 1 with the initial state). "
        "The paper probes 40.",
        min=1,
        max=MAX_STEPS,
    )
    planner: str = option(
        "heuristic",
        "heuristic (seeded policy over procthor's receptacle statistics, offline), llm "
        "(Think-and-Act through an OpenAI-compatible server: --llm-url, --llm-model) or "
        "replay:DIR (re-execute the logged decisions of dataset DIR, no server).",
        metavar="heuristic|llm|replay:DIR",
    )
    llm_url: str | None = option(
        None, "OpenAI-compatible server of --planner llm, e.g. http://127.0.0.1:8000/v1."
    )
    llm_model: str | None = option(
        None, "Model name the server serves (the paper: Qwen/Qwen2.5-7B-Instruct)."
    )
    llm_temperature: float = option(0.7, "Sampling temperature of --planner llm.", min=0.0)
    llm_max_tokens: int = option(768, "Answer length limit of --planner llm.", min=16)
    llm_timeout: float = option(120.0, "Seconds to wait for one answer.", min=1.0)
    llm_attempts: int = option(
        3, "Answers asked per decision before it counts as failed (invalid JSON, ...).", min=1
    )
    recoveries: int = option(
        4,
        "Decisions per step: after a failed placement the planner is asked for another "
        "location or object (the paper's recovery loop); then the sequence ends early.",
        min=1,
    )
    redraws: int = option(
        3,
        "Times a sequence that ends without any action (whatever the cause) is drawn again "
        "from its own random stream; then its house fails. Such a sequence is never written.",
        min=0,
    )
    keep_short: bool = option(
        False,
        "Keep a sequence that ends early, after at least one action, because the planner gave "
        "no valid action at a later step (no answer, unparsable or impossible ones). By "
        "default its house fails: a planner that got nothing from its server is an error, not "
        "a short sequence.",
    )
    sim: str = option(
        "embedded", "World backend: embedded (CPU, default) or ai2thor.", choices=SIMS
    )
    resolution: tuple[int, int] = option(
        (640, 480), "Image size WIDTHxHEIGHT.", parse=parse_size, show=show_size
    )
    views_per_step: int = option(
        16,
        "Views per captured state: azimuths x 2 heights: 2, 4, 8 or 16 (the paper: 8 x 2).",
        min=2,
        max=16,
    )
    fov: float = option(
        90.0, "Vertical field of view in degrees (AI2-THOR's default 90).", min=10.0, max=150.0
    )
    camera_radius: float = option(
        1.5,
        "Plan-view distance (m) of the cameras from the target (searched 0.5-3 m when blocked).",
        min=0.5,
        max=3.0,
    )
    split: str = option(
        "train", "procthor asset split: generated houses and spawned assets.", choices=SPLITS
    )
    room_spec: str | None = option(
        None, "Generated houses: a ProcTHOR-10K room spec id for every house (default: sampled)."
    )
    max_attempts: int = option(10, "Generated houses: procthor seeds tried per house.", min=1)
    # Recorded facts (set by build_job)
    houses_from: str = "generate"  # generate | dir | jsonl | replay
    procthor: str = "unknown"
    # placement's per-category sink / hover limits (dataforge.world.placement.rest_limits)
    rest_limits: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        a, b = self.houses
        if not (0 <= a < b):
            raise UsageError(f"--houses needs 0 <= A < B, got {show_houses(self.houses)}")
        kind = planner_kind(self.planner)
        if kind not in ("heuristic", "llm", "replay") or self.planner == "replay:":
            raise UsageError(
                f"--planner must be heuristic, llm or replay:DIR, got {self.planner!r}"
            )
        if kind == "llm" and not (self.llm_url and self.llm_model):
            raise UsageError("--planner llm needs --llm-url and --llm-model")
        w, h = self.resolution
        if not (16 <= w <= 4096 and 16 <= h <= 4096):
            raise UsageError(f"--resolution must be 16..4096 per side, got {w}x{h}")
        if self.views_per_step not in VIEWS:
            raise UsageError(f"--views-per-step must be one of {VIEWS}")

    @property
    def house_indices(self) -> range:
        return range(*self.houses)


LEVEL_CHOICES = (1, 2, 3)


def parse_levels(text: str) -> tuple[int, ...]:
    """``1,2,3`` -> ``(1, 2, 3)``."""
    try:
        levels = sorted({int(x) for x in str(text).split(",") if x.strip()})
    except ValueError:
        raise UsageError(f"--levels takes a list of 1, 2, 3 (e.g. 1,3), got {text!r}") from None
    if not levels or any(v not in LEVEL_CHOICES for v in levels):
        raise UsageError(f"--levels takes a list of 1, 2, 3 (e.g. 1,3), got {text!r}")
    return tuple(levels)


def show_levels(value: tuple[int, ...]) -> str:
    return ",".join(str(v) for v in value)


STREAM_HEIGHTS = ("standing", "crouching")


def parse_stream_view(text: str) -> tuple[float, str]:
    """``0:standing`` -> ``(0.0, "standing")``."""
    az, _, height = str(text).partition(":")
    try:
        azimuth = float(az)
    except ValueError:
        azimuth = -1.0
    if not (0 <= azimuth < 360) or height not in STREAM_HEIGHTS:
        raise UsageError(
            f"--stream-view takes AZIMUTH:HEIGHT with HEIGHT standing or crouching "
            f"(e.g. 0:standing), got {text!r}"
        )
    return azimuth, height


def show_stream_view(value: tuple[float, str]) -> str:
    return f"{value[0]:g}:{value[1]}"


@dataclass(frozen=True)
class TasksConfig(PipelineConfig):
    levels: tuple[int, ...] = option(
        LEVEL_CHOICES,
        "Levels: L1 static perception (step 0), L2 text-conditioned and L3 visual-conditioned "
        "memory.",
        parse=parse_levels,
        show=show_levels,
        metavar="1,2,3",
    )
    horizon: str = option(
        "both",
        "L2/L3 probing: short (a query after every step over t-1 -> t), long (queries at the "
        "last step over 0..T) or both.",
        choices=("short", "long", "both"),
    )
    modality: str = option(
        "both",
        "rgb, rgbd (each frame with its depth) or both: separate question files.",
        choices=("rgb", "rgbd", "both"),
    )
    stream_view: tuple[float, str] = option(
        (0.0, "standing"),
        "The view of every step that forms the L2/L3 observations: AZIMUTH:HEIGHT (one of the "
        "dataset's azimuths; standing or crouching).",
        parse=parse_stream_view,
        show=show_stream_view,
        metavar="AZIMUTH:HEIGHT",
    )
    frames: str = option(
        "evidence",
        "Which view of each step an L2/L3 question shows (the steps are fixed by the level: L2 "
        "the query step, L3 every step up to it): evidence = per question and step, the view "
        "that sees most of what the question names (its receptacles with what rests on them, "
        "or its object), and a question whose answer is not visible in its frames is skipped "
        "(counted); stream = the --stream-view of every step, for every question (the paper's "
        "fixed stream).",
        choices=("evidence", "stream"),
    )

    @property
    def horizons(self) -> tuple[str, ...]:
        return ("short", "long") if self.horizon == "both" else (self.horizon,)

    @property
    def modalities(self) -> tuple[str, ...]:
        return ("rgb", "rgbd") if self.modality == "both" else (self.modality,)
