"""Build a dataset directory shard by shard: commit, journal, resume, finalize.

The life of a dataset directory:

1. ``DatasetBuilder.open`` checks what is there. An empty or new directory starts a run; a
   directory holding a run (``.dataforge/run.json``) or a dataset (``manifest.json``) with the
   same ``config_hash`` resumes it; another configuration is refused unless ``overwrite``; any
   other non-empty directory is refused. Shards that were renamed into ``shards/`` but not yet
   journaled (a crash in between), anything left in staging and the temporaries of files a killed
   run was writing (``.tmp-*``, anywhere in the tree) are removed: only journaled shards count as
   committed.
2. Workers write shards into ``.dataforge/staging/<run>/`` (``write_shard``); ``commit`` renames a
   finished shard into ``shards/`` and appends its record (files, sha256, episodes) to
   ``.dataforge/journal.jsonl`` with an fsync.
3. ``finalize`` writes ``episodes.csv``, the pipeline's extra files, ``croissant.json`` and, last,
   ``manifest.json``; then removes the journal, run.json and staging.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dataforge import numerics
from dataforge._version import __version__
from dataforge.errors import ConfigMismatchError, DatasetError, SchemaError, UsageError
from dataforge.store.atomic import (
    atomic_write_bytes,
    atomic_write_text,
    atomic_write_with,
    commit_path,
    remove_path,
    remove_temporaries,
)
from dataforge.store.croissant import croissant_metadata, episode_index_csv
from dataforge.store.episode import EpisodeLocation
from dataforge.store.hashing import FileEntry, file_entry, read_inside, scan_tree
from dataforge.store.layout import (
    CONTROL_DIR,
    CROISSANT,
    EPISODE_INDEX,
    FORMAT_VERSION,
    JOURNAL_FILE,
    MANIFEST,
    RUN_FILE,
    SHARDS_DIR,
    check_relative_path,
    check_unit_id,
    control_dir,
    entry_kind,
    link_in,
    staging_dir,
)
from dataforge.store.lock import check_control_dir
from dataforge.store.manifest import (
    Manifest,
    ShardEntry,
    config_hash,
    read_manifest,
    write_manifest,
)
from dataforge.store.schema import Schema
from dataforge.store.shard import ShardRecord

# An extra file: its bytes, or a function that writes it at the path it is given.
ExtraFile = bytes | Callable[[Path], None]
RESERVED = {MANIFEST, CROISSANT, EPISODE_INDEX, SHARDS_DIR, CONTROL_DIR}
_ENV_PACKAGES = ("numpy", "zarr", "numcodecs", "h5py", "hdf5plugin")


@dataclass(frozen=True)
class DatasetHeader:
    """What determines a dataset's content. Its hash decides whether a directory can resume."""

    name: str
    pipeline: str
    format: str
    seed: int
    config: Mapping[str, Any]
    schema: Schema
    units: tuple[str, ...] | None = None
    description: str = ""
    license_url: str | None = None
    url: str | None = None
    citation: str | None = None
    # external input files read: {"files": {key: sha256}, "locations": {name: path}}
    inputs: Mapping[str, Any] = field(default_factory=dict)
    # a curated dataset's provenance (dataforge.curate): the operation and its settings (its
    # parents are input files: their manifests); empty for a generated dataset
    curation: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.units is not None:
            for u in self.units:
                check_unit_id(u)
            if len(set(self.units)) != len(self.units):
                raise ValueError("unit ids must be unique")

    @property
    def identity(self) -> dict[str, Any]:
        """What a user chose: pipeline, format, seed and config (shown when configs differ)."""
        return run_identity(self.pipeline, self.format, self.seed, self.config)

    @property
    def input_files(self) -> dict[str, str]:
        return dict(self.inputs.get("files", {}))

    @property
    def config_hash(self) -> str:
        return header_hash(self.identity, self.schema, self.input_files, self.curation)


