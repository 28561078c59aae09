"""The paper's Table 1 for one split, computed from a stored tour dataset."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dataforge.store.reader import Dataset


def table1(ds: Dataset) -> dict[str, Any]:
    """Scenes, episodes, tours, duplicates per set, tour length (episodes) mean/min/max/SD.

    ``duplicates_per_set`` is the column the paper prints as Tours/Scene (tours ÷ scenes, see
    the spec notes); ``tours_per_scene`` carries the same number under its true name. SD is the
    population SD, as the paper's numbers are.
    """
    scenes: set[str] = set()
    lengths: list[int] = []
    for ep in ds.episodes():
        scenes.add(ep.metadata["scene"])
        lengths.append(len(ep["path_id"]))
    n_scenes, n_tours = len(scenes), len(lengths)
    per_scene = n_tours / n_scenes if n_scenes else 0.0
    return {
        "split": ds.manifest.config["split"],
        "scenes": n_scenes,
        "episodes": sum(lengths),
        "tours": n_tours,
        "duplicates_per_set": per_scene,
        "tours_per_scene": per_scene,
        "tour_length": {
            "mean": statistics.fmean(lengths) if lengths else 0.0,
            "min": min(lengths, default=0),
            "max": max(lengths, default=0),
            "sd": statistics.pstdev(lengths) if lengths else 0.0,
        },
    }


def table1_row(t: dict[str, Any]) -> list[str]:
    """One row as the paper prints it (one decimal, thousands separators)."""
    tl = t["tour_length"]
    return [
        t["split"],
        str(t["scenes"]),
        f"{t['episodes']:,}",
        str(t["tours"]),
        f"{t['duplicates_per_set']:.1f}",
        f"{tl['mean']:.1f}",
        str(tl["min"]),
        str(tl["max"]),
        f"{tl['sd']:.1f}",
    ]


TABLE1_HEADER = ["split", "scenes", "episodes", "tours", "tours/scene", "mean", "min", "max", "SD"]
