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
        "robomme",
        "generate",
        "--tasks",
        "PickXtimes,VideoUnmask",
        "--episodes-per-task",
        "2",
        "--size",
        str(SIZE),
        "--format",
        "hdf5",
        "--workers",
        "2",
        "--out",
        str(out),
        "--quiet",
        timeout=1500,
    )
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


# What RoboMME's writer (env_record_wrapper/RecordWrapper.py) stores per episode and per step:
# path -> (dtype kind, shape); "str" is a variable-length UTF-8 string, "ascii" a
# variable-length ascii one (what h5py makes of the writer's ``str.encode()``), "bytes" a
# fixed-length one. Facts with file:line: fixtures/upstream_release_fields.json.
UPSTREAM_SETUP = {
    "seed": ("int64", ()),
    "difficulty": ("str", ()),
    "task_goal": ("str", (None,)),
    "front_camera_intrinsic": ("float32", (3, 3)),
    "wrist_camera_intrinsic": ("float32", (3, 3)),
    "available_multi_choices": ("str", ()),
}
# metadata episodes 0-2 of a recovery task miss above the grasp (RecordWrapper.py:1327-1340)
UPSTREAM_SETUP_Z = {"fail_recover_mode": ("str", ()), "fail_recover_seed_anchor": ("int64", ())}
UPSTREAM_STEP = {
    "obs/front_rgb": ("uint8", (SIZE, SIZE, 3)),
    "obs/wrist_rgb": ("uint8", (SIZE, SIZE, 3)),
    "obs/front_depth": ("int16", (SIZE, SIZE, 1)),
    "obs/wrist_depth": ("int16", (SIZE, SIZE, 1)),
    "obs/joint_state": ("float32", (7,)),
    "obs/eef_state": ("float32", (6,)),
    "obs/eef_state_raw/pose": ("float32", (3,)),
    "obs/eef_state_raw/quat": ("float32", (4,)),
    "obs/eef_state_raw/rpy": ("float32", (3,)),
    "action/eef_action_raw/pose": ("float64", (3,)),
    "action/eef_action_raw/quat": ("float64", (4,)),
    "action/eef_action_raw/rpy": ("float64", (3,)),
    "obs/gripper_state": ("float32", (2,)),
    "obs/is_gripper_close": ("bool", ()),
    "obs/front_camera_extrinsic": ("float32", (3, 4)),
    "obs/wrist_camera_extrinsic": ("float32", (3, 4)),
    "action/joint_action": ("float64", (8,)),
    "action/eef_action": ("float64", (7,)),
    "action/waypoint_action": ("float64", (7,)),  # float32 NaN x 7 while no waypoint is set
    "action/choice_action": ("str", ()),
    "info/simple_subgoal": ("ascii", ()),
    "info/simple_subgoal_online": ("ascii", ()),
    "info/grounded_subgoal": ("ascii", ()),
    "info/grounded_subgoal_online": ("ascii", ()),
    "info/is_video_demo": ("bool", ()),
    "info/is_subgoal_boundary": ("bool", ()),
    "info/is_completed": ("bool", ()),
}


def _kind(d: h5py.Dataset) -> str:
    info = h5py.check_string_dtype(d.dtype)
    if info is not None:
        if info.length is not None:
            return "bytes"
        return "str" if info.encoding == "utf-8" else "ascii"
    return str(d.dtype)


def _groups(g: h5py.Group) -> set[str]:
    """The paths of every dataset under ``g``."""
    names: set[str] = set()
    g.visititems(lambda name, obj: names.add(name) if isinstance(obj, h5py.Dataset) else None)
    return names


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    """(n, 4) unit wxyz -> (n, 3, 3) rotation matrices (the textbook formula)."""
    w, x, y, z = q.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        1,
    )


def replay_sequences(ep: h5py.Group) -> dict[str, list]:
    """The action sequences RoboMME's replay tool (scripts/dataset_replay.py) builds from one
    episode: timesteps in integer order, video steps skipped; joint/EEF actions as given;
    finite waypoints with adjacent repeats dropped; choice_action at subgoal boundaries."""
    keys = sorted((k for k in ep if k.startswith("timestep_")), key=lambda k: int(k[9:]))
    out: dict[str, list] = {"joint_angle": [], "ee_pose": [], "waypoint": [], "multi_choice": []}
    for k in keys:
        act, info = ep[k]["action"], ep[k]["info"]
        if bool(info["is_video_demo"][()]):
            continue
        out["joint_angle"].append(np.asarray(act["joint_action"][()], np.float32))
        out["ee_pose"].append(np.asarray(act["eef_action"][()], np.float32))
        wa = np.asarray(act["waypoint_action"][()], np.float32).reshape(-1)
        finite = wa.shape == (7,) and np.all(np.isfinite(wa))
        if finite and not (out["waypoint"] and np.array_equal(out["waypoint"][-1], wa)):
            out["waypoint"].append(wa)
        if bool(info["is_subgoal_boundary"][()]):
            doc = json.loads(act["choice_action"][()].decode())
            assert isinstance(doc.get("choice"), str) and "point" in doc
            if doc["choice"].strip():  # the replay tool skips subgoals that are no option
                out["multi_choice"].append(doc)
    return out


