"""Evidence per question record and the evidence oracle (issue 37, plan step 2).

Records: on conftest's memory scene (1 removes the mug from the table, 2 moves the apple table
-> counter, 3 counter -> shelf-b, 4 spawns a pen on the counter; the stream view 1 paints every
object that exists at its step and no receptacle, view 0 paints nothing), the evidence each
record lists is derived by hand below. The oracle's perception: a frame ray-cast by hand (a
table top, a box face standing on it or floating above it, the floor)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from spamemhelpers import questions

from dataforge.pipelines.spamem.baselines import answers
from dataforge.pipelines.spamem.evidence_oracle import Frame, History, answer, answer_l2
from dataforge.pipelines.spamem.questions import NOTHING
from dataforge.pipelines.spamem.sequence_view import SequenceView
from dataforge.render.camera import intrinsics, thor_camera_pose

EP = "house-000000/seq-00"


def record(recs: list[dict[str, Any]], rid: str) -> dict[str, Any]:
    (r,) = [r for r in recs if r["id"] == rid]
    return r


@pytest.fixture(scope="module")
def memory_records(memory_scene: SequenceView) -> list[dict[str, Any]]:
    return questions(memory_scene, (2, 3))


def test_l3_evidence_lists_the_frames_that_show_each_item(
    memory_scene: SequenceView, memory_records: list[dict[str, Any]]
) -> None:
    apple = memory_scene.instance_id["apple"]
    # SOR-M after step 2 asks what was on the table at step 1: only the apple (the mug left at
    # step 1). L3 gets steps 0, 1, 2 of view 1; the apple is painted in view 1 at step 1.
    r = record(memory_records, f"L3/SOR-M/short/rgb/{EP}/t002-DiningTable")
    assert r["answer"] == ["Apple"]
    assert r["evidence"] == [{"item": "Apple", "frames": [[1, 1]], "instances": [apple]}]
    # L2 gets frame 2 only: step 1 is in the text history, in no frame.
    r = record(memory_records, f"L2/SOR-M/short/rgb/{EP}/t002-DiningTable")
    assert r["evidence"] == [{"item": "Apple", "frames": [], "instances": [], "history": True}]


def test_added_set_needs_the_receptacle_seen_before(
    memory_scene: SequenceView, memory_records: list[dict[str, Any]]
) -> None:
    # SED-Add after step 3 on shelf-b: the apple arrived (seen at step 3); that it was not there
    # at step 2 needs shelf-b itself in frame 2, and no receptacle is painted in this scene.
    r = record(memory_records, f"L3/SED-Add/short/rgb/{EP}/t003-right-shelf-of-the-ShelvingUnit")
    assert r["answer"] == ["Apple"]
    apple = memory_scene.instance_id["apple"]
    assert r["evidence"] == [
        {"item": "Apple", "frames": [[3, 1]], "instances": [apple]},
        {"item": "the receptacle at step 2", "frames": [], "instances": []},
    ]
    # SED-Rem on the table after step 2 (the apple left): the apple at step 1, the table at 2.
    r = record(memory_records, f"L3/SED-Rem/short/rgb/{EP}/t002-DiningTable")
    items = {e["item"]: e["frames"] for e in r["evidence"]}
    assert items == {"Apple": [[1, 1]], "the receptacle at step 2": []}
    # An empty answer is evidenced by the receptacle: SED-Add on the table after step 2.
    r = record(memory_records, f"L3/SED-Add/short/rgb/{EP}/t002-DiningTable")
    assert r["answer"] == []
    assert [e["item"] for e in r["evidence"]] == [NOTHING, "the receptacle at step 1"]


def test_object_missing_from_its_frame_has_no_evidence(make_episode: Any) -> None:
    # one object, one view: the apple sits on the table at steps 0 and 1 and is taken away at 2;
    # frame 1 does not show it (its mask is empty there), frames 0 and 2 do / show the table.
    cam = (0.0, "standing", (0.0, 1.0, 0.0), 90.0)
    seq = SequenceView(
        make_episode(
            receptacles={"table": "DiningTable"},
            states=[
                {"apple": ("Apple", "table", (2.0, 0.8, 0.0))},
                {"apple": ("Apple", "table", (2.0, 0.8, 0.0))},
                {},
            ],
            cameras=[[cam], [cam], [cam]],
            boxes={
                (0, 0): {"apple": (2, 2, 4, 4), "table": (0, 10, 20, 20)},
                (1, 0): {"table": (0, 10, 20, 20)},
                (2, 0): {"table": (0, 10, 20, 20)},
            },
        )
    )
    recs = questions(seq, (3,))
    # TL after step 2 (it removed the apple) over 0..2: the apple lived [0, 1]; frame 0 shows
    # its first step, frame 1 (empty mask) not its last
    r = record(recs, f"L3/TL/short/rgb/{EP}/t002-apple")
    assert r["answer"] == {"first": 0, "last": 1}
    apple = seq.instance_id["apple"]
    assert r["evidence"] == [
        {"item": "first", "frames": [[0, 0]], "instances": [apple]},
        {"item": "last", "frames": [], "instances": []},
    ]
    # referents: what the prompt names, as instance ids (the apple where it was at step 1)
    assert r["referents"]["object"] == apple
    assert r["referents"]["receptacles"] == [seq.instance_id["table"]]
    assert r["referents"]["window"] == [0, 2] and r["referents"]["named_at"] == 1


# -- the oracle's perception on a hand ray-cast frame --------------------------------------------
W, H = 160, 120
CAMERA = (0.0, 1.5, 0.0)  # looking along +z, 35 degrees down
NAMES = ["nothing", "Floor", "DiningTable", "Apple"]  # semantic class of instances 1, 2, 3
TABLE_Y, TABLE_X, TABLE_Z = 0.8, (-0.6, 0.6), (1.2, 2.6)
FACE_Z, FACE_X = 1.8, (-0.15, 0.15)  # the object: a face 0.2 m tall, 0.3 m wide


def cast(face_bottom: float) -> Frame:
    """Depth, instance and semantic images of the table, the face (its bottom at
    ``face_bottom``) and the floor, each pixel's ray intersected with the planes by hand."""
    K = intrinsics(W, H, 90.0)
    pose = thor_camera_pose(CAMERA, 0.0, 35.0)
    u, v = np.meshgrid(np.arange(W) + 0.5, np.arange(H) + 0.5)
    cam = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones_like(u)], -1)
    d = cam @ pose[:3, :3].T  # world direction per pixel, for a camera-frame depth of 1
    o = np.array(CAMERA)
    depth = np.full((H, W), np.inf)
    inst = np.zeros((H, W), np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for iid, t, ok in (
            (1, (0.0 - o[1]) / d[..., 1], None),  # floor y = 0
            (2, (TABLE_Y - o[1]) / d[..., 1], ("x", TABLE_X, "z", TABLE_Z)),
            (3, (FACE_Z - o[2]) / d[..., 2], ("x", FACE_X, "y", (face_bottom, face_bottom + 0.2))),
        ):
            p = o + d * t[..., None]
            hit = t > 0
            if ok is not None:
                for axis, (lo, hi) in zip(ok[::2], ok[1::2], strict=True):
                    c = p[..., "xyz".index(axis)]
                    hit &= (c >= lo) & (c <= hi)
            nearer = hit & (t < depth)
            depth[nearer], inst[nearer] = t[nearer], iid
    depth_mm = np.where(np.isfinite(depth), np.round(depth * 1000), 0).astype(np.uint16)
    return Frame(inst, depth_mm, inst, NAMES, K, pose, min_pixels=10)


def test_oracle_support_rule_on_a_ray_cast_frame() -> None:
    resting = cast(TABLE_Y)
    assert {resting.type[i] for i in resting.seen} == {"Floor", "DiningTable", "Apple"}
    assert resting.holders == {2} and resting.objects == {3}  # the floor is structure
    assert resting.support(3) == 2
    assert resting.on([2]) == {3}
    floating = cast(TABLE_Y + 0.3)  # 30 cm above the top: more than MAX_GAP_M
    assert floating.support(3) is None and floating.on([2]) == set()
    # the answers that follow from it: SOR names the type, CC counts it, VGL boxes its mask
    q = {"task": "SOR", "step": 0, "referents": {"receptacles": [2]}}
    assert answer(q, {0: resting}) == ["Apple"] and answer(q, {0: floating}) == []
    assert answer({**q, "task": "CC"}, {0: resting}) == 1
    v, u = np.nonzero(resting.inst == 3)
    box = [int(u.min()), int(v.min()), int(u.max()), int(v.max())]
    assert answer({**q, "task": "VGL"}, {0: resting}) == [box]
    # DPE: the face's points (x, y, 1.8), y in 0.8..1.0 (median 0.9), lie at planar depth
    # (p - camera) . forward, forward = (0, -sin 35, cos 35): 0.6 sin 35 + 1.8 cos 35 = 1.819
    ref = {"receptacles": [2], "labels": {"Apple": 3}}
    got = answer({**q, "task": "DPE", "referents": ref}, {0: resting})
    assert got["Apple"] == pytest.approx(1.819, abs=0.03)


def test_evidence_kind_needs_frames() -> None:
    with pytest.raises(Exception, match="needs the tasks directory"):
        answers([], "evidence")


# -- --frames evidence: the view of each step chosen by what the question names ----------------
# Two steps, two views. The stream view 0 (azimuth 0, standing) sees only a 2x2 corner of the
# apple at step 1; view 1 (azimuth 180, crouching) sees the table, the counter, the bread and
# the apple. Step 1 moves the apple from the table to the counter.
def two_view_scene(make_episode: Any) -> SequenceView:
    stream = (0.0, "standing", (0.0, 1.0, 0.0), 90.0)
    other = (180.0, "crouching", (4.0, 0.6, 0.0), 270.0)
    apple_table = ("Apple", "table", (2.0, 0.8, 0.0))
    apple_counter = ("Apple", "counter", (2.0, 0.9, 1.0))
    bread = ("Bread", "counter", (2.0, 0.9, 1.4))
    return SequenceView(
        make_episode(
            receptacles={"table": "DiningTable", "counter": "CounterTop"},
            states=[
                {"apple": apple_table, "bread": bread},
                {"apple": apple_counter, "bread": bread},
            ],
            cameras=[[stream, other], [stream, other]],
            boxes={
                (0, 1): {
                    "apple": (2, 2, 5, 5),
                    "table": (0, 8, 12, 14),
                    "bread": (20, 2, 23, 5),
                    "counter": (16, 8, 30, 14),
                },
                (1, 0): {"apple": (30, 20, 31, 21)},
                (1, 1): {
                    "table": (0, 8, 12, 14),
                    "apple": (24, 2, 27, 5),
                    "bread": (20, 2, 23, 5),
                    "counter": (16, 8, 30, 14),
                },
            },
        )
    )


def test_evidence_frames_follow_the_referents(make_episode: Any) -> None:
    seq = two_view_scene(make_episode)
    apple = seq.instance_id["apple"]
    stream = {r["id"]: r for r in questions(seq, (2, 3), frames="stream")}
    chosen = {r["id"]: r for r in questions(seq, (2, 3), frames="evidence")}
    # SOR-M after step 1 on the table asks for step 0 (the apple): view 1 shows the table and
    # the apple at step 0 and the table at step 1; the stream view shows neither.
    rid = f"L3/SOR-M/short/rgb/{EP}/t001-DiningTable"
    assert [(f["step"], f["view"]) for f in chosen[rid]["frames"]] == [(0, 1), (1, 1)]
    assert chosen[rid]["evidence"] == [{"item": "Apple", "frames": [[0, 1]], "instances": [apple]}]
    assert [(f["step"], f["view"]) for f in stream[rid]["frames"]] == [(0, 0), (1, 0)]
    assert stream[rid]["evidence"][0]["frames"] == []  # kept with --frames stream, unseen
    # VGL-M at step 1: the apple, visible in the stream view (its 2x2 corner), is boxed in the
    # view that sees it best, which the record then shows: view 1, box (24, 2, 27, 5).
    rid = f"L3/VGL-M/short/rgb/{EP}/t001"
    assert chosen[rid]["answer"] == [[24, 2, 27, 5]]
    assert (chosen[rid]["frames"][-1]["step"], chosen[rid]["frames"][-1]["view"]) == (1, 1)
    assert stream[rid]["answer"] == [[30, 20, 31, 21]]
    # the L2 history states the camera of the frame it shows: view 1's at step 1
    l2 = chosen[f"L2/VGL-M/short/rgb/{EP}/t001"]["prompt"]
    assert "Current observation, step 1: camera at (4.00, 0.60, 0.00), yaw 270 deg." in l2


def test_unusable_views_are_never_shown(make_episode: Any) -> None:
    """View 1 of step 0, the only one that sees the table and the apple then, is marked unusable
    (every camera position was against something): no record of any level shows it."""
    seq = two_view_scene(make_episode)
    seq.viewpoints[0][1]["usable"] = False
    recs = questions(seq, (1, 2, 3), frames="evidence")
    assert recs
    shown = {(f["step"], f["view"]) for r in recs for f in r["frames"]}
    assert (0, 1) not in shown and (1, 1) in shown


def test_evidence_frames_skip_what_no_frame_shows(make_episode: Any) -> None:
    seq = two_view_scene(make_episode)
    kept = {r["id"] for r in questions(seq, (3,), frames="evidence")}
    # SED-Rem on the counter after step 1: nothing left it (empty), shown by the counter at
    # step 1 (view 1) — kept. SED-Add on the counter: the apple arrived (view 1 at step 1) and the
    # counter is seen at step 0 — kept. Both are in the set; none lacks its evidence.
    assert f"L3/SED-Add/short/rgb/{EP}/t001-CounterTop" in kept
    assert f"L3/SED-Rem/short/rgb/{EP}/t001-CounterTop" in kept
    # a scene whose views never show the table: every question about it is skipped, counted
    from dataforge.pipelines.spamem.questions import Builder, Settings

    blind = SequenceView(
        make_episode(
            receptacles={"table": "DiningTable", "counter": "CounterTop"},
            states=[{"apple": ("Apple", "table", (2.0, 0.8, 0.0))}, {}],
            cameras=[[(0.0, "standing", (0.0, 1.0, 0.0), 90.0)]] * 2,
            boxes={},
        )
    )
    b = Builder(
        blind,
        Settings((3,), ("short",), ("rgb",), (0.0, "standing"), "sequences", frames="evidence"),
        np.random.default_rng(0),
        ("Apple",),
    )
    assert list(b.records()) == []
    assert b.skipped["SOR-M short L3: the answer is not in its frames"] == 1


def test_a_shut_container_does_not_show_it_is_empty(make_episode: Any) -> None:
    # A drawer holds a pen at step 0, shut; step 1 takes the pen out onto the table (the drawer
    # is open for step 1's capture); step 2 spawns an apple on the table, the drawer shut again.
    # The drawer's front and the table are painted in every frame, the objects in none.
    cam = (0.0, "standing", (0.0, 1.0, 0.0), 90.0)
    pen_drawer = ("Pen", "drawer", (2.0, 0.5, 0.0))
    pen_table = ("Pen", "table", (2.0, 0.8, 0.5))
    apple = ("Apple", "table", (2.0, 0.8, -0.5))
    seq = SequenceView(
        make_episode(
            receptacles={"table": "DiningTable", "drawer": "Drawer"},
            states=[{"pen": pen_drawer}, {"pen": pen_table}, {"pen": pen_table, "apple": apple}],
            cameras=[[cam]] * 3,
            boxes={
                (s, 0): {"drawer": (0, 20, 10, 25), "table": (12, 20, 30, 25)} for s in range(3)
            },
            containers={"drawer": [0.0, 1.0, 0.0]},
        )
    )
    assert seq.shut == [{"drawer"}, set(), {"drawer"}]
    recs = {r["id"]: r for r in questions(seq, (3,))}

    def shown(rid: str) -> dict[str, list[list[int]]]:
        return {e["item"]: e["frames"] for e in recs[rid]["evidence"]}

    # SED-Add on the drawer after step 1 (nothing added): the open drawer of frame 1 shows it
    # empty; that nothing was there before needs frame 0's drawer, which was shut
    got = shown(f"L3/SED-Add/short/rgb/{EP}/t001-Drawer")
    assert got == {"(nothing)": [[1, 0]], "the receptacle at step 0": []}
    # CSR-Add at T=2: the drawer is shut at 2, so "(nothing)" has no frame at all
    assert shown(f"L3/CSR-Add/long/rgb/{EP}/T-Drawer")["(nothing)"] == []
    # the table is no container: its emptiness at step 2 (SED-Rem) shows in frame 2
    assert shown(f"L3/SED-Rem/short/rgb/{EP}/t002-DiningTable")["(nothing)"] == [[2, 0]]


def test_a_shut_container_resting_on_something_is_still_seen(make_episode: Any) -> None:
    # A Microwave (a container, shut) rests on the counter: as an object of the counter's
    # cluster it is seen, though "what it holds" would not be.
    cam = (0.0, "standing", (0.0, 1.0, 0.0), 90.0)
    seq = SequenceView(
        make_episode(
            receptacles={"counter": "CounterTop", "oven": "Microwave"},
            states=[{"oven": ("Microwave", "counter", (2.0, 1.0, 0.0))}],
            cameras=[[cam]],
            boxes={(0, 0): {"oven": (2, 2, 8, 8), "counter": (0, 10, 30, 20)}},
            containers={"oven": [0.0]},
        )
    )
    assert seq.shut == [{"oven"}]
    (sor,) = [r for r in questions(seq, (1,)) if r["task"] == "SOR"]
    assert sor["answer"] == ["Microwave"]
    assert sor["evidence"] == [
        {"item": "Microwave", "frames": [[0, 0]], "instances": [seq.instance_id["oven"]]}
    ]


def test_receptacles_with_one_name_are_ordered_by_id(make_episode: Any) -> None:
    # Two DiningTables nothing tells apart share a name; the L2 history lists them (and every
    # sorted list of receptacles orders them) by id, not by a set's run-dependent order.
    cam = (0.0, "standing", (0.0, 1.0, 0.0), 90.0)
    seq = SequenceView(
        make_episode(
            receptacles={"t-b": "DiningTable", "t-a": "DiningTable"},
            states=[
                {"pen": ("Pen", "t-b", (2.0, 0.8, 0.0)), "cup": ("Cup", "t-a", (2.0, 0.8, 1.0))}
            ],
            cameras=[[cam]],
            boxes={},
        )
    )
    assert seq.receptacle_label["t-a"] == seq.receptacle_label["t-b"]
    assert seq.by_label({"t-b", "t-a"}) == ["t-a", "t-b"]
    assert seq.by_label(["t-b", "t-a"]) == ["t-a", "t-b"]


def test_a_compared_step_must_show_what_stayed(make_episode: Any) -> None:
    # Step 1 spawns a pen on the table, where an apple and a bread stay. Frame 1 shows the
    # table, the apple, the bread and the pen. Frame 0 shows the table and the apple: that the
    # bread was there before cannot be seen, so "the pen alone was added" is not in the frames
    # (the bread could have come too). With the bread painted at step 0 as well, it is.
    cam = (0.0, "standing", (0.0, 1.0, 0.0), 90.0)
    apple = ("Apple", "table", (2.0, 0.8, 0.0))
    bread = ("Bread", "table", (2.0, 0.8, 0.4))
    pen = ("Pen", "table", (2.0, 0.8, -0.4))
    after = {"table": (0, 10, 30, 20), "apple": (2, 2, 5, 5), "bread": (8, 2, 11, 5)}

    def evidence(bread_at_0: bool) -> dict[str, list[list[int]]]:
        before = {"table": (0, 10, 30, 20), "apple": (2, 2, 5, 5)}
        if bread_at_0:
            before["bread"] = (8, 2, 11, 5)
        seq = SequenceView(
            make_episode(
                receptacles={"table": "DiningTable"},
                states=[
                    {"apple": apple, "bread": bread},
                    {"apple": apple, "bread": bread, "pen": pen},
                ],
                cameras=[[cam], [cam]],
                boxes={(0, 0): before, (1, 0): {**after, "pen": (14, 2, 17, 5)}},
            )
        )
        r = record(questions(seq, (3,)), f"L3/SED-Add/short/rgb/{EP}/t001-DiningTable")
        assert r["answer"] == ["Pen"]
        return {e["item"]: e["frames"] for e in r["evidence"]}

    assert evidence(False) == {"Pen": [[1, 0]], "the receptacle at step 0": []}
    assert evidence(True) == {"Pen": [[1, 0]], "the receptacle at step 0": [[0, 0]]}


# -- L2: the oracle reads the prompt's text history ---------------------------------------------
# memory scene: 1 removes the mug from the table, 2 moves the apple table -> counter (to
# (2.00, 0.90, -0.70)), 3 counter -> shelf-b; the history of an L2 record at step q lists steps
# 0..q-1 (step 0 every receptacle, then the receptacles each step changed).


def test_l2_history_is_read_as_the_prompt_states_it(memory_records: list[dict[str, Any]]) -> None:
    r = record(memory_records, f"L2/SOR-M/short/rgb/{EP}/t003-CounterTop")
    h = History(r["prompt"])
    assert len(h.states) == 3  # steps 0, 1, 2
    kind, at = h.states[2]["CounterTop"][0]
    assert kind == "Apple" and at.tolist() == [2.0, 0.9, -0.7]
    assert h.states[1]["CounterTop"] is h.states[0]["CounterTop"]  # step 1 did not list it
    assert h.states[1]["DiningTable"][0][0] == "Apple" and len(h.states[1]["DiningTable"]) == 1
    assert h.actions[2] == "the Apple was moved from the DiningTable to the CounterTop"
    assert h.named() == ["CounterTop"]
    # what was on the counter at step 2: the history says the apple was moved there at step 2;
    # no frame is read for it (the oracle gets none here)
    assert r["answer"] == ["Apple", "Bread", "Knife"]
    assert answer_l2(r, {}, h) == ["Apple", "Bread", "Knife"]
    r = record(memory_records, f"L2/SOR-M/short/rgb/{EP}/t002-DiningTable")
    assert answer_l2(r, {}, History(r["prompt"])) == ["Apple"]  # the mug left at step 1


def test_l2_history_follows_a_named_object(memory_records: list[dict[str, Any]]) -> None:
    # the mug, named on the table at step 0, was removed at step 1: it lived [0, 0]
    r = record(memory_records, f"L2/TL/long/rgb/{EP}/t004-mug")
    assert answer_l2(r, {}, History(r["prompt"])) == {"first": 0, "last": 0} == r["answer"]
    # the apple's path up to step 3 in the history: table, counter (step 2), shelf-b (step 3)
    r = record(memory_records, f"L2/STT/long/rgb/{EP}/t004-apple")
    got = answer_l2(r, {}, History(r["prompt"]))
    assert got == ["DiningTable", "CounterTop", "Shelf"] == r["answer"]


def test_a_name_inside_another_names_only_the_whole() -> None:
    prompt = "\n".join(
        [
            "Step 0 (initial state):",
            "- Dresser in the Bedroom: Vase at (1.00, 1.00, 1.00)",
            "- top drawer of the Dresser in the Bedroom: Pen at (1.00, 0.80, 1.00)",
            "Current observation, step 1: camera at (0.00, 1.50, 0.00), yaw 0 deg.",
            "",
            "Which object categories were on the top drawer of the Dresser in the Bedroom at "
            "step 0?",
        ]
    )
    h = History(prompt)
    assert h.named() == ["top drawer of the Dresser in the Bedroom"]
    q = {"task": "SOR-M", "step": 1, "referents": {"receptacles": [5], "past": 0}}
    assert answer_l2(q, {}, h) == ["Pen"]


def test_l2_history_does_not_tell_an_object_named_where_the_query_step_moved_it(
    memory_records: list[dict[str, Any]],
) -> None:
    # TL after step 3 names the apple on shelf-b at step 3, where step 3 put it: the history
    # lists an apple on the counter at step 2, but nothing says it is this one, and the frame of
    # step 3 does not show where it came from: its first step is in neither
    r = record(memory_records, f"L2/TL/short/rgb/{EP}/t003-apple")
    assert {e["item"]: e.get("history", False) for e in r["evidence"]}["first"] is False
    # named on the table at step 0 (the long window), the history tells it
    r = record(memory_records, f"L2/TL/long/rgb/{EP}/t004-apple")
    assert {e["item"]: e.get("history", False) for e in r["evidence"]}["first"] is True


# -- what an object rests on shows only from above its surface, its bottom in view --------------
def support_scene(make_episode: Any, apple_bottom_row: int) -> SequenceView:
    """An apple (centre (2, 0.8, 0)) on a table whose top, per the world graph, is at y 0.8;
    view 0 stands at eye height 1.0, view 1 crouches at 0.6, both looking along +x; the apple's
    mask ends at ``apple_bottom_row`` in both."""
    apple = {"apple": ("Apple", "table", (2.0, 0.8, 0.0))}
    cams = [(0.0, "standing", (0.0, 1.0, 0.0), 90.0), (0.0, "crouching", (0.0, 0.6, 0.0), 90.0)]
    paint = {"apple": (18, 2, 22, apple_bottom_row), "table": (0, 27, 39, 29)}
    seq = SequenceView(
        make_episode(
            receptacles={"table": "DiningTable"},
            states=[apple],
            cameras=[cams],
            boxes={(0, 0): paint, (0, 1): paint},
        )
    )
    seq.K = intrinsics(40, 30, 90.0)  # this fixture's intrinsics are the identity
    # the graph's surface heights (this fixture's graphs have none)
    (table,) = seq.graphs[0]["receptacles"]
    table["surfaces"] = [{"index": 0, "y": 0.8, "needs_open": False}]
    (node,) = seq.graphs[0]["objects"]
    node["surface"] = 0
    return seq


def test_support_shows_from_above_the_surface_with_the_bottom_in_view(make_episode: Any) -> None:
    from dataforge.pipelines.spamem.questions import Builder, Settings

    probe = support_scene(make_episode, 20)
    # the apple's bottom centre (2, 0.8, 0) from the standing eye (0, 1, 0), looking along +x:
    # 0.2 m below the eye, 2 m ahead: image row cy + fy * 0.2 / 2 = 14.5 + 20 * 0.1 = 16.5
    bottom = probe.K[1, 2] + probe.K[1, 1] * 0.2 / 2.0
    assert bottom == pytest.approx(16.5)

    def shows(row: int, view: int, support: bool = True) -> bool:
        seq = support_scene(make_episode, row)
        settings = Settings((3,), ("short",), ("rgb",), (0.0, "standing"), "sequences")
        b = Builder(seq, settings, np.random.default_rng(0), ("Apple",))
        return b.shows(0, view, "apple", support)

    reach = int(np.ceil(bottom))  # the mask reaches the bottom's row
    assert shows(reach, 0)
    assert not shows(reach - 5, 0)  # its bottom hidden 5 rows above (tolerance max(2, 0.3))
    assert shows(reach - 5, 0, support=False)  # seen, though not what it rests on
    assert not shows(reach, 1)  # from 0.6 m, below the table top at 0.8


def test_l2_frame_objects_pair_one_to_one_with_the_history() -> None:
    """A second Bowl added 27 cm from the one the history lists: each history Bowl pairs with
    the nearest frame Bowl once, so the new one stays unpaired (added), though it too lies
    within 30 cm of the listed one."""
    from dataforge.pipelines.spamem.evidence_oracle import _pair

    class Seen:  # what _pair reads of a frame: types and centres
        def __init__(self) -> None:
            self.type = {1: "Bowl", 2: "Bowl", 3: "Mug"}
            self.at = {1: (5.10, 0.80, 8.95), 2: (5.36, 0.79, 8.89), 3: (9.0, 0.8, 9.0)}

        def centre(self, o: int) -> np.ndarray:
            return np.array(self.at[o])

    told = [("Bowl", np.array([5.09, 0.79, 8.92])), ("Mug", np.array([6.0, 0.8, 9.0]))]
    added, removed = _pair(Seen(), [1, 2, 3], told, set())  # type: ignore[arg-type]
    assert added == {2, 3} and removed == [1]  # the mug 3 m from the listed one is another
    # in a drawer (``free``), drawn pulled out: the mug pairs at any distance
    added, removed = _pair(Seen(), [1, 2, 3], told, {3})  # type: ignore[arg-type]
    assert added == {2} and removed == []
