"""dataforge multion score: the paper's SUCCESS, PROGRESS, SPL and PPL (§5.2), hand-computed on
plain callables and a tiny NavGrid, the trajectory files' one-line errors, and end to end through
the CLI on a generated dataset."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import shapely
from dfhelpers import needs_house_generator, run_cli

from dataforge.errors import MalformedInputError, UsageError
from dataforge.nav.grid import NavGrid
from dataforge.pipelines.multion import agent
from dataforge.pipelines.multion.config import MultionConfig
from dataforge.pipelines.multion.generate import schema
from dataforge.pipelines.multion.score import (
    END_ACTIONS_ENDED,
    END_MAX_STEPS,
    END_MISSING,
    END_SUCCESS,
    END_WRONG_FOUND,
    ScoreSettings,
    load_trajectories,
    report_table,
    score_dataset,
    score_datasets,
    score_episode,
)
from dataforge.store import ArraySpec, DatasetWriter, Episode, Schema

F, FWD, LEFT, RIGHT = agent.FOUND, agent.MOVE_FORWARD, agent.TURN_LEFT, agent.TURN_RIGHT


# -- the metric core on a line world -----------------------------------------------------------
# The agent lives on the x axis: MOVE_FORWARD goes +1, TURN_LEFT (here) -1, TURN_RIGHT stays.
# Geodesics are |dx|.


def line_step(pos: np.ndarray, a: int) -> np.ndarray:
    return pos + np.array([{FWD: 1.0, LEFT: -1.0}.get(a, 0.0), 0.0, 0.0])


def line_geodesic(p: np.ndarray, g: np.ndarray) -> float:
    return abs(float(g[0]) - float(p[0]))


def line_goals(*xs: float) -> np.ndarray:
    return np.array([[x, 0.0, 0.0] for x in xs])


def run_line(actions: list[int], goals: list[float], legs: list[float], **kw: Any) -> Any:
    return score_episode(
        actions,
        line_goals(*goals),
        legs,
        start=np.zeros(3),
        step=line_step,
        geodesic=line_geodesic,
        **kw,
    )


def test_perfect_episode_scores_one() -> None:
    s = run_line([FWD] * 3 + [F] + [FWD] * 3 + [F], [3, 6], [3, 3])
    assert (s.success, s.progress, s.spl, s.ppl) == (1.0, 1.0, 1.0, 1.0)
    assert (s.found, s.steps, s.end, s.path_length, s.geodesic_distance) == (
        2,
        8,
        END_SUCCESS,
        6.0,
        6.0,
    )


def test_found_within_reach_early_keeps_spl_one_when_p_below_d() -> None:
    # FOUND at x = 2 (1 m from goal 1) and x = 5 (1 m from goal 2): p = 5 < d = 6.
    s = run_line([FWD, FWD, F, FWD, FWD, FWD, F], [3, 6], [3, 3])
    assert s.end == END_SUCCESS and s.path_length == 5.0
    assert s.spl == 1.0 and s.ppl == 1.0


def test_detour_reduces_spl_exactly() -> None:
    # Two steps back first: p = 2 + 5 + 3 = 10 against d = 6.
    s = run_line([LEFT, LEFT] + [FWD] * 5 + [F] + [FWD] * 3 + [F], [3, 6], [3, 3])
    assert s.success == 1.0 and s.path_length == 10.0
    assert s.spl == 6.0 / 10.0 and s.ppl == 6.0 / 10.0


def test_turning_in_place_adds_no_path() -> None:
    s = run_line([RIGHT] * 7 + [FWD] * 3 + [F], [3], [3])
    assert s.success == 1.0 and s.path_length == 3.0 and s.spl == 1.0 and s.steps == 11


def test_wrong_found_ends_episode_with_partial_progress_and_exact_ppl() -> None:
    actions = [FWD, FWD, FWD, F, FWD, F] + [FWD] * 5 + [F]
    s = run_line(actions, [3, 6, 9], [3, 3, 3])
    assert s.end == END_WRONG_FOUND
    assert s.steps == 6 and s.found == 1 and s.path_length == 4.0  # nothing after it counts
    assert s.success == 0.0 and s.spl == 0.0
    assert s.progress == 1 / 3
    assert s.ppl == (1 / 3) * 3.0 / 4.0  # PROGRESS * dbar / max(p, dbar), p the whole path
    assert s.found_geodesic == 3.0
    assert s.ppl_challenge == (1 / 3) * 3.0 / 3.0  # the challenge: p at the last FOUND


def test_first_found_wrong_scores_zero() -> None:
    s = run_line([F, FWD, FWD, FWD, F], [3, 6], [3, 3])
    assert s.end == END_WRONG_FOUND and s.steps == 1 and s.found == 0
    assert (s.success, s.progress, s.spl, s.ppl, s.ppl_challenge) == (0, 0, 0, 0, 0)


def test_found_exactly_at_success_distance_counts() -> None:
    at = run_line([F], [1.5], [1.5], success_distance=1.5)
    assert at.end == END_SUCCESS and at.success == 1.0
    assert at.path_length == 0.0 and at.spl == 1.0  # p = 0 <= d
    beyond = run_line([F], [1.5 + 1e-9], [1.5], success_distance=1.5)
    assert beyond.end == END_WRONG_FOUND and beyond.success == 0.0


def test_max_steps_truncates() -> None:
    actions = [FWD, FWD, FWD, F]
    cut = run_line(actions, [3], [3], max_steps=3)
    assert cut.end == END_MAX_STEPS and cut.steps == 3 and cut.path_length == 3.0
    assert cut.success == 0.0 and cut.progress == 0.0
    # the FOUND that is the max_steps-th action still counts
    full = run_line(actions, [3], [3], max_steps=4)
    assert full.end == END_SUCCESS and full.success == 1.0
    # actions beyond max_steps are ignored, even after a found goal
    part = run_line([FWD] * 3 + [F] + [FWD] * 3 + [F], [3, 6], [3, 3], max_steps=6)
    assert part.end == END_MAX_STEPS and part.steps == 6 and part.found == 1
    assert part.path_length == 5.0 and part.ppl == 0.5 * 3.0 / 5.0


def test_empty_action_list_fails() -> None:
    s = run_line([], [3, 6], [3, 3])
    assert s.end == END_ACTIONS_ENDED and s.steps == 0 and s.path_length == 0.0
    assert (s.success, s.progress, s.spl, s.ppl) == (0, 0, 0, 0)


def test_stopping_short_fails_with_ppl_of_found_goals() -> None:
    s = run_line([FWD] * 3 + [F, FWD], [3, 6], [3, 4])
    assert s.end == END_ACTIONS_ENDED and s.found == 1
    assert s.geodesic_distance == 7.0  # the legs' sum by default
    assert s.ppl == 0.5 * 3.0 / 4.0 and s.spl == 0.0


def test_zero_length_episode_has_no_nan() -> None:
    s = run_line([F], [0.0], [0.0])
    assert s.success == 1.0 and s.spl == 1.0 and s.ppl == 1.0
    assert all(math.isfinite(v) for v in s.to_dict().values() if isinstance(v, float))


def test_path_is_3d_euclidean_of_consecutive_positions() -> None:
    pts = np.array([[0, 0, 0], [3, 0, 4], [3, 1, 4], [3, 1, 4]], dtype=float)
    s = score_episode(
        [FWD, FWD, F],
        [[3.0, 1.0, 4.0]],
        [4.0],
        start=0,
        step=lambda i, a: i + 1,
        position=pts.__getitem__,
        geodesic=lambda p, g: float(np.linalg.norm(np.asarray(g) - p)),
    )
    assert s.path_length == 6.0 and s.success == 1.0 and s.spl == 4.0 / 6.0


# -- on a NavGrid, with the agent's own motion -------------------------------------------------


@pytest.fixture(scope="module")
def room() -> NavGrid:
    """An 8 m x 2 m room for an agent of radius 0.1 m at 5 cm."""
    return NavGrid.build(shapely.box(0.0, 0.0, 8.0, 2.0), agent_radius=0.1, cell=0.05)


def run_grid(grid: NavGrid, actions: list[int], goals: list[list[float]], **kw: Any) -> Any:
    start = [0.5, 0.0, 1.0]
    legs = []
    prev = start
    for g in goals:
        legs.append(grid.distance(prev, g))
        prev = g
    pose = agent.start_pose(start, agent.rotation_from_yaw(90.0))  # facing +x

    def step(p: Any, a: int) -> Any:
        return agent.step(p, a, grid, 0.25, 30.0)

    return score_episode(
        actions, goals, legs, start=pose, step=step, geodesic=room_geodesic(grid), **kw
    )


def room_geodesic(grid: NavGrid) -> Any:
    return lambda p, g: grid.distance(p, g)


def test_grid_walk_to_goal_scores_one(room: NavGrid) -> None:
    s = run_grid(room, [FWD] * 10 + [F], [[3.0, 0.0, 1.0]])
    assert s.end == END_SUCCESS and s.steps == 11
    assert s.path_length == pytest.approx(2.5, abs=1e-9)
    assert s.geodesic_distance == pytest.approx(2.5, abs=0.02)
    assert s.spl == pytest.approx(1.0, abs=0.01)


def test_grid_turns_and_walls(room: NavGrid) -> None:
    # Three right turns (90 degrees clockwise from +x: facing -z), then walk into the wall at
    # z = 0.1: 3 moves fit (1.0 -> 0.25), the rest are refused and add nothing.
    s = run_grid(room, [RIGHT] * 3 + [FWD] * 8, [[3.0, 0.0, 1.0]])
    assert s.end == END_ACTIONS_ENDED and s.steps == 11
    assert s.path_length == pytest.approx(0.75, abs=1e-9)


def test_grid_blocked_cylinder_stops_agent_but_found_counts(room: NavGrid) -> None:
    """Walking into a goal cylinder (blocked on the grid) stops the agent next to it; FOUND is
    judged by the geodesic on the unblocked grid, so it still counts."""
    goal = [3.0, 0.0, 1.0]
    blocked = room.with_discs_blocked([goal], 0.3)
    start = [0.5, 0.0, 1.0]
    pose = agent.start_pose(start, agent.rotation_from_yaw(90.0))
    s = score_episode(
        [FWD] * 12 + [F],
        [goal],
        [2.5],
        start=pose,
        step=lambda p, a: agent.step(p, a, blocked, 0.25, 30.0),
        geodesic=room_geodesic(room),
    )
    # Steps of 0.25 from x = 0.5: x = 2.75 would end 0.25 from the goal, inside the disc.
    assert s.path_length == pytest.approx(2.0, abs=1e-9)
    assert s.end == END_SUCCESS and s.spl == 1.0


# -- stored datasets without procthor: a fake multion dataset and a fake space -----------------

SCENE = "scene-a"


def write_episodes(
    root: Path,
    ids: list[int],
    *,
    m: int = 2,
    block: bool = False,
    scenes: tuple[str, ...] = (SCENE,),
) -> Path:
    """A ``multion`` dataset in the 8 x 2 m room: starts at x = 0.5, goal k at x = 0.5 + 2 k
    (legs of 2 m, beyond the success distance); the same episodes in every scene of
    ``scenes`` (scene_id ``procthor/<scene>.json``)."""
    n = len(ids)
    start = np.tile([0.5, 0.0, 1.0], (n, 1))
    goals = np.array([[[0.5 + 2.0 * (k + 1), 0.0, 1.0] for k in range(m)]] * n)
    legs = np.full((n, m), 2.0)
    arrays = {
        "episode_id": np.array(ids, dtype=np.int64),
        "start_position": start,
        "start_rotation": np.tile(agent.rotation_from_yaw(90.0), (n, 1)),
        "goal_position": goals,
        "goal_category": np.tile(np.arange(m, dtype=np.int8), (n, 1)),
        "leg_geodesic": legs,
        "geodesic_distance": legs.sum(axis=1),
        "start_room": np.zeros(n, np.int16),
        "goal_room": np.zeros((n, m), np.int16),
        "house_json": np.zeros(0, np.uint8),
    }
    config = {**MultionConfig(m=m, block=block).to_dict(), "scene_kind": "dir"}
    with DatasetWriter(
        root, schema=schema(MultionConfig(m=m)), name="fake", pipeline="multion", config=config
    ) as w:
        for scene in scenes:
            meta = {"scene": scene, "scene_id": f"procthor/{scene}.json", "space": "embedded"}
            w.write_unit(scene, [Episode(scene, arrays, meta)])
    return root


def fake_space(room: NavGrid) -> Any:
    def space_for(meta: Any, house: bytes, config: Any) -> Any:
        assert meta["scene"].startswith("scene-") and house == b""
        from dataforge.pipelines.multion.scenes import SceneSpace

        return SceneSpace("embedded", room, room.y, [], grid=room)

    return space_for


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


WALK = [FWD] * 8 + [F] + [FWD] * 8 + [F]  # 0.5 -> 2.5 -> 4.5


def test_dataset_scores_and_allow_missing(tmp_path: Path, room: NavGrid) -> None:
    ds = write_episodes(tmp_path / "eps", [10, 11, 12, 13, 14, 15, 16])
    t = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"episode_id": "10", "actions": WALK},
            {"episode_id": 11, "actions": ["found"]},
            {"episode_id": "12", "actions": ["MOVE_FORWARD"] * 8 + ["FOUND"]},
        ],
    )
    with pytest.raises(UsageError) as e:
        score_dataset(ds, load_trajectories(t), space_for=fake_space(room))
    msg = str(e.value)
    assert "\n" not in msg
    assert "no trajectory for 4 of 7 episodes" in msg
    assert "episode ids 13, 14, 15, 16" in msg and "--allow-missing" in msg
    d = score_dataset(ds, load_trajectories(t), allow_missing=True, space_for=fake_space(room))
    by_id = {s.episode_id: s for s in d.episodes}
    assert [s.episode_id for s in d.episodes] == [str(i) for i in range(10, 17)]
    assert d.missing == 4 and d.m == 2
    assert by_id["10"].success == 1.0 and by_id["10"].spl == pytest.approx(1.0, abs=1e-9)
    assert by_id["11"].end == END_WRONG_FOUND and by_id["11"].progress == 0.0
    assert by_id["12"].end == END_ACTIONS_ENDED and by_id["12"].progress == 0.5
    assert by_id["12"].ppl == pytest.approx(0.5, abs=1e-9)  # p = 2 = dbar
    for i in ("13", "14", "15", "16"):
        assert by_id[i].end == END_MISSING and by_id[i].spl == 0.0 and by_id[i].ppl == 0.0
        assert by_id[i].scene == SCENE


def test_unknown_episode_ids_are_an_error(tmp_path: Path, room: NavGrid) -> None:
    ds = write_episodes(tmp_path / "eps", [1, 2])
    recs = [{"episode_id": i, "actions": [F]} for i in (1, 2, 7, 8, 9, 20, 21, 22)]
    t = write_jsonl(tmp_path / "t.jsonl", recs)
    with pytest.raises(UsageError) as e:
        score_dataset(ds, load_trajectories(t), allow_missing=True, space_for=fake_space(room))
    msg = str(e.value)
    assert "\n" not in msg and "6 trajectories for episodes not in" in msg
    assert "episode ids 7, 8, 9, 20, 21 and 1 more" in msg


def test_positions_replace_motion(tmp_path: Path, room: NavGrid) -> None:
    ds = write_episodes(tmp_path / "eps", [1])
    # Positions teleport: the start, goal 1, goal 1, goal 2, goal 2 -> p = 4 = d.
    pos = [[0.5, 0, 1], [2.5, 0, 1], [2.5, 0, 1], [4.5, 0, 1], [4.5, 0, 1]]
    t = write_jsonl(
        tmp_path / "t.jsonl", [{"episode_id": 1, "actions": [2, F, 2, F], "positions": pos}]
    )
    (s,) = score_dataset(ds, load_trajectories(t), space_for=fake_space(room)).episodes
    assert s.end == END_SUCCESS and s.path_length == 4.0 and s.spl == 1.0


# -- episodes named by scene and id, as habitat-lab's loader names them --------------------------


def test_records_name_their_scene_as_habitat_does(tmp_path: Path, room: NavGrid) -> None:
    """Two scenes with ids 0 and 1 each (habitat-lab numbers each content file's episodes from
    0): a record names its scene by habitat's joined path, the stored scene_id or the name."""
    ds = write_episodes(tmp_path / "eps", [0, 1], scenes=("scene-a", "scene-b"))
    habitat_path = "/root/data/scene_datasets/procthor/scene-b.json"  # SCENES_DIR joined
    t = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"scene_id": habitat_path, "episode_id": "0", "actions": WALK},
            {"scene_id": "scene-a", "episode_id": 1, "actions": [F]},
            {"scene": "procthor/scene-b.json", "episode_id": 1, "actions": WALK[:9]},
        ],
    )
    d = score_dataset(ds, load_trajectories(t), subset=True, space_for=fake_space(room))
    got = {(x.scene, x.episode_id): (x.end, x.found) for x in d.episodes}
    assert got == {
        ("scene-a", "1"): (END_WRONG_FOUND, 0),
        ("scene-b", "0"): (END_SUCCESS, 2),
        ("scene-b", "1"): (END_ACTIONS_ENDED, 1),
    }
    # without --subset, the three others are missing, named with their scene
    with pytest.raises(UsageError, match=r"no trajectory for 1 of 4 .*episode id 0 of scene-a"):
        score_dataset(ds, load_trajectories(t), space_for=fake_space(room))


