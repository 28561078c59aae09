"""The Reference suite's VideoPlaceButton task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataforge.pipelines.robomme import assets
from dataforge.pipelines.robomme.tasks.reference.base import Entry, _PlaceSequence, color_of

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor


class VideoPlaceButton(_PlaceSequence):
    """VideoPlaceButton.py: 1/3/3 cubes, 3/4/4 targets (r 4 cm), goal site r 6 cm. Video: the
    cube onto ``target_0``, "press the button", onto ``target_1``, then the goal site; the
    answer is ``target_0`` ("before") or ``target_1`` ("after"), p = 0.5 (the layout's draw).

    Departures: see the package docstring."""

    TASK = "VideoPlaceButton"
    GOAL_RADIUS = 3 * assets.CUBE_HALF
    LAST_PICK_CHOICE = ""  # VideoPlaceButton.py gives this entry no choice_label

    def video_steps(self) -> list[str | Actor]:
        return [self.actors["target_0"], "press", self.actors["target_1"]]

    def video_entries(self) -> list[Entry]:
        t0, t1 = self.actors["target_0"], self.actors["target_1"]
        return [*self.visit_entries(t0), self.press_entry(), *self.visit_entries(t1)]

    def goals(self) -> list[str]:
        color = color_of(self.params["goal_cube"])
        rel = self.params["answer_relation"]
        return [
            f"watch the video carefully, then place the {color} cube on the target right {rel} "
            "the button was pressed",
            f"watch the video carefully and place the {color} cube on the target where it was "
            f"placed immediately {rel} the button was pressed",
        ]
