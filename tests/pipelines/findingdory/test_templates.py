"""FindingDory's task template engine: the 60-template table, instantiation on a hand-built rich
log (every template fills), hand-checked goal sets, every kind of Skip on poor logs, the clock,
the attribute table and determinism."""

from __future__ import annotations

import copy
import json
from collections import Counter
from importlib import resources
from typing import Any

import numpy as np
import pytest

from dataforge.errors import MalformedInputError
from dataforge.pipelines.findingdory.log import EpisodeLog, clock, load_attributes
from dataforge.pipelines.findingdory.templates import (
    Skip,
    Task,
    display_name,
    instantiate,
    instantiate_all,
    load_templates,
    ordinal,
    query_time,
    validate_templates,
)

T = {t.id: t for t in load_templates()}

RECEPTACLES = {  # id: (category, room)
    "counter1": ("CounterTop", "kitchen"),
    "counter2": ("CounterTop", "kitchen"),
    "table1": ("DiningTable", "living"),
    "sofa1": ("Sofa", "living"),
    "shelf1": ("ShelvingUnit", "living"),
    "shelf2": ("ShelvingUnit", "bedroom"),  # the only candidate receptacle not interacted with
    "bed1": ("Bed", "bedroom"),
    "dresser1": ("Dresser", "bedroom"),
    "sink1": ("SinkBasin", "bathroom"),
    "side1": ("SideTable", "bedroom"),
}
REARRANGED = [  # id, category, start receptacle, goal receptacle, pick span, place span
    ("apple1", "Apple", "counter1", "table1", (100, 120), (300, 330)),
    ("mug1", "Mug", "counter2", "shelf1", (400, 415), (560, 600)),
    ("book1", "Book", "sofa1", "bed1", (700, 730), (900, 920)),
    ("phone1", "CellPhone", "dresser1", "counter1", (1000, 1010), (1200, 1260)),
    ("pen1", "Pen", "table1", "counter2", (1300, 1340), (1500, 1520)),
]
DISTRACTORS = [
    ("apple2", "Apple", "sink1"),
    ("mug2", "Mug", "side1"),
    ("book2", "Book", "dresser1"),
    ("phone2", "CellPhone", "bed1"),
    ("pen2", "Pen", "shelf1"),
]
DRAWN = {  # the words for how each is drawn (dataforge.world.appearance), by object
    "apple1": {"shape": "spherical", "color": "red", "print_or_design": None, "material": None},
    "mug1": {
        "shape": "cylindrical",
        "color": "white",
        "print_or_design": "a band",
        "material": "ceramic",
    },
    "book1": {"shape": "cuboidal", "color": "brown", "print_or_design": "a band", "material": None},
    "phone1": {"shape": "rectangular", "color": "black", "print_or_design": None, "material": None},
    "pen1": {"shape": "cylindrical", "color": "blue", "print_or_design": None, "material": None},
}
ROOMS = {"kitchen": 600, "living": 500, "bedroom": 300, "bathroom": 0}
DISTANCES = {
    "apple1": 4.0,
    "mug1": 6.5,
    "book1": 9.0,
    "phone1": 3.0,
    "pen1": 2.0,
    "apple2": 11.0,
    "mug2": 7.4,
    "book2": 8.1,
    "phone2": 9.1,
    "pen2": 6.3,
    "counter1": 2.5,
    "counter2": 2.2,
    "table1": 4.1,
    "sofa1": 5.0,
    "shelf1": 6.4,
    "bed1": 9.2,
    "dresser1": 8.0,
    "sink1": 12.0,
    "side1": 7.5,
    "shelf2": 5.5,
}