@pytest.mark.parametrize(
    ("records", "error"),
    [
        # an id both scenes have, and no scene: which episode is meant cannot be known
        ([{"episode_id": 0, "actions": [F]}], "1 trajectory names no scene, and several scenes of"),
        ([{"scene_id": "procthor/elsewhere.json", "episode_id": 0, "actions": [F]}], "not in"),
        (
            [
                {"scene_id": "scene-a", "episode_id": 0, "actions": [F]},
                {"scene_id": "procthor/scene-a.json", "episode_id": "0", "actions": [F]},
            ],
            r"two trajectories for the same episode \(episode id 0 of scene-a\)",
        ),
        # the start is x = 0.5: a trajectory from x = 3 belongs to another episode
        (
            [
                {
                    "scene_id": "scene-b",
                    "episode_id": 1,
                    "actions": [F],
                    "positions": [[3, 0, 1]] * 2,
                }
            ],
            r"1 trajectory does not start at the start of the episode it names \(episode id 1 "
            r"of scene-b; the first is 2.50 m away, more than 0.05 m\): is it keyed by another",
        ),
        ([{"scene_id": 7, "episode_id": 1, "actions": [F]}], "scene_id must be a string"),
    ],
)
def test_trajectories_that_name_no_one_episode_are_refused(
    tmp_path: Path, room: NavGrid, records: list[Any], error: str
) -> None:
    ds = write_episodes(tmp_path / "eps", [0, 1], scenes=("scene-a", "scene-b"))
    t = write_jsonl(tmp_path / "t.jsonl", records)
    with pytest.raises((UsageError, MalformedInputError), match=error) as e:
        score_dataset(ds, load_trajectories(t), subset=True, space_for=fake_space(room))
    assert "\n" not in str(e.value)


