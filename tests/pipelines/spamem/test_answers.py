"""SpaMEM answers recomputed by hand: CC, RSR (L1) and SOR-M, LOR, VGL-M, RSR-M, STT (L2) on the
hand-built scenes of conftest.py, every expected answer derived in a comment from the rules of
docs/spamem.md ("The 15 tasks") and the spec notes, never from the code under test.

Where the seed draws something (the RSR anchor, long-term SOR-M's past step, long-term RSR-M's
put-down step, the VGL-M object), the expectation is a hand table over every possible draw,
several seeds are run and the tests check that every draw was seen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spamemhelpers import questions

from dataforge.pipelines.spamem.sequence_view import SequenceView

SEEDS = range(24)
T = 4  # the memory scene's last step


def by_receptacle(recs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {r["context"]["receptacle"]["id"]: r["answer"] for r in recs}


# -- L1 ----------------------------------------------------------------------------------------


def test_cc_counts_distinct_categories_not_objects(static_scene: SequenceView) -> None:
    # The DiningTable cluster (view 1) holds q-apple, p-apple, mug, bowl, cup: five objects
    # of four categories (Apple twice), so CC = 4; the table's own mask is not an object on it.
    # The CounterTop holds one Bread: CC = 1. IC of Apple on the table is the 2 instances. IC
    # asks every type with 2 or more objects (Apple), as many single ones (one of Bowl, Cup,
    # Mug, drawn) and one spawnable type absent from the cluster (0), so no count dominates.
    for seed in SEEDS[:3]:
        assert by_receptacle(questions(static_scene, (1,), seed, "CC")) == {
            "table": 4,
            "counter": 1,
        }
        ic = {
            (r["context"]["receptacle"]["id"], r["context"]["category"]): r["answer"]
            for r in questions(static_scene, (1,), seed, "IC")
        }
        table = {c: n for (r, c), n in ic.items() if r == "table"}
        assert table["Apple"] == 2 and sorted(table.values()) == [0, 1, 2], table
        assert {c for c, n in table.items() if n == 1} <= {"Bowl", "Cup", "Mug"}
        assert sorted(n for (r, _), n in ic.items() if r == "counter") == [0, 1]
        sor = by_receptacle(questions(static_scene, (1,), seed, "SOR"))
        assert sor == {"table": ["Apple", "Bowl", "Cup", "Mug"], "counter": ["Bread"]}


# RSR: the 3 nearest (3D centre distance) of the anchor, each `behind` when dz > |dx|, else
# left / right by the sign of dx, in the camera frame of view 1 (conftest.static_episode: x
# right, z ahead; all at one height). Centres (x, z): Apple 1 = q-apple (0, 2.0), Apple 2 =
# p-apple (0.3, 2.0), Mug (-0.4, 2.0), Bowl (-0.1, 2.6), Cup (1.5, 2.0). Distances:
# A1-A2 .3, A1-M .4, A1-B .608, A1-C 1.5, A2-M .7, A2-B .721, A2-C 1.2, M-B .671, M-C 1.9,
# B-C 1.709. The candidates are every object in the image: the Bread on the CounterTop too, at
# (-2.0, 1.0), 1.89 from the Mug and farther from the rest, never among the 3 nearest of a table
# object, which the counter's one-object cluster now also gets as its anchor: Mug 1.89,
# Apple 1 2.24, Bowl 2.48 (Apple 2 2.51), all with dx > dz > 0: right.
RSR_BY_ANCHOR = {
    # A2 dx +.3 -> right; M dx -.4 -> left; B dx -.1, dz +.6 > .1 -> behind (C at 1.5 is 4th)
    "Apple 1": {"Apple 2": "right", "Mug": "left", "Bowl": "behind"},
    # A1 dx -.3 left; M dx -.7 left; B dx -.4, dz .6 > .4 behind (C 1.2 is 4th)
    "Apple 2": {"Apple 1": "left", "Mug": "left", "Bowl": "behind"},
    # A1 dx +.4 right; B dx +.3, dz .6 behind; A2 dx +.7 right
    "Mug": {"Apple 1": "right", "Bowl": "behind", "Apple 2": "right"},
    # in front of the bowl (dz = -.6) nothing is behind: A1 dx +.1 right; M -.3 left; A2 +.4 right
    "Bowl": {"Apple 1": "right", "Mug": "left", "Apple 2": "right"},
    # A2 dx -1.2, A1 dx -1.5 left; B dx -1.6, dz .6 < 1.6 -> left (Mug at 1.9 is 4th)
    "Cup": {"Apple 2": "left", "Apple 1": "left", "Bowl": "left"},
    "Bread": {"Mug": "right", "Apple 1": "right", "Bowl": "right"},
}


def test_rsr_nearest_neighbours_and_egocentric_directions(static_scene: SequenceView) -> None:
    anchors = set()
    for seed in SEEDS:
        recs = questions(static_scene, (1,), seed, "RSR")
        assert [r["context"]["receptacle"]["id"] for r in recs] == ["counter", "table"]
        for r in recs:
            anchor = r["context"]["anchor"]
            anchors.add(anchor)
            assert r["answer"] == RSR_BY_ANCHOR[anchor], (seed, anchor)
            names = {"Apple 1", "Apple 2", "Mug", "Bowl", "Cup", "Bread"}
            assert sorted(r["labels"]) == sorted(names - {anchor})  # listed in a drawn order
    assert anchors == set(RSR_BY_ANCHOR)  # every anchor was drawn by some seed
    # the tasks' own rule: 5 other objects in the image are fewer than the 7 RSR needs
    assert questions(static_scene, (1,), 0, "RSR", sampling=True) == []


# -- L2 (memory scene: 1 removes the mug from the table, 2 moves the apple table -> counter,
# 3 moves it counter -> shelf-b ("right shelf of the ShelvingUnit"), 4 spawns a pen on the
# counter; shelf-a holds a book and is never acted on). Categories per receptacle and step,
# from conftest.memory_states:
ON = {
    "table": [{"Apple", "Mug"}, {"Apple"}, set(), set(), set()],
    "counter": [
        {"Bread", "Knife"},
        {"Bread", "Knife"},
        {"Apple", "Bread", "Knife"},
        {"Bread", "Knife"},
        {"Bread", "Knife", "Pen"},
    ],
    "shelf-b": [{"Vase"}, {"Vase"}, {"Vase"}, {"Apple", "Vase"}, {"Apple", "Vase"}],
}


def test_sor_m_answers_the_past_step_not_the_present(memory_scene: SequenceView) -> None:
    # Short-term, after step t: each receptacle step t changed (the table at 1; counter and
    # table at 2; counter and shelf-b at 3; counter at 4), its categories at t-1 (ON[r][t-1]).
    # At t = 1 the table held Apple and Mug (the mug is gone at 1); at t = 4 the counter held no
    # Pen yet.
    short = {
        (1, "table"): ["Apple", "Mug"],
        (2, "counter"): ["Bread", "Knife"],
        (2, "table"): ["Apple"],
        (3, "counter"): ["Apple", "Bread", "Knife"],
        (3, "shelf-b"): ["Vase"],
        (4, "counter"): ["Bread", "Knife"],
    }
    pasts = set()
    for seed in SEEDS:
        recs = questions(memory_scene, (2,), seed, "SOR-M")
        got = {
            (r["step"], r["context"]["receptacle"]["id"]): r["answer"]
            for r in recs
            if r["horizon"] == "short"
        }
        assert got == short
        # Long-term, at T = 4: every receptacle an action touched (table, counter, shelf-b;
        # never shelf-a), at a past step drawn from 0..T-1, the categories then: ON[r][past].
        long = [r for r in recs if r["horizon"] == "long"]
        assert sorted(r["context"]["receptacle"]["id"] for r in long) == [
            "counter",
            "shelf-b",
            "table",
        ]
        for r in long:
            rec, past = r["context"]["receptacle"]["id"], r["context"]["past"]
            assert r["step"] == T and 0 <= past < T, (seed, rec, past)
            assert f"at step {past}?" in r["prompt"]
            assert r["answer"] == sorted(ON[rec][past]), (seed, rec, past)
            pasts.add(past)
    assert pasts == {0, 1, 2, 3}
    # the counter's categories at every past step differ from those at T (no Pen before 4)
    assert all(ON["counter"][s] != ON["counter"][T] for s in range(T))


def test_lor_takes_both_ends_of_the_window(memory_scene: SequenceView) -> None:
    # Categories on the receptacles in focus at any step of the window, both ends included.
    # Short, window t-1..t: t=1 table {Apple, Mug} | {Apple} (the Mug only at t-1);
    # t=2 counter+table {Bread, Knife, Apple} | {Apple, Bread, Knife};
    # t=3 counter+shelf-b {Apple, Bread, Knife, Vase} | {Bread, Knife, Apple, Vase};
    # t=4 counter {Bread, Knife} | {Bread, Knife, Pen} (the Pen only at t).
    short = {
        1: ["Apple", "Mug"],
        2: ["Apple", "Bread", "Knife"],
        3: ["Apple", "Bread", "Knife", "Vase"],
        4: ["Bread", "Knife", "Pen"],
    }
    # Long, window 0..4, over table, counter, shelf-b: the Mug exists only at step 0, the Pen
    # only at step 4; shelf-a's Book is not on a receptacle any action changed.
    long = ["Apple", "Bread", "Knife", "Mug", "Pen", "Vase"]
    recs = questions(memory_scene, (2,), 0, "LOR")
    assert {r["step"]: r["answer"] for r in recs if r["horizon"] == "short"} == short
    assert {r["step"]: r["context"]["window"] for r in recs if r["horizon"] == "short"} == {
        t: [t - 1, t] for t in short
    }
    (lr,) = [r for r in recs if r["horizon"] == "long"]
    assert lr["answer"] == long and lr["context"]["window"] == [0, T] and lr["step"] == T
    assert [c["id"] for c in lr["context"]["receptacles"]] == ["counter", "table", "shelf-b"]


def test_stt_lists_receptacle_types_in_visiting_order(memory_scene: SequenceView) -> None:
    # Only the apple moves between receptacles (the mug is removed, the pen spawned: a path of
    # one receptacle). STT asks about objects that moved at least twice in the window (one move
    # is TL's and SED's question). Short-term after step t the window is 0..t: at t=2 the apple
    # has moved once (table -> counter), at t=3 twice (-> shelf-b); long (0..4) the same path.
    # Tokens are receptacle types: shelf-b is "Shelf", though it is named "right shelf of the
    # ShelvingUnit" (conftest.SHELVING).
    recs = questions(memory_scene, (2,), 0, "STT")
    got = {(r["horizon"], r["step"]): (r["context"]["object"], r["answer"]) for r in recs}
    path = ["DiningTable", "CounterTop", "Shelf"]
    assert got == {("short", 3): ("apple", path), ("long", T): ("apple", path)}
    long = next(r for r in recs if r["horizon"] == "long")
    path = ["DiningTable", "CounterTop", "right shelf of the ShelvingUnit"]
    assert long["context"]["path"] == path


# RSR-M: the 3 nearest neighbours of the put-down object right after step s among every object
# in the frame of step s (the stream frame paints every object that exists), directions in that
# frame. Camera frame of steps 0..3: (x, z) = (-Z, X); of step 4 (looking along -x from
# (4, 1, 0)): (x, z) = (Z, 4 - X). World centres (X, Y, Z): conftest.memory_states.
RSR_M_BY_STEP = {
    # s=2, apple on the counter (2.0, .9, -.7): bread .3, knife .64, vase (2, 1.5, 0) .92, book
    # 2.77. Frame: apple (.7, 2.0); bread (1.0, 2.0) dx +.3, dz 0: right; knife (1.1, 2.5) dx
    # +.4, dz +.5 > .4: behind; vase (0, 2.0) dx -.7: left
    2: ("apple", {"Bread": "right", "Knife": "behind", "Vase": "left"}),
    # s=3, apple on shelf-b (2.0, 1.5, -.3): vase .3, bread .92, knife 1.12, book 2.3. Frame:
    # apple (.3, 2.0); vase (0, 2.0) dx -.3: left; bread (1.0, 2.0) dx +.7: right; knife
    # (1.1, 2.5) dx +.8 > dz .5: right
    3: ("apple", {"Vase": "left", "Bread": "right", "Knife": "right"}),
    # s=4, pen spawned on the counter (2.1, .9, -1.4): bread .41, knife .5, apple (2, 1.5, -.3)
    # 1.26, vase 1.53. Frame 4: pen (-1.4, 1.9); bread (-1.0, 2.0) dx +.4, dz +.1: right; knife
    # (-1.1, 1.5) dx +.3, dz -.4: right; apple (-.3, 2.0) dx +1.1: right. (In frame 3's camera
    # bread and knife would be on the left: the frame matters.)
    4: ("pen", {"Bread": "right", "Knife": "right", "Apple": "right"}),
}
RSR_M_CANDIDATES = {  # every other object of the frame of step s
    2: ["Book", "Bread", "Knife", "Vase"],
    3: ["Book", "Bread", "Knife", "Vase"],
    4: ["Apple", "Book", "Bread", "Knife", "Vase"],
}


def test_rsr_m_neighbours_in_the_frame_of_the_put_down_step(memory_scene: SequenceView) -> None:
    steps = set()
    for seed in SEEDS:
        recs = questions(memory_scene, (2,), seed, "RSR-M")
        short = {
            r["step"]: (r["context"]["object"], r["answer"])
            for r in recs
            if r["horizon"] == "short"
        }
        # short-term after every put-down step t (s = t); none after the removal at 1
        assert short == RSR_M_BY_STEP
        (lr,) = [r for r in recs if r["horizon"] == "long"]
        # long-term at T: one put-down step s drawn from 2..4, its answer as short-term's (the
        # long-term question still asks for the frame of step s, not of T)
        s = lr["context"]["past"]
        assert lr["step"] == T and (lr["context"]["object"], lr["answer"]) == RSR_M_BY_STEP[s]
        assert sorted(lr["labels"]) == RSR_M_CANDIDATES[s]  # listed in a drawn order
        steps.add(s)
    assert steps == {2, 3, 4}
    # the tasks' own rule: at most 5 other objects in a frame, fewer than the 7 RSR-M needs
    assert questions(memory_scene, (2,), 0, "RSR-M", sampling=True) == []


STEP1_BOXES = {  # conftest.MEMORY_BOXES + 1 pixel in x
    "apple": [3.0, 2.0, 5.0, 4.0],
    "bread": [15.0, 2.0, 17.0, 4.0],
    "knife": [21.0, 2.0, 23.0, 4.0],
    "vase": [27.0, 2.0, 29.0, 4.0],
    "book": [3.0, 10.0, 5.0, 12.0],
}


def test_vgl_m_box_comes_from_the_current_frame(memory_scene: SequenceView) -> None:
    # The stream frame of step s shows each object in its base box shifted right by s pixels
    # (conftest.MEMORY_BOXES), so a box from any other frame is off by at least one pixel.
    # Short-term after t, the object is one the step moved or spawned when visible, named by its
    # place at t-1 (at t for a spawn):
    # t=2 apple (base (2, 2, 4, 4)) -> (4, 2, 6, 4), named on the DiningTable at step 1;
    # t=3 apple -> (5, 2, 7, 4), named on the CounterTop at step 2;
    # t=4 pen (base (8, 10, 10, 12)) -> (12, 10, 14, 12), spawned: named at step 4.
    # At t=1 the removed mug is not visible: any visible object, named at step 0, its base box
    # shifted by one pixel.
    short = {
        2: ("apple", [[4.0, 2.0, 6.0, 4.0]], "the Apple on the DiningTable at step 1"),
        3: ("apple", [[5.0, 2.0, 7.0, 4.0]], "the Apple on the CounterTop at step 2"),
        4: ("pen", [[12.0, 10.0, 14.0, 12.0]], "the Pen on the CounterTop at step 4"),
    }
    # Long-term at T = 4: an object some action moved or spawned that is visible at 4 (apple or
    # pen; the mug is gone), its box in frame 4: apple (6, 2, 8, 4), pen (12, 10, 14, 12).
    long = {"apple": [[6.0, 2.0, 8.0, 4.0]], "pen": [[12.0, 10.0, 14.0, 12.0]]}
    drawn = set()
    for seed in SEEDS:
        recs = questions(memory_scene, (2,), seed, "VGL-M")
        for r in recs:
            assert [(f["step"], f["view"]) for f in r["frames"]] == [(r["step"], 1)]
        got = {r["step"]: r for r in recs if r["horizon"] == "short"}
        assert sorted(got) == [1, 2, 3, 4]
        for t, (obj, box, name) in short.items():
            assert (got[t]["context"]["object"], got[t]["answer"]) == (obj, box)
            assert name in got[t]["prompt"] and got[t]["context"]["named_at"] == int(name[-1])
        assert got[1]["answer"] == [STEP1_BOXES[got[1]["context"]["object"]]]
        assert got[1]["context"]["named_at"] == 0
        (lr,) = [r for r in recs if r["horizon"] == "long"]
        obj = lr["context"]["object"]
        assert lr["step"] == T and lr["answer"] == long[obj]
        # named where it rested at a step of its life before T (the pen has none: T itself)
        assert lr["context"]["named_at"] in ({0, 1, 2, 3} if obj == "apple" else {T})
        drawn.add(obj)
    assert drawn == set(long)
