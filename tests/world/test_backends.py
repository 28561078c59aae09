"""The world interface: the embedded backend on a real house, and the AI2-THOR translation
layer against a recording stand-in controller (the Unity build cannot run here)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from dfhelpers import SHARED
from renderhelpers import needs_egl
from shapely.geometry import Polygon

from dataforge.errors import MissingDependencyError
from dataforge.world import load_catalogue, load_house
from dataforge.world.backends import (
    EmbeddedWorld,
    ThorWorld,
    ids_from_colors,
    open_world,
    path_length,
    thor_camera_args,
)
from dataforge.world.scene import InstanceIds, SemanticTable

HOUSE = SHARED / "data" / "procthor_houses" / "house_746.json"
needs_house = pytest.mark.skipif(not HOUSE.is_file(), reason="needs ../shared/data houses")


@pytest.fixture(scope="module")
def house_and_catalogue() -> tuple[Any, Any]:
    if not HOUSE.is_file():
        pytest.skip("needs ../shared/data/procthor_houses")
    cat = load_catalogue()
    return load_house(HOUSE, catalogue=cat), cat


@needs_house
@needs_egl()
def test_embedded_world_sees_a_spawned_object(house_and_catalogue: tuple[Any, Any]) -> None:
    house, cat = house_and_catalogue
    w = EmbeddedWorld(house, cat, width=160, height=120)
    table = next(o for o in house.objects if o.object_type == "DiningTable")
    res = w.spawn("Apple_1", table.id, np.random.default_rng(0))
    assert res.ok
    x, _, z = res.position
    frame = w.render((x, res.position[1] + 1.0, z - 0.6), yaw=0.0, horizon=55.0)
    iid = w.scene.instance_of(res.object_id)
    assert (frame.instance == iid).any()
    graph = w.world_graph().to_dict()
    assert res.object_id in {o["id"] for o in graph["objects"]}
    pts = w.reachable_positions()
    d = w.distances(pts[:3], pts[3:6])
    assert np.isfinite(d).all() and (d >= 0).all()
    w.remove(res.object_id)
    frame2 = w.render((x, res.position[1] + 1.0, z - 0.6), yaw=0.0, horizon=55.0)
    assert not (frame2.instance == iid).any()
    w.close()


class FakeController:
    """Records every step; answers like AI2-THOR would (one third-party camera)."""

    def __init__(self, w: int = 4, h: int = 3) -> None:
        self.steps: list[dict[str, Any]] = []
        self.w, self.h = w, h

    def step(self, action: str, **kw: Any) -> Any:
        self.steps.append({"action": action, **kw})
        meta: dict[str, Any] = {"lastActionSuccess": True, "objects": []}
        ev = SimpleNamespace(metadata=meta)
        if action in ("AddThirdPartyCamera", "UpdateThirdPartyCamera"):
            seg = np.zeros((self.h, self.w, 3), np.uint8)
            seg[:, :2] = (10, 20, 30)
            seg[:, 2:] = (1, 2, 3)
            meta["objects"] = [{"objectId": "Apple|1", "objectType": "Apple"}]
            ev.third_party_instance_segmentation_frames = [seg]
            ev.third_party_camera_frames = [np.full((self.h, self.w, 3), 7, np.uint8)]
            ev.third_party_depth_frames = [np.full((self.h, self.w), 1.5, np.float32)]
            ev.color_to_object_id = {(10, 20, 30): "Apple|1", (1, 2, 3): "wall|2|0.00|0.00"}
        elif action == "GetReachablePositions":
            meta["actionReturn"] = [{"x": 0.25, "y": 0.9, "z": 0.5}, {"x": 0.5, "y": 0.9, "z": 0.5}]
        elif action == "GetShortestPathToPoint":
            corners = [
                {"x": 0, "y": 0.9, "z": 0},
                {"x": 3, "y": 0.9, "z": 0},
                {"x": 3, "y": 0.9, "z": 4},
            ]
            meta["actionReturn"] = {"corners": corners}
        return ev


def test_thor_translation_layer(house_and_catalogue: tuple[Any, Any]) -> None:
    house, cat = house_and_catalogue
    fake = FakeController()
    w = ThorWorld(house, cat, controller=fake, width=4, height=3)
    f = w.render((1.0, 1.5, 2.0), yaw=90.0, horizon=30.0)
    first = fake.steps[0]
    assert first["action"] == "AddThirdPartyCamera"
    assert first["rotation"] == {"x": 30.0, "y": 90.0, "z": 0.0}
    assert first["position"] == {"x": 1.0, "y": 1.5, "z": 2.0}
    assert f.depth.dtype == np.float32 and f.rgb.shape == (3, 4, 3)
    apple, wall = f.instance[0, 0], f.instance[0, 3]
    assert apple != wall and apple > 0 and wall > 0
    assert f.semantic[0, 0] == w.semantics.id("Apple") and f.semantic[0, 3] == w.semantics.id(
        "Wall"
    )
    w.render((1.0, 1.5, 2.0), yaw=0.0)
    assert fake.steps[-1]["action"] == "UpdateThirdPartyCamera"
    assert w.render((0, 1, 0), 0.0).instance[0, 0] == apple  # ids are stable across frames
    np.testing.assert_allclose(w.reachable_positions(), [[0.25, 0.9, 0.5], [0.5, 0.9, 0.5]])
    assert w.distances([(0, 0, 0)], [(3, 0, 4)])[0, 0] == pytest.approx(7.0)
    fridge = next(o for o in house.objects if o.object_type == "Fridge")
    res = w.spawn("Apple_1", fridge.id, np.random.default_rng(0))
    assert res.ok
    actions = [s["action"] for s in fake.steps[-2:]]
    assert actions == ["OpenObject", "SpawnAsset"]
    spawn = fake.steps[-1]
    assert spawn["generatedId"] == res.object_id and spawn["assetId"] == "Apple_1"
    assert spawn["position"] == {"x": res.position[0], "y": res.position[1], "z": res.position[2]}
    w.remove(fridge.id)
    removed = [s["objectId"] for s in fake.steps if s["action"] == "RemoveFromScene"]
    assert removed[0] == fridge.id and res.object_id in removed


def test_helpers() -> None:
    assert path_length([{"x": 0, "z": 0}, {"x": 0, "z": 2}, {"x": 1.5, "z": 2}]) == 3.5
    assert thor_camera_args((1, 2, 3), 45, -10)["rotation"] == {"x": -10.0, "y": 45.0, "z": 0.0}
    seg = np.zeros((2, 2, 3), np.uint8)
    seg[0, 0] = (9, 9, 9)
    inst, sem = ids_from_colors(
        seg, {(9, 9, 9): "room|3"}, InstanceIds(), SemanticTable(["Floor"]), {}
    )
    assert inst[0, 0] == 1 and inst[1, 1] == 0 and sem[0, 0] == 1


def test_ai2thor_missing_is_one_line(house_and_catalogue: tuple[Any, Any]) -> None:
    """Without the ai2thor package, or with it but without a Unity build that can start here
    (the procthor extra installs the package; the build is never there offline), one line."""
    house, cat = house_and_catalogue
    try:
        import ai2thor  # noqa: F401

        expected = "Unity build could not be obtained or started"
    except ImportError:
        expected = "pip install ai2thor"
    try:
        world = open_world("ai2thor", house, cat)
    except MissingDependencyError as exc:
        assert expected in str(exc) and "\n" not in str(exc)
    else:  # a machine with a working AI2-THOR build
        world.close()
        pytest.skip("AI2-THOR starts on this machine")
    with pytest.raises(Exception, match="unknown --sim"):
        open_world("unity", house, cat)
    assert Polygon(house.rooms[0].polygon_xz).area > 0