def log_dict(
    rearranged: list[tuple[Any, ...]] = REARRANGED,
    distractors: list[tuple[str, str, str]] = DISTRACTORS,
    rooms: dict[str, int] = ROOMS,
    distances: dict[str, float] = DISTANCES,
    frames: int = 1700,
) -> dict[str, Any]:
    objects, interactions = [], []
    for oid, cat, start, goal, pick, place in rearranged:
        rooms_of = {"pick_room": RECEPTACLES[start][1], "place_room": RECEPTACLES[goal][1]}
        objects.append(
            {
                "id": oid,
                "category": cat,
                "interacted": True,
                "start_receptacle": start,
                "goal_receptacle": goal,
                "pick": list(pick),
                "place": list(place),
                **rooms_of,
            }
        )
        interactions.append({"object": oid, "pick": list(pick), "place": list(place)})
    for oid, cat, rec in distractors:
        objects.append({"id": oid, "category": cat, "interacted": False, "start_receptacle": rec})
    return {
        "objects": objects,
        "receptacles": [{"id": k, "category": c, "room": r} for k, (c, r) in RECEPTACLES.items()],
        "rooms": [{"id": k, "name": k.title(), "frames": n} for k, n in rooms.items()],
        "interactions": interactions,
        "frames": frames,
        "distance_from_end": dict(distances),
    }


def make_log(**kw: Any) -> EpisodeLog:
    return EpisodeLog.from_dict(log_dict(**kw)).with_attributes(DRAWN)


RICH = make_log()


def tasks(tid: str, log: EpisodeLog = RICH, seed: int = 0) -> list[Task]:
    got = instantiate(T[tid], log, np.random.default_rng(seed), cap=None)
    assert not isinstance(got, Skip), got
    return got


def goals_by_text(tid: str, log: EpisodeLog = RICH) -> dict[str, list[list[str]]]:
    return {t.text: [list(g) for g in t.goals] for t in tasks(tid, log)}


def skip(tid: str, log: EpisodeLog) -> str:
    got = instantiate(T[tid], log, np.random.default_rng(0), cap=None)
    assert isinstance(got, Skip), got
    return got.reason


# ---------------------------------------------------------------- the table


def test_table_counts_match_the_spec() -> None:
    ts = load_templates()
    assert [t.id for t in ts] == [f"T{k:02d}" for k in range(1, 61)]
    assert Counter(t.group for t in ts) == {"spatial": 30, "temporal": 21, "multi_goal": 9}
    assert Counter(t.category for t in ts) == {
        "object_recall": 2,
        "interaction": 6,
        "conditional_interaction": 7,
        "object_attributes": 5,
        "spatial_relationship": 5,
        "room_visitation": 5,
        "interaction_order": 16,
        "time_based": 2,
        "duration_tracking": 3,
        "unordered_revisitation": 6,
        "ordered_revisitation": 3,
    }
    assert sum(not t.multi_goal for t in ts) == 51
    assert [t.id for t in ts if t.ordered] == ["T58", "T59", "T60"]
    assert all(t.multi_goal == (t.group == "multi_goal") for t in ts)


def test_row_8_typo_is_fixed_and_noted() -> None:
    assert T["T08"].text == "Navigate to any receptacle you placed an object on."
    assert "placed an object from" in (T["T08"].note or "")
    assert not any("placed an object from" in t.text for t in T.values())


def test_validation_catches_a_broken_table() -> None:
    path = resources.files("dataforge.templates") / "findingdory" / "templates.json"
    entries = json.loads(path.read_text(encoding="utf-8"))["templates"]
    validate_templates(entries)
    bad = copy.deepcopy(entries)
    bad[8]["text"] = bad[8]["text"].replace("{target_object_name}", "{target_name}")
    with pytest.raises(MalformedInputError, match="T09: slots"):
        validate_templates(bad)
    bad = copy.deepcopy(entries)
    bad[0]["category"] = "interaction"
    with pytest.raises(MalformedInputError, match="counts per category"):
        validate_templates(bad)
    bad = copy.deepcopy(entries)
    bad[29]["predicate"] = "robot_at_object"
    with pytest.raises(MalformedInputError, match="T30: predicate"):
        validate_templates(bad)


def test_attribute_table_covers_the_spawnable_categories() -> None:
    from dataforge.pipelines.spamem.rules import Rules
    from dataforge.world.assets import load_catalogue

    table = load_attributes()
    assert sorted(table) == sorted(Rules(load_catalogue()).spawnable)
    for cat, row in table.items():  # only what the drawing cannot say
        assert tuple(row) == ("material", "functionality"), cat
        assert all(row.values()), cat
    assert table["Apple"] == {"material": "organic", "functionality": "eating"}


