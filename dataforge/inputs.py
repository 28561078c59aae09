"""Reading external input files with the one-line errors every command gives for bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from dataforge.errors import InputNotFoundError, MalformedInputError


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
