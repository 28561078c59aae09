"""``choice_action``'s point as RoboMME's writer stores it (issue 39 item 3): each step, the
subgoal's object projected into the front camera where it is at that step
(``RecordWrapper.py:717-751``, ``choice_action_mapping.py::project_world_to_pixel``), so the point
follows an object the arm lifts. Expected pixels below are worked out by hand."""

from __future__ import annotations

import json

import dfhelpers
import numpy as np
import pytest

from dataforge.pipelines.robomme.episode import choice_action, choice_points

K = np.array([[100.0, 0.0, 32.0], [0.0, 100.0, 32.0], [0.0, 0.0, 1.0]])
EYE = np.hstack([np.eye(3), np.zeros((3, 1))])  # the camera at the origin looking along +z


def _points(*xyz: list[float], hw: tuple[int, int] = (64, 64)) -> list[list[int]]:
    ext = np.repeat(EYE[None], len(xyz), axis=0)
    return choice_points(np.asarray(xyz, dtype=np.float64), K, ext, hw).tolist()


def test_a_point_in_view_is_row_then_column() -> None:
    # x = 100 * 0.1 / 1 + 32 = 42 (column), y = 100 * -0.05 / 1 + 32 = 27 (row)
    assert _points([0.1, -0.05, 1.0]) == [[27, 42]]
    # depth divides: x = 100 * 0.1 / 2 + 32 = 37, y = 100 * 0.2 / 2 + 32 = 42
    assert _points([0.1, 0.2, 2.0]) == [[42, 37]]


def test_pixels_round_half_to_even_as_numpy_rint() -> None:
    # x = 100 * 0.005 + 32 = 32.5 -> 32 (even); y = 100 * 0.015 + 32 = 33.5 -> 34 (even)
    assert _points([0.005, 0.015, 1.0]) == [[34, 32]]


def test_no_anchor_behind_or_outside_gives_no_point() -> None:
    nan = [np.nan, np.nan, np.nan]
    # x = 100 * 0.4 + 32 = 72 >= 64: outside (the inverted extrinsic is the same here)
    assert _points(nan, [0.0, 0.0, -1.0], [0.4, 0.0, 1.0]) == [[-1, -1]] * 3
    # the image's shape bounds rows and columns separately: (h 30, w 64), row 32 is outside
    assert _points([0.0, 0.0, 1.0], hw=(30, 64)) == [[-1, -1]]


def test_a_failed_projection_is_tried_again_with_the_extrinsic_inverted() -> None:
    """The writer's fallback: the camera translated to z = +2 (world to camera: z - 2) sees a
    point at z = 1 behind it; inverted (camera to world: z + 2) the point is 3 m ahead."""
    ext = np.hstack([np.eye(3), [[0.0], [0.0], [-2.0]]])
    # inverted: camera xyz = (0.3, 0.0, 3.0) -> x = 100 * 0.1 + 32 = 42, y = 32
    got = choice_points(np.array([[0.3, 0.0, 1.0]]), K, ext[None], (64, 64))
    assert got.tolist() == [[32, 42]]


def test_choice_action_names_the_steps_point() -> None:
    sg = {"choice": "pick up the cube", "grounded": "pick up the cube at <5, 6>", "point": [5, 6]}
    options = [{"label": "a", "action": "press the button"}, {"label": "b", "action": sg["choice"]}]
    assert json.loads(choice_action(sg, options, np.array([12, 40]))) == {
        "choice": "B",
        "point": [12, 40],
    }
    assert json.loads(choice_action(sg, options, np.array([-1, -1])))["point"] == []
    # a dataset written before the per-step point: the grounded text's pixel
    assert json.loads(choice_action(sg, options))["point"] == [5, 6]


@pytest.mark.slow
@dfhelpers.needs_maniskill()
def test_the_point_follows_the_lifted_cube() -> None:
    """PickXtimes val episode 6: through a pick the anchor is the cube: it sits still until the
    grasp, then rises with the hand (more than 5 cm by the end of the lift), and the projected
    row moves up the image with it."""
    from dataforge.manip.executor import Noise
    from dataforge.pipelines.robomme.env import front_camera_cv
    from dataforge.pipelines.robomme.episode import anchors, run_pass1
    from dataforge.pipelines.robomme.seeds import EpisodeSpec

    run, _ = run_pass1(EpisodeSpec("PickXtimes", 6, 1010600, "medium"), Noise(), max_retries=0)
    assert run is not None
    rec = run.recording
    points = anchors(rec)
    first = rec.subgoals[0]
    assert first["simple"].startswith("pick up")
    pick = points[first["start"] : first["end"]]
    assert np.isfinite(pick).all()
    assert np.ptp(pick[: len(pick) // 2, 2]) < 1e-3  # resting until the grasp
    assert pick[-1, 2] - pick[0, 2] > 0.05  # lifted
    k, ext = front_camera_cv()
    rows = choice_points(pick, k, np.repeat(ext[None], len(pick), 0), (256, 256))[:, 0]
    assert (rows >= 0).all() and rows[-1] < rows[0]  # higher in the image
