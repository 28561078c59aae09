"""The Imitation suite's PatternLock task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from dataforge.manip.executor import Waypoint
from dataforge.pipelines.robomme.tasks.imitation.base import _StickTask


class PatternLock(_StickTask):
    """Upstream ``PatternLock.py``: an N x N grid (3/4/5 by difficulty) of gray ring targets
    0.1 m apart centred at (-0.1, 0), rows along x; a path of 2-4/3-5/4-8 targets (8-connected
    DFS, replayed by ``layouts/imitation.py``). Video: onto the first target (NO RECORD), then
    "move <dir>" per step; NO-RECORD strong resets; execution "move <dir>" per step, each
    done when the tip comes within 1 cm of the next target below 0.1 m. Failure: reaching any
    other target than the expected and the previous one.

    The strong resets hold joint actions, as upstream's: the reset configuration, then the
    joints recorded on the first target (``swing_qpos``)."""

    TASK = "PatternLock"

    def build(self) -> None:
        n = self.layout["params"]["grid"]
        self.build_targets([f"target_{k}" for k in range(n * n)])
        self.build_pools()

    def place(self) -> None:
        self.place_targets()

    def move_name(self, step: int) -> str:
        """``move <direction>`` (``subgoal_evaluate_func.py::direction``)."""
        return f"move {self.layout['params']['directions'][step - 1]}"

    def move_waypoints(self, step: int) -> list[Waypoint]:
        """``solve_swingonto``: straight to the next target at 0.07 m."""
        return self.swing_onto(self.path[step])

    def goals(self) -> list[str]:
        """``task_goal.py`` @a3842d1 (two phrasings)."""
        return [
            "Watch the video carefully, then use the stick attached to the robot to retrace "
            "the same pattern",
            "watch the video carefully, then use the stick attached to the robot to retrace "
            "the same pattern shown in the video",
        ]
