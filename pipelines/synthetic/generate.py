"""Synthetic sphere scenes: a small, real generation that exercises the whole store and run
machinery before any benchmark pipeline is needed (``make demo`` and the shared tests use it).

Inputs
    none: scenes are sampled from the seed.
Randomization and seeds
    one work unit per scene (``scene-0000`` ...); the unit's stream (global seed + unit id) draws
    the spheres, then each episode's camera orbit in order.
Outputs
    per episode: ``rgb`` T×H×W×3 uint8, ``depth`` T×H×W float32 (m), ``instance`` T×H×W int32
    (0 sky, 1 floor, 2.. spheres), ``semantic`` T×H×W uint8 (class ids), ``pose`` T×4×4 float64
    (camera-to-world), ``intrinsics`` 3×3 float64, ``visible`` T×S bool (sphere k in view);
    metadata: the spheres (instance, class, centre, radius, colour) and class names.
Invariants checked by validate
    poses are rigid; every sampled depth pixel unprojects onto the surface its instance names;
    semantic equals the class of the instance; ``visible`` matches the instance mask.
Where it departs from a paper
    it follows none: it is the store's test and demo pipeline, not a benchmark.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

from dataforge.inputs import Inputs
from dataforge.pipelines.synthetic.config import CLASSES, SyntheticConfig
from dataforge.pipelines.synthetic.scene import intrinsics, orbit, random_scene, render
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema

PIPELINE = "synthetic"


def schema(cfg: SyntheticConfig) -> Schema:
    h, w = cfg.height, cfg.width
    return Schema(
        {
            "rgb": ArraySpec("uint8", (None, h, w, 3), kind="rgb", description="colour image"),
            "depth": ArraySpec(
                "float32",
                (None, h, w),
                kind="depth",
                units="m",
                description="z-depth, 0 where nothing is hit",
            ),
            "instance": ArraySpec(
                "int32",
                (None, h, w),
                kind="mask",
                description="instance id: 0 sky, 1 floor, 2.. spheres",
            ),
            "semantic": ArraySpec(
                "uint8",
                (None, h, w),
                kind="mask",
                description="class id, names in metadata['classes']",
            ),
            "pose": ArraySpec(
                "float64",
                (None, 4, 4),
                units="m",
                description="camera-to-world, OpenCV camera axes, y-up world",
            ),
            "intrinsics": ArraySpec("float64", (3, 3), description="pinhole K in pixels"),
            "visible": ArraySpec(
                "bool",
                (None, cfg.spheres),
                description="sphere k (instance k+2) has pixels in the frame",
            ),
        }
    )


def produce(cfg: SyntheticConfig, unit: WorkUnit, rng: np.random.Generator) -> Iterator[Episode]:
    spheres = random_scene(rng, cfg.spheres)
    K = intrinsics(cfg.width, cfg.height, cfg.hfov_deg)
    for e in range(cfg.episodes_per_scene):
        poses = orbit(rng, cfg.frames)
        frames = [render(spheres, p, K, cfg.width, cfg.height) for p in poses]
        stacked = {k: np.stack([f[k] for f in frames]) for k in frames[0]}
        visible = np.zeros((cfg.frames, cfg.spheres), bool)
        for s in spheres:
            visible[:, s.instance - 2] = (stacked["instance"] == s.instance).any(axis=(1, 2))
        yield Episode(
            id=f"{unit.id}/ep-{e:03d}",
            arrays={**stacked, "pose": poses, "intrinsics": K, "visible": visible},
            metadata={
                "scene": unit.id,
                "spheres": [s.to_dict() for s in spheres],
                "classes": list(CLASSES),
            },
        )


def build_job(cfg: SyntheticConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    """The job of ``cfg`` (reads no inputs)."""
    units = tuple(WorkUnit(f"scene-{i:04d}", {"index": i}) for i in range(cfg.scenes))
    return Job(
        pipeline=PIPELINE,
        name=f"synthetic-{cfg.scenes}x{cfg.episodes_per_scene}",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(cfg),
        units=units,
        produce=functools.partial(produce, cfg),
        description="Synthetic sphere scenes (RGB, depth, instance, semantic, poses) generated "
        "by dataforge's test and demo pipeline.",
        license_url="https://www.apache.org/licenses/LICENSE-2.0",
        citation="dataforge synthetic scenes (the dataforge project's test and demo pipeline)",
    )
