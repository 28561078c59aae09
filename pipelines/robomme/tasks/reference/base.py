"""What the Reference suite's tasks share: their base class, constants and helpers
(the suite: the package docstring; each task: its own module)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.pipelines.robomme import assets, skills
from dataforge.pipelines.robomme.env import RobommeEnv, pixel_of
from dataforge.pipelines.robomme.layouts import upstream_layout
from dataforge.pipelines.robomme.objects import actor_position, actor_yaw, grasp_yaw, top_grasp

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor, Articulation, Link


# utils/subgoal_evaluate_func.py
LIFTED_Z = 0.05  # is_obj_pickup: object centre above this and grasped
DROP_MAX_Z = 0.2  # is_obj_dropped (outside the demonstration wrapper): object this low ...
DROP_TCP_Z = 0.05  # ... not grasped, TCP above this
ONTO_M = 0.05  # is_obj_dropped_onto: horizontal distance to the target
STATIC_QVEL = 0.2  # is_static: every arm joint slower than this (rad/s)
# utils/subgoal_planner_func.py
RESET_TCP = (0.0, 0.0, 0.2)  # solve_reset
PUTDOWN_Z = 0.01  # solve_putdown_whenhold(release_z=0.01), putonto(goal_site, height=0.01)
RESET_STATIC = 20  # solve_reset, then solve_hold_obj(static_steps=20)
PLACE_STATIC = 60  # VideoPlaceButton / VideoPlaceOrder: the second "static", solve_hold_obj(60)
BASE_X = -0.615  # the robot base (env.py)
FINGER_REACH = 0.05  # an open finger's centre from the grasp centre
FINGER_CLEAR = 0.045  # fingers this far from another cube's centre miss it
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")  # subgoal_language.py


# ---------------------------------------------------------------------------------------------
# upstream's checks (utils/subgoal_evaluate_func.py)
# ---------------------------------------------------------------------------------------------
def is_picked(env: RobommeEnv, actor: Actor) -> bool:
    """``is_obj_pickup``: lifted above 5 cm and grasped."""
    return bool(actor_position(actor)[2] > LIFTED_Z and env.is_grasping(actor))


def is_dropped(env: RobommeEnv, actor: Actor) -> bool:
    """``is_obj_dropped`` (the generator runs without the demonstration wrapper): not grasped,
    at most 20 cm high, the TCP above 5 cm."""
    return bool(
        actor_position(actor)[2] <= DROP_MAX_Z
        and not env.is_grasping(actor)
        and env.tcp_position()[2] > DROP_TCP_Z
    )


def is_dropped_onto(env: RobommeEnv, actor: Actor, target: Actor) -> bool:
    """``is_obj_dropped_onto``: dropped within 5 cm (horizontally) of the target's centre."""
    d = actor_position(actor)[:2] - actor_position(target)[:2]
    return bool(np.hypot(*d) <= ONTO_M and is_dropped(env, actor))


def is_static(env: RobommeEnv) -> bool:
    """``is_static``: every arm joint's speed at most 0.2 rad/s."""
    qvel = env.agent.robot.get_qvel()[0, :-2].cpu().numpy()
    return bool(np.max(np.abs(qvel)) <= STATIC_QVEL)


def is_pressed(button: Articulation) -> bool:
    """``is_button_pressed``: the cap pushed down more than 5 mm."""
    return assets.button_depth(button) > assets.BUTTON_PRESSED_M


@dataclass
class Entry:
    """One task-list entry: ``done`` (``func``), ``fail`` (``failure_func``), ``static``
    (``static_check``'s step count instead of ``done``), ``swap`` (``specialflag == "swap"``)."""

    name: str
    done: Callable[[], bool] | None = None
    fail: Callable[[], bool] | None = None
    static: int = 0
    swap: bool = False


