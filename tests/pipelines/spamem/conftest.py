"""Hand-built SpaMEM sequences for the answer and geometry tests (test_answers.py,
test_geometry.py): a stored episode as ``SequenceView`` reads it (world graphs, 3D centres,
camera poses, instance masks, depths, 2D boxes), built from a few dicts, with no rendering.

Two scenes, whose layouts the tests' hand derivations refer to:

- ``static_scene``: one step, two views; a DiningTable cluster of five objects (two Apples) and
  a CounterTop with one Bread (L1).
- ``memory_scene``: steps 0..4 (remove, place, place, spawn), two views per step of which the
  stream view (azimuth 0, standing) is view 1 and the only one that sees anything (L2 / L3).

Cameras follow AI2-THOR's convention (``thor_camera_pose``): yaw 90 at (0, 1, 0) looks along
world +x with its right along world -z, so a world point (X, Y, Z) is at camera
(x, y, z) = (-Z, 1 - Y, X); yaw 270 at (4, 1, 0) looks along -x with its right along +z:
(x, y, z) = (Z, 1 - Y, 4 - X); yaw 0 at the origin: (X, -Y, Z).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pytest

from dataforge.pipelines.spamem.sequence_view import SequenceView
from dataforge.render.camera import thor_camera_pose
from dataforge.render.masks import mask_boxes
from dataforge.world.graph import graph_diff

XYZ = tuple[float, float, float]
Box = tuple[int, int, int, int]  # inclusive x0, y0, x1, y1


class FakeArray:
    """A stored array: ``read()`` and row indexing."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def read(self) -> np.ndarray:
        return self.a

    def __getitem__(self, i: Any) -> np.ndarray:
        return self.a[i]


class FakeEpisode:
    """A stored episode of a spamem sequences dataset, in memory."""

    def __init__(self, eid: str, arrays: dict[str, np.ndarray], metadata: dict[str, Any]) -> None:
        self.id = eid
        self.arrays = arrays
        self.metadata = metadata

    def __getitem__(self, name: str) -> FakeArray:
        return FakeArray(self.arrays[name])


class Camera(NamedTuple):
    azimuth: float
    height: str  # standing | crouching
    position: XYZ
    yaw: float


class Furniture(NamedTuple):
    """A top-level object of the world graphs (a Dresser, a Bed): what names refer to."""

    type: str
    position: XYZ
    yaw: float = 0.0
    room: str | None = None

    def node(self, oid: str) -> dict[str, Any]:
        return {
            "id": oid,
            "object_type": self.type,
            "parent_id": None,
            "position": list(self.position),
            "rotation": [0.0, self.yaw, 0.0],
            "room_id": self.room,
        }


