"""The Permanence suite's ButtonUnmask task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from dataforge.pipelines.robomme.tasks.permanence.base import Entry, _Permanence


class ButtonUnmask(_Permanence):
    """VideoUnmask with a button instead of the video: "press the button", then the picks. The
    covering is timer-driven (step 32) as upstream, not caused by the press; a press seen
    before the containers are back fails the episode (the pick entry then sees every
    container lifted), as upstream. Departs from upstream as the package docstring lists; its
    oracle's press is :func:`skills.press_spring_button` (``solve_button``'s keyframes)."""

    TASK = "ButtonUnmask"
    BUTTONS = ("button",)
    GOAL_HEAD = "first press the button"

    def head_entries(self) -> list[Entry]:
        return [
            Entry(
                "press", "press the button", "press the button at <>", "press the button", "button"
            )
        ]
