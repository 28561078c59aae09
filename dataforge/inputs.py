"""External inputs: reading them with the one-line errors every command gives for bad input,
and recording which files a job read (:class:`Inputs`)."""

from __future__ import annotations

import errno
import gzip
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dataforge.errors import DatasetError, InputNotFoundError, MalformedInputError, UsageError
from dataforge.store.hashing import sha256_file
from dataforge.store.layout import entry_kind


def read_json(path: Path | str, what: str) -> Any:
    """Parse a JSON file (gzip-compressed when it ends in ``.gz``). A missing file is
    ``InputNotFoundError`` and bad bytes ``MalformedInputError``, both naming the file and
    ``what`` it is."""
    path = Path(path)
    if not path.is_file():
        raise InputNotFoundError(f"{path}: {what} not found")
    raw = path.read_bytes()
    try:
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        return json.loads(raw)
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedInputError(f"{path}: {what} is not valid JSON ({exc})") from None


# -- the external files a job reads, recorded in its manifest -----------------------------------

REPRODUCING = "reproducing"
"""The location name under which ``dataforge reproduce`` hands a job the dataset it rebuilds. A
pipeline whose output rests on answers that cannot be asked again (an LLM server's) replays
them from there; like every location, it is not part of the config hash."""


@dataclass
class Inputs:
    """Where a job's external inputs are, and which files it read (with their sha256).

    A *location* is a named directory or file the user gave (``data-dir``: ``--data-dir``,
    ``metadata-dir``: ``--metadata-dir``, ...). A pipeline reads every input file through
    :meth:`file` (with an empty path for a location that is itself a file), which
    hashes it; the job carries the record into the manifest (``inputs``), where the digests
    count in the config hash (a rerun over changed inputs is another dataset) and ``dataforge
    reproduce`` checks them before any work. The locations themselves are provenance only: a
    dataset rebuilt from a moved data directory is the same dataset.
    """

    locations: dict[str, Path] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # '<location>:<relative path>' -> sha256

    def __post_init__(self) -> None:
        self.locations = {k: Path(v) for k, v in self.locations.items() if v is not None}

    def __contains__(self, location: str) -> bool:
        return location in self.locations

    def root(self, location: str) -> Path:
        """The path given for ``location`` (a usage error if it was not given)."""
        try:
            return self.locations[location]
        except KeyError:
            raise UsageError(f"this run needs --{location}") from None

    def file(self, location: str, rel: str | Path, what: str) -> Path:
        """``<location>/<rel>`` (``rel`` empty: the location itself names the file, e.g.
        ``--episodes FILE``), hashed and recorded; missing is ``InputNotFoundError``."""
        rel = Path(rel).as_posix() if str(rel) else ""
        path = input_path(self.root(location), rel)
        if not path.is_file():
            raise InputNotFoundError(f"{path}: {what} not found")
        self.files[input_key(location, rel)] = sha256_file(path)
        return path

    def dataset(self, location: str, pipeline: str, command: str) -> Any:
        """The verified manifest of the dataforge dataset given as ``location`` (recorded with
        its sha256), which must have been made by ``pipeline`` (else one line naming
        ``command``, the command that makes one)."""
        from dataforge.store.manifest import read_manifest

        root = self.root(location)
        self.file(location, "manifest.json", f"{pipeline} dataset (its manifest)")
        manifest = read_manifest(root, verify=True)
        if manifest.pipeline != pipeline:
            raise UsageError(
                f"{root} was made by {manifest.pipeline!r}; this needs a dataset of '{command}'"
            )
        check_complete(root, manifest)
        return manifest

    def read_from(self) -> list[Path]:
        """The locations the job read files from (and the dataset ``reproduce`` rebuilds): what
        its output may not be, contain or lie inside (``dataforge.outputs.check_apart``)."""
        used = {split_key(k)[0] for k in self.files} | {REPRODUCING}
        return [path for name, path in sorted(self.locations.items()) if name in used]

    def to_dict(self) -> dict[str, Any]:
        """The record for the manifest: the files read and the locations they were read from
        (locations nothing was read from are left out)."""
        used = {split_key(k)[0] for k in self.files}
        return {
            "files": dict(sorted(self.files.items())),
            "locations": {
                k: str(v.resolve()) for k, v in sorted(self.locations.items()) if k in used
            },
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Inputs:
        return cls(
            locations={str(k): Path(v) for k, v in dict(d.get("locations", {})).items()},
            files={str(k): str(v) for k, v in dict(d.get("files", {})).items()},
        )


def input_key(location: str, rel: str) -> str:
    return f"{location}:{rel}" if rel else location


def input_path(root: Path, rel: str) -> Path:
    return Path(root) / rel if rel else Path(root)


def split_key(key: str) -> tuple[str, str]:
    location, _, rel = key.partition(":")
    return location, rel


def check_inputs(recorded: Mapping[str, str], locations: Mapping[str, Path]) -> None:
    """Every recorded input file is at its location with its recorded sha256, or one line says
    which is not (``InputNotFoundError`` for a missing one, ``UsageError`` for a changed one)."""
    for key, digest in sorted(recorded.items()):
        location, rel = split_key(key)
        if location not in locations:
            raise UsageError(
                f"input {key} was read from --{location}, which is not given: pass "
                f"--input {location}=PATH"
            )
        path = input_path(locations[location], rel)
        if not path.is_file():
            where = "--data-dir" if location == "data-dir" else f"--input {location}=PATH"
            raise InputNotFoundError(
                f"input {key}: {path} not found (say where the inputs are now with {where})"
            )
        if sha256_file(path) != digest:
            raise UsageError(
                f"input {key}: {path} differs from the file the dataset was made from "
                f"(sha256 {digest[:12]}...)"
            )


def check_source_dataset(recorded: Mapping[str, Any], location: str, root: Path, fix: str) -> Path:
    """``root``, the dataset a derived dataset read as its input ``location``: its
    ``manifest.json`` has the sha256 that the derived manifest's ``inputs`` (``recorded``)
    holds for ``<location>:manifest.json`` (a manifest digests every file of its dataset).
    Else one line (``DatasetError``) naming the dataset, the expected and found digests and
    ``fix``, the option that says where the right one is. Read without following links."""
    from dataforge.store.hashing import entry_inside
    from dataforge.store.layout import MANIFEST

    want = Inputs.from_dict(recorded).files.get(input_key(location, MANIFEST))
    if want is None:
        raise DatasetError(
            f"the {location} dataset: no sha256 of its manifest is recorded, so it cannot be "
            "checked; remake this dataset from it"
        )
    try:
        got = entry_inside(Path(root), MANIFEST).sha256
    except OSError as exc:
        why = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror or "unreadable"
        raise DatasetError(
            f"the {location} dataset: {Path(root) / MANIFEST}: {why} ({fix})"
        ) from None
    if got != want:
        raise DatasetError(
            f"the {location} dataset at {root} is not the one recorded: manifest sha256 "
            f"{got[:12]}..., expected {want[:12]}... ({fix})"
        )
    return Path(root)


def check_complete(root: Path, manifest: Any) -> None:
    """Every file ``manifest`` lists is a regular file of its recorded size (no hashing), or a
    one-line ``DatasetError``: a damaged input dataset is refused before a run starts, not
    half-way through it."""
    for rel, entry in sorted(manifest.files.items()):
        path = Path(root) / rel  # the manifest checked its paths
        kind = entry_kind(path)
        if kind == "file" and path.stat().st_size == entry.size:
            continue
        why = (
            "is missing"
            if kind is None
            else f"is not a regular file ({kind})"
            if kind != "file"
            else f"has {path.stat().st_size} bytes where its manifest records {entry.size}"
        )
        raise DatasetError(
            f"{root} is damaged: {rel} {why} (check it with 'dataforge validate {root}')"
        )


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; MalformedInputError names file:line."""
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MalformedInputError(f"{path}:{n}: not JSON ({exc.msg})") from None
            if not isinstance(rec, dict):
                raise MalformedInputError(f"{path}:{n}: not a JSON object")
            yield n, rec


def read_jsonl_by_id(path: Path, what: str, needs: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """{id: record} of a JSONL file of records keyed by a string ``"id"`` (predictions, say),
    each with the fields ``needs``. A record without a string id or without a needed field, or
    an id already on an earlier line, is a MalformedInputError naming file:line (and, for a
    duplicate, the id and its first line): one id is one record."""
    out: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for n, rec in read_jsonl(path):
        rid = rec.get("id")
        if not isinstance(rid, str):
            raise MalformedInputError(f"{path}:{n}: {what} record without a string 'id'")
        missing = [k for k in needs if k not in rec]
        if missing:
            raise MalformedInputError(f"{path}:{n}: {what} record without {', '.join(missing)}")
        if rid in first:
            raise MalformedInputError(
                f"{path}:{n}: duplicate {what} id {rid!r} (first on line {first[rid]})"
            )
        first[rid] = n
        out[rid] = rec
    return out
