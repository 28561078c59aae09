"""RoboMME's recovery demonstrations: one deliberately missed grasp before a normal pick.

The public benchmark's generator (``utils/task4recovery.py``, ``utils/subgoal_planner_func.py``
``solve_pickup_fail``; the harness ``generate-dataset-control-seed-readJson-advanceV3.py``)
turns it on for metadata episodes 0-5 of every split, in the tasks whose task list has a pick
outside the video (:data:`RECOVERY_TASKS`): episodes 0-2 miss *above* the grasp (+2 cube
half-sizes, 4 cm; containers 3.5 cm), episodes 3-5 miss *beside* it (4 cm, containers 3.5 cm,
along x and/or y, signs from a ``torch.Generator`` seeded with the episode seed, redrawn while
both are 0). The miss: open; move above the offset grasp (z 0.15 m, containers 0.2 m); descend
to it; close; rise back; open — then the pick as usual. Which pick: one of the episode's
non-video picks, upstream's ``randint`` on the task's layout generator (``layouts/``). There is
no other noise upstream; the paper's "5% noise" is these 6 of 100 episodes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.manip.rotations import quat_mul, yaw_quat

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor, Link


RECOVERY_TASKS = frozenset(
    {
        "PickXtimes",
        "BinFill",
        "SwingXtimes",
        "VideoUnmask",
        "ButtonUnmask",
        "VideoUnmaskSwap",
        "ButtonUnmaskSwap",
        "PickHighlight",
        "VideoRepick",
        "VideoPlaceButton",
        "VideoPlaceOrder",
    }
)
Z_EPISODES, XY_EPISODES = range(0, 3), range(3, 6)
MISS_M = {"cube": 0.04, "bin": 0.035}  # upstream: 2 x cube half-size; 0.035 for containers
READY_Z = {"cube": 0.15, "bin": 0.2}
GRIP_STEPS = 6  # upstream's gripper open/close


@dataclass(frozen=True)
class MissedGrasp:
    """Where the recovery goes: the ``pick``-th non-video pick of the episode, missed along
    ``direction`` (unit steps per axis: (0, 0, 1) above, (sx, sy, 0) beside)."""

    pick: int
    mode: str  # "z" or "xy"
    direction: tuple[int, int, int]

    def offset(self, kind: str) -> np.ndarray:
        return np.asarray(self.direction, dtype=np.float64) * MISS_M[kind]

    def to_dict(self, kind: str | None = None) -> dict[str, Any]:
        """The metadata's ``missed_grasp``; with the missed object's ``kind``, also the miss
        ``offset`` [x, y, z] in m (RoboMME's ``fail_recover_xy_signed_offset`` is its x, y)."""
        out: dict[str, Any] = {
            "pick": self.pick,
            "mode": self.mode,
            "direction": list(self.direction),
        }
        if kind is not None:
            out["kind"] = kind
            out["offset"] = [float(v) for v in self.offset(kind)]
        return out


def recovery_mode(task: str, episode: int) -> str | None:
    """ "z", "xy" or None: RoboMME's rule for which episodes demonstrate a recovery."""
    if task not in RECOVERY_TASKS:
        return None
    if episode in Z_EPISODES:
        return "z"
    if episode in XY_EPISODES:
        return "xy"
    return None


def xy_signs(seed: int) -> tuple[int, int]:
    """The signs of a sideways miss: ``randint(-1, 2, (2,))`` on a fresh torch generator seeded
    with the episode seed, redrawn while both are 0."""
    import torch

    gen = torch.Generator()
    gen.manual_seed(int(seed))
    while True:
        signs = torch.randint(-1, 2, (2,), generator=gen, dtype=torch.int64).tolist()
        if signs != [0, 0]:
            return int(signs[0]), int(signs[1])


def missed_grasp(task: str, episode: int, seed: int, pick: int) -> MissedGrasp | None:
    """The recovery of metadata episode ``episode`` of ``task`` (None when it has none)."""
    mode = recovery_mode(task, episode)
    if mode is None:
        return None
    direction = (0, 0, 1) if mode == "z" else (*xy_signs(seed), 0)
    return MissedGrasp(pick, mode, direction)


def miss_waypoints(grasp: Waypoint, miss: MissedGrasp) -> list[Waypoint]:
    """The missed grasp before ``grasp`` (a pick's grasp keyframe)."""
    pose = grasp.pose() if callable(grasp.pose) else grasp.pose
    assert pose is not None and grasp.grasp in MISS_M
    fail = np.array(pose, dtype=np.float64)
    fail[:3] += miss.offset(grasp.grasp)
    ready = fail.copy()
    ready[2] = READY_Z[grasp.grasp]
    return [
        Waypoint(None, OPEN, hold=GRIP_STEPS, noisy=False),
        Waypoint(ready, OPEN, noisy=False),
        Waypoint(fail, CLOSED, hold=GRIP_STEPS, noisy=False),
        Waypoint(ready, OPEN, hold=GRIP_STEPS, noisy=False),
    ]


def upstream_pick(task: str, seed: int, difficulty: str) -> int:
    """Which of the episode's non-video picks gets the miss: upstream's draw (``randint`` over
    its pick tasks, on the task's layout generator). Our plans make the same picks in the same
    order (each task's test checks its subgoals against upstream's task list)."""
    from dataforge.pipelines.robomme.layouts import upstream_layout

    return int(upstream_layout(task, seed, difficulty, recovery=True).params["recovery"]["choice"])


def follow(waypoints: Iterable[Waypoint], target: Actor | Link | None) -> list[Waypoint]:
    """``waypoints`` (a pick made before the miss) aimed again when each is reached: moved and
    turned with ``target`` since now, as upstream reads the object's pose again after the miss
    (which may have pushed it). Without a target they stay as they are."""
    if target is None:
        return list(waypoints)
    from dataforge.pipelines.robomme.objects import actor_position, actor_yaw

    p0, yaw0 = actor_position(target), actor_yaw(target)

    def moved(pose: np.ndarray) -> Callable[[], np.ndarray]:
        def aim() -> np.ndarray:
            turn = actor_yaw(target) - yaw0
            turn = (turn + np.pi / 4) % (np.pi / 2) - np.pi / 4  # a square's quarter turns
            out = np.array(pose, dtype=np.float64)
            out[:2] += actor_position(target)[:2] - p0[:2]
            out[3:7] = quat_mul(yaw_quat(turn), out[3:7])
            return out

        return aim

    return [
        wp if wp.pose is None or callable(wp.pose) else dataclasses.replace(wp, pose=moved(wp.pose))
        for wp in waypoints
    ]


def with_missed_grasp(
    plan: Iterable[Subgoal], miss: MissedGrasp | None, kinds: list[str] | None = None
) -> Iterator[Subgoal]:
    """``plan`` with ``miss`` put at the start of its chosen pick (picks are the non-video
    subgoals holding a grasp keyframe); the missed object's kind ("cube", "bin") is appended to
    ``kinds``. Raises if the plan has fewer picks."""
    picks = 0
    for sg in plan:
        grasp = next((wp for wp in sg.waypoints if wp.grasp), None)
        if miss is not None and grasp is not None and not sg.video:
            if picks == miss.pick:
                if kinds is not None:
                    kinds.append(str(grasp.grasp))
                waypoints = [*miss_waypoints(grasp, miss), *follow(sg.waypoints, grasp.target)]
                sg = dataclasses.replace(sg, waypoints=waypoints)  # texts, choice kept
            picks += 1
        yield sg
    if miss is not None and picks <= miss.pick:
        raise ValueError(f"the recovery's pick {miss.pick} is beyond the plan's {picks} picks")
