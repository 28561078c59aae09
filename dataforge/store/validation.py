"""``dataforge validate``: prove a dataset is complete, unaltered and consistent.

Checks, in order, each failure reported with the file or episode it concerns:

1. ``manifest.json`` parses and matches its own digest; the format version is readable; every path
   it records is a safe path inside the directory (``layout.path_problem``).
2. Every listed file exists with its size and sha256; no file is missing; no extra file is present
   (``.dataforge/``, the run-control folder, is not data and is skipped). A dataset is untrusted
   input: symbolic links (anywhere, ``.dataforge/`` and shard folders included) and other
   non-regular files are reported, never followed, opened or hashed.
3. Every shard opens and matches the schema (arrays, dtype, fixed shape, chunks, codec), and its
   own episode index agrees with the manifest's. Every row of every array lies in some episode's
   range and no range runs past the array's end (``uncovered``: rows no episode reads).
   The first and last row of every array decode (``deep``: every row of every episode).
4. Every episode opens: its rows are those of the shard's index, its metadata is readable.
5. The invariants of the dataset's pipeline, through the ``hooks_for`` lookup the caller passes
   (:func:`dataforge.validation.validate` passes the registry's): the store sits below the
   pipeline registry and does not import it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dataforge.errors import DatasetError, FormatVersionError
from dataforge.progress import Progress
from dataforge.store.hashing import Tree, entry_inside, read_inside, scan_tree
from dataforge.store.layout import CONTROL_DIR, JOURNAL_FILE, MANIFEST, RUN_FILE, entry_kind
from dataforge.store.manifest import Manifest, check_digest, path_problems
from dataforge.store.reader import Dataset, StoredEpisode


class InvariantHooks(Protocol):
    """What validation needs of a pipeline's checks (``dataforge.registry.Hooks`` is one)."""

    @property
    def invariants(self) -> Mapping[str, str]: ...

    @property
    def check_episode(self) -> Callable[[StoredEpisode], Iterable[tuple[str, str]]] | None: ...

    @property
    def check_dataset(
        self,
    ) -> Callable[[Dataset], Iterable[tuple[str | None, str, str]]] | None: ...


# pipeline name -> its hooks, or None when no such pipeline is installed
HooksLookup = Callable[[str], InvariantHooks | None]


@dataclass(frozen=True)
class Problem:
    """One failed check: what kind, which file and/or episode, and what is wrong."""

    kind: str
    message: str
    path: str | None = None
    episode: str | None = None
    invariant: str | None = None  # the key of the pipeline invariant broken (kind "invariant")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "invariant": self.invariant,
            "path": self.path,
            "episode": self.episode,
            "message": self.message,
        }

    def line(self) -> str:
        where = " ".join(
            x for x in (self.path, f"episode {self.episode}" if self.episode else None) if x
        )
        kind = f"{self.kind} {self.invariant}" if self.invariant else self.kind
        return f"[{kind}] {where + ': ' if where else ''}{self.message}"


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
        self,
        kind: str,
        message: str,
        path: str | None = None,
        episode: str | None = None,
        invariant: str | None = None,
    ) -> None:
        self.problems.append(Problem(kind, message, path, episode, invariant))

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "ok": self.ok,
            "checked": self.checked,
            "notes": self.notes,
            "problems": [p.to_dict() for p in self.problems],
        }


def _report_irregular(root: Path, tree: Tree, report: ValidationReport) -> None:
    """Report every symbolic link and non-regular entry under the dataset (never followed)."""
    for rel in tree.links:
        try:
            target = os.readlink(root / rel)
        except OSError:
            target = "?"
        report.add(
            "link",
            f"symbolic link (to {target!r}): a dataset holds only regular files; not followed",
            rel,
        )
    for rel in tree.other:
        report.add("special", "not a regular file or folder (fifo, socket or device)", rel)
    for rel in tree.unreadable:
        report.add("unreadable", "folder cannot be listed", rel)


def _under(rel: str, tops: set[str]) -> bool:
    """Whether ``rel`` is one of ``tops`` or lies under one."""
    parts = rel.split("/")
    return any("/".join(parts[:i]) in tops for i in range(1, len(parts) + 1))


