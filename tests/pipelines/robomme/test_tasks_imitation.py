"""The Imitation suite's tasks (MoveCube, InsertPeg, PatternLock, RouteStick) against the
public RoboMME benchmark: the scene of released val records (actors and articulations at the
upstream poses), upstream's task-list texts, goals and choice labels, the oracle's success,
the immediate failures, and the stick tasks' highlights."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dfhelpers
import numpy as np
import pytest
from robommehelpers import assert_pose
from robommehelpers import upstream_record as record

dfhelpers.skip_module_without_maniskill()
pytestmark = pytest.mark.slow  # the simulator

from dataforge.manip.executor import Executor, Subgoal, TaskFailed  # noqa: E402

TASKS = ("MoveCube", "InsertPeg", "PatternLock", "RouteStick")
CHOICES = Path(__file__).parents[3] / "templates" / "robomme" / "multi_choice.json"
ROBOTS = ("panda_wristcam", "panda_stick")
EPISODES = range(8)  # val records checked per task
PIXEL = re.compile(r"<(\d+), (\d+)>")
PIXEL_AT = re.compile(r" at <\d+, \d+>")


def records(task: str, episodes: range = EPISODES) -> list[dict[str, Any]]:
    return [record(task, e) for e in episodes]


@pytest.mark.parametrize("task", TASKS)
def test_scene_matches_upstream(make: Any, task: str) -> None:
    """Every upstream actor and articulation is built under its upstream name and placed at
    the released initial pose (1 mm, 0.01 rad); the robot is upstream's (``panda_stick``, 7
    joints, for the stick tasks) at its start joints."""
    for rec in records(task):
        env = make(task, rec["difficulty"], rec["seed"])
        scene = env.unwrapped.scene
        (robot,) = [name for name in rec["articulations"] if name in ROBOTS]
        assert robot in scene.articulations, (robot, list(scene.articulations))
        qpos = scene.articulations[robot].get_qpos()[0].cpu().numpy()
        np.testing.assert_allclose(qpos, rec["articulations"][robot]["qpos"], atol=0.01)
        ours = [name for name in scene.actors if name in rec["actors"]]
        assert ours == list(rec["actors"]), "upstream's build order"
        for name, pose in rec["actors"].items():
            assert name in scene.actors, (rec["seed"], name)
            assert_pose(name, scene.actors[name], pose)
        for name, art in rec["articulations"].items():
            if name in ROBOTS:
                continue
            assert name in scene.articulations, (rec["seed"], name)
            assert_pose(name, scene.articulations[name], art["root"])


@pytest.mark.parametrize("task", TASKS)
def test_task_list_texts_match_upstream(make: Any, task: str) -> None:
    """Our task list (NO-RECORD entries included) is upstream's, entry for entry."""
    for rec in records(task):
        base = make(task, rec["difficulty"], rec["seed"]).unwrapped
        assert base.task_names() == rec["attrs"]["task_list"], rec["seed"]


@pytest.mark.parametrize("task", TASKS)
def test_goals_are_the_release_phrasings(make: Any, task: str) -> None:
    base = make(task, "easy", record(task, 0)["seed"]).unwrapped
    goals = base.goals()
    assert len(goals) == 2 and goals[0] == base.goal() and goals[0] != goals[1]
    assert goals[0].lower().startswith("watch the video carefully")
    assert goals[1].endswith(("in the video", "as in the video", "shown in the video"))


def test_layout_is_the_upstream_one(make: Any) -> None:
    from dataforge.pipelines.robomme.layouts import upstream_layout

    rec = record("RouteStick", 3)
    base = make("RouteStick", rec["difficulty"], rec["seed"]).unwrapped
    first = copy.deepcopy(base.layout)
    lay = upstream_layout("RouteStick", rec["seed"], rec["difficulty"])
    assert first["params"]["route"] == lay.params["route"]
    assert json.loads(json.dumps(first)) == first  # JSON-able, recorded in the metadata
    base.reset(seed=rec["seed"])
    assert base.layout == first


