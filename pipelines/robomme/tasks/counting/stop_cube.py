"""The Counting suite's StopCube task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from typing import cast

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, OPEN, Waypoint
from dataforge.pipelines.robomme import assets, skills
from dataforge.pipelines.robomme.skills import READY_Z
from dataforge.pipelines.robomme.tasks.counting.base import (
    CAP_SEGMENT,
    ORDINALS,
    _Check,
    _Counting,
    _position,
    _Solve,
    _Task,
    _xy,
)

# utils/task_goal.py: num2words_2
NUMBER_ORDINALS = {k + 1: w for k, w in enumerate(ORDINALS)}

PASSES = 5  # StopCube.step: the cube runs the line five times, back and forth
STOP_M = 3 * assets.CUBE_HALF  # is_obj_stopped_onto: stopped within 6 cm of the target
HOVER_M, HOVER_Z = 0.03, 0.2  # button_hover: TCP within 3 cm of the button, below 20 cm
STATIC_EVERY = 100  # "remain static" checkpoints every 100 steps ...
PRESS_LEAD = 30  # ... the last one 30 steps (upstream's ``interval``) before the visit


class StopCube(_Counting):
    """Press the button to stop a cube sliding back and forth on a line just as it passes
    over the target for the k-th time (``StopCube.py``; difficulty ignored).

    The kinematic cube (random colour, no collision, centre 1 cm up) runs five passes along a
    0.6 m line centred on the target, rotated U(-30, 30) degrees; each pass takes T in
    {60, 80, 120} steps with smoothstep easing, so it is over the target at k T - T / 2. A
    press (cap 5 mm in) freezes it. Task list: "move to the top of the button to prepare"
    (TCP within 3 cm, below 20 cm), "remain static" until steps 100, 200, ... and
    k T - T / 2 - 30, "press the button to stop the cube on the target" (stopped within 6 cm).
    Success needs the stop step in [(k - 1) T, k T]; failure: a press with the cube off the
    target, or step k T passed without success.

    The oracle presses at once after the last "remain static", as upstream's.
    """

    TASK = "StopCube"

    def build(self) -> None:
        self.target = assets.ring_target(self.scene, "target", 1.8 * assets.CUBE_HALF, 0.01)
        rgb = tuple(self.layout["cube_color"])
        self.cube = assets.cube(self.scene, "target_cube", rgb, body="kinematic", collision=False)
        self.build_button()

    def place(self) -> None:
        self.place_from_layout(
            {"target": self.target, "target_cube": self.cube}, {"button": self.button}
        )

    def reset_events(self) -> None:
        self.stop = False
        self.stop_step: int | None = None
        super().reset_events()

    # -- the cube's motion (StopCube.step) ---------------------------------------------------
    def cube_xy(self, step: int) -> np.ndarray | None:
        """Where the cube is moved after ``step`` steps (None: after the last pass)."""
        period = self.layout["pass_steps"]
        if step > PASSES * period:
            return None
        start, end = np.asarray(self.layout["line_start"]), np.asarray(self.layout["line_end"])
        seg = min(step // period, PASSES - 1)
        a = (step - seg * period) / period
        a = a * a * (3.0 - 2.0 * a)
        if seg % 2:
            start, end = end, start
        return start + (end - start) * a

    def _before_control_step(self) -> None:
        # upstream moves the cube after step t - 1's observation, then reads the button
        # before step t's physics
        if self.t > 0 and not self.stop:
            xy = self.cube_xy(self.t)
            if xy is not None:
                z = self.layout["actors"]["target_cube"][2]
                self.cube.set_pose(sapien.Pose(p=[xy[0], xy[1], z]))
        if self.pressed():
            self.stop = True

    # -- checks (StopCube.evaluate) -----------------------------------------------------------
    def stopped_onto(self, stop: bool) -> bool:
        """``is_obj_stopped_onto``: stopped within 6 cm of the target (notes the first step)."""
        near = np.hypot(*(_xy(self.cube) - _xy(self.target))) <= STOP_M
        if near and stop:
            if self.stop_step is None:
                self.stop_step = self.t
            return True
        return False

    def checkpoints(self) -> list[float]:
        """Ends of the "remain static" entries: every 100 steps, then 30 steps before the
        visit (``steps_press - interval``)."""
        final = self.layout["steps_press"] - self.layout["interval"]
        points: list[float] = list(range(STATIC_EVERY, int(final), STATIC_EVERY))
        if not points or points[-1] != final:
            points.append(final)
        return points

    def check(self) -> tuple[bool, str | None]:
        if self.failure_reason is not None:
            return False, None
        complete, reason = self.checker.update()
        lo, hi = self.layout["stop_step_range"]
        if complete and not (lo <= (self.stop_step or -1) <= hi):
            reason = reason or f"the cube stopped at step {self.stop_step}, not in [{lo}, {hi}]"
        if self.pressed() and not self.stopped_onto(True):
            reason = reason or "the button was pressed with the cube off the target"
        if self.t > hi and not complete:
            reason = reason or f"step {hi} passed without stopping the cube on the target"
        return complete and reason is None, reason

    def task_list(self) -> list[_Task]:
        tasks = [
            _Task(
                "move to the top of the button to prepare",
                "move to the top of the button at <> to prepare",
                choice="move to the top of the button to prepare",
                done=self.hovering,
                solve=self.hover,
                anchor=self.cap_point,
                actor=CAP_SEGMENT,
            )
        ]
        for point in self.checkpoints():
            tasks.append(
                _Task(
                    "remain static",
                    "remain static",
                    choice="remain static",
                    done=cast(_Check, lambda point=point: self.t >= point),
                    solve=cast(_Solve, lambda point=point: self.wait_until(point)),
                )
            )
        tasks.append(
            _Task(
                "press the button to stop the cube on the target",
                "press the button to stop the cube on the target at <>",
                choice="press button to stop the cube",
                done=lambda: self.stopped_onto(self.stop),
                solve=self.press_on_visit,
                anchor=lambda: _position(self.target),
                actor="target",
            )
        )
        return tasks

    def hovering(self) -> bool:
        """``button_hover``."""
        tcp = self.tcp_position()
        near = np.hypot(*(tcp[:2] - _xy(self.button))) <= HOVER_M
        return bool(near and tcp[2] < HOVER_Z)

    def hover(self) -> list[Waypoint]:
        """``solve_button_ready``: 15 cm over the button pointing down, then close (its one
        keyframe, recorded before the move: "close" there, in upstream's orientation)."""
        ready = self.at(_xy(self.button), READY_Z)
        return [
            Waypoint(ready, OPEN, key=CLOSED, key_pose=skills.button_key(ready)),
            Waypoint(None, CLOSED, hold=skills.TOGGLE_STEPS),
        ]

    def wait_until(self, step: float) -> list[Waypoint]:
        """``solve_hold_obj_absTimestep``: hold (gripper closed) until ``step``."""
        bound = int(step) + skills.TOGGLE_STEPS
        return [Waypoint(None, CLOSED, hold=bound, until=lambda: self.t >= step)]

    def press_on_visit(self) -> list[Waypoint]:
        """``solve_button(without_hold=True)``: close, down to the button's root, back up.
        Keyframes: "close" over the button (recorded before the gripper closes), down, up."""
        root = _position(self.button)
        down, up = self.at(root[:2], root[2]), self.at(root[:2], READY_Z)
        return [
            Waypoint(None, CLOSED, hold=skills.TOGGLE_STEPS, key=CLOSED),
            Waypoint(down, CLOSED, noisy=False, key_pose=skills.button_key(down)),
            Waypoint(up, CLOSED, key_pose=skills.button_key(up)),
        ]

    def goals(self) -> list[str]:
        w = NUMBER_ORDINALS[self.layout["visit"]]
        return self._two(
            f"press the button to stop the cube just as it reaches the target for the {w} time",
            f"press the button to stop the cube exactly at the target on its {w} visit",
        )
