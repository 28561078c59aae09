"""The greedy follower turns paths into AI2-THOR-style discrete actions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import LineString, box

from dataforge.nav.follower import GreedyFollower, heading_to
from dataforge.nav.grid import NavGrid


def test_heading_convention() -> None:
    assert heading_to((0, 0, 0), (0, 0, 1)) == pytest.approx(0.0)
    assert heading_to((0, 0, 0), (1, 0, 0)) == pytest.approx(90.0)
    assert heading_to((0, 0, 0), (0, 0, -1)) == pytest.approx(180.0)


def test_a_goal_to_the_east_needs_a_clockwise_quarter_turn() -> None:
    res = GreedyFollower(step=0.25, turn_deg=90).actions((0, 0, 0), 0.0, [(1.0, 0, 0)])
    assert res.actions[0] == ("TURN", 90.0)
    forward = [a for a in res.actions[1:-1]]
    assert all(kind == "FORWARD" for kind, _ in forward)
    assert [v for _, v in forward] == [0.25] * 4  # 1 m east in four steps, then STOP
    assert res.reached
    assert res.actions[-1] == ("STOP", 0.0)


@pytest.mark.parametrize("turn", [30.0, 45.0, 90.0])
def test_follow_on_a_grid_reaches_the_goal_with_valid_actions(turn: float) -> None:
    walls = [LineString([(4, 0), (4, 1.5)]), LineString([(4, 2.5), (4, 4)])]
    walls.append(box(1.5, 2.5, 2.5, 3.5))
    grid = NavGrid.build(box(0, 0, 8, 4), walls, agent_radius=0.2, cell=0.05)
    follower = GreedyFollower(step=0.25, turn_deg=turn, goal_radius=0.2)
    rng = np.random.default_rng(int(turn))
    pts = grid.reachable_positions()
    for _ in range(5):
        a, b = pts[rng.integers(len(pts))], pts[rng.integers(len(pts))]
        res = follower.follow(grid, a, b, yaw=float(rng.choice([0, 90, 180, 270])))
        assert res.reached and not res.blocked, (a, b)
        for kind, value in res.actions:
            if kind == "TURN":
                assert value % turn == pytest.approx(0.0, abs=1e-9) and abs(value) <= 180
            elif kind == "FORWARD":
                assert 0 < value <= 0.25 + 1e-9
        end = res.poses[-1]
        assert math.hypot(end.x - b[0], end.z - b[2]) <= 0.2
        for p in res.poses:
            assert grid.is_navigable(p.xyz)


def test_unreachable_goal_stops_at_once() -> None:
    grid = NavGrid.build(box(0, 0, 8, 4), [LineString([(4, 0), (4, 4)])], agent_radius=0.2)
    res = GreedyFollower().follow(grid, (1, 0, 1), (7, 0, 1), yaw=0.0)
    assert res.actions == (("STOP", 0.0),) and not res.reached
