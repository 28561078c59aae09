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

import re
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