def test_a_start_within_the_tolerance_is_the_episodes(tmp_path: Path, room: NavGrid) -> None:
    """A first position 4 cm off the start (a float32 simulator, a snapped start) is accepted."""
    ds = write_episodes(tmp_path / "eps", [0])
    pos = [[0.54, 0, 1], [2.5, 0, 1], [2.5, 0, 1], [4.5, 0, 1], [4.5, 0, 1]]
    rec = {"episode_id": 0, "actions": [1, F, 1, F], "positions": pos}
    t = write_jsonl(tmp_path / "t.jsonl", [rec])
    (x,) = score_dataset(ds, load_trajectories(t), space_for=fake_space(room)).episodes
    assert x.success == 1.0


def test_blocked_dataset_stops_agent_at_cylinder(tmp_path: Path, room: NavGrid) -> None:
    ds_free = write_episodes(tmp_path / "free", [1], m=1, block=False)
    ds_block = write_episodes(tmp_path / "block", [1], m=1, block=True)
    t = write_jsonl(tmp_path / "t.jsonl", [{"episode_id": 1, "actions": [FWD] * 12 + [F]}])
    traj = load_trajectories(t)
    (free,) = score_dataset(ds_free, traj, space_for=fake_space(room)).episodes
    (block,) = score_dataset(ds_block, traj, space_for=fake_space(room)).episodes
    assert free.path_length == pytest.approx(3.0, abs=1e-9)  # 12 moves, through the goal
    # blocked radius 0.1 + 0.1 around x = 2.5: from 0.5, 2.25 is the last stop before it
    assert block.path_length == pytest.approx(1.75, abs=1e-9)
    assert free.success == block.success == 1.0