@dataclass
class TaskList:
    """``sequential_task_check``: the current entry's failure check, then its success check;
    success moves on to the next entry. ``update`` runs once per control step."""

    env: RobommeEnv
    entries: list[Entry]
    index: int = 0
    examined: int = 0  # the entry the last update checked (RoboMME's online subgoal)
    failed: str | None = None
    _static_from: int | None = None

    @property
    def completed(self) -> bool:
        return self.index >= len(self.entries)

    @property
    def current(self) -> Entry | None:
        return None if self.completed else self.entries[self.index]

    def _static(self, steps: int) -> bool:
        """``static_check``: the robot has been static for ``steps`` steps of this entry."""
        t = self.env.t
        if not is_static(self.env) or self._static_from is None:
            self._static_from = t
            return False
        return t - self._static_from >= steps

    def update(self) -> None:
        entry = self.current
        if entry is None:
            return
        self.examined = self.index
        if entry.fail is not None and entry.fail():
            self.failed = self.failed or f"failed during {entry.name!r}"
            return
        ok = self._static(entry.static) if entry.static else bool(entry.done and entry.done())
        if ok:
            self.index += 1
            self._static_from = None


@dataclass
class TwoLaneSwap:
    """``statechange.py::swap_flat_two_lane``: over steps [start, end] ``a`` and ``b`` trade
    places on two lanes (sideways offset ``lane`` sin(pi s), s the smoothstep of the progress),
    their quaternions blended; the ``others`` are held where they were at the start."""

    a: Actor
    b: Actor
    start: int
    end: int
    lane: float
    others: list[Actor] = field(default_factory=list)
    dynamic: bool = True
    _from: dict[str, Any] | None = None

    def _capture(self) -> dict[str, Any]:
        def pose(actor: Actor) -> tuple[np.ndarray, np.ndarray]:
            return actor_position(actor), actor.pose.q[0].cpu().numpy().astype(np.float64)

        return {"a": pose(self.a), "b": pose(self.b), "others": [pose(o) for o in self.others]}

    def _put(self, actor: Actor, p: Any, q: Any) -> None:
        actor.set_pose(sapien.Pose(p=[float(v) for v in p], q=[float(v) for v in q]))
        if self.dynamic:
            actor.set_linear_velocity(np.zeros(3))
            actor.set_angular_velocity(np.zeros(3))

    def apply(self, e: int) -> None:
        """Set the poses of upstream step ``e`` (its ``elapsed_steps``)."""
        if e < self.start or e > self.end:
            return
        if e == self.start or self._from is None:
            self._from = self._capture()
        (pa, qa), (pb, qb) = self._from["a"], self._from["b"]
        for actor, (p, q) in zip(self.others, self._from["others"], strict=True):
            self._put(actor, p, q)
        if e >= self.end:
            self._put(self.a, [pb[0], pb[1], pa[2]], qb)
            self._put(self.b, [pa[0], pa[1], pb[2]], qa)
            self._from = None
            return
        s = (e - self.start) / max(1, self.end - self.start)
        s = s * s * (3.0 - 2.0 * s)
        d = pb[:2] - pa[:2]
        norm = float(np.hypot(*d))
        n = np.array([-d[1], d[0]]) / norm if norm > 1e-9 else np.zeros(2)
        off = self.lane * np.sin(np.pi * s)
        xa = pa[:2] + d * s + n * off
        xb = pb[:2] - d * s - n * off
        q1, q2 = qa * (1 - s) + qb * s, qb * (1 - s) + qa * s
        self._put(self.a, [*xa, pa[2]], q1 / max(np.linalg.norm(q1), 1e-6))
        self._put(self.b, [*xb, pb[2]], q2 / max(np.linalg.norm(q2), 1e-6))


