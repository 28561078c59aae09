"""The Reference tasks PickHighlight, VideoRepick, VideoPlaceButton and VideoPlaceOrder match the
public RoboMME benchmark (@a3842d1): the scene of a released seed is upstream's (every actor and
the button at the pose the upstream env has after make + reset), the task list is upstream's
(names, order), the oracle succeeds through it, the scripted scene changes happen (highlight
discs over steps 10-100, swaps), and upstream's failure checks end an episode at once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import dfhelpers
import numpy as np
import pytest
from robommehelpers import assert_pose, run
from robommehelpers import reset_as_released as reset
from robommehelpers import upstream_record as record

dfhelpers.skip_module_without_maniskill()
pytestmark = pytest.mark.slow  # the simulator

from dataforge.manip.executor import Subgoal, TaskFailed  # noqa: E402
from dataforge.pipelines.robomme import skills  # noqa: E402
from dataforge.pipelines.robomme.episode import choices  # noqa: E402
from dataforge.pipelines.robomme.objects import actor_position  # noqa: E402

TASKS = ("PickHighlight", "VideoRepick", "VideoPlaceButton", "VideoPlaceOrder")
EPISODES = range(8)  # val episodes 0-7 of each task: every difficulty, recovery on for 0-5
PIXEL = re.compile(r"<(\d+), (\d+)>")


def upstream_names(rec: dict[str, Any]) -> list[str]:
    """Upstream's task list as its recorder stores it (without the "NO RECORD" entries)."""
    return [n for n in rec["attrs"]["task_list"] if n != "NO RECORD"]


# -- scene and task list of released seeds ------------------------------------------------------
@pytest.mark.parametrize(
    "task,episode", [(t, e) for t in TASKS for e in EPISODES], ids=lambda v: str(v)
)
def test_initial_scene_is_upstreams(make: Any, task: str, episode: int) -> None:
    rec = record(task, episode)
    b = reset(make, rec).unwrapped
    for name, pose in rec["actors"].items():
        assert name in b.actors, f"{name} missing"
        assert_pose(name, b.actors[name], pose)
    for name, art in rec["articulations"].items():
        if name.startswith("panda"):
            qpos = b.agent.robot.get_qpos()[0].cpu().numpy()
            np.testing.assert_allclose(qpos, art["qpos"], atol=1e-4)
            assert_pose(name, b.agent.robot, art["root"])
        else:
            assert name == "button"
            assert_pose(name, b.button, art["root"])
            assert abs(float(b.button.get_qpos()[0, 0]) - art["qpos"][0]) < 1e-4
    # the upstream actors come first, in build order
    assert list(b.actors)[: len(rec["actors"])] == list(rec["actors"])
    assert [e.name for e in b.tasks.entries] == upstream_names(rec)
    if episode <= 5:  # the recovery draw: upstream's index into the task list
        assert b.layout["params"]["recovery"]["task_index"] == rec["attrs"]["fail_grasp_task_index"]


# -- oracle episodes ----------------------------------------------------------------------------
def oracle(make: Any, task: str, episode: int) -> tuple[Any, Any, dict[str, Any]]:
    """The oracle episode; its "NO RECORD" subgoals (upstream's, in upstream's place, not
    recorded) are checked, then left out of ``out.subgoals`` as the stored demo leaves them."""
    rec = record(task, episode)
    env = reset(make, rec)
    out = run(env, env.unwrapped.plan())
    assert [s["simple"] for s in out.subgoals] == rec["attrs"]["task_list"]
    for s in out.subgoals:
        assert s["record"] == (s["simple"] != "NO RECORD"), s
        assert s["simple"] != "NO RECORD" or (s["video"] and s["end"] > s["start"]), s
    out.subgoals = [s for s in out.subgoals if s["record"]]
    return env.unwrapped, out, rec


def check_common(b: Any, out: Any, rec: dict[str, Any]) -> None:
    assert out.success[-1] and not any(out.success[:-1]) and b.failure_reason is None
    assert [s["simple"] for s in out.subgoals] == upstream_names(rec)
    flags = [s["video"] for s in out.subgoals]
    assert any(flags) == b.VIDEO and flags == sorted(flags, reverse=True)
    options = {c["action"] for c in choices(b.TASK)} | {""}
    from dataforge.pipelines.robomme.episode import segment_ids

    names = set(segment_ids(b))  # actors, articulations and their links (the button's cap)
    for s in out.subgoals:  # every <> filled with a pixel; choices among the task's options
        assert "<>" not in s["grounded"]
        # each pixel names the actor whose pixels pass 2 averages (upstream's ``segment``)
        assert len(s["segment"]) == len(PIXEL.findall(s["grounded"])), s
        assert set(s["segment"]) <= names, s
        assert s["choice"] in options, s
        assert s["simple"] != "static" or s["choice"] == "", s  # upstream: no choice_label