def test_drawn_words_win_and_the_table_fills_only_functionality_and_a_missing_material() -> None:
    log = make_log()
    got = {o.id: o.attributes for o in log.objects}
    assert got["apple1"] == {**DRAWN["apple1"], "material": "organic", "functionality": "eating"}
    assert got["mug1"] == {**DRAWN["mug1"], "functionality": "drinking"}  # drawn ceramic wins
    # no drawn words (a distractor here; a Habitat scene's objects): nothing claimed but the table's
    assert got["mug2"] == {
        "shape": None,
        "color": None,
        "print_or_design": None,
        "material": "ceramic",
        "functionality": "drinking",
    }
    # no pattern drawn stays None: the table never supplies one
    assert got["phone1"]["print_or_design"] is None
    d = log_dict()
    d["objects"][0]["category"] = "Unknown"
    assert EpisodeLog.from_dict(d).with_attributes().objects[0].attributes is None


# ---------------------------------------------------------------- wording and clock


def test_clock_follows_upstream() -> None:
    assert clock(0) == "06:00"
    assert clock(4000) == "22:00"
    assert clock(2000) == "14:00"
    assert clock(25) == "06:06"  # 14.4 s a frame
    assert clock(1025) == "10:06"  # exact arithmetic (upstream's floats read 10:05)
    assert clock(100, start="08:00", end="20:00", steps=1200) == "09:00"
    assert query_time(9 * 60 + 5) == "9:05" and query_time(22 * 60) == "22:00"


def test_words() -> None:
    assert [ordinal(k) for k in (0, 1, 2, 9, 10, 11, 20)] == [
        "first",
        "second",
        "third",
        "tenth",
        "11th",
        "12th",
        "21st",
    ]
    assert display_name("CellPhone") == "cell phone"
    assert display_name("CD") == "CD"
    assert display_name("chest_of_drawers") == "chest of drawers"


def test_log_round_trips_and_rejects_inconsistencies() -> None:
    assert EpisodeLog.from_dict(json.loads(json.dumps(RICH.to_dict()))) == RICH
    d = log_dict()
    d["interactions"][1]["pick"] = [0, 5]  # differs from the object's span
    with pytest.raises(MalformedInputError, match="interaction 1"):
        EpisodeLog.from_dict(d)
    d = log_dict()
    d["interactions"].pop()
    with pytest.raises(MalformedInputError, match="exactly once"):
        EpisodeLog.from_dict(d)
    d = log_dict()
    d["objects"][0]["start_receptacle"] = "nowhere"
    with pytest.raises(MalformedInputError, match="unknown receptacle"):
        EpisodeLog.from_dict(d)


# ---------------------------------------------------------------- instantiation


def test_every_template_instantiates_on_the_rich_log() -> None:
    made, skips = instantiate_all(RICH, np.random.default_rng(1), cap=None)
    assert skips == []
    assert {t.template for t in made} == set(T)
    for task in made:
        assert "{" not in task.text, task.text
        assert task.goals and all(task.goals)
        assert (len(task.goals) == 1) != task.multi_goal
        ids = {g for sub in task.goals for g in sub}
        kind_ids = {
            "object": {o.id for o in RICH.objects},
            "receptacle": {r.id for r in RICH.receptacles},
            "room": {r.id for r in RICH.rooms},
        }[task.goal_kind]
        assert ids <= kind_ids, task
        assert Task.from_dict(json.loads(json.dumps(task.to_dict()))) == task


def test_cap_and_determinism() -> None:
    a = [t.to_dict() for t in instantiate_all(RICH, np.random.default_rng(7), cap=2)[0]]
    b = [t.to_dict() for t in instantiate_all(RICH, np.random.default_rng(7), cap=2)[0]]
    assert a == b
    assert max(Counter(t["template"] for t in a).values()) == 2
    one, _ = instantiate_all(RICH, np.random.default_rng(7))
    assert len(one) == 60  # default cap: one task per template
    texts = {
        tuple(t.text for t in instantiate_all(RICH, np.random.default_rng(s))[0]) for s in range(5)
    }
    assert len(texts) > 1  # the rng draws the filling


