"""Helpers for the RoboMME task tests (importable: tests/ is on pythonpath). Fixtures are in
tests/pipelines/robomme/conftest.py."""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

from dataforge import numerics
from dataforge.manip.executor import Executor


def run(env: Any, plan: Any) -> Any:
    """Execute ``plan`` (subgoals) on ``env`` without noise; returns the recording."""
    return Executor(env, rng=np.random.default_rng(0)).run(plan)


# -- the upstream-recorded fixture: RoboMME's initial scenes of the released val records -------
FIXTURE = (
    Path(__file__).parent / "pipelines" / "robomme" / "fixtures" / "upstream_val_initial.json.gz"
)
POS_M, ROT_RAD = 1e-3, 0.01  # the tolerance: 1 mm, 0.01 rad


MKL_AVX512_FIXTURE = FIXTURE.with_name("upstream_val_initial_mkl_avx512.json.gz")
NUMPY_AVX2_FIXTURE = FIXTURE.with_name("upstream_val_initial_numpy_avx2.json.gz")


@functools.cache
def load_fixture(path: Path) -> dict[str, Any]:
    """``{"header", "records"}`` recorded by scripts/robomme_upstream_fixture.py."""
    with gzip.open(path, "rt") as f:
        return json.load(f)


@functools.cache
def upstream_fixture() -> dict[str, Any]:
    """The upstream envs' scenes of the 800 released val records as this machine computes them
    (dataforge pins MKL's path, not numpy's loops; docs/robomme_upstream.md, section 8): the
    main fixture (numpy's AVX-512 loops, the release's), or on a CPU without AVX-512 the main
    fixture with the records that numpy's AVX2 loops lay out differently replaced by upstream's
    on those loops."""
    data = load_fixture(FIXTURE)
    if numerics.numpy_avx512():
        return data
    other = {(r["task"], r["episode"]): r for r in load_fixture(NUMPY_AVX2_FIXTURE)["records"]}
    records = [other.get((r["task"], r["episode"]), r) for r in data["records"]]
    return {"header": data["header"], "records": records}


def upstream_record(task: str, episode: int) -> dict[str, Any]:
    """The fixture's record of val episode ``episode`` of ``task``."""
    return next(
        r for r in upstream_fixture()["records"] if r["task"] == task and r["episode"] == episode
    )


def reset_as_released(make: Any, rec: dict[str, Any]) -> Any:
    """The env of ``rec``'s task reset to its seed as upstream's harness made the recorded
    scene (the recovery kwargs on for metadata episodes 0-5)."""
    from dataforge.pipelines.robomme.recovery import recovery_mode

    env = make(rec["task"], rec["difficulty"], rec["seed"])
    on = upstream_fixture()["header"]["recovery_kwargs_for_episodes_0_5"]
    env.reset(
        seed=rec["seed"],
        options={"recovery": recovery_mode(rec["task"], rec["episode"]) if on else None},
    )
    return env


def pose7(x: Any) -> np.ndarray:
    """[x, y, z, qw, qx, qy, qz] of an actor, articulation, ManiSkill pose or sequence."""
    if hasattr(x, "raw_pose"):
        return x.raw_pose[0].cpu().numpy().astype(np.float64)
    if hasattr(x, "pose"):
        return pose7(x.pose)
    return np.asarray(x, dtype=np.float64)


def assert_pose(what: str, ours: Any, want: Any) -> None:
    """Position within 1 mm, rotation within 0.01 rad (sign-free quaternion angle)."""
    p, w = pose7(ours), pose7(want)
    assert np.abs(p[:3] - w[:3]).max() <= POS_M, f"{what}: {p[:3]} vs {w[:3]}"
    dot = abs(float(np.dot(p[3:] / np.linalg.norm(p[3:]), w[3:] / np.linalg.norm(w[3:]))))
    assert 2 * np.arccos(min(1.0, dot)) <= ROT_RAD, f"{what}: {p[3:]} vs {w[3:]}"
