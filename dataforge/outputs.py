"""What a command writes, checked before any work: one line (exit 2) instead of a late traceback
or a destroyed input.

:func:`check_apart` is the one rule that keeps a command's inputs safe: an output that is,
contains or lies inside an input is refused (paths compared with links resolved, so a link or
``..`` does not hide it). The runner applies it to every generation run (``--out`` against the
locations the job read), commands that write files call :func:`check_output_file`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from dataforge.errors import UsageError
from dataforge.store.layout import MANIFEST


def _real(path: Path | str) -> Path:
    return Path(path).expanduser().resolve()


def _relation(out: Path | str, src: Path | str) -> str | None:
    """How ``out`` overlaps ``src`` (an existing input), or None when they are apart."""
    a, b = _real(out), _real(src)
    if a == b:
        return "is"
    if b in a.parents:
        return "lies inside"
    if a in b.parents:
        return "contains"
    try:  # a hard link or a second mount of the same file or folder
        if os.path.exists(out) and os.path.samefile(out, src):
            return "is"
    except OSError:
        pass
    return None


def holding_dataset(path: Path | str) -> Path | None:
    """The dataforge dataset that ``path`` lies inside (the nearest folder above it with a
    ``manifest.json`` that has an integer ``format_version``), or None."""
    for folder in _real(path).parents:
        manifest = folder / MANIFEST
        if not manifest.is_file():
            continue
        try:
            version = json.loads(manifest.read_bytes()).get("format_version")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(version, int):
            return folder
    return None


def check_apart(output: Path | str, what: str, inputs: Iterable[Path | str | None]) -> None:
    """Refuse (``UsageError``, one line) an ``output`` (``what``: the option naming it, e.g.
    ``--out``) that is, contains or lies inside one of ``inputs``: writing it, resuming into it
    or ``--overwrite`` would change or remove what the command reads. An input file that lies
    inside a dataset protects that whole dataset (a file written into it fails its
    ``validate``). Inputs that do not exist hold nothing to protect (a missing input is its
    command's own error)."""
    for given in inputs:
        if given is None or not os.path.lexists(given):
            continue
        relation = _relation(output, given)
        if relation is not None:
            raise UsageError(
                f"refusing {what} {output}: it {relation} the input {given}, which the command "
                f"reads; choose another {what}"
            )
        dataset = holding_dataset(given)
        if dataset is not None and _relation(output, dataset) is not None:
            raise UsageError(
                f"refusing {what} {output}: it {_relation(output, dataset)} the dataset "
                f"{dataset} that holds the input {given}; choose another {what}"
            )


def check_output_file(
    path: Path | str, what: str, inputs: Iterable[Path | str | None] = ()
) -> Path:
    """Make sure ``path`` (a file a command will write, e.g. ``--plot``) can be written, before
    any work: apart from the command's ``inputs`` (:func:`check_apart`), its folder must exist
    (it is not created) and accept the file. The file is created and removed again (an existing
    one is opened for writing, not truncated); a problem is a one-line ``UsageError`` naming
    ``what``."""
    path = Path(path)
    check_apart(path, what, inputs)
    parent = path.parent
    if not parent.is_dir():
        why = "is not a folder" if parent.exists() else "does not exist"
        raise UsageError(f"cannot write {what} {path}: the folder {parent} {why}")
    existed = os.path.lexists(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise UsageError(f"cannot write {what} {path}: {exc.strerror}") from None
    os.close(fd)
    if not existed:
        try:
            path.unlink()
        except OSError as exc:
            raise UsageError(f"cannot write {what} {path}: {exc.strerror}") from None
    return path