# (task, val episode) whose oracle episode succeeds: every manner of MoveCube, every
# difficulty of the stick tasks
SUCCESS_CASES = [
    ("MoveCube", 0),  # peg_push
    ("MoveCube", 1),  # grasp_putdown
    ("MoveCube", 5),  # gripper_push
    ("InsertPeg", 0),
    ("InsertPeg", 1),
    ("PatternLock", 0),
    ("PatternLock", 2),
    ("PatternLock", 3),
    ("RouteStick", 0),
    ("RouteStick", 2),
    ("RouteStick", 3),
]


@pytest.mark.parametrize(("task", "episode"), SUCCESS_CASES)
def test_oracle_succeeds_with_upstream_subgoals(make: Any, task: str, episode: int) -> None:
    rec = record(task, episode)
    env = make(task, rec["difficulty"], rec["seed"])
    base = env.unwrapped
    out = Executor(env).run(base.plan())
    assert out.success[-1] and not any(out.success[:-1])
    assert out.video[0] and not out.video[-1]
    assert base.phase == "exec" and base.failure_reason is None
    # upstream's "NO RECORD" entries are simulated in their place but not recorded
    assert [sg["simple"] for sg in out.subgoals] == rec["attrs"]["task_list"]
    for sg in out.subgoals:
        assert sg["record"] == (sg["simple"] != "NO RECORD"), sg
        assert sg["simple"] != "NO RECORD" or (sg["video"] and sg["end"] > sg["start"]), sg
    stored = [sg for sg in out.subgoals if sg["record"]]
    recorded = [n for n in rec["attrs"]["task_list"] if n != "NO RECORD"]
    assert [sg["simple"] for sg in stored] == recorded
    options = {label for label, _ in json.loads(CHOICES.read_text())[task]}
    from dataforge.pipelines.robomme.episode import segment_ids

    names = set(segment_ids(base))  # actors, articulations and their links (a peg's link)
    for sg in stored:
        # each pixel names the actor (articulation) whose pixels pass 2 averages
        assert len(sg["segment"]) == len(PIXEL.findall(sg["grounded"])), sg
        assert set(sg["segment"]) <= names, sg
        assert sg["choice"] in options or (sg["simple"] == "static" and sg["choice"] == "")
        # upstream's subgoal_segment is the name with " at <>" after each segment object
        pixels = [tuple(map(int, p)) for p in PIXEL.findall(sg["grounded"])]
        assert all(0 <= r < 256 and 0 <= c < 256 for r, c in pixels), sg["grounded"]
        assert PIXEL_AT.sub("", sg["grounded"]) == sg["simple"]
        assert bool(pixels) == (task in ("MoveCube", "InsertPeg") and sg["simple"] != "static")


def video_then(base: Any, execution: Callable[[], Iterator[Subgoal]]) -> Iterator[Subgoal]:
    """The oracle's video phase (restaging included), then ``execution``."""
    for sg in base.plan():
        if not sg.video:
            break
        yield sg
    assert base.phase == "exec"
    yield from execution()


def with_params(base: Any, changes: dict[str, Any], make_plan: Callable[[], Any]) -> list[Any]:
    """``make_plan()`` evaluated with the layout's params temporarily changed."""
    params = base.layout["params"]
    saved = {k: params[k] for k in changes}
    params.update(changes)
    try:
        return list(make_plan())
    finally:
        params.update(saved)


def test_patternlock_wrong_target_fails(make: Any) -> None:
    rec = record("PatternLock", 0)
    env = make("PatternLock", rec["difficulty"], rec["seed"])
    base = env.unwrapped
    path = base.path
    wrong = next(k for k in range(len(base.targets)) if k not in path[:2])

    def touch() -> Iterator[Subgoal]:
        yield base.subgoal("wrong", "wrong", base.swing_onto(wrong), video=False)

    with pytest.raises(TaskFailed, match="out of the shown order"):
        Executor(env).run(video_then(base, touch))


def test_routestick_wrong_way_fails(make: Any) -> None:
    rec = record("RouteStick", 0)
    env = make("RouteStick", rec["difficulty"], rec["seed"])
    base = env.unwrapped
    flipped = [
        "clockwise" if d == "counterclockwise" else "counterclockwise"
        for d in base.layout["params"]["directions"]
    ]

    def other_way() -> Iterator[Subgoal]:
        wps = with_params(base, {"directions": flipped}, lambda: base.move_waypoints(1))
        yield base.subgoal("other way", "other way", wps, video=False)

    with pytest.raises(TaskFailed, match="went round the stick"):
        Executor(env).run(video_then(base, other_way))


