"""The Counting tasks (PickXtimes, BinFill, SwingXtimes, StopCube) as the public RoboMME
benchmark defines them: the released val episodes reset to upstream's scene (every actor and
button at its recorded pose) and task list; the oracle succeeds; the rules of upstream's task
files (which cube, how many, when) end a wrong episode."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dfhelpers
import numpy as np
import pytest
from robommehelpers import run

dfhelpers.skip_module_without_maniskill()
pytestmark = pytest.mark.slow  # the simulator

from robommehelpers import assert_pose, upstream_fixture  # noqa: E402
from robommehelpers import reset_as_released as reset_to  # noqa: E402
from robommehelpers import upstream_record as record  # noqa: E402

from dataforge.manip.executor import CLOSED, OPEN, Executor, Subgoal, TaskFailed, Waypoint  # noqa: E402
from dataforge.pipelines.robomme import skills  # noqa: E402
from dataforge.pipelines.robomme.episode import step_subgoals  # noqa: E402

TASKS = ("PickXtimes", "BinFill", "SwingXtimes", "StopCube")
EPISODES = range(8)  # per task: the recovery episodes 0-5 and two plain ones


PIXEL = re.compile(r"<(-?\d+), (-?\d+)>")


def assert_segments_are_scene_actors(b: Any, subgoals: list[dict[str, Any]]) -> None:
    """Each recorded subgoal with ``<row, col>`` pixels names one segment actor (or
    articulation) of the scene per pixel, as upstream's task-list ``segment`` field."""
    from dataforge.pipelines.robomme.episode import segment_ids

    names = set(segment_ids(b))
    for s in subgoals:
        pixels = PIXEL.findall(s["grounded"])
        assert len(s["segment"]) == len(pixels), s
        assert set(s["segment"]) <= names, s


def sg(waypoints: list[Waypoint]) -> Subgoal:
    return Subgoal("test", "test", waypoints)


def above(b: Any, xy: Any, z: float, gripper: float = CLOSED) -> Waypoint:
    return Waypoint(b.at(np.asarray(xy)[:2], z, b.tcp_quat()), gripper)


# -- the released scenes -------------------------------------------------------------------------
@pytest.mark.parametrize("task", TASKS)
def test_released_val_episodes_reset_to_the_upstream_scene(make: Any, task: str) -> None:
    for episode in EPISODES:
        rec = record(task, episode)
        b = reset_to(make, rec).unwrapped
        actors, arts = b.scene.actors, b.scene.articulations
        for name, want in rec["actors"].items():
            assert name in actors, f"{task} ep {episode}: no actor {name}"
            assert_pose(f"{task} ep {episode} {name}", actors[name].pose, want)
        for name, want in rec["articulations"].items():
            assert name in arts, f"{task} ep {episode}: no articulation {name}"
            assert_pose(f"{task} ep {episode} {name}", arts[name].pose, want["root"])
            qpos = arts[name].get_qpos()[0].cpu().numpy()
            np.testing.assert_allclose(qpos, want["qpos"], atol=1e-4)
        assert b.task_names() == rec["attrs"]["task_list"], f"{task} ep {episode}"


def test_released_task_parameters(make: Any) -> None:
    """The numbers upstream's env held after reset: repeats, goal colour, bin counts, timing."""
    for episode in EPISODES:
        rec = record("PickXtimes", episode)
        lay = reset_to(make, rec).unwrapped.layout
        assert lay["repeats"] == rec["attrs"]["num_repeats"]
        assert lay["goal_cube"] == rec["attrs"]["target_cube"]
        rec = record("BinFill", episode)
        lay = reset_to(make, rec).unwrapped.layout
        for c in ("red", "blue", "green"):
            assert lay["targets"][c] == rec["attrs"][f"{c}_cubes_target_number"]
        assert lay["streaming"] == rec["attrs"]["dynamic"]
        rec = record("SwingXtimes", episode)
        b = reset_to(make, rec).unwrapped
        assert b.layout["repeats"] == rec["attrs"]["num_repeats"]
        assert b.targets["right"].name == rec["attrs"]["target_right"]
        rec = record("StopCube", episode)
        lay = reset_to(make, rec).unwrapped.layout
        assert lay["visit"] == rec["attrs"]["stop_time"]
        assert lay["pass_steps"] == rec["attrs"]["move_interval"]
        np.testing.assert_allclose(lay["line_end"], rec["attrs"]["end_pos_xy"], atol=1e-5)


