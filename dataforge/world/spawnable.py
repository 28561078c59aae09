"""Which object types a generator may spawn as small pickupable objects, and where they go.

Small pickupable types: the pickupable ProcTHOR types whose median asset is at most
:data:`SMALL_M` along its longest side (a baseball bat, a towel, a tennis racket and a footstool
are not small), that have an asset in the split and that procthor's receptacle co-occurrence
statistics (``receptacles.json``: how likely an object type is on a receptacle type) put on at
least one receptacle type. Benchmarks choose which receptacle types to leave out of the
statistics (:func:`receptacle_pairs`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from dataforge.world.assets import AssetCatalogue

SMALL_M = 0.45


def receptacle_pairs(
    catalogue: AssetCatalogue, exclude: Iterable[str] = ()
) -> dict[str, dict[str, float]]:
    """Receptacle type -> {object type: likelihood} from procthor's statistics, without the
    receptacle types in ``exclude``."""
    leave_out = frozenset(exclude)
    return {
        r: catalogue.receptacle_pairs(r) for r in catalogue.receptacle_types() if r not in leave_out
    }


def split_assets(catalogue: AssetCatalogue, object_type: str, split: str | None) -> tuple[str, ...]:
    """Asset ids of ``object_type`` usable in ``split`` (assets of no split: all; None: all)."""
    return tuple(
        a.asset_id
        for a in catalogue.assets_of(object_type)
        if split is None or a.split in (None, split)
    )


def small_pickupable_types(
    catalogue: AssetCatalogue,
    pairs: Mapping[str, Mapping[str, float]],
    split: str | None = None,
) -> tuple[str, ...]:
    """The small pickupable types (see the module docstring) that ``pairs`` put on some
    receptacle type, sorted."""
    on_some = {t for p in pairs.values() for t, v in p.items() if v > 0}
    small = []
    for t in catalogue.types():
        info = catalogue.type_info(t)
        if not info.pickupable or t not in on_some or not split_assets(catalogue, t, split):
            continue
        if np.median([max(a.size) for a in catalogue.assets_of(t)]) <= SMALL_M:
            small.append(t)
    return tuple(sorted(small))
