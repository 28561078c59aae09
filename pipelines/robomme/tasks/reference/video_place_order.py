"""The Reference suite's VideoPlaceOrder task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataforge.pipelines.robomme import assets
from dataforge.pipelines.robomme.tasks.reference.base import Entry, _PlaceSequence, color_of

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor


NUM_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth"}  # task_goal.py num2words_2


class VideoPlaceOrder(_PlaceSequence):
    """VideoPlaceOrder.py: 1/3/3 cubes, 4 targets, goal site r 10 cm (always at (-0.1, 0)).
    Video: the cube onto n = 2-4 distinct targets in the drawn order, the button pressed once,
    after placement k + 1 (k in 0..n-1); the answer is the m-th visited target.

    Departures: see the package docstring."""

    TASK = "VideoPlaceOrder"
    GOAL_RADIUS = 5 * assets.CUBE_HALF

    def video_steps(self) -> list[str | Actor]:
        visits: list[str | Actor] = [self.actors[n] for n in self.params["visit_order"]]
        k = self.params["press_after_placement"]
        return [*visits[:k], "press", *visits[k:]]

    def video_entries(self) -> list[Entry]:
        entries: list[Entry] = []
        for step in self.video_steps():
            entries += [self.press_entry()] if isinstance(step, str) else self.visit_entries(step)
        return entries

    def goals(self) -> list[str]:
        color = color_of(self.params["goal_cube"])
        num = NUM_ORDINALS[self.params["answer_index"]]
        return [
            f"watch the video carefully, then place the {color} cube on the {num} target it was "
            "previously placed on",
            f"watch the video carefully and place the {color} cube on the {num} target where it "
            "was placed",
        ]