def test_object_recall_and_conditional_interaction() -> None:
    assert goals_by_text("T01")["Navigate to an apple."] == [["apple1", "apple2"]]
    assert goals_by_text("T02")["Navigate to a counter top."] == [["counter1", "counter2"]]
    assert goals_by_text("T09")["Navigate to the apple that you interacted with yesterday."] == [
        ["apple1"]
    ]
    assert goals_by_text("T10")[
        "Navigate to a cell phone that you did not interact with yesterday."
    ] == [["phone2"]]
    assert goals_by_text("T03") == {
        T["T03"].text: [["counter1", "table1", "counter2", "shelf1", "sofa1", "bed1", "dresser1"]]
    }
    # of the episode's candidate categories only: sink1 and side1 are not
    assert goals_by_text("T04") == {T["T04"].text: [["shelf2"]]}
    assert list(goals_by_text("T06").values()) == [[["apple2", "mug2", "book2", "phone2", "pen2"]]]
    got = goals_by_text("T14")
    assert got["Navigate to the receptacle that you picked the book from."] == [["sofa1"]]
    # two objects were picked from counter tops: "the object ... from the counter top" is ambiguous
    got = goals_by_text("T15")
    assert set(got) == {
        f"Navigate to the object that you picked from the {r}."
        for r in ("sofa", "dresser", "dining table")
    }
    assert got["Navigate to the object that you picked from the dining table."] == [["pen1"]]


def test_attributes() -> None:
    got = goals_by_text("T16")
    assert got[
        "Navigate back to a cylindrical shaped object that you interacted with yesterday."
    ] == [["mug1", "pen1"]]
    assert goals_by_text("T18") == {
        "Navigate to an interacted object with a band on it.": [["mug1", "book1"]],
    }


def test_farthest() -> None:
    assert [t.goals for t in tasks("T21")] == [(("bed1",),)]
    assert [t.goals for t in tasks("T22")] == [(("shelf2",),)]  # sink1 (12 m) is no candidate
    assert [t.goals for t in tasks("T23")] == [(("dresser1",),)]
    assert [t.goals for t in tasks("T24")] == [(("bed1",),)]
    assert [t.goals for t in tasks("T25")] == [(("book1",),)]


def test_not_interacted_receptacles_are_the_episode_candidates() -> None:
    """Upstream draws non-interacted receptacles from the episode's candidate receptacles
    (non-interacted ones of its start and goal categories, ``findingdory_task.py:1360-1390``),
    not from the whole house: sink1 (SinkBasin, the farthest, 12 m) and side1 (SideTable) are
    of no interaction's category and never drawn; shelf2 and sofa2 are."""
    d = log_dict(distances={**DISTANCES, "sofa2": 3.0})
    d["receptacles"].append({"id": "sofa2", "category": "Sofa", "room": "living"})
    log = EpisodeLog.from_dict(d).with_attributes()
    assert goals_by_text("T04", log) == {T["T04"].text: [["shelf2", "sofa2"]]}
    assert [t.goals for t in tasks("T22", log)] == [(("shelf2",),)]
    assert goals_by_text("T11", log) == {
        "Navigate to a shelving unit you did not interact with yesterday.": [["shelf2"]],
        "Navigate to a sofa you did not interact with yesterday.": [["sofa2"]],
    }
    drawn = {
        e for tid in ("T04", "T11", "T22") for t in tasks(tid, log) for g in t.goals for e in g
    }
    assert drawn == {"shelf2", "sofa2"}
    # the whole house stays for "a {receptacle}" (object recall)
    assert goals_by_text("T02", log)["Navigate to a sink basin."] == [["sink1"]]


def test_room_visitation() -> None:
    got = goals_by_text("T26")
    assert got["Navigate to the room where you picked the third object from."] == [["living"]]
    got = goals_by_text("T27")
    assert got["Navigate to the room where you placed the third object in."] == [["bedroom"]]
    got = goals_by_text("T28")
    assert got["Navigate to the room where you picked the cell phone from."] == [["bedroom"]]
    assert [t.goals for t in tasks("T30")] == [(("bathroom",),)]