# ---------------------------------------------------------------------------------------------
# scene and plan helpers
# ---------------------------------------------------------------------------------------------
def upstream_scene(env: RobommeEnv) -> dict[str, Any]:
    """The episode's layout dict (recorded in the metadata): upstream's actor poses (build
    order), the button's root pose and upstream's draws."""
    lay = upstream_layout(
        env.TASK,
        env.episode_seed,
        env.difficulty,
        recovery=env.recovery,
        recovery_mode=env.recovery_mode or "z",
    )
    return {
        "actors": {name: list(pose) for name, pose in lay.actors.items()},
        "button": list(lay.articulations["button"]),
        "params": lay.params,
    }


def set_pose7(actor: Actor, pose: Sequence[float]) -> None:
    actor.set_pose(sapien.Pose(p=[float(v) for v in pose[:3]], q=[float(v) for v in pose[3:7]]))


def place_button(button: Articulation, pose: Sequence[float]) -> None:
    """The button articulation at its root pose, cap up."""
    button.set_root_pose(sapien.Pose(p=list(map(float, pose[:3])), q=list(map(float, pose[3:]))))
    button.set_qpos(np.zeros((1, 1)))
    button.set_qvel(np.zeros((1, 1)))


def color_of(name: str, default: str = "") -> str:
    """The colour in an upstream cube name ``cube_<colour>_<k>``."""
    parts = name.split("_")
    return parts[1] if len(parts) == 3 and parts[0] == "cube" else default


def grounded(env: RobommeEnv, segment: str, actor: Actor | Link | None) -> str:
    """``subgoal_segment`` with ``<>`` filled with the actor's front-camera pixel."""
    if actor is None or "<>" not in segment:
        return segment
    r, c = pixel_of(env, actor_position(actor))
    return segment.replace("<>", f"<{r}, {c}>")


def subgoal(
    env: RobommeEnv,
    name: str,
    segment: str,
    actor: Actor | Link | None,
    waypoints: list[Waypoint],
    *,
    choice: str = "",
    video: bool = False,
    names: tuple[str, ...] | None = None,
) -> Subgoal:
    """A subgoal whose grounded text fills ``<>`` with ``actor``'s pixel; ``segment`` names
    that actor (upstream's task-list ``segment``; ``names`` overrides it, e.g. an
    articulation's name for one of its links)."""
    text = grounded(env, segment, actor)
    if names is None:
        names = (actor.name,) if actor is not None and text != segment else ()
    anchor = (lambda: actor_position(actor)) if actor is not None and "<>" in segment else None
    return Subgoal(name, text, waypoints, video=video, choice=choice, segment=names, anchor=anchor)


def no_record(waypoints: list[Waypoint]) -> Subgoal:
    """Upstream's "NO RECORD" task-list entry: simulated, left out of the stored demo."""
    return Subgoal("NO RECORD", "NO RECORD", waypoints, video=True, record=False)


def hand_yaw(env: RobommeEnv, xy: np.ndarray) -> float:
    """The yaw of the hand (``top_grasp`` convention) for carrying to ``xy``: its current yaw
    turned by the multiple of 90 degrees that points it closest away from the robot base (a
    held cube looks the same; far corners are reached more easily)."""
    now = skills.current_yaw(env)
    radial = float(np.arctan2(xy[1], xy[0] - BASE_X))
    return radial + grasp_yaw(now - radial)


def put_onto(env: RobommeEnv, point: np.ndarray, height: float | None = None) -> list[Waypoint]:
    """``solve_putonto_whenhold`` (``skills.put_onto``), or where a screw motion cannot reach
    it with the hand as it is (upstream falls back to RRT there), :func:`turned_put`."""
    waypoints = skills.put_onto(env, point, height)
    if env.chain_reaches([wp.pose for wp in waypoints if wp.pose is not None]):
        return waypoints
    p = np.asarray(point, dtype=np.float64)
    return turned_put(env, p, p[2] if height is None else height)


