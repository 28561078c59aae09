"""``dataforge view DIR --episode ID --out x.rrd``: one episode as a Rerun recording.

Written with the Rerun SDK (the ``rerun`` extra: rerun-sdk 0.22.1, the last release that works
with the core's numpy < 2), read by the Rerun viewer (``rerun x.rrd``) of that version or newer.
What is logged, from the dataset's schema, on the timeline ``frame`` (the row of the episode's
time-indexed arrays as long as its first image array; ``--every N`` keeps every N-th):

- ``world/camera/<name>``: each ``rgb`` array as an image, each ``depth`` array as a depth image
  (its ``units``: m or mm), each ``mask`` array as a segmentation image;
- ``world/camera``: the camera's pose, where the episode has a ``pose`` array of 4x4
  camera-to-world matrices (OpenCV camera axes, as dataforge stores them), and its pinhole
  (``intrinsics``: 3x3, pixels) with the image size of the first image array; ``world/path``:
  the camera's positions so far, as a line strip (the agent's path);
- ``data/<name>``: every other time-indexed numeric array of at most 32 numbers a row, as
  scalar series (one per component: ``data/<name>/<k>``);
- static ``metadata``: the episode's metadata and the dataset's name, pipeline and manifest
  sha256, as a text document.

A pipeline adds its own (subgoal text, actions by name) by registering ``viewer=
"module:function"``, called as ``function(episode, recording)`` after the generic part, the
viewer setting the times it logs at (``set_time_sequence("frame", row)``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.store.manifest import manifest_sha256

if TYPE_CHECKING:
    from dataforge.store.reader import StoredEpisode

SCALAR_LIMIT = 32  # numbers a row: a longer row is not drawn as scalar series
TIMELINE = "frame"


def require_rerun() -> Any:
    try:
        import rerun
    except ImportError:
        raise MissingDependencyError(
            "dataforge view needs the Rerun SDK: pip install 'dataforge[rerun]'"
        ) from None
    return rerun


def episode_length(ep: StoredEpisode) -> int:
    """The rows of the timeline: those of the episode's first time-indexed image array (its
    frames), else of its longest time-indexed array. Arrays of another length (RoboMME's
    per-simulation-step states) are not logged."""
    timed = [(n, spec) for n, spec in ep.dataset.schema.items() if spec.shape[0] is None]
    for name, spec in timed:
        if spec.kind in ("rgb", "depth", "mask"):
            return len(ep[name])
    return max((len(ep[n]) for n, _ in timed), default=0)


def write_recording(
    ep: StoredEpisode,
    out: Path,
    *,
    every: int = 1,
    viewer: Callable[[StoredEpisode, Any], None] | None = None,
) -> dict[str, Any]:
    """Log ``ep`` into the Rerun file ``out`` (see the module docstring); returns what was
    logged: entity paths and rows."""
    rr = require_rerun()
    if every < 1:
        raise UsageError(f"--every {every}: give a positive integer")
    schema = ep.dataset.schema
    n = episode_length(ep)
    rows = list(range(0, n, every))
    timed = {
        name: spec
        for name, spec in schema.items()
        if spec.shape[0] is None and len(ep[name]) == n and n > 0
    }
    images = {k: s for k, s in timed.items() if s.kind in ("rgb", "depth", "mask")}
    scalars = {
        k: s
        for k, s in timed.items()
        if s.kind == "data"
        and k != "pose"
        and np.dtype(s.dtype).kind in "biuf"
        and int(np.prod(s.trailing)) <= SCALAR_LIMIT
    }
    has_pose = "pose" in timed and tuple(timed["pose"].trailing) == (4, 4)
    manifest = ep.dataset.manifest
    rec = rr.new_recording(f"dataforge/{manifest.pipeline}", recording_id=ep.id)
    rec.save(str(out))
    source = {
        "dataset": manifest.name,
        "pipeline": manifest.pipeline,
        "manifest_sha256": manifest_sha256(ep.dataset.root),
        "episode": ep.id,
    }
    doc = json.dumps({"source": source, "metadata": ep.metadata}, indent=1, sort_keys=True)
    rec.log("metadata", rr.TextDocument(doc), static=True)
    rec.log("world", rr.ViewCoordinates.RIGHT_HAND_Y_UP, static=True)
    if has_pose and "intrinsics" in schema and images:
        intrinsics = np.asarray(ep["intrinsics"].read(), dtype=np.float64).reshape(3, 3)
        first = next(iter(images))
        h, w = (int(x) for x in schema[first].trailing[:2])
        rec.log(
            "world/camera", rr.Pinhole(image_from_camera=intrinsics, width=w, height=h), static=True
        )
    logged: dict[str, int] = {}
    path: list[np.ndarray] = []
    # the small arrays whole, once (a row read decodes its chunk: per row it would be T times)
    poses = np.asarray(ep["pose"].read(), dtype=np.float64) if has_pose else None
    series = {name: np.asarray(ep[name].read(), dtype=np.float64) for name in scalars}
    for t in rows:
        rec.set_time_sequence(TIMELINE, t)
        if poses is not None:
            pose = poses[t]
            rec.log("world/camera", rr.Transform3D(translation=pose[:3, 3], mat3x3=pose[:3, :3]))
            path.append(pose[:3, 3])
            rec.log("world/path", rr.LineStrips3D([np.asarray(path)]))
        for name, spec in images.items():
            value = np.asarray(ep[name][t])
            entity = f"world/camera/{name}" if has_pose else f"camera/{name}"
            if spec.kind == "rgb":
                rec.log(entity, rr.Image(np.ascontiguousarray(value[..., :3])))
            elif spec.kind == "depth":
                meter = 1000.0 if spec.units == "mm" else 1.0
                rec.log(entity, rr.DepthImage(value, meter=meter))
            else:
                rec.log(entity, rr.SegmentationImage(value))
            logged[entity] = logged.get(entity, 0) + 1
        for name, values in series.items():
            flat = values[t].reshape(-1)
            for k, v in enumerate(flat):
                entity = f"data/{name}" if flat.size == 1 else f"data/{name}/{k}"
                rec.log(entity, rr.Scalar(float(v)))
                logged[entity] = logged.get(entity, 0) + 1
    if viewer is not None:
        viewer(ep, rec)
    rec.flush()
    rec.disconnect()
    return {"rows": len(rows), "entities": logged, "source": source}
