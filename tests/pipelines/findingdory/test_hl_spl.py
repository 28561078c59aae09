"""HL-SPL over entities as upstream (``task/measures.py:736-766``): single goal d_min /
max(d_min, d_chosen) over the geodesics from the start pose to the subgoal's entities, 1 when
d_chosen = 0, 0 after an HL failure, not computed for multi-goal tasks (upstream: -1); the
frame-based one is reported beside it as HL-SPL-frames. Distances are hand-built."""

from __future__ import annotations

import numpy as np
import pytest

from dataforge.pipelines.findingdory.goal_frames import ALL, DISTANCE
from dataforge.pipelines.findingdory.metrics import entity_hl_spl, summarize
from dataforge.pipelines.findingdory.scoring import EpisodeTasks, chosen_entity, score_predictions


def test_entity_hl_spl_by_hand() -> None:
    d = {"mug1": 3.0, "mug2": 5.0, "mug3": None}
    assert entity_hl_spl(True, False, d, "mug2") == pytest.approx(3.0 / 5.0)
    assert entity_hl_spl(True, False, d, "mug1") == 1.0
    assert entity_hl_spl(True, False, {"kitchen": 0.0, "hall": 4.0}, "kitchen") == 1.0
    assert entity_hl_spl(True, False, {"a": 0.0, "b": 4.0}, "b") == 0.0  # d_min 0, chose b
    assert entity_hl_spl(False, False, d, "mug2") == 0.0
    assert entity_hl_spl(True, True, d, "mug2") is None  # multi-goal: upstream -1
    assert entity_hl_spl(False, True, d, None) is None
    assert entity_hl_spl(True, False, d, "mug3") is None  # its distance is unknown


# A day of 8 frames from the final pose (frame 7); two mugs; frame_distance: start -> frame.
POSES = np.array([[float(f), 0.0, 0.0, 0.0] for f in range(8)])
FRAME_DISTANCE = np.array([7.0, 6.0, 5.0, 1.9, 3.0, 2.4, 1.0, 0.0])
MUG_DISTANCE = {"mug1": 2.5, "mug2": 4.0}  # start -> the mug's snapped centre


def _episode() -> EpisodeTasks:
    bits = np.full((2, 8), DISTANCE, dtype=np.uint8)
    bits[0, [3, 5]] = ALL  # mug1 seen at frames 3 and 5
    bits[1, [4, 5]] = ALL  # mug2 at 4 and 5
    tasks = {
        "e/T09-0": {
            "id": "e/T09-0",
            "category": "conditional_interaction",
            "solvable": True,
            "goals": [["mug1"]],
            "ordered": False,
            "multi_goal": False,
            "predicate": "robot_at_object",
            "shortest_m": 1.9,
        },
        "e/T01-0": {
            "id": "e/T01-0",
            "category": "object_recall",
            "solvable": True,
            "goals": [["mug1", "mug2"]],
            "ordered": False,
            "multi_goal": False,
            "predicate": "robot_at_object",
            "shortest_m": 1.9,
        },
        "e/T56-0": {
            "id": "e/T56-0",
            "category": "unordered_revisitation",
            "solvable": True,
            "goals": [["mug1"], ["mug2"]],
            "ordered": False,
            "multi_goal": True,
            "predicate": "robot_at_object",
            "shortest_m": 3.0,
        },
    }
    points = {"mug1": (5.5, 0.5, 0.0), "mug2": (4.2, 0.5, 0.0)}
    return EpisodeTasks(
        "e",
        tasks,
        bits,
        {"mug1": 0, "mug2": 1},
        POSES,
        FRAME_DISTANCE,
        None,
        entity_distance=dict(MUG_DISTANCE),
        entity_point=points,
    )


def _scores(preds: dict[str, list[int]]) -> dict:
    records = {tid: {"id": tid, "frame_indices": f} for tid, f in preds.items()}
    scores, _ = score_predictions([_episode()], records, allow_missing=True)
    return dict(scores)


def test_a_farther_frame_of_the_one_goal_entity_scores_one_as_upstream() -> None:
    """The mug's frame 5 is 2.4 m from the start, its nearest valid frame 1.9 m: HL-SPL-frames
    1.9 / 2.4 = 0.79; upstream measures the mug, the same entity either way: 1.0."""
    s = _scores({"e/T09-0": [5], "e/T01-0": [3]})["e/T09-0"]
    assert s.hl and s.hl_spl == 1.0
    assert s.hl_spl_frames == pytest.approx(1.9 / 2.4)


def test_the_farther_entity_scores_d_min_over_d_chosen() -> None:
    """Frame 4 satisfies mug2 only: 2.5 / 4.0; frame 5 satisfies both, the nearer centre
    (mug1, 0.5 m away; mug2 0.8 m) is the chosen one: 1.0."""
    assert _scores({"e/T09-0": [3], "e/T01-0": [4]})["e/T01-0"].hl_spl == pytest.approx(2.5 / 4)
    assert chosen_entity(_episode(), ["mug1", "mug2"], 5) == "mug1"
    assert _scores({"e/T09-0": [3], "e/T01-0": [5]})["e/T01-0"].hl_spl == 1.0
    failed = _scores({"e/T09-0": [0], "e/T01-0": [7]})
    assert all(failed[t].hl_spl == 0.0 == failed[t].hl_spl_frames for t in ("e/T09-0", "e/T01-0"))


def test_the_summary_reports_both_and_leaves_multi_goal_out_of_hl_spl() -> None:
    scores = _scores({"e/T09-0": [5], "e/T01-0": [4], "e/T56-0": [0, 1]})
    assert scores["e/T56-0"].hl_spl is None and scores["e/T56-0"].hl_spl_frames == 0.0
    out = summarize(list(scores.values()))["solvable"]["overall"]
    assert out["HL-SPL"] == {"mean": pytest.approx((1.0 + 2.5 / 4) / 2), "n": 2}
    frames = (1.9 / 2.4 + 1.9 / 3.0 + 0.0) / 3
    assert out["HL-SPL-frames"] == {"mean": pytest.approx(frames), "n": 3}
