"""Durable, atomic file operations: write under a temporary name, fsync, rename into place.

Nothing a crash can leave behind is ever read as data: a file is either absent, its old version,
or its complete new version. Directories (Zarr shards) are fsynced file by file and renamed whole.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Callable, Collection
from pathlib import Path

from dataforge.errors import DataforgeError

TMP_PREFIX = ".tmp-"


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(path: Path) -> None:
    """fsync a file, or every file and directory under a directory (children before parents)."""
    if path.is_file():
        with open(path, "rb+") as f:
            os.fsync(f.fileno())
        return
    for dirpath, _dirnames, filenames in os.walk(path, topdown=False):
        for name in filenames:
            with open(os.path.join(dirpath, name), "rb+") as f:
                os.fsync(f.fileno())
        fsync_dir(Path(dirpath))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file in the same directory, then rename)."""
    path = Path(path)
    tmp = path.with_name(f"{TMP_PREFIX}{path.name}.{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def atomic_write_with(path: Path, write: Callable[[Path], None]) -> None:
    """Let ``write(tmp)`` create a file at a temporary path, then fsync it and rename it to
    ``path`` (for files too large to hold in memory)."""
    path = Path(path)
    tmp = path.with_name(f"{TMP_PREFIX}{path.name}.{os.getpid()}")
    try:
        write(tmp)
        fsync_tree(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def commit_path(src: Path, dst: Path) -> None:
    """Move a finished, fsynced file or directory into place and make the rename durable."""
    if dst.exists():
        remove_path(dst)
    os.replace(src, dst)
    fsync_dir(dst.parent)


def remove_path(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def remove_temporaries(root: Path, keep: Collection[str] = ()) -> list[str]:
    """Remove every file or folder under ``root`` named like this module's temporaries
    (``TMP_PREFIX``...): what a run killed while writing a file leaves behind (an atomic write,
    a video being encoded). Links are not followed; ``keep``: relative paths that are data.
    Returns the relative paths removed. Only for a directory the caller holds the lock of."""
    removed: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in sorted([*dirnames, *filenames]):
            rel = (here / name).relative_to(root).as_posix()
            if name.startswith(TMP_PREFIX) and rel not in keep:
                remove_path(here / name)
                removed.append(rel)
        dirnames[:] = [d for d in dirnames if os.path.lexists(here / d)]
    return removed


def disk_error(exc: OSError, what: str) -> DataforgeError | None:
    """Translate a full disk or quota error into a DataforgeError that says what to do."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DataforgeError(
            f"no space left on the device while {what}; committed shards are intact: "
            "free some space and rerun the same command to resume"
        )
    return None
