"""The Imitation suite's tasks (MoveCube, InsertPeg, PatternLock, RouteStick): the oracle
plan succeeds on every difficulty, and the paper's immediate failures trigger."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import dfhelpers
import numpy as np
import pytest

dfhelpers.skip_module_without_maniskill()
pytestmark = pytest.mark.slow  # the simulator

from dataforge.manip.executor import CLOSED, Executor, Subgoal, TaskFailed  # noqa: E402
from dataforge.pipelines.robomme.sim import make_env  # noqa: E402

# (task, difficulty, seed) whose oracle episode succeeds
SUCCESS_CASES = [
    ("MoveCube", "easy", 11),  # pick-and-place
    ("MoveCube", "medium", 1),  # push
    ("MoveCube", "hard", 0),  # hook
    ("InsertPeg", "easy", 0),
    ("InsertPeg", "medium", 1),
    ("InsertPeg", "hard", 0),
    ("PatternLock", "easy", 11),
    ("PatternLock", "medium", 11),
    ("PatternLock", "hard", 11),
    ("RouteStick", "easy", 1),
    ("RouteStick", "medium", 1),
    ("RouteStick", "hard", 11),
]


def episode(task: str, difficulty: str, seed: int) -> tuple[Any, Any]:
    env = make_env(task, difficulty, render=False)
    env.reset(seed=seed)
    return env, env.unwrapped


def video_then(base: Any, execution: Callable[[], Iterator[Subgoal]]) -> Iterator[Subgoal]:
    """The oracle's video phase, then ``execution`` instead of the oracle's own."""
    for sg in base.plan():
        if not sg.video:
            break
        yield sg
    assert base.phase == "exec"
    yield from execution()


@pytest.mark.parametrize(("task", "difficulty", "seed"), SUCCESS_CASES)
def test_oracle_succeeds(task: str, difficulty: str, seed: int) -> None:
    env, base = episode(task, difficulty, seed)
    try:
        rec = Executor(env).run(base.plan())
        assert rec.success[-1] and not any(rec.success[:-1])
        assert rec.video[0] and not rec.video[-1]
        assert base.phase == "exec" and base.failure_reason is None
        assert base.goal().startswith("watch the video carefully")
    finally:
        env.close()


def test_same_seed_same_layout() -> None:
    env, base = episode("RouteStick", "hard", 3)
    try:
        first = base.layout
        env.reset(seed=3)
        assert base.layout == first
    finally:
        env.close()


def test_movecube_other_manner_fails() -> None:
    env, base = episode("MoveCube", "easy", 1)
    try:
        assert base.layout["manner"] == "push"
        with pytest.raises(TaskFailed, match="by pick"):
            Executor(env).run(video_then(base, lambda: base.by_pick(video=False)))
    finally:
        env.close()


def test_insertpeg_wrong_end_fails() -> None:
    env, base = episode("InsertPeg", "easy", 0)
    try:
        right = base.layout["end"]

        def wrong() -> Iterator[Subgoal]:
            base.layout["end"] = "tail" if right == "head" else "head"
            subgoals = list(base.demonstrate(video=False))
            base.layout["end"] = right
            yield from subgoals

        with pytest.raises(TaskFailed, match="grasped the peg by its"):
            Executor(env).run(video_then(base, wrong))
    finally:
        env.close()


def test_patternlock_out_of_order_fails() -> None:
    env, base = episode("PatternLock", "easy", 11)
    try:
        wrong = next(k for k in range(len(base.targets)) if k != base.sequence[0])

        def touch() -> Iterator[Subgoal]:
            yield base.subgoal("touch", "touch", base.touch_down(wrong), video=False)

        with pytest.raises(TaskFailed, match="out of the demonstrated order"):
            Executor(env).run(video_then(base, touch))
    finally:
        env.close()


def test_routestick_wrong_way_fails() -> None:
    env, base = episode("RouteStick", "easy", 1)
    try:

        def other_way() -> Iterator[Subgoal]:
            yield base.subgoal("start", "start", base.touch_down(base.sequence[0]), video=False)
            sides = base.layout["sides"]
            base.layout["sides"] = [-s for s in sides]
            arc = base.arc(0)
            base.layout["sides"] = sides
            assert all(wp.gripper == CLOSED for wp in arc)
            yield base.subgoal("circle", "circle", arc, video=False)

        with pytest.raises(TaskFailed, match="the wrong way"):
            Executor(env).run(video_then(base, other_way))
    finally:
        env.close()


def test_stick_follows_tcp() -> None:
    env, base = episode("PatternLock", "medium", 1)
    try:
        env.step(np.concatenate([base.agent.robot.get_qpos()[0, :7].numpy(), [CLOSED]]))
        assert np.allclose(base.stick.pose.p[0].numpy(), base.agent.tcp.pose.p[0].numpy())
    finally:
        env.close()


def test_insertpeg_wrong_side_fails() -> None:
    env, base = episode("InsertPeg", "easy", 1)
    try:
        right = base.layout["side"]

        def wrong() -> Iterator[Subgoal]:
            base.layout["side"] = "left" if right == "right" else "right"
            subgoals = list(base.demonstrate(video=False))
            base.layout["side"] = right
            yield from subgoals

        with pytest.raises(TaskFailed, match=r"from the (left|right) side"):
            Executor(env).run(video_then(base, wrong))
    finally:
        env.close()


@pytest.mark.parametrize(("task", "seed"), [("PatternLock", 11), ("RouteStick", 1)])
def test_stick_trace_follows_the_tip_and_restaging_clears_it(task: str, seed: int) -> None:
    from dataforge.pipelines.robomme.tasks.imitation import TIP_LOW, TRACE_DOT_Z, TRACE_DOTS

    env, base = episode(task, "medium", seed)

    def on_table() -> np.ndarray:
        return np.array(
            [d.pose.p[0].cpu().numpy() for d in base.trace_dots if float(d.pose.p[0, 2]) > 0]
        ).reshape(-1, 3)

    at_restage: list[int] = []
    restage = base.restage

    def watched_restage() -> None:
        at_restage.append(len(on_table()))
        restage()
        at_restage.append(len(on_table()))

    tips: list[np.ndarray] = []
    tick = base.tick

    def watched_tick() -> None:
        tick()
        tip = base.tip()
        if base.phase == "exec" and tip[2] <= TIP_LOW:
            tips.append(tip[:2])

    base.restage, base.tick = watched_restage, watched_tick
    try:
        Executor(env).run(base.plan())
        assert at_restage[0] > 5 and at_restage[1] == 0, at_restage
        dots = on_table()
        assert 5 < len(dots) == min(base.dots_laid, TRACE_DOTS)
        np.testing.assert_allclose(dots[:, 2], TRACE_DOT_Z, atol=1e-6)
        path = np.array(tips)
        gaps = np.linalg.norm(dots[:, None, :2] - path[None], axis=2).min(axis=1)
        assert gaps.max() < 0.002, "every dot lies on the tip's path"
        for k in base.sequence:
            near = np.linalg.norm(dots[:, :2] - base.target_xy[k], axis=1).min()
            assert near < base.VISIT_R, f"no trace at visited target {k}"
    finally:
        env.close()
