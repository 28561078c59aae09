"""Our demonstrations against episodes upstream's own harness and writer recorded on the same
seeds (issue 39 item 5): ``fixtures/upstream_val_episodes.json.gz``, written by
``scripts/robomme_upstream_episodes.py`` from RoboMME/robomme_benchmark a3842d1 (the release;
its planner code is that of later commits too) run on this CPU machine: val episode 6 of all 16
tasks at 256 px (every non-image value kept) and, for lengths, more val episodes recorded with
32 px cameras (the physics does not depend on them)."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import dfhelpers
import numpy as np
import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "upstream_val_episodes.json.gz"
DONE = "All tasks completed"
TASKS = 16


@cache
def upstream() -> dict[str, Any]:
    with gzip.open(FIXTURE, "rt") as f:
        return json.load(f)


def full_episodes() -> list[dict[str, Any]]:
    return [e for e in upstream()["episodes"] if "per_step" in e]


def moves(e: dict[str, Any]) -> list[int]:
    """Steps per recorded subgoal (task-list entry: from one ``is_subgoal_boundary`` to the
    next), the completion tail counted with the entry it ends (our recordings keep the
    finishing motion in its subgoal)."""
    boundary, done = e["per_step"]["is_subgoal_boundary"], e["per_step"]["is_completed"]
    starts = [t for t in range(e["steps"]) if boundary[t] and not (t and done[t] > done[t - 1])]
    return np.diff([*starts, e["steps"]]).tolist()


def test_the_fixture_holds_every_task_as_upstream_wrote_it() -> None:
    """The facts the other tests read, checked on their own: one full episode per task, with
    the release writer's fields (``eef_state_raw``, ``eef_action_raw`` and the uncompressed
    256 px images of a3842d1) and runs that add up to the steps."""
    full = full_episodes()
    assert len({e["task"] for e in full}) == TASKS
    for e in upstream()["episodes"]:
        assert sum(n for _, _, n in e["runs"]) == e["steps"], e["task"]
    for e in full:
        s = e["structure"]
        assert s["obs/front_rgb"] == ["uint8", [256, 256, 3]]
        assert s["obs/eef_state_raw/quat"][1] == [4] and s["action/eef_action_raw/pose"][1] == [3]
        assert len(e["per_step"]["joint_action"]) == e["steps"]


def _run(e: dict[str, Any]) -> Any:
    from dataforge.manip.executor import Noise
    from dataforge.pipelines.robomme.episode import run_pass1
    from dataforge.pipelines.robomme.seeds import EpisodeSpec

    spec = EpisodeSpec(e["task"], e["episode"], e["seed"], e["difficulty"])
    run, filtered = run_pass1(spec, Noise(), max_retries=0, recovery=e["episode"] <= 5)
    assert run is not None, filtered[0].reason
    return run


def _ours(e: dict[str, Any]) -> Any:
    return _run(e).recording


def _recorded(rec: Any) -> tuple[list[int], np.ndarray]:
    """Steps per recorded subgoal and the recorded steps' mask."""
    keep = np.zeros(len(rec), bool)
    for sg in rec.subgoals:
        keep[sg["start"] : sg["end"]] |= sg["record"]
    return [sg["end"] - sg["start"] for sg in rec.subgoals if sg["record"]], keep


@pytest.mark.slow
@dfhelpers.needs_maniskill()
@pytest.mark.parametrize("task", ["PatternLock", "RouteStick"])
def test_stick_moves_are_upstreams_step_for_step(task: str) -> None:
    """The stick tasks' moves take upstream's steps exactly (PatternLock: two screw motions
    from the measured joints; RouteStick: 45 IK points and 5 repeats, one step each), and the
    commanded tip follows upstream's within 2 mm at every step."""
    e = next(e for e in full_episodes() if e["task"] == task)
    rec = _ours(e)
    steps, keep = _recorded(rec)
    assert steps == moves(e)
    ours = np.asarray(rec.eef_action)[keep][:, :3]
    theirs = np.asarray(e["per_step"]["eef_action"], dtype=np.float64)[:, :3]
    assert np.abs(ours - theirs).max() < 2e-3


