"""Permanence suite (object permanence under occlusion): VideoUnmask, ButtonUnmask,
VideoUnmaskSwap, ButtonUnmaskSwap.

Three cubes (red, green, blue) rest on the table. Identical upside-down containers (boxes with a
knob on top) then appear above the cube spots (and, with more containers than cubes, above empty
spots) and are lowered over them; in the *Swap* tasks pairs of containers then trade places along
arcs on the table, each carrying its cube along. The robot must then pick up (grasp by the knob
and lift) the container(s) hiding the named cube(s), in order; with two goals it puts the first
container back down before picking the second.

*Video* tasks show the covering (and swaps) in the conditioning video while the robot holds still;
*Button* tasks start the covering when the robot presses a button (ButtonUnmaskSwap: the first of
its two buttons; the swaps start when the other one is pressed).

Containers and cubes are dynamic bodies. While a container is scripted (hidden before the
covering, descending, swapping) ``tick()`` sets its pose (and its cube's) every step with zero
velocity; otherwise physics moves it, so the robot lifts it by the knob like any object.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Any, ClassVar

import numpy as np

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.pipelines.robomme import objects, skills
from dataforge.pipelines.robomme.env import RobommeEnv, pixel_of
from dataforge.pipelines.robomme.layout import X_RANGE, Y_RANGE, LayoutImpossible

COLORS3 = ("red", "green", "blue")

# Container geometry (metres): a 5 cm x 5 cm x 5 cm cavity over a 4 cm cube, 6 cm outside.
INNER = 0.05
WALL = 0.005
HEIGHT = 0.055
KNOB = 0.015  # half-size of the knob cube on top
GRIP_Z = HEIGHT + KNOB  # TCP height above the container's bottom when grasping the knob
CONTAINER_COLOR = "gray"
CLEARANCE = 0.09  # between container centres (rotated 6 cm boxes need 8.5 cm)

# Scripted timeline (control steps).
SHOW = 10  # video: cubes alone on the table before the containers come
HOVER = 0.06  # containers appear this high above their spot, then descend
DESCEND = 20
SWAP = 30
PAUSE = 5
SWAP_AMPLITUDE = 0.09  # sideways excursion of the swap arcs (clears the containers in between)

# Row layout of the swap tasks.
ROW_SPACING = (0.11, 0.118)
ROW_X = (-0.09, 0.03)
BUTTON_GAP = 0.095  # from an end slot to the button beyond it (swap tasks)
CONTAINER_X = (X_RANGE[0], 0.1)  # the knob's approach pose is out of reach further forward

PRESS_HOLD = DESCEND + 4


def ease(u: float) -> float:
    """Smooth 0 -> 1 over u in [0, 1] (zero speed at both ends)."""
    u = min(max(u, 0.0), 1.0)
    return float(0.5 - 0.5 * np.cos(np.pi * u))


def container(scene: Any, name: str) -> Any:
    return objects.box_walls(
        scene, name, (INNER, INNER), HEIGHT, WALL, CONTAINER_COLOR, top=True, knob=KNOB
    )


def hold_pose(actor: Any, position: Any, yaw: float) -> None:
    """Put a dynamic actor at a pose, at rest."""
    objects.set_pose(actor, position, yaw)
    actor.set_linear_velocity(np.zeros(3))
    actor.set_angular_velocity(np.zeros(3))


def press(button: Any, *, yaw: float = 0.0, hold: int = 4) -> list[Waypoint]:
    """skills.press with the hand turned by ``yaw`` (its long side along the yaw-rotated y axis)."""
    p = objects.actor_position(button)
    top = np.array([p[0], p[1], p[2] + objects.BUTTON_TOP])
    return [
        Waypoint(None, CLOSED, hold=skills.GRIP_STEPS // 2),
        Waypoint(objects.top_grasp(top, yaw, skills.APPROACH), CLOSED),
        Waypoint(objects.top_grasp(top, yaw, -skills.PRESS_DEPTH), CLOSED, hold=hold, noisy=False),
        Waypoint(objects.top_grasp(top, yaw, skills.APPROACH), CLOSED),
    ]


def scatter(
    rng: np.random.Generator, n: int, button: bool, *, restarts: int = 50, tries: int = 3000
) -> tuple[list[np.ndarray], np.ndarray | None]:
    """``n`` container spots ``CLEARANCE`` apart and (optionally) a button whose pressing hand
    (long side along y) stays clear of them: |dx| >= 0.1 or |dy| >= 0.16 from the button."""
    for _ in range(restarts):
        b = np.array([rng.uniform(*X_RANGE), rng.uniform(*Y_RANGE)]) if button else None
        spots: list[np.ndarray] = []
        for _ in range(tries):
            p = np.array([rng.uniform(*CONTAINER_X), rng.uniform(*Y_RANGE)])
            if any(np.hypot(*(p - q)) < CLEARANCE for q in spots):
                continue
            if b is not None and abs(p[0] - b[0]) < 0.1 and abs(p[1] - b[1]) < 0.16:
                continue
            spots.append(p)
            if len(spots) == n:
                return spots, b
    raise LayoutImpossible(f"cannot scatter {n} containers in the workspace")


class _Unmask(RobommeEnv):
    """Shared machinery: containers covering cubes, optional swaps and buttons, ordered picks.

    Subclasses set ``BUTTONS`` (0, 1 or 2), ``SWAPS`` and ``CONFIG``: difficulty ->
    (containers, (min, max) goal containers, (min, max) swaps)."""

    SUITE = "Permanence"
    BUTTONS: ClassVar[int] = 0
    SWAPS: ClassVar[bool] = False
    CONFIG: ClassVar[dict[str, tuple[int, tuple[int, int], tuple[int, int]]]] = {}

    # -- layout --------------------------------------------------------------------------
    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        n, goals_range, swaps_range = self.CONFIG[self.difficulty]
        n_goals = int(rng.integers(goals_range[0], goals_range[1] + 1))
        n_swaps = int(rng.integers(swaps_range[0], swaps_range[1] + 1))
        holders = [int(k) for k in rng.permutation(n)[: len(COLORS3)]]
        cube_of: list[str | None] = [None] * n
        for color, k in zip(COLORS3, holders, strict=True):
            cube_of[k] = color
        goals = [str(c) for c in rng.permutation(COLORS3)[:n_goals]]
        goal_containers = [cube_of.index(c) for c in goals]
        if self.SWAPS:
            slots, buttons = self._row(rng, n)
            yaws = [0.0] * n
            swaps = self._swaps(rng, n, n_swaps, goal_containers)
        else:
            slots, button = scatter(rng, n, self.BUTTONS > 0)
            buttons = [button] if button is not None else []
            yaws = [float(rng.uniform(-np.pi / 8, np.pi / 8)) for _ in range(n)]
            swaps = []
        return {
            "slots": [np.asarray(s, dtype=np.float64) for s in slots],
            "yaws": yaws,
            "cube_of": cube_of,
            "goals": goals,
            "goal_containers": goal_containers,
            "swaps": swaps,
            "buttons": buttons,
            "first_button": int(rng.integers(0, 2)) if self.BUTTONS == 2 else 0,
        }

    def _row(self, rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Slots in a row along y; the buttons (if any) beyond the row's two ends."""
        spacing = float(rng.uniform(*ROW_SPACING))
        x0 = float(rng.uniform(*ROW_X))
        length = (n - 1) * spacing
        margin = BUTTON_GAP if self.BUTTONS else 0.03
        lo, hi = Y_RANGE[0] + margin, Y_RANGE[1] - margin - length
        if hi < lo:
            raise LayoutImpossible("the row of containers does not fit the workspace")
        y0 = float(rng.uniform(lo, hi))
        slots = [np.array([x0, y0 + k * spacing]) for k in range(n)]
        buttons = []
        if self.BUTTONS:
            for y in (y0 - BUTTON_GAP, y0 + length + BUTTON_GAP):
                x = float(np.clip(x0 + rng.uniform(-0.05, 0.05), *X_RANGE))
                buttons.append(np.array([x, y]))
        return slots, buttons

    @staticmethod
    def _swaps(
        rng: np.random.Generator, n: int, n_swaps: int, goal_containers: list[int]
    ) -> list[tuple[int, int]]:
        """Pairs of slots whose containers trade places, one after the other: no pair twice in
        a row, and at least one swap moves a goal container (containers start at the slot of
        their own index)."""
        for _ in range(100):
            swaps = [
                tuple(sorted(int(s) for s in rng.choice(n, 2, replace=False)))
                for _ in range(n_swaps)
            ]
            if any(a == b for a, b in pairwise(swaps)):
                continue
            at = list(range(n))  # at[slot] = container
            moved: set[int] = set()
            for a, b in swaps:
                moved |= {at[a], at[b]}
                at[a], at[b] = at[b], at[a]
            if moved & set(goal_containers):
                return [(a, b) for a, b in swaps]
        raise LayoutImpossible("no swap sequence moves a goal container")

    def arrangements(self) -> list[list[int]]:
        """slot_of[k] for every container k, before the swaps and after each one."""
        n = len(self.layout["slots"])
        at = list(range(n))
        out = [list(range(n))]
        for a, b in self.layout["swaps"]:
            at[a], at[b] = at[b], at[a]
            slot_of = [0] * n
            for s, k in enumerate(at):
                slot_of[k] = s
            out.append(slot_of)
        return out

    # -- scene ---------------------------------------------------------------------------
    def build(self) -> None:
        lay = self.layout
        self.cubes = {c: objects.cube(self.scene, f"cube_{c}", c) for c in COLORS3}
        self.containers = [
            container(self.scene, f"container_{k}") for k in range(len(lay["slots"]))
        ]
        self.parked = [self.park_pose() for _ in self.containers]
        self.buttons = [
            objects.button(self.scene, f"button_{k}") for k in range(len(lay["buttons"]))
        ]
        self.slot_of = self.arrangements()

    def place(self) -> None:
        lay = self.layout
        for k, color in enumerate(lay["cube_of"]):
            if color is not None:
                hold_pose(self.cubes[color], (*lay["slots"][k], objects.CUBE_HALF), lay["yaws"][k])
        for actor, pose in zip(self.containers, self.parked, strict=True):
            hold_pose(actor, pose.p, 0.0)
        for actor, xy in zip(self.buttons, lay["buttons"], strict=True):
            objects.set_pose(actor, (*xy, 0.0))

    def reset_events(self) -> None:
        self.trackers = [skills.PickTracker(c) for c in self.containers]
        self.presses = [skills.ButtonTracker(b) for b in self.buttons]
        self.pressed: list[int] = []  # buttons in the order first pressed
        self.cover_t: int | None = None if self.BUTTONS else SHOW
        self.swap_t: int | None = None
        if not self.BUTTONS and self.SWAPS:
            self.swap_t = SHOW + DESCEND + PAUSE
        self.progress = 0  # goal containers picked so far, in order

    # -- timeline ------------------------------------------------------------------------
    def cover_end(self) -> int | None:
        return None if self.cover_t is None else self.cover_t + DESCEND

    def swap_start(self, i: int) -> int | None:
        return None if self.swap_t is None else self.swap_t + i * (SWAP + PAUSE)

    def phase_end(self) -> int | None:
        """The step when the covering (and swapping) is over; None before it is scheduled."""
        if not self.SWAPS or not self.layout["swaps"]:
            return self.cover_end()
        start = self.swap_start(len(self.layout["swaps"]) - 1)
        return None if start is None else start + SWAP

    def phase_done(self) -> bool:
        end = self.phase_end()
        return end is not None and self.t >= end

    def slot_xyz(self, slot: int, z: float = 0.0) -> np.ndarray:
        return np.array([*self.layout["slots"][slot], z])

    def scripted(self, k: int) -> np.ndarray | None:
        """Where container ``k`` is held now (None: physics moves it)."""
        t, lay = self.t, self.layout
        if self.cover_t is None or t < self.cover_t:
            return np.asarray(self.parked[k].p, dtype=np.float64)
        if t <= self.cover_end():
            return self.slot_xyz(k, HOVER * (1.0 - ease((t - self.cover_t) / DESCEND)))
        for i, (a, b) in enumerate(lay["swaps"]):
            start = self.swap_start(i)
            if start is None or not start <= t <= start + SWAP:
                continue
            slot = self.slot_of[i][k]
            if slot not in (a, b):
                return None
            u = ease((t - start) / SWAP)
            pa, pb = self.slot_xyz(a), self.slot_xyz(b)
            mid, half = (pa + pb) / 2, (pb - pa) / 2
            side = np.array([-half[1], half[0], 0.0]) / np.hypot(half[0], half[1])
            sign = 1.0 if slot == a else -1.0
            return (
                mid
                - sign * half * np.cos(np.pi * u)
                + sign * side * SWAP_AMPLITUDE * np.sin(np.pi * u)
            )
        return None

    def tick(self) -> None:
        lay = self.layout
        for j, tracker in enumerate(self.presses):
            if tracker.update(self) and j not in self.pressed:
                self.pressed.append(j)
                if len(self.pressed) == 1:
                    self.cover_t = self.t
                elif len(self.pressed) == 2 and self.SWAPS:
                    self.swap_t = max(self.t, self.cover_end()) + PAUSE
        for k, actor in enumerate(self.containers):
            pos = self.scripted(k)
            if pos is None:
                continue
            hold_pose(actor, pos, lay["yaws"][k])
            color = lay["cube_of"][k]
            if color is not None and self.cover_t is not None and self.t > self.cover_end():
                hold_pose(self.cubes[color], (pos[0], pos[1], objects.CUBE_HALF), lay["yaws"][k])
        for k, tracker in enumerate(self.trackers):
            if not tracker.held and objects.actor_position(tracker.actor)[2] <= skills.LIFTED_Z:
                continue  # cannot be picked up now: skip the (slow) contact query
            picked, _ = tracker.update(self)
            if picked:
                self.on_pick(k)

    def on_pick(self, k: int) -> None:
        goals = self.layout["goal_containers"]
        if not self.phase_done():
            what = "button-press" if self.BUTTONS else "covering"
            self.failure_reason = f"picked a container before the {what} phase was over"
        elif k not in goals:
            self.failure_reason = "picked a wrong container"
        elif self.progress < len(goals) and k == goals[self.progress]:
            self.progress += 1
            self.done = self.progress == len(goals)
        elif k not in goals[: self.progress]:
            self.failure_reason = "picked the containers in the wrong order"

    # -- language and oracle -------------------------------------------------------------
    def goal(self) -> str:
        first = {
            0: "watch the video carefully",
            1: "first press the button on the table",
            2: "first press both buttons on the table",
        }[self.BUTTONS]
        picks = [f"pick up the container hiding the {c} cube" for c in self.layout["goals"]]
        return f"{first}, then " + ", and finally ".join(picks)

    def container_pixel(self, k: int) -> list[int]:
        p = objects.actor_position(self.containers[k])
        return pixel_of(self, p + np.array([0.0, 0.0, HEIGHT / 2]))

    def video(self) -> Iterator[Subgoal]:
        """The conditioning video: the robot holds still while the scene changes."""
        lay = self.layout
        spots = ", ".join(
            f"the {c} cube at {pixel_of(self, objects.actor_position(self.cubes[c]))}"
            for c in COLORS3
        )
        yield Subgoal(
            "watch the containers cover the cubes",
            f"watch the containers cover {spots}",
            [Waypoint(None, OPEN, hold=self.cover_end() + PAUSE - self.t)],
            video=True,
        )
        for i, (a, b) in enumerate(lay["swaps"]):
            pa, pb = pixel_of(self, self.slot_xyz(a)), pixel_of(self, self.slot_xyz(b))
            yield Subgoal(
                "watch two containers swap places",
                f"watch the containers at {pa} and {pb} swap places",
                [Waypoint(None, OPEN, hold=self.swap_start(i) + SWAP + PAUSE - self.t)],
                video=True,
            )

    def press_buttons(self) -> Iterator[Subgoal]:
        lay = self.layout
        order = [lay["first_button"], 1 - lay["first_button"]][: len(self.buttons)]
        yaw = np.pi / 2 if self.SWAPS else 0.0  # the hand's long side across the row
        for i, j in enumerate(order):
            button = self.buttons[j]
            name = "the button" if len(order) == 1 else ("the first button", "the second button")[i]
            waypoints = press(button, yaw=yaw, hold=PRESS_HOLD if i == 0 else 4)
            if i == len(order) - 1:
                waypoints.append(Waypoint(None, CLOSED, hold=400, until=self.phase_done))
            yield Subgoal(
                f"press {name}",
                f"press {name} at {pixel_of(self, objects.actor_position(button))}",
                waypoints,
            )

    def plan(self) -> Iterator[Subgoal]:
        lay = self.layout
        if self.BUTTONS:
            yield from self.press_buttons()
        else:
            yield from self.video()
        for i, (color, k) in enumerate(zip(lay["goals"], lay["goal_containers"], strict=True)):
            actor = self.containers[k]
            home = objects.actor_position(actor)
            text = f"pick up the container hiding the {color} cube"
            yield Subgoal(
                text,
                f"{text} at {self.container_pixel(k)}",
                [
                    Waypoint(None, OPEN, hold=skills.GRIP_STEPS // 2),
                    *skills.pick(self, actor, grip_z=home[2] + GRIP_Z, kind="bin"),
                ],
            )
            if i < len(lay["goals"]) - 1:
                yield Subgoal(
                    "put the container back down",
                    f"put the container back down at {pixel_of(self, home)}",
                    self.put_back(actor, home),
                )

    def put_back(self, actor: Any, home: np.ndarray) -> list[Waypoint]:
        """Lower the held container onto its spot (keeping the grasp offset), release, rise."""
        offset = self.tcp_position() - objects.actor_position(actor)
        at = home + offset + np.array([0.0, 0.0, 0.004])
        yaw = objects.grasp_yaw(objects.actor_yaw(actor))
        return [
            Waypoint(objects.top_grasp(at, yaw, skills.APPROACH), CLOSED),
            Waypoint(objects.top_grasp(at, yaw), CLOSED, noisy=False),
            Waypoint(None, OPEN, hold=skills.GRIP_STEPS),
            Waypoint(objects.top_grasp(at, yaw, skills.APPROACH), OPEN),
        ]


class VideoUnmask(_Unmask):
    """Watch containers cover the cubes, then pick the container(s) hiding the named cube(s)
    (paper Table 13: 3 / 5 / 10 containers, 1 / 1 / 2 goal containers)."""

    TASK = "VideoUnmask"
    VIDEO = True
    CONFIG: ClassVar = {
        "easy": (3, (1, 1), (0, 0)),
        "medium": (5, (1, 1), (0, 0)),
        "hard": (10, (2, 2), (0, 0)),
    }


class ButtonUnmask(_Unmask):
    """Press the button (the containers cover the cubes meanwhile), then pick the container(s)
    hiding the named cube(s) (paper Table 14: 3 / 5 / 15 containers, 1 / 1 / 2 goals)."""

    TASK = "ButtonUnmask"
    BUTTONS = 1
    CONFIG: ClassVar = {
        "easy": (3, (1, 1), (0, 0)),
        "medium": (5, (1, 1), (0, 0)),
        "hard": (15, (2, 2), (0, 0)),
    }


class VideoUnmaskSwap(_Unmask):
    """Watch containers cover the cubes and swap places, then pick the container(s) hiding the
    named cube(s) (paper Table 15: 3 / 4 / 4 containers, 1-2 / 1-2 / 2-3 swaps, 1-2 / 1 / 2
    goals)."""

    TASK = "VideoUnmaskSwap"
    VIDEO = True
    SWAPS = True
    CONFIG: ClassVar = {
        "easy": (3, (1, 2), (1, 2)),
        "medium": (4, (1, 1), (1, 2)),
        "hard": (4, (2, 2), (2, 3)),
    }


class ButtonUnmaskSwap(_Unmask):
    """Press both buttons (the first covers the cubes, the second swaps containers), then pick
    the container(s) hiding the named cube(s) (paper Table 16: 3 / 4 / 4 containers, 1-2 / 1 / 2
    goals, 1-2 / 1-2 / 2-3 swaps)."""

    TASK = "ButtonUnmaskSwap"
    BUTTONS = 2
    SWAPS = True
    CONFIG: ClassVar = {
        "easy": (3, (1, 2), (1, 2)),
        "medium": (4, (1, 1), (1, 2)),
        "hard": (4, (2, 2), (2, 3)),
    }
