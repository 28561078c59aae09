"""FindingDory experience collection: stored frames are the head camera's renders with the clock
stamped, the log agrees with the plan and the frames, the MP4 shows the stored frames, and a
long day is streamed to the shard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from dfhelpers import run_cli

from dataforge.pipelines.findingdory.config import HeadCamera
from dataforge.pipelines.findingdory.log import EpisodeLog, clock
from dataforge.pipelines.findingdory.plan import EpisodePlan
from dataforge.store import open_dataset


@pytest.fixture(scope="module")
def experience(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("fdc")
    eps, out = base / "episodes", base / "experience"
    r = run_cli("findingdory", "episodes", "--scenes", "generate:1", "--room-spec",
                "kitchen-living-room", "--episodes", "1", "--rearrangements", "3", "--seed",
                "11", "--out", str(eps), "--quiet", timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = run_cli("findingdory", "collect", str(eps), "--resolution", "96x128", "--video", "mp4",
                "--out", str(out), "--quiet", timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return eps, out


def test_frames_are_the_stamped_renders_of_their_poses(experience: tuple[Path, Path]) -> None:
    from dataforge.pipelines.findingdory.day_world import plan_world
    from dataforge.viz.overlay import stamp

    eps, out = experience
    with open_dataset(eps) as ds:
        raw = ds[ds.episode_ids[0]]["house_json"].read().tobytes()
    with open_dataset(out) as ds:
        ep = ds[ds.episode_ids[0]]
        plan = EpisodePlan.from_dict(ep.metadata["plan"])
        cam = HeadCamera(width=96, height=128)
        world = plan_world(raw, {}, plan, camera=cam, agent_radius=0.25)
        pos, yaw = ep["position"][0], float(ep["yaw"][0])
        frame = world.render((pos[0], pos[1] + cam.height_m, pos[2]), yaw, cam.tilt_deg)
        np.testing.assert_array_equal(ep["rgb"][0], stamp(frame.rgb, "06:00"))
        np.testing.assert_array_equal(ep["instance"][0], frame.instance.astype(np.uint16))
        minutes = ep["clock"].read()
        assert minutes[0] == 6 * 60 and np.all(np.diff(minutes) >= 0)
        k = int(np.argmax(minutes > minutes[0]))  # the first frame of the next minute
        assert clock(k) == "06:01" and clock(k - 1) == "06:00"


def test_the_log_follows_the_plan_and_the_frames(experience: tuple[Path, Path]) -> None:
    from dataforge.pipelines.findingdory.oracle import DESNAP, SNAP

    _, out = experience
    with open_dataset(out) as ds:
        ep = ds[ds.episode_ids[0]]
        meta = ep.metadata
        log = EpisodeLog.from_dict(meta["log"])
        plan = EpisodePlan.from_dict(meta["plan"])
        actions = ep["action"].read()
        rooms = ep["room"].read()
    assert meta["ended"] == "done"
    assert [i.object for i in log.interactions] == [r.object for r in plan.rearrangements]
    assert int(np.count_nonzero(actions == SNAP)) == len(plan.rearrangements)
    for i in log.interactions:
        assert actions[i.pick[1]] == SNAP and actions[i.place[1]] == DESNAP
    objs = {o.id: o for o in log.objects}
    for d in plan.distractors:
        assert not objs[d.object].interacted and objs[d.object].category == d.category
    clutter = [o for o in log.objects if o.id not in plan.objects]
    assert clutter and all(not o.interacted for o in clutter)
    recs = {r.id for r in log.receptacles}
    assert all(o.start_receptacle in recs for o in log.objects)
    assert sum(r.frames for r in log.rooms) == int(np.count_nonzero(rooms >= 0))
    assert set(log.distance_from_end) >= {r.object for r in plan.rearrangements}
    # the day ends walking away: the last placed object is at least a few metres off
    assert log.distance_from_end[plan.rearrangements[-1].object] > 1.0
    # attributes as each object is drawn (its asset's words), functionality per category
    from dataforge.world.appearance import asset_appearance
    from dataforge.world.assets import load_catalogue

    cat = load_catalogue()
    for obj, asset in [(r.object, r.asset) for r in plan.rearrangements] + [
        (d.object, d.asset) for d in plan.distractors
    ]:
        words = asset_appearance(cat.asset(asset)).words()
        got = objs[obj].attributes
        assert got is not None and got["functionality"]
        assert {k: got[k] for k in ("shape", "color", "print_or_design")} == {
            k: words[k] for k in ("shape", "color", "print_or_design")
        }, obj


def test_the_video_shows_the_stored_frames(experience: tuple[Path, Path]) -> None:
    from dataforge.viz.video import read_mp4_frames

    _, out = experience
    with open_dataset(out) as ds:
        eid = ds.episode_ids[0]
        rgb = ds[eid]["rgb"].read()
    frames = np.stack(list(read_mp4_frames(out / "videos" / f"{eid}.mp4")))
    assert frames.shape == rgb.shape
    err = np.abs(frames.astype(np.int16) - rgb.astype(np.int16)).mean()
    assert err < 8.0, err
