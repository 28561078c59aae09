"""procthor's house generator on the embedded world: the controller adapter answers the
generator's queries truthfully, and a seed gives the same house in any process."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from dfhelpers import needs_house_generator

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.world import load_catalogue, load_house
from dataforge.world.procgen import (
    EmbeddedController,
    collision_box,
    generate_house,
    require_generator,
)
from dataforge.world.validity import check_house, object_problems

needs_generator = needs_house_generator()
SEED, SPEC = 7, "kitchen"


@pytest.fixture(scope="module")
def kitchen() -> dict[str, Any]:
    if needs_generator.args[0]:
        pytest.skip("needs the procthor extra")
    return generate_house(SEED, room_spec=SPEC)


def _digest(house: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(house, sort_keys=True).encode()).hexdigest()


def _surface_receptacle(ctrl: EmbeddedController) -> dict[str, Any]:
    """The top-level receptacle with the largest box footprint among those with a top."""
    objs = ctrl.last_event.metadata["objects"]
    world = ctrl.world
    assert world is not None
    tops = [
        o
        for o in objs
        if o["receptacle"]
        and o["parentReceptacles"] is None
        and any(s.kind == "top" for s in world.surfaces(o["objectId"]))
    ]
    return max(
        tops,
        key=lambda o: (
            o["axisAlignedBoundingBox"]["size"]["x"] * o["axisAlignedBoundingBox"]["size"]["z"]
        ),
    )


@pytest.mark.slow
@needs_generator
def test_generated_house_is_usable_and_follows_the_room_spec(kitchen: dict[str, Any]) -> None:
    cat = load_catalogue()
    house = load_house(kitchen, catalogue=cat)
    assert [r.room_type for r in house.rooms] == ["Kitchen"]
    assert kitchen["metadata"]["roomSpecId"] == SPEC
    check = check_house(house, cat)
    assert check.ok, check.problems
    small = [o for o in house.objects if o.parent_id is not None]
    assert small, "procthor's small-object stage placed nothing"
    assert all(o.asset_id in cat for o in house.objects)


@pytest.mark.slow
@needs_generator
def test_same_seed_same_house_in_another_process(kitchen: dict[str, Any]) -> None:
    """procthor iterates over string sets: the house must not depend on PYTHONHASHSEED."""
    code = (
        "import hashlib, json; from dataforge.world.procgen import generate_house; "
        f"h = generate_house({SEED}, room_spec={SPEC!r}); "
        "print(hashlib.sha256(json.dumps(h, sort_keys=True).encode()).hexdigest())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == _digest(kitchen)
    assert _digest(generate_house(SEED + 1, room_spec=SPEC)) != _digest(kitchen)


@pytest.mark.slow
@needs_generator
def test_spawn_places_on_the_receptacle_until_it_is_full(kitchen: dict[str, Any]) -> None:
    cat = load_catalogue()
    ctrl = EmbeddedController(cat)
    event = ctrl.step(action="CreateHouse", house=kitchen, renderImage=False)
    assert event and len(event.metadata["objects"]) == len(load_house(kitchen).objects)
    rec = _surface_receptacle(ctrl)
    rid = rec["objectId"]
    assert ctrl.world is not None
    heights = [s.y for s in ctrl.world.surfaces(rid)]
    placed, failed = [], None
    for k in range(400):
        oid = f"test|{k}"
        assert ctrl.step(action="SpawnAsset", assetId="Mug_1", generatedId=oid)
        event = ctrl.step(
            action="InitialRandomSpawn", randomSeed=k, objectIds=[oid], receptacleObjectIds=[rid]
        )
        meta = next(o for o in event.metadata["objects"] if o["objectId"] == oid)
        if not event:
            failed = meta
            assert meta["axisAlignedBoundingBox"]["center"]["y"] < 0  # still below the floor
            assert ctrl.step(action="DisableObject", objectId=oid)
            break
        bottom = (
            meta["axisAlignedBoundingBox"]["center"]["y"]
            - meta["axisAlignedBoundingBox"]["size"]["y"] / 2
        )
        assert min(abs(bottom - y) for y in heights) < 1e-6  # on one of its surfaces
        assert meta["parentReceptacles"] == [rid]
        placed.append(oid)
    assert placed and failed is not None, "the receptacle never filled up"
    ids = {o["objectId"] for o in ctrl.last_event.metadata["objects"]}
    assert failed["objectId"] not in ids and set(placed) <= ids
    house = ctrl.world.house()
    assert not [p for p in object_problems(house, cat) if "test|" in p]


@needs_generator
def test_unknown_action_and_asset_fail_without_raising() -> None:
    ctrl = EmbeddedController(load_catalogue())
    event = ctrl.step(action="TeleportFull", x=0, y=0, z=0)
    assert not event and "TeleportFull" in event.metadata["errorMessage"]
    assert not ctrl.step(action="SpawnAsset", assetId="NoSuchAsset_1", generatedId="a")


def test_geometry_is_the_collision_box() -> None:
    cat = load_catalogue()
    ctrl = EmbeddedController(cat)
    ctrl.reset()
    table = cat.assets_of("DiningTable")[0]
    chair = cat.assets_of("Chair")[0]
    for asset, oid in ((table, "t"), (chair, "c")):
        pos = {"x": 1.0, "y": 0.0, "z": 2.0}  # the pivot (the box's bottom centre) on the floor
        assert ctrl.step(
            action="SpawnAsset",
            assetId=asset.asset_id,
            generatedId=oid,
            position=pos,
            rotation={"x": 0, "y": 30, "z": 0},
        )
    geo = {
        oid: ctrl.step(action="GetInSceneAssetGeometry", objectId=oid, triangles=True).metadata[
            "actionReturn"
        ][0]
        for oid in ("t", "c")
    }
    for oid in ("t", "c"):
        verts = np.array([[v["x"], v["y"], v["z"]] for v in geo[oid]["vertices"]])
        tris = np.array(geo[oid]["triangles"]).reshape(-1, 3)
        assert (
            verts.shape == (8, 3) and tris.shape == (12, 3) and set(tris.ravel()) == set(range(8))
        )
        box = collision_box(ctrl._pending[oid], cat)
        assert np.allclose(verts, box.corners())
    ty = [v["y"] for v in geo["t"]["vertices"]]
    assert min(ty) == pytest.approx(table.size[1] - 0.05) and max(ty) == pytest.approx(
        table.size[1]
    )
    cy = [v["y"] for v in geo["c"]["vertices"]]
    assert min(cy) == pytest.approx(0.0, abs=1e-9) and max(cy) == pytest.approx(chair.size[1] / 2)


@needs_generator
def test_physics_step_drops_objects_onto_what_is_below(kitchen: dict[str, Any]) -> None:
    cat = load_catalogue()
    ctrl = EmbeddedController(cat)
    ctrl.step(action="CreateHouse", house=kitchen)
    world = ctrl.world
    rid = _surface_receptacle(ctrl)["objectId"]
    child = next((o for o in world.objects if o.parent_id == rid), None)
    if child is None:
        assert ctrl.step(action="SpawnAsset", assetId="Mug_1", generatedId="m")
        assert ctrl.step(
            action="InitialRandomSpawn", randomSeed=0, objectIds=["m"], receptacleObjectIds=[rid]
        )
        child = world.object("m")
    # it falls back onto the highest surface under it (a child may have been recorded 5 cm high,
    # as ProcTHOR does)
    rest = max(
        s.y
        for s in world.surfaces(rid)
        if s.polygon.contains(__import__("shapely").Point(child.position[0], child.position[2]))
    )
    x, y, z = child.position
    world.move(child.id, (x, y + 1.5, z))
    assert ctrl.step(action="AdvancePhysicsStep", timeStep=0.01)
    assert world.box(child.id).bottom == pytest.approx(rest, abs=1e-6)
    floor_obj = next(o for o in world.objects if o.parent_id is None and o.id != rid)
    fx, fy, fz = floor_obj.position
    world.move(floor_obj.id, (fx, fy + 0.7, fz))
    ctrl.step(action="AdvancePhysicsStep", timeStep=0.01)
    assert world.box(floor_obj.id).bottom >= -1e-9


def test_missing_generator_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataforge.world import procgen

    monkeypatch.setattr(procgen, "_GENERATION_MODULES", ("dataforge_no_such_module",))
    with pytest.raises(MissingDependencyError, match=r"pip install 'dataforge\[procthor\]'") as e:
        require_generator()
    assert "\n" not in str(e.value)


@needs_generator
def test_unknown_room_spec_and_split_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown --room-spec 'castle'"):
        generate_house(0, room_spec="castle")
    with pytest.raises(UsageError, match="unknown --room-spec 'castle'"):
        generate_house(0, room_spec="kitchen,castle")
    with pytest.raises(UsageError, match="names a room spec twice"):
        generate_house(0, room_spec="kitchen,kitchen")
    with pytest.raises(UsageError, match="split"):
        generate_house(0, split="holdout")


@needs_generator
def test_houses_under_the_floor_area_are_replaced() -> None:
    """A house with less floor than asked is another rejected seed: the next seed is tried, and
    when none is left the one-line error says why and what to change."""
    from dataforge.errors import DataforgeError
    from dataforge.world.procgen import generate_usable_house

    made = generate_usable_house(np.random.default_rng(0), name="k", room_spec="kitchen")
    area = load_house(made.raw, name="k").floor_area
    assert 5 < area < 100  # a one-room kitchen
    again = generate_usable_house(
        np.random.default_rng(0), name="k", room_spec="kitchen", min_floor_area=area
    )
    assert again.seed == made.seed  # at the limit (>=) it is kept
    bigger = generate_usable_house(
        np.random.default_rng(0), name="k", room_spec="kitchen", min_floor_area=area + 0.01
    )
    assert bigger.rejected[0]["seed"] == made.seed
    assert "floor area" in bigger.rejected[0]["reason"]
    assert load_house(bigger.raw, name="k").floor_area >= area + 0.01
    with pytest.raises(DataforgeError) as e:
        generate_usable_house(
            np.random.default_rng(0),
            name="k",
            room_spec="kitchen",
            max_attempts=2,
            min_floor_area=1000.0,
        )
    msg = str(e.value)
    assert "\n" not in msg and "floor area" in msg and "< 1000" in msg
    assert "--min-floor-area" in msg


@needs_generator
def test_several_room_specs_draw_one_per_house() -> None:
    """``kitchen,bathroom``: every house is one of the two (procthor records which), and over a
    few seeds both come up."""

    from dataforge.world.procgen import GenerationFailed, room_specs

    assert room_specs(" kitchen, bathroom ") == ("kitchen", "bathroom")
    drawn = []
    for seed in range(12):
        try:
            house = generate_house(seed, room_spec="kitchen,bathroom")
        except GenerationFailed:  # procthor gives up on some seeds: the caller tries the next
            continue
        drawn.append(house["metadata"]["roomSpecId"])
    assert len(drawn) >= 6 and set(drawn) == {"kitchen", "bathroom"}


def test_procthor_failures_become_generation_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process and in the helper alike, procthor's bare exceptions mean "next seed";
    dataforge's own errors keep their meaning."""
    from dataforge.world import procgen

    def gives_up(seed: int, *args: Any) -> dict[str, Any]:
        raise Exception("Failed to generate interior boundary\nfor room_spec=...")

    monkeypatch.setattr(procgen, "generate_house_here", gives_up)
    with pytest.raises(procgen.GenerationFailed) as info:
        procgen.generate_or_fail(3, "train", None)
    assert str(info.value) == "seed 3: Exception: Failed to generate interior boundary"

    def bad_spec(seed: int, *args: Any) -> dict[str, Any]:
        raise UsageError("unknown room spec 'castle'")

    monkeypatch.setattr(procgen, "generate_house_here", bad_spec)
    with pytest.raises(UsageError):
        procgen.generate_or_fail(3, "train", "castle")