def _check_files(
    root: Path, manifest: Manifest, tree: Tree, report: ValidationReport, progress: Progress
) -> None:
    control = CONTROL_DIR + "/"
    present = {rel for rel in tree.files if not rel.startswith(control)}
    irregular = {*tree.links, *tree.other, *tree.unreadable}
    listed = dict(manifest.files)
    progress.start("verify sha256", total=len(listed))
    total_bytes = 0
    for rel, entry in listed.items():
        if rel not in present:
            if not _under(rel, irregular):  # a link or fifo on the way is reported already
                report.add("missing", "listed in the manifest but not on disk", rel)
        else:
            try:
                size = os.lstat(root / rel).st_size
                total_bytes += size
                if size != entry.size:
                    report.add("altered", f"size {size} != manifest {entry.size}", rel)
                elif entry_inside(root, rel).sha256 != entry.sha256:
                    report.add("altered", "sha256 differs from the manifest", rel)
            except OSError as exc:  # replaced while we read (by a link, say): never followed
                report.add("unreadable", f"cannot be read: {exc.strerror}", rel)
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
            why = str(exc).removeprefix(f"shard {rel} cannot be opened: ")
            report.add("shard", f"cannot be opened: {why}", rel)
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
            spans = [ds.manifest.episodes[e].rows[name] for e in by_shard.get(rel, [])]
            _check_coverage(name, d["shape"][0], spans, rel, report)
            try:  # the codec decodes (the first and last row; --deep decodes everything)
                if d["shape"][0]:
                    arr = reader.array(name)
                    arr[0]
                    arr[d["shape"][0] - 1]
            except Exception as exc:
                report.add("shard", f"array {name!r} does not decode: {exc}", rel)
                broken.add(rel)
        episodes = index.get("episodes", []) if isinstance(index, dict) else []
        shard_eps = {e.get("id"): e for e in episodes if isinstance(e, dict)}
        manifest_eps = by_shard.get(rel, [])
        if (
            sorted(map(str, shard_eps)) != sorted(manifest_eps)
            or len(manifest_eps) != entry.episodes
        ):
            report.add("index", "the shard's episode list differs from the manifest's", rel)
        for eid in manifest_eps:
            if eid in shard_eps:
                stored: Any = shard_eps[eid].get("rows")  # unchecked JSON
                try:
                    rows = {k: tuple(v) for k, v in stored.items()}
                except (AttributeError, TypeError):  # an altered index: no rows mapping
                    rows = None
                if rows != dict(ds.manifest.episodes[eid].rows):
                    report.add("index", "rows differ between shard and manifest", rel, eid)
    return broken