def test_per_m_means_and_json(tmp_path: Path, room: NavGrid) -> None:
    one = write_episodes(tmp_path / "one", [1, 2], m=1)
    two = write_episodes(tmp_path / "two", [1, 2, 3], m=2)
    t1 = write_jsonl(
        tmp_path / "t1.jsonl",
        [{"episode_id": 1, "actions": WALK[:9]}, {"episode_id": 2, "actions": [F]}],
    )
    t2 = tmp_path / "t2.json"
    t2.write_text(
        json.dumps(
            [
                {"episode_id": 1, "actions": WALK},
                {"episode_id": 2, "actions": WALK[:9]},
                {"episode_id": 3, "actions": []},
            ]
        )
    )
    r = score_datasets([one, two], [t1, t2], space_for=fake_space(room))
    per_m = r.per_m()
    assert per_m[1]["episodes"] == 2 and per_m[1]["success"] == 0.5
    assert per_m[2]["episodes"] == 3 and per_m[2]["success"] == pytest.approx(1 / 3)
    assert per_m[2]["progress"] == pytest.approx((1 + 0.5 + 0) / 3)
    overall = r.overall()
    assert overall["episodes"] == 5 and overall["success"] == pytest.approx(2 / 5)
    d = json.loads(r.to_json(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert set(d["per_m"]) == {"1", "2"} and len(d["episodes"]) == 5
    assert [e["dataset"] for e in d["episodes"]] == [0, 0, 1, 1, 1]
    assert d["settings"] == ScoreSettings().to_dict()
    with pytest.raises(UsageError, match="2 datasets and 1 --trajectories"):
        score_datasets([one, two], [t1], space_for=fake_space(room))
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(report_table(r))
    text = console.export_text()
    assert "1-ON" in text and "2-ON" in text and "all" in text
    # both PPLs, each named after its source, in that order after SPL
    assert "PPL, paper" in text and "PSPL, multiON code" in text
    for m, means in per_m.items():
        line = next(x for x in text.splitlines() if f"{m}-ON" in x)
        numbers = [float(v) for v in re.findall(r"\d+\.\d", line)]
        want = [100 * means[k] for k in ("success", "progress", "spl", "ppl", "ppl_challenge")]
        assert numbers == pytest.approx(want, abs=0.051), (m, line)


# -- trajectory files ---------------------------------------------------------------------------


def test_table_shows_both_ppls_named_after_their_sources(tmp_path: Path, room: NavGrid) -> None:
    """An agent that finds the first of two goals (2 m away) and then walks 1 m more: PROGRESS
    50 %, the paper's PPL over the whole 3 m path 0.5 x 2 / 3 = 33.3 %, the multiON code's PSPL
    over the 2 m walked up to the FOUND 0.5 x 2 / 2 = 50.0 % (by hand); the table shows both,
    each under its source's name."""
    from rich.console import Console

    ds = write_episodes(tmp_path / "eps", [1], m=2)
    t = write_jsonl(tmp_path / "t.jsonl", [{"episode_id": 1, "actions": WALK[:9] + [FWD] * 4}])
    r = score_datasets([ds], [t], space_for=fake_space(room))
    console = Console(width=160, record=True)
    console.print(report_table(r))
    text = console.export_text()
    header = next(x for x in text.splitlines() if "PPL, paper" in x)
    assert header.index("PPL, paper") < header.index("PSPL, multiON code")
    line = next(x for x in text.splitlines() if "2-ON" in x)
    assert [float(v) for v in re.findall(r"\d+\.\d", line)] == [0.0, 50.0, 0.0, 33.3, 50.0]


def test_json_and_jsonl_and_names(tmp_path: Path) -> None:
    recs = [{"episode_id": 5, "actions": ["Move_Forward", 3, "found"]}]
    a = tmp_path / "a.json"
    a.write_text(json.dumps(recs, indent=2))
    b = write_jsonl(tmp_path / "b.jsonl", recs)
    for p in (a, b):
        t = load_trajectories(p)
        assert t.kind == "file" and t.by_key["", "5"].actions == (FWD, RIGHT, F)
        assert t.by_key["", "5"].positions is None


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        (
            [{"episode_id": 1, "actions": "FOUND"}],
            "(episode id 1); episode 1: actions must be a list",
        ),
        ([{"episode_id": 2, "actions": ["JUMP"]}], "unknown action 'JUMP'"),
        ([{"episode_id": 3, "actions": [1, 7]}], "unknown action 7"),
        (
            [{"episode_id": 4, "actions": [1], "positions": [[0, 0, 0]]}],
            "1 positions for 1 actions",
        ),
        ([{"episode_id": 5, "actions": [1], "positions": [[0, 0], [1, 1]]}], "[x, y, z]"),
        ([{"actions": []}], "record 1: episode_id must be"),
        ([{"episode_id": 6, "actions": []}, {"episode_id": "6", "actions": []}], "two traj"),
    ],
)
def test_malformed_records_are_one_line_errors(
    tmp_path: Path, records: list[Any], expected: str
) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps(records))
    with pytest.raises(MalformedInputError) as e:
        load_trajectories(p)
    assert "\n" not in str(e.value) and expected in str(e.value)


