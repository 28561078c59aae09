"""SpaMEM question sampling against no-look answers (issue 37, plan step 4), on conftest's memory
scene (1 removes the mug from the table, 2 moves the apple table -> counter, 3 counter ->
shelf-b, 4 spawns a pen on the counter): SED/CSR ask where something changed, with controls."""

from __future__ import annotations

import numpy as np
from spamemhelpers import SPAWNABLE

from dataforge.pipelines.spamem.questions import Builder, Settings
from dataforge.pipelines.spamem.sequence_view import SequenceView


def build(seq: SequenceView, control_rate: float) -> tuple[list[dict], Builder]:
    settings = Settings(
        (2,), ("short",), ("rgb",), (0.0, "standing"), "sequences", control_rate=control_rate
    )
    b = Builder(seq, settings, np.random.default_rng(0), SPAWNABLE)
    return list(b.records()), b


def test_sed_asks_where_something_changed_and_counts_the_rest(memory_scene: SequenceView) -> None:
    # The receptacles each step changed, and which of them gained / lost an object:
    #   t=1 table lost the mug;  t=2 counter gained, table lost the apple;
    #   t=3 shelf-b gained, counter lost the apple;  t=4 counter gained the pen.
    # SED-Add with nothing added: t1 table, t2 table, t3 counter (3); SED-Rem with nothing
    # removed: t2 counter, t3 shelf-b, t4 counter (3).
    recs, b = build(memory_scene, control_rate=0.0)
    sed = {(r["task"], r["step"], r["context"]["receptacle"]["id"]): r["answer"] for r in recs
           if r["task"].startswith("SED")}  # fmt: skip
    assert sed == {
        ("SED-Rem", 1, "table"): ["Mug"],
        ("SED-Add", 2, "counter"): ["Apple"],
        ("SED-Rem", 2, "table"): ["Apple"],
        ("SED-Add", 3, "shelf-b"): ["Apple"],
        ("SED-Rem", 3, "counter"): ["Apple"],
        ("SED-Add", 4, "counter"): ["Pen"],
    }
    why = "short: nothing changed there (controls kept at 1 in 4)"
    assert b.skipped[f"SED-Add {why}"] == 3 and b.skipped[f"SED-Rem {why}"] == 3
    # every control asked: the 6 empty ones come back, each with the empty answer
    recs, b = build(memory_scene, control_rate=1.0)
    empty = [r for r in recs if r["task"].startswith("SED") and r["answer"] == []]
    assert len(empty) == 6 and not b.skipped[f"SED-Add {why}"]