@pytest.mark.parametrize("episode", [0, 2, 3])  # easy, medium, hard
def test_pick_highlight_oracle(make: Any, episode: int) -> None:
    b, out, rec = oracle(make, "PickHighlight", episode)
    check_common(b, out, rec)
    assert [c.name for c in b.goal_cubes] == rec["attrs"]["target_cube_names"]
    assert b.picks == [1] * len(b.goal_cubes)
    choices = {s["simple"]: s["choice"] for s in out.subgoals}
    assert choices["press the button"] == "press button"
    assert out.subgoals[1]["choice"] == "pick up the highlighted cube"
    assert out.subgoals[1]["grounded"].startswith("pick up the ")
    assert " at <" in out.subgoals[1]["grounded"]
    assert b.goals()[1].startswith("first press the button, then pick up all highlighted")


def test_pick_highlight_discs_follow_the_timer(make: Any) -> None:
    """White discs under the highlighted cubes exactly over upstream steps 10-100, pressed or
    not."""
    env = reset(make, record("PickHighlight", 3))
    b = env.unwrapped
    action = np.concatenate([b.agent.robot.get_qpos()[0, :7].cpu().numpy(), [1.0]])
    shown = []
    for _ in range(103):
        env.step(action)
        under = [
            np.allclose(actor_position(d), actor_position(c) - [0, 0, 0.01], atol=1e-4)
            for d, c in zip(b.disks, b.goal_cubes, strict=True)
        ]
        assert all(under) or not any(under)
        shown.append(all(under))
        assert all(actor_position(d)[2] < -1.0 for d in b.disks) != all(under)
    # upstream step e = t - 1 is in [10, 100]: t in [11, 101]
    assert shown == [11 <= t <= 101 for t in range(1, 104)]
    assert b.tasks.index == 0 and b.failure_reason is None  # no press, no failure


@pytest.mark.parametrize("episode", [0, 2, 3])
def test_video_repick_oracle(make: Any, episode: int) -> None:
    rec = record("VideoRepick", episode)
    b0 = reset(make, rec).unwrapped
    start = {n: actor_position(a)[:2] for n, a in b0.actors.items()}
    b, out, rec = oracle(make, "VideoRepick", episode)
    check_common(b, out, rec)
    assert b.goal_cube.name == rec["attrs"]["target_cube_1"]
    n_swaps = rec["attrs"]["swap_times"]
    assert len(b.swaps) == n_swaps and all(s._from is None for s in b.swaps.values())
    # the first swap moves the goal cube onto a neighbour's spot
    if n_swaps:
        first, partner = b.swap_first[0], b.swap_partner[0]
        assert first is b.goal_cube and partner is not first
    counts = {"easy": 3, "medium": 3, "hard": 15}[rec["difficulty"]]
    assert len(b.actors) == counts
    colors = {n.split("_")[1] for n in b.actors if n.startswith("cube_")}
    assert colors == ({"red", "green", "blue"} if counts == 15 else set())
    moved = [n for n, a in b.actors.items() if np.hypot(*(actor_position(a)[:2] - start[n])) > 0.03]
    assert bool(moved) == bool(n_swaps)
    assert out.subgoals[-1]["choice"] == "press the button to finish"


@pytest.mark.parametrize("task", ["VideoPlaceButton", "VideoPlaceOrder"])
@pytest.mark.parametrize("episode", [0, 2, 3])
def test_video_place_oracle(make: Any, task: str, episode: int) -> None:
    rec = record(task, episode)
    b0 = reset(make, rec).unwrapped
    start = {n: actor_position(a)[:2].copy() for n, a in b0.actors.items()}
    b, out, rec = oracle(make, task, episode)
    check_common(b, out, rec)
    attrs = rec["attrs"]
    assert b.cube.name == attrs["target_cube"] and b.answer.name == attrs["target_target"]
    assert skills.on_target(b.cube, actor_position(b.answer), 0.05, max_z=0.03)
    a, c = attrs.get("swap_target_a"), attrs.get("swap_target_b")
    if a is not None:  # the two targets traded places during the video
        np.testing.assert_allclose(actor_position(b.actors[a])[:2], start[c], atol=1e-5)
        np.testing.assert_allclose(actor_position(b.actors[c])[:2], start[a], atol=1e-5)
    want = {  # choice_label per task-list name (VideoPlace*.py)
        "drop the cube onto target": "drop onto",
        "drop the cube onto table": "drop onto",
        "static": "",
        "place the cube onto the correct target": "drop onto",
        "press the button": "press the button",
    }
    for s in out.subgoals:
        assert s["choice"] == want.get(s["simple"], "pick up the cube") or (
            task == "VideoPlaceButton" and s["simple"] == "pick up the cube" and s["choice"] == ""
        )
    last_video_pick = [s for s in out.subgoals if s["video"] and s["simple"].startswith("pick")][-1]
    assert last_video_pick["choice"] == ("" if task == "VideoPlaceButton" else "pick up the cube")
    presses = [s for s in out.subgoals if s["simple"] == "press the button"]
    assert len(presses) == 1 and presses[0]["video"]
    assert presses[0]["choice"] == "press the button"
    color = attrs["target_color_name"]
    assert all(f"the {color} cube" in g for g in b.goals()) and len(b.goals()) == 2