def uncovered_rows(length: int, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The row ranges ``[start, stop)`` of ``range(length)`` that none of ``spans`` covers."""
    gaps: list[tuple[int, int]] = []
    row = 0  # every row before this one is covered (or already listed as a gap)
    for start, stop in sorted(spans):
        if start > row:
            gaps.append((row, min(start, length)))
        row = max(row, stop)
        if row >= length:
            break
    if row < length:
        gaps.append((row, length))
    return [(a, b) for a, b in gaps if a < b]


def _rows_text(gaps: list[tuple[int, int]], limit: int = 5) -> str:
    """``[3, 5), [9, 10)`` (the first ``limit`` ranges, then how many more)."""
    shown = ", ".join(f"[{a}, {b})" for a, b in gaps[:limit])
    return shown + (f" and {len(gaps) - limit} more ranges" if len(gaps) > limit else "")


def _check_coverage(
    name: str, length: int, spans: list[tuple[int, int]], rel: str, report: ValidationReport
) -> None:
    """Every row of array ``name`` (``length`` rows) lies in some episode's range, and no range
    runs past its end."""
    reach = max((stop for _, stop in spans), default=0)
    if reach > length:
        report.add(
            "schema",
            f"array {name!r} has {length} rows, but the episode index reaches row {reach}",
            rel,
        )
    gaps = uncovered_rows(length, spans)
    if gaps:
        count = sum(b - a for a, b in gaps)
        report.add(
            "uncovered",
            f"array {name!r}: {count} of its {length} rows belong to no episode: "
            f"rows {_rows_text(gaps)}",
            rel,
        )


def _check_episodes(
    ds: Dataset,
    report: ValidationReport,
    broken: set[str],
    deep: bool,
    progress: Progress,
    hooks_for: HooksLookup | None = None,
) -> None:
    hooks = hooks_for(ds.manifest.pipeline) if hooks_for is not None else None
    if hooks is None and hooks_for is not None:
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
                for key, msg in hooks.check_episode(ep):
                    report.add("invariant", msg, ep.location.shard, ep.id, _known(hooks, key))
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
            for eid, key, msg in hooks.check_dataset(ds):
                loc = ds.manifest.episodes.get(eid) if eid else None
                report.add("invariant", msg, loc.shard if loc else None, eid, _known(hooks, key))
        except Exception as exc:
            report.add("invariant", f"dataset check crashed: {type(exc).__name__}: {exc}")
    report.checked["episodes"] = checked
    if hooks is not None:
        report.checked["invariants"] = list(hooks.invariants)


def _known(hooks: InvariantHooks, key: str) -> str:
    """An invariant key a check reported, which its pipeline must have registered."""
    if key not in hooks.invariants:
        raise ValueError(f"a check reported the unregistered invariant {key!r}")
    return key


def _read_control(root: Path, name: str) -> str | None:
    """A run-control file's text, read without following links (None when absent or not a
    regular file)."""
    try:
        return read_inside(root, f"{CONTROL_DIR}/{name}").decode("utf-8", errors="replace")
    except OSError:
        return None


def _unfinished(root: Path, report: ValidationReport) -> None:
    journal = _read_control(root, JOURNAL_FILE)
    lines = journal.count("\n") if journal is not None else 0
    try:
        info = json.loads(_read_control(root, RUN_FILE) or "{}")
    except ValueError:
        info = {}
    if not isinstance(info, dict):
        info = {}
    report.add(
        "incomplete",
        f"unfinished {info.get('pipeline', 'dataforge')} run ({lines} units committed, no "
        "manifest yet): rerun the command that made it to resume",
        MANIFEST,
    )


def validate(
    path: str | Path,
    *,
    deep: bool = False,
    hooks_for: HooksLookup | None = None,
    progress: Progress | None = None,
) -> ValidationReport:
    """Check a dataset directory; the report lists every problem found (empty when valid).
    The pipeline's invariants are checked through ``hooks_for`` (its checks by pipeline name);
    without it, the file, schema and episode checks only
    (:func:`dataforge.validation.validate` passes the registry's lookup)."""
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
    run_file = root / CONTROL_DIR / RUN_FILE
    # the run-control file counts only as a regular file reached without a link
    running = entry_kind(root / CONTROL_DIR) == "dir" and entry_kind(run_file) == "file"
    kind = entry_kind(mpath)
    if kind is None:
        if running:
            _unfinished(root, report)
            return report
        raise DatasetError(f"{root} is not a dataforge dataset: {MANIFEST} is missing")
    tree = scan_tree(root)
    _report_irregular(root, tree, report)
    if kind != "file":  # a link (reported above) or a fifo: never read
        if kind == "dir":
            report.add("manifest", "is a folder, not a file", MANIFEST)
        return report
    try:
        raw = read_inside(root, MANIFEST)
    except OSError as exc:
        raise DatasetError(f"cannot read {mpath}: {exc.strerror}") from None
    if problem := check_digest(raw):
        report.add("manifest", problem, MANIFEST)
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        unsafe = path_problems(data)
        manifest = Manifest.from_dict(data) if not unsafe else None
    except FormatVersionError:
        raise
    except (UnicodeDecodeError, ValueError) as exc:
        report.add("manifest", f"cannot be parsed: {exc}", MANIFEST)
        return report
    if manifest is None:  # nothing it names is opened: it could lead out of the directory
        for message in unsafe:
            report.add("path", message, MANIFEST)
        return report
    if running:
        report.notes.append("a run is writing or was interrupted in this directory")
    _check_files(root, manifest, tree, report, progress)
    with Dataset(root, manifest) as ds:
        broken = _check_shards(ds, report)
        _check_episodes(ds, report, broken, deep, progress, hooks_for)
    report.checked.update(
        shards=len(manifest.shards), pipeline=manifest.pipeline, format=manifest.format
    )
    return report
