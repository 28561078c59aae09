"""SpaMEM captures what is acted on open (§8.3's pre-action OpenObject): a place into a drawer
and a remove from a fridge, run through :func:`run_sequence` with a scripted planner in a
one-room house (a dresser against the back wall, a fridge against the right one)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from renderhelpers import needs_egl
from roomhelpers import one_room_house, standing

from dataforge.pipelines.spamem.capture import CaptureSettings
from dataforge.pipelines.spamem.planner import PlanState, Proposal
from dataforge.pipelines.spamem.rules import Action, Rules
from dataforge.pipelines.spamem.sequence import Scene, run_sequence
from dataforge.simulators import EmbeddedWorld
from dataforge.world import load_catalogue, load_house
from dataforge.world.navigation import house_floor_y, house_nav_grid
from dataforge.world.viewpoints import WallSight

CAT = load_catalogue()
pytestmark = needs_egl()
SETTINGS = CaptureSettings(160, 120, 90.0, 16, 1.5)  # 8 azimuths x 2 heights


class Scripted:
    """A planner that proposes the given actions, one per step."""

    name = "scripted"

    def __init__(self, actions: list[Action]) -> None:
        self.actions = actions

    def begin(self, sequence: str, rng: np.random.Generator) -> None:
        pass

    def propose(self, state: PlanState, feedback: str | None) -> Proposal:
        return Proposal(self.actions[state.step - 1], {"planner": self.name})

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


def _run(house_objects: list[dict[str, Any]], actions: list[Action], seed: int = 0):
    house = load_house(one_room_house(house_objects), catalogue=CAT)
    backend = EmbeddedWorld(house, CAT, width=SETTINGS.width, height=SETTINGS.height)
    grid = house_nav_grid(house, CAT)
    scene = Scene(grid, WallSight(house), house_floor_y(house), grid.largest_component())
    run = run_sequence(
        backend,
        scene,
        Scripted(actions),
        Rules(CAT, "train"),
        SETTINGS,
        sequence="s",
        steps=len(actions),
        recoveries=1,
        place_rng=np.random.default_rng(seed),
    )
    return backend, run


def _receptacle(graph: dict[str, Any], rid: str) -> dict[str, Any]:
    return next(r for r in graph["receptacles"] if r["id"] == rid)


def test_a_place_into_a_drawer_is_captured_open_and_shut_afterwards() -> None:
    dresser = CAT.assets_of("Dresser")[0]
    book = CAT.asset("Book_13")  # 21 x 3 x 28 cm: fits a drawer
    objects = [standing(CAT, "Dresser|1", dresser.asset_id, 3.0, 0.3)]
    objects[0]["children"] = [
        {
            "id": "Book|1",
            "assetId": book.asset_id,
            "kinematic": False,
            "position": {"x": 2.7, "y": dresser.size[1] + book.size[1] / 2, "z": 0.3},
            "rotation": {"x": 0, "y": 0, "z": 0},
        }
    ]
    drawer = "Dresser|1|Drawer_2"
    backend, run = _run(
        objects, [Action("place", "Book|1", drawer), Action("spawn", "Apple", "Dresser|1")]
    )
    try:
        first, second = run.steps[1], run.steps[2]
        assert first["element"] == drawer and first["opened"] == [drawer]
        assert second["opened"] == []
        assert _receptacle(run.graphs[1], drawer)["openness"] == 1.0
        assert _receptacle(run.graphs[2], drawer)["openness"] == 0.0
        assert first["acted_visible_views"] >= 4
        # views 16..31 are step 1's: the book, drawn pulled out with the drawer, is in them;
        # in step 2's (32..47) the drawer is shut and the book hidden
        seen = [int((run.frames.instance[k] == backend.ids("Book|1")).sum()) for k in range(48)]
        assert sum(n >= 10 for n in seen[16:32]) == first["acted_visible_views"]
        assert not any(seen[32:])
        assert backend.world.object("Dresser|1").open_elements == ()
    finally:
        backend.close()


def test_a_remove_from_a_fridge_shows_its_inside() -> None:
    fridge = CAT.assets_of("Fridge")[0]
    apple = CAT.assets_of("Apple")[0]
    objects = [standing(CAT, "Fridge|1", fridge.asset_id, 5.6, 3.0, yaw=270.0)]
    house = load_house(one_room_house(objects), catalogue=CAT)
    world = EmbeddedWorld(house, CAT)
    rng = np.random.default_rng(1)
    placed = [world.world.spawn(apple.asset_id, "Fridge|1", rng, surface=i) for i in (0, 1)]
    assert all(p.ok for p in placed)
    world.world.set_openness("Fridge|1", None)
    raw = world.world.house().raw["objects"]
    backend, run = _run(
        raw,
        [Action("remove", placed[0].object_id), Action("spawn", "Apple", "Fridge|1")],
    )
    try:
        step = run.steps[1]
        assert step["action"] == "remove" and step["opened"] == ["Fridge|1"]
        assert _receptacle(run.graphs[1], "Fridge|1")["openness"] == 1.0
        assert step["acted_visible_views"] >= 4
        # the apple left inside is seen while the fridge is open, not once it is shut (step 0)
        other = backend.ids(placed[1].object_id)
        open_views = sum((run.frames.instance[k] == other).any() for k in range(16, 32))
        shut_views = sum((run.frames.instance[k] == other).any() for k in range(0, 16))
        assert open_views >= 1 and shut_views == 0
    finally:
        backend.close()
        world.close()


@pytest.mark.parametrize("action", ["spawn"])
def test_acted_visible_views_is_recorded_for_every_step(action: str) -> None:
    dresser = CAT.assets_of("Dresser")[0]
    objects = [standing(CAT, "Dresser|1", dresser.asset_id, 3.0, 0.3)]
    backend, run = _run(objects, [Action(action, "Apple", "Dresser|1")])
    try:
        assert run.steps[1]["opened"] == []
        assert run.steps[1]["acted_visible_views"] >= 4
    finally:
        backend.close()
