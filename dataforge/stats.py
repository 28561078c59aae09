"""``dataforge stats``: counts and distributions of a dataset, generic plus pipeline-defined."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dataforge.registry import get_pipeline
from dataforge.store.reader import Dataset


def describe(values: Sequence[float]) -> dict[str, float | int]:
    """count, mean, population SD, min, median, max of ``values``."""
    a = np.asarray(values, dtype=np.float64)
    if a.size == 0:
        return {"count": 0}
    return {
        "count": int(a.size),
        "mean": float(a.mean()),
        "sd": float(a.std()),
        "min": float(a.min()),
        "median": float(np.median(a)),
        "max": float(a.max()),
    }


@dataclass
class DatasetStats:
    dataset: dict[str, str | int]  # name, pipeline, format, seed and counts of the dataset
    counts: dict[str, Any] = field(default_factory=dict)
    distributions: dict[str, list[float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "counts": self.counts,
            "distributions": {k: describe(v) for k, v in self.distributions.items()},
        }


def compute_stats(ds: Dataset) -> DatasetStats:
    m = ds.manifest
    lengths: dict[str, list[float]] = {}
    for name, spec in m.schema.items():
        if spec.shape[0] is None:
            lengths[f"{name} rows per episode"] = [
                float(b - a) for a, b in (loc.rows[name] for loc in m.episodes.values())
            ]
    out = DatasetStats(
        dataset={
            "name": m.name,
            "pipeline": m.pipeline,
            "format": m.format,
            "seed": m.seed,
            "episodes": len(m.episodes),
            "shards": len(m.shards),
            "files": len(m.files),
            "bytes": sum(f.size for f in m.files.values()),
        }
    )
    first_var = next(iter(lengths), None)
    if first_var:
        out.distributions["episode length (" + first_var.split()[0] + " rows)"] = lengths[first_var]
    pipeline = get_pipeline(m.pipeline)
    if pipeline is not None and pipeline.hooks.stats is not None:
        ps = pipeline.hooks.stats(ds)
        out.counts.update(ps.counts)
        out.distributions.update({k: list(map(float, v)) for k, v in ps.distributions.items()})
    return out
