"""Archetypes: a parametric shape for every ProcTHOR object type, fitted to each asset's box.

An archetype is a function ``(builder, info) -> None`` that draws an asset with a
:class:`~dataforge.world.shapes.ShapeBuilder` (parts, support surfaces, sub-receptacles) from the
asset's size and id; :func:`register` binds it to object types. Variants of one type differ
deterministically by ``assetId`` (``builder.rng``, seeded from it): proportions within the box,
number of shelves or drawers, legs or pedestal.

Modules: ``furniture`` (tables, seating, beds, storage, counters, large appliances), ``fixtures``
(wall and room fixtures, lamps, plants, electronics, doors and windows), ``kitchen`` and
``household`` (small objects; their shared helpers in ``small_parts``). :func:`shape_of` gives an
asset's shape, cached per asset.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from dataforge.errors import UsageError
from dataforge.world.assets import AssetInfo
from dataforge.world.shapes import Shape, ShapeBuilder

Archetype = Callable[[ShapeBuilder, AssetInfo], None]
_REGISTRY: dict[str, tuple[str, Archetype]] = {}


def register(*object_types: str, name: str | None = None) -> Callable[[Archetype], Archetype]:
    """Bind the decorated archetype to ``object_types`` (its name: ``name`` or the function's)."""

    def bind(fn: Archetype) -> Archetype:
        for t in object_types:
            if t in _REGISTRY:
                raise UsageError(f"object type {t!r} has two archetypes")
            _REGISTRY[t] = (name or fn.__name__, fn)
        return fn

    return bind


def _load() -> None:
    from dataforge.world.archetypes import fixtures, furniture, household, kitchen  # noqa: F401


def archetype_of(object_type: str) -> str | None:
    """The archetype's name for ``object_type`` (None when none is registered)."""
    _load()
    entry = _REGISTRY.get(object_type)
    return None if entry is None else entry[0]


def covered_types() -> tuple[str, ...]:
    _load()
    return tuple(sorted(_REGISTRY))


@functools.lru_cache(maxsize=4096)
def shape_of(info: AssetInfo) -> Shape:
    """The shape of asset ``info`` (closed); a :class:`UsageError` for a type without one."""
    _load()
    entry = _REGISTRY.get(info.object_type)
    if entry is None:
        raise UsageError(f"no archetype for object type {info.object_type!r}")
    name, fn = entry
    builder = ShapeBuilder(info.size, info.asset_id, name)
    fn(builder, info)
    return builder.build()