def test_interaction_order() -> None:
    assert goals_by_text("T31")[T["T31"].text.format(target_appearance_order="second")] == [
        ["mug1"]
    ]
    # distinct pick receptacles in order of first use: counter1, counter2, sofa1, dresser1, table1
    assert goals_by_text("T32")[
        "Navigate to the third receptacle that you picked an object from."
    ] == [["sofa1"]]
    # distinct place receptacles: table1, shelf1, bed1, counter1, counter2
    assert goals_by_text("T33")[
        "Navigate to the fourth receptacle that you placed an object on."
    ] == [["counter1"]]
    assert goals_by_text("T34")[
        "Navigate to the receptacle that you picked the fifth object from."
    ] == [["table1"]]
    assert goals_by_text("T35")[
        "Navigate to the object that you picked from the fifth receptacle."
    ] == [["pen1"]]
    t36, t37 = goals_by_text("T36"), goals_by_text("T37")
    assert t36[
        "Navigate to the object you interacted with immediately after ending the interaction "
        "with mug."
    ] == [["book1"]]
    assert len(t36) == 4  # the last object has nothing after it
    assert t37[
        "Navigate to the object you interacted with immediately before interacting with mug."
    ] == [["apple1"]]
    t38, t39 = goals_by_text("T38"), goals_by_text("T39")
    assert t38["Navigate to the object you interacted with 2 interactions after mug."] == [
        ["phone1"]
    ]
    assert t39["Navigate to the object you interacted with 3 interactions before pen."] == [
        ["mug1"]
    ]
    assert len(t38) == 6  # (anchor, N >= 2): (0,2) (0,3) (0,4) (1,2) (1,3) (2,2)
    between = goals_by_text("T40")
    assert between == {
        f"Navigate to the object that you interacted with between the interactions with {a} "
        f"and {b}.": [[g]]
        for a, b, g in [
            ("apple", "book", "mug1"),
            ("mug", "cell phone", "book1"),
            ("book", "pen", "phone1"),
        ]
    }
    assert goals_by_text("T41")[
        "Navigate to the receptacle that you placed an object on right before you started "
        "interacting with book."
    ] == [["shelf1"]]
    assert goals_by_text("T42")[
        "Navigate to the receptacle that you picked an object from right after you finished "
        "interacting with book."
    ] == [["dresser1"]]
    assert goals_by_text("T43")[
        "Navigate to the receptacle that you placed an object on 2 interactions before you "
        "started interacting with cell phone."
    ] == [["shelf1"]]
    assert goals_by_text("T44")[
        "Navigate to the receptacle that you picked an object from 2 interactions after you "
        "finished interacting with apple."
    ] == [["sofa1"]]
    assert goals_by_text("T45")[
        "Navigate to the receptacle that you placed an object on between the interactions with "
        "apple and book."
    ] == [["shelf1"]]
    assert goals_by_text("T46")[
        "Navigate to the receptacle that you picked an object from between the interactions "
        "with apple and book."
    ] == [["counter2"]]
    assert tasks("T46")[0].interactions == (0, 1, 2)


def _minute(text: str) -> int:
    h, m = text.rsplit(" at ", 1)[1].split(" ")[0].split(":")
    assert len(m) == 2 and not h.startswith("0")
    return int(h) * 60 + int(m)


def test_time_based_minutes_identify_one_interaction() -> None:
    minutes = {
        k: (RICH.clock.minutes(i.pick[0]), RICH.clock.minutes(i.place[1]))
        for k, i in enumerate(RICH.interactions)
    }
    for seed in range(5):
        got = tasks("T48", seed=seed)
        assert [t.interactions for t in got] == [(k,) for k in range(5)]
        for t in got:
            (k,) = t.interactions
            m = _minute(t.text)
            assert [j for j, (a, b) in minutes.items() if a <= m <= b] == [k]
            assert t.goals == ((RICH.interactions[k].object,),)
    got = tasks("T47")
    assert len(got) == 10  # a pick and a place interval per interaction
    assert got[0].goals == (("counter1",),) and got[1].goals == (("table1",),)
    m = _minute(got[1].text)
    assert RICH.clock.minutes(300) <= m <= RICH.clock.minutes(330)


