"""The FindingDory oracle agent's "day" (paper appendix B.2; upstream
``policies/heuristic/oracle_agent.py::OracleAgent`` driven by ``findingdory_task.py::step``).

:func:`.day_world.plan_world` rebuilds an episode's world from its stored scene and
:class:`EpisodePlan` (every rearranged object and distractor at its recorded start pose);
:class:`OracleAgent` then walks the plan and yields one :class:`StepRecord` per frame (one
action = one frame):

- frame 0 is the spawn at ``plan.start`` (action :data:`SPAWN`, -1: no action produced it);
- per rearrangement, in order: navigate (phase ``nav_pick``) to the first pick spot with a path
  (:class:`~dataforge.nav.follower.GreedyFollower`: ``forward_m`` steps, ``turn_deg`` turns,
  goal radius ``forward_m``), then (phase ``pick``) turn in ``turn_deg`` steps until facing the
  spot's yaw within ``turn_deg / 2`` (upstream ``turn_towards_goal``) and look: the object is
  "visible" when its instance mask covers at least ``min_coverage`` of the frame. If it is not
  (or the follower got stuck short of the spot), one :data:`EMPTY` frame and the next pick spot
  is tried (upstream ``retry_nav_pick``; counted in ``replans``). When no spot works the agent
  turns to face the object from where it stands and picks it even if it is still not visible
  (counted in ``blind_picks``). The arm then reaches out for :data:`ARM_FRAMES` frames
  (:data:`ARM`; the base stands still, the object stays in view) and the pick is one
  :data:`SNAP` frame: a magic grasp that takes the object out of the world and into the hand:
  it is drawn carried, low in front of the head camera, until it is placed
  (:data:`.day_world.CARRY_OFFSET`; the Stretch's arm is not modelled);
- navigate (``nav_place``) to the place spot recorded for the goal pose (the first place spot;
  the next ones only when it has no path), face its yaw, reach out for :data:`ARM_FRAMES`
  frames, put the object at the recorded goal pose with one :data:`DESNAP` frame and draw the
  arm back for :data:`ARM_FRAMES` frames with the object in view where it was put
  (``place``: the span ends on the last of them, upstream's rearrangement end);
- after the last rearrangement, walk to ``plan.end`` (within :data:`END_RADIUS_M`) and face its
  yaw (``walk_away``), then one :data:`STOP` frame.

Turns are :data:`TURN_RIGHT` (clockwise, the follower's positive turns, AI2-THOR's
RotateRight) or :data:`TURN_LEFT`; forward moves are :data:`MOVE_FORWARD` (at most ``forward_m``:
the follower shortens moves that would leave navigable space; each is one frame). Positions are
rounded to 6 decimals and yaws lie in [0, 360), so recorded poses replay exactly.

Cost: every frame is rendered once, at most: a frame whose pose and world did not change
(:data:`EMPTY`, :data:`STOP`) shares the previous frame's :class:`Frame`; the scene is rebuilt
only after a pick or a place. No randomness: the plan fixes everything.

Departures from upstream: the agent navigates to the place spot instead of teleporting there
and replaying the recorded arm sequence; the arm's frames are :data:`ARM_FRAMES` still frames
each way (upstream's pick extends the arm over ``sub_skill_num_steps`` = 10 steps,
``heuristic_pick_policy.py:45``; its place replays up to 100 recorded steps), with no
manipulation-mode switch or re-aiming and no arm drawn; the carried object is drawn at a
fixed pose ahead of the camera (upstream renders the Stretch's own gripper holding it);
"visible" is ``min_coverage`` of the image (upstream: any pixel of the smoothed mask).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dataforge.errors import DatasetError, UsageError
from dataforge.nav.follower import GreedyFollower, Pose2D, heading_to, wrap
from dataforge.pipelines.findingdory.config import HeadCamera
from dataforge.pipelines.findingdory.day_world import carry
from dataforge.pipelines.findingdory.goals import coverage_of, instance_ids_of
from dataforge.pipelines.findingdory.plan import EpisodePlan, Rearrangement, Spot
from dataforge.render.renderer import Frame
from dataforge.simulators.protocol import WorldBackend
from dataforge.world.house import HouseObject

# Action ids of upstream ``utils.py::ACTION_MAPPING`` (those the oracle uses).
STOP, MOVE_FORWARD, TURN_LEFT, TURN_RIGHT, DESNAP, EMPTY, ARM, SNAP = 0, 1, 2, 3, 5, 6, 8, 9
SPAWN = -1  # the action of frame 0: none produced it
ACTION_NAMES = {
    STOP: "stop",
    MOVE_FORWARD: "move_forward",
    TURN_LEFT: "turn_left",
    TURN_RIGHT: "turn_right",
    DESNAP: "desnap",
    EMPTY: "empty",
    ARM: "full_body_action",
    SNAP: "snap",
}
PHASES = ("start", "nav_pick", "pick", "nav_place", "place", "walk_away")
DECIMALS = 6  # positions and yaws are rounded to this many decimals
END_RADIUS_M = 0.1  # the walk-away stops this close to its goal (creation keeps it clear)
ARM_FRAMES = 10  # the arm's frames before a SNAP or DESNAP and after a DESNAP (upstream: 10)
POSE_TOL_M = 1e-4  # how far an object may be from its recorded start pose when a run starts


@dataclass(frozen=True)
class StepRecord:
    """One frame of the day: ``index`` (from 0), the ``action`` that produced it (an id of
    :data:`ACTION_NAMES`; :data:`SPAWN` for frame 0), the agent's base ``position`` (x, floor
    y, z) and ``yaw`` (degrees in [0, 360), AI2-THOR: 0 faces +z, 90 +x) after it, the
    ``phase`` (:data:`PHASES`), the ``rearrangement`` being worked on (-1: none) and the head
    camera's ``frame`` at that pose (after the action)."""

    index: int
    action: int
    position: tuple[float, float, float]
    yaw: float
    phase: str
    rearrangement: int
    frame: Frame