def test_insertpeg_other_end_fails(make: Any) -> None:
    rec = record("InsertPeg", 0)
    env = make("InsertPeg", rec["difficulty"], rec["seed"])
    base = env.unwrapped
    other = "tail" if base.layout["params"]["grasp_end"] == "head" else "head"

    def wrong_end() -> Iterator[Subgoal]:
        wps = with_params(base, {"grasp_end": other}, base.grasp_waypoints)
        yield base.subgoal("wrong end", "wrong end", wps, video=False)

    with pytest.raises(TaskFailed, match="by the other end"):
        Executor(env).run(video_then(base, wrong_end))


def test_movecube_other_manner_fails(make: Any) -> None:
    rec = record("MoveCube", 0)
    env = make("MoveCube", rec["difficulty"], rec["seed"])
    base = env.unwrapped
    assert base.manner == "peg_push"

    def push() -> Iterator[Subgoal]:
        wps = with_params(base, {"manner": "gripper_push"}, base.gripper_push)
        yield base.subgoal("push", "push", wps, video=False)

    with pytest.raises(TaskFailed, match="before picking up the peg"):
        Executor(env).run(video_then(base, push))


def test_patternlock_highlights_last_40_steps(make: Any) -> None:
    """Upstream ``step()``: a trace sphere under the tip at z 0.01 on every step the tip is
    below 0.1 m, kept 40 steps; a reached target's red ring shown for 40 steps."""
    from dataforge.pipelines.robomme.tasks.imitation.base import HIGHLIGHT_STEPS, REACH_Z, TRACE_Z

    rec = record("PatternLock", 0)
    env = make("PatternLock", rec["difficulty"], rec["seed"])
    base = env.unwrapped
    low_steps: list[int] = []
    reached: dict[int, int] = {}
    tick = base.tick

    def watched_tick() -> None:
        tick()
        t = base.t
        if base.tip()[2] < REACH_Z:
            low_steps.append(t)
        for k in range(len(base.targets)):
            if base.reaches(k, base.REACH_R):
                reached[k] = t
        on_table = [s for s in base.trace if abs(float(s.pose.p[0, 2]) - TRACE_Z) < 1e-6]
        assert len(on_table) == sum(1 for s in low_steps if t - s <= HIGHLIGHT_STEPS)
        for k, ring in enumerate(base.overlays):
            shown = float(ring.pose.p[0, 2]) > -0.5
            assert shown == (k in reached and t - reached[k] <= HIGHLIGHT_STEPS), (t, k)

    base.tick = watched_tick
    try:
        Executor(env).run(base.plan())
    finally:
        del base.tick
    assert low_steps and reached.keys() >= set(base.path)


def test_stick_robot_is_gripperless_as_upstream(make: Any) -> None:
    """PatternLock and RouteStick run on ``panda_stick`` (7 joints, TCP at the stick's tip):
    the env takes 7-value actions; the executor records them with RoboMME's -1 pad whatever
    the waypoints' gripper command; the writer stores zero finger states (closed), as
    RoboMME's writer does for its stick robot."""
    from types import SimpleNamespace

    from dataforge.manip.executor import OPEN, Waypoint
    from dataforge.pipelines.robomme.episode import Pass1, episode_arrays

    rec = record("RouteStick", 0)
    env = make("RouteStick", rec["difficulty"], rec["seed"])
    base = env.unwrapped
    assert not base.has_gripper and base.agent.robot.get_qpos().shape == (1, 7)
    assert "camera_link" in base.agent.robot.links_map  # the fork's wrist camera mount
    tcp = base.agent.tcp.pose.raw_pose[0].cpu().numpy().astype(np.float64)
    np.testing.assert_allclose(base.tip(), tcp[:3])
    low = tcp.copy()
    low[2] -= 0.05
    ex = Executor(env)
    ex.run_waypoint(Waypoint(low, OPEN, hold=3))  # an "open" command: no gripper to open
    recd = ex.rec
    assert len(recd) > 5
    actions = np.asarray(recd.joint_action)
    assert actions.shape[1] == 8 and np.all(actions[:, 7] == -1.0)
    assert np.asarray(recd.eef_action)[:, 7].tolist() == [-1.0] * len(recd)
    assert np.asarray(recd.qpos).shape[1] == 7
    assert abs(base.tip()[2] - low[2]) < 0.005  # the 7 values drove the arm
    n = len(recd)
    cam = SimpleNamespace(
        rgb=np.zeros((n, 4, 4, 3), np.uint8),
        depth=np.zeros((n, 4, 4, 1), np.int16),
        extrinsic=np.zeros((n, 3, 4), np.float32),
        intrinsic=np.eye(3, dtype=np.float32),
    )
    recd.subgoals.append({"start": 0, "end": n})
    recd.final_state = recd.state[-1]
    arrays = episode_arrays(Pass1(rec["seed"], recd, [], {}), {"f": cam, "w": cam}, "f", "w")
    assert np.array_equal(arrays["gripper_state"], np.zeros((n, 2), np.float32))
    assert arrays["is_gripper_close"].all()
    assert arrays["joint_state"].shape == (n, 7)