def test_duration_tracking() -> None:
    # frames place end - pick start: apple 230, mug 200, book 220, phone 260, pen 220
    assert [t.goals for t in tasks("T49")] == [(("phone1",),)]
    assert [t.goals for t in tasks("T51")] == [(("mug1",),)]
    assert [t.goals for t in tasks("T50")] == [(("kitchen",),)]


def test_revisitation() -> None:
    picks = (("counter1",), ("counter2",), ("sofa1",), ("dresser1",), ("table1",))
    places = (("table1",), ("shelf1",), ("bed1",), ("counter1",), ("counter2",))
    (t52,) = tasks("T52")
    assert t52.goals == picks and not t52.ordered and t52.multi_goal
    (t58,) = tasks("T58")
    assert t58.goals == picks and t58.ordered
    (t59,) = tasks("T59")
    assert t59.goals == places and t59.ordered
    assert goals_by_text("T54") == {
        "Revisit all the counter top you placed objects on yesterday.": [["counter1"], ["counter2"]]
    }
    (t60,) = tasks("T60")
    assert t60.goals == tuple((o,) for o in ("apple1", "mug1", "book1", "phone1", "pen1"))
    (t57,) = tasks("T57")
    assert len(t57.goals) == 7 and not t57.ordered


def test_ordered_revisitation_has_one_target_per_distinct_receptacle() -> None:
    """As upstream (``pddl_domain.py:507-548``, ``measures.py:171-176``): a receptacle picked
    from or placed on again later is one target, ordered by its first interaction."""
    rearranged = [
        ("apple1", "Apple", "counter1", "table1", (10, 12), (20, 22)),
        ("mug1", "Mug", "counter1", "shelf1", (30, 32), (40, 42)),
        ("book1", "Book", "sofa1", "bed1", (50, 52), (60, 62)),
        ("pen1", "Pen", "counter1", "table1", (70, 72), (80, 82)),
    ]
    log = make_log(rearranged=rearranged, distractors=[], frames=100)
    assert tasks("T58", log)[0].goals == (("counter1",), ("sofa1",))
    assert tasks("T59", log)[0].goals == (("table1",), ("shelf1",), ("bed1",))
    assert tasks("T52", log)[0].goals == (("counter1",), ("sofa1",))
    # three objects picked from counter1: "the object you picked from the first receptacle"
    assert list(goals_by_text("T35", log)) == [
        "Navigate to the object that you picked from the second receptacle."
    ]


# ---------------------------------------------------------------- skips


TWO = REARRANGED[:2]


def test_skip_without_interactions() -> None:
    log = make_log(rearranged=[], distractors=[("apple2", "Apple", "sink1")], frames=50)
    assert skip("T05", log) == "no interacted object in the log"
    assert skip("T03", log) == "no interacted receptacle in the log"
    assert skip("T31", log) == "0 interaction(s); order needs at least 1"
    assert skip("T48", log) == "no interactions"
    assert skip("T49", log) == "no interacted object in the log"
    assert tasks("T01", log)[0].goals == (("apple2",),)  # the distractor is still there


def test_skip_too_few_interactions() -> None:
    log = make_log(rearranged=TWO)
    assert skip("T40", log) == "2 interaction(s); between needs at least 3"
    assert skip("T38", log) == "2 interaction(s); offset needs at least 3"
    assert skip("T45", log) == "2 interaction(s); between needs at least 3"
    assert len(tasks("T36", log)) == 1
    log = make_log(rearranged=TWO[:1])
    assert skip("T36", log) == "1 interaction(s); offset needs at least 2"
    assert skip("T60", log) == "fewer than 2 objects to revisit"


def test_skip_missing_attributes() -> None:
    bare = EpisodeLog.from_dict(log_dict())
    attrs = ["shape", "color", "print_or_design", "material", "functionality"]
    for tid, attr in zip(["T16", "T17", "T18", "T19", "T20"], attrs, strict=True):
        assert skip(tid, bare) == f"no interacted object has a known {attr}"
    # apple and cell phone have no print: the print template has nothing to ask about
    log = make_log(rearranged=[REARRANGED[0], REARRANGED[3]])
    assert skip("T18", log) == "no interacted object has a known print_or_design"