def test_language_goals_are_upstreams_list(make: Any) -> None:
    b = reset_to(make, record("PickXtimes", 0)).unwrapped  # blue, three times
    assert b.goals() == [
        "pick up the blue cube and place it on the target, repeating this action three times, "
        "then press the button to stop",
        "pick up the blue cube and place it on the target, repeating this pick-and-place "
        "action three times, then press the button to stop",
    ]
    assert b.goal() == b.goals()[0]
    b = reset_to(make, record("BinFill", 0)).unwrapped  # two red
    assert b.goals() == [
        "put two red cubes into the bin, then press the button to stop",
        "put two red cubes into the bin and press the button to stop",
    ]
    b = reset_to(make, record("StopCube", 0)).unwrapped  # fourth visit
    assert (
        b.goals()[1]
        == "press the button to stop the cube exactly at the target on its fourth visit"
    )


def test_grounded_texts_name_the_pixel_of_the_segment_actor(make: Any) -> None:
    b = reset_to(make, record("SwingXtimes", 0)).unwrapped
    subgoal = next(b.plan())
    assert subgoal.simple == "pick up the red cube"
    assert subgoal.grounded.startswith("pick up the red cube at <")
    row, col = (int(v) for v in subgoal.grounded.split("<")[1].rstrip(">").split(","))
    assert 0 <= row < 256 and 0 <= col < 256
    assert subgoal.segment == (b.layout["goal_cube"],)
    put_down = next(t for t in b.tasks if "on the table" in t.name)
    assert b.grounded(put_down) == "put the red cube on the table"
    segments = [(t.name, t.actor) for t in b.tasks]
    assert segments[1:3] == [
        ("move to the top of the right-side target for the first time", b.layout["target_right"]),
        ("move to the top of the left-side target for the first time", b.layout["target_left"]),
    ]
    cap = "button/button_cap"  # upstream's segment of a press: the cap link
    assert segments[-2:] == [("put the red cube on the table", ""), ("press the button", cap)]


def test_generated_grounded_pixels_are_the_segment_centroids(tmp_path: Path) -> None:
    """End to end: pass 2 replaces each projected pixel by the centroid of the segment actor's
    pixels in the front camera (RoboMME's rule); the projection stays in ``point``, a few
    pixels away (an actor's origin vs. the mean of its visible pixels)."""
    from dataforge.store import open_dataset

    out = tmp_path / "out"
    r = dfhelpers.run_cli(
        "robomme",
        "generate",
        "--tasks",
        "PickXtimes",
        "--episodes-per-task",
        "1",
        "--size",
        "256",
        "--out",
        str(out),
        "--quiet",
        timeout=900,
    )
    assert r.returncode == 0, r.stderr
    with open_dataset(out) as ds:
        (ep,) = list(ds.episodes())
        subgoals = ep.metadata["subgoals"]
    assert subgoals and all(s["segment"] for s in subgoals)
    for s in subgoals:
        (pixel,) = PIXEL.findall(s["grounded"])
        row, col = int(pixel[0]), int(pixel[1])
        assert 0 <= row < 256 and 0 <= col < 256, s
        assert s["grounded"].replace(f" at <{row}, {col}>", "") == s["simple"], s
        assert np.hypot(row - s["point"][0], col - s["point"][1]) <= 6, s