def put_down(env: RobommeEnv, release_z: float) -> list[Waypoint]:
    """``solve_putdown_whenhold(release_z)`` (``skills.put_down``: straight down from where
    the hand is), or where a screw motion cannot reach that, :func:`turned_put` there."""
    waypoints = skills.put_down(env, release_z)
    if env.chain_reaches([cast("np.ndarray", waypoints[0].pose)]):  # its first: a pose
        return waypoints
    return turned_put(env, env.agent.tcp.pose.p[0].cpu().numpy(), release_z, putdown=True)


def turned_put(
    env: RobommeEnv, xy: np.ndarray, release_z: float, *, putdown: bool = False
) -> list[Waypoint]:
    """Ours, where upstream's put needs RRT: above ``xy`` at 15 cm, down to ``release_z``,
    open, back up, the hand turned by :func:`hand_yaw` or the nearest yaw a screw motion
    reaches. Keyframes as upstream records them: "close" above, "open" down; "open" back up
    (putonto) or no new one (putdown records nothing there)."""
    down = np.array([xy[0], xy[1], release_z])
    yaw = reachable_yaw(env, down, skills.READY_Z - release_z, hand_yaw(env, xy))
    above = top_grasp(down, yaw, skills.READY_Z - release_z)
    return [
        Waypoint(above, CLOSED),
        Waypoint(top_grasp(down, yaw), CLOSED, noisy=False, key=OPEN),
        Waypoint(None, OPEN, hold=skills.TOGGLE_STEPS),
        Waypoint(above, OPEN, keyed=not putdown),
    ]


def reachable_yaw(env: RobommeEnv, point: np.ndarray, dz: float, yaw: float) -> float:
    """``yaw``, or the first of its quarter turns and 15-30 degree neighbours for which a screw
    motion from the arm's current joints reaches ``top_grasp(point, yaw, dz)`` (``yaw`` when
    none does: the executor then reports the failure)."""
    steps = (0.0, np.pi / 2, -np.pi / 2, np.pi, np.pi / 12, -np.pi / 12, np.pi / 6, -np.pi / 6)
    for d in steps:
        if env.chain_reaches([top_grasp(point, yaw + d, dz)]):
            return yaw + d
    return yaw


def finger_clearance(cube: Actor, yaw: float, others: list[Actor]) -> float:
    """How far the nearest other cube's centre is from where the open fingers come down when
    grasping ``cube`` with hand yaw ``yaw`` (``top_grasp``: fingers along the yawed y axis)."""
    p = actor_position(cube)[:2]
    axis = np.array([-np.sin(yaw), np.cos(yaw)])
    fingers = [p + FINGER_REACH * axis, p - FINGER_REACH * axis]
    dists = [np.hypot(*(actor_position(o)[:2] - f)) for o in others for f in fingers]
    return float(min(dists, default=np.inf))


def pick_waypoints(env: RobommeEnv, cube: Actor, others: list[Actor]) -> list[Waypoint]:
    """``solve_pickup``: ``skills.pick`` (approach, grasp at the centre, close, lift) with the
    hand turned to the cube face nearest its present yaw, as upstream chooses it (or, where a
    screw motion cannot reach that, to the face nearest the resting wrist), and to the other
    grasp axis where the fingers would come down nearer the other cubes than ``FINGER_CLEAR``
    and that axis gives them more room."""
    now = skills.current_yaw(env)
    chosen: list[Waypoint] = []
    for best in (skills.nearest_face_yaw(env, cube), grasp_yaw(actor_yaw(cube))):
        alt = best - np.pi / 2 if best > now else best + np.pi / 2
        room = finger_clearance(cube, best, others)
        if room < FINGER_CLEAR and finger_clearance(cube, alt, others) > room:
            best = alt
        chosen = skills.pick(env, cube, yaw=best)
        if env.chain_reaches([wp.pose for wp in chosen if wp.pose is not None]):
            return chosen
    return chosen