def test_skip_nothing_left_unvisited_or_untouched() -> None:
    log = make_log(rooms={"kitchen": 600, "living": 500, "bedroom": 300, "bathroom": 10})
    assert skip("T30", log) == "no not visited room in the log"
    d = log_dict()
    d["receptacles"] = [r for r in d["receptacles"] if r["id"] != "shelf2"]
    log = EpisodeLog.from_dict(d)  # sink1 and side1 untouched, but of no candidate category
    for tid in ("T04", "T11", "T22"):
        assert skip(tid, log) == "no not interacted receptacle in the log"


def test_skip_ties_and_missing_distances() -> None:
    log = make_log(distances={**DISTANCES, "book1": 6.5, "mug1": 9.0, "phone1": 9.0})
    assert skip("T25", log) == "tie for farthest: ['mug1', 'phone1']"
    log = make_log(distances={k: v for k, v in DISTANCES.items() if k != "bed1"})
    assert skip("T21", log) == "no distance_from_end for ['bed1']"
    assert tasks("T22", log)[0].goals == (("shelf2",),)  # not needed there
    rearranged = [(*r[:5], (r[4][0] + 200, r[4][0] + 220)) for r in REARRANGED]  # all 220
    log = make_log(rearranged=rearranged)
    assert skip("T49", log).startswith("tie for longest: ['apple1', 'mug1'")
    assert skip("T51", log).startswith("tie for shortest")
    log = make_log(rooms={"kitchen": 500, "living": 500, "bedroom": 300, "bathroom": 0})
    assert skip("T50", log) == "tie for most time: ['kitchen', 'living']"


def test_skip_ambiguous_names() -> None:
    apples = [
        ("apple1", "Apple", "counter1", "table1", (10, 12), (20, 22)),
        ("apple3", "Apple", "sofa1", "bed1", (30, 32), (40, 42)),
    ]
    log = make_log(rearranged=apples, distractors=[("apple2", "Apple", "sink1")], frames=100)
    for tid in ("T09", "T14", "T28", "T36", "T37", "T41", "T42"):
        assert skip(tid, log) == "2 interacted apple (ambiguous)", tid
    assert tasks("T01", log)[0].goals == (("apple1", "apple3", "apple2"),)
    assert tasks("T10", log)[0].goals == (("apple2",),)
    log = make_log(
        rearranged=[REARRANGED[0], ("mug1", *REARRANGED[1][1:2], "counter1", *REARRANGED[1][3:])]
    )
    assert skip("T15", log) == "2 objects picked from the counter top receptacle (ambiguous)"
    assert skip("T52", log) == "fewer than 2 receptacles to revisit"
    assert skip("T55", log) == "fewer than 2 receptacles to revisit"


def test_skip_when_no_minute_is_unique() -> None:
    # both interactions inside the first minute (0.24 min a frame): no minute names one alone
    rearranged = [
        ("apple1", "Apple", "counter1", "table1", (0, 0), (1, 1)),
        ("mug1", "Mug", "counter2", "shelf1", (1, 2), (3, 4)),
    ]
    log = make_log(rearranged=rearranged, distractors=[], frames=10)
    assert skip("T48", log) == "no minute of interaction 0 identifies it alone; " + (
        "no minute of interaction 1 identifies it alone"
    )
    assert skip("T47", log).startswith("no minute of interaction 0 identifies it alone")


def test_skip_room_not_logged() -> None:
    d = log_dict(rearranged=TWO)
    for o in d["objects"]:
        o["pick_room"] = None
    log = EpisodeLog.from_dict(d)
    assert skip("T26", log) == (
        "interaction 0 has no pick room logged; interaction 1 has no pick room logged"
    )
    assert tasks("T27", log)


def test_unknown_template_ids_are_refused_listing_the_known_ones() -> None:
    from dataforge.errors import UsageError
    from dataforge.pipelines.findingdory.templates import check_template_ids, load_templates

    known = [t.id for t in load_templates()]
    assert check_template_ids(["T01", "T31"]) == ["T01", "T31"]
    with pytest.raises(UsageError) as err:
        check_template_ids(["T01", "T99", "t02"])
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("--templates: unknown template T99, t02 (known: T01, T02, ")
    assert text.endswith(f"{known[-1]})") and all(k in text for k in known)
