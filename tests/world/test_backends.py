"""The world interface: the embedded backend on a real house, and the AI2-THOR translation
layer against a stand-in controller that checks every call against AI2-THOR 5.0.0's actions
(``world/thor_actions.py``; the Unity build cannot run here)."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from dfhelpers import SHARED
from renderhelpers import needs_egl
from shapely.geometry import Polygon
from world.thor_actions import check_step, house_problems

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.simulators import EmbeddedWorld, ThorWorld, open_world
from dataforge.simulators.thor import (
    SHORTEST_PATH_ALLOWED_ERROR_M,
    THOR_HOUSE_SCHEMA,
    ids_from_colors,
    path_length,
    thor_camera_args,
    thor_house,
)
from dataforge.world import load_catalogue, load_house
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


@needs_house
def test_embedded_pick_place_reset_and_lattice(house_and_catalogue: tuple[Any, Any]) -> None:
    """WorldBackend's pick then place (the same object moved by the search), reset() back to
    the house as opened, and reachable_positions on a lattice of the step asked."""
    house, cat = house_and_catalogue
    w = EmbeddedWorld(house, cat, width=32, height=24)
    tables = [o for o in house.objects if o.object_type in ("DiningTable", "CounterTop")]
    res = w.spawn("Apple_1", tables[0].id, np.random.default_rng(0))
    assert res.ok
    oid = res.object_id
    w.pick(oid)
    assert not w.has(oid)
    with pytest.raises(UsageError, match="no object"):  # out of the world, kept by the backend
        w.world.object(oid)
    again = w.place(oid, tables[-1].id, np.random.default_rng(3))
    assert again.ok and again.object_id == oid and w.has(oid)
    assert w.world.object(oid).asset_id == "Apple_1"
    assert w.position(oid) == pytest.approx(again.position)
    w.reset()
    assert not w.has(oid) and len(w.world.objects) == len(house.objects)
    half = w.reachable_positions(step=0.5)
    assert len(half) and np.allclose(np.round(half[:, [0, 2]] / 0.5), half[:, [0, 2]] / 0.5)
    quarter = w.reachable_positions()
    assert len(quarter) > 2 * len(half)
    w.close()


# Where a stand-in asset's box centre sits relative to its pivot (asset frame, metres): AI2-THOR
# moves pivots, dataforge gives box centres. House objects built by CreateHouse have theirs at
# the centre (positionBoundingBoxCenter).
PIVOT_TO_CENTRE = {"Apple_1": (0.03, 0.04, -0.02)}


def _yaw_rotate(v: Any, yaw_deg: float) -> np.ndarray:
    """Unity: a positive yaw turns +z towards +x (clockwise seen from above)."""
    t = math.radians(yaw_deg)
    x, y, z = (float(c) for c in v)
    return np.array([x * math.cos(t) + z * math.sin(t), y, -x * math.sin(t) + z * math.cos(t)])


def _vec(d: Mapping[str, float]) -> np.ndarray:
    return np.array([d["x"], d["y"], d["z"]], dtype=np.float64)


class FakeController:
    """A stand-in for ai2thor 5.0.0's ``Controller`` in its ``Procedural`` scene: every call is
    checked against AI2-THOR's action table (a wrong name or type raises ``ValueError``, as the
    real ``step`` does); objects have pivots (``position``) apart from their box centres."""

    def __init__(self, w: int = 4, h: int = 3, create_house_error: str | None = None) -> None:
        self.steps: list[dict[str, Any]] = []
        self.w, self.h = w, h
        self.create_house_error = create_house_error
        self.objects: dict[str, dict[str, Any]] = {}  # id -> pivot, yaw, offset, type
        self.stopped = False
        self.cameras = 0  # third-party cameras (kept over CreateHouse, as AI2-THOR keeps them)
        self.last_event: Any = None

    def stop(self) -> None:
        self.stopped = True

    def reset(self, scene: str | None = None, **kw: Any) -> None:
        """ai2thor's ``Controller.reset``: re-initialise the scene in the running process."""
        self.steps.append({"action": "reset", "scene": scene, **kw})

    def _meta(self, oid: str) -> dict[str, Any]:
        o = self.objects[oid]
        centre = o["pivot"] + _yaw_rotate(o["offset"], o["yaw"])
        xyz = dict(zip("xyz", (float(c) for c in centre), strict=True))
        return {
            "objectId": oid,
            "objectType": o["type"],
            "position": dict(zip("xyz", (float(c) for c in o["pivot"]), strict=True)),
            "rotation": {"x": 0.0, "y": o["yaw"], "z": 0.0},
            "axisAlignedBoundingBox": {"center": xyz, "size": {"x": 0.1, "y": 0.1, "z": 0.1}},
        }

    def centre(self, oid: str) -> np.ndarray:
        return _vec(self._meta(oid)["axisAlignedBoundingBox"]["center"])

    def _add(self, oid: str, asset_id: str, pivot: np.ndarray, rotation: Mapping[str, float]):
        assert abs(rotation["x"]) < 1e-9 and abs(rotation["z"]) < 1e-9, "yaw only here"
        offset = np.array(PIVOT_TO_CENTRE.get(asset_id, (0.0, 0.0, 0.0)))
        otype = asset_id.split("_")[0]
        self.objects[oid] = {
            "pivot": pivot,
            "yaw": float(rotation["y"]),
            "offset": offset,
            "type": otype,
        }

    def step(self, action: str, **kw: Any) -> Any:
        raise_for_failure = kw.pop("raise_for_failure", False)
        check_step(action, kw)
        self.steps.append({"action": action, **kw})
        meta: dict[str, Any] = {"lastActionSuccess": True, "errorMessage": ""}
        ev = SimpleNamespace(metadata=meta)
        if action == "CreateHouse":
            if self.create_house_error is not None:
                meta.update(lastActionSuccess=False, errorMessage=self.create_house_error)
            else:
                for obj in kw["house"]["objects"]:  # centres at their position
                    self._add(obj["id"], obj["assetId"], _vec(obj["position"]), obj["rotation"])
                    self.objects[obj["id"]]["offset"] = np.zeros(3)
        elif action in ("AddThirdPartyCamera", "UpdateThirdPartyCamera"):
            seg = np.zeros((self.h, self.w, 3), np.uint8)
            seg[:, :2] = (10, 20, 30)
            seg[:, 2:] = (1, 2, 3)
            ev.third_party_instance_segmentation_frames = [seg]
            ev.third_party_camera_frames = [np.full((self.h, self.w, 3), 7, np.uint8)]
            ev.third_party_depth_frames = [np.full((self.h, self.w), 1.5, np.float32)]
            ev.color_to_object_id = {(10, 20, 30): "Apple|1", (1, 2, 3): "wall|2|0.00|0.00"}
        elif action == "GetReachablePositions":
            meta["actionReturn"] = [{"x": 0.25, "y": 0.9, "z": 0.5}, {"x": 0.5, "y": 0.9, "z": 0.5}]
        elif action == "GetShortestPathToPoint":
            a, b = kw["position"], kw["target"]
            if b["x"] > 50:  # no path: AI2-THOR fails the action
                meta.update(lastActionSuccess=False, errorMessage="Could not find path")
            else:
                corners = [a, {"x": b["x"], "y": a["y"], "z": a["z"]}, b]
                meta["actionReturn"] = {"corners": corners, "status": "PathComplete"}
        elif action == "SpawnAsset":  # the pivot goes to position
            self._add(kw["generatedId"], kw["assetId"], _vec(kw["position"]), kw["rotation"])
        elif action == "TeleportObject":
            self.objects[kw["objectId"]].update(
                pivot=_vec(kw["position"]), yaw=float(kw["rotation"]["y"])
            )
        elif action == "PlaceObjectAtPoint":  # pivot at position's x, z; y: the surface's
            o = self.objects[kw["objectId"]]
            o["yaw"] = float(kw["rotation"]["y"])
            p = _vec(kw["position"])
            o["pivot"] = np.array([p[0], 0.8, p[2]])
        elif action == "RemoveFromScene":
            self.objects.pop(kw["objectId"], None)
        if action == "AddThirdPartyCamera":
            self.cameras += 1
        meta["thirdPartyCameras"] = [{"thirdPartyCameraId": k} for k in range(self.cameras)]
        meta["objects"] = [self._meta(oid) for oid in self.objects]
        if action in ("AddThirdPartyCamera", "UpdateThirdPartyCamera"):
            meta["objects"].append({"objectId": "Apple|1", "objectType": "Apple"})
        if raise_for_failure and not meta["lastActionSuccess"]:
            raise RuntimeError(meta["errorMessage"] or f"{action} failed")
        self.last_event = ev
        return ev


