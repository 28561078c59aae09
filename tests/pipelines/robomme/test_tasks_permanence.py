"""The Permanence tasks VideoUnmask, ButtonUnmask, VideoUnmaskSwap and ButtonUnmaskSwap: the
oracle plan succeeds at every difficulty, the cubes stay under their containers through the
covering and the swaps, and picking a wrong container (or picking too early) fails at once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dfhelpers
import numpy as np
import pytest
from robommehelpers import run

dfhelpers.skip_module_without_maniskill()
pytestmark = pytest.mark.slow  # the simulator

from dataforge.manip.executor import Subgoal, TaskFailed  # noqa: E402
from dataforge.pipelines.robomme import objects, skills  # noqa: E402

TABLES = {  # task -> difficulty -> (containers, goals range, swaps range), paper Tables 13-16
    "VideoUnmask": {"easy": (3, {1}, {0}), "medium": (5, {1}, {0}), "hard": (10, {2}, {0})},
    "ButtonUnmask": {"easy": (3, {1}, {0}), "medium": (5, {1}, {0}), "hard": (15, {2}, {0})},
    "VideoUnmaskSwap": {
        "easy": (3, {1, 2}, {1, 2}),
        "medium": (4, {1}, {1, 2}),
        "hard": (4, {2}, {2, 3}),
    },
    "ButtonUnmaskSwap": {
        "easy": (3, {1, 2}, {1, 2}),
        "medium": (4, {1}, {1, 2}),
        "hard": (4, {2}, {2, 3}),
    },
}
SEEDS = {  # seeds whose oracle episodes succeed
    ("VideoUnmask", "easy"): 0,
    ("VideoUnmask", "medium"): 1,
    ("VideoUnmask", "hard"): 0,
    ("ButtonUnmask", "easy"): 1,
    ("ButtonUnmask", "medium"): 0,
    ("ButtonUnmask", "hard"): 1,
    ("VideoUnmaskSwap", "easy"): 0,
    ("VideoUnmaskSwap", "medium"): 0,
    ("VideoUnmaskSwap", "hard"): 1,
    ("ButtonUnmaskSwap", "easy"): 1,
    ("ButtonUnmaskSwap", "medium"): 0,
    ("ButtonUnmaskSwap", "hard"): 0,
}


def pick(b: Any, k: int) -> Subgoal:
    """Grasp container ``k`` by its knob and lift it."""
    from dataforge.pipelines.robomme.tasks.permanence import GRIP_Z

    actor = b.containers[k]
    grip_z = objects.actor_position(actor)[2] + GRIP_Z
    return Subgoal("pick", "pick", skills.pick(b, actor, grip_z=grip_z))


def assert_cubes_hidden(b: Any) -> None:
    """Every cube lies under the container the layout says hides it, and that container rests
    on the table over a slot."""
    slots = np.array(b.layout["slots"])
    for k, color in enumerate(b.layout["cube_of"]):
        box = objects.actor_position(b.containers[k])
        assert abs(box[2]) < 0.005
        assert np.min(np.hypot(*(slots - box[:2]).T)) < 0.005
        if color is not None:
            cube = objects.actor_position(b.cubes[color])
            np.testing.assert_allclose(cube[:2], box[:2], atol=0.006)


@pytest.mark.parametrize(("task", "difficulty"), list(SEEDS))
def test_oracle_succeeds(make: Any, task: str, difficulty: str) -> None:
    env = make(task, difficulty, SEEDS[task, difficulty])
    b = env.unwrapped
    n, goals, swaps = TABLES[task][difficulty]
    lay = b.layout
    assert len(lay["slots"]) == n and len(lay["goals"]) in goals and len(lay["swaps"]) in swaps
    assert sorted(c for c in lay["cube_of"] if c) == ["blue", "green", "red"]
    assert len(lay["buttons"]) == b.BUTTONS and task.startswith("Video") == b.VIDEO
    rec = run(env, b.plan())
    assert rec.success[-1] and b.failure_reason is None
    assert b.progress == len(lay["goals"])
    last = lay["goal_containers"][-1]
    assert b.is_grasping(b.containers[last])
    assert objects.actor_position(b.containers[last])[2] > skills.LIFTED_Z
    video = [s for s in rec.subgoals if s["video"]]
    assert bool(video) == b.VIDEO
    phrase = "watch the video carefully" if b.VIDEO else "first press"
    assert b.goal().startswith(phrase)
    assert b.goal().count("pick up the container hiding the") == len(lay["goals"])


def test_layout_is_deterministic(make: Any) -> None:
    env = make("ButtonUnmaskSwap", "hard", 3)
    first = env.unwrapped.layout
    env.reset(seed=3)
    again = env.unwrapped.layout
    for key in ("cube_of", "goals", "swaps", "first_button"):
        assert first[key] == again[key]
    np.testing.assert_allclose(first["slots"], again["slots"])
    np.testing.assert_allclose(first["buttons"], again["buttons"])


def wrong_after_phase(b: Any) -> Iterator[Subgoal]:
    """The oracle's video or button phase, a check that each cube is still under its
    container, then a pick of a container hiding no goal cube."""
    yield from b.press_buttons() if b.BUTTONS else b.video()
    assert_cubes_hidden(b)
    goals = b.layout["goal_containers"]
    yield pick(b, next(k for k in range(len(b.containers)) if k not in goals))


@pytest.mark.parametrize(
    ("task", "difficulty", "seed"),
    [
        ("VideoUnmask", "medium", 1),
        ("ButtonUnmask", "easy", 1),
        ("VideoUnmaskSwap", "hard", 1),
        ("ButtonUnmaskSwap", "easy", 1),
    ],
)
def test_wrong_container_fails(make: Any, task: str, difficulty: str, seed: int) -> None:
    env = make(task, difficulty, seed)
    with pytest.raises(TaskFailed, match="wrong container"):
        run(env, wrong_after_phase(env.unwrapped))


def test_wrong_order_fails(make: Any) -> None:
    env = make("VideoUnmaskSwap", "hard", 1)
    b = env.unwrapped

    def plan() -> Iterator[Subgoal]:
        yield from b.video()
        yield pick(b, b.layout["goal_containers"][1])

    with pytest.raises(TaskFailed, match="wrong order"):
        run(env, plan())


def test_pick_before_second_button_fails(make: Any) -> None:
    env = make("ButtonUnmaskSwap", "medium", 0)
    b = env.unwrapped

    def plan() -> Iterator[Subgoal]:
        yield next(iter(b.press_buttons()))  # only the first button: covered, not swapped
        assert b.pressed == [b.layout["first_button"]] and b.swap_t is None
        yield pick(b, b.layout["goal_containers"][0])

    with pytest.raises(TaskFailed, match="before the button-press phase"):
        run(env, plan())
