"""Counting suite (temporal memory): PickXtimes, BinFill, SwingXtimes, StopCube."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.pipelines.robomme import objects, skills
from dataforge.pipelines.robomme.env import RobommeEnv, pixel_of
from dataforge.pipelines.robomme.layout import (
    X_RANGE,
    Y_RANGE,
    LayoutImpossible,
    sample_positions,
    yaw,
)

COLORS3 = ("red", "green", "blue")
ORDINAL_TIMES = {1: "once", 2: "twice", 3: "three times", 4: "four times", 5: "five times"}


class PickXtimes(RobommeEnv):
    """Pick a cube of a given colour and place it on the target X times, then press the button
    (paper Table 10: easy 1 cube, 1-3 repetitions; medium 3 cubes, 1-3; hard 3 cubes, 4-5)."""

    TASK = "PickXtimes"
    SUITE = "Counting"

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        n = 1 if self.difficulty == "easy" else 3
        reps = int(rng.integers(4, 6)) if self.difficulty == "hard" else int(rng.integers(1, 4))
        colors = [str(c) for c in rng.permutation(COLORS3)[:n]]
        pts = sample_positions(rng, n + 2, 0.11)
        return {
            "colors": colors,
            "goal_color": colors[0],
            "repetitions": reps,
            "cubes": [(*p, yaw(rng)) for p in pts[:n]],
            "target": pts[n],
            "button": pts[n + 1],
        }

    def build(self) -> None:
        lay = self.layout
        self.cubes = [objects.cube(self.scene, f"cube_{c}", c) for c in lay["colors"]]
        self.target = objects.disc(self.scene, "target", "purple")
        self.button = objects.button(self.scene, "button")

    def place(self) -> None:
        lay = self.layout
        for actor, (x, y, a) in zip(self.cubes, lay["cubes"], strict=True):
            objects.set_pose(actor, (x, y, objects.CUBE_HALF), a)
        objects.set_pose(self.target, (*lay["target"], 0.001))
        objects.set_pose(self.button, (*lay["button"], 0.0))

    def reset_events(self) -> None:
        self.trackers = [skills.PickTracker(c) for c in self.cubes]
        self.press = skills.ButtonTracker(self.button)
        self.placed = 0

    def tick(self) -> None:
        for k, tr in enumerate(self.trackers):
            picked, released = tr.update(self)
            if picked and k != 0:
                self.failure_reason = "picked a wrong cube"
            if (
                released
                and k == 0
                and skills.on_target(
                    self.cubes[0], self.layout["target"], objects.TARGET_RADIUS, max_z=0.06
                )
            ):
                self.placed += 1
                if self.placed > self.layout["repetitions"]:
                    self.failure_reason = "more placements than asked for"
        if self.press.update(self):
            if self.placed != self.layout["repetitions"]:
                self.failure_reason = (
                    f"button pressed after {self.placed} of {self.layout['repetitions']} placements"
                )
            else:
                self.done = True

    def goal(self) -> str:
        c, n = self.layout["goal_color"], self.layout["repetitions"]
        if n == 1:
            return f"pick up the {c} cube and place it on the target, then press the button to stop"
        return (
            f"pick up the {c} cube and place it on the target, repeating this pick-and-place "
            f"action {ORDINAL_TIMES[n]}, then press the button to stop"
        )

    def plan(self) -> Iterator[Subgoal]:
        c = self.layout["goal_color"]
        target = np.array([*self.layout["target"], 0.0])
        for _ in range(self.layout["repetitions"]):
            cube = self.cubes[0]
            yield Subgoal(
                f"pick up the {c} cube",
                f"pick up the {c} cube at {pixel_of(self, objects.actor_position(cube))}",
                skills.pick(self, cube),
            )
            yield Subgoal(
                "place the cube on the target",
                f"place the cube on the target at {pixel_of(self, target)}",
                skills.place(target),
            )
        yield Subgoal(
            "press the button",
            f"press the button at {pixel_of(self, objects.actor_position(self.button))}",
            skills.press(self.button),
        )


NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}
ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}


def _gap(p: np.ndarray, centre: np.ndarray, half: float) -> float:
    """Distance from ``p`` to an axis-aligned square of half-side ``half`` (0: a point)."""
    d = np.maximum(np.abs(p - np.asarray(centre)[:2]) - half, 0.0)
    return float(np.hypot(*d))


def _scatter(
    rng: np.random.Generator,
    n: int,
    clearance: float,
    keep_out: list[tuple[np.ndarray, float, float]],
    *,
    x: tuple[float, float] = X_RANGE,
    y: tuple[float, float] = Y_RANGE,
    tries: int = 4000,
) -> list[np.ndarray]:
    """``n`` xy points ``clearance`` apart, each at least ``r`` away from every keep-out
    square (centre, r, half-side)."""
    pts: list[np.ndarray] = []
    for _ in range(tries):
        if len(pts) == n:
            break
        p = np.array([rng.uniform(*x), rng.uniform(*y)])
        if all(np.hypot(*(p - q)) >= clearance for q in pts) and all(
            _gap(p, c, half) >= r for c, r, half in keep_out
        ):
            pts.append(p)
    if len(pts) < n:
        raise LayoutImpossible(f"cannot scatter {n} points {clearance} m apart")
    return pts


# -- BinFill -----------------------------------------------------------------------------------
BIN_INNER = 0.17  # the bin's inner side (a 3 x 3 grid of drop slots)
BIN_HEIGHT = 0.06
BIN_WALL = 0.008
BIN_SLOT = 0.055
BIN_CLEAR = 0.07  # cubes and the button keep this far from the bin's walls (open fingers)
DROP_Z = BIN_HEIGHT + 0.035  # TCP height where a carried cube is released above the bin
IN_BIN_Z = BIN_HEIGHT + 0.03  # a cube centre below this, within the walls, is in the bin
STREAM_START = 2  # cubes already on the table when a streaming episode starts
STREAM_PERIOD = 30  # steps between two appearing cubes


class BinFill(RobommeEnv):
    """Put the asked-for number of cubes of each goal colour into an opaque bin, then press the
    button (paper Table 9: easy 1 goal colour, 4-6 cubes, 1 each; medium 2 colours, 8-10 cubes,
    1-2 each; hard 3 colours, 10-12 cubes, 1-3 each with at least one colour at 2-3). Cubes are
    all on the table from the start (static) or appear one by one in a random order
    (streaming)."""

    TASK = "BinFill"
    SUITE = "Counting"

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        n_goal = {"easy": 1, "medium": 2, "hard": 3}[self.difficulty]
        total = int(
            rng.integers(*{"easy": (4, 7), "medium": (8, 11), "hard": (10, 13)}[self.difficulty])
        )
        goal_colors = [str(c) for c in rng.permutation(COLORS3)[:n_goal]]
        if self.difficulty == "easy":
            counts = [1]
        elif self.difficulty == "medium":
            counts = [int(c) for c in rng.integers(1, 3, size=n_goal)]
        else:
            counts = [1, 1, 1]
            while max(counts) < 2:
                counts = [int(c) for c in rng.integers(1, 4, size=n_goal)]
        colors = [c for c, k in zip(goal_colors, counts, strict=True) for _ in range(k)]
        colors += goal_colors[: max(0, total - len(colors))]  # one more than asked, if room
        colors += [str(c) for c in rng.choice(COLORS3, size=total - len(colors))]
        colors = [colors[i] for i in rng.permutation(total)]
        streaming = bool(rng.random() < 0.5)
        for _ in range(50):
            try:
                bin_xy = np.array([rng.uniform(-0.1, 0.06), rng.uniform(-0.2, 0.2)])
                keep = [(bin_xy, BIN_CLEAR, BIN_INNER / 2 + BIN_WALL)]
                btn = _scatter(rng, 1, 0.0, keep)[0]
                pts = _scatter(rng, total, 0.09, [*keep, (btn, 0.1, 0.0)])
                break
            except LayoutImpossible:
                continue
        else:
            raise LayoutImpossible("no BinFill arrangement found")
        order = [int(i) for i in rng.permutation(total)]
        appear = [0] * total
        if streaming:
            for rank, k in enumerate(order):
                appear[k] = max(0, rank - STREAM_START + 1) * STREAM_PERIOD
        return {
            "goal_colors": goal_colors,
            "counts": counts,
            "colors": colors,
            "streaming": streaming,
            "appear": appear,
            "cubes": [(*p, yaw(rng)) for p in pts],
            "bin": bin_xy,
            "button": btn,
        }

    def build(self) -> None:
        self.cubes = [
            objects.cube(self.scene, f"cube_{k}_{c}", c)
            for k, c in enumerate(self.layout["colors"])
        ]
        self.bin = objects.box_walls(
            self.scene, "bin", (BIN_INNER, BIN_INNER), BIN_HEIGHT, BIN_WALL, "brown",
            top=False, inner_color="black", kinematic=True,
        )  # fmt: skip
        self.button = objects.button(self.scene, "button")

    def place(self) -> None:
        lay = self.layout
        self.parking = [self.park_pose() for _ in self.cubes]
        self.shown = [t == 0 for t in lay["appear"]]
        for k, actor in enumerate(self.cubes):
            x, y, a = lay["cubes"][k]
            if self.shown[k]:
                objects.set_pose(actor, (x, y, objects.CUBE_HALF), a)
            else:
                actor.set_pose(self.parking[k])
        objects.set_pose(self.bin, (*lay["bin"], 0.0))
        objects.set_pose(self.button, (*lay["button"], 0.0))

    def reset_events(self) -> None:
        self.press = skills.ButtonTracker(self.button)

    def _spot_clear(self, k: int) -> bool:
        """The gripper is not where cube ``k`` would appear."""
        tcp = self.tcp_position()
        x, y, _ = self.layout["cubes"][k]
        return bool(tcp[2] > 0.12 or np.hypot(tcp[0] - x, tcp[1] - y) > 0.1)

    def tick(self) -> None:
        for k, actor in enumerate(self.cubes):
            if self.shown[k]:
                continue
            if self.t >= self.layout["appear"][k] and self._spot_clear(k):
                x, y, a = self.layout["cubes"][k]
                objects.set_pose(actor, (x, y, objects.CUBE_HALF), a)
                self.shown[k] = True
            else:
                actor.set_pose(self.parking[k])
            actor.set_linear_velocity(np.zeros(3))
            actor.set_angular_velocity(np.zeros(3))
        if self.press.update(self):
            have = self.in_bin()
            want = dict(zip(self.layout["goal_colors"], self.layout["counts"], strict=True))
            if any(have.get(c, 0) != n for c, n in want.items()):
                self.failure_reason = f"button pressed with {have} in the bin, asked for {want}"
            else:
                self.done = True

    def in_bin(self) -> dict[str, int]:
        """How many cubes of each colour lie in the bin (released)."""
        have: dict[str, int] = {}
        for k, c in enumerate(self.layout["colors"]):
            if self._inside(k) and not self.is_grasping(self.cubes[k]):
                have[c] = have.get(c, 0) + 1
        return have

    def check(self) -> tuple[bool, str | None]:
        want = dict(zip(self.layout["goal_colors"], self.layout["counts"], strict=True))
        for c, n in self.in_bin().items():
            if n > want.get(c, 0):
                return False, f"{n} {c} cubes in the bin, asked for {want.get(c, 0)}"
        return self.done, None

    def goal(self) -> str:
        parts = [
            f"{NUMBER_WORDS[n]} {c} cube{'s' if n > 1 else ''}"
            for c, n in zip(self.layout["goal_colors"], self.layout["counts"], strict=True)
        ]
        items = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
        return f"put {items} into the bin and press the button to stop"

    def _available(self, need: dict[str, int], skip: set[int]) -> list[int]:
        """Cubes on the table (shown, not in the bin, not given up) of a colour still needed."""
        return [
            k
            for k, c in enumerate(self.layout["colors"])
            if self.shown[k] and k not in skip and need.get(c, 0) > 0 and not self._over_bin(k)
        ]

    def _over_bin(self, k: int) -> bool:
        """Cube ``k`` is within the bin's walls (at any height)."""
        p = objects.actor_position(self.cubes[k])
        return bool(np.all(np.abs(p[:2] - np.asarray(self.layout["bin"])) < BIN_INNER / 2 + 0.005))

    def _inside(self, k: int) -> bool:
        """Cube ``k`` lies in the bin: within its walls, below the rim plus half a cube."""
        return self._over_bin(k) and 0 < objects.actor_position(self.cubes[k])[2] < IN_BIN_Z

    def _free_slot(self) -> int:
        """The drop slot farthest from every cube already in the bin."""
        inside = [
            objects.actor_position(c)[:2] for k, c in enumerate(self.cubes) if self._inside(k)
        ]
        centre = np.asarray(self.layout["bin"])
        slots = [centre + BIN_SLOT * np.array([i - 1, j - 1]) for i in range(3) for j in range(3)]
        if not inside:
            return 4
        return int(np.argmax([min(np.hypot(*(s - q)) for q in inside) for s in slots]))

    def drop(self, slot: int) -> list[Waypoint]:
        """Carry the held cube above drop slot ``slot`` (a 3 x 3 grid) of the bin and let go."""
        cx, cy = self.layout["bin"]
        i, j = divmod(slot, 3)
        at = np.array([cx + (i - 1) * BIN_SLOT, cy + (j - 1) * BIN_SLOT, DROP_Z])
        return [
            Waypoint(objects.top_grasp(at, 0.0), CLOSED),
            Waypoint(None, OPEN, hold=skills.GRIP_STEPS),
        ]

    def plan(self) -> Iterator[Subgoal]:
        lay = self.layout
        want = dict(zip(lay["goal_colors"], lay["counts"], strict=True))
        centre = np.asarray(lay["bin"])
        tries = [0] * len(self.cubes)
        given_up: set[int] = set()
        while True:
            have = self.in_bin()
            need = {c: n - have.get(c, 0) for c, n in want.items()}
            if sum(need.values()) <= 0:
                break
            if not self._available(need, given_up):
                wanted = " or ".join(c for c, n in need.items() if n > 0)
                yield Subgoal(
                    f"wait for a {wanted} cube to appear",
                    f"wait for a {wanted} cube to appear on the table",
                    [
                        Waypoint(
                            None, OPEN, hold=STREAM_PERIOD * (len(self.cubes) + 2),
                            until=lambda need=need: bool(self._available(need, given_up)),
                        )
                    ],
                )  # fmt: skip
            ks = self._available(need, given_up)
            k = min(
                ks, key=lambda i: np.hypot(*(objects.actor_position(self.cubes[i])[:2] - centre))
            )
            c, cube = lay["colors"][k], self.cubes[k]
            tries[k] += 1
            if tries[k] >= 2:
                given_up.add(k)  # one retry per cube, then another cube of the colour
            yield Subgoal(
                f"pick up the {c} cube",
                f"pick up the {c} cube at {pixel_of(self, objects.actor_position(cube))}",
                skills.pick(self, cube),
            )
            if not self.is_grasping(cube):
                continue
            yield Subgoal(
                "put the cube into the bin",
                f"put the cube into the bin at {pixel_of(self, np.array([*centre, BIN_HEIGHT]))}",
                self.drop(self._free_slot()),
            )
        yield Subgoal(
            "press the button",
            f"press the button at {pixel_of(self, objects.actor_position(self.button))}",
            skills.press(self.button),
        )


