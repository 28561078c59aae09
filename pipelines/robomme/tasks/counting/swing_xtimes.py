"""The Counting suite's SwingXtimes task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, Waypoint
from dataforge.pipelines.robomme import assets, skills
from dataforge.pipelines.robomme.tasks.counting.base import (
    NUMBER_WORDS,
    ORDINALS,
    _Anchor,
    _Check,
    _Counting,
    _cube_colour,
    _first,
    _position,
    _Solve,
    _Task,
    _xy,
)

if TYPE_CHECKING:
    from mani_skill.envs.scene import ManiSkillScene
    from mani_skill.utils.structs import Actor


SWING_ENTER_M, SWING_ENTER_Z = 0.03, 0.12  # SwingXtimes.step: landing on a target ...
SWING_EXIT_M, SWING_EXIT_Z = 0.04, 0.3  # ... and staying on it (hysteresis)
SWING_Z = 0.1  # solve_swingonto_whenhold(height=0.1): TCP height over a target
PUTDOWN_Z = 0.07  # solve_putdown_whenhold(release_z=0.07)
HIGHLIGHT_STEPS = 20  # a landed-on target shows the red rings for 20 steps after
HIGHLIGHT_RADIUS = 2 * assets.CUBE_HALF * 1.003  # highlight_obj's disk_radius ...
HIGHLIGHT_HALF = 0.005 * 2 * 1.4  # ... disk_half_length
HIGHLIGHT_DZ = -0.01  # ... 1 cm below the highlighted object's origin
HIGHLIGHT_RGB = (1.0, 0.0, 0.0)


def _red_rings(scene: ManiSkillScene, name: str) -> Actor:
    """``highlight_obj(use_target_style=True)``'s overlay: five concentric discs alternating
    pure red and white (radius r ... r/5, each 0.01 mm thicker), axis turned to vertical by a
    90-degree rotation about y, kinematic, no collision."""
    b = scene.create_actor_builder()
    upright = sapien.Pose(q=[np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0])
    for k in range(5):
        rgb = HIGHLIGHT_RGB if k % 2 == 0 else assets.WHITE
        b.add_cylinder_visual(
            radius=HIGHLIGHT_RADIUS * (5 - k) / 5,
            half_length=HIGHLIGHT_HALF + k * 1e-5,
            material=sapien.render.RenderMaterial(base_color=[*rgb, 1.0]),
            pose=upright,
        )
    b.initial_pose = sapien.Pose()
    return b.build_kinematic(name=name)


class SwingXtimes(_Counting):
    """Pick up the goal cube, move it over the right-side then the left-side target N times,
    put it down, press the button (``SwingXtimes.py``: 1/3/3 cubes, N in 1-3/1-2/3; two gray
    targets, right = the one with the smaller y).

    A landing = the cube within 3 cm (horizontally) of a target centre and below 12 cm; it
    stays landed while within 4 cm and below 30 cm. Each landing counts; more than 2 N fails.
    A landed-on target shows red rings from the landing until 20 steps after the cube left.
    Task list: "pick up the {c} cube", N x ["move to the top of the right-side target for the
    {k} time", "... left-side ..."] (the cube within 3 cm and below 12 cm), "put the {c} cube
    on the table" (dropped), "press the button". Failure: another cube picked up, the button
    pressed early, too many landings.

    Departs from upstream: the red rings are one pre-built actor per target, parked below the
    floor when hidden (upstream creates a disk actor at the first landing and hides it at
    (0, 0, -10)); the oracle's pick is ours (see :class:`PickXtimes`).
    """

    TASK = "SwingXtimes"
    SIDES = ("right", "left")

    def build(self) -> None:
        self.cubes = {
            n: assets.cube(self.scene, n, assets.RGB[_cube_colour(n)]) for n in self.layout["cubes"]
        }
        r = 2 * assets.CUBE_HALF
        self.temp = {
            n: assets.ring_target(self.scene, n, r, 0.005, "gray")
            for n in ("temp_target_0", "temp_target_1")
        }
        self.targets = {s: self.temp[self.layout[f"target_{s}"]] for s in self.SIDES}
        self.rings = {s: _red_rings(self.scene, f"highlight_{s}") for s in self.SIDES}
        self.build_button()

    def place(self) -> None:
        self.place_from_layout({**self.cubes, **self.temp}, {"button": self.button})
        self.ring_parking = {s: self.park_pose() for s in self.SIDES}
        for s in self.SIDES:
            self.rings[s].set_pose(self.ring_parking[s])

    def reset_events(self) -> None:
        self.cube = self.cubes[self.layout["goal_cube"]]
        self.swings = 0
        self.on = dict.fromkeys(self.SIDES, False)
        self.highlight_from: dict[str, int | None] = dict.fromkeys(self.SIDES)
        super().reset_events()

    # -- landings and the overlay (SwingXtimes.step, after the step) -----------------------
    def over(self, side: str, dist: float, max_z: float) -> bool:
        """``is_obj_swing_onto``: the cube within ``dist`` of the target, below ``max_z``."""
        p = _position(self.cube)
        near = np.hypot(*(p[:2] - _xy(self.targets[side]))) <= dist
        return bool(near and p[2] < max_z)

    def _before_control_step(self) -> None:
        if self.t == 0:  # upstream's update follows a step: none before the first
            return
        for s in self.SIDES:
            now = (
                self.over(s, SWING_EXIT_M, SWING_EXIT_Z)
                if self.on[s]
                else self.over(s, SWING_ENTER_M, SWING_ENTER_Z)
            )
            if now:
                self.highlight_from[s] = self.t
                if not self.on[s]:
                    self.swings += 1
            self.on[s] = now
        for s in self.SIDES:
            start = self.highlight_from[s]
            if start is not None and start <= self.t <= start + HIGHLIGHT_STEPS:
                p = _position(self.targets[s]) + np.array([0.0, 0.0, HIGHLIGHT_DZ])
                self.rings[s].set_pose(sapien.Pose(p=p.tolist()))
            else:
                self.rings[s].set_pose(self.ring_parking[s])

    def too_many(self) -> str | None:
        n = 2 * self.layout["repeats"]
        return f"{self.swings} landings on the targets, more than {n}" if self.swings > n else None

    def task_list(self) -> list[_Task]:
        cube, colour = self.cube, self.layout["goal_colour"]
        others = [c for c in self.cubes.values() if c is not cube]

        def fail() -> str | None:
            return _first(self.any_picked(others), self.press_failure(), self.too_many())

        tasks = [self.pick_goal_task(cube, "", fail)]
        for k in range(self.layout["repeats"]):
            for s in self.SIDES:
                tasks.append(
                    _Task(
                        f"move to the top of the {s}-side target for the {ORDINALS[k]} time",
                        f"move to the top of the {s}-side target at <> for the {ORDINALS[k]} time",
                        choice="move to the top of the target",
                        done=cast(_Check, lambda s=s: self.over(s, SWING_ENTER_M, SWING_ENTER_Z)),
                        solve=cast(_Solve, lambda s=s: self.swing_to(s)),
                        fail=fail,
                        anchor=cast(_Anchor, lambda s=s: _position(self.targets[s])),
                        actor=self.layout[f"target_{s}"],
                    )
                )
        tasks.append(
            _Task(
                f"put the {colour} cube on the table",
                f"put the {colour} cube on the table",
                choice="put the cube on the table",
                done=lambda: self.dropped(cube),
                solve=self.put_down,
                fail=fail,
            )
        )
        tasks.append(self.press_task("", lambda: _first(self.any_picked(others), self.too_many())))
        return tasks

    def swing_to(self, side: str) -> list[Waypoint]:
        """``solve_swingonto_whenhold(height=0.1)``: over the target at 10 cm, grasp kept."""
        return [Waypoint(self.at(_xy(self.targets[side]), SWING_Z, self.tcp_quat()), CLOSED)]

    def put_down(self) -> list[Waypoint]:
        """``solve_putdown_whenhold(release_z=0.07)`` (``skills.put_down``)."""
        return skills.put_down(self, PUTDOWN_Z)

    def goals(self) -> list[str]:
        c, n = self.layout["goal_colour"], self.layout["repeats"]
        if n > 1:
            w = NUMBER_WORDS[n]
            return self._two(
                f"pick up the {c} cube, move it to the top of the right-side target, then move "
                "it to the top of the left-side target, repeating this back and forth motion "
                f"{w} times, finally press the button to stop",
                f"pick up the {c} cube, move it to the right-side target and then to the "
                f"left-side target, repeating this right-to-left swing motion {w} times, then "
                "put down the cube and press the button to stop",
            )
        return self._two(
            f"pick up the {c} cube, move it to the top of the right-side target, then put it "
            "down on the left-side target, finally press the button to stop",
            f"pick up the {c} cube, move it to the right-side target and then put it down on "
            "the left-side target, then press the button to stop",
        )
