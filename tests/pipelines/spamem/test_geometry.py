"""The geometric helpers of SpaMEM's answers (``SequenceView``), checked by hand: camera frames,
the direction rule, nearest neighbours, left-to-right labels, the median depth of a mask, the
visible boxes of a view, and the world-state helpers STT and the memory questions use
(events, focus, path, refer). Layouts: conftest.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from dataforge.pipelines.spamem.questions import Builder, Settings
from dataforge.pipelines.spamem.sequence_view import Event, SequenceView

ORIGIN = (0.0, "standing", (0.0, 0.0, 0.0), 0.0)  # yaw 0 at the origin: (x, y, z) = (X, -Y, Z)
MakeEpisode = Callable[..., Any]
XYZ = tuple[float, float, float]


def flat_scene(make_episode: MakeEpisode, objects: dict[str, tuple[str, XYZ]]) -> SequenceView:
    """One step, one view (ORIGIN), every object on one table; only the table has a mask."""
    state = {o: (t, "table", c) for o, (t, c) in objects.items()}
    ep = make_episode(
        receptacles={"table": "DiningTable"},
        states=[state],
        cameras=[[ORIGIN]],
        boxes={(0, 0): {"table": (0, 20, 39, 29)}},
    )
    return SequenceView(ep)


def test_a_sequence_whose_views_see_nothing_has_no_boxes(make_episode: MakeEpisode) -> None:
    """An empty 2D box table (no mask in any view) reads as no visible objects."""
    ep = make_episode(
        receptacles={"table": "DiningTable"},
        states=[{"apple": ("Apple", "table", (0.0, 0.0, 1.0))}],
        cameras=[[ORIGIN]],
        boxes={},
    )
    assert len(ep["box2d"].read()) == 0
    seq = SequenceView(ep)
    assert seq.visible(seq.row(0, 0)) == {}


def test_camera_frame_of_a_view(static_scene: SequenceView) -> None:
    # view 1 looks along world +x from (0, 1, 0), its right along world -z: (-Z, 1 - Y, X)
    world = np.array([[2.0, 0.8, -0.3], [2.6, 0.8, 0.1]])
    np.testing.assert_allclose(
        static_scene.camera_xyz(1, world), [[0.3, 0.2, 2.0], [-0.1, 0.2, 2.6]], atol=1e-12
    )
    # view 0 looks along -x from (4, 1, 0), its right along +z: (Z, 1 - Y, 4 - X)
    np.testing.assert_allclose(
        static_scene.camera_xyz(0, world), [[-0.3, 0.2, 2.0], [0.1, 0.2, 1.4]], atol=1e-12
    )


# anchor at (0, 0, 2) seen from ORIGIN; dx = other x - 0, dz = other z - 2 (camera frame)
DIRECTIONS = {
    "r": ((0.3, 0.0, 2.0), "right"),  # dx +.3, dz 0
    "l": ((-0.3, 0.0, 2.0), "left"),  # dx -.3
    "b": ((0.1, 0.0, 2.6), "behind"),  # dz .6 > |dx| .1
    "bl": ((-0.1, 0.0, 2.6), "behind"),  # dz .6 > |dx| .1, whatever the side
    "tie": ((0.5, 0.0, 2.5), "right"),  # dz .5 = |dx| .5: not farther by more: the side
    "wide": ((-0.7, 0.0, 2.6), "left"),  # dz .6 < |dx| .7
    "front": ((0.2, 0.0, 1.0), "right"),  # dz -1: nearer the camera is never behind
    "high": ((-0.3, -2.0, 2.0), "left"),  # 2 m above: height plays no part
}


def test_direction_rule(make_episode: MakeEpisode) -> None:
    objs = {"a": ("Apple", (0.0, 0.0, 2.0))}
    objs |= {k: ("Mug", c) for k, (c, _) in DIRECTIONS.items()}
    seq = flat_scene(make_episode, objs)
    for other, (_, want) in DIRECTIONS.items():
        assert seq.direction(0, 0, "a", other) == want, other
    # not symmetric: the anchor is in front of "b" (dz -.6), to its left (dx -.1)
    assert seq.direction(0, 0, "b", "a") == "left"
    assert seq.direction(0, 0, "r", "a") == "left" and seq.direction(0, 0, "l", "a") == "right"


def test_direction_is_in_the_camera_frame_of_the_view(static_scene: SequenceView) -> None:
    # conftest.static_episode: p-apple is at world z -0.3 from q-apple. View 1's right is world
    # -z: p-apple is right of q-apple there, left of it in view 0 (facing the other way). The
    # bowl is 0.6 m farther along view 1's axis (dx -.1): behind; in view 0 it is 0.6 m nearer
    # (dx +.1 in view 0): right.
    assert static_scene.direction(1, 0, "q-apple", "p-apple") == "right"
    assert static_scene.direction(1, 0, "p-apple", "q-apple") == "left"
    assert static_scene.direction(0, 0, "q-apple", "p-apple") == "left"
    assert static_scene.direction(1, 0, "q-apple", "bowl") == "behind"
    assert static_scene.direction(0, 0, "q-apple", "bowl") == "right"


def test_nearest_by_3d_centre_distance(
    static_scene: SequenceView, make_episode: MakeEpisode
) -> None:
    objs = ["bowl", "cup", "mug", "p-apple", "q-apple"]
    # from q-apple: p-apple .3, mug .4, bowl sqrt(.1² + .6²) = .608, cup 1.5
    assert static_scene.nearest(0, "q-apple", objs, 3) == ["p-apple", "mug", "bowl"]
    assert static_scene.nearest(0, "q-apple", objs, 10) == ["p-apple", "mug", "bowl", "cup"]
    # from the cup: p-apple 1.2, q-apple 1.5, bowl 1.709 (mug 1.9)
    assert static_scene.nearest(0, "cup", objs, 3) == ["p-apple", "q-apple", "bowl"]
    # height counts (3D): "up" is .25 above, "side" .3 to the side; equal distances by id
    seq = flat_scene(
        make_episode,
        {
            "a": ("Apple", (0.0, 0.0, 2.0)),
            "up": ("Mug", (0.0, -0.25, 2.0)),
            "side": ("Mug", (0.3, 0.0, 2.0)),
            "x2": ("Cup", (0.0, 0.0, 2.4)),
            "x1": ("Cup", (0.0, 0.0, 1.6)),
        },
    )
    assert seq.nearest(0, "a", ["x2", "side", "up", "x1", "a"], 4) == ["up", "side", "x1", "x2"]


def test_left_to_right_labels_number_repeated_types_by_projection(
    static_scene: SequenceView, make_episode: MakeEpisode
) -> None:
    # view 1: q-apple at x 0, p-apple at x .3 (same depth): q-apple is "Apple 1"
    objs = ["bowl", "cup", "mug", "p-apple", "q-apple"]
    assert static_scene.left_to_right(1, objs, 0) == {
        "q-apple": "Apple 1",
        "p-apple": "Apple 2",
        "mug": "Mug",
        "bowl": "Bowl",
        "cup": "Cup",
    }
    # seen from view 0 (the other way) the order flips
    assert static_scene.left_to_right(0, ["p-apple", "q-apple"], 0) == {
        "p-apple": "Apple 1",
        "q-apple": "Apple 2",
    }
    # the image column u = x / z decides, not x: "near" x .2 at z 1 (u .2) is right of "far"
    # x .3 at z 3 (u .1)
    seq = flat_scene(
        make_episode, {"near": ("Apple", (0.2, 0.0, 1.0)), "far": ("Apple", (0.3, 0.0, 3.0))}
    )
    assert seq.left_to_right(0, ["near", "far"], 0) == {"far": "Apple 1", "near": "Apple 2"}


def test_median_depth_of_the_mask_pixels(make_episode: MakeEpisode) -> None:
    ep = make_episode(
        receptacles={"table": "DiningTable"},
        states=[{"a": ("Apple", "table", (0, 0, 2)), "b": ("Mug", "table", (1, 0, 2))}],
        cameras=[[ORIGIN]],
        boxes={(0, 0): {"a": (0, 0, 4, 0), "b": (0, 2, 2, 2)}},
    )
    ep.arrays["depth"][0, 0, 0:5] = [1000, 1200, 0, 1500, 2000]  # 0: no depth, left out
    ep.arrays["depth"][0, 2, 0:3] = [4000, 700, 900]
    ep.arrays["depth"][0, 1, :] = 300  # unmasked pixels: no instance's
    seq = SequenceView(ep)
    # a: median of 1000, 1200, 1500, 2000 mm = (1200 + 1500) / 2 = 1350 mm
    assert seq.median_depth_m(0, "a") == pytest.approx(1.35)
    # b: median of 700, 900, 4000 mm = 900 mm
    assert seq.median_depth_m(0, "b") == pytest.approx(0.9)


def test_visible_boxes_inclusive_and_the_pixel_threshold(make_episode: MakeEpisode) -> None:
    # 640x480: at least ceil(0.0005 * 307200) = 154 pixels. "big" is 14 x 11 = 154 pixels,
    # "small" 9 x 17 = 153; "later" is only in view 1.
    state = {k: ("Apple", "table", (0, 0, 2)) for k in ("big", "small", "later")}
    ep = make_episode(
        receptacles={"table": "DiningTable"},
        states=[state],
        cameras=[[ORIGIN, ORIGIN]],
        boxes={
            (0, 0): {"big": (0, 0, 13, 10), "small": (20, 0, 28, 16)},
            (0, 1): {"later": (100, 50, 119, 59)},
        },
        size=(640, 480),
    )
    unknown = np.array([[0, 999, 200, 200, 299, 299, 10000]], np.int32)  # not in the table
    ep.arrays["box2d"] = np.concatenate([ep.arrays["box2d"], unknown])
    seq = SequenceView(ep)
    assert seq.min_pixels == 154
    assert seq.visible(0) == {"big": (0, 0, 13, 10, 154)}
    assert seq.visible(1) == {"later": (100, 50, 119, 59, 200)}
    # a small image: at least VISIBLE_MIN = 4 pixels (0.05 % of 40 x 30 is 0.6)
    ep = make_episode(
        receptacles={"table": "DiningTable"},
        states=[{"four": ("Apple", "table", (0, 0, 2)), "three": ("Mug", "table", (1, 0, 2))}],
        cameras=[[ORIGIN]],
        boxes={(0, 0): {"four": (5, 5, 6, 6), "three": (10, 3, 10, 5)}},
    )
    assert SequenceView(ep).visible(0) == {"four": (5, 5, 6, 6, 4)}


def test_world_state_helpers(memory_scene: SequenceView) -> None:
    seq = memory_scene  # conftest.memory_states
    assert seq.events == [
        Event(1, "remove", "mug", "table", None),
        Event(2, "place", "apple", "table", "counter"),
        Event(3, "place", "apple", "counter", "shelf-b"),
        Event(4, "spawn", "pen", None, "counter"),
    ]
    assert seq.receptacle_label == {  # conftest.SHELVING: side by side in one ShelvingUnit
        "counter": "CounterTop",
        "shelf-a": "left shelf of the ShelvingUnit",
        "shelf-b": "right shelf of the ShelvingUnit",
        "table": "DiningTable",
    }
    assert not seq.unnamed
    assert seq.focus(2) == ["counter", "table"]  # by label: CounterTop < DiningTable
    assert seq.focus(3) == ["counter", "shelf-b"]
    assert seq.objects_on(2, "counter") == ["apple", "bread", "knife"]
    assert seq.categories_on(4, "counter") == {"Bread", "Knife", "Pen"}
    # path: the receptacles over first..last, each stay once, absent steps skipped
    assert seq.path("apple", 0, 4) == ["table", "counter", "shelf-b"]
    assert seq.path("apple", 1, 2) == ["table", "counter"]
    assert seq.path("apple", 3, 4) == ["shelf-b"]
    assert seq.path("pen", 0, 4) == ["counter"]
    assert seq.path("mug", 1, 4) == []
    assert seq.refer("apple", 2) == "the Apple on the CounterTop at step 2"
    assert seq.refer("vase", 0) == "the Vase on the right shelf of the ShelvingUnit at step 0"
    assert seq.view_index(0.0, "standing") == 1


def test_refer_is_none_when_the_name_fits_two_objects(static_scene: SequenceView) -> None:
    assert static_scene.refer("q-apple", 0) is None  # two Apples on the table
    assert static_scene.refer("mug", 0) == "the Mug on the DiningTable at step 0"


def test_l1_cluster_is_the_view_that_sees_most_of_it(static_scene: SequenceView) -> None:
    # the table: view 0 sees q-apple and mug, view 1 all five; the counter: only view 1
    settings = Settings((1,), ("short",), ("rgb",), (0.0, "standing"), "sequences")
    builder = Builder(static_scene, settings, np.random.default_rng(0), ())
    assert builder.clusters() == [
        ("counter", 1, ["bread"]),
        ("table", 1, ["bowl", "cup", "mug", "p-apple", "q-apple"]),
    ]
