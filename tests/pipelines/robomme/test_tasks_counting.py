"""The Counting tasks BinFill, SwingXtimes and StopCube: the oracle plan succeeds at every
difficulty, and their immediate-failure conditions end a wrong episode."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dfhelpers
import numpy as np
import pytest
from robommehelpers import run

dfhelpers.skip_module_without_maniskill()
pytestmark = pytest.mark.slow  # the simulator

from dataforge.manip.executor import CLOSED, Executor, Subgoal, TaskFailed, Waypoint  # noqa: E402
from dataforge.pipelines.robomme import objects, skills  # noqa: E402


def sg(waypoints: list[Waypoint]) -> Subgoal:
    return Subgoal("test", "test", waypoints)


# -- BinFill -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("difficulty", "seed"), [("easy", 2), ("medium", 1), ("hard", 9)])
def test_binfill_oracle_succeeds(make: Any, difficulty: str, seed: int) -> None:
    env = make("BinFill", difficulty, seed)
    b = env.unwrapped
    rec = run(env, b.plan())
    assert rec.success[-1] and b.failure_reason is None
    want = dict(zip(b.layout["goal_colors"], b.layout["counts"], strict=True))
    assert b.in_bin() == want
    assert b.goal().startswith("put ") and b.goal().endswith(
        "into the bin and press the button to stop"
    )


def test_binfill_layout_is_deterministic(make: Any) -> None:
    env = make("BinFill", "hard", 3)
    first = env.unwrapped.layout
    env.reset(seed=3)
    again = env.unwrapped.layout
    assert first["colors"] == again["colors"] and first["appear"] == again["appear"]
    np.testing.assert_allclose(first["cubes"], again["cubes"])
    assert 10 <= len(first["colors"]) <= 12 and len(first["goal_colors"]) == 3


def test_binfill_streaming_cubes_appear_over_time(make: Any) -> None:
    env = make("BinFill", "medium", 0)
    b = env.unwrapped
    seed = 0
    while not b.layout["streaming"]:
        seed += 1
        env.reset(seed=seed)
    hidden = [k for k, t in enumerate(b.layout["appear"]) if t > 0]
    assert hidden and all(objects.actor_position(b.cubes[k])[2] < -1 for k in hidden)
    run_steps = max(b.layout["appear"]) + 2
    Executor(env).hold(run_steps)
    assert all(b.shown)
    for actor, (x, y, _) in zip(b.cubes, b.layout["cubes"], strict=True):
        np.testing.assert_allclose(objects.actor_position(actor)[:2], [x, y], atol=0.01)


def test_binfill_too_many_cubes_fails_at_once(make: Any) -> None:
    env = make("BinFill", "easy", 0)
    b = env.unwrapped
    seed = 0
    while b.layout["streaming"]:
        seed += 1
        env.reset(seed=seed)
    goal = b.layout["goal_colors"][0]
    ks = [k for k, c in enumerate(b.layout["colors"]) if c == goal][:2]
    assert len(ks) == 2

    def plan() -> Iterator[Subgoal]:
        for slot, k in enumerate(ks):
            yield sg(skills.pick(b, b.cubes[k]))
            yield sg(b.drop(slot))

    with pytest.raises(TaskFailed, match="in the bin"):
        run(env, plan())


def test_binfill_early_press_fails(make: Any) -> None:
    env = make("BinFill", "easy", 1)
    b = env.unwrapped
    with pytest.raises(TaskFailed, match="button pressed"):
        run(env, [sg(skills.press(b.button))])


# -- SwingXtimes -------------------------------------------------------------------------------
@pytest.mark.parametrize(("difficulty", "seed"), [("easy", 1), ("medium", 2), ("hard", 6)])
def test_swingxtimes_oracle_succeeds(make: Any, difficulty: str, seed: int) -> None:
    env = make("SwingXtimes", difficulty, seed)
    b = env.unwrapped
    rec = run(env, b.plan())
    assert rec.success[-1] and b.failure_reason is None
    n = b.layout["repetitions"]
    assert b.reaches == {"right": n, "left": n}
    # the last target reached (left) shows the red disc, the other is hidden
    assert (
        objects.actor_position(b.marks["left"])[2] > 0 > objects.actor_position(b.marks["right"])[2]
    )
    assert b.layout["targets"]["right"][1] < 0 < b.layout["targets"]["left"][1]


def test_swingxtimes_wrong_cube_fails(make: Any) -> None:
    env = make("SwingXtimes", "medium", 0)
    b = env.unwrapped
    with pytest.raises(TaskFailed, match="wrong cube"):
        run(env, [sg(skills.pick(b, b.cubes[1]))])


def test_swingxtimes_excess_swings_fail(make: Any) -> None:
    env = make("SwingXtimes", "easy", 1)
    b = env.unwrapped
    n = b.layout["repetitions"]
    bob = [
        Waypoint(b._over("right", 0.12), CLOSED),
        Waypoint(b._over("right", 0.06), CLOSED, noisy=False),
    ]
    with pytest.raises(TaskFailed, match="too many times"):
        run(env, [sg(skills.pick(b, b.cubes[0])), *[sg(bob) for _ in range(n + 1)]])


# -- StopCube ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("difficulty", "seed"), [("easy", 5), ("medium", 9), ("hard", 4)])
def test_stopcube_oracle_succeeds(make: Any, difficulty: str, seed: int) -> None:
    env = make("StopCube", difficulty, seed)
    b = env.unwrapped
    rec = run(env, b.plan())
    assert rec.success[-1] and b.failure_reason is None
    assert b.visits == b.layout["visit"] and b.stopped_at == len(rec)
    target = objects.actor_position(b.target)
    frozen = objects.actor_position(b.cube)
    assert np.hypot(*(frozen - target)[:2]) < objects.TARGET_RADIUS
    for _ in range(5):  # the cube stays stopped after the press
        env.step(rec.joint_action[-1])
    np.testing.assert_allclose(objects.actor_position(b.cube), frozen, atol=1e-6)


def test_stopcube_early_press_fails(make: Any) -> None:
    env = make("StopCube", "easy", 0)
    b = env.unwrapped
    with pytest.raises(TaskFailed, match="button pressed"):
        run(env, [sg(skills.press(b.button))])


def test_stopcube_missing_the_visit_fails(make: Any) -> None:
    env = make("StopCube", "easy", 5)
    b = env.unwrapped
    last = b.layout["visits"][-1][2]
    with pytest.raises(TaskFailed, match="without a press"):
        run(env, [sg([Waypoint(None, CLOSED, hold=last + 10)])])


# -- registration ------------------------------------------------------------------------------
def test_a_broken_task_module_fails_loudly() -> None:
    """Every task exists: a Counting module that cannot be imported is an error of
    ``robomme tasks`` (and of generation), not a task listed as missing."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['dataforge.pipelines.robomme.tasks.counting'] = None\n"
        "from dataforge.cli.main import main; sys.exit(main(['robomme', 'tasks']))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "internal error" in r.stderr and "counting" in r.stderr
    assert "PickXtimes" not in r.stdout