def test_thor_translation_layer(house_and_catalogue: tuple[Any, Any]) -> None:
    house, cat = house_and_catalogue
    fake = FakeController()
    w = ThorWorld(house, cat, controller=fake, width=4, height=3)
    create = fake.steps[0]
    assert create["action"] == "CreateHouse" and not house_problems(create["house"])
    f = w.render((1.0, 1.5, 2.0), yaw=90.0, horizon=30.0)
    first = fake.steps[1]
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
    with pytest.raises(UsageError, match=r"0\.25 m grid"):
        w.reachable_positions(step=0.5)  # AI2-THOR's grid is fixed when the controller starts
    with pytest.raises(UsageError, match="open the house again"):
        w.reset()
    fridge = next(o for o in house.objects if o.object_type == "Fridge")
    res = w.spawn("Apple_1", fridge.id, np.random.default_rng(0))
    assert res.ok
    actions = [s["action"] for s in fake.steps[-3:]]
    assert actions == ["OpenObject", "SpawnAsset", "TeleportObject"]
    spawn = fake.steps[-2]
    assert spawn["generatedId"] == res.object_id and spawn["assetId"] == "Apple_1"
    assert spawn["position"] == {"x": res.position[0], "y": res.position[1], "z": res.position[2]}
    # SpawnAsset put the pivot there; the teleport brought the box centre to the placement's
    np.testing.assert_allclose(fake.centre(res.object_id), res.position, atol=1e-9)
    w.remove(fridge.id)
    removed = [s["objectId"] for s in fake.steps if s["action"] == "RemoveFromScene"]
    assert removed[0] == fridge.id and res.object_id in removed
    with pytest.raises(UsageError, match="not in the house"):  # AI2-THOR destroyed it
        w.place(res.object_id, fridge.id, np.random.default_rng(0))


