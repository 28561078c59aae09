"""Shared fixtures (helpers live in dfhelpers.py, importable because tests/ is on pythonpath)."""

from __future__ import annotations

import os
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
            cfg = SyntheticConfig(scenes=3, episodes_per_scene=2, frames=4, resolution=(48, 36))
            run_job(build_job(cfg, seed=1, fmt=fmt), root, ExecutionOptions())
            cache[fmt] = root
        return cache[fmt]

    return get


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``tiny_dataset(pipeline, workers=1)``: the pipeline's registered tiny example, made
    through the real command line once per session (read-only: copy before changing it).
    Skips when its ``../shared/data`` inputs are absent; a missing extra skips too, except under
    ``DATAFORGE_REQUIRE_SIM=1`` (``make test``), where it fails."""
    from dfhelpers import SHARED, run_cli

    from dataforge.registry import get_pipeline

    made: dict[tuple[str, int], Path] = {}

    def get(name: str, workers: int = 1) -> Path:
        key = (name, workers)
        if key not in made:
            pipeline = get_pipeline(name)
            assert pipeline is not None and pipeline.tiny is not None, name
            data = SHARED / "data"
            if missing := pipeline.missing_data(data):
                pytest.skip(f"{name}'s tiny example needs {', '.join(missing)} in {data}")
            out = tmp_path_factory.mktemp(f"tiny-{name}-w{workers}") / "ds"
            reads = {up: get(up) for up in pipeline.tiny.read_pipelines}
            args = pipeline.example_args(out, data_dir=data, reads=reads)
            r = run_cli(*args, "--workers", str(workers), timeout=1800)
            if r.returncode != 0 and "pip install" in r.stderr:
                if os.environ.get("DATAFORGE_REQUIRE_SIM") == "1":
                    raise RuntimeError(f"DATAFORGE_REQUIRE_SIM=1 but {name} cannot run: {r.stderr}")
                pytest.skip(r.stderr.strip())
            assert r.returncode == 0, f"{' '.join(args)}: {r.stderr}"
            made[key] = out
        return made[key]

    return get
