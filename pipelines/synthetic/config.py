"""Configuration of the synthetic pipeline (everything that determines its output)."""

from __future__ import annotations

from dataclasses import dataclass

from dataforge.config import PipelineConfig, option, parse_size, show_size
from dataforge.errors import UsageError

CLASSES = ("background", "floor", "ball", "globe", "pearl")
FLOOR_ID = 1
FIRST_OBJECT_ID = 2


@dataclass(frozen=True)
class SyntheticConfig(PipelineConfig):
    scenes: int = option(4, "Number of scenes (one work unit and one shard each).", min=1)
    episodes_per_scene: int = option(2, "Camera orbits per scene.", min=1)
    frames: int = option(8, "Frames per episode.", min=1)
    resolution: tuple[int, int] = option(
        (96, 72),
        "Image size WIDTHxHEIGHT.",
        parse=parse_size,
        show=show_size,
        metavar="WxH",
    )
    spheres: int = option(4, "Spheres per scene.", min=1, max=64)
    hfov_deg: float = option(
        79.0, "Horizontal field of view in degrees.", flags=("--hfov",), min=10.0, max=150.0
    )

    def __post_init__(self) -> None:
        if not (8 <= self.width <= 4096 and 8 <= self.height <= 4096):
            raise UsageError(f"resolution {self.width}x{self.height} must be 8..4096 per side")

    @property
    def width(self) -> int:
        return self.resolution[0]

    @property
    def height(self) -> int:
        return self.resolution[1]