def test_thor_distances_send_the_5_0_0_signature(house_and_catalogue: tuple[Any, Any]) -> None:
    house, cat = house_and_catalogue
    fake = FakeController()
    w = ThorWorld(house, cat, controller=fake)
    d = w.distances([(0, 0.9, 0), (1, 0.9, 1)], [(3, 0.9, 4), (99, 0.9, 0)])
    assert d[0, 0] == pytest.approx(7.0) and d[1, 0] == pytest.approx(5.0)
    assert np.isinf(d[:, 1]).all()  # a failed GetShortestPathToPoint is "no path"
    call = next(s for s in fake.steps if s["action"] == "GetShortestPathToPoint")
    assert call["position"] == {"x": 0.0, "y": 0.9, "z": 0.0}
    assert call["target"] == {"x": 3.0, "y": 0.9, "z": 4.0}
    assert call["allowedError"] == SHORTEST_PATH_ALLOWED_ERROR_M > 1e-4


def test_thor_place_moves_the_pivot_so_the_box_centre_lands(
    house_and_catalogue: tuple[Any, Any],
) -> None:
    house, cat = house_and_catalogue
    fake = FakeController()
    w = ThorWorld(house, cat, controller=fake)
    table = next(o for o in house.objects if o.object_type == "DiningTable")
    res = w.spawn("Apple_1", table.id, np.random.default_rng(1))
    assert res.ok
    np.testing.assert_allclose(fake.centre(res.object_id), res.position, atol=1e-9)
    counter = next(
        o
        for o in house.objects
        if o.object_type in ("CounterTop", "Dresser", "Desk") and o.id != table.id
    )
    for seed in range(20):
        moved = w.place(res.object_id, counter.id, np.random.default_rng(seed))
        if moved.ok and moved.rotation[1] != res.rotation[1]:
            break
    assert moved.ok
    call = fake.steps[-1]
    assert call["action"] == "PlaceObjectAtPoint" and call["objectId"] == res.object_id
    assert call["rotation"] == {
        "x": moved.rotation[0],
        "y": moved.rotation[1],
        "z": moved.rotation[2],
    }
    assert call["position"]["y"] == pytest.approx(moved.position[1])  # the ray starts there
    centre = fake.centre(res.object_id)
    np.testing.assert_allclose(centre[[0, 2]], np.asarray(moved.position)[[0, 2]], atol=1e-9)