def test_malformed_errors_name_ids_and_count(tmp_path: Path) -> None:
    recs = [{"episode_id": i, "actions": ["JUMP"]} for i in range(7)] + [
        {"episode_id": 9, "actions": [0]}
    ]
    p = write_jsonl(tmp_path / "t.jsonl", recs)
    with pytest.raises(MalformedInputError) as e:
        load_trajectories(p)
    msg = str(e.value)
    assert "\n" not in msg
    assert "7 malformed trajectories (episode ids 0, 1, 2, 3, 4 and 2 more)" in msg


def test_bad_json_is_a_one_line_error(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"episode_id": 1, "actions": []}\n{"episode_id": 2, "actions": [\n')
    with pytest.raises(MalformedInputError, match="line 2: not valid JSON") as e:
        load_trajectories(p)
    assert "\n" not in str(e.value)
    q = tmp_path / "t.json"
    q.write_text('[{"episode_id": 1, "actions": []},')
    with pytest.raises(MalformedInputError, match="not valid JSON"):
        load_trajectories(q)
    with pytest.raises(UsageError, match="not found"):
        load_trajectories(tmp_path / "absent.jsonl")


def oracle_schema() -> Schema:
    return Schema(
        {
            "action": ArraySpec("int8", (None,)),
            "position": ArraySpec("float64", (None, 3), units="m"),
        }
    )


def test_oracle_dataset_trajectories(tmp_path: Path, room: NavGrid) -> None:
    eps = write_episodes(tmp_path / "eps", [1, 2])
    root = tmp_path / "oracle"
    pos = np.array([[0.5 + 0.25 * k, 0, 1] for k in range(9)] + [[2.5, 0, 1]], dtype=float)
    with DatasetWriter(
        root,
        schema=oracle_schema(),
        name="oracle",
        pipeline="multion-oracle",
        config={"success_distance": 1.0},
    ) as w:
        w.write_unit(
            SCENE,
            [
                Episode(
                    f"{SCENE}/{i}",
                    {"action": np.array([1] * 8 + [0], np.int8)[:n], "position": pos[: n + 1]},
                    {"scene": SCENE, "episode_id": str(i)},
                )
                for i, n in ((1, 9), (2, 0))
            ],
        )
    t = load_trajectories(root)
    assert t.kind == "oracle" and t.by_key[SCENE, "1"].actions == (1,) * 8 + (0,)
    assert t.by_key[SCENE, "2"].actions == ()
    r = score_datasets([eps], [root], space_for=fake_space(room))
    s1, s2 = r.datasets[0].episodes
    assert s1.found == 1 and s1.path_length == 2.0 and s1.ppl == 0.5
    assert s2.end == END_ACTIONS_ENDED
    assert any("success-distance 1.0" in n for n in r.notes)  # the oracle ran otherwise


def test_oracle_dataset_without_episode_ids(tmp_path: Path) -> None:
    root = tmp_path / "oracle"
    with DatasetWriter(root, schema=oracle_schema(), name="o", pipeline="multion-oracle") as w:
        arrays = {"action": np.zeros(0, np.int8), "position": np.zeros((1, 3))}
        w.write_unit(SCENE, [Episode(f"{SCENE}/x", arrays, {})])
    with pytest.raises(MalformedInputError, match="no episode_id"):
        load_trajectories(root)


def test_other_datasets_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "other"
    with DatasetWriter(root, schema=oracle_schema(), name="o", pipeline="custom") as w:
        w.write_unit(
            "u",
            [Episode("u/x", {"action": np.zeros(0, np.int8), "position": np.zeros((1, 3))}, {})],
        )
    with pytest.raises(UsageError, match="not multion-oracle"):
        load_trajectories(root)
    t = write_jsonl(tmp_path / "t.jsonl", [])
    with pytest.raises(UsageError, match="not MultiON episodes"):
        score_dataset(root, load_trajectories(t))


def test_settings_are_checked() -> None:
    with pytest.raises(UsageError, match="--success-distance"):
        ScoreSettings(success_distance=0)
    with pytest.raises(UsageError, match="--max-steps"):
        ScoreSettings(max_steps=0)


# -- the command line ----------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    ds = write_episodes(tmp_path / "eps", [1, 2, 3])
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"episode_id": 1, "actions": ["JUMP"]}])
    r = run_cli("multion", "score", str(ds), "--trajectories", str(bad))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "malformed trajectory (episode id 1)" in r.stderr
    few = write_jsonl(tmp_path / "few.jsonl", [{"episode_id": 1, "actions": [F]}])
    r = run_cli("multion", "score", str(ds), "-t", str(few))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "(episode ids 2, 3)" in r.stderr
    r = run_cli("multion", "score", str(ds), str(ds), "-t", str(few))
    assert r.returncode == 2 and "2 datasets and 1 --trajectories" in r.stderr


