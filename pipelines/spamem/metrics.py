"""SpaMEM's per-question metrics (paper §3, Eq. 1-6; docs/spamem.md, "Metrics").

Pure functions over canonical answers (``qa.canonical``): each scores one prediction against one
gold answer. Undefined values are ``None``, never NaN. ``score_answer`` gives every metric of an
answer type keyed by the names of ``qa.METRICS``; ``score_wrong`` the score of a missing or
malformed answer, which never counts as right. Besides the paper's metrics: ``delta<1.25`` for
distances (``delta125``), and Acc@0 is every count task's (CC's too), the headline metrics of
``qa.TaskSpec.headline`` (issue 37).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

Box = Sequence[float]
Scores = dict[str, float | None]

METRICS_OF: dict[str, tuple[str, ...]] = {
    "set": ("F1", "P", "R"),
    "boxes": ("mIoU",),
    "distances": ("AbsRel", "rho", "delta<1.25"),
    "neighbours": ("R@3", "Dir"),
    "count": ("AE", "MAPE", "Acc@0", "Acc@1"),
    "interval": ("tIoU",),
    "sequence": ("NES",),
}


def set_prf(pred: Sequence[str], gold: Sequence[str]) -> tuple[float, float, float]:
    """Eq. 1: P = |Sp∩Sg| / max(|Sp|,1), R = |Sp∩Sg| / max(|Sg|,1), F1 = 2PR / (P+R).

    F1 is 0 when P + R = 0; both sets empty -> (1, 1, 1). Duplicates are ignored (sets).
    """
    sp, sg = set(pred), set(gold)
    if not sp and not sg:
        return 1.0, 1.0, 1.0
    hit = len(sp & sg)
    p = hit / max(len(sp), 1)
    r = hit / max(len(sg), 1)
    f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f1


def box_iou(a: Box, b: Box) -> float:
    """Eq. 2 on inclusive pixel boxes [x0, y0, x1, y1]: area = (x1-x0+1)(y1-y0+1),
    IoU = area(A∩B) / area(A∪B), where the intersection's sides are clipped at 0."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]) + 1)
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]) + 1)
    inter = iw * ih
    area_a = (a[2] - a[0] + 1) * (a[3] - a[1] + 1)
    area_b = (b[2] - b[0] + 1) * (b[3] - b[1] + 1)
    union = area_a + area_b - inter
    return float(inter / union) if union > 0 else 0.0


def mean_iou(pred_boxes: Sequence[Box], gold_boxes: Sequence[Box]) -> float:
    """mIoU: a one-to-one (Hungarian) matching of predicted to gold boxes maximising the summed
    IoU; mIoU = Σ matched IoU / max(|P|, |G|), so unmatched boxes on either side count 0.
    Both empty -> 1; exactly one empty -> 0."""
    if not pred_boxes and not gold_boxes:
        return 1.0
    if not pred_boxes or not gold_boxes:
        return 0.0
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    iou = np.array([[box_iou(p, g) for g in gold_boxes] for p in pred_boxes], dtype=float)
    rows, cols = linear_sum_assignment(iou, maximize=True)
    return float(iou[rows, cols].sum()) / max(len(pred_boxes), len(gold_boxes))


def abs_rel(pred: Mapping[str, float], gold: Mapping[str, float]) -> float | None:
    """Eq. 3: AbsRel = (1/N) Σ_i |d_i^g - d_i^p| / d_i^g over the N gold labels; a gold label
    missing from ``pred`` counts as d^p = 0 (error 1). Gold labels with d^g <= 0 have no relative
    error and are left out; None when no gold label is left."""
    errs = [abs(dg - pred.get(k, 0.0)) / dg for k, dg in gold.items() if dg > 0]
    return float(sum(errs) / len(errs)) if errs else None


DELTA = 1.25  # delta<1.25: a distance within this ratio of the gold one counts as right


def delta125(pred: Mapping[str, float], gold: Mapping[str, float]) -> float | None:
    """The depth-estimation threshold accuracy delta<1.25: the share of the gold labels whose
    max(d^p / d^g, d^g / d^p) < 1.25. As for AbsRel, a gold label missing from ``pred`` counts
    as d^p = 0 (wrong), gold labels with d^g <= 0 are left out, and None when none is left."""
    hits = []
    for k, dg in gold.items():
        if dg <= 0:
            continue
        dp = float(pred.get(k, 0.0))
        hits.append(dp > 0 and max(dp / dg, dg / dp) < DELTA)
    return sum(hits) / len(hits) if hits else None


def spearman(pred: Mapping[str, float], gold: Mapping[str, float]) -> float | None:
    """Spearman's ρ between predicted and gold distances over the gold labels the prediction
    also gives (ties get average ranks). None when fewer than 2 labels are common or either side
    is constant there (ρ undefined); never NaN."""
    common = [k for k in gold if k in pred]
    if len(common) < 2:
        return None
    p = [float(pred[k]) for k in common]
    g = [float(gold[k]) for k in common]
    if len(set(p)) < 2 or len(set(g)) < 2:
        return None
    from scipy.stats import spearmanr

    rho = float(spearmanr(p, g).statistic)
    # round off float noise (a perfect order gives 0.9999999999999999)
    return max(-1.0, min(1.0, round(rho, 12))) if math.isfinite(rho) else None