# -- SwingXtimes -------------------------------------------------------------------------------
REACH_TOL = 0.03  # a held cube this close (xy) to a target centre, and low enough, reaches it
REACH_Z = 0.09  # ... with its centre below this height
LEAVE_TOL = 0.05  # it has left the target once farther than this (xy) or higher than LEAVE_Z
LEAVE_Z = 0.11
REACH_TCP_Z = 0.06  # the oracle's TCP height over a target
CARRY_TCP_Z = 0.12  # ... and when arriving above one
UPRIGHT = 0.94  # cos(20 deg): one cube axis this close to vertical


def _upright(actor: Any) -> bool:
    w, x, y, z = actor.pose.q[0].cpu().numpy().astype(np.float64)
    row = [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]  # R[2, :]
    return bool(max(abs(v) for v in row) > UPRIGHT)


class SwingXtimes(RobommeEnv):
    """Swing a cube of a given colour between the right- and left-side targets (robot base
    frame) X times, put it down, then press the button (paper Table 11: easy 1 cube, 1-3
    swings; medium 3 cubes, 1-2; hard 3 cubes, 3). A red disc over a target shows it was the
    last one reached."""

    TASK = "SwingXtimes"
    SUITE = "Counting"
    SIDES = ("right", "left")

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        n = 1 if self.difficulty == "easy" else 3
        reps = {
            "easy": int(rng.integers(1, 4)),
            "medium": int(rng.integers(1, 3)),
            "hard": 3,
        }[self.difficulty]
        colors = [str(c) for c in rng.permutation(COLORS3)[:n]]
        right = _scatter(rng, 1, 0.0, [], y=(Y_RANGE[0] + 0.02, -0.07))[0]
        left = _scatter(rng, 1, 0.0, [], y=(0.07, Y_RANGE[1] - 0.02))[0]
        keep = [(right, 0.11, 0.0), (left, 0.11, 0.0)]
        pts = _scatter(rng, n + 1, 0.11, keep)
        return {
            "colors": colors,
            "goal_color": colors[0],
            "repetitions": reps,
            "cubes": [(*p, yaw(rng)) for p in pts[:n]],
            "targets": {"right": right, "left": left},
            "button": pts[n],
        }

    def build(self) -> None:
        self.cubes = [objects.cube(self.scene, f"cube_{c}", c) for c in self.layout["colors"]]
        self.targets = {s: objects.disc(self.scene, f"target_{s}", "gray") for s in self.SIDES}
        self.marks = {
            s: objects.disc(self.scene, f"reached_{s}", "red", z=0.0015) for s in self.SIDES
        }
        self.button = objects.button(self.scene, "button")

    def place(self) -> None:
        lay = self.layout
        for actor, (x, y, a) in zip(self.cubes, lay["cubes"], strict=True):
            objects.set_pose(actor, (x, y, objects.CUBE_HALF), a)
        for s in self.SIDES:
            objects.set_pose(self.targets[s], (*lay["targets"][s], 0.001))
        self.mark_parking = {s: self.park_pose() for s in self.SIDES}
        for s in self.SIDES:
            self.marks[s].set_pose(self.mark_parking[s])
        objects.set_pose(self.button, (*lay["button"], 0.0))

    def reset_events(self) -> None:
        self.trackers = [skills.PickTracker(c) for c in self.cubes]
        self.press = skills.ButtonTracker(self.button)
        self.reaches = {s: 0 for s in self.SIDES}
        self.at: str | None = None  # the target the held cube is at now

    def _update_reach(self) -> None:
        cube = self.cubes[0]
        p = objects.actor_position(cube)
        for s in self.SIDES:
            d = float(np.hypot(*(p[:2] - self.layout["targets"][s])))
            if self.at == s and (d > LEAVE_TOL or p[2] > LEAVE_Z):
                self.at = None
            held = self.is_grasping(cube) and _upright(cube)
            if self.at is None and held and d < REACH_TOL and p[2] < REACH_Z:
                self.at = s
                self.reaches[s] += 1
                objects.set_pose(self.marks[s], (*self.layout["targets"][s], 0.0015))
                other = "left" if s == "right" else "right"
                self.marks[other].set_pose(self.mark_parking[other])
                if self.reaches[s] > self.layout["repetitions"]:
                    self.failure_reason = f"reached the {s}-side target too many times"

    def tick(self) -> None:
        for k, tr in enumerate(self.trackers):
            picked, _ = tr.update(self)
            if picked and k != 0:
                self.failure_reason = "picked a wrong cube"
        self._update_reach()
        if self.press.update(self):
            n = self.layout["repetitions"]
            cube = self.cubes[0]
            down = not self.is_grasping(cube) and objects.actor_position(cube)[2] < 0.03
            if any(self.reaches[s] != n for s in self.SIDES):
                self.failure_reason = f"button pressed after {self.reaches} reaches of {n} swings"
            elif not down:
                self.failure_reason = "button pressed before the cube was put down"
            else:
                self.done = True

    def goal(self) -> str:
        c, n = self.layout["goal_color"], self.layout["repetitions"]
        if n == 1:
            return (
                f"pick up the {c} cube, move it to the right-side target and then put down the "
                "cube on the left-side target and press the button to stop"
            )
        return (
            f"pick up the {c} cube, move it to the right-side target and then to the left-side "
            f"target, repeating this right-to-left swing motion {ORDINAL_TIMES[n]}, then put down "
            "the cube and press the button to stop"
        )

    def _over(self, side: str, z: float) -> np.ndarray:
        return objects.top_grasp(np.array([*self.layout["targets"][side], z]), 0.0)

    def plan(self) -> Iterator[Subgoal]:
        lay = self.layout
        c, cube, n = lay["goal_color"], self.cubes[0], lay["repetitions"]
        px = {s: pixel_of(self, np.array([*lay["targets"][s], 0.0])) for s in self.SIDES}
        yield Subgoal(
            f"pick up the {c} cube",
            f"pick up the {c} cube at {pixel_of(self, objects.actor_position(cube))}",
            skills.pick(self, cube),
        )
        for rep in range(n):
            for s in self.SIDES:
                last = rep == n - 1 and s == "left"
                reach = [
                    Waypoint(self._over(s, CARRY_TCP_Z), CLOSED),
                    Waypoint(self._over(s, REACH_TCP_Z), CLOSED, noisy=False),
                ]
                if not last:
                    yield Subgoal(
                        f"move the cube to the {s}-side target",
                        f"move the cube to the {s}-side target at {px[s]}",
                        reach,
                    )
                    continue
                rest = objects.CUBE_HALF + 0.004
                yield Subgoal(
                    f"put down the cube on the {s}-side target",
                    f"put down the cube on the {s}-side target at {px[s]}",
                    [
                        *reach,
                        Waypoint(self._over(s, rest), CLOSED, noisy=False),
                        Waypoint(None, OPEN, hold=skills.GRIP_STEPS),
                        Waypoint(self._over(s, skills.APPROACH), OPEN),
                    ],
                )
        yield Subgoal(
            "press the button",
            f"press the button at {pixel_of(self, objects.actor_position(self.button))}",
            skills.press(self.button),
        )