# -- end to end on a generated dataset -----------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("multion-score") / "eps"
    r = run_cli(
        "multion",
        "generate",
        "--m",
        "2",
        "--split",
        "val",
        "--episodes-per-scene",
        "5",
        "--scenes",
        "generate:1",
        "--room-spec",
        "kitchen",
        "--out",
        str(out),
        "--seed",
        "0",
        "--quiet",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def stored_episodes(root: Path) -> tuple[dict[str, Any], dict[str, Any], bytes, dict[str, Any]]:
    from dataforge.store import open_dataset
    from dataforge.store.manifest import read_manifest

    ds = open_dataset(root)
    (ep,) = list(ds.episodes())
    arrays = {k: ep[k].read() for k in ep if k != "house_json"}
    return arrays, ep.metadata, ep["house_json"].read().tobytes(), dict(read_manifest(root).config)


def score_json(*args: str) -> dict[str, Any]:
    r = run_cli("multion", "score", *args, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"{c} in --json output"))


@pytest.mark.slow
@needs_house_generator()
def test_cli_end_to_end(generated: Path, tmp_path: Path) -> None:
    from dataforge.pipelines.multion.scenes import stored_space

    arrays, meta, house, config = stored_episodes(generated)
    ids = [str(int(i)) for i in arrays["episode_id"]]
    assert len(ids) == 5
    space = stored_space(meta, house, config)
    grid = space.grid.with_discs_blocked(
        arrays["goal_position"][3], config["cylinder_radius"] + config["agent_radius"]
    )
    rng = np.random.default_rng(0)
    walk = [int(a) for a in rng.choice([FWD, FWD, LEFT, RIGHT], size=60)] + [F]
    start = agent.start_pose(arrays["start_position"][3], arrays["start_rotation"][3])
    rolled = np.array([p.xyz for p in agent.rollout(start, walk, grid, 0.25, 30.0)])
    g1, g2 = arrays["goal_position"][1]
    s1 = arrays["start_position"][1]
    teleport = [s1, g1, g1, g2, g2]
    records = [
        {"episode_id": ids[0], "actions": ["FOUND"]},  # the start is >= 2 m from goal 1
        {"episode_id": ids[1], "actions": [1, 0, 1, 0], "positions": np.array(teleport).tolist()},
        {"episode_id": ids[2], "actions": [FWD] * 8},  # a straight walk, then nothing
        {"episode_id": ids[3], "actions": walk},
    ]
    t = write_jsonl(tmp_path / "t.jsonl", records)
    t_pos = write_jsonl(
        tmp_path / "pos.jsonl",
        [{"episode_id": ids[3], "actions": walk, "positions": rolled.tolist()}],
    )
    r = run_cli("multion", "score", str(generated), "-t", str(t))
    assert r.returncode == 2 and f"(episode id {ids[4]})" in r.stderr
    r = run_cli("multion", "score", str(generated), "-t", str(t), "--allow-missing")
    assert r.returncode == 0, r.stderr
    assert "2-ON" in r.stdout and "SUCCESS" in r.stdout and "1 of 5 episodes" in r.stderr
    d = score_json(
        str(generated), str(generated), "-t", str(t), "-t", str(t_pos), "--allow-missing"
    )
    eps = {(e["dataset"], e["episode_id"]): e for e in d["episodes"]}
    first = eps[(0, ids[0])]
    assert first["end"] == END_WRONG_FOUND and first["steps"] == 1
    assert (first["success"], first["progress"], first["spl"], first["ppl"]) == (0, 0, 0, 0)
    tele = eps[(0, ids[1])]
    p = float(np.linalg.norm(g1 - s1) + np.linalg.norm(g2 - g1))
    dist = float(arrays["geodesic_distance"][1])
    assert tele["end"] == END_SUCCESS and tele["path_length"] == pytest.approx(p, abs=1e-12)
    assert tele["spl"] == pytest.approx(dist / max(p, dist), abs=1e-12)
    assert tele["ppl"] == tele["spl"]
    straight = eps[(0, ids[2])]
    assert straight["end"] == END_ACTIONS_ENDED and straight["steps"] == 8
    moves = straight["path_length"] / 0.25
    assert abs(moves - round(moves)) < 1e-9 and 0 <= round(moves) <= 8
    # simulating the actions and replaying the stored positions agree
    sim, given = eps[(0, ids[3])], eps[(1, ids[3])]
    assert sim == {**given, "dataset": 0}
    assert d["missing"] == 1 + 4 and d["per_m"]["2"]["episodes"] == 10
    assert d["overall"]["success"] == pytest.approx(np.mean([e["success"] for e in d["episodes"]]))