def header_hash(
    identity: Mapping[str, Any],
    schema: Schema,
    input_files: Mapping[str, str],
    curation: Mapping[str, Any] | None = None,
) -> str:
    """The config hash: format version, pipeline, format, seed, config, schema, the digests
    of the input files read (their locations do not count) and, for a curated dataset, its
    curation (the operation and its settings; its parents are input files)."""
    payload = {"format_version": FORMAT_VERSION, **identity, "schema": schema.to_dict()}
    if input_files:
        payload["inputs"] = dict(sorted(input_files.items()))
    if curation:
        payload["curation"] = dict(curation)
    return config_hash(payload)


def _environment(opengl: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The manifest's ``environment``: Python, platform, library versions, the numeric setup
    and, for a dataset that was rendered, the OpenGL contexts that rendered it (``opengl``)."""
    versions: dict[str, str | None] = {}
    for pkg in _ENV_PACKAGES:
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = None
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        **versions,
        "numerics": numerics.environment(),
        **({"opengl": [dict(d) for d in opengl]} if opengl else {}),
    }


def config_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """A short description of which settings differ between two run descriptions."""
    diffs = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            diffs.append(f"{key} {old.get(key)!r} -> {new.get(key)!r}")
    return "; ".join(diffs[:6]) + ("; ..." if len(diffs) > 6 else "")


def run_identity(pipeline: str, fmt: str, seed: int, config: Mapping[str, Any]) -> dict[str, Any]:
    """What a user chose for a run, as the config hash covers it."""
    return {"pipeline": pipeline, "format": fmt, "seed": seed, "config": dict(config)}


def flat_identity(identity: Mapping[str, Any]) -> dict[str, Any]:
    """An identity as option-like settings, for config_diff."""
    flat = {k: identity.get(k) for k in ("pipeline", "format", "seed")}
    flat.update({f"--{k}": v for k, v in dict(identity.get("config") or {}).items()})
    return flat


@dataclass
class DirState:
    """What a directory holds before a run touches it (read-only inspection)."""

    root: Path
    exists: bool
    manifest: Manifest | None = None
    run_info: dict[str, Any] | None = None
    committed: dict[str, ShardRecord] = field(default_factory=dict)
    journaled: dict[str, ShardRecord] = field(default_factory=dict)
    foreign: list[str] = field(default_factory=list)

    @property
    def stored_hash(self) -> str | None:
        if self.manifest is not None:
            return self.manifest.config_hash
        if self.run_info is not None:
            return self.run_info.get("config_hash")
        return None

    @property
    def stored_identity(self) -> dict[str, Any]:
        m = self.manifest
        if m is not None:
            return run_identity(m.pipeline, m.format, m.seed, m.config)
        return dict(self.run_info or {})


def _records_from_manifest(root: Path, manifest: Manifest) -> dict[str, ShardRecord]:
    """Committed units of a finished dataset; a unit whose shard is gone counts as not committed,
    so a rerun regenerates it."""
    out: dict[str, ShardRecord] = {}
    by_unit: dict[str, list[EpisodeLocation]] = {}
    for loc in manifest.episodes.values():
        by_unit.setdefault(loc.unit, []).append(loc)
    files_of = manifest.files_by_shard()
    for shard in manifest.shards:
        # the manifest checked its paths (Manifest.from_dict); a link was refused by inspect_dir
        if entry_kind(root / check_relative_path(shard.path, "shard path")) in (None, "link"):
            continue
        out[shard.unit] = ShardRecord(
            unit=shard.unit,
            path=shard.path,
            episodes=tuple(by_unit.get(shard.unit, ())),
            files=files_of[shard.path],
        )
    return out


def _read_journal(root: Path) -> dict[str, ShardRecord]:
    path = control_dir(root) / JOURNAL_FILE
    records: dict[str, ShardRecord] = {}
    if entry_kind(path) != "file":
        return records
    text = read_inside(root, f"{CONTROL_DIR}/{JOURNAL_FILE}").decode("utf-8", errors="replace")
    for line in text.splitlines():
        try:
            rec = ShardRecord.from_dict(json.loads(line))
        except (ValueError, KeyError, TypeError, AttributeError):
            break  # a torn last line from a crash: everything after it is not committed
        try:  # a journal is untrusted like a manifest: its paths stay inside the directory
            for rel in (rec.path, *rec.files, *(loc.shard for loc in rec.episodes)):
                check_relative_path(rel, f"{JOURNAL_FILE} path")
        except ValueError as exc:
            raise DatasetError(f"{path}: {exc}") from None
        if entry_kind(root / rec.path) not in (None, "link"):
            records[rec.unit] = rec
    return records


def _refuse_links(root: Path) -> None:
    """A dataset directory a run writes into holds only regular files and folders: a symbolic
    link (to a folder, say ``shards -> ~/photos``) would make a resume, a repair or
    ``--overwrite`` write or remove files through it. The output directory itself may be a
    link: that is the user's own choice."""
    tree = scan_tree(root)
    bad = [(rel, "a symbolic link") for rel in tree.links]
    bad += [(rel, "not a regular file or folder") for rel in tree.other]
    bad += [(rel, "a folder that cannot be read") for rel in tree.unreadable]
    if bad:
        rel, what = min(bad)
        raise UsageError(
            f"refusing to write into {root}: {rel} is {what} (a dataset holds only regular "
            "files and folders); remove it, or choose another --out"
        )


def inspect_dir(root: Path) -> DirState:
    """Look at an output directory without changing it (or following any link in it)."""
    root = Path(root)
    if not root.exists():
        return DirState(root, exists=False)
    if not root.is_dir():
        raise UsageError(f"output path {root} exists and is not a directory")
    check_control_dir(root)
    state = DirState(root, exists=True)
    run_file = control_dir(root) / RUN_FILE
    if entry_kind(root / MANIFEST) is not None:
        state.manifest = read_manifest(root)  # refuses a link, checks every path it records
    if entry_kind(run_file) == "file":
        try:
            state.run_info = json.loads(read_inside(root, f"{CONTROL_DIR}/{RUN_FILE}"))
        except (OSError, ValueError):
            state.run_info = {"config_hash": None}
        if not isinstance(state.run_info, dict):
            state.run_info = {"config_hash": None}
    others = sorted(p.name for p in root.iterdir() if p.name != CONTROL_DIR)
    if state.manifest is not None or entry_kind(run_file) is not None or not others:
        # dataforge's own directory (or an empty one): nothing in it may be a link. A foreign
        # directory is refused by DatasetBuilder.open without being walked.
        _refuse_links(root)
    if state.manifest is not None:
        state.committed.update(_records_from_manifest(root, state.manifest))
    state.journaled = _read_journal(root)
    state.committed.update(state.journaled)
    if state.manifest is None and state.run_info is None:
        state.foreign = others
    return state


class DatasetBuilder:
    """Owns one dataset directory while a run writes it (the caller holds the lock)."""

    def __init__(self, root: Path, header: DatasetHeader, state: DirState) -> None:
        self.root = Path(root)
        self.header = header
        self.committed: dict[str, ShardRecord] = dict(state.committed)
        self._episode_unit = {
            loc.id: rec.unit for rec in self.committed.values() for loc in rec.episodes
        }
        self.staging = staging_dir(self.root) / f"run-{os.getpid()}-{secrets.token_hex(4)}"
        self.previous_manifest = state.manifest
        # units committed after the manifest was written (an interrupted repair)
        self.journal_pending = bool(state.journaled)

    # -- opening ---------------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path, header: DatasetHeader, *, overwrite: bool = False) -> DatasetBuilder:
        root = Path(root)
        # --out may itself be a symbolic link to a folder: the user chose it. Inside it nothing
        # may be a link: inspect_dir refuses a linked .dataforge and any link in a dataset.
        check_control_dir(root)
        state = inspect_dir(root)
        if state.foreign and not overwrite:
            raise UsageError(
                f"refusing to write into {root}: it is not empty and holds no dataforge dataset "
                f"(found {', '.join(state.foreign[:3])}{', ...' if len(state.foreign) > 3 else ''})"
                "; choose another --out"
            )
        if state.foreign and overwrite:
            raise UsageError(
                f"refusing to --overwrite {root}: it holds files that dataforge did not write "
                f"({', '.join(state.foreign[:3])}); remove them yourself or choose another --out"
            )
        stored = state.stored_hash
        if stored is not None and stored != header.config_hash and not overwrite:
            diff = config_diff(flat_identity(state.stored_identity), flat_identity(header.identity))
            raise ConfigMismatchError(
                f"{root} holds a dataset made with another configuration (config hash "
                f"{stored[:12]} != {header.config_hash[:12]}: {diff or 'schema or version'}); "
                "rerun with --overwrite to replace it, or choose another --out"
            )
        if overwrite and state.exists:
            wipe(root, state)
            state = DirState(root, exists=True)
        root.mkdir(parents=True, exist_ok=True)
        builder = cls(root, header, state)
        builder._clean_orphans()
        run_info = {"config_hash": header.config_hash, **header.identity}
        control_dir(root).mkdir(exist_ok=True)
        if state.manifest is None:
            atomic_write_text(control_dir(root) / RUN_FILE, json.dumps(run_info, indent=1))
        return builder

    def _clean_orphans(self) -> None:
        remove_path(staging_dir(self.root))
        # temporaries of files a killed run was writing (extra files, videos), anywhere
        data = {rel for rec in self.committed.values() for rel in rec.files}
        if self.previous_manifest is not None:
            data.update(self.previous_manifest.files)
        remove_temporaries(self.root, keep=data)
        shards = self.root / SHARDS_DIR
        if shards.is_dir():
            keep = {Path(rec.path).name for rec in self.committed.values()}
            for entry in shards.iterdir():
                if entry.name not in keep:
                    remove_path(entry)

    # -- committing ------------------------------------------------------------------------------
    def pending(self) -> list[str]:
        units = self.header.units or ()
        return [u for u in units if u not in self.committed]

    def is_complete(self) -> bool:
        return self.header.units is None or not self.pending()

    def commit(self, record: ShardRecord) -> None:
        """Rename a finished shard from staging into ``shards/`` and journal it."""
        if self.header.units is not None and record.unit not in self.header.units:
            raise SchemaError(f"unit {record.unit!r} is not one of this run's units")
        staged = self.staging / Path(record.path).name
        if record.unit in self.committed:
            remove_path(staged)
            raise SchemaError(f"unit {record.unit!r} was already committed")
        clash = [loc.id for loc in record.episodes if loc.id in self._episode_unit]
        if clash:
            remove_path(staged)
            raise SchemaError(
                f"unit {record.unit!r} wrote episode {clash[0]!r}, already written by unit "
                f"{self._episode_unit[clash[0]]!r}: episode ids must be unique in a dataset"
            )
        (self.root / SHARDS_DIR).mkdir(exist_ok=True)
        commit_path(staged, self.root / record.path)
        line = json.dumps(record.to_dict(), sort_keys=True, separators=(",", ":")) + "\n"
        with open(control_dir(self.root) / JOURNAL_FILE, "a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        self.committed[record.unit] = record
        for loc in record.episodes:
            self._episode_unit[loc.id] = record.unit

    # -- finishing -------------------------------------------------------------------------------
    def ordered_records(self) -> list[ShardRecord]:
        if self.header.units is not None:
            return [self.committed[u] for u in self.header.units if u in self.committed]
        return list(self.committed.values())

    def opengl(self) -> list[dict[str, Any]]:
        """The distinct OpenGL contexts (vendor, renderer, version, device) that rendered the
        committed units, as their workers reported them (``ShardRecord.opengl``), with what an
        earlier manifest of this directory recorded for the units it kept; sorted, empty when
        nothing rendered."""
        found = [dict(d) for rec in self.ordered_records() for d in rec.opengl]
        earlier = self.previous_manifest.environment.get("opengl") if self.previous_manifest else ()
        found += [dict(d) for d in earlier or () if isinstance(d, Mapping)]
        keys = {json.dumps(d, sort_keys=True) for d in found}
        return [json.loads(k) for k in sorted(keys)]

    def _manifest(
        self, files: Mapping[str, FileEntry], command: Sequence[str], execution: Mapping[str, Any]
    ) -> Manifest:
        records = self.ordered_records()
        episodes = {loc.id: loc for rec in records for loc in rec.episodes}
        rows = {name: 0 for name in self.header.schema}
        for loc in episodes.values():
            for name, (a, b) in loc.rows.items():
                rows[name] += b - a
        summary = {
            "units": len(records),
            "shards": len(records),
            "episodes": len(episodes),
            "rows": rows,
            "files": len(files),
            "bytes": sum(f.size for f in files.values()),
        }
        return Manifest(
            name=self.header.name,
            pipeline=self.header.pipeline,
            dataforge_version=__version__,
            format=self.header.format,
            seed=self.header.seed,
            config=dict(self.header.config),
            config_hash=self.header.config_hash,
            schema=self.header.schema,
            shards=tuple(ShardEntry(r.unit, r.path, len(r.episodes)) for r in records),
            episodes=episodes,
            files=dict(sorted(files.items())),
            command=tuple(command),
            execution=dict(execution),
            environment=_environment(self.opengl()),
            summary=summary,
            inputs=dict(self.header.inputs),
            curation=dict(self.header.curation),
        )

    def finalize(
        self,
        *,
        command: Sequence[str] = (),
        execution: Mapping[str, Any] | None = None,
        extra_files: Callable[[Any], Mapping[str, ExtraFile]] | None = None,
    ) -> Manifest:
        """Write episodes.csv, extra files, croissant.json and manifest.json; clean up."""
        if not self.is_complete():
            raise DatasetError(
                f"cannot finalize {self.root}: {len(self.pending())} units are not committed"
            )
        records = self.ordered_records()
        files: dict[str, FileEntry] = {}
        for rec in records:
            files.update(rec.files)
        episodes = [loc for rec in records for loc in rec.episodes]
        index_path = self.root / EPISODE_INDEX
        atomic_write_bytes(index_path, episode_index_csv(self.header.schema, episodes))
        files[EPISODE_INDEX] = file_entry(index_path)
        extras: dict[str, FileEntry] = {}
        if extra_files is not None:
            from dataforge.store.reader import Dataset

            provisional = self._manifest(files, command, execution or {})
            with Dataset(self.root, provisional) as ds:  # writers read the dataset
                for rel, data in sorted(dict(extra_files(ds)).items()):
                    target = self._extra_path(rel)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if callable(data):  # a writer, for a file too large for memory
                        atomic_write_with(target, data)
                    else:
                        atomic_write_bytes(target, data)
                    extras[rel] = file_entry(target)
        files.update(extras)
        doc = croissant_metadata(
            name=self.header.name,
            description=self.header.description or f"{self.header.pipeline} dataset by dataforge",
            version=__version__,
            fmt=self.header.format,
            schema=self.header.schema,
            index_file=files[EPISODE_INDEX],
            license_url=self.header.license_url,
            url=self.header.url,
            citation=self.header.citation,
            extra_files=extras,
        )
        atomic_write_text(self.root / CROISSANT, json.dumps(doc, indent=1) + "\n")
        files[CROISSANT] = file_entry(self.root / CROISSANT)
        manifest = self._manifest(files, command, execution or {})
        write_manifest(self.root, manifest)
        for name in (JOURNAL_FILE, RUN_FILE):
            remove_path(control_dir(self.root) / name)
        remove_path(staging_dir(self.root))
        return manifest

    def _extra_path(self, rel: str) -> Path:
        try:
            parts = check_relative_path(rel, "extra file").split("/")
        except ValueError as exc:
            raise SchemaError(f"a pipeline may not write the extra file {rel!r}: {exc}") from None
        if parts[0] in RESERVED or parts[0].startswith("."):
            raise SchemaError(f"a pipeline may not write the extra file {rel!r}")
        if (link := link_in(self.root, rel)) is not None:
            raise SchemaError(f"cannot write the extra file {rel!r}: {link} is a symbolic link")
        return self.root / rel


def wipe(root: Path, state: DirState) -> None:
    """Remove what dataforge wrote in ``root`` (for ``--overwrite``); the lock stays."""
    if state.manifest is not None:
        for rel in state.manifest.files:
            top = check_relative_path(rel, "manifest path").split("/")[0]
            if top not in RESERVED and link_in(root, rel) is None:  # never through a link
                remove_path(root / rel)
    for name in (MANIFEST, CROISSANT, EPISODE_INDEX, SHARDS_DIR):
        remove_path(root / name)
    for name in (JOURNAL_FILE, RUN_FILE):
        remove_path(control_dir(root) / name)
    remove_path(staging_dir(root))
