"""sha256 and sizes of dataset files, the evidence that ``validate`` checks."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_BLOCK = 1 << 20


@dataclass(frozen=True)
class FileEntry:
    """Size in bytes and sha256 of one file of a dataset."""

    size: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {"size": self.size, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FileEntry:
        size, digest = d["size"], d["sha256"]
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"file size must be a non-negative int, got {size!r}")
        if not isinstance(digest, str) or len(digest) != 64:
            raise ValueError(f"sha256 must be 64 hex characters, got {digest!r}")
        return cls(size, digest)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_BLOCK):
            h.update(chunk)
    return h.hexdigest()


def file_entry(path: Path) -> FileEntry:
    return FileEntry(size=os.path.getsize(path), sha256=sha256_file(path))


def list_files(root: Path, rel: str = "") -> list[str]:
    """All regular files under ``root/rel`` as sorted POSIX paths relative to ``root``."""
    base = root / rel if rel else root
    if base.is_file():
        return [rel]
    out = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in filenames:
            full = Path(dirpath, name)
            out.append(full.relative_to(root).as_posix())
    return sorted(out)


def hash_files(root: Path, rel: str = "") -> dict[str, FileEntry]:
    """sha256 and size of every file under ``root/rel``, keyed by path relative to ``root``."""
    return {p: file_entry(root / p) for p in list_files(root, rel)}


# -- reading a dataset without following links -------------------------------------------------


def open_inside(root: Path, rel: str) -> int:
    """A read-only file descriptor of the regular file ``root/rel``, opened part by part without
    following any symbolic link below ``root`` (``root`` itself may be one). A link anywhere on
    the way is ``OSError(ELOOP)``, anything but a regular file at the end ``OSError(EINVAL)``;
    a fifo does not block. ``rel`` must already be a checked relative path."""
    parts = rel.split("/")
    dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
            os.close(dfd)
            dfd = nfd
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    finally:
        os.close(dfd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(Path(root) / rel))
    return fd


def read_inside(root: Path, rel: str) -> bytes:
    """The bytes of ``root/rel`` (see :func:`open_inside`)."""
    with os.fdopen(open_inside(root, rel), "rb") as f:
        return f.read()


def entry_inside(root: Path, rel: str) -> FileEntry:
    """Size and sha256 of ``root/rel`` read without following links (see :func:`open_inside`)."""
    h = hashlib.sha256()
    size = 0
    with os.fdopen(open_inside(root, rel), "rb") as f:
        while chunk := f.read(_BLOCK):
            h.update(chunk)
            size += len(chunk)
    return FileEntry(size, h.hexdigest())


@dataclass
class Tree:
    """What is under a directory, never following a link: regular files, symbolic links (not
    descended), other entries (fifos, sockets, devices) and folders that cannot be listed, as
    sorted paths relative to it."""

    files: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


def scan_tree(root: Path, rel: str = "") -> Tree:
    """Everything under ``root/rel`` (see :class:`Tree`); paths are relative to ``root``. Only
    ``root/rel`` itself failing to list raises ``OSError``."""
    tree = Tree()
    top = Path(root) / rel if rel else Path(root)
    stack = [(top, f"{rel}/" if rel else "")]
    while stack:
        path, prefix = stack.pop()
        try:
            it = os.scandir(path)
        except OSError:
            if path == top:
                raise
            tree.unreadable.append(prefix.rstrip("/"))
            continue
        with it:
            for entry in it:
                sub = f"{prefix}{entry.name}"
                if entry.is_symlink():
                    tree.links.append(sub)
                elif entry.is_dir(follow_symlinks=False):
                    stack.append((Path(entry.path), sub + "/"))
                elif entry.is_file(follow_symlinks=False):
                    tree.files.append(sub)
                else:
                    tree.other.append(sub)
    for paths in (tree.files, tree.links, tree.other, tree.unreadable):
        paths.sort()
    return tree
