"""Golden checksums: proof, in CI, that the generators still make the datasets they made.

A golden record (``tests/golden/<pipeline>.json``, written by ``make golden``) holds, for a
pipeline's tiny example (``Pipeline.tiny``, run with ``--seed 0``):

- ``files``: the sha256 of every data file (all but ``manifest.json``, whose provenance differs
  between runs by design);
- ``episodes``: per episode, the sha256 of its metadata (canonical JSON) and of every decoded
  array (dtype, shape and bytes), so a mismatch names the first episode and array that differ;
- for the arrays a library does not make bit-identical across CPUs
  (``Pipeline.golden_tolerance``: array -> absolute tolerance), the per-frame mean of each
  channel instead of a sha256; the files that hold such arrays (their shard files, and the
  pipeline's ``golden_derived`` extra files, which validate checks against the stored arrays)
  are then compared through the decoded arrays only, and ``croissant.json``, which lists every
  file's sha256, without the sha256 and size of those files.

:func:`compare` returns the differences as lines that name the pipeline, the file and the first
differing episode and array, and say how to rewrite the goldens when the change is intended.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.registry import Pipeline
from dataforge.store.layout import CROISSANT
from dataforge.store.manifest import read_manifest
from dataforge.store.reader import Dataset

GOLDEN_VERSION = 1
REWRITE = "make golden"


def example_command(pipeline: Pipeline) -> list[str]:
    """The command a golden record is made with: the tiny example with ``--seed 0``."""
    if pipeline.tiny is None:
        raise ValueError(f"pipeline {pipeline.name!r} has no tiny example")
    return ["dataforge", *pipeline.command_path, *pipeline.tiny.args, "--seed", "0"]


def array_digest(a: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and C-order bytes."""
    a = np.ascontiguousarray(a)
    h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def metadata_digest(meta: Any) -> str:
    text = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def frame_means(a: np.ndarray) -> list[list[float]]:
    """Per frame (first axis), the mean of each channel (last axis; one channel for 3-D)."""
    a = np.asarray(a, dtype=np.float64)
    if a.ndim < 2:
        return [[round(float(v), 3)] for v in a.reshape(-1)]
    flat = a.reshape(a.shape[0], -1, a.shape[-1] if a.ndim >= 4 else 1)
    return [[round(float(v), 3) for v in row] for row in flat.mean(axis=1)]


def _tolerant_files(pipeline: Pipeline, manifest: Any) -> set[str]:
    """Data files holding arrays compared with a tolerance (not by sha256)."""
    tolerant = set(pipeline.golden_tolerance)
    if not tolerant:
        return set()
    out: set[str] = set()
    for rel in manifest.files:
        shard = manifest.shard_of(rel)
        if shard is not None:
            inner = rel[len(shard) :].strip("/").split("/")[0]
            if manifest.format == "hdf5" or inner in tolerant:
                out.add(rel)
        elif any(fnmatch.fnmatch(rel, pat) for pat in pipeline.golden_derived):
            out.add(rel)
    return out


def record(pipeline: Pipeline, root: Path, command: list[str]) -> dict[str, Any]:
    """The golden record of the dataset at ``root`` (made by ``command``)."""
    manifest = read_manifest(root)
    skip = _tolerant_files(pipeline, manifest)
    episodes: dict[str, Any] = {}
    with Dataset(root, manifest) as ds:
        for ep in ds.episodes():
            arrays: dict[str, Any] = {}
            for name in ds.schema:
                value = ep[name].read()
                if name in pipeline.golden_tolerance:
                    arrays[name] = {"shape": list(value.shape), "frame_means": frame_means(value)}
                else:
                    arrays[name] = array_digest(value)
            episodes[ep.id] = {"metadata": metadata_digest(ep.metadata), "arrays": arrays}
    return {
        "golden_version": GOLDEN_VERSION,
        "pipeline": pipeline.name,
        "command": command,
        "tolerance": dict(pipeline.golden_tolerance),
        "files": {
            rel: (_croissant_digest(root, skip) if rel == CROISSANT else None) or e.sha256
            for rel, e in manifest.files.items()
            if rel not in skip
        },
        "episodes": episodes,
    }


