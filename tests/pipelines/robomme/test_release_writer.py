"""RoboMME demos as upstream's release writer (``RobommeRecordWrapper`` @a3842d1) writes them
(issue 39 items 1, 2, 4, 6): the gripper flag and the angles of ``waypoint_action``, the
recovery mode in the stored layout, StopCube's cube timing.

Expectations come from upstream's code, not from ours: ``subgoal_planner_func.py`` records each
keyframe (``_record_waypoint``) before the motion or gripper action it belongs to, typed
"open" or "close", and the writer stores 1.0 for "open", -1.0 otherwise (-1.0 always for the
stick robot); ``rpy_util.build_endeffector_pose_dict`` converts a keyframe's quaternion with
scipy's extrinsic "xyz" angles and no unwrapping. Values marked "upstream" were computed with
upstream's own functions (``rpy_util``, ``rotation_conversions``) or recorded from its StopCube
env; the others are derived by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dfhelpers
import numpy as np
import pytest

from dataforge.manip.executor import CLOSED, NO_WAYPOINT, OPEN, Executor, Noise, Waypoint

pytest.importorskip("torch")
pytest.importorskip("scipy")

FIXTURES = Path(__file__).parent / "fixtures"
DOWN = np.array([0.0, 1.0, 0.0, 0.0])  # TCP z down, wxyz
PI32 = float(np.float32(np.pi))  # 3.1415927: the writer's angles are float32
# upstream: matrix_to_quaternion(euler_angles_to_matrix(deg2rad([180, 0, 0]), "XYZ")), float32
UPSTREAM_BUTTON_QUAT = [4.371138828673793e-08, -1.0, 0.0, 0.0]
UPSTREAM_BUTTON_ROLL = -3.141592502593994  # upstream's rpy_util on that quaternion


class _Body:
    """What the primitives read of an actor or articulation: ``pose.p`` / ``pose.q``."""

    def __init__(self, xyz: tuple[float, float, float], yaw: float = 0.0) -> None:
        import torch

        self.pose = SimpleNamespace(
            p=torch.tensor([xyz], dtype=torch.float64),
            q=torch.tensor([[np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]], dtype=torch.float64),
        )


class _Planner:
    dof = 7

    def tcp_pose(self, q: np.ndarray) -> np.ndarray:
        return np.array([0.0, 0.0, 0.5, *DOWN])


def _keyframes(waypoints: list[Waypoint], *, gripper: bool = True) -> list[tuple[str, Any]]:
    """Run ``waypoints`` through the executor's keyframe bookkeeping (motions and holds stubbed)
    and list, per motion or gripper hold, the keyframe recorded while it runs."""
    ex = Executor.__new__(Executor)
    ex.noise, ex.rng = Noise(), np.random.default_rng(0)
    ex.has_gripper = gripper
    ex.gripper = OPEN if gripper else CLOSED
    ex._waypoint = NO_WAYPOINT
    ex.planner = _Planner()
    ex.arm_cmd = np.zeros(7)
    ex._qpos = lambda: np.zeros(9)
    log: list[tuple[str, Any]] = []
    ex.move = lambda pose, measured=False: log.append(("move", ex._waypoint.copy()))
    ex.hold = lambda steps, until=None: log.append(("hold", ex._waypoint.copy())) if steps else None
    for wp in waypoints:
        ex.run_waypoint(wp)
    return log


def _flags(log: list[tuple[str, Any]]) -> list[tuple[str, float]]:
    return [(kind, float(row[7])) for kind, row in log]


# -- item 1: the gripper flag ------------------------------------------------------------------


def _hand(xyz: tuple[float, float, float], q: Any = DOWN) -> Any:
    """An env whose TCP is at ``xyz`` turned ``q`` (wxyz; default pointing down, yaw 0)."""
    return SimpleNamespace(
        tcp_position=lambda: np.array(xyz, dtype=np.float64),
        tcp_quat=lambda: np.array(q, dtype=np.float64),
    )


def test_pick_is_close_from_the_grasp_keyframe_on() -> None:
    """``solve_pickup``: an open before anything (no keyframe yet), "open" at the approach,
    an open there, "close" at the grasp (the descent runs with it), "close" at the lift; the
    opens and the closing record nothing. Upstream's heights: the approach and the lift at
    z 0.15 whatever the object's height, the grasp at its centre."""
    from dataforge.pipelines.robomme import skills

    log = _keyframes(skills.pick(_hand((0.0, 0.0, 0.4)), _Body((0.1, 0.05, 0.02))))
    flags = _flags(log)
    assert flags[0][0] == "hold" and np.isnan(flags[0][1])
    assert flags[1:] == [
        ("move", 1.0),
        ("hold", 1.0),
        ("move", -1.0),
        ("hold", -1.0),
        ("move", -1.0),
    ]
    np.testing.assert_allclose(log[1][1][:3], [0.1, 0.05, 0.15])  # the approach
    np.testing.assert_allclose(log[3][1][:3], [0.1, 0.05, 0.02])  # the grasp pose
    np.testing.assert_allclose(log[5][1][:3], [0.1, 0.05, 0.15])  # the lift


