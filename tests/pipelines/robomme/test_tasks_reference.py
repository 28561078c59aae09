"""The Reference tasks PickHighlight, VideoRepick, VideoPlaceButton and VideoPlaceOrder: the
oracle plan succeeds at every difficulty (with the paper's counts), the scripted highlights and
swaps happen, and the immediate-failure conditions (picking before the press or a cube that was
not highlighted, pressing the button too early, picking a wrong cube, placing on a wrong target)
end the episode at once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import dfhelpers
import numpy as np
import pytest
from robommehelpers import run

dfhelpers.skip_module_without_maniskill()
pytestmark = pytest.mark.slow  # the simulator

from dataforge.manip.executor import Subgoal, TaskFailed  # noqa: E402
from dataforge.pipelines.robomme import objects, skills  # noqa: E402

# Paper Tables 17-20.
HIGHLIGHT = {"easy": (3, 1), "medium": (4, 2), "hard": (6, 3)}  # cubes, goal cubes
REPICK = {"easy": (3, {1, 2}), "medium": (3, {2, 3}), "hard": (15, {0})}  # cubes, swaps
PLACE = {  # cubes, targets, target swap
    "VideoPlaceButton": {"easy": (1, 3, False), "medium": (3, 4, False), "hard": (3, 4, True)},
    "VideoPlaceOrder": {"easy": (1, 4, False), "medium": (3, 4, False), "hard": (3, 4, True)},
}
SEEDS = {  # seeds whose oracle episodes succeed (short ones, to keep the file quick)
    ("PickHighlight", "easy"): 1,
    ("PickHighlight", "medium"): 0,
    ("PickHighlight", "hard"): 4,
    ("VideoRepick", "easy"): 9,
    ("VideoRepick", "medium"): 1,
    ("VideoRepick", "hard"): 9,
    ("VideoPlaceButton", "easy"): 3,
    ("VideoPlaceButton", "medium"): 3,
    ("VideoPlaceButton", "hard"): 0,
    ("VideoPlaceOrder", "easy"): 3,
    ("VideoPlaceOrder", "medium"): 4,
    ("VideoPlaceOrder", "hard"): 1,
}


def video_then(b: Any, after: Callable[[Any], Iterator[Subgoal]]) -> Iterator[Subgoal]:
    """The oracle's conditioning video, then the subgoals of ``after(b)``."""
    for sg in b.plan():
        if not sg.video:
            break
        yield sg
    yield from after(b)


def pick(b: Any, cube: Any) -> Subgoal:
    return Subgoal("pick", "pick", skills.pick(b, cube))


def put(xy: np.ndarray) -> Subgoal:
    return Subgoal("place", "place", skills.place(np.array([xy[0], xy[1], 0.0])))


def press(b: Any) -> Subgoal:
    return Subgoal("press", "press", skills.press(b.button))


def check_common(b: Any, rec: Any) -> None:
    assert rec.success[-1] and b.failure_reason is None
    flags = [s["video"] for s in rec.subgoals]
    assert any(flags) == b.VIDEO == b.TASK.startswith("Video")
    assert flags == sorted(flags, reverse=True)  # the video comes first


# -- oracle episodes ------------------------------------------------------------------------
@pytest.mark.parametrize("difficulty", list(HIGHLIGHT))
def test_pick_highlight_oracle(make: Any, difficulty: str) -> None:
    env = make("PickHighlight", difficulty, SEEDS["PickHighlight", difficulty])
    b = env.unwrapped
    n, n_goals = HIGHLIGHT[difficulty]
    lay = b.layout
    assert len(lay["cubes"]) == n and len(lay["goals"]) == n_goals
    assert b.goal().startswith("first press the button, then pick up all highlighted cubes")
    rec = run(env, b.plan())
    check_common(b, rec)
    assert b.picked == set(lay["goals"]) and b.press.presses == 2
    assert b.highlight_t is not None and not b.highlit
    assert all(objects.actor_position(d)[2] < -1.0 for d in b.highlights)  # parked again
    for k in range(n):  # every cube back on the table
        assert objects.actor_position(b.cubes[k])[2] < 0.03


@pytest.mark.parametrize("difficulty", list(REPICK))
def test_video_repick_oracle(make: Any, difficulty: str) -> None:
    env = make("VideoRepick", difficulty, SEEDS["VideoRepick", difficulty])
    b = env.unwrapped
    n, swaps = REPICK[difficulty]
    lay = b.layout
    assert len(lay["cubes"]) == n and len(lay["swaps"]) in swaps
    assert len(set(lay["colors"])) == (n if n > 3 else 1)
    assert lay["repetitions"] in (1, 2, 3)
    assert b.goal().startswith("watch the video carefully, then pick up the same cube")
    # where every cube should end: the chosen one moved by the video, then the swaps
    at = [np.array(c[:2]) for c in lay["cubes"]]
    at[lay["chosen"]] = np.asarray(lay["spot"])
    for i, j in lay["swaps"]:
        at[i], at[j] = at[j], at[i]
    rec = run(env, b.plan())
    check_common(b, rec)
    assert b.swapped == len(lay["swaps"])
    assert b.trackers[lay["chosen"]].places == lay["repetitions"] + 1
    for k, cube in enumerate(b.cubes):
        np.testing.assert_allclose(objects.actor_position(cube)[:2], at[k], atol=0.015)