# -- StopCube ----------------------------------------------------------------------------------
SPEEDS = {"slow": 0.05, "medium": 0.08, "fast": 0.11}  # m/s of the oscillating cube
HOVER = 0.03  # the oracle waits with its fingertips this far above the button's top
PRESS_LEAD = 10  # steps from the start of the press move to the press being detected
READY = 90  # the oracle's press may not be due before this step (time to reach the hover)


class StopCube(RobommeEnv):
    """Press the button exactly when a cube sliding back and forth along a line is over the
    target on its k-th visit (paper Table 12: k = 2-3 / 3-4 / 4-5, slow, medium or fast). The
    press stops the cube at once; a visit is the cube's centre over the target disc."""

    TASK = "StopCube"
    SUITE = "Counting"

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        lo = {"easy": 2, "medium": 3, "hard": 4}[self.difficulty]
        visit = int(rng.integers(lo, lo + 2))
        speed = str(rng.choice(list(SPEEDS)))
        step = SPEEDS[speed] * float(self.control_timestep)
        for _ in range(200):
            length = rng.uniform(0.22, 0.34)
            x = rng.uniform(X_RANGE[0] + 0.02, X_RANGE[1] - 0.02)
            y0 = rng.uniform(Y_RANGE[0] + 0.02, Y_RANGE[1] - 0.02 - length)
            ends = [np.array([x, y0]), np.array([x, y0 + length])]
            if rng.random() < 0.5:
                ends.reverse()
            frac = rng.uniform(0.35, 0.65)
            phase = rng.uniform(0.0, 2 * length)
            if abs(self._s(length, phase, step, 0) - frac * length) < objects.TARGET_RADIUS + 0.01:
                continue  # the cube starts off the target
            visits = self._visits(length, frac * length, phase, step, visit)
            if visits[-1][1] - PRESS_LEAD < READY:
                continue
            try:
                btn = _scatter(
                    rng,
                    1,
                    0.0,
                    [
                        (ends[0] + (ends[1] - ends[0]) * u, 0.13, 0.0)
                        for u in (0, 0.25, 0.5, 0.75, 1)
                    ],
                )[0]
            except LayoutImpossible:
                continue
            break
        else:
            raise LayoutImpossible("no StopCube arrangement found")
        return {
            "visit": visit,
            "speed": speed,
            "step": step,
            "ends": ends,
            "length": length,
            "target_s": frac * length,
            "phase": phase,
            "visits": visits,
            "button": btn,
        }

    @staticmethod
    def _s(length: float, phase: float, step: float, t: int) -> float:
        """The cube's distance from the first end after ``t`` steps (a triangle wave)."""
        u = (phase + step * t) % (2 * length)
        return u if u <= length else 2 * length - u

    def _visits(
        self, length: float, target: float, phase: float, step: float, k: int
    ) -> list[tuple[int, int, int]]:
        """(first step over the target, step nearest its centre, last step over it) of the
        first ``k`` visits."""
        out: list[tuple[int, int, int]] = []
        t, start = 0, None
        while len(out) < k:
            d = abs(self._s(length, phase, step, t) - target)
            if d < objects.TARGET_RADIUS and start is None:
                start = t
            elif d >= objects.TARGET_RADIUS and start is not None:
                ds = [abs(self._s(length, phase, step, u) - target) for u in range(start, t)]
                out.append((start, start + int(np.argmin(ds)), t - 1))
                start = None
            t += 1
        return out

    def cube_xy(self, t: int) -> np.ndarray:
        lay = self.layout
        a, b = lay["ends"]
        s = self._s(lay["length"], lay["phase"], lay["step"], t)
        return a + (b - a) * (s / lay["length"])

    def build(self) -> None:
        self.cube = objects.cube(self.scene, "cube_red", "red")
        self.target = objects.disc(self.scene, "target", "purple")
        self.button = objects.button(self.scene, "button")

    def place(self) -> None:
        lay = self.layout
        a, b = lay["ends"]
        objects.set_pose(self.target, (*(a + (b - a) * lay["target_s"] / lay["length"]), 0.001))
        objects.set_pose(self.button, (*lay["button"], 0.0))
        self._move_cube(0)

    def _move_cube(self, t: int) -> None:
        objects.set_pose(self.cube, (*self.cube_xy(t), objects.CUBE_HALF))

    def reset_events(self) -> None:
        self.press = skills.ButtonTracker(self.button)
        self.visits = 0
        self.over = False
        self.stopped_at: int | None = None

    def over_target(self) -> bool:
        lay = self.layout
        s = self._s(lay["length"], lay["phase"], lay["step"], self.t)
        return abs(s - lay["target_s"]) < objects.TARGET_RADIUS

    def tick(self) -> None:
        if self.stopped_at is not None:
            return
        k = self.layout["visit"]
        if self.press.update(self):
            self.stopped_at = self.t  # the cube stays where the last step left it
            if self.over and self.visits == k:
                self.done = True
            else:
                when = "during" if self.over else "after" if self.visits else "before"
                self.failure_reason = (
                    f"button pressed {when} visit {self.visits} of the cube, asked for visit {k}"
                )
            return
        self._move_cube(self.t)
        over = self.over_target()
        if over and not self.over:
            self.visits += 1
        elif self.over and not over and self.visits == k:
            self.failure_reason = f"the cube left the target after visit {k} without a press"
        self.over = over

    def goal(self) -> str:
        return (
            "press the button to stop the cube exactly at the target on its "
            f"{ORDINALS[self.layout['visit']]} visit"
        )

    def plan(self) -> Iterator[Subgoal]:
        top = objects.actor_position(self.button) + np.array([0.0, 0.0, objects.BUTTON_TOP])
        due = self.layout["visits"][-1][1] + 1 - PRESS_LEAD
        k = self.layout["visit"]
        px = pixel_of(self, objects.actor_position(self.button))
        yield Subgoal(
            "move above the button",
            f"move above the button at {px}",
            [
                Waypoint(None, CLOSED, hold=skills.GRIP_STEPS // 2),
                Waypoint(objects.top_grasp(top, 0.0, HOVER), CLOSED),
            ],
        )
        yield Subgoal(
            f"press the button when the cube reaches the target for the {ORDINALS[k]} time",
            f"press the button at {px} when the cube reaches the target at "
            f"{pixel_of(self, objects.actor_position(self.target))} for the {ORDINALS[k]} time",
            [
                Waypoint(None, CLOSED, hold=due + 1, until=lambda: self.t >= due),
                Waypoint(
                    objects.top_grasp(top, 0.0, -skills.PRESS_DEPTH), CLOSED, hold=4, noisy=False
                ),
                Waypoint(objects.top_grasp(top, 0.0, HOVER), CLOSED),
            ],
        )