def test_a_path_steps_once_per_solved_point_and_switches_keyframes() -> None:
    """``follow_path`` of IK points: one step per point that has a solution (upstream skips a
    point without one), each solved from the previous solution; the keyframe switches at the
    given indices even where that point is skipped."""
    from dataforge.manip.executor import CLOSED, NO_WAYPOINT, Executor, Waypoint

    starts: list[float] = []

    class Planner:
        dof = 7

        def ik(self, q: np.ndarray, pose: np.ndarray) -> np.ndarray | None:
            starts.append(float(q[0]))
            return None if pose[0] == 99 else np.asarray(pose[:7], dtype=np.float64)

    ex = Executor.__new__(Executor)
    ex.planner, ex.has_gripper, ex._waypoint = Planner(), False, NO_WAYPOINT
    ex._qpos = lambda: np.full(7, -1.0)
    steps: list[tuple[float, float]] = []
    ex.step = lambda arm: steps.append((float(arm[0]), float(ex._waypoint[0])))
    path = tuple(np.array([k, 0, 0.07, 1, 0, 0, 0], dtype=np.float64) for k in (0, 1, 99, 3))
    ex.follow(Waypoint(None, CLOSED, path=path, path_keys=((0, path[1]), (2, path[3]))))
    assert starts == [-1.0, 0.0, 1.0, 1.0]  # from the measured joints, then each solution
    assert [arm for arm, _ in steps] == [0.0, 1.0, 3.0]
    assert [key for _, key in steps] == [1.0, 1.0, 3.0]
    assert ex._waypoint[7] == CLOSED


# tasks whose recorded steps depart from upstream's by more than 5 % over the fixture's
# episodes, and the measured bound (docs/robomme.md, "Episode lengths against upstream's
# harness"): PickHighlight's put-down carries the cube over its spot and lowers it (+9.6 %);
# MoveCube's low pushes start 0.1 m above their start point (its gripper_push episode +17 %)
RESIDUAL = {"PickHighlight": 0.11, "MoveCube": 0.08}


@pytest.mark.slow
@dfhelpers.needs_maniskill()
def test_episode_lengths_follow_upstreams() -> None:
    """Per task, our recorded steps over the fixture's episodes (same seeds, difficulties and
    recovery rule) within 5 % of upstream's, or within the residual measured and documented
    for that task."""
    totals: dict[str, list[int]] = {}
    for e in upstream()["episodes"]:
        steps, _ = _recorded(_ours(e))
        pair = totals.setdefault(e["task"], [0, 0])
        pair[0] += sum(steps)
        pair[1] += e["steps"]
    assert len(totals) == TASKS
    off = {
        task: round(ours / theirs - 1, 3)
        for task, (ours, theirs) in totals.items()
        if abs(ours / theirs - 1) > RESIDUAL.get(task, 0.05)
    }
    assert not off


IMAGES = {"obs/front_rgb", "obs/wrist_rgb", "obs/front_depth", "obs/wrist_depth"}


def test_a_written_step_has_upstreams_fields_dtypes_and_shapes(tmp_path: Path) -> None:
    """Every dataset of a step our writer writes, against the step of upstream's PickXtimes
    file: the same names, dtypes and shapes (images: the same dtype and channels; the synthetic
    episode's images are 4 px)."""
    import importlib.util

    import h5py

    # the synthetic episode of the release writer's tests (written as ``generate`` writes it)
    spec = importlib.util.spec_from_file_location(
        "release_fields", Path(__file__).with_name("test_release_fields.py")
    )
    assert spec is not None and spec.loader is not None
    release = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(release)
    episode, written = release.episode, release.written

    theirs = next(e for e in full_episodes() if e["task"] == "PickXtimes")["structure"]
    f = written(tmp_path, episode())
    ours: dict[str, list[Any]] = {}
    f["episode_0/timestep_0"].visititems(
        lambda n, o: ours.__setitem__(n, [str(o.dtype), list(o.shape)])
        if isinstance(o, h5py.Dataset) else None
    )  # fmt: skip
    assert sorted(ours) == sorted(theirs)
    for name, (dtype, shape) in theirs.items():
        assert ours[name][0] == dtype, name
        assert ours[name][1][-1:] == shape[-1:] if name in IMAGES else ours[name][1] == shape, name


@pytest.mark.slow
@dfhelpers.needs_maniskill()
def test_texts_and_setup_are_upstreams_on_every_task() -> None:
    """Episode 6 of every task: the language goal (every phrasing), the multiple-choice
    options, and the recorded subgoals' simple texts and video flags in upstream's order
    (consecutive repeats of one text counted once, the completion step left out)."""
    from dataforge.pipelines.robomme.episode import choices, multi_choices

    for e in full_episodes():
        run = _run(e)
        setup = e["setup"]
        assert run.goals == setup["task_goal"], e["task"]
        theirs = json.loads(setup["available_multi_choices"])
        assert json.loads(multi_choices(choices(e["task"]))) == theirs, e["task"]
        ours = [
            (sg["simple"], sg["video"]) for sg in run.recording.subgoals if sg["record"]
        ]  # fmt: skip
        ours = [x for k, x in enumerate(ours) if k == 0 or x != ours[k - 1]]
        expect = [(text, demo) for text, demo, _ in e["runs"] if text != DONE]
        assert ours == expect, e["task"]