# -- the oracle ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("task", "episode"),
    [("PickXtimes", 3), ("BinFill", 2), ("BinFill", 7), ("SwingXtimes", 2), ("StopCube", 1)],
)
def test_oracle_succeeds_on_released_episodes(make: Any, task: str, episode: int) -> None:
    env = reset_to(make, record(task, episode))
    b = env.unwrapped
    rec = run(env, b.plan())
    assert rec.success[-1] and b.failure_reason is None
    assert [s["simple"] for s in rec.subgoals] == b.task_names()
    assert b.checker.complete
    assert_segments_are_scene_actors(b, rec.subgoals)
    # the online view is the entry the check examined at each step (RoboMME's rule): it
    # moves on the step after the entry's check passes, ahead of the planner or with it
    planner, online = step_subgoals(rec)
    assert len(rec.online) == len(rec) and online[-1] == len(rec.subgoals) - 1
    assert np.all(np.diff(online) >= 0) and set(np.unique(online - planner)) <= {0, 1}
    for k, sg in enumerate(rec.subgoals[:-1]):
        moved = int(np.argmax(online > k))
        assert sg["start"] < moved <= rec.subgoals[k + 1]["start"], (k, sg["simple"])
    pixelled = [s["segment"] for s in rec.subgoals if PIXEL.search(s["grounded"])]
    assert pixelled[-1] == ["target" if task == "StopCube" else "button/button_cap"]
    if task == "BinFill":  # counted, and taken away to upstream's (10, 10, 0)
        assert b.in_bin == b.layout["targets"]
        gone = [n for n, c in b.cubes.items() if np.allclose(c.pose.p[0, :2], [10, 10], atol=0.5)]
        assert len(gone) == sum(b.layout["targets"].values())


def test_binfill_streaming_cubes_come_back_at_50_k(make: Any) -> None:
    rec = next(
        r
        for r in upstream_fixture()["records"]
        if r["task"] == "BinFill" and r["attrs"]["dynamic"] and r["episode"] > 5
    )
    env = reset_to(make, rec)
    b = env.unwrapped
    back = b.layout["stream_return_step"]
    assert back and set(back.values()) <= {50 * k for k in range(1, 13)}
    ex = Executor(env)
    ex.hold(1)
    for name in back:  # away from the first step
        assert b.cubes[name].pose.p[0, 2] > 5
    ex.hold(max(back.values()) + 5 - 1)
    for name in back:
        want = rec["actors"][name]
        np.testing.assert_allclose(b.cubes[name].pose.p[0, :2].cpu().numpy(), want[:2], atol=5e-3)


def test_binfill_early_press_fails(make: Any) -> None:
    env = reset_to(make, record("BinFill", 6))
    b = env.unwrapped
    with pytest.raises(TaskFailed, match="pressed the button too early"):
        run(env, [sg(skills.press_spring_button(b.button))])


def test_binfill_an_extra_cube_in_the_bin_fails_at_the_press(make: Any) -> None:
    rec = next(
        r
        for r in upstream_fixture()["records"]
        if r["task"] == "BinFill"
        and len(r["attrs"]["task_list"]) == 3
        and not r["attrs"]["dynamic"]
        and r["episode"] > 5
    )
    env = reset_to(make, rec)
    b = env.unwrapped
    colour = b.layout["subgoal_colour_order"][0]
    first, second = (b.cubes[n] for n in b.layout["cubes_by_colour"][colour][:2])

    def plan() -> Iterator[Subgoal]:
        for cube in (first, second):
            yield sg(b.pick(cube))
            yield sg(b.drop_into_bin(1))

    with pytest.raises(TaskFailed, match="another cube was put in"):
        run(env, plan())


# -- PickXtimes ----------------------------------------------------------------------------------
def test_pickxtimes_wrong_cube_fails(make: Any) -> None:
    env = reset_to(make, record("PickXtimes", 6))  # medium: three cubes
    b = env.unwrapped
    other = next(c for n, c in b.cubes.items() if n != b.layout["goal_cube"])
    with pytest.raises(TaskFailed, match=f"picked up {other.name}"):
        run(env, [sg(b.pick(other))])


def test_pickxtimes_press_before_the_placements_fails(make: Any) -> None:
    rec = next(
        r
        for r in upstream_fixture()["records"]
        if r["task"] == "PickXtimes" and r["attrs"]["num_repeats"] >= 2 and r["episode"] > 5
    )
    env = reset_to(make, rec)
    b = env.unwrapped

    def plan() -> Iterator[Subgoal]:
        tasks = b.plan()
        yield next(tasks)  # pick
        yield next(tasks)  # place
        yield sg(skills.press_spring_button(b.button))

    with pytest.raises(TaskFailed, match="pressed the button too early"):
        run(env, plan())
    assert b.checker.index == 2  # the first pick and place were counted


