"""WorldSession: one simulator per worker across many houses, with soft resets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from dataforge.errors import UsageError
from dataforge.simulators import HOUSE_SIMS, open_world
from dataforge.simulators.protocol import HouseBackend
from dataforge.simulators.thor import ThorWorld
from dataforge.world.assets import AssetCatalogue
from dataforge.world.house import House

if TYPE_CHECKING:
    from ai2thor.controller import Controller


class WorldSession:
    """One worker's simulator across many houses.

    ``embedded``: a fresh :class:`EmbeddedWorld` per :meth:`open` (nothing builds up, so the
    soft reset does nothing). ``ai2thor``: one ``Controller`` for the session's life, a
    ``CreateHouse`` per :meth:`open` (which also restores a house's initial state between
    sequences), and every ``reset_every`` houses (:meth:`house_done`) a soft reset,
    ``Controller.reset(scene="Procedural")``, which clears the Unity artifacts and memory that
    accumulate over many houses without restarting the process (SpaMEM §8.5: every five)."""

    def __init__(
        self,
        sim: str,
        catalogue: AssetCatalogue,
        *,
        width: int = 640,
        height: int = 480,
        vfov_deg: float = 90.0,
        reset_every: int = 5,
        controller: Controller | None = None,
        **kw: Any,
    ) -> None:
        if sim not in HOUSE_SIMS:
            raise UsageError(f"unknown --sim {sim!r}; choose one of {', '.join(HOUSE_SIMS)}")
        self.sim, self.catalogue, self.kw = sim, catalogue, kw
        self.size = (width, height, vfov_deg)
        self.reset_every = reset_every
        self.houses = 0
        self.resets = 0
        self.controller = controller

    def open(self, house: House) -> HouseBackend:
        w, h, fov = self.size
        if self.sim == "ai2thor":
            if self.controller is None:
                self.controller = ThorWorld._start(w, h, fov, dict(self.kw))
            return ThorWorld(
                house, self.catalogue, width=w, height=h, vfov_deg=fov, controller=self.controller
            )
        world = open_world(
            self.sim, house, self.catalogue, width=w, height=h, vfov_deg=fov, **self.kw
        )
        return cast(HouseBackend, world)  # embedded: a house's world

    def house_done(self) -> None:
        self.houses += 1
        if self.reset_every and self.houses % self.reset_every == 0:
            self.soft_reset()

    def soft_reset(self) -> None:
        if self.sim == "ai2thor" and self.controller is not None:
            self.controller.reset(scene="Procedural")
            self.resets += 1

    def close(self) -> None:
        stop = getattr(self.controller, "stop", None)
        if stop is not None:
            stop()
        self.controller = None