def reset_waypoints(env: RobommeEnv, static: int = RESET_STATIC) -> list[Waypoint]:
    """``solve_reset`` + ``solve_hold_obj(static)``: the TCP to (0, 0, 0.2) with the hand as
    it is, open (6 steps), then ``skills.hold_obj(static)`` (neither records a keyframe)."""
    pose = np.array([*RESET_TCP, *env.tcp_quat()])
    return [
        Waypoint(pose, OPEN, keyed=False),
        Waypoint(None, OPEN, hold=skills.TOGGLE_STEPS),
        *skills.hold_obj(static),
    ]


class _Upstream(RobommeEnv):
    """What the four tasks share: the layout from upstream, the button, the task list."""

    SUITE = "Reference"

    def sample_layout(self) -> dict[str, Any]:
        return upstream_scene(self)

    @property
    def params(self) -> dict[str, Any]:
        return self.layout["params"]

    def build_button(self) -> None:
        self.button = assets.button(self.scene, "button")
        self.cap = self.button.links_map["button_cap"]

    def place_actors(self) -> None:
        """Every built actor named in the layout at its upstream pose; the button too."""
        for name, pose in self.layout["actors"].items():
            set_pose7(self.actors[name], pose)
        place_button(self.button, self.layout["button"])

    def place(self) -> None:
        self.place_actors()

    def other_cubes(self, cube: Actor) -> list[Actor]:
        """Every cube of the scene but ``cube`` (upstream names: ``cube_*``, ``bin_*``)."""
        return [
            a for n, a in self.actors.items() if n.startswith(("cube_", "bin_")) and a is not cube
        ]

    def press_subgoal(self, name: str, segment: str, choice: str, *, video: bool) -> Subgoal:
        waypoints = skills.press_spring_button(self.button)
        return subgoal(
            self,
            name,
            segment,
            self.cap,
            waypoints,
            choice=choice,
            video=video,
            names=(f"{self.button.name}/button_cap",),  # upstream: the cap link
        )

    def check(self) -> tuple[bool, str | None]:
        return self.tasks.completed and self.tasks.failed is None, self.tasks.failed

    def online_entry(self) -> int | None:
        return self.tasks.examined