@pytest.mark.slow
@needs_house_generator()
def test_oracle_trajectories_score_full_success(generated: Path, tmp_path: Path) -> None:
    """The shortest-path oracle (dataforge multion oracle) succeeds on every episode; its
    actions alone, simulated here, give the same scores as its stored positions."""
    oracle = tmp_path / "oracle"
    r = run_cli("multion", "oracle", str(generated), "--out", str(oracle), "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    from dataforge.store import open_dataset

    actions = [
        {"episode_id": ep.metadata["episode_id"], "actions": ep["action"].read().tolist()}
        for ep in open_dataset(oracle).episodes()
    ]
    t = write_jsonl(tmp_path / "actions.jsonl", actions)
    d = score_json(str(generated), str(generated), "-t", str(oracle), "-t", str(t))
    assert d["overall"]["episodes"] == 10
    assert d["overall"]["success"] == 1.0 and d["overall"]["progress"] == 1.0
    a = [e for e in d["episodes"] if e["dataset"] == 0]
    b = [e for e in d["episodes"] if e["dataset"] == 1]
    assert a and len(a) + len(b) == d["overall"]["episodes"]  # each file scored every episode
    for x, y in zip(a, b, strict=True):
        assert x["found"] == y["found"] == 2 and x["steps"] == y["steps"]
        assert x["path_length"] == pytest.approx(y["path_length"], abs=1e-9)
        assert x["spl"] == pytest.approx(y["spl"], abs=1e-9)


def test_cli_defaults_are_the_settings_defaults() -> None:
    from dataforge.pipelines.multion.cli import score

    defaults = {p.name: p.default for p in score.params}
    assert {k: defaults[k] for k in ScoreSettings().to_dict()} == ScoreSettings().to_dict()
