"""RoboMME's grounded subgoal texts: pixels at the segmentation centroid of the named actors,
the simple text where one is out of view, the projected point kept for choice_action."""

from __future__ import annotations

import json
from typing import Any

import dfhelpers
import numpy as np
import pytest

from dataforge.pipelines.robomme.episode import choice_action, ground_subgoals


def _seg() -> np.ndarray:
    seg = np.zeros((16, 16), np.int32)
    seg[2:5, 10:14] = 7  # the cube: rows 2-4 (mean 3), cols 10-13 (mean 11.5 -> 11)
    seg[9:12, 1:3] = 8  # a link of the button
    seg[12, 1] = 9  # another link of the button
    return seg


def test_pixels_become_centroids_of_the_named_actors() -> None:
    sgs = [
        {
            "simple": "pick up the cube",
            "grounded": "pick up the cube at <1, 1>",
            "start": 4,
            "segment": ["cube_red_0"],
        },
        {
            "simple": "drop",
            "grounded": "put <0, 0> beside <5, 5>",
            "start": 9,
            "segment": ["cube_red_0", "button"],
        },
        {"simple": "press", "grounded": "press the button at <3, 3>", "start": 9, "segment": []},
    ]
    ids = {"cube_red_0": {7}, "button": {8, 9}}
    ground_subgoals(sgs, {4: _seg(), 9: _seg()}, ids)
    assert sgs[0]["grounded"] == "pick up the cube at <3, 11>"
    rows, cols = np.nonzero(np.isin(_seg(), [8, 9]))
    assert sgs[1]["grounded"] == f"put <3, 11> beside <{int(rows.mean())}, {int(cols.mean())}>"
    assert sgs[2]["grounded"] == "press the button at <3, 3>"  # no segment: kept as given
    assert sgs[0]["point"] == [1, 1] and sgs[1]["point"] == [0, 0]  # the projected points
    doc = json.loads(
        choice_action(
            {**sgs[0], "choice": "pick up the cube"},
            [{"label": "a", "action": "pick up the cube", "need_parameter": True}],
        )
    )
    assert doc == {"choice": "A", "point": [1, 1]}


def test_an_actor_out_of_view_gives_the_simple_text() -> None:
    sgs = [
        {
            "simple": "pick up the cube",
            "grounded": "pick up the cube at <1, 1>",
            "start": 0,
            "segment": ["cube_blue_1"],
        }
    ]
    ground_subgoals(sgs, {0: _seg()}, {"cube_blue_1": {42}})
    assert sgs[0]["grounded"] == "pick up the cube"
    doc = json.loads(choice_action({**sgs[0], "choice": ""}, []))
    assert doc == {"choice": "", "point": [1, 1]}


@pytest.mark.slow
@dfhelpers.needs_maniskill()
def test_segment_ids_name_links_of_articulations(make: Any) -> None:
    """``<articulation>/<link>`` names one link (RoboMME's segment of a press is the button's
    cap, of a peg pick the grasped link); the articulation's name covers all its links."""
    from dataforge.pipelines.robomme.episode import segment_ids

    b = make("PickXtimes", "easy", 1000).unwrapped
    ids = segment_ids(b)
    cap, base = ids["button/button_cap"], ids["button/button_base"]
    assert len(cap) == len(base) == 1 and cap != base
    assert ids["button"] == cap | base
    assert all(len(v) == 1 for k, v in ids.items() if k in b.scene.actors)
