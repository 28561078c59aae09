"""`dataforge view`: an episode as a Rerun recording, read back with the Rerun SDK's dataframe
API: every frame's images are the stored arrays, the camera's pose and pinhole are the stored
ones, and the recording names the dataset's manifest sha256."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import run_cli, synthetic_args

from dataforge.store import open_dataset

rdf = pytest.importorskip("rerun.dataframe", reason="the rerun extra is not installed")
EPISODE = "scene-0001/ep-001"


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("view") / "synth"
    r = run_cli(*synthetic_args(out, scenes=2))
    assert r.returncode == 0, r.stderr
    return out


def table(path: Path):
    return rdf.load_recording(str(path)).view(index="frame", contents="/**").select().read_all()


def test_frames_poses_and_source_are_the_episodes(synth: Path, tmp_path: Path) -> None:
    out = tmp_path / "ep.rrd"
    r = run_cli("view", str(synth), "--episode", EPISODE, "--out", str(out))
    assert r.returncode == 0, r.stderr
    t = table(out)
    with open_dataset(synth) as ds:
        ep = ds[EPISODE]
        rgb, depth, pose = ep["rgb"].read(), ep["depth"].read(), ep["pose"].read()
        semantic, k = ep["semantic"].read(), ep["intrinsics"].read()
    assert t.column("frame").to_pylist() == list(range(len(rgb)))
    for i in range(len(rgb)):
        got = np.asarray(t.column("/world/camera/rgb:ImageBuffer")[i].as_py()[0], np.uint8)
        np.testing.assert_array_equal(got, rgb[i].reshape(-1))
        d = np.frombuffer(
            bytes(t.column("/world/camera/depth:ImageBuffer")[i].as_py()[0]), np.float32
        )
        np.testing.assert_array_equal(d, depth[i].reshape(-1))
        s = np.asarray(t.column("/world/camera/semantic:ImageBuffer")[i].as_py()[0], np.uint8)
        np.testing.assert_array_equal(s, semantic[i].reshape(-1))
        (xyz,) = t.column("/world/camera:Translation3D")[i].as_py()
        np.testing.assert_allclose(xyz, pose[i][:3, 3], rtol=1e-6)
        (path,) = t.column("/world/path:LineStrip3D")[i].as_py()
        assert len(path) == i + 1  # the path so far
    (pin,) = t.column("/world/camera:PinholeProjection")[0].as_py()
    np.testing.assert_allclose(np.asarray(pin).reshape(3, 3).T, k, rtol=1e-6)  # column-major
    (text,) = t.column("/metadata:Text")[0].as_py()
    doc = json.loads(text)
    sha = hashlib.sha256((synth / "manifest.json").read_bytes()).hexdigest()
    assert doc["source"]["manifest_sha256"] == sha and doc["source"]["episode"] == EPISODE
    assert doc["metadata"]["scene"] == "scene-0001"


def test_every_keeps_every_nth_row_and_bad_input_is_one_line(synth: Path, tmp_path: Path) -> None:
    out = tmp_path / "half.rrd"
    r = run_cli("view", str(synth), "--episode", EPISODE, "--out", str(out), "--every", "3")
    assert r.returncode == 0, r.stderr
    assert table(out).column("frame").to_pylist() == [0, 3]  # 4 frames
    bad = run_cli("view", str(synth), "--episode", "nope", "--out", str(tmp_path / "x.rrd"))
    assert bad.returncode == 2 and "no episode 'nope'" in bad.stderr
    assert bad.stderr.count("\n") == 1, bad.stderr
    inside = run_cli("view", str(synth), "--episode", EPISODE, "--out", str(synth / "x.rrd"))
    assert inside.returncode == 2 and "--out" in inside.stderr


@pytest.mark.slow
def test_robomme_adds_subgoal_text_and_keyframes(tiny_dataset, tmp_path: Path) -> None:
    """RoboMME's viewer: the subgoal text where ``subgoal`` changes, keyframes at boundaries."""
    from dataforge.pipelines.robomme.view import subgoal_text

    root = tiny_dataset("robomme")
    with open_dataset(root) as ds:
        eid = next(iter(ds))
        sub, boundary = ds[eid]["subgoal"].read(), ds[eid]["is_subgoal_boundary"].read()
        texts = [subgoal_text(s) for s in ds[eid].metadata["subgoals"]]
        n = len(ds[eid]["front_rgb"])
    out = tmp_path / "robomme.rrd"
    r = run_cli("view", str(root), "--episode", eid, "--out", str(out), timeout=600)
    assert r.returncode == 0, r.stderr
    t = table(out)
    frames = t.column("frame").to_pylist()
    assert frames == list(range(n))
    logged = {
        f: v[0]
        for f, v in zip(frames, t.column("/task/subgoal:Text").to_pylist(), strict=True)
        if v
    }
    changes = [i for i in range(len(sub)) if i == 0 or sub[i] != sub[i - 1]]
    assert logged == {
        i: texts[sub[i]] if 0 <= sub[i] < len(texts) else "(no subgoal)" for i in changes
    }
    keys = [
        f for f, v in zip(frames, t.column("/task/keyframe:Text").to_pylist(), strict=True) if v
    ]
    assert keys == [i for i in range(len(boundary)) if boundary[i]]
    assert "/world/camera/front_rgb:ImageBuffer" in t.column_names or (
        "/camera/front_rgb:ImageBuffer" in t.column_names
    )
