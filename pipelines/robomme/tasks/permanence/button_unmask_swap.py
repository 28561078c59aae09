"""The Permanence suite's ButtonUnmaskSwap task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from dataforge.pipelines.robomme.tasks.permanence.base import Entry, _Permanence


class ButtonUnmaskSwap(_Permanence):
    """VideoUnmaskSwap with two buttons instead of the video (points jittered, not rotated):
    "press the first button" (the oracle presses ``button_right``), "press the second button"
    (``button_left``), either order counting; covering and swaps are timer-driven. Departs
    from upstream as the package docstring lists (notably the oracle's wait for the last swap
    before its first pick)."""

    TASK = "ButtonUnmaskSwap"
    BUTTONS = ("button_left", "button_right")
    SWAPS = True
    GOAL_HEAD = "first press both buttons on the table"

    def head_entries(self) -> list[Entry]:
        return [
            Entry(
                "press",
                f"press the {nth} button",
                f"press the {nth} button at <>",
                f"press the {nth} button",
                name,
            )
            for nth, name in (("first", "button_right"), ("second", "button_left"))
        ]