# ---------------------------------------------------------------------------------------------
class _PlaceSequence(_Upstream):
    """VideoPlaceButton.py / VideoPlaceOrder.py: ``goal_site`` (hidden, parked at z -0.05),
    1/3/3 cubes, the targets, the button. The video visits targets with the goal cube (a press
    in between), drops it on the goal site, "static" (TCP to (0, 0, 0.2), 20 static steps),
    "static" 60 steps during which, in hard, two targets trade places (50 steps from the step
    after the list reaches that entry, lanes 10 cm apart). Execution: "pick up the cube",
    "place the cube onto the correct target"; failure: picking up another cube, or dropping
    the cube onto another target.

    Subclasses give ``video_entries()`` (the visits and the press) and the goals."""

    VIDEO = True
    SWAP_STEPS, SWAP_LANE = 50, 0.1
    LAST_PICK_CHOICE = "pick up the cube"  # of the video's pick before the goal site
    GOAL_RADIUS = 0.06  # the goal site's ring (spawn_random_target radius)

    def build(self) -> None:
        self.actors: dict[str, Actor] = {}
        for name in self.layout["actors"]:
            if name.startswith("cube_"):
                self.actors[name] = assets.cube(self.scene, name, assets.RGB[color_of(name)])
            else:  # goal_site, target_k: purple rings (spawn_random_target)
                radius = self.GOAL_RADIUS if name == "goal_site" else 2 * assets.CUBE_HALF
                self.actors[name] = assets.ring_target(self.scene, name, radius, 0.005)
        self.build_button()

    def reset_events(self) -> None:
        p = self.params
        self.cube = self.actors[p["goal_cube"]]
        self.targets = [a for n, a in self.actors.items() if n.startswith("target_")]
        self.answer = self.actors[p["answer_target"]]
        self.goal_site = self.actors["goal_site"]
        others = [a for n, a in self.actors.items() if n.startswith("cube_") and a is not self.cube]
        wrong = [t for t in self.targets if t is not self.answer]
        swap = p["swap_targets"]
        self.swap: TwoLaneSwap | None = None
        self.swap_pair = [self.actors[n] for n in swap] if swap else []
        cube = self.cube
        entries = self.video_entries()
        entries += [
            Entry("pick up the cube", lambda: is_picked(self, cube)),
            Entry("drop the cube onto table", lambda: is_dropped_onto(self, cube, self.goal_site)),
            Entry("static", static=20),
            Entry("static", static=60, swap=True),
        ]
        self.n_video = len(entries)
        entries += [
            Entry(
                "pick up the cube",
                lambda: is_picked(self, cube),
                lambda: any(is_picked(self, c) for c in others),
            ),
            Entry(
                "place the cube onto the correct target",
                lambda: is_dropped_onto(self, cube, self.answer),
                lambda: any(is_dropped_onto(self, cube, t) for t in wrong),
            ),
        ]
        self.tasks = TaskList(self, entries)

    def visit_entries(self, target: Actor) -> list[Entry]:
        cube = self.cube
        return [
            Entry("pick up the cube", lambda: is_picked(self, cube)),
            Entry("drop the cube onto target", lambda: is_dropped_onto(self, cube, target)),
        ]

    def press_entry(self) -> Entry:
        return Entry("press the button", lambda: is_pressed(self.button))

    def video_entries(self) -> list[Entry]:
        raise NotImplementedError

    def video_steps(self) -> list[str | Actor]:
        """The video's visits and press in order: target actors and "press"."""
        raise NotImplementedError

    def tick(self) -> None:
        self._swap(self.t - 1)
        self.tasks.update()

    def _swap(self, e: int) -> None:
        """The ``step`` of both tasks at upstream step ``e``."""
        if not self.swap_pair:
            return
        entry = self.tasks.current
        if self.swap is None:
            if entry is None or not entry.swap:
                return
            a, b = self.swap_pair
            others = [t for t in self.targets if t is not a and t is not b]
            self.swap = TwoLaneSwap(
                a, b, e, e + self.SWAP_STEPS, self.SWAP_LANE, others, dynamic=False
            )
        self.swap.apply(e)

    def pick_subgoal(self, *, video: bool, choice: str = "pick up the cube") -> Subgoal:
        cube = self.cube
        return subgoal(
            self,
            "pick up the cube",
            "pick up the cube at <>",
            cube,
            pick_waypoints(self, cube, self.other_cubes(cube)),
            choice=choice,
            video=video,
        )

    def plan(self) -> Iterator[Subgoal]:
        for step in self.video_steps():
            if isinstance(step, str):
                yield self.press_subgoal(
                    "press the button", "press the button at <>", "press the button", video=True
                )
                continue
            yield self.pick_subgoal(video=True)
            name, segment = "drop the cube onto target", "drop the cube onto target at <>"
            waypoints = put_onto(self, actor_position(step))
            yield subgoal(self, name, segment, step, waypoints, choice="drop onto", video=True)
        yield self.pick_subgoal(video=True, choice=self.LAST_PICK_CHOICE)
        name = "drop the cube onto table"
        waypoints = put_onto(self, actor_position(self.goal_site), height=PUTDOWN_Z)
        yield subgoal(self, name, name, None, waypoints, choice="drop onto", video=True)
        waypoints = reset_waypoints(self)
        yield subgoal(self, "static", "static", None, waypoints, video=True)
        waypoints = skills.hold_obj(PLACE_STATIC)
        yield subgoal(self, "static", "static", None, waypoints, video=True)
        yield no_record(skills.strong_reset())
        yield self.pick_subgoal(video=False)
        name = "place the cube onto the correct target"
        segment = "place the cube onto the correct target at <>"
        waypoints = put_onto(self, actor_position(self.answer))
        yield subgoal(self, name, segment, self.answer, waypoints, choice="drop onto")