def test_thor_create_house_failure_is_one_line(house_and_catalogue: tuple[Any, Any]) -> None:
    house, cat = house_and_catalogue
    message = (
        "Exception creating house.\n'Invalid materials: 'NoSuchMat'.'\n"
        "  at Thor.Procedural.ProceduralTools.CreateHouse"
    )
    fake = FakeController(create_house_error=message)
    with pytest.raises(UsageError, match="CreateHouse failed") as e:
        ThorWorld(house, cat, controller=fake)
    text = str(e.value)
    assert "\n" not in text and "Invalid materials: 'NoSuchMat'" in text
    assert "Unity build" not in text and not fake.stopped  # not ThorWorld's to stop


class RejectingController(FakeController):
    """Unity could not bind the house (errorCode InvalidArgument): Controller.step raises."""

    def step(self, action: str, **kw: Any) -> Any:
        if action == "CreateHouse":
            raise ValueError(
                "action: CreateHouse has an invalid argument: house (=={...}).\n"
                "Cannot convert to: ProceduralHouse"
            )
        return super().step(action, **kw)


def test_thor_create_house_value_error_is_one_line(house_and_catalogue: tuple[Any, Any]) -> None:
    house, cat = house_and_catalogue
    with pytest.raises(UsageError, match="CreateHouse failed: action: CreateHouse has an") as e:
        ThorWorld(house, cat, controller=RejectingController())
    assert "\n" not in str(e.value) and "Cannot convert to: ProceduralHouse" in str(e.value)


def test_the_stand_in_rejects_what_ai2thor_5_rejects() -> None:
    """The action table fails calls the way AI2-THOR 5.0.0 does (so these tests can fail)."""
    good = {"position": {"x": 0, "y": 0.9, "z": 0}, "target": {"x": 1, "y": 0.9, "z": 1}}
    check_step("GetShortestPathToPoint", {**good, "allowedError": 0.1, "renderImage": False})
    check_step("GetShortestPathToPoint", {"target": good["target"]})  # the other overload
    with pytest.raises(ValueError, match="invalid argument"):  # the pre-5.0 call
        check_step(
            "GetShortestPathToPoint", {"position": good["position"], "x": 1, "y": 0.9, "z": 1}
        )
    with pytest.raises(ValueError, match="missing"):
        check_step("SpawnAsset", {"assetId": "Apple_1"})
    with pytest.raises(ValueError, match="invalid argument"):
        check_step("PlaceObjectAtPoint", {"objectId": "a", "position": {"x": 0, "y": 0}})
    with pytest.raises(ValueError, match="invalid argument"):
        check_step("OpenObject", {"objectId": "a", "openness": "1"})
    with pytest.raises(ValueError, match="Invalid action"):
        check_step("SpawnObject", {})
    check_step(
        "PlaceObjectAtPoint",
        {"objectId": "a", "position": good["target"], "rotation": {"x": 0, "y": 90, "z": 0}},
    )
    check_step("UpdateThirdPartyCamera", {"thirdPartyCameraId": 0, "position": {"y": 1.0}})
    if HOUSE.is_file():  # a schema-0.0.1 house as procthor writes it is not a ProceduralHouse
        raw = json.loads(HOUSE.read_text())
        with pytest.raises(ValueError, match=r"is not a MaterialProperties|schema"):
            check_step("CreateHouse", {"house": raw})


# -- the house upgrade, on the real example houses ----------------------------------------

EXAMPLES = ("house_746.json", "house_3703.json", "procthor_train_1.json")
MATERIAL_KEYS = ("ceilingMaterial", "floorMaterial", "material")


def _leaves(data: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], Any]:
    if isinstance(data, dict):
        out: dict[tuple[Any, ...], Any] = {}
        for k, v in data.items():
            out.update(_leaves(v, (*path, k)))
        return out or {path: data}
    if isinstance(data, list):
        out = {}
        for i, v in enumerate(data):
            out.update(_leaves(v, (*path, i)))
        return out or {path: data}
    return {path: data}


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _example(name: str) -> dict[str, Any]:
    path = SHARED / "data" / "procthor_houses" / name
    if not path.is_file():
        pytest.skip("needs ../shared/data/procthor_houses")
    return json.loads(path.read_text())


