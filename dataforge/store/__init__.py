"""Sharded Zarr / HDF5 datasets with checksummed manifests: write, read, validate.

Public API:

- :class:`Schema`, :class:`ArraySpec`: the arrays every episode holds.
- :class:`Episode`: what a pipeline yields (id, arrays, metadata).
- :class:`DatasetWriter`: write a dataset in-process; :mod:`dataforge.run` drives the same
  machinery from worker processes or Ray.
- :func:`open_dataset`: read either format lazily; :func:`validate`: check a dataset end to end.

See :mod:`dataforge.store.layout` for the on-disk layout and format version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataforge.store.episode import Episode
from dataforge.store.layout import FORMAT_VERSION, FORMATS
from dataforge.store.schema import ArraySpec, Schema

if TYPE_CHECKING:
    from dataforge.store.reader import Dataset, open_dataset
    from dataforge.store.validation import ValidationReport, validate
    from dataforge.store.writer import DatasetWriter

__all__ = [
    "FORMATS",
    "FORMAT_VERSION",
    "ArraySpec",
    "Dataset",
    "DatasetWriter",
    "Episode",
    "Schema",
    "ValidationReport",
    "open_dataset",
    "validate",
]

_LAZY = {
    "Dataset": "dataforge.store.reader",
    "open_dataset": "dataforge.store.reader",
    "DatasetWriter": "dataforge.store.writer",
    "validate": "dataforge.store.validation",
    "ValidationReport": "dataforge.store.validation",
}


def __getattr__(name: str) -> Any:  # lazy: zarr and h5py load only when used
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'dataforge.store' has no attribute {name!r}")
