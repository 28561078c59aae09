"""The spamem-tasks ``evidence`` invariant and the ``stats`` share of records with complete
evidence, on records built by hand (the conformance test breaks a real set)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from dataforge.pipelines.spamem import tasks_checks
from dataforge.pipelines.spamem.tasks_checks import evidence_problem

BOXES = {(1, 0): {7, 8}, (2, 3): {8}}  # (step, view) -> the instance ids of its box table


def boxes(step: int, view: int) -> set[int]:
    return BOXES.get((step, view), set())


def rec(evidence: list[dict[str, Any]], level: int = 3) -> dict[str, Any]:
    frames = [(1, 0), (2, 3)]
    return {
        "id": "L3/SOR-M/short/rgb/e/t002",
        "task": "SOR-M",
        "horizon": "short",
        "level": level,
        "modality": "rgb",
        "answer": ["Apple"],
        "frames": [{"step": s, "view": v, "modality": "rgb"} for s, v in frames],
        "evidence": evidence,
    }


def test_evidence_fits_its_frames_and_box_tables() -> None:
    ok = rec([{"item": "Apple", "frames": [[1, 0], [2, 3]], "instances": [7, 8]}])
    assert evidence_problem(ok, boxes) is None
    # an item without a frame (skipped with --frames evidence, kept with the stream) is fine
    assert evidence_problem(rec([{"item": "Apple", "frames": [], "instances": []}]), boxes) is None


def test_evidence_naming_a_frame_the_record_does_not_give_fails() -> None:
    bad = rec([{"item": "Apple", "frames": [[1, 5]], "instances": [7]}])
    assert evidence_problem(bad, boxes) == "evidence 'Apple': frame [1, 5] is not among its frames"
    assert evidence_problem(bad, None) is not None  # the frames half needs no box table


def test_evidence_instance_outside_its_frames_box_tables_fails() -> None:
    # 7 is in frame (1, 0)'s table, not in (2, 3)'s, the entry's only frame
    bad = rec([{"item": "Apple", "frames": [[2, 3]], "instances": [7]}])
    assert evidence_problem(bad, boxes) == (
        "evidence 'Apple': instances [7] in no box table of its frames"
    )
    assert evidence_problem(bad, None) is None


class FakeEp:
    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records
        self.metadata: dict[str, Any] = {}


class FakeDs:
    def __init__(self, eps: list[FakeEp]) -> None:
        self.eps = eps
        self.manifest = type("M", (), {"episodes": {str(i): None for i in range(len(eps))}})

    def episodes(self) -> Iterator[FakeEp]:
        return iter(self.eps)


def test_stats_give_the_share_of_records_with_complete_evidence(monkeypatch: Any) -> None:
    # SOR-M short L3: 2 of 3 records show every item; at L2 an item of the history counts
    full = {"item": "Apple", "frames": [[1, 0]], "instances": [7]}
    none = {"item": "Apple", "frames": [], "instances": []}
    told = {"item": "Apple", "frames": [], "instances": [], "history": True}
    ep = FakeEp([rec([full]), rec([full]), rec([full, none]), rec([told], level=2)])
    monkeypatch.setattr(tasks_checks, "episode_records", lambda e: e.records)
    counts = tasks_checks.stats(FakeDs([ep])).counts
    share = counts["complete evidence share"]
    assert share == {"SOR-M short L2": 1.0, "SOR-M short L3": round(2 / 3, 3)}
    assert np.isclose(share["SOR-M short L3"], 0.667)
    assert counts["questions per task"] == {"SOR-M": 4}