def recall_at_k(pred: Mapping[str, str], gold: Mapping[str, str]) -> float:
    """RSR Recall@k: |keys(pred) ∩ keys(gold)| / |gold|, gold holding the min(3, #neighbours)
    true nearest neighbours. With an empty gold (no neighbours): 1 if ``pred`` is empty too,
    else 0."""
    if not gold:
        return 0.0 if pred else 1.0
    return len(set(pred) & set(gold)) / len(gold)


def direction_accuracy(pred: Mapping[str, str], gold: Mapping[str, str]) -> float:
    """RSR direction accuracy: the share of gold neighbours whose predicted direction (left /
    right / behind) equals the gold one; a gold neighbour missing from ``pred`` is wrong. With
    an empty gold: 1 if ``pred`` is empty too, else 0."""
    if not gold:
        return 0.0 if pred else 1.0
    return sum(pred.get(k) == d for k, d in gold.items()) / len(gold)


def count_scores(pred: int, gold: int) -> Scores:
    """Eq. 4 for one question: AE = |Cg - Cp|, APE = |Cg - Cp| / max(Cg, 1) (MAPE is its mean
    over questions), Acc@k = 1 if AE <= k else 0, k ∈ {0, 1}."""
    ae = abs(gold - pred)
    return {
        "AE": float(ae),
        "MAPE": ae / max(gold, 1),
        "Acc@0": float(ae <= 0),
        "Acc@1": float(ae <= 1),
    }


def tiou(pred: Mapping[str, int], gold: Mapping[str, int]) -> float:
    """Eq. 5 on inclusive step intervals {"first", "last"}:
    tIoU = max(0, min(p_l, g_l) - max(p_f, g_f) + 1) / (max(p_l, g_l) - min(p_f, g_f) + 1)."""
    pf, pl, gf, gl = pred["first"], pred["last"], gold["first"], gold["last"]
    inter = max(0, min(pl, gl) - max(pf, gf) + 1)
    span = max(pl, gl) - min(pf, gf) + 1
    return inter / span if span > 0 else 0.0


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Edit distance (insertions, deletions, substitutions; cost 1 each) between token lists."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def nes(pred_seq: Sequence[str], gold_seq: Sequence[str]) -> float:
    """Eq. 6: NES = 1 - ED(P, G) / max(|P|, |G|, 1), ED the token-level Levenshtein distance;
    two empty sequences -> 1."""
    return 1.0 - levenshtein(pred_seq, gold_seq) / max(len(pred_seq), len(gold_seq), 1)


def score_answer(answer_type: str, pred: Any, gold: Any) -> Scores:
    """Every metric of ``answer_type`` for one canonical prediction against its gold answer,
    keyed by the metric names of ``qa.METRICS`` (see ``METRICS_OF``)."""
    if answer_type == "set":
        p, r, f1 = set_prf(pred, gold)
        return {"F1": f1, "P": p, "R": r}
    if answer_type == "boxes":
        return {"mIoU": mean_iou(pred, gold)}
    if answer_type == "distances":
        return {
            "AbsRel": abs_rel(pred, gold),
            "rho": spearman(pred, gold),
            "delta<1.25": delta125(pred, gold),
        }
    if answer_type == "neighbours":
        return {"R@3": recall_at_k(pred, gold), "Dir": direction_accuracy(pred, gold)}
    if answer_type == "count":
        return count_scores(int(pred), int(gold))
    if answer_type == "interval":
        return {"tIoU": tiou(pred, gold)}
    if answer_type == "sequence":
        return {"NES": nes(pred, gold)}
    raise ValueError(f"unknown answer type {answer_type!r}")


_WRONG: dict[str, float | None] = {
    "F1": 0.0,
    "P": 0.0,
    "R": 0.0,
    "mIoU": 0.0,
    "tIoU": 0.0,
    "NES": 0.0,
    "R@3": 0.0,
    "Dir": 0.0,
    "Acc@0": 0.0,
    "Acc@1": 0.0,
    "AbsRel": 1.0,
    "rho": None,
    "MAPE": 1.0,
    "delta<1.25": 0.0,
}


def score_wrong(answer_type: str, gold: Any) -> Scores:
    """The score of a missing or malformed answer, never right: every higher-is-better metric
    (delta<1.25 too) 0, AbsRel = 1, ρ undefined (None), AE = max(Cg, 1), MAPE = 1."""
    if answer_type not in METRICS_OF:
        raise ValueError(f"unknown answer type {answer_type!r}")
    out = {m: _WRONG.get(m) for m in METRICS_OF[answer_type]}
    if answer_type == "count":
        out["AE"] = float(max(int(gold), 1))
    return out