def test_pick_toggles_the_gripper_six_steps_as_the_solver_does() -> None:
    """ManiSkill's ``open_gripper()`` and ``close_gripper()`` step 6 times; ``solve_pickup``
    opens before the approach and again above the object, and closes at the grasp."""
    from dataforge.pipelines.robomme import skills

    wps = skills.pick(_hand((0.0, 0.0, 0.4)), _Body((0.1, 0.05, 0.02)))
    toggles = [(wp.gripper, wp.hold) for wp in wps if wp.pose is None]
    assert toggles == [(OPEN, 6), (OPEN, 6), (CLOSED, 6)]
    assert wps[0].pose is None and wps[2].pose is None  # first, and after the approach


def test_pick_grasps_the_face_nearest_the_hand() -> None:
    """``compute_grasp_info_by_obb`` with the TCP's closing axis: of a cube's face pairs (yaw
    mod 90 degrees), the one nearest the hand's present yaw, so a cube turned 80 degrees is
    grasped at -10 degrees from a hand at 0 (by hand: 80 - 90)."""
    from dataforge.pipelines.robomme import skills

    cube = _Body((0.1, 0.05, 0.02), yaw=np.deg2rad(80.0))
    yaw = skills.nearest_face_yaw(_hand((0.0, 0.0, 0.4)), cube)
    assert yaw == pytest.approx(np.deg2rad(-10.0))


def test_put_onto_is_open_from_the_place_keyframe_on() -> None:
    """``solve_putonto_whenhold``: "close" above the target at z 0.15, "open" down at the
    target's height, "open" back up; the hand keeps its orientation."""
    from dataforge.pipelines.robomme import skills

    log = _keyframes(skills.put_onto(_hand((0.0, 0.0, 0.3)), np.array([0.1, 0.0, 0.005])))
    assert _flags(log) == [("move", -1.0), ("move", 1.0), ("hold", 1.0), ("move", 1.0)]
    np.testing.assert_allclose([row[2] for _, row in log], [0.15, 0.005, 0.005, 0.15])
    for _, row in log:
        np.testing.assert_allclose(row[3:7], DOWN)


def test_put_down_records_nothing_for_the_rise() -> None:
    """``solve_putdown_whenhold``: "open" at the release height; the rise after opening has no
    record, so the keyframe stays the release pose."""
    from dataforge.pipelines.robomme.tasks.permanence.base import RELEASE_Z, put_down

    log = _keyframes(put_down(_hand((0.05, -0.1, 0.2), q=[1.0, 0.0, 0.0, 0.0])))
    assert _flags(log) == [("move", 1.0), ("hold", 1.0), ("move", 1.0)]
    np.testing.assert_allclose(log[2][1][:3], [0.05, -0.1, RELEASE_Z])


def test_button_press_records_close_before_the_gripper_closes() -> None:
    """``solve_button``: "open" at the hover (during the move there), "close" at the same
    pose before ``close_gripper``, "close" down and back up; all in upstream's orientation."""
    from dataforge.pipelines.robomme import skills

    log = _keyframes(skills.press_spring_button(_Body((0.2, 0.1, 0.0))))
    assert _flags(log) == [("move", 1.0), ("hold", -1.0), ("move", -1.0), ("move", -1.0)]
    np.testing.assert_allclose([row[2] for _, row in log], [0.15, 0.15, 0.0, 0.15])
    for _, row in log:
        np.testing.assert_allclose(row[3:7], UPSTREAM_BUTTON_QUAT, atol=0)


def test_missed_grasp_flags_follow_solve_pickup_fail() -> None:
    """``solve_pickup_fail``: "open" above, "close" at the missed grasp, "open" back above."""
    from dataforge.pipelines.robomme.recovery import MissedGrasp, miss_waypoints

    grasp = Waypoint(np.array([0.1, 0.0, 0.02, *DOWN]), OPEN, grasp="cube")
    log = _keyframes(miss_waypoints(grasp, MissedGrasp(0, "z", (0, 0, 1))))
    flags = _flags(log)
    assert flags[1:] == [
        ("move", 1.0),
        ("move", -1.0),
        ("hold", -1.0),
        ("move", 1.0),
        ("hold", 1.0),
    ]


def test_the_stick_robot_is_always_close() -> None:
    from dataforge.pipelines.robomme import skills

    log = _keyframes(skills.pick(_hand((0.0, 0.0, 0.4)), _Body((0.1, 0.05, 0.02))), gripper=False)
    flags = [flag for _, flag in _flags(log)]
    assert np.isnan(flags[0])  # the first open: no keyframe yet
    assert set(flags[1:]) == {-1.0}


# -- item 2: the keyframe's angles -------------------------------------------------------------