def _receptacle(
    rid: str, kind: str, parent: str | None, extent: tuple[XYZ, XYZ] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": rid, "object_type": kind, "parent_id": parent}
    if extent is not None:
        out["aabb_min"], out["aabb_max"] = list(extent[0]), list(extent[1])
    return out


def _container(openness: Sequence[float] | None, step: int) -> dict[str, Any]:
    """A drawer-like receptacle (its one surface needs opening) and its openness at ``step``."""
    if openness is None:
        return {}
    return {"surfaces": [{"needs_open": True, "object_ids": []}], "openness": openness[step]}


def build_episode(
    *,
    receptacles: Mapping[str, str],
    states: Sequence[Mapping[str, tuple[str, str, XYZ]]],
    cameras: Sequence[Sequence[tuple[float, str, XYZ, float]]],
    boxes: Mapping[tuple[int, int], Mapping[str, Box]],
    depth_mm: Mapping[str, int] | None = None,
    size: tuple[int, int] = (40, 30),
    eid: str = "house-000000/seq-00",
    rooms: Mapping[str, str] | None = None,
    furniture: Mapping[str, Furniture | tuple[Any, ...]] | None = None,
    parents: Mapping[str, str] | None = None,
    extents: Mapping[str, tuple[XYZ, XYZ]] | None = None,
    containers: Mapping[str, Sequence[float]] | None = None,
    assets: Mapping[str, str] | None = None,
) -> FakeEpisode:
    """``receptacles``: id -> type; ``states``: per step, object id -> (type, receptacle id,
    3D centre); ``cameras``: per step, per view; ``boxes``: (step, view) -> element id ->
    the rectangle its mask fills (depth ``depth_mm[element]``, default 2000 mm). The 2D box
    table comes from the masks as the capture makes it (``mask_boxes``).

    What receptacle names read (``naming``), all optional: ``rooms`` (id -> room type);
    ``furniture``, top-level objects of every graph (id -> type, position, yaw, room id; a
    receptacle listed here gets its room and position from it); ``parents``, the furniture a
    sub-receptacle belongs to; ``extents``, a receptacle's box (lo, hi corners); ``containers``:
    a receptacle whose surface needs opening -> its openness per step; ``assets``: an
    object's asset id (what it looks like; default none)."""
    width, height = size
    views = len(cameras[0])
    rows = len(states) * views
    keys = sorted(set(receptacles) | {o for s in states for o in s})
    keys += sorted(set(furniture or {}) - set(keys))  # after the rest: their ids stay as they were
    ids = {k: i + 1 for i, k in enumerate(keys)}
    graphs = []
    for step, state in enumerate(states):
        graphs.append(
            {
                "format": 1,
                "house": "fake",
                "rooms": [{"id": r, "room_type": t} for r, t in sorted((rooms or {}).items())],
                "structure": [],
                "receptacles": [
                    _receptacle(r, t, (parents or {}).get(r), (extents or {}).get(r))
                    | _container((containers or {}).get(r), step)
                    for r, t in receptacles.items()
                ],
                "objects": [
                    {"id": o, "object_type": t, "parent_id": r, "position": list(c)}
                    | ({"asset_id": assets[o]} if o in (assets or {}) else {})
                    for o, (t, r, c) in sorted(state.items())
                ]
                + [Furniture(*f).node(i) for i, f in sorted((furniture or {}).items())],
            }
        )
    docs = [json.dumps(graphs[0]).encode()] + [
        json.dumps(graph_diff(graphs[s - 1], graphs[s])).encode() for s in range(1, len(graphs))
    ]
    offsets = np.cumsum([0] + [len(d) for d in docs])
    instance = np.zeros((rows, height, width), np.uint16)
    depth = np.zeros((rows, height, width), np.uint16)
    for (step, view), painted in boxes.items():
        row = step * views + view
        for key, (x0, y0, x1, y1) in painted.items():
            assert not instance[row, y0 : y1 + 1, x0 : x1 + 1].any(), f"{key} overlaps"
            instance[row, y0 : y1 + 1, x0 : x1 + 1] = ids[key]
            depth[row, y0 : y1 + 1, x0 : x1 + 1] = (depth_mm or {}).get(key, 2000)
    box2d = []  # per view row: row, instance, x0, y0, x1, y1, pixels (as episode.py stores it)
    for row in range(rows):
        b = mask_boxes(instance[row])
        box2d.append(np.column_stack([np.full(len(b), row), b]))
    box3d = [
        (s, ids[o], *c, 0.1, 0.1, 0.1, 0.0, 0.0, 0.0)
        for s, state in enumerate(states)
        for o, (_, _, c) in sorted(state.items())
    ] + [  # every object has a 3D box at every state, furniture too (centre: its position)
        (s, ids[f], *Furniture(*spec).position, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0)
        for s in range(len(states))
        for f, spec in sorted((furniture or {}).items())
    ]
    cams = [[Camera(*c) for c in step] for step in cameras]
    poses = [thor_camera_pose(c.position, c.yaw) for step in cams for c in step]
    arrays = {
        "graphs": np.frombuffer(b"".join(docs), np.uint8),
        "graph_index": np.column_stack([offsets[:-1], np.diff(offsets)]).astype(np.int64),
        "pose": np.stack(poses),
        "intrinsics": np.eye(3),
        "box2d": np.concatenate(box2d).astype(np.int32).reshape(-1, 7),
        "box3d": np.array(box3d, np.float64).reshape(-1, 11),
        "instance": instance,
        "depth": depth,
    }
    metadata = {
        "views_per_state": views,
        "states": len(states),
        "capture": {"resolution": [width, height], "radius_m": 1.5},
        "viewpoints": [
            [
                {
                    "azimuth_deg": c.azimuth,
                    "height": c.height,
                    "position": list(c.position),
                    "yaw_deg": c.yaw,
                }
                for c in step
            ]
            for step in cams
        ],
        "instances": [[i, k] for k, i in ids.items()],
    }
    return FakeEpisode(eid, arrays, metadata)


LOOK_X = Camera(0.0, "standing", (0.0, 1.0, 0.0), 90.0)  # (x, y, z) = (-Z, 1 - Y, X)
LOOK_MINUS_X = Camera(180.0, "crouching", (4.0, 1.0, 0.0), 270.0)  # (Z, 1 - Y, 4 - X)


def static_episode() -> FakeEpisode:
    """Step 0 only. View 1 (LOOK_X) sees the whole DiningTable cluster; view 0 (LOOK_MINUS_X)
    sees two of its objects only, so the cluster is view 1's. Camera-frame centres in view 1,
    (x right, z ahead), all at camera height y = 0.2:

    ========  =======  ==========  ==============
    id        type     (x, z)      world (X, Y, Z)
    ========  =======  ==========  ==============
    q-apple   Apple    (0, 2.0)    (2.0, 0.8, 0)
    p-apple   Apple    (0.3, 2.0)  (2.0, 0.8, -0.3)
    mug       Mug      (-0.4, 2.0) (2.0, 0.8, 0.4)
    bowl      Bowl     (-0.1, 2.6) (2.6, 0.8, 0.1)
    cup       Cup      (1.5, 2.0)  (2.0, 0.8, -1.5)
    bread     Bread    on the CounterTop, far to the left
    ========  =======  ==========  ==============

    q-apple is left of p-apple although its id sorts after: it is "Apple 1".
    """
    table, counter = "table", "counter"
    state = {
        "q-apple": ("Apple", table, (2.0, 0.8, 0.0)),
        "p-apple": ("Apple", table, (2.0, 0.8, -0.3)),
        "mug": ("Mug", table, (2.0, 0.8, 0.4)),
        "bowl": ("Bowl", table, (2.6, 0.8, 0.1)),
        "cup": ("Cup", table, (2.0, 0.8, -1.5)),
        "bread": ("Bread", counter, (1.0, 0.9, 2.0)),
    }
    view1 = {
        "q-apple": (10, 10, 12, 12),
        "p-apple": (14, 10, 16, 12),
        "mug": (4, 10, 6, 12),
        "bowl": (8, 4, 10, 6),
        "cup": (24, 10, 27, 12),
        "bread": (30, 2, 33, 5),
        "table": (0, 14, 39, 29),  # a receptacle's mask: in the prompt, never in the cluster
    }
    return build_episode(
        receptacles={table: "DiningTable", counter: "CounterTop"},
        states=[state],
        cameras=[[LOOK_MINUS_X, LOOK_X]],
        boxes={(0, 0): {"q-apple": (2, 2, 4, 4), "mug": (8, 2, 10, 4)}, (0, 1): view1},
        depth_mm={"q-apple": 2000, "p-apple": 2000, "mug": 2000, "bowl": 2600, "cup": 2000},
    )


# the memory scene: base boxes in the stream view, shifted right by one pixel per step
MEMORY_BOXES: dict[str, Box] = {
    "apple": (2, 2, 4, 4),
    "mug": (8, 2, 10, 4),
    "bread": (14, 2, 16, 4),
    "knife": (20, 2, 22, 4),
    "vase": (26, 2, 28, 4),
    "book": (2, 10, 4, 12),
    "pen": (8, 10, 10, 12),
}


def memory_box(obj: str, step: int) -> Box:
    x0, y0, x1, y1 = MEMORY_BOXES[obj]
    return (x0 + step, y0, x1 + step, y1)


def memory_states() -> list[dict[str, tuple[str, str, XYZ]]]:
    """Steps 0..4: 1 removes the mug from the table; 2 moves the apple table -> counter; 3 moves
    it counter -> shelf-b; 4 spawns a pen on the counter. shelf-a (with a book) is never acted
    on. The shelves are side by side in one ShelvingUnit (:data:`SHELVING`)."""
    apple_table = ("Apple", "table", (2.0, 0.8, 1.0))
    apple_counter = ("Apple", "counter", (2.0, 0.9, -0.7))
    apple_shelf = ("Apple", "shelf-b", (2.0, 1.5, -0.3))
    fixed = {
        "bread": ("Bread", "counter", (2.0, 0.9, -1.0)),
        "knife": ("Knife", "counter", (2.5, 0.9, -1.1)),
        "vase": ("Vase", "shelf-b", (2.0, 1.5, 0.0)),
        "book": ("Book", "shelf-a", (2.0, 1.5, 2.0)),
    }
    mug = ("Mug", "table", (2.0, 0.8, 1.3))
    pen = ("Pen", "counter", (2.1, 0.9, -1.4))
    return [
        {**fixed, "apple": apple_table, "mug": mug},
        {**fixed, "apple": apple_table},
        {**fixed, "apple": apple_counter},
        {**fixed, "apple": apple_shelf},
        {**fixed, "apple": apple_shelf, "pen": pen},
    ]


SHELVING = {
    "furniture": {"unit": Furniture("ShelvingUnit", (2.2, 1.0, 1.0), 270.0)},
    "parents": {"shelf-a": "unit", "shelf-b": "unit"},
    "extents": {
        "shelf-a": ((1.9, 1.45, 1.6), (2.5, 1.8, 2.4)),
        "shelf-b": ((1.9, 1.45, -0.55), (2.5, 1.8, 0.25)),
    },
}
"""The memory scene's two shelves, one board each at y 1.45 in a ShelvingUnit at (2.2, 1, 1)
whose front faces -x (yaw 270: local +z is world -x, local x is world z). Facing its front one
looks along +x with world -z on the right (as LOOK_X does), so shelf-b (centre z -0.15) is the
"right shelf of the ShelvingUnit" and shelf-a (z 2.0) the "left shelf of the ShelvingUnit"."""


def memory_episode() -> FakeEpisode:
    """The stream view (view 1) is LOOK_X at steps 0..3 and a camera looking along -x from
    (4, 1, 0) at step 4 (yaw 270), so left and right swap between frames 3 and 4; view 0 sees
    nothing."""
    states = memory_states()
    stream_4 = Camera(0.0, "standing", (4.0, 1.0, 0.0), 270.0)
    other = Camera(180.0, "crouching", (0.0, 0.6, 0.0), 90.0)
    cameras = [[other, LOOK_X] for _ in range(4)] + [[other, stream_4]]
    boxes = {(s, 1): {o: memory_box(o, s) for o in state} for s, state in enumerate(states)}
    return build_episode(
        receptacles={
            "table": "DiningTable",
            "counter": "CounterTop",
            "shelf-a": "Shelf",
            "shelf-b": "Shelf",
        },
        states=states,
        cameras=cameras,
        boxes=boxes,
        **SHELVING,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="session")
def static_scene() -> SequenceView:
    return SequenceView(static_episode())


@pytest.fixture(scope="session")
def memory_scene() -> SequenceView:
    return SequenceView(memory_episode())


@pytest.fixture
def make_episode() -> Callable[..., FakeEpisode]:
    """``build_episode`` for a test's own layout (test modules cannot import conftest)."""
    return build_episode
