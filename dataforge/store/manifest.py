"""``manifest.json``: what a dataset is, how it was made, and the sha256 of every file.

The manifest is written last, atomically, and only references committed shards. It carries its own
digest (``manifest_sha256``: the sha256 of the file's bytes with that digest replaced by zeros), so
a changed byte anywhere in it is detected too.

Fields that vary with how a run was executed (``command``, ``execution``, ``environment``) are
recorded for provenance but kept out of ``config_hash``; the data files, ``episodes.csv`` and
``croissant.json`` are byte-identical for the same config and seed whatever the executor.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from dataforge.errors import DatasetError, FormatVersionError
from dataforge.store.atomic import atomic_write_text
from dataforge.store.episode import EpisodeLocation
from dataforge.store.hashing import FileEntry, read_inside
from dataforge.store.layout import FORMAT_VERSION, MANIFEST, entry_kind, path_problem
from dataforge.store.schema import Schema

_DIGEST_KEY = "manifest_sha256"
_DIGEST_RE = re.compile(rb'"manifest_sha256": "([0-9a-f]{64})"')
_ZEROS = "0" * 64


def config_hash(payload: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of what determines a dataset's content."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class ShardEntry:
    unit: str
    path: str
    episodes: int

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "path": self.path, "episodes": self.episodes}


@dataclass(frozen=True)
class Manifest:
    """Everything ``validate``, ``inspect`` and readers need to know about a dataset."""

    name: str
    pipeline: str
    dataforge_version: str
    format: str
    seed: int
    config: Mapping[str, Any]
    config_hash: str
    schema: Schema
    shards: tuple[ShardEntry, ...]
    episodes: Mapping[str, EpisodeLocation]
    files: Mapping[str, FileEntry]
    command: tuple[str, ...] = ()
    execution: Mapping[str, Any] = field(default_factory=dict)
    environment: Mapping[str, Any] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION
    # external input files the run read: {"files": {"<location>:<path>": sha256},
    # "locations": {location: path on the machine that ran it}}; empty when none
    inputs: Mapping[str, Any] = field(default_factory=dict)
    # a curated dataset's provenance (dataforge.curate: the operation and its settings; each
    # parent is an input, its manifest.json hashed); empty (and not written) when generated
    curation: Mapping[str, Any] = field(default_factory=dict)

    @property
    def episode_ids(self) -> list[str]:
        return list(self.episodes)

    @cached_property
    def shard_paths(self) -> frozenset[str]:
        return frozenset(s.path for s in self.shards)

    def shard_of(self, rel: str) -> str | None:
        """The path of the shard that the listed file ``rel`` belongs to (an HDF5 shard file,
        or a file in a Zarr shard's folder); None for files beside the shards."""
        parts = rel.split("/")
        prefixes = ("/".join(parts[:k]) for k in range(1, len(parts) + 1))
        return next((p for p in prefixes if p in self.shard_paths), None)

    def files_by_shard(self) -> dict[str, dict[str, FileEntry]]:
        """Every shard's listed files, by shard path (one pass over the files)."""
        out: dict[str, dict[str, FileEntry]] = {s.path: {} for s in self.shards}
        for rel, entry in self.files.items():
            if (shard := self.shard_of(rel)) is not None:
                out[shard][rel] = entry
        return out

    def to_dict(self) -> dict[str, Any]:
        curation = {"curation": dict(self.curation)} if self.curation else {}
        return {
            "format_version": self.format_version,
            "name": self.name,
            "pipeline": self.pipeline,
            "dataforge_version": self.dataforge_version,
            "format": self.format,
            "seed": self.seed,
            "config": dict(self.config),
            "config_hash": self.config_hash,
            "command": list(self.command),
            "execution": dict(self.execution),
            "environment": dict(self.environment),
            "schema": self.schema.to_dict(),
            "summary": dict(self.summary),
            "inputs": dict(self.inputs),
            **curation,
            "shards": [s.to_dict() for s in self.shards],
            "episodes": {k: v.to_dict() for k, v in self.episodes.items()},
            "files": {k: v.to_dict() for k, v in self.files.items()},
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Manifest:
        """Parse a manifest; ``DatasetError`` names the first malformed field or unsafe path."""
        version = d.get("format_version")
        if not isinstance(version, int):
            raise DatasetError("manifest.json has no integer 'format_version'")
        if version > FORMAT_VERSION:
            raise FormatVersionError(
                f"dataset format version {version} is newer than this dataforge reads "
                f"({FORMAT_VERSION}): upgrade dataforge (pip install -U dataforge)"
            )
        if problems := path_problems(d):
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise DatasetError(f"{MANIFEST}: {problems[0]}{more}")
        try:
            return cls(
                name=str(d["name"]),
                pipeline=str(d["pipeline"]),
                dataforge_version=str(d["dataforge_version"]),
                format=str(d["format"]),
                seed=int(d["seed"]),
                config=dict(d["config"]),
                config_hash=str(d["config_hash"]),
                schema=Schema.from_dict(d["schema"]),
                shards=tuple(
                    ShardEntry(str(s["unit"]), str(s["path"]), int(s["episodes"]))
                    for s in d["shards"]
                ),
                episodes={k: EpisodeLocation.from_dict(k, v) for k, v in d["episodes"].items()},
                files={k: FileEntry.from_dict(v) for k, v in d["files"].items()},
                command=tuple(d.get("command", ())),
                execution=dict(d.get("execution", {})),
                environment=dict(d.get("environment", {})),
                summary=dict(d.get("summary", {})),
                format_version=version,
                inputs=dict(d.get("inputs", {})),
                curation=dict(d.get("curation", {})),
            )
        except KeyError as exc:
            raise DatasetError(f"manifest.json lacks the field {exc.args[0]!r}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise DatasetError(f"manifest.json has a malformed field: {exc}") from None


def path_problems(d: Mapping[str, Any]) -> list[str]:
    """Every path the manifest ``d`` records (shard paths, ``files`` keys, episodes' shards)
    that is not a safe path inside the dataset directory (``layout.path_problem``), one message
    each. A manifest is untrusted input: nothing it names may lead out of its directory.
    Malformed structure is left to :meth:`Manifest.from_dict`."""
    out: list[str] = []
    shards = d.get("shards")
    for s in shards if isinstance(shards, list) else ():
        why = path_problem(s["path"]) if isinstance(s, Mapping) and "path" in s else None
        if why is not None:
            out.append(f"unsafe shard path {s['path']!r} (unit {s.get('unit')!r}): it {why}")
    files = d.get("files")
    for rel in files if isinstance(files, Mapping) else ():
        if (why := path_problem(rel)) is not None:
            out.append(f"unsafe path {rel!r} in 'files': it {why}")
    episodes = d.get("episodes")
    for eid, loc in episodes.items() if isinstance(episodes, Mapping) else ():
        why = path_problem(loc["shard"]) if isinstance(loc, Mapping) and "shard" in loc else None
        if why is not None:
            out.append(f"unsafe shard path {loc['shard']!r} of episode {eid!r}: it {why}")
    return out


def manifest_bytes(manifest: Manifest) -> bytes:
    """Serialise with the self-digest filled in."""
    body = manifest.to_dict()
    body[_DIGEST_KEY] = _ZEROS
    text = json.dumps(body, indent=1, allow_nan=False) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()
    head, _, tail = text.rpartition(f'"{_DIGEST_KEY}": "{_ZEROS}"')
    return (head + f'"{_DIGEST_KEY}": "{digest}"' + tail).encode()


def manifest_sha256(root: Path | str) -> str:
    """The sha256 of a dataset's ``manifest.json`` as stored: the one digest that stands for
    every file of the dataset (what derived datasets, curations and exports record)."""
    return hashlib.sha256((Path(root) / MANIFEST).read_bytes()).hexdigest()


def write_manifest(root: Path, manifest: Manifest) -> None:
    atomic_write_text(Path(root) / MANIFEST, manifest_bytes(manifest).decode())


def check_digest(raw: bytes) -> str | None:
    """None if the manifest's bytes match its self-digest, else what is wrong."""
    matches = list(_DIGEST_RE.finditer(raw))
    if not matches:
        return "manifest.json has no manifest_sha256 digest (altered or not written by dataforge)"
    m = matches[-1]
    blanked = raw[: m.start(1)] + _ZEROS.encode() + raw[m.end(1) :]
    if hashlib.sha256(blanked).hexdigest() != m.group(1).decode():
        return "manifest.json was altered: its bytes do not match its manifest_sha256 digest"
    return None


def read_manifest(root: Path, *, verify: bool = False) -> Manifest:
    """Load ``root/manifest.json``; with ``verify`` also check its self-digest."""
    path = Path(root) / MANIFEST
    if not Path(root).is_dir():
        raise DatasetError(f"{root} is not a directory")
    kind = entry_kind(path)
    if kind is None:
        raise DatasetError(f"{root} is not a dataforge dataset: {MANIFEST} is missing")
    if kind == "link":
        raise DatasetError(
            f"{path} is a symbolic link: a dataset holds only regular files (links are not "
            "followed)"
        )
    if kind != "file":
        raise DatasetError(f"{path} is not a regular file")
    try:
        raw = read_inside(Path(root), MANIFEST)
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror}") from None
    if verify and (problem := check_digest(raw)):
        raise DatasetError(problem)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{path} does not hold a JSON object")
    return Manifest.from_dict(data)
