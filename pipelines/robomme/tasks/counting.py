"""Counting suite (temporal memory): PickXtimes, BinFill, SwingXtimes, StopCube, as the public
RoboMME benchmark defines them (``RoboMME/robomme_benchmark`` @a3842d1,
``src/robomme/robomme_env/<Task>.py``; facts in ``docs/robomme_upstream.md`` sections 1-4).

Each task takes its scene from :func:`~dataforge.pipelines.robomme.layouts.upstream_layout`
(the actors upstream builds for the episode's seed and difficulty, with their poses after
``gym.make`` + ``reset``), and its rules from upstream's task list: an ordered list of entries
(a name, a grounded ``subgoal_segment`` text, a completion test and a failure test) that
upstream's ``utils/subgoal_evaluate_func.py::sequential_task_check`` walks one entry at a time.
:class:`_Checker` is that walk; the oracle yields one subgoal per entry, named as the entry,
with the waypoints of upstream's ``solve_*`` primitive (``utils/subgoal_planner_func.py``).

Upstream runs some scene changes before the physics of a step (``step`` before
``super().step``) and some after its observation; both happen here in
``_before_control_step`` (before the physics of the next step), so every saved state shows
what upstream's observation of that step shows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.pipelines.robomme import assets, skills
from dataforge.pipelines.robomme.env import FRONT_SIZE, RobommeEnv, pixel_of
from dataforge.pipelines.robomme.objects import DOWN, actor_yaw, grasp_yaw
from dataforge.pipelines.robomme.placement import PlacementError, rot2
from dataforge.pipelines.robomme.recovery import MISS_M, xy_signs
from dataforge.pipelines.robomme.skills import READY_Z

# utils/subgoal_language.py::get_subgoal_with_index (index 0 -> "first")
ORDINALS = (
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
)
# utils/task_goal.py: num2words and num2words_2
NUMBER_WORDS = dict(enumerate(("one", "two", "three", "four", "five", "six", "seven"), 1))
NUMBER_ORDINALS = {k + 1: w for k, w in enumerate(ORDINALS)}

LIFTED_Z = 0.05  # is_obj_pickup: object centre above this and grasped
DROP_MAX_Z = 0.2  # is_obj_dropped: object centre at most this high, released ...
DROP_TCP_Z = 0.05  # ... with the TCP above this
ONTO_M = 0.05  # is_obj_dropped_onto: horizontal distance to the target centre
PRESSED_M = assets.BUTTON_PRESSED_M  # is_button_pressed: cap depth
FINGER_REACH = 0.05  # ours: an open finger's distance from the grasp centre; below ROOM_M
ROOM_M = 0.01  # of room to an obstacle, the oracle turns its grasp by 90 degrees if it helps
CUBE_RADIUS = assets.CUBE_HALF * np.sqrt(2)  # ... obstacles' footprint radii
BUTTON_RADIUS = assets.BUTTON_BASE_HALF[0] * np.sqrt(2)


CAP_SEGMENT = "button/button_cap"  # upstream's ``segment`` of a press: the cap link

# what a _Task's callables return (named for the casts of lambdas binding a loop variable)
_Check = Callable[[], bool]
_Solve = Callable[[], list[Waypoint]]
_Anchor = Callable[[], np.ndarray]


# -- the task list and its sequential check -----------------------------------------------------
@dataclass
class _Task:
    """One entry of upstream's ``task_list``: ``name`` (the simple subgoal), ``segment`` (the
    ``subgoal_segment`` text, ``<>`` where the pixel of ``anchor()`` goes), ``done`` (its
    ``func``), ``fail`` (its ``failure_func``: a reason, or None), ``solve`` (the oracle's
    waypoints, computed when the subgoal starts) and ``actor`` (the name of the actor or
    articulation of its ``segment`` field, whose pixel centroid pass 2 puts at ``<>``)."""

    name: str
    segment: str
    done: Callable[[], bool]
    solve: Callable[[], list[Waypoint]]
    fail: Callable[[], str | None] = field(default=lambda: None)
    anchor: Callable[[], np.ndarray] | None = None
    pick: str = ""  # a pick entry (``solve_pickup``): the name of the cube the oracle takes
    actor: str = ""
    choice: str = ""  # its ``choice_label``


class _Checker:
    """``sequential_task_check``: the current entry's failure test, then its completion test;
    a completed entry moves the check to the next one (at most one per step)."""

    def __init__(self, tasks: list[_Task]) -> None:
        self.tasks = tasks
        self.index = 0
        self.examined = 0  # the entry the last update checked (RoboMME's online subgoal)

    @property
    def complete(self) -> bool:
        return self.index >= len(self.tasks)

    def update(self) -> tuple[bool, str | None]:
        """(all entries complete, failure reason or None) after this step."""
        if self.complete:
            return True, None
        task = self.tasks[self.index]
        self.examined = self.index
        reason = task.fail()
        if reason is not None:
            return False, f"{reason} (during '{task.name}')"
        if task.done():
            self.index += 1
        return self.complete, None


def _first(*reasons: str | None) -> str | None:
    return next((r for r in reasons if r is not None), None)


def _pose(values: Any) -> sapien.Pose:
    v = [float(x) for x in values]
    return sapien.Pose(p=v[:3], q=v[3:7])


def _xy(actor: Any) -> np.ndarray:
    return actor.pose.p[0].cpu().numpy().astype(np.float64)[:2]


def _position(actor: Any) -> np.ndarray:
    return actor.pose.p[0].cpu().numpy().astype(np.float64)


class _Counting(RobommeEnv):
    """What the four tasks share: the upstream layout, the checker, the event tests of
    ``subgoal_evaluate_func.py`` and the oracle's waypoints."""

    SUITE = "Counting"

    # -- layout and scene ------------------------------------------------------------------
    def sample_layout(self) -> dict[str, Any]:
        """Upstream's layout for this episode's seed and difficulty."""
        from dataforge.pipelines.robomme.layouts import upstream_layout

        up = upstream_layout(
            self.TASK,
            self.episode_seed,
            self.difficulty,
            recovery=self.recovery,
            recovery_mode=self.recovery_mode or "z",
        )
        return {
            "actors": {k: [float(x) for x in v] for k, v in up.actors.items()},
            "articulations": {k: [float(x) for x in v] for k, v in up.articulations.items()},
            **up.params,
        }

    def place_from_layout(self, actors: dict[str, Any], articulations: dict[str, Any]) -> None:
        """Every actor and articulation root at the layout's pose (articulations at rest)."""
        for name, actor in actors.items():
            actor.set_pose(_pose(self.layout["actors"][name]))
        for name, art in articulations.items():
            art.set_root_pose(_pose(self.layout["articulations"][name]))
            art.set_qpos(np.zeros((1, art.max_dof), dtype=np.float32))
            art.set_qvel(np.zeros((1, art.max_dof), dtype=np.float32))

    def build_button(self) -> None:
        self.button = assets.button(self.scene, "button")
        self.cap = next(link for link in self.button.links if link.name.endswith("button_cap"))

    # -- checker -----------------------------------------------------------------------------
    def reset_events(self) -> None:
        self.tasks = self.task_list()
        self.checker = _Checker(self.tasks)
        self._missed_here = False  # the pick being planned is the one the recovery misses

    def task_list(self) -> list[_Task]:
        raise NotImplementedError

    def pick_goal_task(self, cube: Any, suffix: str, fail: Callable[[], str | None]) -> _Task:
        """The entry "pick up the <colour> cube<suffix>" of the goal cube ``cube``."""
        colour, name = self.layout["goal_colour"], self.layout["goal_cube"]
        return _Task(
            f"pick up the {colour} cube{suffix}",
            f"pick up the {colour} cube at <>{suffix}",
            choice="pick up the cube",
            done=lambda: self.picked(cube),
            solve=lambda: self.pick(cube),
            fail=fail,
            anchor=lambda: _position(cube),
            pick=name,
            actor=name,
        )

    def press_task(self, suffix: str, fail: Callable[[], str | None]) -> _Task:
        """The entry "press the button<suffix>" (``is_button_pressed``, ``solve_button``)."""
        return _Task(
            f"press the button{suffix}",
            f"press the button at <>{suffix}",
            choice=f"press the button{suffix}",
            done=self.pressed,
            solve=self.press,
            fail=fail,
            anchor=self.cap_point,
            actor=CAP_SEGMENT,
        )

    def task_names(self) -> list[str]:
        """The names of upstream's task-list entries, in order (the simple subgoals)."""
        return [t.name for t in self.tasks]

    def check(self) -> tuple[bool, str | None]:
        if self.failure_reason is not None:
            return False, None
        return self.checker.update()

    def online_entry(self) -> int | None:
        return self.checker.examined

    # -- upstream's event tests (utils/subgoal_evaluate_func.py) -----------------------------
    def picked(self, actor: Any) -> bool:
        """``is_obj_pickup``: above 5 cm and grasped."""
        return bool(_position(actor)[2] > LIFTED_Z and self.is_grasping(actor))

    def any_picked(self, actors: list[Any]) -> str | None:
        """``is_any_obj_pickup`` as a failure reason."""
        return next((f"picked up {a.name}" for a in actors if self.picked(a)), None)

    def dropped(self, actor: Any) -> bool:
        """``is_obj_dropped`` (outside a video): not grasped, at most 20 cm up, TCP above 5 cm."""
        return bool(
            _position(actor)[2] <= DROP_MAX_Z
            and not self.is_grasping(actor)
            and self.tcp_position()[2] > DROP_TCP_Z
        )

    def dropped_onto(self, actor: Any, target: Any) -> bool:
        """``is_obj_dropped_onto``: dropped within 5 cm (horizontally) of the target centre."""
        near = np.hypot(*(_xy(actor) - _xy(target))) <= ONTO_M
        return bool(near and self.dropped(actor))

    def pressed(self) -> bool:
        """``is_button_pressed``: the cap pushed in more than 5 mm."""
        return assets.button_depth(self.button) > PRESSED_M

    def press_failure(self) -> str | None:
        return "pressed the button too early" if self.pressed() else None

    # -- texts -----------------------------------------------------------------------------
    def grounded(self, task: _Task) -> str:
        """The ``subgoal_segment`` with ``<>`` as ``<row, col>`` of the anchor's projected
        pixel (pass 2 replaces it by the centroid of ``task.actor``'s pixels, as upstream);
        the simple name when the anchor is outside the image (upstream: not visible)."""
        if task.anchor is None or "<>" not in task.segment:
            return task.segment
        row, col = pixel_of(self, task.anchor())
        if not (0 <= row < FRONT_SIZE and 0 <= col < FRONT_SIZE):
            return task.name
        return task.segment.replace("<>", f"<{row}, {col}>")

    @staticmethod
    def _two(first: str, second: str) -> list[str]:
        """``get_language_goal``'s list: both phrasings, one when they are equal."""
        return [first] if first == second else [first, second]

    # -- oracle ------------------------------------------------------------------------------
    def plan(self) -> Iterator[Subgoal]:
        picks = 0
        for task in self.tasks:
            self._missed_here = bool(task.pick) and picks == self._missed_pick()
            picks += bool(task.pick)
            segment = (task.actor,) if task.actor else ()
            anchor = task.anchor if "<>" in task.segment else None
            yield Subgoal(
                task.name,
                self.grounded(task),
                task.solve(),
                choice=task.choice,
                segment=segment,
                anchor=anchor,
            )

    def _missed_pick(self) -> int | None:
        """Which pick entry RoboMME's recovery misses first (None: no recovery)."""
        drawn = self.layout.get("recovery")
        if not self.recovery or not drawn:
            return None
        return int(drawn["choice"]) % sum(1 for t in self.tasks if t.pick)

    def at(self, xy: np.ndarray, z: float, q: np.ndarray | None = None) -> np.ndarray:
        """A TCP pose at ``xy`` and height ``z`` (orientation ``q``, default: pointing down)."""
        return np.concatenate([[xy[0], xy[1], z], DOWN if q is None else q])

    def pick(self, actor: Any) -> list[Waypoint]:
        """``solve_pickup`` (``skills.pick``) in upstream's grasp frame, marked for RoboMME's
        missed-grasp recovery. Where a screw motion cannot reach that frame (upstream falls
        back to RRT there): of the cube's two face-aligned grasps, the one whose open fingers
        keep farther from the other objects, then the same two with the wrist turned half a
        round."""
        yaw = grasp_yaw(actor_yaw(actor))
        turned = yaw - np.pi / 2 if yaw > 0 else yaw + np.pi / 2
        room = self._finger_room(actor, yaw)
        if room < ROOM_M and self._finger_room(actor, turned) > room:
            yaw, turned = turned, yaw
        first: list[Waypoint] = []
        for y in (skills.nearest_face_yaw(self, actor), yaw, turned, yaw + np.pi, turned + np.pi):
            waypoints = skills.pick(self, actor, yaw=y, kind="cube")
            first = first or waypoints
            if self.chain_reaches([wp.pose for wp in waypoints if wp.pose is not None]):
                return waypoints
        return first

    def obstacles(self, actor: Any) -> list[tuple[np.ndarray, float]]:
        """(xy, radius) of what the fingers must keep clear of when grasping ``actor``."""
        out = [(_xy(self.button), BUTTON_RADIUS)]
        cubes = getattr(self, "cubes", {})
        return out + [(_xy(c), CUBE_RADIUS) for c in cubes.values() if c is not actor]

    def _miss_mode(self) -> str | None:
        """The recovery's mode ("z": episodes 0-2, "xy": 3-5), as the reset was told."""
        return self.recovery_mode

    def _finger_room(self, actor: Any, yaw: float) -> float:
        """The smallest gap between an open finger (grasp yaw ``yaw``) and an obstacle, at the
        grasp and, for the pick the recovery misses, at a sideways miss (whose fingers must
        also clear the cube itself)."""
        centre, axis = _xy(actor), np.array([-np.sin(yaw), np.cos(yaw)])  # the closing line
        cases = [(centre, self.obstacles(actor))]
        if self._missed_here and self._miss_mode() == "xy":
            signs = np.asarray(xy_signs(self.episode_seed), dtype=np.float64)
            around = [*self.obstacles(actor), (centre, CUBE_RADIUS)]
            cases.append((centre + MISS_M["cube"] * signs, around))
        return min(
            (
                float(np.hypot(*(c + side * FINGER_REACH * axis - xy))) - r
                for c, obstacles in cases
                for side in (1, -1)
                for xy, r in obstacles
            ),
            default=np.inf,
        )

    def press(self) -> list[Waypoint]:
        """``solve_button``."""
        return skills.press_spring_button(self.button)

    def cap_point(self) -> np.ndarray:
        return _position(self.cap)


