"""Reference suite (object memory): PickHighlight, VideoRepick, VideoPlaceButton,
VideoPlaceOrder.

- *PickHighlight*: pressing the button shows white discs under some cubes for a few steps; the
  robot then picks up (lifts and puts back down) every highlighted cube and presses the button
  again to stop.
- *VideoRepick*: the video shows the robot moving one cube to a new spot, after which pairs of
  cubes trade places along arcs (the robot holds still); the robot then picks up and puts down
  that same cube N times and presses the button.
- *VideoPlaceButton* / *VideoPlaceOrder*: the video shows the robot carrying a cube from target
  to target (identical purple discs), pressing a button once in between (PlaceButton) or between
  every two placements (PlaceOrder); in *hard* two of the targets then trade places. The robot
  then puts the named cube on the target chosen by a temporal ("immediately before the button
  was pressed") or ordinal ("the third target") reference.

Scripted motions (highlights, swaps) start from events the trackers detect in ``tick()`` (the
first button press, the video's last release) and follow ``self.t`` from there. Cubes are
dynamic bodies: while swapping, ``tick()`` sets their pose every step with zero velocity.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from dataforge.manip.executor import OPEN, Subgoal, Waypoint
from dataforge.pipelines.robomme import objects, skills
from dataforge.pipelines.robomme.env import RobommeEnv, pixel_of
from dataforge.pipelines.robomme.layout import X_RANGE, Y_RANGE, LayoutImpossible, yaw

COLORS3 = ("red", "green", "blue")
# Fifteen distinguishable cube colours for VideoRepick's cluttered scenes (RGBA).
PALETTE: dict[str, tuple[float, ...]] = {
    **{c: objects.COLORS[c] for c in ("red", "green", "blue", "yellow", "purple", "orange")},
    **{c: objects.COLORS[c] for c in ("gray", "white", "black", "brown")},
    "pink": (0.95, 0.55, 0.75, 1.0),
    "cyan": (0.2, 0.8, 0.85, 1.0),
    "navy": (0.08, 0.1, 0.4, 1.0),
    "olive": (0.5, 0.5, 0.12, 1.0),
    "lime": (0.6, 0.95, 0.3, 1.0),
}
TIMES = {1: "once", 2: "twice", 3: "three times"}
ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth"}

HIGHLIGHT_STEPS = 25  # PickHighlight: how long the white discs stay after the press
SETTLE = 30  # swaps start this long after the video's last release, once the robot is still
STILL = 0.02  # joint speed (rad/s, norm) below which the robot counts as still
REST = objects.top_grasp(np.array([-0.24, 0.0, 0.3]))  # out of the way while the scene changes
SWAP_STEPS = 40
SWAP_GAP = 8
SWAP_AMPLITUDE = 0.07  # sideways excursion of a swap arc: two cubes pass 14 cm apart
SWAP_CLEAR = 0.07  # distance from a swap arc to every other object
BUTTON_CLEAR = 0.11  # between the button and anything else
BUTTON_X = (-0.16, 0.1)  # the button stays where a straight-wristed press reaches it
BUTTON_Y = (-0.22, 0.22)
WORKSPACE_MARGIN = 0.02  # swap arcs stay this close to the workspace at most
BASE_X = -0.615  # the robot base (env.py)


def ease(u: float) -> float:
    """Smooth 0 -> 1 over u in [0, 1] (zero speed at both ends)."""
    u = min(max(u, 0.0), 1.0)
    return float(0.5 - 0.5 * np.cos(np.pi * u))


def hold_pose(actor: Any, position: Any, yaw_: float) -> None:
    """Put a dynamic actor at a pose, at rest."""
    objects.set_pose(actor, position, yaw_)
    actor.set_linear_velocity(np.zeros(3))
    actor.set_angular_velocity(np.zeros(3))


def swap_path(pa: np.ndarray, pb: np.ndarray, u: float) -> tuple[np.ndarray, np.ndarray]:
    """Where two objects trading places (a from ``pa``, b from ``pb``) are at progress ``u``:
    opposite points of an ellipse around their midpoint, so they never meet."""
    pa, pb = np.asarray(pa, dtype=np.float64)[:2], np.asarray(pb, dtype=np.float64)[:2]
    mid, half = (pa + pb) / 2, (pb - pa) / 2
    side = np.array([-half[1], half[0]]) / max(np.hypot(*half), 1e-9)
    s = ease(u)
    off = -half * np.cos(np.pi * s) + side * SWAP_AMPLITUDE * np.sin(np.pi * s)
    return mid + off, mid - off


def swap_clear(pa: np.ndarray, pb: np.ndarray, others: list[np.ndarray]) -> bool:
    """Both arcs of a swap stay ``SWAP_CLEAR`` from every point in ``others`` and near the
    workspace."""
    for u in np.linspace(0.0, 1.0, 21):
        for p in swap_path(pa, pb, float(u)):
            if not (X_RANGE[0] - WORKSPACE_MARGIN <= p[0] <= X_RANGE[1] + WORKSPACE_MARGIN):
                return False
            if not (Y_RANGE[0] - WORKSPACE_MARGIN <= p[1] <= Y_RANGE[1] + WORKSPACE_MARGIN):
                return False
            if any(np.hypot(*(p - np.asarray(q)[:2])) < SWAP_CLEAR for q in others):
                return False
    return True


def scatter(
    rng: np.random.Generator,
    n: int,
    clearance: float,
    *,
    region: tuple[tuple[float, float], tuple[float, float]] | None = None,
    restarts: int = 40,
    tries: int = 3000,
) -> tuple[list[np.ndarray], np.ndarray]:
    """A button and ``n`` spots ``clearance`` apart (``BUTTON_CLEAR`` from the button), the
    spots inside ``region`` ((x range, y range); default the workspace)."""
    xr, yr = region or (X_RANGE, Y_RANGE)
    for _ in range(restarts):
        spots: list[np.ndarray] = []
        for _ in range(tries):
            p = np.array([rng.uniform(*xr), rng.uniform(*yr)])
            if all(np.hypot(*(p - q)) >= clearance for q in spots):
                spots.append(p)
                if len(spots) == n:
                    break
        if len(spots) < n:
            continue
        for _ in range(tries):
            b = np.array([rng.uniform(*BUTTON_X), rng.uniform(*BUTTON_Y)])
            if all(np.hypot(*(b - q)) >= BUTTON_CLEAR for q in spots):
                return spots, b
    raise LayoutImpossible(f"cannot scatter {n} objects {clearance} m apart and a button")


def button_text(env: Any) -> tuple[str, str]:
    return "press the button", (
        f"press the button at {pixel_of(env, objects.actor_position(env.button))}"
    )


def pick_subgoal(env: Any, cube: Any, name: str, *, video: bool = False) -> Subgoal:
    text = f"pick up the {name} cube"
    where = pixel_of(env, objects.actor_position(cube))
    return Subgoal(text, f"{text} at {where}", skills.pick(env, cube), video=video)


def put_subgoal(
    env: Any, spot: np.ndarray, what: str, *, yaw_: float = 0.0, video: bool = False
) -> Subgoal:
    """Lower the held cube (grasped with hand yaw ``yaw_``) onto the table point ``spot``
    (``what`` names the spot), turning the hand by a multiple of 90 degrees if that brings it
    closer to pointing away from the robot base (far corners are reached more easily)."""
    spot = np.array([spot[0], spot[1], 0.0])
    radial = float(np.arctan2(spot[1], spot[0] - BASE_X))
    hand = radial + objects.grasp_yaw(yaw_ - radial)
    return Subgoal(
        f"place the cube on {what}",
        f"place the cube on {what} at {pixel_of(env, spot)}",
        skills.place(spot, yaw=hand),
        video=video,
    )


def rest_and_wait(env: Any, what: str, steps: int) -> Subgoal:
    """A video subgoal: move out of the way, then hold still until the scene changes are over."""
    return Subgoal(
        f"watch {what}",
        f"watch {what}",
        [Waypoint(REST, OPEN), Waypoint(None, OPEN, hold=steps, until=env.video_done)],
        video=True,
    )


def robot_still(env: Any) -> bool:
    return float(env.agent.robot.get_qvel()[0, :7].norm()) < STILL


def held_yaw(cube: Any) -> float:
    """The grasp yaw a held cube was picked with (keep it when putting the cube down)."""
    return objects.grasp_yaw(objects.actor_yaw(cube))


# ---------------------------------------------------------------------------------------------
class PickHighlight(RobommeEnv):
    """Press the button (white discs appear under the goal cubes for ``HIGHLIGHT_STEPS``), pick
    up every highlighted cube, then press the button again (paper Table 17: 3 / 4 / 6 cubes, the
    hard ones clustered; 1 / 2 / 3 goal cubes)."""

    TASK = "PickHighlight"
    SUITE = "Reference"
    CONFIG: ClassVar[dict[str, tuple[int, int]]] = {
        "easy": (3, 1),
        "medium": (4, 2),
        "hard": (6, 3),
    }

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        n, n_goals = self.CONFIG[self.difficulty]
        if self.difficulty == "hard":  # a cluster: all cubes within a 24 cm x 30 cm patch
            x0 = rng.uniform(X_RANGE[0], X_RANGE[1] - 0.24)
            y0 = rng.uniform(Y_RANGE[0], Y_RANGE[1] - 0.30)
            region = ((x0, x0 + 0.24), (y0, y0 + 0.30))
            spots, button = scatter(rng, n, 0.085, region=region)
        else:
            spots, button = scatter(rng, n, 0.11)
        colors = [str(c) for c in rng.permutation(COLORS3)]
        colors += [str(c) for c in rng.choice(COLORS3, n - len(colors))] if n > 3 else []
        return {
            "colors": colors[:n],
            "cubes": [(*p, yaw(rng)) for p in spots],
            "goals": sorted(int(k) for k in rng.permutation(n)[:n_goals]),
            "button": button,
        }

    def build(self) -> None:
        lay = self.layout
        self.cubes = [
            objects.cube(self.scene, f"cube_{k}_{c}", c) for k, c in enumerate(lay["colors"])
        ]
        self.highlights = [
            objects.disc(self.scene, f"highlight_{k}", "white") for k in lay["goals"]
        ]
        self.button = objects.button(self.scene, "button")

    def place(self) -> None:
        lay = self.layout
        for actor, (x, y, a) in zip(self.cubes, lay["cubes"], strict=True):
            objects.set_pose(actor, (x, y, objects.CUBE_HALF), a)
        self.parked = [self.park_pose() for _ in self.highlights]
        for disc, pose in zip(self.highlights, self.parked, strict=True):
            disc.set_pose(pose)
        objects.set_pose(self.button, (*lay["button"], 0.0))

    def reset_events(self) -> None:
        self.trackers = [skills.PickTracker(c) for c in self.cubes]
        self.press = skills.ButtonTracker(self.button)
        self.highlight_t: int | None = None
        self.highlit = False
        self.picked: set[int] = set()

    def tick(self) -> None:
        goals = self.layout["goals"]
        if self.press.update(self):
            if self.press.presses == 1:
                self.highlight_t = self.t
                self.show(True)
            elif len(self.picked) < len(goals) or any(t.held for t in self.trackers):
                self.failure_reason = (
                    f"button pressed to stop after {len(self.picked)} of {len(goals)} cubes"
                )
            else:
                self.done = True
        if self.highlit and self.t >= self.highlight_t + HIGHLIGHT_STEPS:
            self.show(False)
        for k, tracker in enumerate(self.trackers):
            picked, _ = tracker.update(self)
            if not picked:
                continue
            if self.press.presses == 0:
                self.failure_reason = "picked a cube before pressing the button"
            elif k not in goals:
                self.failure_reason = "picked a cube that was not highlighted"
            else:
                self.picked.add(k)

    def show(self, visible: bool) -> None:
        """Put the white discs under the goal cubes, or park them."""
        self.highlit = visible
        for disc, k, pose in zip(self.highlights, self.layout["goals"], self.parked, strict=True):
            if visible:
                p = objects.actor_position(self.cubes[k])
                objects.set_pose(disc, (p[0], p[1], 0.001))
            else:
                disc.set_pose(pose)

    def goal(self) -> str:
        return (
            "first press the button, then pick up all highlighted cubes, "
            "finally press the button again to stop"
        )

    def plan(self) -> Iterator[Subgoal]:
        yield Subgoal(*button_text(self), skills.press(self.button))
        for k in self.layout["goals"]:
            cube = self.cubes[k]
            home = objects.actor_position(cube)
            yield pick_subgoal(self, cube, f"highlighted {self.layout['colors'][k]}")
            yield put_subgoal(self, home, "the table", yaw_=held_yaw(cube))
        simple, grounded = button_text(self)
        yield Subgoal(
            f"{simple} again to stop",
            f"{grounded} again to stop",
            skills.press(self.button),
        )


# ---------------------------------------------------------------------------------------------
class VideoRepick(RobommeEnv):
    """Watch the robot move one cube (then cubes swap places), pick up and put down that same
    cube N times, then press the button (paper Table 18: 3 cubes of one colour with 1-2 / 2-3
    swaps; hard: 15 cubes of different colours, no swaps; 1-3 repetitions)."""

    TASK = "VideoRepick"
    SUITE = "Reference"
    VIDEO = True
    CONFIG: ClassVar[dict[str, tuple[int, tuple[int, int]]]] = {
        "easy": (3, (1, 2)),
        "medium": (3, (2, 3)),
        "hard": (15, (0, 0)),
    }

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        n, swap_range = self.CONFIG[self.difficulty]
        reps = int(rng.integers(1, 4))
        if n > 3:
            colors = [str(c) for c in rng.permutation(list(PALETTE))[:n]]
        else:
            colors = [str(rng.choice(COLORS3))] * n
        for _ in range(50):
            spots, button = scatter(rng, n + 1, 0.075 if n > 3 else 0.12)
            chosen = int(rng.integers(0, n))
            n_swaps = int(rng.integers(swap_range[0], swap_range[1] + 1))
            at = [np.asarray(p) for p in spots[:n]]
            at[chosen] = spots[n]  # where the video puts the chosen cube
            swaps = self._swaps(rng, at, button, chosen, n_swaps)
            if swaps is not None:
                return {
                    "colors": colors,
                    "cubes": [(*p, yaw(rng)) for p in spots[:n]],
                    "chosen": chosen,
                    "spot": spots[n],
                    "swaps": swaps,
                    "repetitions": reps,
                    "button": button,
                }
        raise LayoutImpossible("no clear swap sequence found")

    @staticmethod
    def _swaps(
        rng: np.random.Generator,
        at: list[np.ndarray],
        button: np.ndarray,
        chosen: int,
        n_swaps: int,
    ) -> list[tuple[int, int]] | None:
        """Pairs of cubes trading places one after the other, every arc clear of the other
        cubes and the button, at least one moving the chosen cube (None: none found)."""
        if n_swaps == 0:
            return []
        for _ in range(30):
            pos = [p.copy() for p in at]
            swaps: list[tuple[int, int]] = []
            for _ in range(n_swaps):
                a, b = (int(k) for k in rng.choice(len(pos), 2, replace=False))
                others = [p for k, p in enumerate(pos) if k not in (a, b)] + [button]
                if not swap_clear(pos[a], pos[b], others):
                    break
                swaps.append((a, b))
                pos[a], pos[b] = pos[b], pos[a]
            if len(swaps) == n_swaps and any(chosen in s for s in swaps):
                return swaps
        return None

    def build(self) -> None:
        lay = self.layout
        self.cubes = [
            objects.cube(self.scene, f"cube_{k}_{c}", PALETTE[c])
            for k, c in enumerate(lay["colors"])
        ]
        self.button = objects.button(self.scene, "button")

    def place(self) -> None:
        lay = self.layout
        for actor, (x, y, a) in zip(self.cubes, lay["cubes"], strict=True):
            objects.set_pose(actor, (x, y, objects.CUBE_HALF), a)
        objects.set_pose(self.button, (*lay["button"], 0.0))

    def reset_events(self) -> None:
        self.trackers = [skills.PickTracker(c) for c in self.cubes]
        self.press = skills.ButtonTracker(self.button)
        self.release_t: int | None = None  # the video's placement
        self.swap_t: int | None = None  # the first swap's start
        self.swapped = 0
        self.swap_from: tuple[np.ndarray, np.ndarray, float, float] | None = None

    def video_done(self) -> bool:
        return self.release_t is not None and self.swapped == len(self.layout["swaps"])

    def tick(self) -> None:
        lay = self.layout
        chosen, reps = lay["chosen"], lay["repetitions"]
        for k, tracker in enumerate(self.trackers):
            picked, released = tracker.update(self)
            if picked and k != chosen:
                self.failure_reason = "picked a wrong cube"
            elif picked and tracker.picks - 1 > reps:
                self.failure_reason = f"more than {reps} repetitions"
            if released and k == chosen and self.release_t is None:
                self.release_t = self.t
        self.run_swaps()
        if self.press.update(self):
            tracker = self.trackers[chosen]
            done_reps = tracker.places - 1
            if not self.video_done() or tracker.held or done_reps != reps:
                self.failure_reason = (
                    f"button pressed after {max(done_reps, 0)} of {reps} repetitions"
                )
            else:
                self.done = True

    def run_swaps(self) -> None:
        """Move the pair of cubes of the current swap along their arcs."""
        swaps = self.layout["swaps"]
        if self.release_t is None or self.swapped == len(swaps):
            return
        if self.swap_t is None:
            if self.t < self.release_t + SETTLE or not robot_still(self):
                return
            self.swap_t = self.t
        start = self.swap_t + self.swapped * (SWAP_STEPS + SWAP_GAP)
        if self.t < start:
            return
        a, b = swaps[self.swapped]
        if self.swap_from is None:
            ca, cb = self.cubes[a], self.cubes[b]
            self.swap_from = (
                objects.actor_position(ca),
                objects.actor_position(cb),
                objects.actor_yaw(ca),
                objects.actor_yaw(cb),
            )
        pa, pb, ya, yb = self.swap_from
        u = (self.t - start) / SWAP_STEPS
        qa, qb = swap_path(pa, pb, u)
        hold_pose(self.cubes[a], (*qa, objects.CUBE_HALF), ya)
        hold_pose(self.cubes[b], (*qb, objects.CUBE_HALF), yb)
        if u >= 1.0:
            self.swapped += 1
            self.swap_from = None

    def goal(self) -> str:
        times = TIMES[self.layout["repetitions"]]
        return (
            f"watch the video carefully, then pick up the same cube that was previously picked "
            f"{times}, and finally press the button to stop"
        )

    def plan(self) -> Iterator[Subgoal]:
        lay = self.layout
        cube = self.cubes[lay["chosen"]]
        name = lay["colors"][lay["chosen"]]
        yield pick_subgoal(self, cube, name, video=True)
        yield put_subgoal(self, lay["spot"], "the table", yaw_=held_yaw(cube), video=True)
        if lay["swaps"]:
            wait = SETTLE + len(lay["swaps"]) * (SWAP_STEPS + SWAP_GAP) + 100
            yield rest_and_wait(self, "the cubes swap places", wait)
        for _ in range(lay["repetitions"]):
            home = objects.actor_position(cube)
            yield pick_subgoal(self, cube, name)
            yield put_subgoal(self, home, "the table", yaw_=held_yaw(cube))
        yield Subgoal(*button_text(self), skills.press(self.button))


# ---------------------------------------------------------------------------------------------
class _PlaceSequence(RobommeEnv):
    """Shared machinery of VideoPlaceButton and VideoPlaceOrder: the video carries the first cube
    over every target in a random order with button presses in between (and, in hard, swaps two
    targets other than the last one); the robot then puts that cube on the answer target.

    Subclasses choose the presses and the answer in ``reference(rng, k)`` and word the goal."""

    SUITE = "Reference"
    VIDEO = True
    CONFIG: ClassVar[dict[str, tuple[int, int, bool]]] = {}

    def reference(self, rng: np.random.Generator, k: int) -> dict[str, Any]:
        """{"presses_after": placements after which the button is pressed, "answer": the
        index in the visiting order of the answer target, ...} for ``k`` targets."""
        raise NotImplementedError

    def sample_layout(self, rng: np.random.Generator) -> dict[str, Any]:
        n_cubes, k, swap = self.CONFIG[self.difficulty]
        spots, button = scatter(rng, n_cubes + k, 0.11)
        colors = [str(c) for c in rng.permutation(COLORS3)[:n_cubes]]
        order = [int(j) for j in rng.permutation(k)]
        ref = self.reference(rng, k)
        swaps: list[tuple[int, int]] = []
        if swap:  # two targets other than the last visited (it holds the cube) trade places
            a, b = sorted(int(j) for j in rng.choice(order[:-1], 2, replace=False))
            swaps.append((a, b))
        return {
            "colors": colors,
            "goal_color": colors[0],
            "cubes": [(*p, yaw(rng)) for p in spots[:n_cubes]],
            "targets": spots[n_cubes:],
            "order": order,
            "swaps": swaps,
            "button": button,
            **ref,
            "answer_target": order[ref["answer"]],
        }

    def build(self) -> None:
        lay = self.layout
        self.cubes = [objects.cube(self.scene, f"cube_{c}", c) for c in lay["colors"]]
        self.targets = [
            objects.disc(self.scene, f"target_{j}", "purple") for j in range(len(lay["targets"]))
        ]
        self.button = objects.button(self.scene, "button")

    def place(self) -> None:
        lay = self.layout
        for actor, (x, y, a) in zip(self.cubes, lay["cubes"], strict=True):
            objects.set_pose(actor, (x, y, objects.CUBE_HALF), a)
        for actor, xy in zip(self.targets, lay["targets"], strict=True):
            objects.set_pose(actor, (*xy, 0.001))
        objects.set_pose(self.button, (*lay["button"], 0.0))

    def reset_events(self) -> None:
        self.trackers = [skills.PickTracker(c) for c in self.cubes]
        self.press = skills.ButtonTracker(self.button)
        self.last_t: int | None = None  # the video's last placement
        self.swap_t: int | None = None
        self.swapped = 0

    def video_done(self) -> bool:
        return self.last_t is not None and self.swapped == len(self.layout["swaps"])

    def tick(self) -> None:
        lay = self.layout
        k = len(lay["targets"])
        for c, tracker in enumerate(self.trackers):
            picked, released = tracker.update(self)
            if picked and c != 0:
                self.failure_reason = "picked a wrong cube"
            if not released or c != 0:
                continue
            if tracker.places == k:
                self.last_t = self.t
            elif tracker.places > k:
                self.on_release()
        self.run_swaps()
        if self.press.update(self) and self.press.presses > len(lay["presses_after"]):
            self.failure_reason = "pressed the button after the video"

    def on_release(self) -> None:
        """An execution-phase release: on the answer target succeeds, on another one fails."""
        cube = self.cubes[0]
        for j, target in enumerate(self.targets):
            xy = objects.actor_position(target)
            if skills.on_target(cube, xy, objects.TARGET_RADIUS, max_z=0.06):
                if j == self.layout["answer_target"] and self.video_done():
                    self.done = True
                else:
                    self.failure_reason = "placed the cube on a wrong target"

    def run_swaps(self) -> None:
        swaps = self.layout["swaps"]
        if self.last_t is None or self.swapped == len(swaps):
            return
        if self.swap_t is None:
            if self.t < self.last_t + SETTLE or not robot_still(self):
                return
            self.swap_t = self.t
        start = self.swap_t
        a, b = swaps[0]
        pa, pb = self.layout["targets"][a], self.layout["targets"][b]
        u = (self.t - start) / SWAP_STEPS
        qa, qb = swap_path(pa, pb, u)
        moving = 0.0015 if u < 1.0 else 0.001  # above the resting discs while they pass
        objects.set_pose(self.targets[a], (*qa, moving))
        objects.set_pose(self.targets[b], (*qb, moving + 0.0003 * (u < 1.0)))
        if u >= 1.0:
            self.swapped = 1

    def plan(self) -> Iterator[Subgoal]:
        lay = self.layout
        cube, color = self.cubes[0], lay["goal_color"]
        order = lay["order"]
        yield pick_subgoal(self, cube, color, video=True)
        for i, j in enumerate(order):
            xy = objects.actor_position(self.targets[j])
            yield put_subgoal(self, xy, "the target", yaw_=held_yaw(cube), video=True)
            if i + 1 in lay["presses_after"]:
                yield Subgoal(*button_text(self), skills.press(self.button), video=True)
            if i < len(order) - 1:
                yield pick_subgoal(self, cube, color, video=True)
        if lay["swaps"]:
            yield rest_and_wait(self, "two targets swap places", SETTLE + SWAP_STEPS + 100)
        yield pick_subgoal(self, cube, color)
        xy = objects.actor_position(self.targets[lay["answer_target"]])
        yield put_subgoal(self, xy, "the target", yaw_=held_yaw(cube))


class VideoPlaceButton(_PlaceSequence):
    """Watch the cube visit the targets with one button press in between, then put it on the
    target it was on immediately before / after the press (paper Table 19: 1 / 3 / 3 cubes,
    3 / 4 / 4 targets, two targets swap in hard)."""

    TASK = "VideoPlaceButton"
    CONFIG: ClassVar = {"easy": (1, 3, False), "medium": (3, 4, False), "hard": (3, 4, True)}

    def reference(self, rng: np.random.Generator, k: int) -> dict[str, Any]:
        relation = str(rng.choice(["before", "after"]))
        # the answer is never the last target visited (the cube is still there)
        last_press = k - 1 if relation == "before" else k - 2
        after = int(rng.integers(1, last_press + 1))
        answer = after - 1 if relation == "before" else after
        return {"presses_after": [after], "relation": relation, "answer": answer}

    def goal(self) -> str:
        lay = self.layout
        return (
            f"watch the video carefully and place the {lay['goal_color']} cube on the target "
            f"where it was placed immediately {lay['relation']} the button was pressed"
        )


class VideoPlaceOrder(_PlaceSequence):
    """Watch the cube visit the targets one after the other (the button pressed between
    placements), then put it on the n-th target it visited (paper Table 20: 1 / 3 / 3 cubes,
    4 targets, two targets swap in hard)."""

    TASK = "VideoPlaceOrder"
    CONFIG: ClassVar = {"easy": (1, 4, False), "medium": (3, 4, False), "hard": (3, 4, True)}

    def reference(self, rng: np.random.Generator, k: int) -> dict[str, Any]:
        answer = int(rng.integers(0, k - 1))  # never the last one (the cube is still there)
        return {"presses_after": list(range(1, k)), "answer": answer}

    def goal(self) -> str:
        lay = self.layout
        return (
            f"watch the video carefully and place the {lay['goal_color']} cube on the "
            f"{ORDINALS[lay['answer'] + 1]} target where it was placed"
        )
