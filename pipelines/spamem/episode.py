"""A captured sequence as a stored episode, and reading it back (graphs at any step)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from dataforge.pipelines.spamem.capture import CaptureSettings
from dataforge.pipelines.spamem.sequence import SequenceRun
from dataforge.render.camera import intrinsics
from dataforge.store import Episode
from dataforge.world.graph import apply_graph_diff, graph_diff


def json_bytes(value: object) -> bytes:
    """Compact, key-sorted JSON (what the byte arrays hold)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def sequence_episode(
    eid: str,
    run: SequenceRun,
    settings: CaptureSettings,
    house_json: bytes,
    instances: Mapping[str, int],
    *,
    metadata: Mapping[str, Any],
) -> Episode:
    from dataforge.world.assets import load_catalogue
    from dataforge.world.scene import SemanticTable

    caps = run.captures
    views = settings.views
    box2d = [
        np.column_stack([np.full(len(b), s * views + v), b]).astype(np.int32)
        for s, cap in enumerate(caps)
        for v, b in enumerate(cap.boxes)
    ]
    box3d = [
        np.column_stack([np.full(len(b), s), b]).astype(np.float32)
        for s, b in enumerate(run.boxes3d)
    ]
    docs = [json_bytes(run.graphs[0])] + [
        json_bytes(graph_diff(run.graphs[s - 1], run.graphs[s])) for s in range(1, len(run.graphs))
    ]
    offsets = np.cumsum([0] + [len(d) for d in docs])
    arrays = {
        **run.frames.arrays(),
        "intrinsics": intrinsics(settings.width, settings.height, settings.fov).astype(np.float32),
        "box2d": np.concatenate(box2d).reshape(-1, 7),
        "box3d": np.concatenate(box3d).reshape(-1, 11),
        "graphs": np.frombuffer(b"".join(docs), np.uint8),
        "graph_index": np.column_stack([offsets[:-1], np.diff(offsets)]).astype(np.int64),
        "house_json": np.frombuffer(house_json, np.uint8),
        "planner_log": np.frombuffer(json_bytes(run.log), np.uint8),
    }
    semantics = SemanticTable.for_catalogue(load_catalogue()).to_dict()
    meta = {
        **metadata,
        "states": len(caps),
        "views_per_state": views,
        "actions": len(caps) - 1,
        "ended_early": run.ended_early,
        "capture": settings.to_dict(),
        "steps": run.steps,
        "viewpoints": [[vp.to_dict() for vp in c.viewpoints] for c in caps],
        "instances": sorted([i, key] for key, i in instances.items()),
        "classes": semantics,
    }
    return Episode(eid, arrays, meta)


def graph_docs(graphs: np.ndarray, index: np.ndarray) -> list[dict[str, Any]]:
    """The stored graph documents (step 0 full, then diffs)."""
    raw = np.asarray(graphs, np.uint8).tobytes()
    return [json.loads(raw[int(o) : int(o) + int(n)]) for o, n in np.asarray(index)]


def graphs_by_step(graphs: np.ndarray, index: np.ndarray) -> list[dict[str, Any]]:
    """The full world graph (dict) of every captured step."""
    docs = graph_docs(graphs, index)
    out = [docs[0]]
    for diff in docs[1:]:
        out.append(apply_graph_diff(out[-1], diff))
    return out


def graph_at(ep: Any, step: int) -> dict[str, Any]:
    """The full world graph of captured ``step`` of a stored episode."""
    return graphs_by_step(ep["graphs"].read(), ep["graph_index"].read())[step]


def instance_keys(meta: Mapping[str, Any]) -> dict[int, str]:
    """Instance id -> element key (an object or wall id, ``floor:<room>``, ``ceiling:<room>``)."""
    return {int(i): str(k) for i, k in meta["instances"]}
