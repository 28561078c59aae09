"""Shared fixtures (helpers live in dfhelpers.py, importable because tests/ is on pythonpath)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dfhelpers import write_family


@pytest.fixture(scope="session")
def family_datasets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The family dataset in both formats (read-only: copy before corrupting)."""
    out: dict[str, Any] = {}
    for fmt in ("zarr", "hdf5"):
        root = tmp_path_factory.mktemp(f"family-{fmt}") / "ds"
        out[fmt] = (root, write_family(root, fmt))
    return out


@pytest.fixture(scope="session")
def synthetic_dataset(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A small synthetic dataset per format, generated in-process through run_job."""
    from dataforge.pipelines.synthetic.config import SyntheticConfig
    from dataforge.pipelines.synthetic.generate import build_job
    from dataforge.run import ExecutionOptions, run_job

    cache: dict[str, Path] = {}

    def get(fmt: str = "zarr") -> Path:
        if fmt not in cache:
            root = tmp_path_factory.mktemp(f"synthetic-{fmt}") / "ds"
            cfg = SyntheticConfig(scenes=3, episodes_per_scene=2, frames=4, width=48, height=36)
            run_job(build_job(cfg, seed=1, fmt=fmt), root, ExecutionOptions())
            cache[fmt] = root
        return cache[fmt]

    return get
