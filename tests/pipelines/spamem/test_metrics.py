"""SpaMEM per-question metrics (Eq. 1-6): hand-computed cases and the paper's edge cases."""

from __future__ import annotations

import pytest

from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.metrics import (
    METRICS_OF,
    abs_rel,
    box_iou,
    count_scores,
    direction_accuracy,
    levenshtein,
    mean_iou,
    nes,
    recall_at_k,
    score_answer,
    score_wrong,
    set_prf,
    spearman,
    tiou,
)

approx = pytest.approx

GOLD = {
    "set": ["Apple", "Mug"],
    "boxes": [[0.0, 0.0, 9.0, 9.0], [20.0, 20.0, 29.0, 29.0]],
    "distances": {"Apple": 1.5, "Book": 3.0, "Mug": 2.0},
    "neighbours": {"Apple": "left", "Mug": "behind"},
    "count": 3,
    "interval": {"first": 2, "last": 5},
    "sequence": ["CounterTop", "Fridge", "CounterTop"],
}


# Eq. 1
def test_set_prf_hand_computed() -> None:
    p, r, f1 = set_prf(["a", "b"], ["b", "c", "d"])
    assert (p, r, f1) == approx((0.5, 1 / 3, 0.4))


def test_set_prf_both_empty_is_perfect() -> None:
    assert set_prf([], []) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(("pred", "gold"), [([], ["a"]), (["a"], []), (["a"], ["b"])])
def test_set_prf_one_empty_or_disjoint_is_zero(pred: list[str], gold: list[str]) -> None:
    assert set_prf(pred, gold) == (0.0, 0.0, 0.0)


def test_set_prf_ignores_duplicates() -> None:
    assert set_prf(["a", "a", "b"], ["a", "b"]) == approx((1.0, 1.0, 1.0))


# Eq. 2
def test_box_iou_inclusive_pixels() -> None:
    assert box_iou([3, 3, 3, 3], [3, 3, 3, 3]) == 1.0  # identical 1-pixel boxes
    assert box_iou([0, 0, 1, 1], [1, 1, 2, 2]) == approx(1 / 7)  # 1 px of 4 + 4 - 1
    assert box_iou([0, 0, 0, 0], [1, 0, 1, 0]) == 0.0  # adjacent pixels do not overlap
    assert box_iou([0, 0, 9, 9], [0, 0, 4, 9]) == approx(0.5)


def test_mean_iou_hungarian_beats_greedy() -> None:
    # one-row boxes: IoU is the inclusive 1D interval IoU.
    g1, g2 = [0, 0, 9, 0], [10, 0, 19, 0]
    p1, p2 = [2, 0, 13, 0], [0, 0, 4, 0]
    assert box_iou(p1, g1) == approx(8 / 14)  # the largest IoU: greedy takes it first
    assert box_iou(p1, g2) == approx(4 / 18)
    assert box_iou(p2, g1) == approx(5 / 10)
    assert box_iou(p2, g2) == 0.0
    greedy = (8 / 14 + 0.0) / 2
    hungarian = (4 / 18 + 5 / 10) / 2
    assert hungarian > greedy
    assert mean_iou([p1, p2], [g1, g2]) == approx(hungarian)


def test_mean_iou_unmatched_boxes_count_zero() -> None:
    assert mean_iou([[0, 0, 0, 0]], [[0, 0, 0, 0], [5, 5, 5, 5]]) == approx(0.5)
    assert mean_iou([[0, 0, 0, 0], [5, 5, 5, 5], [9, 9, 9, 9]], [[5, 5, 5, 5]]) == approx(1 / 3)


def test_mean_iou_empty() -> None:
    assert mean_iou([], []) == 1.0
    assert mean_iou([], [[0, 0, 1, 1]]) == 0.0
    assert mean_iou([[0, 0, 1, 1]], []) == 0.0


# Eq. 3
def test_abs_rel_hand_computed() -> None:
    assert abs_rel({"a": 1.0, "b": 5.0}, {"a": 2.0, "b": 4.0}) == approx((0.5 + 0.25) / 2)


def test_abs_rel_missing_label_is_error_one_and_extra_labels_ignored() -> None:
    assert abs_rel({"a": 2.0, "x": 7.0}, {"a": 2.0, "b": 4.0}) == approx(0.5)
    assert abs_rel({}, {"a": 2.0}) == approx(1.0)


def test_abs_rel_without_positive_gold_is_undefined() -> None:
    assert abs_rel({"a": 1.0}, {}) is None
    assert abs_rel({"a": 1.0}, {"a": 0.0}) is None


def test_spearman_hand_computed() -> None:
    gold = {"a": 1.0, "b": 2.0, "c": 3.0}
    assert spearman({"a": 3.0, "b": 2.0, "c": 1.0}, gold) == approx(-1.0)
    # ranks (1, 3, 2) vs (1, 2, 3): 1 - 6 * 2 / (3 * 8)
    assert spearman({"a": 1.0, "b": 3.0, "c": 2.0}, gold) == approx(0.5)
    # only the common labels a, b count
    assert spearman({"a": 0.5, "b": 9.0, "x": 1.0}, gold) == approx(1.0)


