"""RoboMME's recovery rule (one missed grasp before a pick of metadata episodes 0-5): which
episodes and tasks, the miss's geometry, where it goes in a plan, and on a real episode."""

from __future__ import annotations

from collections import Counter

import dfhelpers
import numpy as np
import pytest

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.pipelines.robomme.recovery import (
    RECOVERY_TASKS,
    MissedGrasp,
    miss_waypoints,
    missed_grasp,
    recovery_mode,
    with_missed_grasp,
    xy_signs,
)
from dataforge.pipelines.robomme.suites import TASKS

pytest.importorskip("torch")
DOWN = np.array([0.0, 1.0, 0.0, 0.0])


def test_which_episodes_and_tasks() -> None:
    assert len(RECOVERY_TASKS) == 11
    assert {"StopCube", "MoveCube", "InsertPeg", "PatternLock", "RouteStick"} == (
        set(TASKS) - RECOVERY_TASKS
    )
    for task in TASKS:
        modes = [recovery_mode(task, k) for k in range(8)]
        if task in RECOVERY_TASKS:
            assert modes == ["z", "z", "z", "xy", "xy", "xy", None, None]
        else:
            assert modes == [None] * 8
    assert missed_grasp("PickXtimes", 6, 1234, 0) is None
    assert missed_grasp("PickXtimes", 1, 1234, 2) == MissedGrasp(2, "z", (0, 0, 1))


def test_sideways_signs_are_seeded_and_never_zero() -> None:
    seen = Counter(xy_signs(seed) for seed in range(400))
    assert (0, 0) not in seen
    assert set(seen) <= {(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)}
    assert len(seen) == 8  # every direction occurs
    assert xy_signs(1010300) == xy_signs(1010300)
    miss = missed_grasp("BinFill", 4, 77, 0)
    assert miss is not None and miss.mode == "xy" and miss.direction == (*xy_signs(77), 0)


@pytest.mark.parametrize(("kind", "size", "ready"), [("cube", 0.04, 0.15), ("bin", 0.035, 0.2)])
def test_the_miss_closes_beside_or_above_the_grasp(kind: str, size: float, ready: float) -> None:
    grasp = Waypoint(np.array([0.1, -0.05, 0.02, *DOWN]), OPEN, grasp=kind)
    for miss in (MissedGrasp(0, "z", (0, 0, 1)), MissedGrasp(0, "xy", (1, -1, 0))):
        wps = miss_waypoints(grasp, miss)
        assert [w.gripper for w in wps] == [OPEN, OPEN, CLOSED, OPEN]
        assert not any(w.noisy for w in wps) and wps[0].pose is None
        above, fail, back = wps[1].pose, wps[2].pose, wps[3].pose
        assert above is not None and fail is not None and back is not None
        np.testing.assert_allclose(fail[:3] - grasp.pose[:3], np.array(miss.direction) * size)
        np.testing.assert_allclose(fail[3:], grasp.pose[3:])  # same orientation
        assert above[2] == back[2] == ready and np.allclose(above[:2], fail[:2])


def _plan() -> list[Subgoal]:
    pose = np.array([0.0, 0.0, 0.02, *DOWN])

    def pick(name: str, video: bool = False) -> Subgoal:
        return Subgoal(name, name, [Waypoint(pose, OPEN, grasp="cube")], video=video)

    place = Subgoal("place", "place", [Waypoint(pose, CLOSED)])
    return [pick("video pick", video=True), pick("pick 0"), place, pick("pick 1"), place]


def test_the_miss_goes_into_the_chosen_non_video_pick() -> None:
    for k in (0, 1):
        out = list(with_missed_grasp(_plan(), MissedGrasp(k, "z", (0, 0, 1))))
        grown = [
            sg.simple
            for sg, old in zip(out, _plan(), strict=True)
            if len(sg.waypoints) != len(old.waypoints)
        ]
        assert grown == [f"pick {k}"]
        assert len(out[1 + 2 * k].waypoints) == 5  # 4 for the miss, then the pick
    assert [sg.simple for sg in with_missed_grasp(_plan(), None)] == [sg.simple for sg in _plan()]
    with pytest.raises(ValueError, match="beyond the plan's 2 picks"):
        list(with_missed_grasp(_plan(), MissedGrasp(2, "z", (0, 0, 1))))