# -- SwingXtimes ---------------------------------------------------------------------------------
def test_swingxtimes_the_red_rings_follow_a_landing(make: Any) -> None:
    env = reset_to(make, record("SwingXtimes", 6))
    b = env.unwrapped
    tasks = iter(b.plan())
    ex = Executor(env)
    for _ in range(2):  # pick, then over the right-side target
        for wp in next(tasks).waypoints:
            ex.run_waypoint(wp)
    ex.hold(2)
    assert b.swings == 1 and b.on["right"] and not b.on["left"]
    ring = b.rings["right"].pose.p[0].cpu().numpy()
    target = b.targets["right"].pose.p[0].cpu().numpy()
    np.testing.assert_allclose(ring, target + np.array([0, 0, -0.01]), atol=1e-6)
    assert b.rings["left"].pose.p[0, 2] < -1
    ex.run_waypoint(above(b, target + np.array([0.12, 0, 0]), 0.15))  # leave it
    assert not b.on["right"]
    last = b.highlight_from["right"]
    for _ in range(25):  # shown until 20 steps after the last step on the target (the
        # state after step t - 1 is upstream's observation of it: the rings of step t - 1)
        shown = bool(b.rings["right"].pose.p[0, 2] > -1)
        assert shown == (b.t - 1 <= last + 20), (b.t, last)
        ex.hold(1)
    assert b.swings == 1


def test_swingxtimes_too_many_landings_fail(make: Any) -> None:
    env = reset_to(make, record("SwingXtimes", 7))
    b = env.unwrapped
    n = b.layout["repeats"]
    sides = [b.targets[s].pose.p[0].cpu().numpy() for s in b.SIDES]

    def plan() -> Iterator[Subgoal]:
        yield sg(b.pick(b.cube))
        for k in range(2 * n + 1):
            yield sg([above(b, sides[k % 2], 0.1)])

    with pytest.raises(TaskFailed, match=f"{2 * n + 1} landings on the targets, more than"):
        run(env, plan())


def test_swingxtimes_wrong_cube_fails(make: Any) -> None:
    env = reset_to(make, record("SwingXtimes", 6))  # medium: three cubes
    b = env.unwrapped
    other = next(c for c in b.cubes.values() if c is not b.cube)
    with pytest.raises(TaskFailed, match=f"picked up {other.name}"):
        run(env, [sg(b.pick(other))])


# -- StopCube ------------------------------------------------------------------------------------
def test_stopcube_cube_runs_the_line_and_the_press_freezes_it(make: Any) -> None:
    env = reset_to(make, record("StopCube", 1))
    b = env.unwrapped
    lay = b.layout
    start, end = np.asarray(lay["line_start"]), np.asarray(lay["line_end"])
    xy = lambda: b.cube.pose.p[0, :2].cpu().numpy()  # noqa: E731
    np.testing.assert_allclose(xy(), start, atol=1e-5)
    ex = Executor(env)
    ex.hold(lay["pass_steps"] + 1)  # one full pass: at the other end
    np.testing.assert_allclose(xy(), end, atol=1e-5)
    ex.hold(lay["pass_steps"] // 2)  # half way back: over the target
    target = b.target.pose.p[0, :2].cpu().numpy()
    np.testing.assert_allclose(xy(), target, atol=1e-4)
    env = reset_to(make, record("StopCube", 1))
    rec = run(env, b.plan())
    assert rec.success[-1]
    lo, hi = lay["stop_step_range"]
    assert lo <= b.stop_step <= hi
    frozen = xy()
    assert np.hypot(*(frozen - target)) <= 0.06
    for _ in range(5):
        env.step(rec.joint_action[-1])
    np.testing.assert_allclose(xy(), frozen, atol=1e-7)


def test_stopcube_early_press_fails(make: Any) -> None:
    env = reset_to(make, record("StopCube", 0))
    b = env.unwrapped
    with pytest.raises(TaskFailed, match="off the target"):
        run(env, [sg(skills.press_spring_button(b.button))])


def test_stopcube_missing_the_visit_fails(make: Any) -> None:
    env = reset_to(make, record("StopCube", 2))
    b = env.unwrapped
    hi = b.layout["stop_step_range"][1]
    with pytest.raises(TaskFailed, match=f"step {hi} passed"):
        run(env, [sg([Waypoint(None, OPEN, hold=hi + 10)])])


# -- registration --------------------------------------------------------------------------------
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
