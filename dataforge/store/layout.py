"""Format version and on-disk layout of a dataforge dataset: the one place for path templates.

A dataset directory looks like this::

    DIR/
      manifest.json          # index, schema, config, seed, sha256 of every file; written last
      croissant.json         # Croissant 1.0 metadata (mlcommons.org/croissant) for catalogues
      episodes.csv           # episode id -> shard, rows: the record set Croissant points at
      shards/
        <unit-id>.zarr/      # one shard per work unit: a Zarr v3 group (sharding codec), or
        <unit-id>.h5         # one HDF5 file per unit (h5py + hdf5plugin blosc)
      <extra files>          # files a pipeline writes beside the shards (listed in the manifest)
      .dataforge/            # run control, never data: lock, run.json, journal.jsonl, staging/

Inside a shard every episode of the unit is concatenated along axis 0 of each array; the manifest's
episode index gives each episode's rows ``[start, stop)`` per array. The reserved array
``_episodes`` holds the shard's own index and the episodes' metadata as UTF-8 JSON.

``FORMAT_VERSION`` is recorded in every manifest; readers refuse newer versions with a message that
says to upgrade, and keep readers for older ones.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

FORMAT_VERSION = 1

MANIFEST = "manifest.json"
CROISSANT = "croissant.json"
EPISODE_INDEX = "episodes.csv"
SHARDS_DIR = "shards"
CONTROL_DIR = ".dataforge"
LOCK_FILE = "lock"
RUN_FILE = "run.json"
JOURNAL_FILE = "journal.jsonl"
STAGING_DIR = "staging"

SHARD_META_ARRAY = "_episodes"

FORMATS = ("zarr", "hdf5")
SUFFIX = {"zarr": ".zarr", "hdf5": ".h5"}

# name kind -> (pattern, what the pattern allows)
_NAMES = {
    "unit id": (
        re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"),
        "1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
    ),
    "episode id": (
        re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,255}$"),
        "1-256 letters, digits and ._:/+- starting with a letter or digit",
    ),
    "array name": (
        re.compile(r"^[a-z][a-z0-9_]{0,63}$"),
        "lower-case letters, digits and '_' starting with a letter",
    ),
}


def _check_name(kind: str, value: str) -> str:
    pattern, allowed = _NAMES[kind]
    if not isinstance(value, str) or not pattern.match(value):
        raise ValueError(f"{kind} {value!r} must be {allowed}")
    return value


def check_unit_id(unit_id: str) -> str:
    """Unit ids name shard files, so they are restricted to a safe file-name alphabet."""
    return _check_name("unit id", unit_id)


def check_episode_id(episode_id: str) -> str:
    return _check_name("episode id", episode_id)


def check_array_name(name: str) -> str:
    return _check_name("array name", name)


def shard_name(unit_id: str, fmt: str) -> str:
    """File (HDF5) or directory (Zarr) name of the shard holding one work unit."""
    return check_unit_id(unit_id) + SUFFIX[fmt]


def control_dir(root: Path) -> Path:
    return root / CONTROL_DIR


def staging_dir(root: Path) -> Path:
    return root / CONTROL_DIR / STAGING_DIR


# -- paths a manifest records: a dataset is untrusted input ------------------------------------

_DRIVE = re.compile(r"^[A-Za-z]:")
PATH_RULE = (
    "a dataset path is relative to the dataset directory, '/'-separated, without '..', '.' or "
    "empty parts, backslashes, drive letters or control characters"
)


def path_problem(rel: object) -> str | None:
    """What makes ``rel`` unfit as a path recorded in a dataset (None when it is fine).

    The one rule for every relative path a manifest, journal or index records (shard paths,
    ``files`` keys, an episode's shard): it names something inside the dataset directory, so a
    dataset from elsewhere cannot make ``validate``, the readers or ``--overwrite`` read, hash or
    remove anything outside it. ``a/../b`` is refused too (only canonical paths are written)."""
    if not isinstance(rel, str):
        return f"is not a string ({type(rel).__name__})"
    if not rel:
        return "is empty"
    if "\x00" in rel:
        return "contains a NUL byte"
    if any(ord(c) < 32 or ord(c) == 127 for c in rel):
        return "contains a control character"
    if "\\" in rel:
        return "contains a backslash"
    if rel.startswith("/"):
        return "is absolute"
    if _DRIVE.match(rel):
        return "starts with a drive letter"
    parts = rel.split("/")
    if ".." in parts:
        return "leaves the dataset directory ('..')"
    if "" in parts:
        return "has an empty part ('//' or a trailing '/')"
    if "." in parts:
        return "has a '.' part"
    return None


def check_relative_path(rel: object, what: str = "path") -> str:
    """``rel`` if it is a safe dataset-relative path (see :func:`path_problem`), else
    ``ValueError`` naming ``what`` and the path."""
    problem = path_problem(rel)
    if problem is not None:
        raise ValueError(f"{what} {rel!r} {problem}: {PATH_RULE}")
    return rel  # type: ignore[return-value]


def dataset_path(root: Path, rel: object, what: str = "path") -> Path:
    """``root / rel`` for a path a dataset records, after :func:`check_relative_path`."""
    return Path(root) / check_relative_path(rel, what)


def link_in(root: Path, rel: str) -> str | None:
    """The first part of ``root/rel`` below ``root`` that is a symbolic link (as a path relative
    to ``root``), or None. ``root`` itself may be a link: that is the user's own choice. A missing
    part ends the search (nothing further can be a link)."""
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        sub = "/".join(parts[:i])
        try:
            mode = os.lstat(Path(root) / sub).st_mode
        except OSError:
            return None
        if stat.S_ISLNK(mode):
            return sub
    return None


def entry_kind(path: Path) -> str | None:
    """``"file"``, ``"dir"``, ``"link"`` or ``"other"`` (fifo, socket, device) for ``path``
    itself, without following a link; None when nothing is there."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "other"
