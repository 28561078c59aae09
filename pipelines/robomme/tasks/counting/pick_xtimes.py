"""The Counting suite's PickXtimes task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from typing import Any

from dataforge.pipelines.robomme import assets, skills
from dataforge.pipelines.robomme.placement import PlacementError
from dataforge.pipelines.robomme.tasks.counting.base import (
    NUMBER_WORDS,
    ORDINALS,
    _Counting,
    _cube_colour,
    _first,
    _position,
    _Task,
)


class PickXtimes(_Counting):
    """Pick up the goal cube and place it on the target N times, then press the button
    (``PickXtimes.py``: 1/3/3 cubes of [red, blue, green] shuffled, N in 1-3/1-3/4-5).

    Task list: N x ["pick up the {c} cube for the {k} time" (``is_obj_pickup``), "place the
    {c} cube onto the target" (``is_obj_dropped_onto``)], "press the button to stop". Failure:
    another cube picked up, or the button pressed, before the press entry; any cube picked up
    during it.

    The oracle's pick and place are upstream's (``skills.pick`` in the face nearest the hand,
    ``skills.put_onto``); ours stand in only where a screw motion cannot reach that grasp
    (:meth:`_Counting.pick`). Departs from upstream: a button's grounded pixel is the centroid
    of the whole ``button`` articulation (upstream: its cap link) (all four tasks).
    """

    TASK = "PickXtimes"

    def sample_layout(self) -> dict[str, Any]:
        lay = super().sample_layout()
        if lay["goal_cube"] is None:
            raise PlacementError("PickXtimes: no cube could be placed")
        return lay

    def build(self) -> None:
        self.cubes = {
            n: assets.cube(self.scene, n, assets.RGB[_cube_colour(n)]) for n in self.layout["cubes"]
        }
        self.target = assets.ring_target(self.scene, "target", 2 * assets.CUBE_HALF, 0.005)
        self.build_button()

    def place(self) -> None:
        self.place_from_layout({**self.cubes, "target": self.target}, {"button": self.button})

    def task_list(self) -> list[_Task]:
        cube = self.cubes[self.layout["goal_cube"]]
        others = [c for n, c in self.cubes.items() if n != self.layout["goal_cube"]]
        colour = self.layout["goal_colour"]

        def fail() -> str | None:
            return _first(self.any_picked(others), self.press_failure())

        tasks: list[_Task] = []
        for k in range(self.layout["repeats"]):
            tasks.append(self.pick_goal_task(cube, f" for the {ORDINALS[k]} time", fail))
            tasks.append(
                _Task(
                    f"place the {colour} cube onto the target",
                    f"place the {colour} cube onto the target at <>",
                    choice="place the cube onto the target",
                    done=lambda: self.dropped_onto(cube, self.target),
                    solve=lambda: skills.put_onto(self, _position(self.target)),
                    fail=fail,
                    anchor=lambda: _position(self.target),
                    actor="target",
                )
            )
        tasks.append(
            self.press_task(" to stop", lambda: self.any_picked(list(self.cubes.values())))
        )
        return tasks

    def goals(self) -> list[str]:
        c, n = self.layout["goal_colour"], self.layout["repeats"]
        if n == 1:
            one = f"pick up the {c} cube and place it on the target, then press the button to stop"
            return self._two(one, one)
        head = f"pick up the {c} cube and place it on the target, repeating this"
        tail = f"{NUMBER_WORDS[n]} times, then press the button to stop"
        return self._two(f"{head} action {tail}", f"{head} pick-and-place action {tail}")
