"""The RoboMME paper's constants, pinned at what a run gets without flags (issue 35).

Values are read where a default run takes them: the config ``dataforge robomme generate``
builds from its defaults (``Pipeline.job`` is intercepted while the command runs), then the job
built from that config (its schema and work units; building it starts no simulator). The camera
and start-pose facts live in the ManiSkill env module, checked where ManiSkill is installed.
Sources: ``../shared/papers/robomme.txt`` (§3.2 "Observations and Actions", "Data Curation",
Table 1), ``../shared/specs/robomme.md`` and the upstream benchmark code as
docs/robomme_upstream.md records it (the spec: upstream's facts win over the paper).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from clihelpers import cli_config

from dataforge.manip.executor import CLOSED, OPEN, WORKSPACE_M
from dataforge.pipelines.robomme import PIPELINE
from dataforge.pipelines.robomme.cli import robomme
from dataforge.pipelines.robomme.config import RobommeConfig
from dataforge.pipelines.robomme.h5layout import ACTION_FIELDS
from dataforge.pipelines.robomme.recovery import MISS_M, RECOVERY_TASKS, recovery_mode
from dataforge.pipelines.robomme.seeds import DIFFICULTY_CYCLE, scheme_seed
from dataforge.pipelines.robomme.suites import PAPER_AVG_STEPS, STICK_TASKS, TASK_SUITES, TASKS


def defaults(*args: str) -> RobommeConfig:
    cfg = cli_config(robomme.commands["generate"], *args)
    assert isinstance(cfg, RobommeConfig)
    return cfg


def default_job(*args: str) -> Any:
    return PIPELINE.job(defaults(*args), seed=0, fmt="zarr")


# paper Table 1: task, suite and average steps, in the paper's order (upstream's ids spell
# PickXtimes / SwingXtimes, as the released metadata does; the paper prints "XTimes")
PAPER_TABLE_1 = {
    "PickXtimes": ("Counting", 538),
    "BinFill": ("Counting", 604),
    "SwingXtimes": ("Counting", 435),
    "StopCube": ("Counting", 317),
    "VideoUnmask": ("Permanence", 217),
    "ButtonUnmask": ("Permanence", 267),
    "VideoUnmaskSwap": ("Permanence", 348),
    "ButtonUnmaskSwap": ("Permanence", 400),
    "PickHighlight": ("Reference", 346),
    "VideoRepick": ("Reference", 687),
    "VideoPlaceButton": ("Reference", 974),
    "VideoPlaceOrder": ("Reference", 1134),
    "MoveCube": ("Imitation", 394),
    "InsertPeg": ("Imitation", 479),
    "PatternLock": ("Imitation", 208),
    "RouteStick": ("Imitation", 370),
}


def test_the_16_tasks_of_table_1_are_the_default() -> None:
    assert defaults().tasks == tuple(PAPER_TABLE_1) == TASKS, "paper Table 1: 16 tasks"
    assert {t: (TASK_SUITES[t], PAPER_AVG_STEPS[t]) for t in TASKS} == PAPER_TABLE_1
    units = default_job().units
    assert [u.params["task"] for u in units] == list(PAPER_TABLE_1), "one episode per task"


def test_both_cameras_are_256_by_256() -> None:
    assert defaults().size == 256, "paper §3.2: front and wrist cameras, both 256x256"
    schema = default_job().schema
    for cam in ("front", "wrist"):
        assert schema[f"{cam}_rgb"].shape == (None, 256, 256, 3)
        assert schema[f"{cam}_rgb"].dtype == "uint8"
        depth = schema[f"{cam}_depth"]
        assert (depth.shape, depth.dtype, depth.units) == ((None, 256, 256, 1), "int16", "mm"), (
            "spec notes: depth int16 in mm"
        )


def test_action_and_state_dimensions() -> None:
    schema = default_job().schema
    assert schema["joint_action"].shape == (None, 8), "paper §3.2: joint actions 8D (7 + gripper)"
    assert schema["eef_action"].shape == (None, 7), "paper §3.2: EEF actions 7D (xyz, Euler, grip)"
    assert schema["waypoint_action"].shape == (None, 7)
    # paper §3.2: proprioception = joint positions, EEF pose and gripper state (7-DOF Panda)
    assert schema["joint_state"].shape == (None, 7)
    assert schema["eef_state"].shape == (None, 6)
    assert schema["gripper_state"].shape == (None, 2)
    assert schema["joint_state"].dtype == "float32", "spec notes: states float32"
    assert set(ACTION_FIELDS) == {"joint_action", "eef_action", "waypoint_action"}
    assert (CLOSED, OPEN) == (-1.0, 1.0), "spec notes: a gripper action of -1 closes, 1 opens"


def test_the_seed_scheme_of_the_released_metadata() -> None:
    # spec notes: seed = base + stride x task_index + 100 x block + retry; train base 0 /
    # stride 1,000, val 1,000,000 / 10,000, test 500,000 / 10,000; task_index PickXtimes 1 ..
    # RouteStick 16
    order = [
        "PickXtimes",
        "StopCube",
        "SwingXtimes",
        "BinFill",
        "VideoUnmaskSwap",
        "VideoUnmask",
        "ButtonUnmaskSwap",
        "ButtonUnmask",
        "VideoRepick",
        "VideoPlaceButton",
        "VideoPlaceOrder",
        "PickHighlight",
        "InsertPeg",
        "MoveCube",
        "PatternLock",
        "RouteStick",
    ]
    seeds = {u.params["task"]: u.params["seed"] for u in default_job().units}
    assert defaults().split == "train"
    assert seeds == {t: 1_000 * (k + 1) for k, t in enumerate(order)}
    assert scheme_seed("PickXtimes", "val", 2, 3) == 1_000_000 + 10_000 + 200 + 3
    assert scheme_seed("RouteStick", "test", 1) == 500_000 + 160_000 + 100
    assert defaults().max_retries == 7, "spec notes: retries 1-7 in the released files"


def test_difficulty_split_easy_medium_hard() -> None:
    assert DIFFICULTY_CYCLE == ("easy", "easy", "medium", "hard"), "spec: [block mod 4]"
    train = default_job("--episodes-per-task", "100").units
    by_task: dict[str, Counter[str]] = {}
    for u in train:
        by_task.setdefault(u.params["task"], Counter())[u.params["difficulty"]] += 1
    assert len(by_task) == 16
    for task, counts in by_task.items():
        # spec notes: train 100 records per task (easy 50 / medium 25 / hard 25)
        assert counts == {"easy": 50, "medium": 25, "hard": 25}, task
    for split in ("val", "test"):
        units = default_job("--split", split, "--episodes-per-task", "50").units
        counts = Counter(u.params["difficulty"] for u in units if u.params["task"] == "BinFill")
        assert counts == {"easy": 26, "medium": 12, "hard": 12}, f"spec notes: {split} 26/12/12"


def test_recovery_noise_defaults() -> None:
    cfg = defaults()
    # spec: the upstream code wins; its "5% noise" is one missed grasp in metadata episodes 0-5
    # (docs/robomme_upstream.md §5): --noise upstream, no waypoint detours
    assert (cfg.noise, cfg.noise_prob) == ("upstream", 0.0)
    modes = [recovery_mode("PickXtimes", k) for k in range(7)]
    assert modes == ["z", "z", "z", "xy", "xy", "xy", None], "upstream: episodes 0-2 z, 3-5 xy"
    assert MISS_M == {"cube": 0.04, "bin": 0.035}, "upstream: 2 x cube half-size; 0.035 bins"
    assert len(RECOVERY_TASKS) == 11 and not RECOVERY_TASKS & {"StopCube", *STICK_TASKS}
    # spec notes: the paper's "5%" also as --noise waypoint (probability and size options)
    waypoint = defaults("--noise", "waypoint")
    assert (waypoint.noise_prob, waypoint.noise_scale, WORKSPACE_M) == (0.05, 0.05, 1.0)
    assert defaults("--noise", "waypoint", "--split", "val").noise_prob == 0.0


@pytest.mark.slow  # imports ManiSkill
def test_cameras_and_start_pose_of_the_upstream_envs() -> None:
    from dfhelpers import needs_maniskill

    mark = needs_maniskill()
    if mark.args[0]:
        pytest.skip(mark.kwargs["reason"])
    from dataforge.pipelines.robomme import env
    from dataforge.pipelines.robomme.tasks import task_class

    # docs/robomme_upstream.md §2: every upstream task's _default_sensor_configs
    assert (env.FRONT_EYE, env.FRONT_TARGET) == ((0.3, 0.0, 0.4), (0.0, 0.0, -0.2))
    assert pytest.approx(np.pi / 2) == env.FRONT_FOVY and env.FRONT_SIZE == 256
    assert (env.CAMERA_NEAR, env.CAMERA_FAR) == (0.01, 100.0)
    # upstream utils/reset_panda.py: [0, 0, 0, -pi/2, 0, pi/2, pi/4] and fingers open 0.04
    np.testing.assert_allclose(
        env.START_QPOS, [0, 0, 0, -np.pi / 2, 0, np.pi / 2, np.pi / 4, 0.04, 0.04]
    )
    assert set(env.DIFFICULTIES) == set(DIFFICULTY_CYCLE), "paper §3.2: easy, medium, hard"
    # paper §3.2: the Imitation suite and the tasks prefixed "Video" start with a video
    for task in TASKS:
        cls = task_class(task)
        assert (task, TASK_SUITES[task]) == (cls.TASK, cls.SUITE)
        video = task.startswith("Video") or TASK_SUITES[task] == "Imitation"
        assert cls.VIDEO is video, task
