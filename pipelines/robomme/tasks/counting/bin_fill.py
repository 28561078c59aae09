"""The Counting suite's BinFill task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, OPEN, Waypoint
from dataforge.pipelines.robomme import assets, skills
from dataforge.pipelines.robomme.objects import actor_yaw
from dataforge.pipelines.robomme.placement import rot2
from dataforge.pipelines.robomme.tasks.counting.base import (
    NUMBER_WORDS,
    ORDINALS,
    _Anchor,
    _Counting,
    _cube_colour,
    _first,
    _position,
    _Solve,
    _Task,
    _xy,
)

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor


AWAY = (10.0, 10.0, 10.0)  # statechange.lift_and_drop_objects_back_to_original: away spot
BINNED = (10.0, 10.0, 0.0)  # is_obj_dropped_onto_delete: where a cube in the bin goes
BIN_DROP_Z = 0.2  # solve_putonto_whenhold_binspecial: release height over the board
BIN_LEAVE_DX = -0.1  # ... then move 10 cm towards the robot
AWAY_M = 0.02  # check_block_away_gripper: cube this far from the TCP, fingers open ...
FINGERS_OPEN = 0.02  # ... each finger joint above this
GOAL_COLOURS = ("red", "blue", "green")  # task_goal.py's order of the colour phrases


class BinFill(_Counting):
    """Put the asked-for number of cubes of each colour into the bin (a board with a hole),
    then press the button (``BinFill.py``: 1/2/3 colours, 4-6/8-10/10-12 cubes, 1-3/2-4/3-5
    to put in).

    Streaming (p = 0.5): cube k >= 1 of each colour's list is away (at (10, 10, 10)) until
    step 50 k, when it drops back on its spot. Task list: per colour in a random order, per
    cube "pick up the {k} {c} cube" (any cube picked up) and "put it into the bin" (any cube
    released within 5 cm of the board centre, fingers open and 2 cm away: it is counted and
    teleported to (10, 10, 0)), then "press the button". Failure: the button pressed before
    the last entry; at the press, counts differing from the goal or another cube put in.

    Departs from upstream: if a streaming cube the next pick needs is still away, the oracle
    waits at the end of "put it into the bin" (never on the fixture's episodes).
    """

    TASK = "BinFill"

    def build(self) -> None:
        self.board = assets.board_with_hole(self.scene, "board_with_hole")
        self.cubes = {
            n: assets.cube(self.scene, n, assets.RGB[_cube_colour(n)]) for n in self.layout["cubes"]
        }
        self.build_button()

    def place(self) -> None:
        self.place_from_layout(
            {"board_with_hole": self.board, **self.cubes}, {"button": self.button}
        )
        self.place_rim()

    def reset_events(self) -> None:
        self.in_bin = dict.fromkeys(GOAL_COLOURS, 0)
        super().reset_events()

    # -- streaming (BinFill.step, before the physics) --------------------------------------
    def _before_control_step(self) -> None:
        for name, back in self.layout["stream_return_step"].items():
            if self.t < back:
                self._teleport(name, AWAY)
            elif self.t == back:
                self._teleport(name, self.layout["actors"][name][:3])

    def _teleport(self, name: str, p: Sequence[float]) -> None:
        cube = self.cubes[name]
        cube.set_pose(sapien.Pose(p=[float(x) for x in p], q=self.layout["actors"][name][3:7]))
        cube.set_linear_velocity(np.zeros(3))
        cube.set_angular_velocity(np.zeros(3))

    # -- checks ----------------------------------------------------------------------------
    def _away_from_gripper(self, cube: Actor) -> bool:
        """``check_block_away_gripper``: both fingers open and the cube 2 cm from the TCP."""
        fingers = self.agent.robot.get_qpos()[0, -2:].cpu().numpy()
        far = np.linalg.norm(_position(cube) - self.tcp_position()) > AWAY_M
        return bool(np.all(fingers > FINGERS_OPEN) and far)

    def put_any_in(self) -> bool:
        """``is_any_obj_dropped_onto_delete``: the first cube dropped into the bin is counted
        and taken away."""
        for name, cube in self.cubes.items():
            if self.dropped_onto(cube, self.board) and self._away_from_gripper(cube):
                cube.set_pose(sapien.Pose(p=list(BINNED)))
                self.in_bin[_cube_colour(name)] += 1
                return True
        return False

    def obstacles(self, actor: Actor) -> list[tuple[np.ndarray, float]]:
        """The button, the other cubes, and the board's rim (points 1 cm apart along it): a
        finger set down on the 5 cm board closes above the cube."""
        return super().obstacles(actor) + self._rim

    def place_rim(self) -> None:
        """The board rim's obstacle points (it never moves)."""
        mid = (assets.BOARD_SIDE + assets.BOARD_HOLE) / 4  # the rim's centre line
        width = (assets.BOARD_SIDE - assets.BOARD_HOLE) / 4
        rot = rot2(actor_yaw(self.board))
        s = np.linspace(-mid, mid, 10)
        line = [
            *((x, y) for x in (-mid, mid) for y in s),
            *((x, y) for y in (-mid, mid) for x in s),
        ]
        centre = _xy(self.board)
        self._rim = [(centre + rot @ np.array(p), width + 0.005) for p in line]

    def counts_wrong(self) -> str | None:
        want = {c: self.layout["targets"][c] for c in GOAL_COLOURS}
        return None if self.in_bin == want else f"{self.in_bin} in the bin, asked for {want}"

    def task_list(self) -> list[_Task]:
        cubes = list(self.cubes.values())
        tasks: list[_Task] = []
        order = self.layout["subgoal_colour_order"]
        for colour in order:
            names = self.layout["cubes_by_colour"][colour]
            for k in range(self.layout["targets"][colour]):
                cube = self.cubes[names[k]]
                put_index = len(tasks) + 1
                tasks.append(
                    _Task(
                        f"pick up the {ORDINALS[k]} {colour} cube",
                        f"pick up the {ORDINALS[k]} {colour} cube at <>",
                        choice="pick up the cube",
                        done=lambda: any(self.picked(c) for c in cubes),
                        solve=cast(_Solve, lambda cube=cube: self.pick(cube)),
                        fail=self.press_failure,
                        anchor=cast(_Anchor, lambda cube=cube: _position(cube)),
                        pick=names[k],
                        actor=names[k],
                    )
                )
                tasks.append(
                    _Task(
                        "put it into the bin",
                        "put it into the bin at <>",
                        choice="put it into the bin",
                        done=self.put_any_in,
                        solve=cast(_Solve, lambda i=put_index: self.drop_into_bin(i)),
                        fail=self.press_failure,
                        anchor=lambda: _position(self.board),
                        actor="board_with_hole",
                    )
                )
        tasks.append(
            self.press_task(
                "",
                lambda: _first(
                    self.counts_wrong(), "another cube was put in" if self.put_any_in() else None
                ),
            )
        )
        return tasks

    def goals(self) -> list[str]:
        phrases = []
        for c in GOAL_COLOURS:
            n = self.layout["targets"][c]
            if n > 0:
                phrases.append(f"{NUMBER_WORDS[n]} {c} cube{'' if n == 1 else 's'}")
        items = phrases[-1] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} and {phrases[-1]}"
        return self._two(
            f"put {items} into the bin, then press the button to stop",
            f"put {items} into the bin and press the button to stop",
        )

    def drop_into_bin(self, task_index: int) -> list[Waypoint]:
        """``solve_putonto_whenhold_binspecial``: 20 cm over the board, open, 10 cm back; then
        (ours) wait until the cube of the next pick is on the table. Keyframes: "close" over
        the board, "open" there again before the gripper opens; the move back records none."""
        q, xy = self.tcp_quat(), _xy(self.board)
        leave = self.at(xy + np.array([BIN_LEAVE_DX, 0.0]), BIN_DROP_Z, q)
        waypoints = [
            Waypoint(self.at(xy, BIN_DROP_Z, q), CLOSED),
            Waypoint(None, OPEN, hold=skills.TOGGLE_STEPS, key=OPEN),
            Waypoint(leave, OPEN, keyed=False),
        ]
        name = self.tasks[task_index + 1].pick
        back = self.layout["stream_return_step"].get(name, 0)
        if self.t <= back + 1:  # it drops back at step ``back``: one step to settle
            waypoints.append(Waypoint(None, OPEN, hold=back + 3, until=lambda: self.t > back + 1))
        return waypoints