@pytest.mark.slow
@dfhelpers.needs_maniskill()
@pytest.mark.parametrize(("episode", "mode"), [(0, "z"), (3, "xy")])
def test_a_recovery_episode_misses_then_picks(episode: int, mode: str) -> None:
    """PickXtimes train episode 0 (z) and 3 (xy): the gripper closes on nothing at the offset
    pose (the cube stays on the table), then the episode picks it and succeeds."""
    from dataforge.manip.executor import Noise
    from dataforge.pipelines.robomme.episode import run_pass1
    from dataforge.pipelines.robomme.seeds import DIFFICULTY_CYCLE, EpisodeSpec, scheme_seed

    spec = EpisodeSpec(
        "PickXtimes",
        episode,
        scheme_seed("PickXtimes", "train", episode),
        DIFFICULTY_CYCLE[episode % 4],
    )
    run, filtered = run_pass1(spec, Noise(), max_retries=3, recovery=True)
    assert run is not None, [f.reason for f in filtered]
    miss = run.missed_grasp
    assert miss is not None and miss["mode"] == mode
    # the missed object's kind and offset (setup/fail_recover_xy_signed_offset's x, y)
    assert miss["kind"] == "cube"
    assert miss["offset"] == [0.04 * d for d in miss["direction"]]
    plain, _ = run_pass1(spec, Noise(), max_retries=3, recovery=False)
    assert plain is not None and plain.missed_grasp is None and plain.seed == run.seed
    rec = run.recording
    assert rec.success[-1] and len(rec) > len(plain.recording) + 20
    # the missed pick's subgoal: its first closing happens at the offset pose, fingers empty
    picks = [sg for sg in rec.subgoals if not sg["video"] and sg["simple"].startswith("pick up")]
    span = picks[miss["pick"]]
    joint = np.asarray(rec.joint_action)[span["start"] : span["end"]]
    first_close = span["start"] + int(np.argmax(joint[:, 7] == CLOSED))
    tcp = np.asarray(rec.tcp)[first_close]
    wp = np.asarray(rec.waypoint_action)[first_close]
    np.testing.assert_allclose(tcp[:3], wp[:3], atol=0.01)
    qpos = np.asarray(rec.qpos)
    closed_on_nothing = qpos[first_close : first_close + 6, 7:9].min() < 0.005
    assert closed_on_nothing, "the fingers met the cube during the miss"
    # and the same subgoal then closes on the cube (a second closing, fingers apart)
    later = np.flatnonzero(joint[:, 7] == CLOSED)
    regrasp = span["start"] + int(later[np.argmax(np.diff(later, prepend=later[0]) > 1)])
    assert regrasp > first_close and qpos[regrasp + 8, 7:9].min() > 0.01


class _Body:
    """What ``actor_position``/``actor_yaw`` read: ``pose.p`` and ``pose.q`` (1 x n tensors)."""

    def __init__(self, xyz: tuple[float, float, float], yaw: float) -> None:
        import torch

        self.pose = type("Pose", (), {})()
        self.pose.p = torch.tensor([xyz], dtype=torch.float64)
        self.pose.q = torch.tensor([[np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]])


def test_the_pick_after_a_miss_follows_a_pushed_object() -> None:
    """The miss may push the cube: the pick made before it aims where the cube is when each
    keyframe is reached (moved and turned with it), as upstream re-reads the pose."""
    from dataforge.manip.rotations import quat_to_rpy
    from dataforge.pipelines.robomme.recovery import follow

    cube = _Body((0.1, 0.0, 0.02), 0.0)
    above = Waypoint(np.array([0.1, 0.0, 0.14, *DOWN]), OPEN)
    grasp = Waypoint(np.array([0.1, 0.0, 0.02, *DOWN]), OPEN, grasp="cube", target=cube)
    live = follow([above, Waypoint(None, CLOSED, hold=8), grasp], cube)
    assert live[1].pose is None and all(callable(w.pose) for w in (live[0], live[2]))
    cube.pose.p[0, :2] = cube.pose.p.new_tensor([0.13, -0.02])  # pushed 3.6 cm
    cube.pose.q[0] = cube.pose.q.new_tensor([np.cos(0.1), 0.0, 0.0, np.sin(0.1)])  # 0.2 rad
    for wp, before in ((live[0], above), (live[2], grasp)):
        pose = wp.pose()
        np.testing.assert_allclose(pose[:3], [0.13, -0.02, before.pose[2]], atol=1e-9)
        turn = quat_to_rpy(pose[3:]) - quat_to_rpy(before.pose[3:])
        assert np.isclose(abs(turn[2]), 0.2, atol=1e-6) or np.isclose(abs(turn[0]), 0.2)
    assert follow([above], None)[0] is above  # no target: kept as made