def _croissant_digest(root: Path, skip: set[str]) -> str | None:
    """sha256 of ``croissant.json`` with the sha256 and size of the files in ``skip`` (compared
    through their decoded arrays) left out, everything else in it still counting; None when it
    lists none of them (then its own sha256 is compared)."""
    meta = json.loads((root / CROISSANT).read_text())
    listed = [e for e in meta.get("distribution", []) if e.get("contentUrl") in skip]
    if not listed:
        return None
    for entry in listed:
        entry.pop("sha256", None)
        entry.pop("contentSize", None)
    text = json.dumps(meta, sort_keys=True, separators=(",", ":"))
    return "croissant-without-tolerant-files:" + hashlib.sha256(text.encode()).hexdigest()


_NUMBERS = re.compile(r"\[\n\s*(-?[\d.eE+-]+(?:,\n\s*-?[\d.eE+-]+)*)\n\s*\]")


def write(path: Path, rec: Mapping[str, Any]) -> None:
    """Indented JSON, each list of numbers on one line (a frame's means: one line)."""
    text = json.dumps(rec, indent=1, sort_keys=True)
    text = _NUMBERS.sub(lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]", text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def compare(pipeline: Pipeline, root: Path, golden: Mapping[str, Any]) -> list[str]:
    """What differs between the dataset at ``root`` and its golden record (empty: nothing)."""
    now = record(pipeline, root, list(golden.get("command", [])))
    hint = f" (if the change is intended, rewrite the goldens with '{REWRITE}' and review the diff)"
    lines: list[str] = []
    want, have = golden.get("files", {}), now["files"]
    changed = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
    first = _first_array_difference(golden.get("episodes", {}), now["episodes"], golden)
    for rel in changed:
        what = (
            "is not made any more"
            if rel not in have
            else "is new"
            if rel not in want
            else "differs (sha256)"
        )
        lines.append(f"{pipeline.name}: {rel} {what}; {first or 'no decoded array differs'}{hint}")
    if first and not changed:
        lines.append(f"{pipeline.name}: {first}{hint}")
    return lines


def _first_array_difference(
    want: Mapping[str, Any], have: Mapping[str, Any], golden: Mapping[str, Any]
) -> str | None:
    tolerance = golden.get("tolerance", {})
    for eid in list(want) + [e for e in have if e not in want]:
        if eid not in have:
            return f"episode {eid!r} is not made any more"
        if eid not in want:
            return f"episode {eid!r} is new"
        a, b = want[eid]["arrays"], have[eid]["arrays"]
        for name in list(a) + [n for n in b if n not in a]:
            if name not in a or name not in b:
                return f"array {name!r} of episode {eid!r} is {'new' if name in b else 'gone'}"
            if name in tolerance and isinstance(a[name], dict) and isinstance(b[name], dict):
                if a[name]["shape"] != b[name]["shape"]:
                    return f"array {name!r} of episode {eid!r}: shape {b[name]['shape']}"
                diff = np.abs(np.array(a[name]["frame_means"]) - np.array(b[name]["frame_means"]))
                if diff.size and diff.max() > tolerance[name]:
                    row = int(np.argmax(diff.max(axis=1)))
                    return (
                        f"first differing array: {name!r} of episode {eid!r} (frame {row}: "
                        f"mean off by {diff.max():.3f} > tolerance {tolerance[name]})"
                    )
            elif a[name] != b[name]:
                return f"first differing array: {name!r} of episode {eid!r}"
        if want[eid]["metadata"] != have[eid]["metadata"]:
            return f"the metadata of episode {eid!r} differs"
    return None
