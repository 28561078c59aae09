"""Configuration of IR2R tour generation (everything that determines the output)."""

from __future__ import annotations

import re
from dataclasses import MISSING, dataclass

from dataforge.config import PipelineConfig, option, parse_list, show_list
from dataforge.errors import UsageError
from dataforge.pipelines.ir2r.tours import ORDERINGS
from dataforge.tsp import SOLVERS

SPLITS = ("train", "val_seen", "val_unseen", "test")
NAVMESH_BACKENDS = ("habitat",)


@dataclass(frozen=True)
class IR2RConfig(PipelineConfig):
    """The input files' sha256 are recorded beside the config (the manifest's ``inputs``), so a
    rerun over changed inputs is refused as another dataset rather than silently mixed."""

    split: str = option(
        MISSING, "R2R split: train, val_seen, val_unseen or test (reads r2r/R2R_<split>.json)."
    )
    ordering: str | None = option(
        None,
        "tip-to-tail: cost end(i) -> start(j) (the paper); tip-to-tip: start(i) -> start(j) "
        "(the test server's). Default: tip-to-tip for test, else tip-to-tail.",
        choices=ORDERINGS,
    )
    solver: str = option(
        "elkai",
        "elkai: LKH-3 bundled (non-commercial licence); lkh: an LKH binary on PATH; "
        "exact: OR-tools CP-SAT, proves the optimum (small sets).",
        choices=SOLVERS,
    )
    runs: int = option(3, "LKH-3 runs per set (the best is kept).", min=1)
    min_paths: int = option(
        2, "Drop sets (and scenes) with fewer paths; 2 reproduces the paper's Table 1.", min=1
    )
    exact_time_limit_s: float = option(
        60.0,
        "Seconds per set for --solver exact (then the best tour found, marked unproven).",
        flags=("--exact-time-limit",),
        min=0.0,
    )
    continuous: bool = option(
        False,
        "IR2R-CE: tours over VLN-CE episodes with navmesh geodesics (needs --episodes, "
        "--scenes-dir).",
    )
    navmesh: str = option(
        "habitat",
        "--continuous: the geodesic oracle (habitat-sim's pathfinder).",
        choices=NAVMESH_BACKENDS,
    )
    scans: tuple[str, ...] = option(
        (),
        "Only these scenes (comma-separated scan ids, e.g. 17DRP5sb8fy,EDJbREhghzL); "
        "default: every scene of the split.",
        parse=parse_list,
        show=show_list,
        metavar="SCAN,...",
    )

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_]+", self.split):
            raise UsageError(f"--split must be letters, digits or '_', got {self.split!r}")
        if self.ordering is None:
            object.__setattr__(self, "ordering", self.default_ordering(self.split))
        if self.exact_time_limit_s <= 0:  # the declared min (0) is inclusive
            raise UsageError("--exact-time-limit must be positive")
        if len(set(self.scans)) != len(self.scans):
            raise UsageError(f"--scans names a scene twice: {','.join(self.scans)}")

    @staticmethod
    def default_ordering(split: str) -> str:
        """The test split has no goals, so its tours are tip-to-tip (the paper's appendix)."""
        return "tip-to-tip" if split == "test" else "tip-to-tail"
