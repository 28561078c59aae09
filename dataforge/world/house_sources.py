"""Where houses come from: a folder of ProcTHOR house JSON files, or a JSON-lines file of houses
(one house per line, gzip-compressed or not) as ProcTHOR-10K is distributed.

A source is indexed 0..n-1: a folder's ``*.json`` files in sorted name order, a JSON-lines
file's non-empty lines in order. :func:`open_source` checks the location and counts its houses
(reading a compressed file once); :meth:`HouseSource.read` returns house ``k`` as a dict. A
``.jsonl.gz`` cannot be read at an offset, so reading house ``k`` decompresses the lines before
it: fine next to the minutes a house takes to use, and it keeps work units independent.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataforge.errors import InputNotFoundError, MalformedInputError, UsageError
from dataforge.inputs import read_json


@dataclass(frozen=True)
class HouseSource:
    path: Path
    kind: str  # dir | jsonl
    names: tuple[str, ...]  # per house: a file name (dir) or "line-<k>" (jsonl)

    def __len__(self) -> int:
        return len(self.names)

    def rel(self, k: int) -> str:
        """The path of house ``k``'s file relative to the source ('' for a JSON-lines file)."""
        return self.names[k] if self.kind == "dir" else ""

    def read(self, k: int) -> dict[str, Any]:
        if not 0 <= k < len(self.names):
            raise UsageError(f"{self.path} holds {len(self.names)} houses; there is no house {k}")
        if self.kind == "dir":
            data = read_json(self.path / self.names[k], "ProcTHOR house")
        else:
            number, line = next(item for i, item in enumerate(_lines(self.path)) if i == k)
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MalformedInputError(
                    f"{self.path}: house {k} (line {number}) is not valid JSON ({exc})"
                ) from None
        if not isinstance(data, dict):
            raise MalformedInputError(f"{self.path}: house {k} is not a JSON object")
        return data


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The non-empty lines of ``path`` with their 1-based line numbers in the file."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as raw, io.TextIOWrapper(raw, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.strip():
                    yield number, line
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise MalformedInputError(f"{path}: cannot read houses ({exc})") from None


def open_source(path: Path | str) -> HouseSource:
    """The houses at ``path``: a folder of ``*.json`` or a ``.jsonl`` / ``.jsonl.gz`` file."""
    path = Path(path)
    if path.is_dir():
        names = tuple(sorted(p.name for p in path.glob("*.json") if p.is_file()))
        if not names:
            raise InputNotFoundError(f"{path}: no ProcTHOR house *.json files in this folder")
        return HouseSource(path, "dir", names)
    if path.is_file():
        if not path.name.endswith((".jsonl", ".jsonl.gz")):
            raise UsageError(f"{path}: a house source is a folder of *.json or a .jsonl(.gz) file")
        n = sum(1 for _ in _lines(path))
        if n == 0:
            raise MalformedInputError(f"{path}: no houses in this file")
        return HouseSource(path, "jsonl", tuple(f"line-{k}" for k in range(n)))
    raise InputNotFoundError(f"{path}: house source not found")