@pytest.mark.slow
def test_stick_wrist_camera_sees_the_stick() -> None:
    """The stick robot's ``hand_camera`` renders from ``camera_link``; the stick (grey, from
    the hand down) fills the bottom-middle of its image, as in RoboMME's wrist videos."""
    from dataforge.pipelines.robomme.env import WRIST_CAMERA
    from dataforge.pipelines.robomme.sim import make_env

    rec = record("PatternLock", 0)
    env = make_env("PatternLock", rec["difficulty"], render=True, size=64)
    try:
        obs, _ = env.reset(seed=rec["seed"])
        base = env.unwrapped
        cam = base.scene.sensors[WRIST_CAMERA]
        mount = base.agent.robot.links_map["camera_link"].pose.raw_pose[0].cpu().numpy()
        pose = cam.camera.global_pose.raw_pose[0].cpu().numpy()
        np.testing.assert_allclose(pose, mount, atol=1e-5)
        rgb = obs["sensor_data"][WRIST_CAMERA]["rgb"][0].cpu().numpy()
        depth = obs["sensor_data"][WRIST_CAMERA]["depth"][0].cpu().numpy()[..., 0]
        assert rgb.shape == (64, 64, 3) and rgb.std() > 10
        # the stick: a few centimetres from the lens, below the image centre
        assert depth[40:, 24:40].min() < 150  # mm
        assert np.median(depth[:20]) > 300  # the table far below
    finally:
        env.close()


@pytest.mark.slow
def test_stick_episode_is_written_as_upstream(tmp_path: Path) -> None:
    """A generated PatternLock episode, read from its ``record_dataset_PatternLock.h5`` as
    RoboMME's replay tool does: the joint action is the 7 joints and the -1 pad, the finger
    state float64 zeros (RoboMME's ``np.zeros(2)``), the gripper "closed", and the wrist camera
    on the stick robot sees something."""
    import h5py

    out = tmp_path / "ds"
    r = dfhelpers.run_cli(
        "robomme",
        "generate",
        "--tasks",
        "PatternLock",
        "--episodes-per-task",
        "1",
        "--size",
        "32",
        "--format",
        "hdf5",
        "--workers",
        "1",
        "--out",
        str(out),
        "--quiet",
        timeout=900,
    )
    assert r.returncode == 0, r.stderr
    with h5py.File(out / "record_dataset_PatternLock.h5", "r") as f:
        ep = f["episode_0"]
        steps = [ep[f"timestep_{t}"] for t in range(len([k for k in ep if k.startswith("time")]))]
        grip = np.array([s["obs/gripper_state"][()] for s in steps])
        assert steps[0]["obs/gripper_state"].dtype == np.float64 and not grip.any()
        assert all(bool(s["obs/is_gripper_close"][()]) for s in steps)
        actions = np.array([s["action/joint_action"][()] for s in steps])
        assert actions.shape[1] == 8 and np.all(actions[:, 7] == -1.0)
        assert np.ptp(actions[:, :7], axis=0).max() > 0.1  # the arm moved
        wrist = np.array([s["obs/wrist_rgb"][()] for s in steps[:: max(1, len(steps) // 8)]])
        assert wrist.shape[1:] == (32, 32, 3) and wrist.std() > 5
