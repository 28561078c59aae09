"""The RoboMME pipeline end to end: generate through the CLI, validate, read the released HDF5
layout with plain h5py field by field, determinism, failures filtered, seeds as released."""

from __future__ import annotations

import json
from pathlib import Path

import dfhelpers
import h5py
import numpy as np
import pytest

from dataforge.pipelines.robomme.seeds import (
    DIFFICULTY_CYCLE,
    TASK_INDEX,
    load_metadata,
    scheme_seed,
)
from dataforge.pipelines.robomme.suites import TASKS

METADATA = dfhelpers.SHARED / "data" / "robomme" / "env_metadata"
needs_metadata = pytest.mark.skipif(
    not METADATA.is_dir(), reason=f"RoboMME's released metadata not found at {METADATA}"
)
SIZE = 64


@needs_metadata
@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_seed_scheme_reproduces_the_released_metadata(split: str) -> None:
    for task in TASKS:
        records = load_metadata(METADATA / split, task)
        assert len(records) == (100 if split == "train" else 50)
        blocks = []
        for r in records:
            block, retry = divmod(r.seed - scheme_seed(task, split, 0), 100)
            assert 0 <= retry <= 7, (task, r)
            assert r.difficulty == DIFFICULTY_CYCLE[block % 4]
            blocks.append(block)
        # episode k uses block k, or a later one when whole blocks failed (val StopCube)
        assert blocks == sorted(set(blocks)) and all(b >= k for k, b in enumerate(blocks))
    assert sorted(TASK_INDEX) == sorted(TASKS)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """Two PickXtimes episodes (easy, easy) and one VideoUnmask episode, 64 x 64 cameras."""
    pytest.importorskip("mani_skill")
    out = tmp_path_factory.mktemp("robomme") / "ds"
    r = dfhelpers.run_cli(
        "robomme", "generate", "--tasks", "PickXtimes,VideoUnmask", "--episodes-per-task", "2",
        "--size", str(SIZE), "--format", "hdf5", "--workers", "2", "--out", str(out), "--quiet",
        "--noise", "0.5", timeout=1500,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


sim = dfhelpers.needs_maniskill()


@pytest.mark.slow
@sim
def test_validate_and_stats(dataset: Path) -> None:
    r = dfhelpers.run_cli("validate", str(dataset))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "robomme invariants hold" in r.stdout
    r = dfhelpers.run_cli("stats", str(dataset), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    counts = doc["pipeline"]["counts"] if "pipeline" in doc else doc["counts"]
    assert counts["episodes"] == 4
    assert counts["per task"]["PickXtimes"]["episodes"] == 2


@pytest.mark.slow
@sim
def test_released_layout_field_by_field(dataset: Path) -> None:
    """Read record_dataset_<Task>.h5 with plain h5py, following h5_data_format.md."""
    from dataforge.store import open_dataset

    with open_dataset(dataset) as ds:
        stored = {(ep.metadata["task"], ep.metadata["episode"]): ep for ep in ds.episodes()}
    for task in ("PickXtimes", "VideoUnmask"):
        with h5py.File(dataset / f"record_dataset_{task}.h5", "r") as f:
            assert sorted(f) == ["episode_1", "episode_2"]
            for k in (1, 2):
                ep = f[f"episode_{k}"]
                setup = ep["setup"]
                assert isinstance(setup["seed"][()], np.integer)
                assert setup["seed"][()] == scheme_seed(task, "train", k - 1) + len(
                    stored[(task, k - 1)].metadata["filtered"]
                )
                assert setup["difficulty"].asstr()[()] == DIFFICULTY_CYCLE[k - 1]
                goals = [g.decode() for g in setup["task_goal"][()]]
                assert goals and all(isinstance(g, str) and g for g in goals)
                for cam in ("front", "wrist"):
                    kmat = setup[f"{cam}_camera_intrinsic"][()]
                    assert kmat.dtype == np.float32 and kmat.shape == (3, 3) and kmat[2, 2] == 1
                choices = json.loads(setup["available_multi_choices"].asstr()[()])
                steps = sorted(int(s.split("_")[1]) for s in ep if s.startswith("timestep_"))
                assert steps == list(range(1, len(steps) + 1))
                video = []
                prev_wp = None
                for t in steps:
                    s = ep[f"timestep_{t}"]
                    obs, act, info = s["obs"], s["action"], s["info"]
                    for name in ("front_rgb", "wrist_rgb"):
                        assert obs[name].dtype == np.uint8 and obs[name].shape == (SIZE, SIZE, 3)
                    for name in ("front_depth", "wrist_depth"):
                        assert obs[name].dtype == np.int16 and obs[name].shape == (SIZE, SIZE, 1)
                    for name, shape in (("joint_state", (7,)), ("eef_state", (6,)),
                                        ("gripper_state", (2,)), ("front_camera_extrinsic", (3, 4)),
                                        ("wrist_camera_extrinsic", (3, 4))):  # fmt: skip
                        assert obs[name].dtype == np.float32 and obs[name].shape == shape, name
                    g = obs["gripper_state"][()]
                    assert np.all((g >= 0) & (g <= 0.04))
                    assert obs["is_gripper_close"].dtype == np.bool_
                    ja = act["joint_action"][()]
                    assert ja.dtype == np.float32 and ja.shape == (8,) and ja[7] in (-1.0, 1.0)
                    assert act["eef_action"].shape == (7,) and act["waypoint_action"].shape == (7,)
                    choice = json.loads(act["choice_action"].asstr()[()])
                    assert choice["choice"] in choices
                    for name in ("simple_subgoal", "simple_subgoal_online", "grounded_subgoal",
                                 "grounded_subgoal_online"):  # fmt: skip
                        assert isinstance(info[name][()], bytes) and info[name][()].decode()
                    wp = act["waypoint_action"][()]
                    boundary = bool(info["is_subgoal_boundary"][()])
                    assert boundary == (prev_wp is None or not np.array_equal(wp, prev_wp))
                    prev_wp = wp
                    assert bool(info["is_completed"][()]) == (t == steps[-1])
                    video.append(bool(info["is_video_demo"][()]))
                assert any(video) == (task == "VideoUnmask")
                assert video == sorted(video, reverse=True)  # the video comes first


@pytest.mark.slow
@sim
def test_depth_unprojects_onto_the_cube(dataset: Path) -> None:
    """At step 1 the front depth at the goal cube's projected centre is the cube's top face."""
    from dataforge.store import open_dataset

    with open_dataset(dataset) as ds:
        ep = ds["PickXtimes-00000"]
        x, y, _ = ep.metadata["layout"]["cubes"][0]
        k = ep["front_camera_intrinsic"].read().astype(np.float64)
        ext = ep["front_camera_extrinsic"][0].astype(np.float64)
        depth = ep["front_depth"][0][..., 0]
    top = np.array([x, y, 0.04])
    cam = ext[:, :3] @ top + ext[:, 3]
    u, v = (k @ cam)[:2] / cam[2]
    d = depth[round(v), round(u)] / 1000.0
    assert d == pytest.approx(cam[2], abs=0.015)
    # and the pixel unprojects back to a point on the cube's top face
    ray = np.linalg.inv(k) @ np.array([round(u), round(v), 1.0]) * d
    world = ext[:, :3].T @ (ray - ext[:, 3])
    assert abs(world[2] - 0.04) < 0.01 and np.hypot(world[0] - x, world[1] - y) < 0.025


@pytest.mark.slow
@sim
def test_planner_failure_is_filtered_not_written(monkeypatch) -> None:
    """A plan with an unreachable waypoint on the first seed: that seed is filtered, the next
    one is kept, and the filtered reason names the planner."""
    from dataforge.manip.executor import Noise, Subgoal, Waypoint
    from dataforge.pipelines.robomme import tasks
    from dataforge.pipelines.robomme.episode import run_pass1
    from dataforge.pipelines.robomme.seeds import EpisodeSpec

    tasks.register_all()
    cls = tasks.task_class("PickXtimes")
    first = scheme_seed("PickXtimes", "train", 0)
    original = cls.plan

    def plan(self):
        if self.episode_seed == first:
            far = np.array([1.5, 0.0, 0.6, 0.0, 1.0, 0.0, 0.0])
            yield Subgoal("reach", "reach", [Waypoint(far)])
        yield from original(self)

    monkeypatch.setattr(cls, "plan", plan)
    run, filtered = run_pass1(EpisodeSpec("PickXtimes", 0, first, "easy"), Noise(), max_retries=2)
    assert run is not None and run.seed == first + 1
    assert len(filtered) == 1 and filtered[0].seed == first
    assert "PlanningFailed" in filtered[0].reason


@pytest.mark.slow
@needs_metadata
@sim
def test_metadata_dir_generates_the_released_episodes(tmp_path: Path) -> None:
    out = tmp_path / "val"
    r = dfhelpers.run_cli(
        "robomme", "generate", "--tasks", "PickXtimes", "--split", "val", "--metadata-dir",
        str(METADATA / "val"), "--episodes-per-task", "1", "--size", "32", "--out", str(out),
        "--quiet", timeout=900,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    want = load_metadata(METADATA / "val", "PickXtimes")[0]
    with h5py.File(out / "record_dataset_PickXtimes.h5", "r") as f:
        setup = f[f"episode_{want.episode + 1}/setup"]
        assert setup["difficulty"].asstr()[()] == want.difficulty
        assert setup["seed"][()] >= want.seed
    r = dfhelpers.run_cli("validate", str(out))
    assert r.returncode == 0, r.stdout + r.stderr


def test_bad_inputs_give_one_line_errors(tmp_path: Path) -> None:
    r = dfhelpers.run_cli("robomme", "generate", "--tasks", "Juggle", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "unknown task" in r.stderr and "PickXtimes" in r.stderr
    bad = tmp_path / "meta"
    bad.mkdir()
    (bad / "record_dataset_PickXtimes_metadata.json").write_text("{not json")
    r = dfhelpers.run_cli(
        "robomme", "generate", "--tasks", "PickXtimes", "--metadata-dir", str(bad),
        "--out", str(tmp_path / "y"),
    )  # fmt: skip
    assert r.returncode == 2 and "not a RoboMME metadata file" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
