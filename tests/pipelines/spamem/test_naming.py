"""Receptacle names a model can ground (``naming``; issue 37, item 3), derived by hand: a
Dresser's ten stacked drawers, a grid of drawers told left from right as the camera sees them,
two identical SideTables told apart by the Bed between them, and names that fit two receptacles
skipped and counted. Layouts: conftest.build_episode (``furniture``: type, position, yaw, room)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dataforge.pipelines.spamem.naming import from_ends, type_word
from dataforge.pipelines.spamem.questions import Builder, Settings
from dataforge.pipelines.spamem.sequence_view import SequenceView

MakeEpisode = Callable[..., Any]
XYZ = tuple[float, float, float]
LOOK_X = (0.0, "standing", (0.0, 1.0, 0.0), 90.0)  # looks along +x, its right along -z
BEDROOM = {"room|1": "Bedroom"}


def scene(
    make_episode: MakeEpisode,
    receptacles: Mapping[str, str],
    state: Mapping[str, tuple[str, str, XYZ]],
    boxes: Mapping[str, tuple[int, int, int, int]] | None = None,
    **names: Any,
) -> SequenceView:
    """One step seen by one camera (LOOK_X), the names' inputs passed through."""
    ep = make_episode(
        receptacles=receptacles,
        states=[state],
        cameras=[[LOOK_X]],
        boxes={(0, 0): boxes or {}},
        **names,
    )
    return SequenceView(ep)


def dresser_drawers() -> dict[str, tuple[XYZ, XYZ]]:
    """Drawer_k of a Dresser at the origin, one above the other: Drawer_k's bottom at
    1.05 - 0.1 k m, so Drawer_1 is the top one and Drawer_10 (which sorts before Drawer_2 as a
    string) the bottom one."""
    return {
        f"dresser|Drawer_{k}": ((-0.4, 1.05 - 0.1 * k, -0.2), (0.4, 1.13 - 0.1 * k, 0.2))
        for k in range(1, 11)
    }


def test_ten_stacked_drawers_are_named_from_the_nearer_end(make_episode: MakeEpisode) -> None:
    # Ten rows, counted from the nearer end in words: 1 top, 2-5 second..fifth from the top,
    # 6-9 fifth..second from the bottom, 10 bottom (there is no middle row: 10 is even).
    extents = dresser_drawers()
    seq = scene(
        make_episode,
        {"dresser": "Dresser", **dict.fromkeys(extents, "Drawer")},
        {"pen": ("Pen", "dresser|Drawer_10", (0.0, 0.1, 0.0))},
        rooms=BEDROOM,
        furniture={"dresser": ("Dresser", (0.0, 0.5, 0.0), 0.0, "room|1")},
        parents=dict.fromkeys(extents, "dresser"),
        extents=extents,
    )
    of = " of the Dresser in the Bedroom"
    places = {
        1: "top drawer",
        2: "drawer second from the top",
        3: "drawer third from the top",
        4: "drawer fourth from the top",
        5: "drawer fifth from the top",
        6: "drawer fifth from the bottom",
        7: "drawer fourth from the bottom",
        8: "drawer third from the bottom",
        9: "drawer second from the bottom",
        10: "bottom drawer",
    }
    want = {f"dresser|Drawer_{k}": p + of for k, p in places.items()}
    assert seq.receptacle_label == {"dresser": "Dresser in the Bedroom", **want}
    assert not seq.unnamed
    assert not any(re.search(r"\d", name) for name in seq.receptacle_label.values())
    assert seq.refer("pen", 0) == "the Pen on the bottom drawer" + of + " at step 0"
    assert seq.action_text(0) == "nothing changed"


def test_places_counted_from_the_nearer_end() -> None:
    assert [from_ends(i, 3, "top", "bottom") for i in range(3)] == ["top", "middle", "bottom"]
    assert [from_ends(i, 5, "left", "right") for i in range(5)] == [
        "left",
        "second from the left",
        "middle",
        "second from the right",
        "right",
    ]
    assert type_word("SinkBasin") == "sink basin"


