"""FindingDory's attribute templates (T16-T20) ask about what the embedded world draws: a day's
objects carry the words for how each is drawn (dataforge.world.appearance), and the category
table only adds functionality and a material the drawing does not name."""

from __future__ import annotations

import numpy as np
from roomhelpers import one_room_house, standing

from dataforge.pipelines.findingdory.day_world import drawn_words
from dataforge.pipelines.findingdory.log import EpisodeLog
from dataforge.pipelines.findingdory.templates import instantiate, load_templates
from dataforge.simulators import EmbeddedWorld
from dataforge.simulators.habitat import HabitatWorld
from dataforge.world import load_catalogue, load_house

CAT = load_catalogue()
T = {t.id: t for t in load_templates()}


def _day() -> EmbeddedWorld:
    assets = ("Vase_Flat_2", "Vase_Tall_3", "Tomato_1")
    objects = [standing(CAT, f"Thing|{k}", a, 2.0 + k, 3.0) for k, a in enumerate(assets, 1)]
    house = load_house(one_room_house(objects), catalogue=CAT)
    return EmbeddedWorld(house, CAT, width=32, height=32)


def _log(drawn: dict) -> EpisodeLog:
    objects, interactions = [], []
    for k, (oid, cat) in enumerate(
        (("Thing|1", "Vase"), ("Thing|2", "Vase"), ("Thing|3", "Tomato"))
    ):
        span = (100 * k + 10, 100 * k + 20), (100 * k + 50, 100 * k + 60)
        objects.append(
            {
                "id": oid,
                "category": cat,
                "interacted": True,
                "start_receptacle": "Table|1",
                "goal_receptacle": "Table|1",
                "pick": list(span[0]),
                "place": list(span[1]),
            }
        )
        interactions.append({"object": oid, "pick": list(span[0]), "place": list(span[1])})
    log = EpisodeLog.from_dict(
        {
            "objects": objects,
            "receptacles": [{"id": "Table|1", "category": "DiningTable"}],
            "rooms": [],
            "interactions": interactions,
            "frames": 400,
        }
    )
    return log.with_attributes(drawn)


def _texts(tid: str, log: EpisodeLog) -> dict[str, list[tuple[str, ...]]]:
    got = instantiate(T[tid], log, np.random.default_rng(0), cap=None)
    return {t.text: [tuple(g) for g in t.goals] for t in got}  # type: ignore[union-attr]


def test_the_days_objects_are_described_as_drawn_and_the_tasks_ask_so() -> None:
    day = _day()
    drawn = {oid: drawn_words(day, oid) for oid in ("Thing|1", "Thing|2", "Thing|3")}
    # Vase_Flat_2 is red porcelain, Vase_Tall_3 blue porcelain, both plain; a tomato is red
    assert drawn["Thing|1"] == {
        "shape": "bulbous",
        "color": "red",
        "print_or_design": None,
        "material": "ceramic",
    }
    assert drawn["Thing|2"]["color"] == "blue"
    assert drawn["Thing|3"]["color"] == "red" and drawn["Thing|3"]["material"] is None
    log = _log(drawn)
    attrs = {o.id: o.attributes for o in log.objects}
    assert attrs["Thing|1"] == {**drawn["Thing|1"], "functionality": "holding flowers"}
    assert attrs["Thing|3"]["material"] == "organic"  # not drawn from a material: the table's
    # the per-category table called every vase a blue, painted-pattern, cylindrical one
    colors = _texts("T17", log)
    assert colors["Navigate back to a red colored object that you interacted with yesterday."] == [
        ("Thing|1", "Thing|3")
    ]
    assert colors["Navigate back to a blue colored object that you interacted with yesterday."] == [
        ("Thing|2",)
    ]
    assert instantiate(T["T18"], log, np.random.default_rng(0), cap=None).reason == (
        "no interacted object has a known print_or_design"
    )  # no vase or tomato has anything printed or painted on it
    shapes = _texts("T16", log)
    assert not any("cylindrical" in t for t in shapes)


def test_an_object_carried_off_is_described_by_its_asset() -> None:
    day = _day()
    day.pick("Thing|1")
    assert drawn_words(day, "Thing|1", "Vase_Flat_2")["color"] == "red"


def test_a_habitat_day_claims_nothing_drawn() -> None:
    assert drawn_words(object.__new__(HabitatWorld), "obj_1", "asset") is None
    log = _log({})
    assert log.objects[0].attributes == {
        "shape": None,
        "color": None,
        "print_or_design": None,
        "material": "ceramic",
        "functionality": "holding flowers",
    }
