"""What the Counting suite's tasks share: their base class, constants and helpers
(the suite: the package docstring; each task: its own module)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import sapien

from dataforge.manip.executor import Subgoal, Waypoint
from dataforge.pipelines.robomme import assets, skills
from dataforge.pipelines.robomme.env import FRONT_SIZE, RobommeEnv, pixel_of
from dataforge.pipelines.robomme.objects import DOWN, actor_yaw, grasp_yaw
from dataforge.pipelines.robomme.recovery import MISS_M, xy_signs

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor, Articulation, Link


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
# utils/task_goal.py: num2words
NUMBER_WORDS = dict(enumerate(("one", "two", "three", "four", "five", "six", "seven"), 1))

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


def _pose(values: Sequence[float]) -> sapien.Pose:
    v = [float(x) for x in values]
    return sapien.Pose(p=v[:3], q=v[3:7])


def _xy(actor: Actor | Articulation) -> np.ndarray:
    return actor.pose.p[0].cpu().numpy().astype(np.float64)[:2]


def _position(actor: Actor | Link) -> np.ndarray:
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

    def place_from_layout(
        self, actors: dict[str, Actor], articulations: dict[str, Articulation]
    ) -> None:
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

    def pick_goal_task(self, cube: Actor, suffix: str, fail: Callable[[], str | None]) -> _Task:
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
    def picked(self, actor: Actor) -> bool:
        """``is_obj_pickup``: above 5 cm and grasped."""
        return bool(_position(actor)[2] > LIFTED_Z and self.is_grasping(actor))

    def any_picked(self, actors: list[Actor]) -> str | None:
        """``is_any_obj_pickup`` as a failure reason."""
        return next((f"picked up {a.name}" for a in actors if self.picked(a)), None)

    def dropped(self, actor: Actor) -> bool:
        """``is_obj_dropped`` (outside a video): not grasped, at most 20 cm up, TCP above 5 cm."""
        return bool(
            _position(actor)[2] <= DROP_MAX_Z
            and not self.is_grasping(actor)
            and self.tcp_position()[2] > DROP_TCP_Z
        )

    def dropped_onto(self, actor: Actor, target: Actor) -> bool:
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

    def pick(self, actor: Actor) -> list[Waypoint]:
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

    def obstacles(self, actor: Actor) -> list[tuple[np.ndarray, float]]:
        """(xy, radius) of what the fingers must keep clear of when grasping ``actor``."""
        out = [(_xy(self.button), BUTTON_RADIUS)]
        cubes = getattr(self, "cubes", {})
        return out + [(_xy(c), CUBE_RADIUS) for c in cubes.values() if c is not actor]

    def _miss_mode(self) -> str | None:
        """The recovery's mode ("z": episodes 0-2, "xy": 3-5), as the reset was told."""
        return self.recovery_mode

    def _finger_room(self, actor: Actor, yaw: float) -> float:
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
