"""The one world interface (dataforge/simulators/protocol.py): the members pipelines use, on the
embedded world and AI2-THOR (through the controller stand-in of test_backends.py), and
open_world's one-line refusals."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from roomhelpers import one_room_house, standing
from world.test_backends import HOUSE, FakeController

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.simulators import HOUSE_SIMS, SIMS, EmbeddedWorld, ThorWorld, open_world
from dataforge.simulators.protocol import HouseBackend, NavSpace, WorldBackend
from dataforge.world import load_catalogue, load_house
from dataforge.world.house import HouseObject

CAT = load_catalogue()


def _house() -> object:
    objects = [
        standing(CAT, "Vase|1", "Vase_Flat_2", 2.0, 3.0),
        standing(CAT, "Table|1", "Dining_Table_16_1", 4.0, 3.0),
    ]
    return load_house(one_room_house(objects), catalogue=CAT)


def test_the_embedded_world_answers_the_whole_interface() -> None:
    house = _house()
    world: HouseBackend = EmbeddedWorld(house, CAT, width=16, height=12)
    nav: NavSpace = world.nav
    assert world.has("Vase|1") and not world.has("Vase|2")
    assert world.position("Vase|1") == world.world.object("Vase|1").position
    pos, rot = world.pose("Vase|1")
    assert pos == world.position("Vase|1") and rot == world.world.object("Vase|1").rotation
    c = world.center("Vase|1")
    assert c == pytest.approx(tuple(world.world.box("Vase|1").center))
    (room,) = world.rooms()
    assert room.id == house.rooms[0].id and len(room.polygon) == 4 and room.area_m2 == 36.0
    assert world.floor_y() == house.rooms[0].floor_y
    a, b = (1.0, world.floor_y(), 1.0), (5.0, world.floor_y(), 5.0)
    assert nav.distance(a, b) == pytest.approx(float(nav.distances([a], [b])[0, 0]))
    assert nav.shortest_path(a, b) and nav.segment_clear(a, (1.5, a[1], 1.0))
    assert "Vase" in world.semantics.to_dict() or world.semantics.to_dict()
    res = world.spawn("Apple_1", "Table|1", np.random.default_rng(0))
    assert res.ok and world.has(res.object_id)
    was = world.world.object(res.object_id)
    world.pick(res.object_id)  # out of the world, its id kept
    assert not world.has(res.object_id)
    assert world.appearance(res.object_id, "Apple_1") is not None
    back = world.place_at(was, "Table|1")  # at its recorded pose
    assert back.ok and world.pose(res.object_id) == (was.position, was.rotation)
    world.close()


@pytest.mark.skipif(not HOUSE.is_file(), reason="needs ../shared/data houses")
def test_ai2thor_says_what_it_cannot_do_in_one_line() -> None:
    house = load_house(HOUSE, catalogue=CAT)
    world: WorldBackend = ThorWorld(house, CAT, controller=FakeController(), width=4, height=3)
    oid = house.objects[0].id
    assert world.has(oid) and world.position(oid) == house.objects[0].position
    assert world.appearance(oid) is None and len(world.rooms()) == len(house.rooms)
    obj = HouseObject("x", "Vase_Flat_2", "Vase", (0, 0, 0), (0, 0, 0))
    for member, call in (
        ("nav", lambda: world.nav),
        ("place_at", lambda: world.place_at(obj, oid)),
        ("carry", lambda: world.carry(oid)),
    ):
        with pytest.raises(UsageError, match=member) as exc:
            call()
        assert "\n" not in str(exc.value)
    world.pick(oid)
    assert not world.has(oid)


def test_open_world_names_every_simulator_and_refuses_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert SIMS == ("embedded", "ai2thor", "habitat") and HOUSE_SIMS == ("embedded", "ai2thor")
    house = _house()
    assert open_world("embedded", house, CAT, width=8, height=6).name == "embedded"
    with pytest.raises(UsageError, match="unknown --sim"):
        open_world("unity", house, CAT)
    with pytest.raises(UsageError, match="HabitatScene"):
        open_world("habitat", house, CAT)
    from dataforge.simulators.habitat import HabitatScene

    monkeypatch.setitem(sys.modules, "habitat_sim", None)  # not installed
    with pytest.raises(MissingDependencyError, match="conda install habitat-sim") as exc:
        open_world("habitat", HabitatScene("none.scene_dataset_config.json", "none"))
    assert "\n" not in str(exc.value)
    assert np.isfinite(house.rooms[0].floor_y)