def test_a_grid_of_drawers_is_named_as_the_camera_facing_it_sees_it(
    make_episode: MakeEpisode,
) -> None:
    # A Dresser at (2, 0.5, 0) facing the camera: yaw 270 turns its front (local +z) to world
    # -x, towards LOOK_X at the origin, which looks along +x with world -z on its right. Four
    # drawers, two rows (bottoms 0.6 and 0.2) by two columns (z +0.3 and -0.3): the z +0.3 ones
    # are on the camera's left. Projected (conftest: camera x = -Z), z +0.3 is at x -0.3.
    rows = {"top": 0.6, "bottom": 0.2}
    cols = {"left": 0.3, "right": -0.3}
    extents = {
        f"d|{r}-{c}": ((1.8, y, z - 0.25), (2.2, y + 0.15, z + 0.25))
        for r, y in rows.items()
        for c, z in cols.items()
    }
    seq = scene(
        make_episode,
        {"d": "Dresser", **dict.fromkeys(extents, "Drawer")},
        {"mug": ("Mug", "d|top-left", (2.0, 0.65, 0.3))},
        furniture={"d": ("Dresser", (2.0, 0.5, 0.0), 270.0, None)},
        parents=dict.fromkeys(extents, "d"),
        extents=extents,
    )
    for r in rows:
        for c in cols:
            assert seq.receptacle_label[f"d|{r}-{c}"] == f"{r} {c} drawer of the Dresser"
    cam = seq.camera_xyz(0, np.array([[2.0, 0.6, z] for z in cols.values()]))
    assert cam[0, 0] < cam[1, 0]  # the left column is left in the image


def side_tables(
    make_episode: MakeEpisode, at: Mapping[str, XYZ], extra: Mapping[str, Any] | None = None
) -> SequenceView:
    """A Bed at the origin (yaw 0: its foot, local +z, towards world +z) and SideTables at
    ``at``, all in one Bedroom, a Book on each SideTable, each table's mask in view 0."""
    furniture = {"bed": ("Bed", (0.0, 0.3, 0.0), 0.0, "room|1")}
    furniture |= {t: ("SideTable", xyz, 0.0, "room|1") for t, xyz in at.items()}
    state = {f"book-{t}": ("Book", t, (xyz[0], 0.6, xyz[2])) for t, xyz in at.items()}
    boxes = {t: (10 * i, 0, 10 * i + 8, 8) for i, t in enumerate(sorted(at))}
    boxes |= {f"book-{t}": (10 * i, 10, 10 * i + 3, 13) for i, t in enumerate(sorted(at))}
    return scene(
        make_episode,
        {"bed": "Bed", **dict.fromkeys(at, "SideTable")},
        state,
        boxes,
        rooms=BEDROOM,
        furniture=furniture,
        **(extra or {}),
    )


def test_two_side_tables_are_told_apart_by_the_bed_between_them(
    make_episode: MakeEpisode,
) -> None:
    # Both 1.44 m from the Bed ("next to the Bed" fits both). Facing the Bed's foot one looks
    # along world -z with world -x on the right: the table at x -1.2 is right of the Bed.
    seq = side_tables(make_episode, {"st-a": (-1.2, 0.3, -0.8), "st-b": (1.2, 0.3, -0.8)})
    assert seq.receptacle_label == {
        "bed": "Bed in the Bedroom",
        "st-a": "SideTable right of the Bed in the Bedroom",
        "st-b": "SideTable left of the Bed in the Bedroom",
    }
    assert not seq.unnamed


def test_the_side_table_next_to_the_bed_and_the_far_one(make_episode: MakeEpisode) -> None:
    # st-a is 1 m from the Bed, st-b 5 m away (beyond NEAR_MAX_M = 2 m from any landmark): st-a
    # is "next to the Bed"; st-b keeps "SideTable in the Bedroom", which fits st-a too, so it is
    # ambiguous and its questions are skipped.
    seq = side_tables(make_episode, {"st-a": (1.0, 0.3, 0.0), "st-b": (4.0, 0.3, 3.0)})
    assert seq.receptacle_label["st-a"] == "SideTable next to the Bed in the Bedroom"
    assert seq.unnamed == {"st-b"}
    assert seq.refer("book-st-a", 0) == (
        "the Book on the SideTable next to the Bed in the Bedroom at step 0"
    )
    assert seq.refer("book-st-b", 0) is None
    assert seq.unreferable("book-st-b", 0) == "a receptacle whose name fits another one"


def test_side_tables_no_landmark_tells_apart_are_skipped_and_counted(
    make_episode: MakeEpisode,
) -> None:
    # Both on the Bed's left side (facing its foot: world +x), 1.0 and 1.1 m from it (within
    # NEAR_MARGIN_M = 0.3 m of each other): nothing tells them apart.
    seq = side_tables(make_episode, {"st-a": (1.0, 0.3, -0.3), "st-b": (1.1, 0.3, 0.3)})
    assert seq.unnamed == {"st-a", "st-b"}
    settings = Settings((1,), ("short", "long"), ("rgb",), (0.0, "standing"), "sequences")
    builder = Builder(seq, settings, np.random.default_rng(0), ("Book", "Mug"))
    records = list(builder.records())
    assert records == []  # the two L1 clusters (a Book on each table) are not asked
    assert builder.skipped == {"L1: a receptacle whose name fits another one": 2}