def test_thor_house_upgrades_schema_0_0_1(house_and_catalogue: tuple[Any, Any]) -> None:
    _, cat = house_and_catalogue
    raw = _example("house_746.json")
    assert raw["metadata"]["schema"] == "0.0.1" and house_problems(raw)
    before = copy.deepcopy(raw)
    up = thor_house(raw, cat)
    assert raw == before  # pure
    assert house_problems(up) == [] and up["metadata"]["schema"] == THOR_HOUSE_SCHEMA
    changed = 0
    for path, value in _leaves(raw).items():
        now = _at(up, path)
        if path[-1] in MATERIAL_KEYS and isinstance(value, str):  # name -> {"name": name, ...}
            assert isinstance(now, dict) and now["name"] == value
            changed += 1
        elif path != ("metadata", "schema"):
            assert now == value, path  # nothing else lost or changed
    n_walls, n_rooms = len(raw["walls"]), len(raw["rooms"])
    assert changed == n_walls + n_rooms + 1  # every wall, floor and the ceiling
    for wall, new in zip(raw["walls"], up["walls"], strict=True):
        assert new["material"].get("color") == wall.get("color")
    params = up["proceduralParameters"]
    assert params["ceilingMaterial"]["color"] == params["ceilingColor"]
    for hole in up["doors"] + up["windows"]:
        assert hole["holePolygon"] == [hole["boundingBox"]["min"], hole["boundingBox"]["max"]]
    agent = raw["metadata"]["agent"]
    assert up["metadata"]["agentPoses"]["default"] == agent
    assert "standing" not in up["metadata"]["agentPoses"]["locobot"]
    again = load_house(up, catalogue=cat)  # dataforge reads it as before
    assert [o.id for o in again.objects] == [o.id for o in load_house(raw, catalogue=cat).objects]


@pytest.mark.parametrize("name", EXAMPLES[1:])
def test_thor_house_keeps_schema_1_0_0_and_matches_procthor_10k(
    name: str, house_and_catalogue: tuple[Any, Any]
) -> None:
    """ProcTHOR-10k's houses are schema 1.0.0 already; turned back into 0.0.1 holes (the
    boundingBox and assetOffset procthor writes), the upgrade gives their assetPosition back."""
    _, cat = house_and_catalogue
    house = _example(name)
    assert thor_house(house, cat) == house and house_problems(house) == []
    old = copy.deepcopy(house)
    old["metadata"]["schema"] = "0.0.1"
    for hole in old["doors"] + old["windows"]:
        lo, hi = hole.pop("holePolygon")
        hole.pop("assetPosition")
        info = cat.asset(hole["assetId"])
        wall_hole = info.hole or cat.asset(hole["assetId"].replace("Doorframe", "Doorway")).hole
        hole["boundingBox"] = {"min": lo, "max": hi}
        hole["assetOffset"] = dict(zip("xyz", wall_hole.offset, strict=True))
    up = thor_house(old, cat)
    for a, b in zip(up["doors"] + up["windows"], house["doors"] + house["windows"], strict=True):
        assert a["holePolygon"] == b["holePolygon"]
        for k in "xyz":
            assert a["assetPosition"][k] == pytest.approx(b["assetPosition"][k], abs=1e-9)
    assert house_problems(up) == []


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


def test_world_session_reuses_one_controller_and_soft_resets_every_five_houses(
    house_and_catalogue: tuple[Any, Any],
) -> None:
    from dataforge.simulators.session import WorldSession

    house, cat = house_and_catalogue
    fake = FakeController()
    session = WorldSession("ai2thor", cat, width=4, height=3, controller=fake, reset_every=5)
    for _ in range(11):
        for _ in range(2):  # two sequences per house, each from the house's initial state
            world = session.open(house)
            world.render((1.0, 1.5, 2.0), yaw=0.0)
            world.close()  # leaves the shared controller running
            assert not fake.stopped
        session.house_done()
    actions = [s["action"] for s in fake.steps]
    assert actions.count("CreateHouse") == 22
    assert actions.count("AddThirdPartyCamera") == 1 and fake.cameras == 1  # one camera, moved
    assert [s["scene"] for s in fake.steps if s["action"] == "reset"] == ["Procedural"] * 2
    assert session.resets == 2 and actions[: actions.index("reset")].count("CreateHouse") == 10
    session.close()
    assert fake.stopped


def test_world_session_embedded_makes_a_fresh_world_per_open(
    house_and_catalogue: tuple[Any, Any],
) -> None:
    from dataforge.simulators import EmbeddedWorld
    from dataforge.simulators.session import WorldSession

    house, cat = house_and_catalogue
    session = WorldSession("embedded", cat, width=8, height=6)
    a, b = session.open(house), session.open(house)
    assert isinstance(a, EmbeddedWorld) and a is not b and a.world is not b.world
    for _ in range(5):
        session.house_done()
    assert session.resets == 0  # nothing builds up in the embedded world
