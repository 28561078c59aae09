"""sha256 and sizes of dataset files, the evidence that ``validate`` checks."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
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
