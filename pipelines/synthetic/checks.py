"""Invariants and statistics of synthetic datasets (registered in ``__init__``)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from dataforge.pipelines.synthetic.config import FLOOR_ID
from dataforge.pipelines.synthetic.scene import unproject
from dataforge.registry import PipelineStats
from dataforge.store.reader import Dataset, StoredEpisode

SURFACE_TOL_M = 2e-3
SAMPLES_PER_FRAME = 64

INVARIANTS = {
    "rigid-pose": "pose is a rigid transform (orthonormal rotation, det +1, last row 0 0 0 1)",
    "depth-on-surface": "depth pixels unproject onto the surface their instance id names "
    "(sphere or floor)",
    "sky-depth": "depth is 0 exactly where the instance is 0 (sky)",
    "semantic-class": "semantic equals the class of the instance",
    "visible-mask": "visible[t, k] is true exactly when instance k+2 has pixels in frame t",
}


def check_episode(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    arr = ep.read()
    meta = ep.metadata
    spheres = {s["instance"]: s for s in meta["spheres"]}
    poses, K = arr["pose"], arr["intrinsics"]
    for t, pose in enumerate(poses):
        R = pose[:3, :3]
        if not (
            np.allclose(R.T @ R, np.eye(3), atol=1e-6)
            and np.isclose(np.linalg.det(R), 1.0)
            and np.allclose(pose[3], [0, 0, 0, 1])
        ):
            yield "rigid-pose", f"frame {t}: pose is not a rigid transform"
    rng = np.random.default_rng(0)  # fixed: the same pixels are checked every time
    for t in range(len(poses)):
        pose, depth = poses[t], arr["depth"][t]
        inst, sem = arr["instance"][t], arr["semantic"][t]
        sky = inst == 0
        if np.any((depth == 0) != sky):
            yield (
                "sky-depth",
                f"frame {t}: depth is 0 at {int(np.sum((depth == 0) != sky))} pixels "
                "that are not sky (or non-zero on sky)",
            )
        vs, us = np.nonzero(~sky)
        if len(us):
            pick = rng.choice(len(us), size=min(SAMPLES_PER_FRAME, len(us)), replace=False)
            u, v = us[pick], vs[pick]
            pts = unproject(depth, K, pose, u, v)
            ids = inst[v, u]
            for p, i, uu, vv in zip(pts, ids, u, v, strict=True):
                if i == FLOOR_ID:
                    err = abs(p[1])
                elif int(i) in spheres:
                    s = spheres[int(i)]
                    err = abs(np.linalg.norm(p - np.array(s["center"])) - s["radius"])
                else:
                    msg = f"frame {t}: pixel ({uu},{vv}) has unknown instance {int(i)}"
                    yield "depth-on-surface", msg
                    continue
                if err > SURFACE_TOL_M:
                    yield (
                        "depth-on-surface",
                        f"frame {t}: pixel ({uu},{vv}) of instance {int(i)} unprojects "
                        f"{err * 1000:.1f} mm off its surface",
                    )
                    break
        expected = np.zeros(max(spheres, default=1) + 1, np.int64)
        expected[FLOOR_ID] = FLOOR_ID
        for i, s in spheres.items():
            expected[i] = s["label"]
        if np.any(sem != expected[inst]):
            yield "semantic-class", f"frame {t}: semantic ids differ from the instances' classes"
        for i in spheres:
            if bool(arr["visible"][t, i - 2]) != bool(np.any(inst == i)):
                msg = f"frame {t}: visible flag of instance {i} does not match the mask"
                yield "visible-mask", msg


def stats(ds: Dataset) -> PipelineStats:
    scenes: set[str] = set()
    frames = 0
    coverage: list[float] = []
    distance: list[float] = []
    for ep in ds.episodes():
        scenes.add(ep.metadata["scene"])
        inst = ep["instance"].read()
        poses = ep["pose"].read()
        frames += len(inst)
        n_pix = inst.shape[1] * inst.shape[2]
        for s in ep.metadata["spheres"]:
            counts = (inst == s["instance"]).sum(axis=(1, 2))
            coverage += [100.0 * c / n_pix for c in counts if c > 0]
        distance += [float(np.linalg.norm(p[:3, 3])) for p in poses]
    return PipelineStats(
        counts={
            "scenes": len(scenes),
            "episodes": len(ds),
            "frames": frames,
            "visible sphere-frames": len(coverage),
        },
        distributions={
            "sphere pixel coverage (%)": coverage,
            "camera distance to origin (m)": distance,
        },
    )