@pytest.mark.parametrize(
    ("quat", "rpy"),
    [
        (DOWN, [PI32, 0.0, 0.0]),  # scipy: roll = atan2(x, -y) - atan2(-x, y) = pi
        (-DOWN, [-PI32, 0.0, 0.0]),  # the other sign: -pi (the writer does not align it)
        ([0.0, np.cos(0.15), np.sin(0.15), 0.0], [PI32, 0.0, 0.3]),  # top-down, yaw 0.3
        ([np.cos(0.2), 0.0, 0.0, np.sin(0.2)], [0.0, 0.0, 0.4]),
        (UPSTREAM_BUTTON_QUAT, [UPSTREAM_BUTTON_ROLL, 0.0, 0.0]),
    ],
)
def test_keyframe_angles_are_the_writers(quat: Any, rpy: list[float]) -> None:
    from dataforge.pipelines.robomme.episode import keyframe_rpy

    got = keyframe_rpy(np.asarray(quat, dtype=np.float64))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, rpy, atol=2e-7, rtol=0)
    assert np.sign(got[0]) == np.sign(rpy[0])  # the branch, not only the angle mod 2 pi


def test_waypoint_rows_convert_each_keyframe_alone() -> None:
    """A top-down keyframe is stored with roll +pi whatever the end-effector's continuous roll
    (ours unwrapped it onto the end-effector's -pi); NaN rows stay NaN; float32 positions."""
    from dataforge.pipelines.robomme.episode import waypoint_rows

    key = np.array([0.1, -0.2, 0.15, *DOWN, -1.0])
    rows = waypoint_rows(np.stack([NO_WAYPOINT, key, key]))
    assert np.isnan(rows[0]).all()
    np.testing.assert_array_equal(rows[1], rows[2])
    np.testing.assert_allclose(rows[1], [0.1, -0.2, 0.15, PI32, 0.0, 0.0, -1.0], atol=1e-7)
    assert rows[1, 0] == np.float32(0.1)


# -- item 6: the recovery mode in the stored layout ----------------------------------------------


@pytest.mark.parametrize("task", ["PickXtimes", "VideoUnmask", "VideoRepick"])
def test_the_stored_recovery_mode_is_the_executed_one(task: str) -> None:
    """The harness passes ``robomme_failure_recovery_mode="xy"`` for metadata episodes 3-5;
    the layout's ``params["recovery"]["mode"]`` says so, and the draw itself is unchanged."""
    from dataforge.pipelines.robomme.layouts import upstream_layout
    from dataforge.pipelines.robomme.seeds import scheme_seed

    seed = scheme_seed(task, "train", 3)
    z = upstream_layout(task, seed, "easy", recovery=True)
    xy = upstream_layout(task, seed, "easy", recovery=True, recovery_mode="xy")
    assert z.params["recovery"]["mode"] == "z" and xy.params["recovery"]["mode"] == "xy"
    assert {k: v for k, v in xy.params["recovery"].items() if k != "mode"} == {
        k: v for k, v in z.params["recovery"].items() if k != "mode"
    }
    assert xy.actors == z.actors


def test_the_task_envs_pass_the_mode_on() -> None:
    """Each task family's layout read (``sample_layout`` / ``upstream_scene``) writes the mode
    the reset was given."""
    from dataforge.pipelines.robomme.seeds import scheme_seed
    from dataforge.pipelines.robomme.tasks.counting.base import _Counting
    from dataforge.pipelines.robomme.tasks.permanence.base import _Permanence
    from dataforge.pipelines.robomme.tasks.reference.base import upstream_scene

    def env(task: str) -> SimpleNamespace:
        return SimpleNamespace(
            TASK=task,
            episode_seed=scheme_seed(task, "train", 3),
            difficulty="easy",
            recovery=True,
            recovery_mode="xy",
            SWAPS=False,
        )

    assert _Counting.sample_layout(env("PickXtimes"))["recovery"]["mode"] == "xy"
    assert _Permanence.sample_layout(env("VideoUnmask"))["recovery"]["mode"] == "xy"
    assert upstream_scene(env("VideoRepick"))["params"]["recovery"]["mode"] == "xy"


# -- item 4: StopCube's cube -------------------------------------------------------------------


@pytest.mark.slow
@dfhelpers.needs_maniskill()
def test_stopcube_states_show_upstreams_observation(make: Any) -> None:
    """The state after step k (what pass 2 renders for step k) holds the cube where upstream's
    observation of step k shows it (``StopCube.step`` moves it after ``super().step``, i.e.
    after the observation: upstream's env *state* after step k is one step ahead, as
    ``state_xy`` in the fixture shows). Recorded from upstream's env, seed 1020000."""
    fix = json.loads((FIXTURES / "stopcube_upstream_timing.json").read_text())
    env = make("StopCube", "easy", fix["seed"])
    base = env.unwrapped
    assert base.layout["pass_steps"] == fix["move_interval"]
    q = base.agent.robot.get_qpos()[0].cpu().numpy()
    action = np.concatenate([q[:7], [1.0]])
    after = []
    for _ in fix["obs_xy"]:
        env.step(action)
        after.append(base.cube.pose.p[0, :2].cpu().numpy().astype(np.float64))
    after = np.asarray(after)
    np.testing.assert_allclose(after, fix["obs_xy"], atol=1e-6)
    shift = np.abs(after - np.asarray(fix["state_xy"])).max()
    assert shift > 5e-3  # near peak speed (T = 120: 7.5 mm a step): the two are apart
