"""The FindingDory oracle agent on a real generated episode: it starts at the plan's start, its
poses follow its actions, it picks each object in reach and in view, carries it out of the
world until it places it at the recorded goal pose, walks away and stops; re-planning, blind
picks, the frame budget and determinism."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dfhelpers import needs_house_generator, run_cli

from dataforge.errors import DatasetError, UsageError
from dataforge.nav.follower import wrap
from dataforge.pipelines.findingdory import oracle
from dataforge.pipelines.findingdory.config import HeadCamera
from dataforge.pipelines.findingdory.day_world import plan_world
from dataforge.pipelines.findingdory.goals import coverage_of, instance_ids_of
from dataforge.pipelines.findingdory.plan import EpisodePlan
from dataforge.store import open_dataset

pytestmark = needs_house_generator()

CAMERA = HeadCamera(width=120, height=160)  # the plan's visibility-check size, same field of view
FORWARD_M, TURN_DEG = 0.25, 10.0
REACH_M = 1.0  # EpisodesConfig.reach_m: a pick spot's distance to the object, at most
WALK_AWAY_M = 3.0  # EpisodesConfig.walk_away_m
MIN_COVERAGE = 0.001  # EpisodesConfig.min_coverage, the agent's default
TOL = 2e-6  # poses are rounded to 6 decimals


@pytest.fixture(scope="module")
def episode(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, EpisodePlan]:
    out = tmp_path_factory.mktemp("fd-oracle") / "ds"
    res = run_cli(
        "findingdory",
        "episodes",
        "--scenes",
        "generate:1",
        "--room-spec",
        "kitchen-living-room",
        "--episodes",
        "1",
        "--rearrangements",
        "2",
        "--seed",
        "3",
        "--out",
        str(out),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    (ep,) = list(open_dataset(Path(out)).episodes())
    raw = np.asarray(ep.read()["house_json"]).tobytes()
    (plan_dict,) = ep.metadata["episodes"]
    return raw, EpisodePlan.from_dict(plan_dict)


class Run:
    """One oracle run on a fresh world, every render counted."""

    def __init__(self, raw: bytes, plan: EpisodePlan, **kw: Any) -> None:
        self.plan = plan
        self.day = plan_world(raw, {}, plan, camera=CAMERA, agent_radius=0.25)
        self.backend = self.day
        self.renders = 0
        render = self.backend.render

        def counted(*a: Any, **k: Any) -> Any:
            self.renders += 1
            return render(*a, **k)

        self.backend.render = counted  # type: ignore[method-assign]
        self.agent = oracle.OracleAgent(
            self.day, plan, camera=CAMERA, forward_m=FORWARD_M, turn_deg=TURN_DEG, **kw
        )
        self.records = list(self.agent.run())

    def ids(self, object_id: str) -> tuple[int, ...]:
        return instance_ids_of(self.backend.ids, [object_id])

    def coverage(self, k: int, object_id: str) -> float:
        return coverage_of(self.records[k].frame.instance, self.ids(object_id))

    def shows(self, k: int, object_id: str) -> bool:
        return bool(np.isin(self.records[k].frame.instance, self.ids(object_id)).any())


@pytest.fixture(scope="module")
def run(episode: tuple[bytes, EpisodePlan]) -> Run:
    return Run(*episode)


def test_the_day_starts_at_the_plan_start_and_ends_with_stop(run: Run) -> None:
    recs, plan = run.records, run.plan
    assert run.agent.ended == "done"
    assert [r.index for r in recs] == list(range(len(recs)))
    first = recs[0]
    assert (first.action, first.phase, first.rearrangement) == (oracle.SPAWN, "start", -1)
    assert first.position == pytest.approx(plan.start.position, abs=TOL)
    assert first.yaw == pytest.approx(plan.start.yaw % 360.0, abs=TOL)
    assert recs[-1].action == oracle.STOP and recs[-1].phase == "walk_away"
    assert sum(r.action == oracle.STOP for r in recs) == 1
    assert {r.action for r in recs[1:]} <= set(oracle.ACTION_NAMES)
    assert {r.phase for r in recs} <= set(oracle.PHASES)
    assert all(0.0 <= r.yaw < 360.0 for r in recs)
    assert all(r.position[1] == plan.start.position[1] for r in recs)
    # every frame drawn once at most; frames with nothing changed share the previous one
    assert run.renders <= len(recs)
    for a, b in itertools.pairwise(recs):
        if b.action in (oracle.EMPTY, oracle.STOP):
            assert b.frame is a.frame


def test_consecutive_poses_differ_exactly_as_the_action_says(run: Run) -> None:
    moves = Counter(b.action for b in run.records[1:])
    # a day walks to and between the objects: forward steps and turns both to check
    assert moves[oracle.MOVE_FORWARD] >= 10 and moves[oracle.TURN_LEFT] + moves[oracle.TURN_RIGHT]
    for a, b in itertools.pairwise(run.records):
        dx, dz = b.position[0] - a.position[0], b.position[2] - a.position[2]
        turn = wrap(b.yaw - a.yaw)
        if b.action == oracle.MOVE_FORWARD:
            d = math.hypot(dx, dz)
            assert 0.0 < d <= FORWARD_M + TOL, b
            assert b.yaw == a.yaw
            r = math.radians(a.yaw)
            assert dx == pytest.approx(d * math.sin(r), abs=TOL)
            assert dz == pytest.approx(d * math.cos(r), abs=TOL)
        elif b.action in (oracle.TURN_LEFT, oracle.TURN_RIGHT):
            assert (dx, dz) == (0.0, 0.0)
            want = TURN_DEG if b.action == oracle.TURN_RIGHT else -TURN_DEG
            assert turn == pytest.approx(want, abs=TOL)
        else:
            assert b.action in (oracle.SNAP, oracle.DESNAP, oracle.ARM, oracle.EMPTY, oracle.STOP)
            assert (b.position, b.yaw) == (a.position, a.yaw)


def test_each_object_is_picked_in_reach_and_in_view_then_carried_in_hand(run: Run) -> None:
    recs, plan = run.records, run.plan
    snaps = [r for r in recs if r.action == oracle.SNAP]
    desnaps = [r for r in recs if r.action == oracle.DESNAP]
    blind = 0
    assert [r.rearrangement for r in snaps] == list(range(len(plan.rearrangements)))
    assert [r.rearrangement for r in desnaps] == list(range(len(plan.rearrangements)))
    for snap, desnap in zip(snaps, desnaps, strict=True):
        r = plan.rearrangements[snap.rearrangement]
        # pick spots lie within reach of the object; the follower stops within a step of one
        d = math.hypot(
            snap.position[0] - r.start_position[0], snap.position[2] - r.start_position[2]
        )
        assert d <= REACH_M + FORWARD_M, (r.object, d)
        # in view (min_coverage) in the frame the agent looked from, unless counted blind
        blind += run.coverage(snap.index - 1, r.object) < MIN_COVERAGE
        # in view for the arm's frames before the SNAP, then in hand until the DESNAP: within
        # 1.2 m of the camera in every frame (day_world.CARRY_OFFSET is 0.75 m from it)
        assert all(recs[k].action == oracle.ARM for k in range(snap.index - 10, snap.index))
        assert snap.index < desnap.index
        for k in range(snap.index, desnap.index):
            drawn = np.isin(recs[k].frame.instance, run.ids(r.object))
            assert drawn.any() and recs[k].frame.depth[drawn].max() < 1.2, (r.object, k)
        assert recs[desnap.index - 1].phase in ("nav_place", "place")
    assert run.agent.blind_picks == blind == 0  # this episode's picks are all in view
    for r in plan.rearrangements:  # the world ends with every object at its goal pose
        obj = run.backend.world.object(r.object)
        assert obj.position == pytest.approx(r.goal_position, abs=1e-9)
        assert obj.rotation == pytest.approx(r.goal_rotation, abs=1e-9)
        assert obj.parent_id == r.goal_receptacle
    for d in plan.distractors:  # distractors stay put
        assert run.backend.world.object(d.object).position == pytest.approx(d.position)


def test_events_alternate_pick_and_place_one_pair_per_rearrangement(run: Run) -> None:
    recs, plan, events = run.records, run.plan, run.agent.events
    assert [e["kind"] for e in events] == ["pick", "place"] * len(plan.rearrangements)
    last = -1
    for n, e in enumerate(events):
        k = n // 2
        r = plan.rearrangements[k]
        assert e["rearrangement"] == k and e["object"] == r.object
        rec_id = r.start_receptacle if e["kind"] == "pick" else r.goal_receptacle
        assert e["receptacle"] == rec_id
        assert last < e["first"] <= e["last"]
        action = oracle.SNAP if e["kind"] == "pick" else oracle.DESNAP
        routine_actions = [x.action for x in recs[e["first"] : e["last"] + 1]]
        assert routine_actions.count(action) == 1
        # a pick ends on its SNAP; a place on the arm's 10 frames back after its DESNAP
        tail = [action] if e["kind"] == "pick" else [action] + [oracle.ARM] * 10
        assert routine_actions[-len(tail) :] == tail
        routine = [x for x in recs[e["first"] : e["last"] + 1] if x.phase == e["kind"]]
        assert routine[0].index == e["first"] and routine[-1].index == e["last"]
        assert all(x.rearrangement == k for x in recs[e["first"] : e["last"] + 1])
        allowed = (oracle.TURN_LEFT, oracle.TURN_RIGHT, oracle.EMPTY, oracle.ARM, action)
        assert all(x.action in allowed for x in routine)
        last = e["last"]
    assert all(x.phase == "walk_away" and x.rearrangement == -1 for x in recs[last + 1 :])


def test_the_agent_walks_away_from_the_last_place(run: Run) -> None:
    end, final, plan = run.plan.end, run.records[-1], run.plan
    assert (
        math.hypot(final.position[0] - end.position[0], final.position[2] - end.position[2])
        <= FORWARD_M + TOL
    )
    assert abs(wrap(final.yaw - end.yaw)) <= TURN_DEG / 2 + TOL
    spot = plan.rearrangements[-1].place_spots[0]
    d = run.backend.grid.distance(final.position, spot.position)
    assert d >= WALK_AWAY_M - FORWARD_M - 0.1, d  # the end is >= 3 m; the agent within a step


def test_the_run_is_deterministic(episode: tuple[bytes, EpisodePlan], run: Run) -> None:
    again = Run(*episode)

    def key(recs: list[oracle.StepRecord]) -> list[tuple[Any, ...]]:
        return [(r.index, r.action, r.position, r.yaw, r.phase, r.rearrangement) for r in recs]

    assert key(again.records) == key(run.records)
    assert again.agent.events == run.agent.events
    for a, b in zip(again.records, run.records, strict=True):
        assert np.array_equal(a.frame.instance, b.frame.instance)
    # a world a run has changed is refused
    with pytest.raises(UsageError, match="plan_world"):
        next(oracle.OracleAgent(again.day, again.plan, camera=CAMERA).run())


def test_spots_without_a_view_are_replanned_then_picked_blind(
    episode: tuple[bytes, EpisodePlan],
) -> None:
    blind = Run(*episode, min_coverage=1.1)  # nothing is ever visible
    plan, recs, agent = blind.plan, blind.records, blind.agent
    assert agent.ended == "done"
    assert agent.blind_picks == len(plan.rearrangements)
    empties = [r for r in recs if r.action == oracle.EMPTY]
    assert agent.replans == len(empties) == sum(len(r.pick_spots) for r in plan.rearrangements)
    assert all(r.phase == "pick" for r in empties)
    assert [e["kind"] for e in agent.events] == ["pick", "place"] * len(plan.rearrangements)
    for e in agent.events[::2]:  # the span is the routine that picked: after every failed try
        mine = [r.index for r in empties if r.rearrangement == e["rearrangement"]]
        assert recs[e["first"]].phase == "pick" and e["first"] > max(mine)
        assert all(r.phase == "pick" for r in recs[e["first"] : e["last"] + 1])


def test_max_frames_stops_the_day(episode: tuple[bytes, EpisodePlan]) -> None:
    short = Run(*episode, max_frames=25)
    assert len(short.records) == 25 and short.agent.ended == "max_frames"


def test_plan_world_refuses_an_object_off_its_pose(
    episode: tuple[bytes, EpisodePlan],
) -> None:
    raw, plan = episode
    r = plan.rearrangements[0]
    x, y, z = r.start_position
    lifted = dataclasses.replace(r, start_position=(x, y + 0.5, z))  # hovers 0.5 m up
    bad = dataclasses.replace(plan, rearrangements=(lifted, *plan.rearrangements[1:]))
    with pytest.raises(DatasetError, match=r"does not rest on .* recorded pose"):
        plan_world(raw, {}, bad, camera=CAMERA, agent_radius=0.25)
