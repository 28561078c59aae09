"""The Reference suite's VideoRepick task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.manip.executor import Subgoal
from dataforge.pipelines.robomme import assets, skills
from dataforge.pipelines.robomme.objects import actor_position
from dataforge.pipelines.robomme.tasks.reference.base import (
    ORDINALS,
    PUTDOWN_Z,
    Entry,
    TaskList,
    TwoLaneSwap,
    _Upstream,
    color_of,
    is_dropped,
    is_picked,
    is_pressed,
    no_record,
    pick_waypoints,
    put_down,
    reset_waypoints,
    subgoal,
    upstream_scene,
)

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor


VIDEO_PUTDOWN_Z = 0.03  # VideoRepick's video: solve_putdown_whenhold(release_z=0.03)
NUM_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}  # task_goal.py num2words


class VideoRepick(_Upstream):
    """VideoRepick.py: repeats 1-3; easy/medium 3 cubes ``bin_0..2`` of one colour with 1-2 /
    2-3 swaps; hard 5 red + 5 blue + 5 green cubes, no swaps. Video: "pick up the cube", "drop
    the cube on the table" (back where it was), and with swaps "static" (TCP to (0, 0, 0.2), 20
    static steps) and one "static" per swap: from the step after the list reaches the first
    swap entry, swap k runs 50 steps (two lanes 7 cm apart), pairing the k-th scheduled cube
    (the goal cube first) with its nearest neighbour at that moment. Execution: N x ["pick up
    the correct cube for the <k> time", "put it down"], "press the button to finish". Failure:
    picking another cube, or pressing the button 50-500 steps into the repetitions.

    Departures: see the package docstring."""

    TASK = "VideoRepick"
    VIDEO = True
    SWAP_STEPS, SWAP_LANE = 50, 0.07

    def sample_layout(self) -> dict[str, Any]:
        return upstream_scene(self)

    def build(self) -> None:
        default = self.params.get("cube_color", "")
        self.actors = {
            n: assets.cube(self.scene, n, assets.RGB[color_of(n, default)])
            for n in self.layout["actors"]
        }
        self.build_button()

    def reset_events(self) -> None:
        p = self.params
        self.cubes = list(self.actors.values())
        self.goal_cube = self.actors[p["goal_cube"]]
        others = [c for c in self.cubes if c is not self.goal_cube]
        self.swap_first = [self.actors[n] for n in p["swap_first"]]
        self.swap_partner: list[Actor | None] = [None] * len(self.swap_first)
        self.swap_start: int | None = None
        self.swaps: dict[int, TwoLaneSwap] = {}
        self.timers: dict[int, int] = {}
        goal = self.goal_cube
        entries = [
            Entry("pick up the cube", lambda: is_picked(self, goal)),
            Entry("drop the cube on the table", lambda: is_dropped(self, goal)),
        ]
        if p["swaps"] >= 1:
            entries.append(Entry("static", static=20))
            entries += [Entry("static", static=self.SWAP_STEPS, swap=True)] * p["swaps"]
        self.video_entries = len(entries)
        for k in range(p["repeats"]):
            entries.append(
                Entry(
                    f"pick up the correct cube for the {ORDINALS[k]} time",
                    lambda: is_picked(self, goal),
                    lambda: self._repeat_fail(others, 2),
                )
            )
            entries.append(
                Entry(
                    "put it down",
                    lambda: is_dropped(self, goal),
                    lambda: self._repeat_fail(others, 3),
                )
            )
        entries.append(
            Entry(
                "press the button to finish",
                lambda: is_pressed(self.button),
                lambda: any(is_picked(self, c) for c in self.cubes),
            )
        )
        self.tasks = TaskList(self, entries)

    def _repeat_fail(self, others: list[Actor], timer: int) -> bool:
        """Another cube picked up, or the button pressed 50-500 steps after the first check of
        ``timewindow`` timer ``timer`` (2: the picks, 3: the put-downs)."""
        start = self.timers.setdefault(timer, self.t)
        early = 50 <= self.t - start <= 500 and is_pressed(self.button)
        return any(is_picked(self, c) for c in others) or early

    def tick(self) -> None:
        self._swap(self.t - 1)
        self.tasks.update()

    def _swap(self, e: int) -> None:
        """VideoRepick.step at upstream step ``e``."""
        entry = self.tasks.current
        if self.swap_start is None:
            if entry is None or not entry.swap:
                return
            self.swap_start = e
        for k, first in enumerate(self.swap_first):
            start = self.swap_start + k * self.SWAP_STEPS
            if start <= e < start + self.SWAP_STEPS and self.swap_partner[k] is None:
                self.swap_partner[k] = self._nearest(first)
        for k, first in enumerate(self.swap_first):
            partner = self.swap_partner[k]
            if partner is None:
                continue
            if k not in self.swaps:
                start = self.swap_start + k * self.SWAP_STEPS
                others = [c for c in self.cubes if c is not first and c is not partner]
                self.swaps[k] = TwoLaneSwap(
                    first, partner, start, start + self.SWAP_STEPS, self.SWAP_LANE, others
                )
            self.swaps[k].apply(e)

    def _nearest(self, cube: Actor) -> Actor:
        p = actor_position(cube)[:2]
        others = [c for c in self.cubes if c is not cube]
        return min(others, key=lambda c: float(np.hypot(*(actor_position(c)[:2] - p))))

    def goals(self) -> list[str]:
        n = self.params["repeats"]
        if n > 1:
            word = NUM_WORDS[n]
            return [
                "watch the video carefully, then repeatedly pick up and put down the same block "
                f"that was previously picked up for {word} times, finally put it down and press "
                "the button to stop",
                "watch the video carefully, then pick up the same cube that was previously "
                f"picked up for {word} times, finally press the button to stop",
            ]
        return [
            "watch the video carefully, then pick up the same block that was previously picked "
            "up again, finally put it down and press the button to stop",
            "watch the video carefully, then pick up the same cube that was previously picked "
            "up again, finally press the button to stop",
        ]

    def plan(self) -> Iterator[Subgoal]:
        cube = self.goal_cube
        waypoints = pick_waypoints(self, cube, self.other_cubes(cube))
        yield subgoal(
            self,
            "pick up the cube",
            "pick up the cube at <>",
            cube,
            waypoints,
            choice="pick up the cube",
            video=True,
        )
        name = "drop the cube on the table"
        waypoints = put_down(self, VIDEO_PUTDOWN_Z)
        yield subgoal(self, name, name, None, waypoints, choice="put it down", video=True)
        for i in range(2, self.video_entries):
            # solve_reset + hold 20, then solve_hold_obj(<the last swap's duration>) per swap
            waypoints = reset_waypoints(self) if i == 2 else skills.hold_obj(self.SWAP_STEPS)
            yield subgoal(self, "static", "static", None, waypoints, video=True)
        yield no_record(skills.strong_reset())
        for k in range(self.params["repeats"]):
            name = f"pick up the correct cube for the {ORDINALS[k]} time"
            segment = f"pick up the correct cube at <> for the {ORDINALS[k]} time"
            yield subgoal(
                self,
                name,
                segment,
                cube,
                pick_waypoints(self, cube, self.other_cubes(cube)),
                choice="pick up the cube",
            )
            yield subgoal(
                self,
                "put it down",
                "put it down",
                None,
                put_down(self, PUTDOWN_Z),
                choice="put it down",
            )
        yield self.press_subgoal(
            "press the button to finish",
            "press the button at <> to finish",
            "press the button to finish",
            video=False,
        )
