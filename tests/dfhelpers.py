"""Test helpers: small real datasets written through the public API, and CLI runners."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.store import ArraySpec, DatasetWriter, Episode, Schema

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def family_schema() -> Schema:
    """Every dtype family and shape family the store supports."""
    return Schema(
        {
            "rgb": ArraySpec("uint8", (None, 12, 16, 3), kind="rgb", shard_rows=4),
            "depth": ArraySpec("float32", (None, 12, 16), kind="depth", units="m"),
            "depth_mm": ArraySpec("uint16", (None, 12, 16), kind="depth", units="mm"),
            "instance": ArraySpec("int32", (None, 12, 16), kind="mask"),
            "semantic": ArraySpec("uint8", (None, 12, 16), kind="mask", codec="blosc-zstd"),
            "pose": ArraySpec("float64", (None, 4, 4), units="m"),
            "action": ArraySpec("float16", (None, 7)),
            "joint": ArraySpec("int16", (None, 2), codec="none"),
            "step": ArraySpec("int64", (None,)),
            "count": ArraySpec("uint32", (None, 3)),
            "big": ArraySpec("uint64", (None,)),
            "tiny": ArraySpec("int8", (None, 1)),
            "done": ArraySpec("bool", (None,)),
            "intrinsics": ArraySpec("float64", (3, 3), units="px"),
        }
    )


def family_episode(rng: np.random.Generator, episode_id: str, frames: int) -> Episode:
    t = frames
    arrays: dict[str, Any] = {
        "rgb": rng.integers(0, 256, (t, 12, 16, 3), dtype=np.uint8),
        "depth": rng.uniform(0.1, 9.0, (t, 12, 16)).astype(np.float32),
        "depth_mm": rng.integers(0, 65535, (t, 12, 16), dtype=np.uint16),
        "instance": rng.integers(-5, 1 << 20, (t, 12, 16), dtype=np.int32),
        "semantic": rng.integers(0, 40, (t, 12, 16), dtype=np.uint8),
        "pose": rng.normal(size=(t, 4, 4)),
        "action": rng.normal(size=(t, 7)).astype(np.float16),
        "joint": rng.integers(-30000, 30000, (t, 2), dtype=np.int16),
        "step": np.arange(t, dtype=np.int64) - 3,
        "count": rng.integers(0, 1 << 31, (t, 3), dtype=np.uint32),
        "big": rng.integers(0, 1 << 62, (t,), dtype=np.uint64),
        "tiny": rng.integers(-128, 127, (t, 1), dtype=np.int8),
        "done": rng.random(t) < 0.3,
        "intrinsics": np.array([[50.0, 0, 8], [0, 50.0, 6], [0, 0, 1]]) + rng.normal(size=(3, 3)),
    }
    meta = {"frames": t, "note": "é ünïcode", "nested": {"a": [1, 2.5, None, True]}}
    return Episode(episode_id, arrays, meta)


FAMILY_UNITS = {"unit-a": [5, 0, 9], "unit-b": [1], "unit-c": [13, 2]}


def write_family(root: Path, fmt: str, seed: int = 7) -> dict[str, Episode]:
    """Write the family dataset (3 units, 6 episodes incl. one of 0 frames); return what was
    written, by episode id."""
    rng = np.random.default_rng(seed)
    written: dict[str, Episode] = {}
    with DatasetWriter(
        root,
        schema=family_schema(),
        name="family",
        fmt=fmt,
        seed=seed,
        units=list(FAMILY_UNITS),
        config={"kind": "family"},
    ) as w:
        for unit, lengths in FAMILY_UNITS.items():
            eps = [family_episode(rng, f"{unit}/ep{i}", n) for i, n in enumerate(lengths)]
            written.update({e.id: e for e in eps})
            w.write_unit(unit, eps)
    return written


def write_small(root: Path, fmt: str, seed: int = 3) -> Path:
    """A small dataset (2 units, image, depth, pose, bool and fixed arrays) for tests that
    validate it many times."""
    schema = Schema(
        {
            "rgb": ArraySpec("uint8", (None, 6, 8, 3), kind="rgb", shard_rows=2),
            "depth": ArraySpec("float32", (None, 6, 8), kind="depth", units="m"),
            "pose": ArraySpec("float64", (None, 4, 4)),
            "done": ArraySpec("bool", (None,)),
            "k": ArraySpec("float64", (3, 3)),
        }
    )
    rng = np.random.default_rng(seed)
    with DatasetWriter(root, schema=schema, name="small", fmt=fmt, seed=seed) as w:
        for u in ("u0", "u1"):
            eps = []
            for i, t in enumerate((3, 2)):
                arrays = {
                    "rgb": rng.integers(0, 256, (t, 6, 8, 3), dtype=np.uint8),
                    "depth": rng.uniform(0.5, 4, (t, 6, 8)).astype(np.float32),
                    "pose": rng.normal(size=(t, 4, 4)),
                    "done": rng.random(t) < 0.5,
                    "k": np.eye(3) * (i + 1),
                }
                eps.append(Episode(f"{u}/e{i}", arrays, {"i": i}))
            w.write_unit(u, eps)
    return root


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (the state a failed command must not change)."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = Path(dirpath, f)
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def assert_same_files(a: Path, b: Path) -> None:
    """Two runs of one command wrote the same files, byte for byte, but for ``manifest.json``
    (which records when and where each ran)."""
    first, second = tree_digest(a), tree_digest(b)
    assert first.keys() == second.keys()
    differ = [k for k in first if first[k] != second[k] and k != "manifest.json"]
    assert not differ, differ


def dataforge_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "dataforge.cli.main", *args]


def run_cli(
    *args: str, timeout: float = 300, env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess[str]:
    """Run the real ``dataforge`` command in a subprocess (environment: ``env``, default this
    process's)."""
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    env.pop("DATAFORGE_DEBUG", None)
    return subprocess.run(
        dataforge_cmd(*args), capture_output=True, text=True, timeout=timeout, env=env, **kw
    )


def synthetic_args(out: Path, *extra: str, scenes: int = 3) -> list[str]:
    return [
        "synthetic",
        "generate",
        "--scenes",
        str(scenes),
        "--episodes-per-scene",
        "2",
        "--frames",
        "4",
        "--resolution",
        "48x36",
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def needs_house_generator() -> Any:
    """A skip mark for tests that run procthor's generator (the ``procthor`` extra)."""
    import pytest

    from dataforge.errors import MissingDependencyError
    from dataforge.world.procgen import require_generator

    try:
        require_generator()
        missing = False
    except MissingDependencyError:
        missing = True
    return pytest.mark.skipif(
        missing, reason="needs the procthor extra: pip install 'dataforge[procthor]'"
    )


def needs_maniskill() -> Any:
    """A skip mark for tests that run ManiSkill (the ``robomme`` extra and a Vulkan driver).

    With ``DATAFORGE_REQUIRE_SIM=1`` (set by ``make test``, which installs both) a missing
    simulator is an error instead of a skip, so CI cannot silently skip these tests."""
    import pytest

    from dataforge.errors import MissingDependencyError
    from dataforge.manip.vulkan import ensure_vulkan
    from dataforge.pipelines.robomme.sim import require_sim

    reason = None
    try:
        require_sim()
        if (
            ensure_vulkan() is None
            and not Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json").exists()
        ):
            reason = "needs a Vulkan driver for ManiSkill: make vulkan"
    except MissingDependencyError:
        reason = "needs the robomme extra: pip install 'dataforge[robomme]'"
    if reason and os.environ.get("DATAFORGE_REQUIRE_SIM") == "1":
        raise RuntimeError(f"DATAFORGE_REQUIRE_SIM=1 but the simulator is missing: {reason}")
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def skip_module_without_maniskill() -> None:
    """Call at the top of a test module that imports SAPIEN-based code: skips the module
    unless ManiSkill and a Vulkan driver are there (fails instead with
    ``DATAFORGE_REQUIRE_SIM=1``, as :func:`needs_maniskill`)."""
    import pytest

    mark = needs_maniskill()
    if mark.args[0]:
        pytest.skip(mark.kwargs["reason"], allow_module_level=True)


def ray_runtime_env_vars() -> dict[str, str]:
    """The ``env_vars`` of the runtime env a RayExecutor passes to ``ray.init`` (through a fake
    ray that only records its arguments): what every Ray worker gets."""
    from dataforge.run.executors import RayExecutor

    seen: dict[str, Any] = {}

    class FakeRay:
        def is_initialized(self) -> bool:
            return False

        def init(self, **kw: object) -> None:
            seen.update(kw)

    ex = RayExecutor(workers=1)
    ex._ray = FakeRay()
    ex._init()
    return dict(seen["runtime_env"]["env_vars"])