def _imported_modules(module: str) -> set[str]:
    """Every module a source file imports, at the top or inside functions."""
    import ast
    import importlib.util

    origin = importlib.util.find_spec(module).origin
    with open(origin, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_procgen_and_its_worker_do_not_import_each_other() -> None:
    """The helper process's program imports the generator; the generator only names it in the
    command line it starts. Either module imports first in a fresh interpreter."""
    assert "dataforge.world.procgen_worker" not in _imported_modules("dataforge.world.procgen")
    assert "dataforge.world.procgen" in _imported_modules("dataforge.world.procgen_worker")
    for first in ("procgen_worker", "procgen"):
        code = f"import dataforge.world.{first}; from dataforge.world.procgen import worker"
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_worker_replies_map_to_the_callers_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper's serve loop and the caller's WorkerProcess agree on the reply protocol."""
    import io

    from dataforge.world import procgen, procgen_worker

    def fake(seed: int, split: str, room_spec: str | None) -> dict[str, Any]:
        if seed == 1:
            raise procgen.GenerationFailed("seed 1: Exception: no floor plan")
        if seed == 2:
            raise UsageError("unknown room spec 'castle'")
        if seed == 3:
            raise MissingDependencyError("needs procthor")
        return {"seed": seed, "split": split}

    monkeypatch.setattr(procgen_worker, "generate_or_fail", fake)
    requests = "".join(json.dumps({"seed": s, "split": "train"}) + "\n" for s in range(4))
    replies = io.StringIO()
    procgen_worker.serve(io.StringIO(requests + "\n"), replies)
    lines = replies.getvalue().splitlines()
    assert [json.loads(line).get("kind") for line in lines] == [None, "failed", "usage", "missing"]

    class Pipe(io.StringIO):
        def __init__(self, lines: list[str]) -> None:
            super().__init__("".join(f"{line}\n" for line in lines))

    stub = procgen.WorkerProcess.__new__(procgen.WorkerProcess)
    stub.proc = SimpleNamespace(stdin=io.StringIO(), stdout=Pipe(lines), poll=lambda: None)
    assert stub.generate(0, "train", None) == {"seed": 0, "split": "train"}
    for error in (procgen.GenerationFailed, UsageError, MissingDependencyError):
        with pytest.raises(error):
            stub.generate(0, "train", None)


def test_step_raises_for_failure_only_when_asked() -> None:
    """ai2thor's Controller.step raises RuntimeError(errorMessage) for a failed action when
    raise_for_failure=True (procthor passes it to OpenObject), and returns the event otherwise."""
    ctrl = EmbeddedController(load_catalogue())
    ctrl.reset()
    bad = {"assetId": "NoSuchAsset_1", "generatedId": "a"}
    assert not ctrl.step(action="SpawnAsset", **bad)
    with pytest.raises(RuntimeError, match="unknown assetId NoSuchAsset_1"):
        ctrl.step(action="SpawnAsset", raise_for_failure=True, **bad)
    with pytest.raises(RuntimeError, match="TeleportFull"):
        ctrl.step({"action": "TeleportFull", "x": 0}, raise_for_failure=True)
    assert ctrl.step(action="SpawnAsset", assetId="Mug_1", generatedId="m", raise_for_failure=True)
    pan = next(a for a in load_catalogue().asset_ids() if a.startswith("Pan_"))
    assert ctrl.step(action="SpawnAsset", assetId=pan, generatedId="p")
    with pytest.raises(RuntimeError, match="p cannot be opened"):
        ctrl.step(
            action="OpenObject",
            objectId="p",
            openness=1.0,
            forceAction=True,
            raise_for_failure=True,
            renderImage=False,
        )


def test_spawn_asset_puts_the_pivot_at_position() -> None:
    """AI2-THOR's SpawnAsset places the asset's pivot at position; here the pivot is the bottom
    centre of the asset's box, so the box rests on position, turned with the asset."""
    from world.thor_actions import check_step

    cat = load_catalogue()
    ctrl = EmbeddedController(cat)
    ctrl.reset()
    size = cat.asset("Mug_1").size
    for oid, rotation, up in (
        ("upright", {"x": 0, "y": 90, "z": 0}, (0.0, size[1] / 2, 0.0)),
        ("tipped", {"x": 90, "y": 0, "z": 0}, (0.0, 0.0, size[1] / 2)),  # up turned to +z
    ):
        args = {
            "assetId": "Mug_1",
            "generatedId": oid,
            "rotation": rotation,
            "position": {"x": 1.0, "y": 0.5, "z": 2.0},
        }
        check_step("SpawnAsset", args)  # AI2-THOR 5.0.0's signature
        event = ctrl.step(action="SpawnAsset", **args)
        meta = next(o for o in event.metadata["objects"] if o["objectId"] == oid)
        centre = meta["axisAlignedBoundingBox"]["center"]
        assert [centre[k] for k in "xyz"] == pytest.approx(np.add((1.0, 0.5, 2.0), up), abs=1e-9)
    upright = next(o for o in event.metadata["objects"] if o["objectId"] == "upright")
    box = upright["axisAlignedBoundingBox"]
    assert box["center"]["y"] - box["size"]["y"] / 2 == pytest.approx(0.5, abs=1e-9)
