"""``dataforge validate``: prove a dataset is complete, unaltered and consistent.

Checks, in order, each failure reported with the file or episode it concerns:

1. ``manifest.json`` parses and matches its own digest; the format version is readable.
2. Every listed file exists with its size and sha256; no file is missing; no extra file is present
   (``.dataforge/``, the run-control folder, is not data and is skipped).
3. Every shard opens and matches the schema (arrays, dtype, fixed shape, chunks, codec), and its
   own episode index agrees with the manifest's.
   The first and last row of every array decode (``deep``: every row of every episode).
4. Every episode opens: its rows are those of the shard's index, its metadata is readable.
5. The invariants that the dataset's pipeline registered (``dataforge.registry``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dataforge.errors import DatasetError, FormatVersionError
from dataforge.progress import Progress
from dataforge.registry import get_pipeline
from dataforge.store.hashing import sha256_file
from dataforge.store.layout import CONTROL_DIR, JOURNAL_FILE, MANIFEST, RUN_FILE
from dataforge.store.manifest import Manifest, check_digest
from dataforge.store.reader import Dataset


@dataclass(frozen=True)
class Problem:
    """One failed check: what kind, which file and/or episode, and what is wrong."""

    kind: str
    message: str
    path: str | None = None
    episode: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "episode": self.episode,
            "message": self.message,
        }

    def line(self) -> str:
        where = " ".join(
            x for x in (self.path, f"episode {self.episode}" if self.episode else None) if x
        )
        return f"[{self.kind}] {where + ': ' if where else ''}{self.message}"


@dataclass
class ValidationReport:
    root: str
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(
        self, kind: str, message: str, path: str | None = None, episode: str | None = None
    ) -> None:
        self.problems.append(Problem(kind, message, path, episode))

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "ok": self.ok,
            "checked": self.checked,
            "notes": self.notes,
            "problems": [p.to_dict() for p in self.problems],
        }


def _walk_files(root: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == root and CONTROL_DIR in dirnames:
            dirnames.remove(CONTROL_DIR)
        for name in filenames:
            out.add(Path(dirpath, name).relative_to(root).as_posix())
    return out


def _check_files(
    root: Path, manifest: Manifest, report: ValidationReport, progress: Progress
) -> None:
    present = _walk_files(root)
    listed = dict(manifest.files)
    progress.start("verify sha256", total=len(listed))
    total_bytes = 0
    for rel, entry in listed.items():
        path = root / rel
        if rel not in present:
            report.add("missing", "listed in the manifest but not on disk", rel)
        else:
            size = path.stat().st_size
            total_bytes += size
            if size != entry.size:
                report.add("altered", f"size {size} != manifest {entry.size}", rel)
            elif sha256_file(path) != entry.sha256:
                report.add("altered", "sha256 differs from the manifest", rel)
        progress.advance()
    progress.stop()
    for rel in sorted(present - set(listed) - {MANIFEST}):
        report.add("extra", "file not listed in the manifest", rel)
    report.checked.update(files=len(listed), bytes=total_bytes)


def _check_shards(ds: Dataset, report: ValidationReport) -> set[str]:
    """Schema and index checks per shard; returns the shards that could not be opened."""
    broken: set[str] = set()
    by_shard: dict[str, list[str]] = {}
    for eid, loc in ds.manifest.episodes.items():
        by_shard.setdefault(loc.shard, []).append(eid)
    for entry in ds.manifest.shards:
        rel = entry.path
        try:
            reader = ds._shard(rel)
            names = reader.array_names()
            index = reader.index()
        except Exception as exc:
            report.add("shard", f"cannot be opened: {exc}", rel)
            broken.add(rel)
            continue
        if sorted(ds.schema) != names:
            report.add("schema", f"arrays {names} != schema {sorted(ds.schema)}", rel)
        for name, spec in ds.schema.items():
            if name not in names:
                continue
            d = reader.describe(name)
            expect = {"dtype": spec.dtype, "chunks": spec.chunks, "codec": spec.codec}
            for key, want in expect.items():
                if d[key] != want:
                    report.add("schema", f"array {name!r}: {key} {d[key]} != schema {want}", rel)
            if tuple(d["shape"][1:]) != spec.trailing:
                report.add(
                    "schema",
                    f"array {name!r}: shape {d['shape']} != schema {spec.shape_str()}",
                    rel,
                )
            if ds.format == "zarr" and d["shards"] != (spec.shard_rows, *spec.trailing):
                report.add(
                    "schema",
                    f"array {name!r}: zarr shards {d['shards']} != schema "
                    f"{(spec.shard_rows, *spec.trailing)}",
                    rel,
                )
            stops = [ds.manifest.episodes[e].rows[name][1] for e in by_shard.get(rel, [])]
            if d["shape"][0] != max(stops, default=0):
                report.add(
                    "schema",
                    f"array {name!r} has {d['shape'][0]} rows, the episode "
                    f"index covers {max(stops, default=0)}",
                    rel,
                )
            try:  # the codec decodes (the first and last row; --deep decodes everything)
                if d["shape"][0]:
                    arr = reader.array(name)
                    arr[0]
                    arr[d["shape"][0] - 1]
            except Exception as exc:
                report.add("shard", f"array {name!r} does not decode: {exc}", rel)
                broken.add(rel)
        shard_eps = {e["id"]: e for e in index.get("episodes", [])}
        manifest_eps = by_shard.get(rel, [])
        if sorted(shard_eps) != sorted(manifest_eps) or len(manifest_eps) != entry.episodes:
            report.add("index", "the shard's episode list differs from the manifest's", rel)
        for eid in manifest_eps:
            if eid in shard_eps:
                rows = {k: tuple(v) for k, v in shard_eps[eid]["rows"].items()}
                if rows != dict(ds.manifest.episodes[eid].rows):
                    report.add("index", "rows differ between shard and manifest", rel, eid)
    return broken


def _check_episodes(
    ds: Dataset, report: ValidationReport, broken: set[str], deep: bool, progress: Progress
) -> None:
    hooks = get_pipeline(ds.manifest.pipeline)
    if hooks is None:
        report.notes.append(
            f"no invariants are registered for pipeline {ds.manifest.pipeline!r} "
            "(not a pipeline of this dataforge); generic checks only"
        )
    progress.start("open episodes", total=len(ds))
    checked = 0
    for ep in ds.episodes():
        progress.advance()
        if ep.location.shard in broken:
            continue
        try:
            _ = ep.metadata
            if deep:
                ep.read()
        except Exception as exc:
            report.add("episode", f"cannot be read: {exc}", ep.location.shard, ep.id)
            continue
        checked += 1
        if hooks is not None and hooks.check_episode is not None:
            try:
                for msg in hooks.check_episode(ep):
                    report.add("invariant", msg, ep.location.shard, ep.id)
            except Exception as exc:
                report.add(
                    "invariant",
                    f"check crashed: {type(exc).__name__}: {exc}",
                    ep.location.shard,
                    ep.id,
                )
    progress.stop()
    if hooks is not None and hooks.check_dataset is not None:
        try:
            for eid, msg in hooks.check_dataset(ds):
                loc = ds.manifest.episodes.get(eid) if eid else None
                report.add("invariant", msg, loc.shard if loc else None, eid)
        except Exception as exc:
            report.add("invariant", f"dataset check crashed: {type(exc).__name__}: {exc}")
    report.checked["episodes"] = checked
    if hooks is not None:
        report.checked["invariants"] = list(hooks.invariants)


def _unfinished(root: Path, report: ValidationReport) -> None:
    run_file = root / CONTROL_DIR / RUN_FILE
    journal = root / CONTROL_DIR / JOURNAL_FILE
    lines = journal.read_text(errors="replace").count("\n") if journal.is_file() else 0
    try:
        info = json.loads(run_file.read_text())
    except (OSError, ValueError):
        info = {}
    report.add(
        "incomplete",
        f"unfinished {info.get('pipeline', 'dataforge')} run ({lines} units committed, no "
        "manifest yet): rerun the command that made it to resume",
        MANIFEST,
    )


def validate(
    path: str | Path, *, deep: bool = False, progress: Progress | None = None
) -> ValidationReport:
    """Check a dataset directory; the report lists every problem found (empty when valid)."""
    root = Path(path)
    progress = progress or Progress()
    report = ValidationReport(root=str(root))
    if not root.is_dir():
        raise DatasetError(
            f"{root} is not a directory"
            if root.exists()
            else f"dataset directory {root} does not exist"
        )
    mpath = root / MANIFEST
    if not mpath.is_file():
        if (root / CONTROL_DIR / RUN_FILE).is_file():
            _unfinished(root, report)
            return report
        raise DatasetError(f"{root} is not a dataforge dataset: {MANIFEST} is missing")
    try:
        raw = mpath.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read {mpath}: {exc.strerror}") from None
    if problem := check_digest(raw):
        report.add("manifest", problem, MANIFEST)
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        manifest = Manifest.from_dict(data)
    except FormatVersionError:
        raise
    except (UnicodeDecodeError, ValueError) as exc:
        report.add("manifest", f"cannot be parsed: {exc}", MANIFEST)
        return report
    if (root / CONTROL_DIR / RUN_FILE).is_file():
        report.notes.append("a run is writing or was interrupted in this directory")
    _check_files(root, manifest, report, progress)
    with Dataset(root, manifest) as ds:
        broken = _check_shards(ds, report)
        _check_episodes(ds, report, broken, deep, progress)
    report.checked.update(
        shards=len(manifest.shards), pipeline=manifest.pipeline, format=manifest.format
    )
    return report
