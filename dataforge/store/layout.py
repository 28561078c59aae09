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

_UNIT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_ARRAY_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def check_unit_id(unit_id: str) -> str:
    """Unit ids name shard files, so they are restricted to a safe file-name alphabet."""
    if not isinstance(unit_id, str) or not _UNIT_ID.match(unit_id):
        raise ValueError(
            f"unit id {unit_id!r} must be 1-128 characters of letters, digits, '.', '_' or '-' "
            "and start with a letter or digit"
        )
    return unit_id


def check_array_name(name: str) -> str:
    if not isinstance(name, str) or not _ARRAY_NAME.match(name):
        raise ValueError(
            f"array name {name!r} must be lower-case letters, digits and '_' starting with a letter"
        )
    return name


def shard_name(unit_id: str, fmt: str) -> str:
    """File (HDF5) or directory (Zarr) name of the shard holding one work unit."""
    return check_unit_id(unit_id) + SUFFIX[fmt]


def shard_relpath(unit_id: str, fmt: str) -> str:
    return f"{SHARDS_DIR}/{shard_name(unit_id, fmt)}"


def control_dir(root: Path) -> Path:
    return root / CONTROL_DIR


def staging_dir(root: Path) -> Path:
    return root / CONTROL_DIR / STAGING_DIR
