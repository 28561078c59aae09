"""``dataforge validate``: the store's checks of a dataset (:mod:`dataforge.store.validation`)
with the invariants its pipeline registered (:mod:`dataforge.registry`).

The store sits below the registry: it checks files, schema and episodes and asks a lookup for a
pipeline's invariant hooks; this module hands it the registry's.
"""

from __future__ import annotations

from pathlib import Path

from dataforge.progress import Progress
from dataforge.registry import invariant_hooks
from dataforge.store.validation import ValidationReport
from dataforge.store.validation import validate as validate_store

__all__ = ["ValidationReport", "validate"]


def validate(
    path: str | Path,
    *,
    deep: bool = False,
    invariants: bool = True,
    progress: Progress | None = None,
) -> ValidationReport:
    """Check a dataset directory end to end (see :mod:`dataforge.store.validation`), with its
    pipeline's invariants unless ``invariants`` is False."""
    return validate_store(
        path, deep=deep, hooks_for=invariant_hooks if invariants else None, progress=progress
    )
