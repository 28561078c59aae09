"""RoboMME does not record its "NO RECORD" restaging: those steps leave the stored arrays, the
subgoals after them are renumbered, and the state log keeps every simulated step."""

from __future__ import annotations

import numpy as np

from dataforge.pipelines.robomme.episode import STEP_FIELDS, drop_unrecorded


def test_unrecorded_steps_leave_the_arrays() -> None:
    spans = [(0, 4, True), (4, 7, False), (7, 10, True), (10, 12, True)]
    subgoals = [
        {"simple": f"s{k}", "start": a, "end": b, "record": r} for k, (a, b, r) in enumerate(spans)
    ]
    planner = np.repeat(np.arange(4, dtype=np.int16), [4, 3, 3, 2])
    online = planner.copy()
    online[3] = 1  # the first subgoal's last step already names the (dropped) restaging
    arrays = {name: np.arange(12) * 10 for name in STEP_FIELDS}
    arrays.update(subgoal=planner, subgoal_online=online, env_state=np.zeros(13 * 5))
    arrays["is_completed"] = np.zeros(12, bool)  # not completed: no completion boundary
    out, kept = drop_unrecorded(arrays, subgoals)
    assert [sg["simple"] for sg in kept] == ["s0", "s2", "s3"]
    assert [(sg["start"], sg["end"]) for sg in kept] == [(0, 4), (4, 7), (7, 9)]
    assert list(out["joint_action"]) == [0, 10, 20, 30, 70, 80, 90, 100, 110]
    assert list(out["subgoal"]) == [0, 0, 0, 0, 1, 1, 1, 2, 2]
    assert out["subgoal_online"][3] == 1  # points at the next recorded subgoal
    assert list(np.flatnonzero(out["is_subgoal_boundary"])) == [0, 4, 7]
    assert out["env_state"] is arrays["env_state"]  # every simulated state stays
    same, same_sg = drop_unrecorded(arrays, [dict(sg, record=True) for sg in subgoals])
    assert same is arrays and len(same_sg) == 4
