"""What ``dataforge view`` adds to a RoboMME episode's Rerun recording (registered as the
pipeline's ``viewer``): the task goal (static), the current subgoal's text (``task/subgoal``,
logged at each row where ``subgoal`` changes; the grounded text RoboMME's models read) and the
keyframes (``task/keyframe`` at each ``is_subgoal_boundary`` row), on the timeline ``frame``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from dataforge.store.reader import StoredEpisode


def subgoal_text(subgoal: object) -> str:
    if isinstance(subgoal, dict):
        return str(subgoal.get("grounded") or subgoal.get("simple") or json.dumps(subgoal))
    return str(subgoal)


def view(ep: StoredEpisode, rec: Any) -> None:
    import rerun as rr

    from dataforge.viz.rerun_view import TIMELINE

    meta = ep.metadata
    goal = meta.get("task_goal")
    text = goal if isinstance(goal, str) else json.dumps(goal, indent=1)
    rec.log("task/goal", rr.TextDocument(f"{meta.get('task')}: {text}"), static=True)
    subgoals = list(meta.get("subgoals") or [])
    current = np.asarray(ep["subgoal"].read())
    boundary = np.asarray(ep["is_subgoal_boundary"].read(), dtype=bool)
    last = None
    for t, s in enumerate(current.tolist()):
        if s != last:
            rec.set_time_sequence(TIMELINE, t)
            words = subgoal_text(subgoals[s]) if 0 <= s < len(subgoals) else "(no subgoal)"
            rec.log("task/subgoal", rr.TextLog(words))
            last = s
        if boundary[t]:
            rec.set_time_sequence(TIMELINE, t)
            rec.log("task/keyframe", rr.TextLog("subgoal boundary"))