def _cube_colour(name: str) -> str:
    return name.split("_")[1]


# -- PickXtimes ----------------------------------------------------------------------------------


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


# -- BinFill -------------------------------------------------------------------------------------
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

    def _teleport(self, name: str, p: Any) -> None:
        cube = self.cubes[name]
        cube.set_pose(sapien.Pose(p=[float(x) for x in p], q=self.layout["actors"][name][3:7]))
        cube.set_linear_velocity(np.zeros(3))
        cube.set_angular_velocity(np.zeros(3))

    # -- checks ----------------------------------------------------------------------------
    def _away_from_gripper(self, cube: Any) -> bool:
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

    def obstacles(self, actor: Any) -> list[tuple[np.ndarray, float]]:
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


# -- SwingXtimes ---------------------------------------------------------------------------------
SWING_ENTER_M, SWING_ENTER_Z = 0.03, 0.12  # SwingXtimes.step: landing on a target ...
SWING_EXIT_M, SWING_EXIT_Z = 0.04, 0.3  # ... and staying on it (hysteresis)
SWING_Z = 0.1  # solve_swingonto_whenhold(height=0.1): TCP height over a target
PUTDOWN_Z = 0.07  # solve_putdown_whenhold(release_z=0.07)
HIGHLIGHT_STEPS = 20  # a landed-on target shows the red rings for 20 steps after
HIGHLIGHT_RADIUS = 2 * assets.CUBE_HALF * 1.003  # highlight_obj's disk_radius ...
HIGHLIGHT_HALF = 0.005 * 2 * 1.4  # ... disk_half_length
HIGHLIGHT_DZ = -0.01  # ... 1 cm below the highlighted object's origin
HIGHLIGHT_RGB = (1.0, 0.0, 0.0)


def _red_rings(scene: Any, name: str) -> Any:
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


# -- StopCube ------------------------------------------------------------------------------------
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
