"""The MultiON oracle: it finds every goal in order on generated episodes (SUCCESS = PROGRESS =
1, SPL >= 0.95 by the scorer), its actions replay to its poses, its frames show the house and
the goal cylinders with true depth, and its follower gets out of traps greedy steps cannot."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dfhelpers import SHARED, needs_house_generator, run_cli
from shapely.geometry import LineString, box

from dataforge.nav.follower import Pose2D
from dataforge.nav.grid import NavGrid
from dataforge.nav.hubs import HubGeodesics
from dataforge.pipelines.multion import agent, oracle
from dataforge.pipelines.multion.config import OracleConfig
from dataforge.store import open_dataset
from dataforge.validation import validate


def follow(grid: NavGrid, start: Pose2D, goals: list[tuple[float, float, float]]) -> Any:
    return oracle.follow(
        HubGeodesics(grid),
        grid,
        start,
        [np.array(g) for g in goals],
        success_distance=1.5,
        forward=0.25,
        turn=30.0,
        max_steps=2500,
    )


def test_headings_try_fewest_turns_left_first() -> None:
    assert oracle.headings(30.0) == [0, -1, 1, -2, 2, -3, 3, -4, 4, -5, 5, 6]
    assert oracle.headings(90.0) == [0, -1, 1, 2]


def test_follow_walks_a_corridor_and_calls_found_within_the_distance() -> None:
    grid = NavGrid.build(box(0, 0, 12, 2), [], agent_radius=0.1, cell=0.05)
    start = Pose2D(1.0, 1.0, 90.0)  # facing +x, along the corridor
    run = follow(grid, start, [(8.0, 0.0, 1.0), (3.0, 0.0, 1.0)])
    assert run.success and run.ended == "success"
    assert [run.actions[k] for k in run.found_steps] == [agent.FOUND, agent.FOUND]
    first = run.found_steps[0]
    # straight ahead: only forward steps until 1.5 m from the goal (7 m away): 22 steps
    assert run.actions[:first] == [agent.MOVE_FORWARD] * first
    assert run.poses[first].x == pytest.approx(6.5, abs=0.25)
    assert 8.0 - run.poses[first].x <= 1.5
    # the replayed actions give the stored poses
    replay = agent.rollout(start, run.actions, grid, 0.25, 30.0)
    assert [(p.x, p.z, p.yaw) for p in replay] == [(p.x, p.z, p.yaw) for p in run.poses]
    assert run.goal_index[-1] == 2 and run.to_goal[-1] == 0.0


def test_a_slit_at_an_awkward_angle_is_passed() -> None:
    """A wall with a slit only 0.12 m wider than the agent, approached with headings 15 degrees
    off its axis (the start's yaw fixes the headings to 75 + 30k): the follower still passes it
    (greedy steps, and the A* search where none gets closer), every step on free space."""
    walls = [LineString([(4, 0), (4, 2.0)]), LineString([(4, 2.32), (4, 4)])]
    grid = NavGrid.build(box(0, 0, 8, 4), walls, agent_radius=0.1, cell=0.05)
    start = Pose2D(2.0, 2.16, 75.0)
    run = follow(grid, start, [(6.5, 0.0, 2.16)])
    assert run.success
    assert run.poses[-1].x > 4.1
    for a, b in zip(run.poses, run.poses[1:], strict=False):
        assert grid.segment_clear(a.xyz, b.xyz)
    plan = oracle.search_leg(
        HubGeodesics(grid),
        grid,
        start,
        np.array([6.5, 0.0, 2.16]),
        np.array([6.5, 0.0, 2.16]),
        success_distance=1.5,
        forward=0.25,
        turn=30.0,
    )
    assert plan is not None
    end = agent.rollout(start, plan, grid, 0.25, 30.0)[-1]
    assert HubGeodesics(grid).distance(end.xyz, (6.5, 0.0, 2.16)) <= 1.5
    assert len(plan) <= len(run.actions) - 1  # A* is optimal in actions (FOUND aside)


def test_render_shows_the_cylinder_at_its_true_size_and_depth() -> None:
    """A red cylinder 2 m ahead of the camera: its pixels are red, its depth is 2 m less its
    radius, and its top is 0.75 m above the floor (the mesh's centre is on the floor)."""
    path = SHARED / "data" / "procthor_houses" / "house_3703.json"
    if not path.is_file():
        pytest.skip(f"needs {path}")
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house

    cat = load_catalogue()
    house = load_house(json.loads(path.read_text()), name="h", catalogue=cat)
    cfg = OracleConfig(render=("rgb", "depth", "semantic"), resolution=(128, 128))
    r = oracle.SceneRenderer(cfg, house, cat, None)
    from dataforge.pipelines.multion.scenes import house_space

    space = house_space(house, cat, agent_radius=0.1, cell=0.05)
    assert isinstance(space.nav, HubGeodesics) and space.grid is not None
    # a free straight run of 2.5 m along +x or +z from some navigable cell
    cells = np.argwhere(space.nav.mask)
    for i, j in cells[:: max(1, len(cells) // 400)]:
        p = space.grid.center((int(i), int(j)), space.floor_y)
        for yaw in (0.0, 90.0, 180.0, 270.0):
            pose = Pose2D(p[0], p[2], yaw, p[1])
            end = pose.moved(2.5)
            if space.nav.segment_clear(pose.xyz, end.xyz):
                break
        else:
            continue
        break
    goal = pose.moved(2.0).xyz
    red = 0  # cylinder_red
    r.set_episode(np.array([goal]), [red])
    frame = r.render(pose)
    sid = r.semantic["cylinder_red"]
    mask = frame.semantic == sid
    assert mask.sum() > 20
    assert np.all(frame.rgb[mask][:, 0] >= frame.rgb[mask][:, 1])  # reddish
    centre_col = mask[:, 64]
    assert centre_col.any()
    depth = frame.depth[mask]
    assert float(np.median(depth)) == pytest.approx(2.0 - 0.1, abs=0.05)
    # the top edge: 0.75 m above the floor = 0.13 m below the 0.88 m camera, at 1.9 m
    top_row = int(np.argmax(centre_col))
    f = r.renderer.K[1, 1]
    expected = 64 + f * (cfg.camera_height - 0.75) / 1.9
    assert top_row == pytest.approx(expected, abs=3)
    assert cfg.hfov == pytest.approx(math.degrees(2 * math.atan(64 / r.renderer.K[0, 0])), abs=1e-6)


# -- a generated dataset -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def demos(tiny_dataset: Any) -> Path:
    return tiny_dataset("multion-oracle")


@pytest.mark.slow
@needs_house_generator()
def test_oracle_dataset_validates_and_scores_perfectly(
    demos: Path, tiny_dataset: Any, tmp_path: Path
) -> None:
    report = validate(demos)
    assert report.ok, [p.line() for p in report.problems]
    episodes = tiny_dataset("multion")
    # the tiny oracle follows the first 2 episodes of each scene (--limit 2)
    out = run_cli("multion", "score", str(episodes), "-t", str(demos), "--json", "--allow-missing")
    assert out.returncode == 0, out.stderr
    followed = [e for e in json.loads(out.stdout)["episodes"] if e["end"] != "missing"]
    assert len(followed) == 4
    for e in followed:
        assert e["success"] == e["progress"] == 1.0, e
        assert e["spl"] >= 0.95 and e["ppl"] >= 0.95, e


@pytest.mark.slow
@needs_house_generator()
def test_oracle_frames_are_real_observations(demos: Path) -> None:
    names = json.loads((demos / oracle.SEMANTICS_FILE).read_text())["names"]
    cylinders = {names.index(c) for c in names if c.startswith("cylinder_")}
    seen_cylinder = False
    with open_dataset(demos) as ds:
        for ep in ds.episodes():
            rgb, depth, sem = ep["rgb"].read(), ep["depth"].read(), ep["semantic"].read()
            n = ep["action"].shape[0] + 1
            assert rgb.shape[0] == depth.shape[0] == sem.shape[0] == n
            assert rgb.shape[1:] == (64, 64, 3)
            assert int(sem.max()) < len(names)
            assert (depth > 0).mean() > 0.9  # walls, floor and ceiling all round
            assert rgb.std() > 10  # not a blank picture
            seen_cylinder |= bool(np.isin(sem, list(cylinders)).any())
            assert ep.metadata["success"] and len(ep.metadata["found_steps"]) == 2
    assert seen_cylinder, "no frame of any episode shows a goal cylinder"


@pytest.mark.slow
@needs_house_generator()
def test_oracle_refuses_a_dataset_of_another_pipeline(tmp_path: Path, demos: Path) -> None:
    r = run_cli("multion", "oracle", str(demos), "--out", str(tmp_path / "o"), "--quiet")
    assert r.returncode == 2
    assert "dataforge multion generate" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@needs_house_generator()
def test_preview_draws_the_map_and_frames(demos: Path, tmp_path: Path) -> None:
    out = tmp_path / "p.png"
    r = run_cli("inspect", str(demos), "--preview", str(out))
    assert r.returncode == 0, r.stderr
    from PIL import Image

    with Image.open(out) as img:
        assert img.size[0] > 600 and img.size[1] > 400
