"""Configuration of the synthetic pipeline (everything that determines its output)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from dataforge.errors import UsageError

CLASSES = ("background", "floor", "ball", "globe", "pearl")
FLOOR_ID = 1
FIRST_OBJECT_ID = 2


@dataclass(frozen=True)
class SyntheticConfig:
    scenes: int = 4
    episodes_per_scene: int = 2
    frames: int = 8
    width: int = 96
    height: int = 72
    spheres: int = 4
    hfov_deg: float = 79.0

    def __post_init__(self) -> None:
        for name in ("scenes", "episodes_per_scene", "frames", "spheres"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise UsageError(
                    f"--{name.replace('_', '-')} must be a positive integer, got {value!r}"
                )
        if not (8 <= self.width <= 4096 and 8 <= self.height <= 4096):
            raise UsageError(f"resolution {self.width}x{self.height} must be 8..4096 per side")
        if not 10.0 <= self.hfov_deg <= 150.0:
            raise UsageError(f"--hfov must be in 10..150 degrees, got {self.hfov_deg}")
        if self.spheres > 64:
            raise UsageError(f"--spheres must be at most 64, got {self.spheres}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
