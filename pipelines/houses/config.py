"""Configuration of the houses pipeline (everything that determines its output)."""

from __future__ import annotations

from dataclasses import MISSING, dataclass

from dataforge.config import PipelineConfig, option
from dataforge.world.procgen import SPLITS  # procthor's asset splits


@dataclass(frozen=True)
class HousesConfig(PipelineConfig):
    count: int = option(MISSING, "Number of houses to make.", min=1)
    split: str = option("train", "procthor's asset split the houses draw from.", choices=SPLITS)
    room_spec: str | None = option(
        None,
        "A ProcTHOR-10K room spec id for every house (e.g. kitchen, 2-bed-1-bath, "
        "8-room-3-bed), or several comma-separated, one drawn per house with ProcTHOR-10K's "
        "weights; default: sampled per house as in ProcTHOR-10K.",
    )
    max_attempts: int = option(
        10,
        "Seeds tried per house: a house that procthor gives up on, or that fails the "
        "usability checks (a room unreachable from the start, ...), is replaced by the next.",
        min=1,
    )
    procthor: str = "unknown"  # version of procthor's generator and databases (recorded)