# -- immediate failures -------------------------------------------------------------------------
def pick(b: Any, cube: Any) -> Subgoal:
    return Subgoal("pick", "pick", skills.pick(b, cube))


def video_then(b: Any, after: Any) -> Iterator[Subgoal]:
    for sg in b.plan():
        if not sg.video:
            break
        yield sg
    yield from after(b)


def test_pick_highlight_fails_on_a_cube_not_highlighted(make: Any) -> None:
    env = reset(make, record("PickHighlight", 0))
    b = env.unwrapped
    other = next(a for a in b.actors.values() if a not in b.goal_cubes)

    def plan() -> Iterator[Subgoal]:
        yield next(iter(b.plan()))  # the press
        yield pick(b, other)

    with pytest.raises(TaskFailed, match="pick up the highlighted cube"):
        run(env, plan())


def test_video_repick_fails_on_a_wrong_cube(make: Any) -> None:
    env = reset(make, record("VideoRepick", 3))  # hard: 15 cubes
    b = env.unwrapped
    other = next(a for a in b.actors.values() if a is not b.goal_cube)
    with pytest.raises(TaskFailed, match="correct cube for the first time"):
        run(env, video_then(b, lambda b: iter([pick(b, other)])))


def test_video_place_button_fails_on_a_wrong_target(make: Any) -> None:
    from dataforge.pipelines.robomme.tasks.reference.base import put_onto

    env = reset(make, record("VideoPlaceButton", 0))
    b = env.unwrapped
    wrong = next(t for t in b.targets if t is not b.answer)

    def after(b: Any) -> Iterator[Subgoal]:
        yield pick(b, b.cube)
        yield Subgoal("put", "put", put_onto(b, actor_position(wrong)))

    with pytest.raises(TaskFailed, match="correct target"):
        run(env, video_then(b, after))


def test_video_place_order_fails_on_a_wrong_cube(make: Any) -> None:
    env = reset(make, record("VideoPlaceOrder", 2))  # medium: 3 cubes
    b = env.unwrapped
    other = next(a for n, a in b.actors.items() if n.startswith("cube_") and a is not b.cube)
    with pytest.raises(TaskFailed, match="pick up the cube"):
        run(env, video_then(b, lambda b: iter([pick(b, other)])))


# -- the swap path ------------------------------------------------------------------------------
def test_two_lane_swap_exchanges_on_offset_lanes() -> None:
    from dataforge.pipelines.robomme.tasks.reference.base import TwoLaneSwap

    class Actor:  # the pose interface TwoLaneSwap uses
        def __init__(self, p: list[float]) -> None:
            self.set_pose_p(p, [1.0, 0.0, 0.0, 0.0])

        def set_pose_p(self, p: Any, q: Any) -> None:
            import torch

            self.pose = type("P", (), {})()
            self.pose.p = torch.tensor([list(p)], dtype=torch.float64)
            self.pose.q = torch.tensor([list(q)], dtype=torch.float64)

        def set_pose(self, pose: Any) -> None:
            self.set_pose_p(pose.p, pose.q)

    a, b, c = Actor([0.0, -0.1, 0.02]), Actor([0.0, 0.1, 0.02]), Actor([0.2, 0.0, 0.02])
    swap = TwoLaneSwap(a, b, 10, 60, 0.07, [c], dynamic=False)
    swap.apply(9)  # before the window: nothing
    np.testing.assert_allclose(actor_position(a), [0.0, -0.1, 0.02], atol=1e-6)
    for e in range(10, 36):
        swap.apply(e)
    # half way: both on the midline, 7 cm to either side (normal of a->b = (-1, 0))
    np.testing.assert_allclose(actor_position(a)[:2], [-0.07, 0.0], atol=1e-6)
    np.testing.assert_allclose(actor_position(b)[:2], [0.07, 0.0], atol=1e-6)
    for e in range(36, 61):
        swap.apply(e)
    np.testing.assert_allclose(actor_position(a), [0.0, 0.1, 0.02], atol=1e-6)
    np.testing.assert_allclose(actor_position(b), [0.0, -0.1, 0.02], atol=1e-6)
    np.testing.assert_allclose(actor_position(c), [0.2, 0.0, 0.02], atol=1e-6)