@pytest.mark.slow
@sim
def test_released_layout_field_by_field(dataset: Path) -> None:
    """Read record_dataset_<Task>.h5 as RoboMME's replay tool does, and compare each episode's
    structure, field by field, with what RoboMME's writer stores."""
    from dataforge.store import open_dataset

    with open_dataset(dataset) as ds:
        stored = {(ep.metadata["task"], ep.metadata["episode"]): ep for ep in ds.episodes()}
        subgoal = {key: ep["subgoal"].read() for key, ep in stored.items()}
        meta = {key: ep.metadata for key, ep in stored.items()}
    for task in ("PickXtimes", "VideoUnmask"):
        with h5py.File(dataset / f"record_dataset_{task}.h5", "r") as f:
            assert sorted(int(k.split("_")[1]) for k in f) == [0, 1]  # metadata episodes 0, 1
            for k in (0, 1):
                ep = f[f"episode_{k}"]
                m = meta[(task, k)]
                setup = ep["setup"]
                want = {**UPSTREAM_SETUP, **UPSTREAM_SETUP_Z}  # episodes 0, 1: "z"
                assert set(setup) == set(want)
                assert setup["fail_recover_mode"].asstr()[()] == "z"
                assert setup["fail_recover_seed_anchor"][()] == setup["seed"][()]
                for name, (kind, shape) in want.items():
                    assert _kind(setup[name]) == kind, name
                    if None not in shape:
                        assert setup[name].shape == shape, name
                assert setup["seed"][()] == scheme_seed(task, "train", k) + len(m["filtered"])
                assert setup["difficulty"].asstr()[()] == DIFFICULTY_CYCLE[k]
                assert setup["task_goal"][()][0].decode()
                assert setup["front_camera_intrinsic"][()][2, 2] == 1
                steps = sorted(int(s[9:]) for s in ep if s.startswith("timestep_"))
                assert steps == list(range(m["steps"]))  # contiguous from 0
                rows: dict[str, list] = {name: [] for name in UPSTREAM_STEP}
                for t in steps:
                    s = ep[f"timestep_{t}"]
                    assert _groups(s) == set(UPSTREAM_STEP)
                    for name, (kind, shape) in UPSTREAM_STEP.items():
                        d = s[name]
                        value = d[()]
                        if name == "action/waypoint_action" and np.isnan(value).all():
                            assert _kind(d) == "float32" and d.shape == (7,)
                        else:
                            assert (_kind(d), d.shape) == (kind, shape), (t, name)
                        rows[name].append(value)
                texts = ("_subgoal", "_subgoal_online")
                arr = {n: np.asarray(v) for n, v in rows.items() if not n.endswith(texts)}
                video = arr["info/is_video_demo"]
                assert video.any() == (task == "VideoUnmask")
                assert np.array_equal(video, np.sort(video)[::-1])  # the video comes first
                # boundaries: the first step of each subgoal (not each waypoint) and the first
                # completed step (the writer's task index moves past the list)
                sg = subgoal[(task, k)]
                done = arr["info/is_completed"]
                first_done = np.r_[done[0], done[1:] & ~done[:-1]]
                assert np.array_equal(
                    arr["info/is_subgoal_boundary"], np.r_[True, sg[1:] != sg[:-1]] | first_done
                )
                assert done[-1] and not done[0] and np.all(done[:-1] <= done[1:])
                simple = np.asarray(rows["info/simple_subgoal"])
                assert np.all((simple == b"All tasks completed") == done)  # the planner's view
                # the raw pieces are eef_state's / eef_action's, plus the unit quaternion
                state, raw = arr["obs/eef_state"], "obs/eef_state_raw/"
                assert np.array_equal(state, np.c_[arr[raw + "pose"], arr[raw + "rpy"]])
                act, raw_a = arr["action/eef_action"], "action/eef_action_raw/"
                assert np.array_equal(act[:, :6], np.c_[arr[raw_a + "pose"], arr[raw_a + "rpy"]])
                for name in (raw + "quat", raw_a + "quat"):
                    q = arr[name].astype(np.float64)
                    assert np.allclose(np.linalg.norm(q, axis=1), 1, atol=1e-6)
                    assert np.all(np.sum(q[1:] * q[:-1], axis=1) > 0), name  # sign-continuous
                # physics: the hand camera is bolted to the hand, so the TCP seen from the
                # wrist camera (extrinsic_cv, world -> camera) stays put over the episode
                ext = arr["obs/wrist_camera_extrinsic"].astype(np.float64)
                p = arr[raw + "pose"].astype(np.float64)
                in_cam = np.einsum("tij,tj->ti", ext[:, :, :3], p) + ext[:, :, 3]
                assert np.abs(in_cam - in_cam[0]).max() < 1e-4
                rot = _quat_matrix(arr[raw + "quat"].astype(np.float64))
                rel = np.einsum("tij,tjk->tik", ext[:, :, :3], rot)  # TCP axes in the camera
                assert np.abs(rel - rel[0]).max() < 1e-4
                g = arr["obs/gripper_state"]
                assert np.array_equal(arr["obs/is_gripper_close"], np.any(g < 0.03, axis=1))
                assert set(np.unique(arr["action/joint_action"][:, 7])) <= {-1.0, 1.0}
                for name in ("obs/eef_state", "action/eef_action"):  # angles never jump a turn
                    rpy = arr[name][:, 3:6].astype(np.float64)
                    assert np.abs(np.diff(rpy, axis=0)).max() < 1.0, name
                # waypoint_action is NaN only from the start of the episode, or of the
                # execution after a video, until that phase's first keyframe
                missing = np.isnan(arr["action/waypoint_action"]).all(axis=1)
                seen = False
                for t in steps:
                    if t > 0 and video[t] != video[t - 1]:
                        seen = False
                    assert not (missing[t] and seen), f"NaN waypoint after a keyframe at {t}"
                    seen = seen or not missing[t]
                seq = replay_sequences(ep)
                n_exec = int((~video).sum())
                assert len(seq["joint_angle"]) == n_exec and len(seq["ee_pose"]) == n_exec
                assert seq["waypoint"]
                options = json.loads(setup["available_multi_choices"].asstr()[()])
                assert [set(o) for o in options] == [{"label", "action", "need_parameter"}] * len(
                    options
                )
                assert [o["label"] for o in options] == [chr(97 + i) for i in range(len(options))]
                labels = {o["label"].upper() for o in options}
                assert {c["choice"] for c in seq["multi_choice"]} <= labels


