"""The simulators behind one world interface (:class:`~dataforge.simulators.protocol.WorldBackend`).

- ``embedded`` (default): :class:`~dataforge.simulators.embedded.EmbeddedWorld`, CPU only.
- ``ai2thor``: :class:`~dataforge.simulators.thor.ThorWorld` (AI2-THOR 5.0.0 and its Unity build).
- ``habitat``: :class:`~dataforge.simulators.habitat.HabitatWorld` (habitat-sim, an HSSD scene).

:func:`open_world` opens any of them; a simulator that is not installed stops with one line
(:class:`~dataforge.errors.MissingDependencyError`) naming what to install, never a fallback.
:class:`~dataforge.simulators.session.WorldSession` keeps one simulator per worker across houses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dataforge.errors import UsageError
from dataforge.simulators.embedded import EmbeddedWorld
from dataforge.simulators.protocol import NavSpace, WorldBackend
from dataforge.simulators.thor import ThorWorld
from dataforge.world.assets import AssetCatalogue
from dataforge.world.house import House

if TYPE_CHECKING:
    from dataforge.simulators.habitat import HabitatScene

SIMS = ("embedded", "ai2thor", "habitat")
HOUSE_SIMS = ("embedded", "ai2thor")
"""The simulators that build a ProcTHOR house (:class:`WorldSession`'s, SpaMEM's ``--sim``)."""

__all__ = [
    "HOUSE_SIMS",
    "SIMS",
    "EmbeddedWorld",
    "NavSpace",
    "ThorWorld",
    "WorldBackend",
    "open_world",
]


def open_world(
    sim: str,
    house: House | HabitatScene,
    catalogue: AssetCatalogue | None = None,
    *,
    width: int = 640,
    height: int = 480,
    vfov_deg: float = 90.0,
    **kw: Any,
) -> WorldBackend:
    """The world backend named ``sim`` (one of :data:`SIMS`) for ``house``: a
    :class:`~dataforge.world.house.House` with its ``catalogue`` (embedded, ai2thor), or a
    :class:`~dataforge.simulators.habitat.HabitatScene` (habitat; ``kw``: ``agent``, ``sim``,
    ``gpu_device_id``). A simulator that is not installed stops with one line naming what to
    install (:class:`~dataforge.errors.MissingDependencyError`)."""
    if sim == "habitat":
        from dataforge.simulators.habitat import HabitatScene, HabitatWorld

        if not isinstance(house, HabitatScene):
            raise UsageError("--sim habitat opens a habitat scene (HabitatScene), not a house")
        return HabitatWorld(house, width=width, height=height, vfov_deg=vfov_deg, **kw)
    if sim not in HOUSE_SIMS:
        raise UsageError(f"unknown --sim {sim!r}; choose one of {', '.join(SIMS)}")
    if not isinstance(house, House) or catalogue is None:
        raise UsageError(f"--sim {sim} opens a house (House) with its asset catalogue")
    library = kw.pop("library", None)  # real meshes (--assets): the embedded world's only
    if sim == "embedded":
        return EmbeddedWorld(
            house, catalogue, width=width, height=height, vfov_deg=vfov_deg, library=library
        )
    return ThorWorld(house, catalogue, width=width, height=height, vfov_deg=vfov_deg, **kw)