class _Budget(Exception):
    """``max_frames`` frames were yielded."""


class OracleAgent:
    """Walks an :class:`EpisodePlan` in a world from :func:`.day_world.plan_world` (see the module
    docstring). After :meth:`run`: ``events`` (one dict per pick and place: ``kind``,
    ``rearrangement``, ``object``, ``receptacle``, ``first``: the first frame of the routine
    that picked or placed (a pick spot given up before is outside it), ``last``: its SNAP
    frame, or the last frame of the arm drawn back after a DESNAP), ``replans`` (EMPTY
    frames), ``blind_picks`` (picks of an object not visible) and ``ended`` (``"done"`` or
    ``"max_frames"``)."""

    def __init__(
        self,
        day: WorldBackend,
        plan: EpisodePlan,
        *,
        camera: HeadCamera,
        forward_m: float = 0.25,
        turn_deg: float = 10.0,
        min_coverage: float = 0.001,
        max_frames: int = 4000,
    ) -> None:
        if max_frames < 1:
            raise UsageError(f"max_frames must be at least 1, got {max_frames}")
        self.day, self.plan, self.camera = day, plan, camera
        self.forward_m, self.turn_deg = float(forward_m), float(turn_deg)
        self.min_coverage, self.max_frames = float(min_coverage), int(max_frames)
        self.follower = GreedyFollower(
            step=self.forward_m,
            turn_deg=self.turn_deg,
            goal_radius=self.forward_m,
            split_turns=True,
            hold_deg=self.turn_deg,
        )
        # the walk-away ends within END_RADIUS_M of its goal, which is clear of receptacles
        self.end_follower = dataclasses.replace(self.follower, goal_radius=END_RADIUS_M)
        self.events: list[dict[str, Any]] = []
        self.replans = 0
        self.blind_picks = 0
        self.ended = ""
        self._reset()

    def _reset(self) -> None:
        start = self.plan.start
        self._pos = _round_xyz(start.position)
        self._yaw = _round_yaw(start.yaw)
        self._n = 0
        self._frame: Frame | None = None
        self._stale = True  # the pose or the world changed since self._frame was rendered
        self._phase, self._k = "start", -1
        self._first = -1

    # -- the day -----------------------------------------------------------------------------

    def run(self) -> Iterator[StepRecord]:
        """One :class:`StepRecord` per frame, at most ``max_frames``. The world must be as
        :func:`.day_world.plan_world` left it (a run changes it: build a new one to run again)."""
        self._check_start()
        self.events, self.replans, self.blind_picks, self.ended = [], 0, 0, ""
        self._reset()
        try:
            yield self._emit(SPAWN)
            for k, r in enumerate(self.plan.rearrangements):
                self._k = k
                yield from self._pick(k, r)
                yield from self._place(k, r)
            self._phase, self._k = "walk_away", -1
            yield from self._nav(self.plan.end.position, self.end_follower)
            yield from self._face(self.plan.end.yaw)
            yield self._emit(STOP)
            self.ended = "done"
        except _Budget:
            self.ended = "max_frames"

    def _pick(self, k: int, r: Rearrangement) -> Iterator[StepRecord]:
        self._first = -1
        visible = False
        for spot in r.pick_spots:
            self._first = -1  # the span is the routine that picks: a failed try is outside it
            self._phase = "nav_pick"
            reached, moved = yield from self._nav(spot.position)
            if not reached and not moved:
                continue  # no path from here: not a usable spot
            self._enter("pick")
            if reached:
                yield from self._face(spot.yaw)
                visible = self._visible(r.object)
                if visible:
                    break
            yield self._emit(EMPTY)  # re-plan: the next pick spot
            self.replans += 1
        if not visible:  # no spot worked: face the object from here, pick it anyway
            self._first = -1
            self._enter("pick")
            yield from self._face(heading_to(self._pos, r.start_position))
            if not self._visible(r.object):
                self.blind_picks += 1
        yield from self._arm()  # reach out: the object still in view
        carry(self.day, r.object, self._yaw)  # in hand from the SNAP frame on
        self.day.pick(r.object)  # magic grasp: the object leaves the world
        yield self._emit(SNAP)
        self._event("pick", k, r.object, r.start_receptacle)

    def _place(self, k: int, r: Rearrangement) -> Iterator[StepRecord]:
        self._first = -1
        spot: Spot | None = None
        for s in r.place_spots:  # the recorded one; the others only when it has no path
            self._phase = "nav_place"
            reached, moved = yield from self._nav(s.position)
            if reached or moved:
                spot = s
                break
        self._enter("place")
        yaw = spot.yaw if spot is not None else heading_to(self._pos, r.goal_position)
        yield from self._face(yaw)
        yield from self._arm()  # reach out with the (undrawn) object
        obj = HouseObject(r.object, r.asset, r.category, r.goal_position, r.goal_rotation)
        res = self.day.place_at(obj, r.goal_receptacle)
        if not res.ok:
            raise DatasetError(
                f"{self.plan.scene}: {r.object} does not rest on "
                f"{r.goal_receptacle} at its goal pose ({res.status})"
            )
        carry(self.day, None)
        yield self._emit(DESNAP)
        yield from self._arm()  # draw the arm back: the object in view where it was put
        self._event("place", k, r.object, r.goal_receptacle)

    # -- motion ------------------------------------------------------------------------------

    def _nav(
        self, goal: Sequence[float], follower: GreedyFollower | None = None
    ) -> Generator[StepRecord, None, tuple[bool, bool]]:
        """Follow the grid's shortest path to ``goal``; returns (reached, moved)."""
        follower = follower or self.follower
        res = follower.follow(self.day.nav, self._pos, goal, self._yaw)
        moved = False
        for (kind, value), pose in zip(res.actions, res.poses[1:], strict=True):
            if kind == "STOP":
                break
            turn = TURN_RIGHT if value > 0 else TURN_LEFT  # positive: clockwise
            action = turn if kind == "TURN" else MOVE_FORWARD
            self._set_pose(pose)
            moved = True
            yield self._emit(action)
        return res.reached, moved

    def _face(self, yaw: float) -> Iterator[StepRecord]:
        """Turn in ``turn_deg`` steps until facing ``yaw`` within ``turn_deg / 2``."""
        for _ in range(round(360.0 / self.turn_deg)):
            d = wrap(float(yaw) - self._yaw)
            if abs(d) <= self.turn_deg / 2 + 1e-9:
                return
            step = self.turn_deg if d > 0 else -self.turn_deg
            self._yaw = _round_yaw(self._yaw + step)
            self._stale = True
            yield self._emit(TURN_RIGHT if step > 0 else TURN_LEFT)

    def _arm(self) -> Iterator[StepRecord]:
        """:data:`ARM_FRAMES` frames of the arm moving, the base still."""
        for _ in range(ARM_FRAMES):
            yield self._emit(ARM)

    def _set_pose(self, pose: Pose2D) -> None:
        self._pos = _round_xyz((pose.x, self._pos[1], pose.z))
        self._yaw = _round_yaw(pose.yaw)
        self._stale = True

    # -- frames ------------------------------------------------------------------------------

    def _emit(self, action: int) -> StepRecord:
        if self._n >= self.max_frames:
            raise _Budget
        if action in (SNAP, DESNAP):
            self._stale = True  # the world changed
        if self._stale or self._frame is None:
            x, y, z = self._pos
            eye = (x, y + self.camera.height_m, z)
            self._frame = self.day.render(eye, self._yaw, self.camera.tilt_deg)
            self._stale = False
        rec = StepRecord(self._n, action, self._pos, self._yaw, self._phase, self._k, self._frame)
        self._n += 1
        return rec

    def _enter(self, phase: str) -> None:
        self._phase = phase
        if self._first < 0:
            self._first = self._n  # the next frame is the routine's first

    def _event(self, kind: str, k: int, oid: str, receptacle: str) -> None:
        self.events.append(
            {
                "kind": kind,
                "rearrangement": k,
                "object": oid,
                "receptacle": receptacle,
                "first": self._first,
                "last": self._n - 1,
            }
        )

    def _visible(self, object_id: str) -> bool:
        """Whether the current frame shows ``object_id`` on at least ``min_coverage``."""
        assert self._frame is not None and not self._stale
        ids = instance_ids_of(self.day.ids, [object_id])
        return coverage_of(self._frame.instance, ids) >= self.min_coverage

    def _check_start(self) -> None:
        day = self.day
        for r in self.plan.rearrangements:
            if not day.has(r.object):
                raise UsageError(
                    f"{r.object} is not in the world: run the oracle on a world "
                    "fresh from plan_world"
                )
            pos = day.position(r.object)
            if max(abs(a - b) for a, b in zip(pos, r.start_position, strict=True)) > POSE_TOL_M:
                raise UsageError(
                    f"{r.object} is not at its start pose: run the oracle on a "
                    "world fresh from plan_world"
                )


def _round_xyz(p: Sequence[float]) -> tuple[float, float, float]:
    x, y, z = (round(float(v), DECIMALS) + 0.0 for v in p)  # + 0.0: no -0.0
    return (x, y, z)


def _round_yaw(yaw: float) -> float:
    return round(float(yaw) % 360.0, DECIMALS) % 360.0 + 0.0