@pytest.mark.slow
@sim
def test_depth_unprojects_onto_the_cube(dataset: Path) -> None:
    """At step 0 the front depth at the goal cube's projected centre is the cube's top face."""
    from dataforge.store import open_dataset

    with open_dataset(dataset) as ds:
        ep = ds["PickXtimes-00000"]
        layout = ep.metadata["layout"]
        x, y = layout["actors"][layout["goal_cube"]][:2]
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
    """SwingXtimes val episodes 0 and 1: episode 1's released seed is a retry (block seed + 1);
    both are generated at exactly their released seed and difficulty."""
    out = tmp_path / "val"
    r = dfhelpers.run_cli(
        "robomme",
        "generate",
        "--tasks",
        "SwingXtimes",
        "--split",
        "val",
        "--metadata-dir",
        str(METADATA / "val"),
        "--episodes-per-task",
        "2",
        "--size",
        "32",
        "--out",
        str(out),
        "--quiet",
        timeout=900,
    )
    assert r.returncode == 0, r.stderr
    want = load_metadata(METADATA / "val", "SwingXtimes")[:2]
    assert want[1].seed == scheme_seed("SwingXtimes", "val", 1) + 1  # a retried seed
    with h5py.File(out / "record_dataset_SwingXtimes.h5", "r") as f:
        for rec in want:
            setup = f[f"episode_{rec.episode}/setup"]
            assert setup["difficulty"].asstr()[()] == rec.difficulty
            assert setup["seed"][()] == rec.seed
    r = dfhelpers.run_cli("validate", str(out))
    assert r.returncode == 0, r.stdout + r.stderr


def test_bad_inputs_give_one_line_errors(tmp_path: Path) -> None:
    r = dfhelpers.run_cli("robomme", "generate", "--tasks", "Juggle", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "unknown task" in r.stderr and "PickXtimes" in r.stderr
    bad = tmp_path / "meta"
    bad.mkdir()
    (bad / "record_dataset_PickXtimes_metadata.json").write_text("{not json")
    r = dfhelpers.run_cli(
        "robomme",
        "generate",
        "--tasks",
        "PickXtimes",
        "--metadata-dir",
        str(bad),
        "--out",
        str(tmp_path / "y"),
    )
    assert r.returncode == 2 and "not a RoboMME metadata file" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