def test_spearman_undefined_cases() -> None:
    gold = {"a": 1.0, "b": 2.0, "c": 3.0}
    assert spearman({"a": 1.0}, gold) is None  # one common object
    assert spearman({"a": 1.0, "x": 2.0}, gold) is None
    assert spearman({"a": 2.0, "b": 2.0, "c": 2.0}, gold) is None  # constant prediction
    assert spearman(gold, {"a": 4.0, "b": 4.0, "c": 4.0}) is None  # constant gold
    assert spearman({}, {}) is None


# RSR
def test_recall_and_direction_accuracy() -> None:
    gold = {"a": "left", "b": "right", "c": "behind"}
    pred = {"a": "left", "b": "left", "d": "right"}
    assert recall_at_k(pred, gold) == approx(2 / 3)
    assert direction_accuracy(pred, gold) == approx(1 / 3)
    assert recall_at_k({"a": "right"}, {"a": "left"}) == 1.0
    assert direction_accuracy({"a": "right"}, {"a": "left"}) == 0.0
    assert recall_at_k({}, gold) == 0.0
    assert direction_accuracy({}, gold) == 0.0


# Eq. 4
def test_count_scores() -> None:
    assert count_scores(3, 4) == approx({"AE": 1.0, "MAPE": 0.25, "Acc@0": 0.0, "Acc@1": 1.0})
    assert count_scores(4, 4) == approx({"AE": 0.0, "MAPE": 0.0, "Acc@0": 1.0, "Acc@1": 1.0})
    assert count_scores(1, 4) == approx({"AE": 3.0, "MAPE": 0.75, "Acc@0": 0.0, "Acc@1": 0.0})


def test_count_zero_gold_uses_max_one() -> None:
    assert count_scores(2, 0) == approx({"AE": 2.0, "MAPE": 2.0, "Acc@0": 0.0, "Acc@1": 0.0})
    assert count_scores(0, 0)["MAPE"] == 0.0


# Eq. 5
def test_tiou() -> None:
    assert tiou({"first": 1, "last": 5}, {"first": 3, "last": 8}) == approx(3 / 8)
    assert tiou({"first": 4, "last": 4}, {"first": 4, "last": 4}) == 1.0
    assert tiou({"first": 0, "last": 1}, {"first": 5, "last": 6}) == 0.0  # disjoint
    assert tiou({"first": 0, "last": 1}, {"first": 2, "last": 3}) == 0.0  # adjacent
    assert tiou({"first": 0, "last": 9}, {"first": 3, "last": 3}) == approx(0.1)


# Eq. 6
def test_levenshtein() -> None:
    assert levenshtein(list("kitten"), list("sitting")) == 3
    assert levenshtein([], ["a", "b"]) == 2
    assert levenshtein(["Fridge", "Sink"], ["Fridge", "Sink"]) == 0


def test_nes() -> None:
    seq = ["CounterTop", "Fridge"]
    assert nes(seq, list(seq)) == 1.0
    assert nes([], []) == 1.0
    assert nes([], seq) == 0.0
    assert nes(["a", "b", "c"], ["a", "c"]) == approx(2 / 3)
    assert nes(list("kitten"), list("sitting")) == approx(1 - 3 / 7)


# score_answer / score_wrong
def test_metric_names_cover_qa() -> None:
    assert set(METRICS_OF) == set(qa.ANSWER_TYPES)
    for spec in qa.TASKS.values():
        assert set(spec.metrics) <= set(METRICS_OF[spec.answer_type]), spec.name
    assert {m for ms in METRICS_OF.values() for m in ms} == set(qa.METRICS)


@pytest.mark.parametrize("answer_type", qa.ANSWER_TYPES)
def test_score_answer_perfect(answer_type: str) -> None:
    gold = qa.canonical(answer_type, GOLD[answer_type])
    assert qa.check_answer(answer_type, gold) is None
    s = score_answer(answer_type, gold, gold)
    assert tuple(s) == METRICS_OF[answer_type]
    for m, v in s.items():
        assert v == approx(1.0 if qa.METRICS[m] else 0.0), m


@pytest.mark.parametrize("answer_type", qa.ANSWER_TYPES)
def test_score_wrong_is_never_right(answer_type: str) -> None:
    s = score_wrong(answer_type, GOLD[answer_type])
    assert tuple(s) == METRICS_OF[answer_type]
    for m, v in s.items():
        if m == "rho":
            assert v is None
        elif m == "AE":
            assert v == 3.0
        elif qa.METRICS[m]:
            assert v == 0.0, m
        else:
            assert v == 1.0, m


def test_score_wrong_count_zero_gold() -> None:
    s = score_wrong("count", 0)
    assert s == {"AE": 1.0, "MAPE": 1.0, "Acc@0": 0.0, "Acc@1": 0.0}


def test_unknown_answer_type() -> None:
    with pytest.raises(ValueError):
        score_answer("colour", "red", "red")
    with pytest.raises(ValueError):
        score_wrong("colour", "red")