@pytest.mark.parametrize("task", list(PLACE))
@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_video_place_oracle(make: Any, task: str, difficulty: str) -> None:
    env = make(task, difficulty, SEEDS[task, difficulty])
    b = env.unwrapped
    n_cubes, k, swap = PLACE[task][difficulty]
    lay = b.layout
    assert len(lay["cubes"]) == n_cubes and len(lay["targets"]) == k
    assert sorted(lay["order"]) == list(range(k)) and bool(lay["swaps"]) == swap
    assert lay["answer_target"] != lay["order"][-1]
    if task == "VideoPlaceButton":
        assert len(lay["presses_after"]) == 1 and lay["relation"] in b.goal()
    else:
        assert lay["presses_after"] == list(range(1, k))
    rec = run(env, b.plan())
    check_common(b, rec)
    assert b.press.presses == len(lay["presses_after"])
    answer = objects.actor_position(b.targets[lay["answer_target"]])
    assert skills.on_target(b.cubes[0], answer, objects.TARGET_RADIUS, max_z=0.06)
    for i, j in lay["swaps"]:  # the swapped targets traded places
        np.testing.assert_allclose(objects.actor_position(b.targets[i])[:2], lay["targets"][j])
        np.testing.assert_allclose(objects.actor_position(b.targets[j])[:2], lay["targets"][i])


# -- immediate failures ---------------------------------------------------------------------
def test_pick_highlight_fails_on_pick_before_press(make: Any) -> None:
    env = make("PickHighlight", "easy", 1)
    b = env.unwrapped
    goal = b.cubes[b.layout["goals"][0]]
    with pytest.raises(TaskFailed, match="before pressing the button"):
        run(env, [pick(b, goal)])


def test_pick_highlight_fails_on_cube_not_highlighted(make: Any) -> None:
    env = make("PickHighlight", "easy", 1)
    b = env.unwrapped
    other = next(k for k in range(3) if k not in b.layout["goals"])

    def plan() -> Iterator[Subgoal]:
        yield press(b)
        assert b.highlight_t is not None  # the white discs showed during the press
        yield pick(b, b.cubes[other])

    with pytest.raises(TaskFailed, match="not highlighted"):
        run(env, plan())


def test_video_repick_fails_on_early_press(make: Any) -> None:
    env = make("VideoRepick", "easy", 9)
    b = env.unwrapped
    with pytest.raises(TaskFailed, match="button pressed after 0 of"):
        run(env, video_then(b, lambda b: iter([press(b)])))


def test_video_place_button_fails_on_wrong_target(make: Any) -> None:
    env = make("VideoPlaceButton", "easy", 3)
    b = env.unwrapped
    lay = b.layout
    wrong = next(j for j in lay["order"][:-1] if j != lay["answer_target"])

    def after(b: Any) -> Iterator[Subgoal]:
        yield pick(b, b.cubes[0])
        yield put(objects.actor_position(b.targets[wrong]))

    with pytest.raises(TaskFailed, match="wrong target"):
        run(env, video_then(b, after))


def test_video_place_order_fails_on_wrong_cube(make: Any) -> None:
    env = make("VideoPlaceOrder", "medium", 4)
    b = env.unwrapped
    with pytest.raises(TaskFailed, match="wrong cube"):
        run(env, [pick(b, b.cubes[1])])


# -- layouts and swap arcs ------------------------------------------------------------------
def test_layout_is_deterministic(make: Any) -> None:
    env = make("VideoRepick", "medium", 3)
    first = env.unwrapped.layout
    env.reset(seed=3)
    again = env.unwrapped.layout
    for key in ("colors", "chosen", "swaps", "repetitions"):
        assert first[key] == again[key]
    np.testing.assert_allclose(first["cubes"], again["cubes"])
    np.testing.assert_allclose(first["button"], again["button"])


def test_swap_path_exchanges_and_keeps_apart() -> None:
    from dataforge.pipelines.robomme.tasks.reference import SWAP_AMPLITUDE, swap_path

    pa, pb = np.array([0.0, -0.1]), np.array([0.05, 0.12])
    a0, b0 = swap_path(pa, pb, 0.0)
    a1, b1 = swap_path(pa, pb, 1.0)
    np.testing.assert_allclose([a0, b0, a1, b1], [pa, pb, pb, pa], atol=1e-12)
    gap = min(np.hypot(*np.subtract(*swap_path(pa, pb, u))) for u in np.linspace(0, 1, 41))
    assert gap >= min(np.hypot(*(pb - pa)), 2 * SWAP_AMPLITUDE) - 1e-9
