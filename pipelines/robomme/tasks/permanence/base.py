"""What the Permanence suite's tasks share: their base class, constants and helpers
(the suite: the package docstring; each task: its own module)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.pipelines.robomme import assets, skills
from dataforge.pipelines.robomme.env import RobommeEnv, pixel_of
from dataforge.pipelines.robomme.layouts import upstream_layout
from dataforge.pipelines.robomme.objects import actor_position, actor_yaw, top_grasp

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor


# -- the scene script (statechange.py; <Task>.step) ----------------------------------------
AWAY = (10.0, 10.0, 10.0)  # lift_and_drop_*: the teleport target while an object is away
COVER_START, COVER_END = 0, 64  # lift_and_drop_objects_back_to_original(0, 32 * 2)
DROP_STEP = COVER_START + max(1, (COVER_END - COVER_START) // 2)  # back on its pose at 32
SWAP_START, SWAP_STEPS = 64, 50  # _refresh_swap_schedule: (64 + 50 i, 64 + 50 (i + 1))
LANE_OFFSET = 0.07  # swap_flat_two_lane(lane_offset=0.07, smooth=True)
# -- checks (subgoal_evaluate_func.py) -----------------------------------------------------
BIN_PICKED_Z = 0.15  # is_bin_pickup: the container's centre above 0.15 m
PUTDOWN_BIN_Z, PUTDOWN_TCP_Z = 0.07, 0.05  # is_bin_putdown
STATIC_QVEL = 0.2  # is_static: every arm joint slower than 0.2 rad/s
VIDEO_STATIC_STEPS = 64  # VideoUnmask: static_check(static_steps=64)
# -- oracle (subgoal_planner_func.py; ManiSkill's motion planner) ---------------------------
PICK_Z = 0.2  # solve_pickup_bin: reach and lift height
GRASP_ABOVE = 0.01  # solve_pickup_bin: grasp 1 cm above the container's origin
RELEASE_Z = 0.07  # solve_putdown_whenhold
CAP_LINK = "button_cap"
# -- texts (utils/task_goal.py @a3842d1, the task lists of <Task>.py) ----------------------
PICK_NAME = "pick up the container that hides the {} cube"
PICK_SEGMENT = "pick up the container at <> that hides the {} cube"
PUT_DOWN = "put down the container"
GOAL_PICK = "pick up the container hiding the {} cube"
GOAL_PICK_2 = "finally pick up another container hiding the {} cube"


def pose_of(pose7: Sequence[float]) -> sapien.Pose:
    """A layout pose [x, y, z, qw, qx, qy, qz] as a sapien pose."""
    return sapien.Pose(p=[float(v) for v in pose7[:3]], q=[float(v) for v in pose7[3:7]])


def teleport(
    actor: Actor, position: Sequence[float] | np.ndarray, quat: Sequence[float] | np.ndarray
) -> None:
    """Put a dynamic actor at a pose, at rest (upstream ``_teleport``)."""
    actor.set_pose(sapien.Pose(p=[float(v) for v in position], q=[float(v) for v in quat]))
    actor.set_linear_velocity(np.zeros(3))
    actor.set_angular_velocity(np.zeros(3))


def actor_quat(actor: Actor) -> np.ndarray:
    return actor.pose.q[0].cpu().numpy().astype(np.float64)


def smoothstep(alpha: float) -> float:
    alpha = min(max(alpha, 0.0), 1.0)
    return alpha * alpha * (3.0 - 2.0 * alpha)


def closing_yaw(box_yaw: float, closing: np.ndarray) -> float:
    """The yaw of a top-down grasp of a square box turned by ``box_yaw`` whose fingers close
    along the box side nearest ``closing`` (the TCP's current closing direction), sign
    included: ManiSkill's ``compute_grasp_info_by_obb(target_closing=...)`` as
    ``solve_pickup_bin`` calls it. A yaw ``y`` closes along (sin y, -cos y)."""
    candidates = [box_yaw + k * np.pi / 2 for k in range(4)]
    best = max(candidates, key=lambda y: np.sin(y) * closing[0] - np.cos(y) * closing[1])
    return float((best + np.pi) % (2 * np.pi) - np.pi)


def pick_container(env: RobommeEnv, actor: Actor) -> list[Waypoint]:
    """``solve_pickup_bin``: open; above the container at z 0.2; open; down to 1 cm above its
    origin (the knob); close; up to z 0.2 above where the container is then. Every pose is
    aimed when the executor gets there (a callable pose); the grasp keyframe carries
    the "bin" mark of :func:`skills.pick` for RoboMME's missed-grasp recovery. Keyframes:
    "open" above, "close" at the grasp and the lift."""

    def aim(z: float | None) -> np.ndarray:
        p = actor_position(actor)
        closing = env.agent.tcp.pose.to_transformation_matrix()[0, :3, 1].cpu().numpy()
        yaw = closing_yaw(actor_yaw(actor), closing.astype(np.float64))
        return top_grasp(np.array([p[0], p[1], p[2] + GRASP_ABOVE if z is None else z]), yaw)

    return [
        Waypoint(None, OPEN, hold=skills.TOGGLE_STEPS),
        Waypoint(lambda: aim(PICK_Z), OPEN, hold=skills.TOGGLE_STEPS),
        Waypoint(lambda: aim(None), OPEN, noisy=False, grasp="bin", key=CLOSED),
        Waypoint(None, CLOSED, hold=skills.TOGGLE_STEPS),
        Waypoint(lambda: aim(PICK_Z), CLOSED),
    ]


def put_down(env: RobommeEnv) -> list[Waypoint]:
    """``solve_putdown_whenhold(release_z=0.07)`` (``skills.put_down``)."""
    return skills.put_down(env, RELEASE_Z)


@dataclass(frozen=True)
class Entry:
    """One entry of upstream's task list: ``kind`` ("static", "press", "pick", "put_down"),
    its ``name`` (the simple subgoal), ``segment`` (the grounded template, ``<>`` for the
    segment actor's pixel), ``choice`` (its ``choice_label``), ``target`` (the bin or button
    it acts on) and ``steps`` (a static entry's length)."""

    kind: str
    name: str
    segment: str
    choice: str
    target: str = ""
    steps: int = 0


class _Permanence(RobommeEnv):
    """Shared machinery. Subclasses set ``BUTTONS`` (upstream's button articulations in build
    order), ``SWAPS`` and ``GOAL_HEAD`` (the language goal's first clause)."""

    SUITE = "Permanence"
    BUTTONS: ClassVar[tuple[str, ...]] = ()
    SWAPS: ClassVar[bool] = False
    GOAL_HEAD: ClassVar[str] = "watch the video carefully"

    # -- layout ----------------------------------------------------------------------------
    def sample_layout(self) -> dict[str, Any]:
        """Upstream's layout of this seed and difficulty."""
        up = upstream_layout(
            self.TASK,
            self.episode_seed,
            self.difficulty,
            recovery=self.recovery,
            recovery_mode=self.recovery_mode or "z",
        )
        params = dict(up.params)
        picks = int(params["pick_times"])
        # holders[i] hides colour_names[i]: selected_bins (Swap tasks) or bin_0..2
        holders = list(params["selected_bins"] if self.SWAPS else params["bins"][:3])
        return {
            **params,
            "actors": {name: [float(v) for v in pose] for name, pose in up.actors.items()},
            "articulations": {
                name: [float(v) for v in pose] for name, pose in up.articulations.items()
            },
            "holders": holders,  # holders[i] hides the cube of colour_names[i]
            "goals": list(params["colour_names"][:picks]),
            "goal_bins": holders[:picks],
        }

    # -- scene -----------------------------------------------------------------------------
    def build(self) -> None:
        lay = self.layout
        self.buttons = {name: assets.button(self.scene, name) for name in self.BUTTONS}
        self.bins: dict[str, Actor] = {}
        self.cubes: dict[str, Actor] = {}
        for name in lay["actors"]:  # upstream's build order: bins, then cubes
            if name.startswith("bin_"):
                self.bins[name] = assets.container(self.scene, name)
            else:
                colour = name.removeprefix("target_cube_")
                self.cubes[colour] = assets.cube(
                    self.scene, name, assets.RGB[colour], half=assets.HIDDEN_CUBE_HALF
                )

    def place(self) -> None:
        lay = self.layout
        actors = {**self.bins, **{f"target_cube_{c}": a for c, a in self.cubes.items()}}
        for name, pose in lay["actors"].items():
            actor = actors[name]
            actor.set_pose(pose_of(pose))
            actor.set_linear_velocity(np.zeros(3))
            actor.set_angular_velocity(np.zeros(3))
        for name, art in self.buttons.items():
            art.set_root_pose(pose_of(lay["articulations"][name]))
            art.set_qpos(np.zeros((1, 1)))
            art.set_qvel(np.zeros((1, 1)))

    def pairs(self) -> list[tuple[Actor, Actor]]:
        """(cube, container hiding it) per colour."""
        lay = self.layout
        return [
            (self.cubes[c], self.bins[b])
            for c, b in zip(lay["colour_names"], lay["holders"], strict=False)
        ]

    # -- task list -------------------------------------------------------------------------
    def swap_end(self) -> int:
        """The step at which the last swap ends (upstream ``swap_schedule[-1][3]``)."""
        return SWAP_START + SWAP_STEPS * int(self.layout.get("swap_times", 0))

    def script_end(self) -> int:
        """The first step after which the scene script changes nothing any more."""
        return self.swap_end() if self.SWAPS else DROP_STEP

    def head_entries(self) -> list[Entry]:
        """The entries before the picks: the video's "static" phase (Video tasks)."""
        steps = self.swap_end() if self.SWAPS else VIDEO_STATIC_STEPS
        return [Entry("static", "static", "static", "static", steps=steps)]

    def entries(self) -> list[Entry]:
        """Upstream's task list: the head, then pick goal 0, [put it down, pick goal 1]."""
        lay = self.layout
        out = self.head_entries()
        for k, (colour, name) in enumerate(zip(lay["goals"], lay["goal_bins"], strict=True)):
            if k:
                out.append(Entry("put_down", PUT_DOWN, PUT_DOWN, PUT_DOWN, lay["goal_bins"][0]))
            out.append(
                Entry(
                    "pick",
                    PICK_NAME.format(colour),
                    PICK_SEGMENT.format(colour),
                    "pick up the container",
                    name,
                )
            )
        return out

    # -- events and checks -----------------------------------------------------------------
    def reset_events(self) -> None:
        self.task_list = self.entries()
        self.stage = 0  # sequential_task_check's index into the task list
        self.examined = 0  # the entry its last step checked (RoboMME's online subgoal)
        self.static_from = 0  # static_check's first timestep (set by the reset's evaluate)
        self.unpressed = list(self.BUTTONS)  # is_any_button_pressed_removelist's list
        self.partners: list[str | None] = [None] * int(self.layout.get("swap_times", 0))
        self.swap_cache: dict[int, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        self.cube_cache: dict[str, tuple[np.ndarray, float]] = {}

    def bin_picked(self, name: str) -> bool:
        return float(actor_position(self.bins[name])[2]) > BIN_PICKED_Z

    def robot_static(self) -> bool:
        qvel = self.agent.robot.get_qvel()[0, :-2].cpu().numpy()
        return bool(np.max(np.abs(qvel)) <= STATIC_QVEL)

    def static_done(self, steps: int) -> bool:
        """``static_check``: ``steps`` steps since the robot last moved."""
        if not self.robot_static():
            self.static_from = self.t
            return False
        return self.t - self.static_from >= steps

    def segment_name(self, e: Entry) -> str:
        """Upstream's ``segment`` of an entry: the bin, or the pressed button's cap link."""
        return f"{e.target}/{CAP_LINK}" if e.target in self.buttons else e.target

    def button_pressed(self, name: str) -> bool:
        return assets.button_depth(self.buttons[name]) > assets.BUTTON_PRESSED_M

    def entry_done(self, e: Entry) -> bool:
        if e.kind == "static":
            return self.static_done(e.steps)
        if e.kind == "press":
            return self.press_done()
        if e.kind == "pick":
            return self.bin_picked(e.target)
        tcp_z = float(self.tcp_position()[2])  # put_down: is_bin_putdown
        actor = self.bins[e.target]
        low = float(actor_position(actor)[2]) <= PUTDOWN_BIN_Z
        return low and tcp_z > PUTDOWN_TCP_Z and not self.is_grasping(actor)

    def press_done(self) -> bool:
        """``is_any_button_pressed_removelist``: a button not pressed before is pressed now."""
        pressed = [b for b in self.unpressed if self.button_pressed(b)]
        for b in pressed:
            self.unpressed.remove(b)
        return bool(pressed)

    def entry_failure(self, e: Entry) -> str | None:
        """Picks and the put-down fail when any other container is lifted."""
        if e.kind not in ("pick", "put_down"):
            return None
        lifted = [b for b in self.bins if b != e.target and self.bin_picked(b)]
        return f"lifted {lifted[0]} during '{e.name}'" if lifted else None

    def online_entry(self) -> int | None:
        return self.examined

    def advance(self) -> None:
        """One step of ``sequential_task_check``: the current entry's failure, else its check."""
        if self.stage >= len(self.task_list) or self.failure_reason is not None:
            return
        e = self.task_list[self.stage]
        self.examined = self.stage
        reason = self.entry_failure(e)
        if reason is not None:
            self.failure_reason = reason
        elif self.entry_done(e):
            self.stage += 1
            self.static_from = self.t
            self.done = self.stage == len(self.task_list)

    # -- the scene script ------------------------------------------------------------------
    def _before_control_step(self) -> None:
        """ManiSkill's hook before the physics of a control step: upstream's ``step`` applies
        its scene script there, at ``elapsed_steps`` = the steps taken so far (``self.t``)."""
        super()._before_control_step()
        self.script(self.t)

    def script(self, cur: int) -> None:
        self.cover(cur)
        if self.SWAPS:
            self.swap(cur)
            self.cubes_back(cur)

    def tick(self) -> None:
        """After the step's physics: the task list's check (upstream's ``evaluate``)."""
        self.advance()

    def cover(self, cur: int) -> None:
        """Containers away at steps 0-31, back on their reset pose at step 32."""
        if not COVER_START <= cur <= DROP_STEP:
            return
        for name, actor in self.bins.items():
            pose = self.layout["actors"][name]
            teleport(actor, AWAY if cur < DROP_STEP else pose[:3], pose[3:])

    def swap(self, cur: int) -> None:
        """The swap schedule: partners chosen when their swap starts, then every swap whose
        window holds ``cur`` moves its pair (in schedule order)."""
        for i, first in enumerate(self.layout["swap_first_bins"][: len(self.partners)]):
            start = SWAP_START + SWAP_STEPS * i
            if start <= cur < start + SWAP_STEPS and self.partners[i] is None:
                self.partners[i] = self.nearest_bin(first)
        for i, partner in enumerate(self.partners):
            if partner is not None:
                self.two_lane(i, self.layout["swap_first_bins"][i], partner, cur)

    def nearest_bin(self, name: str) -> str | None:
        here = actor_position(self.bins[name])[:2]
        others = [b for b in self.bins if b != name]
        if not others:
            return None
        return min(
            others, key=lambda b: float(np.linalg.norm(actor_position(self.bins[b])[:2] - here))
        )

    def two_lane(self, i: int, a: str, b: str, cur: int) -> None:
        """``swap_flat_two_lane`` of swap ``i``: endpoints and the other containers' poses
        captured at its start; A moves to B and B to A, each offset sideways by
        0.07 sin(pi alpha) (opposite sides), orientations blended; the others pinned."""
        start = SWAP_START + SWAP_STEPS * i
        end = start + SWAP_STEPS
        if not start <= cur <= end:
            return
        if cur == start or i not in self.swap_cache:
            self.swap_cache[i] = {
                name: (actor_position(actor), actor_quat(actor))
                for name, actor in self.bins.items()
            }
        cache = self.swap_cache[i]
        for name, (p, q) in cache.items():
            if name not in (a, b):
                self.bins[name].set_pose(sapien.Pose(p=list(p), q=list(q)))
        (pa, qa), (pb, qb) = cache[a], cache[b]
        if cur >= end:
            self.bins[a].set_pose(sapien.Pose(p=[pb[0], pb[1], pa[2]], q=list(qb)))
            self.bins[b].set_pose(sapien.Pose(p=[pa[0], pa[1], pb[2]], q=list(qa)))
            del self.swap_cache[i]
            return
        alpha = smoothstep((cur - start) / max(1, end - start))
        d = pb[:2] - pa[:2]
        norm = float(np.linalg.norm(d))
        n = np.array([-d[1], d[0]]) / norm if norm > 1e-9 else np.zeros(2)
        side = n * LANE_OFFSET * math.sin(math.pi * alpha)
        xa, xb = pa[:2] + d * alpha + side, pb[:2] - d * alpha - side
        qa_t, qb_t = qa * (1 - alpha) + qb * alpha, qb * (1 - alpha) + qa * alpha
        self.bins[a].set_pose(sapien.Pose(p=[*xa, pa[2]], q=list(qa_t / np.linalg.norm(qa_t))))
        self.bins[b].set_pose(sapien.Pose(p=[*xb, pb[2]], q=list(qb_t / np.linalg.norm(qb_t))))

    def cubes_back(self, cur: int) -> None:
        """Cubes away from step 64; at the end of the last swap, each under its container (at
        the height it had at step 64)."""
        end = self.swap_end()
        if not SWAP_START <= cur <= end:
            return
        for cube, box in self.pairs():
            name = cube.name
            if name not in self.cube_cache:
                self.cube_cache[name] = (actor_quat(cube), float(actor_position(cube)[2]))
            quat, z = self.cube_cache[name]
            if cur < end:
                teleport(cube, AWAY, quat)
            else:
                p = actor_position(box)
                teleport(cube, (p[0], p[1], z), quat)

    # -- language --------------------------------------------------------------------------
    def goals(self) -> list[str]:
        """``task_goal.py`` @a3842d1: both phrasings are equal for these tasks, so one."""
        goals = self.layout["goals"]
        text = f"{self.GOAL_HEAD}, then {GOAL_PICK.format(goals[0])}"
        if len(goals) > 1:
            text += f", {GOAL_PICK_2.format(goals[1])}"
        return [text]

    # -- oracle ----------------------------------------------------------------------------
    def segment_point(self, e: Entry) -> np.ndarray:
        if e.target in self.buttons:
            link = self.buttons[e.target].links_map[CAP_LINK]
            return link.pose.p[0].cpu().numpy().astype(np.float64)
        return actor_position(self.bins[e.target])

    def grounded(self, e: Entry) -> str:
        """The grounded template with ``<>`` as the projected ``<row, col>`` of the segment
        actor (pass 2 replaces it by the centroid of the actor's pixels, as upstream)."""
        if "<>" not in e.segment:
            return e.segment
        row, col = pixel_of(self, self.segment_point(e))
        return e.segment.replace("<>", f"<{row}, {col}>")

    def script_over(self) -> bool:
        """The scene script has applied its last change (visible from step ``end + 1``)."""
        return self.t > self.script_end()

    def waypoints(self, e: Entry, last_press: bool) -> list[Waypoint]:
        if e.kind == "static":
            return skills.hold_obj(e.steps)
        if e.kind == "press":
            wps = skills.press_spring_button(self.buttons[e.target])
            if last_press:  # wait for the script before the first pick (ours, see above)
                wps.append(Waypoint(None, CLOSED, hold=400, until=self.script_over))
            return wps
        if e.kind == "pick":
            return pick_container(self, self.bins[e.target])
        return put_down(self)

    def plan(self) -> Iterator[Subgoal]:
        presses = [k for k, e in enumerate(self.task_list) if e.kind == "press"]
        for k, e in enumerate(self.task_list):
            yield Subgoal(
                e.name,
                self.grounded(e),
                self.waypoints(e, bool(presses) and k == presses[-1]),
                video=e.kind == "static",
                choice=e.choice,
                segment=(self.segment_name(e),) if "<>" in e.segment else (),
                anchor=(
                    cast(Callable[[], np.ndarray], lambda e=e: self.segment_point(e))
                    if "<>" in e.segment
                    else None
                ),
            )
