"""The Reference suite's PickHighlight task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sapien

from dataforge.manip.executor import Subgoal
from dataforge.pipelines.robomme import assets
from dataforge.pipelines.robomme.objects import actor_position
from dataforge.pipelines.robomme.tasks.reference.base import (
    ORDINALS,
    PUTDOWN_Z,
    Entry,
    TaskList,
    _Upstream,
    is_dropped,
    is_picked,
    is_pressed,
    pick_waypoints,
    put_down,
    subgoal,
    upstream_scene,
)

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor


class PickHighlight(_Upstream):
    """PickHighlight.py: 3/4/6 cubes (colours drawn with replacement from red/blue/green),
    1/2/3 highlighted; white discs (r 5 cm, 1 cm under the cube) follow the highlighted cubes
    over steps 10-100 whatever the robot does. Task list: "press the button", then per
    highlighted cube "pick up the [first ...] highlighted cube, which is <colour>", with "place
    the cube onto the table" between two picks. Success: every highlighted cube picked up at
    least once (counted on its own, as upstream's ``evaluate``); failure: a cube that is not
    highlighted picked up after the press, or the list done without the picks.

    Departures: the discs are pre-built and parked below the floor outside the window
    (upstream creates them at step 10 and hides them by visibility)."""

    TASK = "PickHighlight"
    HIGHLIGHT = (10, 100)  # PickHighlight.step: highlight_obj(start_step=10, end_step=100)
    DISK_RADIUS, DISK_HALF = 0.05, 0.001  # statechange.py::highlight_obj

    def sample_layout(self) -> dict[str, Any]:
        return upstream_scene(self)

    def build(self) -> None:
        colors = self.params["cube_colors"]
        names = [n for n in self.layout["actors"] if n.startswith("cube_")]
        self.actors = {
            n: assets.cube(self.scene, n, assets.RGB[c]) for n, c in zip(names, colors, strict=True)
        }
        self.disks = [
            self._disk(f"highlight_disk_{k}") for k in range(len(self.params["highlighted"]))
        ]
        self.build_button()

    def _disk(self, name: str) -> Actor:
        """A white disc lying flat (kinematic, visual only)."""
        b = self.scene.create_actor_builder()
        b.add_cylinder_visual(
            radius=self.DISK_RADIUS,
            half_length=self.DISK_HALF,
            material=sapien.render.RenderMaterial(base_color=[1.0, 1.0, 1.0, 1.0]),
            pose=sapien.Pose(q=[np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0]),
        )
        b.initial_pose = sapien.Pose()
        return b.build_kinematic(name=name)

    def place(self) -> None:
        self.place_actors()
        self.parked = [self.park_pose() for _ in self.disks]
        for disk, pose in zip(self.disks, self.parked, strict=True):
            disk.set_pose(pose)

    def reset_events(self) -> None:
        goals = [self.actors[n] for n in self.params["highlighted"]]
        others = [a for n, a in self.actors.items() if n not in self.params["highlighted"]]
        self.goal_cubes = goals
        self.picks = [0] * len(goals)
        self._was_picked = [False] * len(goals)
        self.highlit = False
        self.current: Actor | None = None
        entries = [Entry("press the button", lambda: is_pressed(self.button))]
        wrong = lambda: any(is_picked(self, c) for c in others)  # noqa: E731
        for k, cube in enumerate(goals):
            done = cast(Callable[[], bool], lambda c=cube: self._pick(c))
            entries.append(Entry(self._pick_name(k), done, wrong))
            if k < len(goals) - 1:
                entries.append(Entry("place the cube onto the table", self._dropped, wrong))
        self.tasks = TaskList(self, entries)

    def _pick(self, cube: Actor) -> bool:
        """``is_any_obj_pickup_flag_currentpickup``."""
        if is_picked(self, cube):
            self.current = cube
            return True
        return False

    def _dropped(self) -> bool:
        """``is_obj_dropped_currentpickup``."""
        if self.current is None or not is_dropped(self, self.current):
            return False
        self.current = None
        return True

    def _pick_name(self, k: int, segment: bool = False) -> str:
        at = " at <>" if segment else ""
        color = self.params["highlighted_colors"][k]
        if len(self.goal_cubes) == 1:
            return f"pick up the highlighted cube{at}, which is {color}"
        return f"pick up the {ORDINALS[k]} highlighted cube{at}, which is {color}"

    def tick(self) -> None:
        self._highlight(self.t - 1)
        self.tasks.update()
        for k, cube in enumerate(self.goal_cubes):  # rising edges of is_obj_pickup
            now = is_picked(self, cube)
            self.picks[k] += now and not self._was_picked[k]
            self._was_picked[k] = now

    def _highlight(self, e: int) -> None:
        """``highlight_obj`` at upstream step ``e``: the discs under the cubes in the window."""
        lo, hi = self.HIGHLIGHT
        if lo <= e <= hi:
            for disk, cube in zip(self.disks, self.goal_cubes, strict=True):
                p = actor_position(cube)
                disk.set_pose(sapien.Pose(p=[p[0], p[1], p[2] - 0.01]))
            self.highlit = True
        elif self.highlit:
            for disk, pose in zip(self.disks, self.parked, strict=True):
                disk.set_pose(pose)
            self.highlit = False

    def check(self) -> tuple[bool, str | None]:
        counted = all(n >= 1 for n in self.picks)
        reason = self.tasks.failed
        if reason is None and self.tasks.completed and not counted:
            reason = "every task done but not every highlighted cube picked up"
        return counted, reason

    def goals(self) -> list[str]:
        return [
            "first press the button, then pick up all cubes that have been highlighteted with "
            "white areas on the table",
            "first press the button, then pick up all highlighted cubes, finally press the "
            "button again to stop",
        ]

    def plan(self) -> Iterator[Subgoal]:
        yield self.press_subgoal(
            "press the button", "press the button at <>", "press button", video=False
        )
        for k, cube in enumerate(self.goal_cubes):
            yield subgoal(
                self,
                self._pick_name(k),
                self._pick_name(k, segment=True),
                cube,
                pick_waypoints(self, cube, self.other_cubes(cube)),
                choice="pick up the highlighted cube",
            )
            if k < len(self.goal_cubes) - 1:
                name = "place the cube onto the table"
                waypoints = put_down(self, PUTDOWN_Z)
                yield subgoal(self, name, name, None, waypoints, choice=name)
