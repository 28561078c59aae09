"""The greedy follower turns paths into AI2-THOR-style discrete actions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from shapely.geometry import LineString, box

from dataforge.errors import UsageError
from dataforge.nav.follower import GreedyFollower, heading_to, wrap
from dataforge.nav.grid import NavGrid


def furnished_two_rooms() -> NavGrid:
    """Rooms [0,4]x[0,4] and [4,8]x[0,4] joined by a 1 m door, with a cabinet and a table."""
    walls = [LineString([(4, 0), (4, 1.5)]), LineString([(4, 2.5), (4, 4)])]
    furniture = [box(1.5, 2.5, 2.5, 3.5), box(5.2, 1.0, 6.4, 1.8)]
    return NavGrid.build(box(0, 0, 8, 4), walls + furniture, agent_radius=0.2, cell=0.05)


def test_heading_convention() -> None:
    assert heading_to((0, 0, 0), (0, 0, 1)) == pytest.approx(0.0)  # yaw 0 faces +z
    assert heading_to((0, 0, 0), (1, 0, 0)) == pytest.approx(90.0)  # yaw 90 faces +x
    assert heading_to((0, 0, 0), (0, 0, -1)) == pytest.approx(180.0)
    assert heading_to((0, 0, 0), (-1, 0, 0)) == pytest.approx(270.0)
    assert wrap(270.0) == -90.0 and wrap(-180.0) == 180.0


def test_a_goal_to_the_east_needs_a_clockwise_quarter_turn() -> None:
    res = GreedyFollower(step=0.25, turn_deg=90).actions((0, 0, 0), 0.0, [(1.0, 0, 0)])
    assert res.actions[0] == ("TURN", 90.0)  # from yaw 0 (+z) to +x: +90, clockwise
    forward = res.actions[1:-1]
    assert forward == (("FORWARD", 0.25),) * 4  # 1 m east in four steps, then STOP
    assert res.actions[-1] == ("STOP", 0.0) and res.reached
    assert res.poses[-1].x == pytest.approx(1.0) and res.poses[-1].yaw == 90.0
    # West is the smaller rotation the other way; behind is a half turn.
    west = GreedyFollower(turn_deg=90).actions((0, 0, 0), 0.0, [(-1.0, 0, 0)])
    assert west.actions[0] == ("TURN", -90.0)
    back = GreedyFollower(turn_deg=30).actions((0, 0, 0), 90.0, [(-2.0, 0, 0)])
    assert back.actions[0] == ("TURN", 180.0)


def test_split_turns_are_single_increments() -> None:
    res = GreedyFollower(turn_deg=30, split_turns=True).actions((0, 0, 0), 0.0, [(1.0, 0, 0)])
    assert res.actions[:3] == (("TURN", 30.0),) * 3 and res.actions[3][0] == "FORWARD"


def test_simulate_replays_actions() -> None:
    f = GreedyFollower(step=0.25, turn_deg=45, goal_radius=0.1)
    res = f.actions((1, 0.9, 1), 270.0, [(2, 0, 2), (2, 0, 3)])
    poses = f.simulate((1, 0.9, 1), 270.0, res.actions)
    assert len(poses) == len(res.actions) + 1
    for p, q in zip(poses, res.poses, strict=True):
        assert (p.x, p.z, p.yaw) == pytest.approx((q.x, q.z, q.yaw)) and p.y == 0.9
    assert math.hypot(poses[-1].x - 2, poses[-1].z - 3) <= 0.1
    # A forward move into a wall fails and the agent stays put, as AI2-THOR's MoveAhead does.
    grid = furnished_two_rooms()
    stuck = f.simulate((3.5, 0, 0.5), 90.0, [("FORWARD", 0.25)] * 3, grid)
    assert stuck[-1].x == pytest.approx(3.75) and stuck[-2].x == pytest.approx(3.75)
    with pytest.raises(UsageError):
        f.simulate((0, 0, 0), 0.0, [("JUMP", 1.0)])


@pytest.mark.parametrize("turn", [15.0, 30.0, 45.0, 90.0])
def test_follow_on_a_grid_reaches_the_goal_with_valid_actions(turn: float) -> None:
    grid = furnished_two_rooms()
    follower = GreedyFollower(step=0.25, turn_deg=turn, goal_radius=0.2)
    rng = np.random.default_rng(int(turn))
    pts = grid.reachable_positions()
    for _ in range(12):
        a, b = pts[rng.integers(len(pts))], pts[rng.integers(len(pts))]
        yaw = float(rng.choice(np.arange(0.0, 360.0, turn)))
        res = follower.follow(grid, a, b, yaw=yaw)
        assert res.reached and not res.blocked, (a, b, yaw)
        assert res.actions[-1] == ("STOP", 0.0)
        for kind, value in res.actions[:-1]:
            assert kind in ("TURN", "FORWARD")
            if kind == "TURN":
                assert value / turn == pytest.approx(round(value / turn), abs=1e-9)
                assert 0 < abs(value) <= 180
            else:
                assert 0 < value <= 0.25 + 1e-12
        # Replaying the actions (a blocked move would leave the agent put) ends at the goal
        # and every pose, and every move between poses, stays on navigable space.
        poses = follower.simulate(a, yaw, res.actions, grid)
        end = poses[-1]
        assert math.hypot(end.x - b[0], end.z - b[2]) <= 0.2
        for p, q in itertools.pairwise(poses):
            assert grid.navigable(p.xyz) and grid.segment_clear(p.xyz, q.xyz)
        assert np.allclose([(p.x, p.z) for p in poses], [(p.x, p.z) for p in res.poses])
        # Not much longer than the geodesic (quantised headings zig-zag a little).
        walked = sum(v for k, v in res.actions if k == "FORWARD")
        assert walked <= 1.5 * grid.distance(a, b) + 0.25


def test_unreachable_goal_stops_at_once() -> None:
    grid = NavGrid.build(box(0, 0, 8, 4), [LineString([(4, 0), (4, 4)])], agent_radius=0.2)
    res = GreedyFollower().follow(grid, (1, 0, 1), (7, 0, 1), yaw=0.0)
    assert res.actions == (("STOP", 0.0),) and not res.reached


def test_goal_already_reached_and_bad_parameters() -> None:
    res = GreedyFollower().actions((1, 0, 1), 0.0, [(1.1, 0, 1)])
    assert res.actions == (("STOP", 0.0),) and res.reached
    for kwargs in ({"turn_deg": 0}, {"turn_deg": 35}, {"step": 0}, {"goal_radius": -1}):
        with pytest.raises(UsageError):
            GreedyFollower(**kwargs)
