"""Helpers for IR2R tests: hand-made Matterport-style data dirs (importable: tests/ is on
pythonpath). Fixtures are in tests/pipelines/ir2r/conftest.py."""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dfhelpers import SHARED

from dataforge.inputs import Inputs
from dataforge.pipelines.ir2r.config import IR2RConfig
from dataforge.pipelines.ir2r.generate import build_job
from dataforge.run import ExecutionOptions, Job, RunReport, run_job

SHARED_DATA = SHARED / "data"
HAVE_SHARED = (SHARED_DATA / "r2r" / "R2R_val_seen.json").is_file() and (
    SHARED_DATA / "mp3d_connectivity"
).is_dir()
needs_shared = pytest.mark.skipif(
    not HAVE_SHARED, reason="needs ../shared/data (r2r/ and mp3d_connectivity/), absent here"
)


def write_connectivity(
    data_dir: Path,
    scan: str,
    positions: dict[str, Sequence[float]],
    edges: Iterable[tuple[str, str]],
    *,
    directed: bool = False,
    excluded: Sequence[str] = (),
) -> Path:
    """A Matterport3D-style connectivity file: ``edges`` become ``unobstructed`` flags."""
    ids = list(positions)
    free = {v: [False] * len(ids) for v in ids}
    for a, b in edges:
        free[a][ids.index(b)] = True
        if not directed:
            free[b][ids.index(a)] = True
    records = []
    for v in ids:
        x, y, z = positions[v]
        pose = [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, z, 0, 0, 0, 1]
        records.append(
            {"image_id": v, "pose": pose, "included": v not in excluded, "unobstructed": free[v]}
        )
    path = data_dir / "mp3d_connectivity" / f"{scan}_connectivity.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records))
    return path


def r2r_record(path_id: int, scan: str, route: Sequence[str], n_instr: int = 3) -> dict[str, Any]:
    return {
        "path_id": path_id,
        "scan": scan,
        "path": list(route),
        "heading": 0.0,
        "distance": 1.0,
        "instructions": [f"instruction {k} of path {path_id}" for k in range(n_instr)],
    }


def write_r2r(data_dir: Path, split: str, records: list[dict[str, Any]]) -> Path:
    path = data_dir / "r2r" / f"R2R_{split}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records))
    return path


def line_positions(prefix: str, n: int, x0: float = 0.0) -> dict[str, list[float]]:
    return {f"{prefix}{i}": [x0 + i, 0.0, 1.5] for i in range(n)}


def chain(ids: Sequence[str]) -> list[tuple[str, str]]:
    return list(itertools.pairwise(ids))


@dataclass
class Built:
    report: RunReport
    job: Job

    @property
    def config(self) -> IR2RConfig:
        return IR2RConfig.from_dict(self.job.config)


def build(
    out: Path,
    data_dir: Path | None,
    split: str = "val_seen",
    *,
    seed: int = 0,
    fmt: str = "zarr",
    workers: int = 1,
    inputs: dict[str, Path] | None = None,
    **cfg: Any,
) -> Built:
    """Tours of ``split`` from ``data_dir`` into ``out``, as ``dataforge ir2r tours`` makes them
    (config -> job -> run)."""
    where = {"data-dir": data_dir, **(inputs or {})}
    job = build_job(IR2RConfig(split=split, **cfg), seed=seed, fmt=fmt, inputs=Inputs(where))
    return Built(run_job(job, out, ExecutionOptions(workers=workers)), job)


# -- IR2R-CE: VLN-CE episodes and a test oracle -----------------------------------------------


class WalledOracle:
    """Euclidean distances, except that a wall at x = 5 cannot be crossed (inf)."""

    name = "walled"

    def distances(self, sources: Sequence[Any], targets: Sequence[Any]) -> np.ndarray:
        a, b = np.asarray(sources, float), np.asarray(targets, float)
        d = np.linalg.norm(a[:, None] - b[None], axis=-1)
        d[(a[:, None, 0] < 5) != (b[None, :, 0] < 5)] = np.inf
        return d


def vlnce_episode(eid: int, traj: int, scene: str, start: list[float], goal: list[float]) -> dict:
    return {
        "episode_id": eid,
        "trajectory_id": traj,
        "scene_id": f"mp3d/{scene}/{scene}.glb",
        "start_position": start,
        "start_rotation": [0, 0, 0, 1],
        "goals": [{"position": goal, "radius": 3.0}],
        "reference_path": [start, goal],
        "instruction": {"instruction_text": f"go {eid}"},
    }


def write_vlnce(
    path: Path, scene_a: str = "sceneA", scene_b: str = "sceneB", first_id: int = 100
) -> Path:
    """VLN-CE episodes: trajectories 1-3 west of the wall in ``scene_a`` (2 or 3 episodes each),
    trajectory 4 alone east of it (dropped), and ``scene_b`` with one trajectory (dropped)."""
    eps = []
    eid = first_id
    # scene A: trajectories 1-3 west of the wall, trajectory 4 alone east of it (dropped).
    for traj, (start, goal) in {
        1: ([0, 0, 0], [1, 0, 0]),
        2: ([4, 0, 0], [3, 0, 0]),
        3: ([2, 0, 1], [2, 0, 3]),
        4: ([8, 0, 0], [9, 0, 0]),
    }.items():
        for _ in range(3 if traj != 3 else 2):
            eps.append(vlnce_episode(eid, traj, scene_a, start, goal))
            eid += 1
    # scene B: one trajectory only (dropped like a one-path scan).
    eps.append(vlnce_episode(eid, 9, scene_b, [0, 0, 0], [1, 0, 0]))
    path.write_bytes(gzip.compress(json.dumps({"episodes": eps}).encode()))
    return path
