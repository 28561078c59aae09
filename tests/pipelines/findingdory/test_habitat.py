"""FindingDory on HSSD scenes (``--scenes habitat:DIR``) through the strict habitat-sim stand-in
(tests/fake_habitat_world.py): a data folder laid out like upstream's ``data/`` (hssd-hab scene
dataset, scene instances, OVMM object configs, the two category CSVs) gives episodes that
follow the pairing rules, whose spots show their objects, that validate (the scene rebuilt in
the simulator, every object replayed at its pose) and that repeat byte for byte; a replayed
object that floats fails validation; without habitat-sim the run stops in one line. The
oracle's days and the tasks run on the same scenes: both validate (a valid frame re-rendered
in the rebuilt final world), record the scenes folder's files, repeat byte for byte, and the
oracle baseline scores HL-SR 1 (LL-SR 1 for a trajectory stopping at a valid frame).

The scene, in habitat's frame: a 10 m x 10 m floor (x, z in [-5, 5]) whose free part is
[-4, 4]^2, two rooms split at x = 0, and six pieces of furniture along the walls (two tables,
two counters, two shelves, each a 0.8 m box with a top mesh receptacle).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import fake_habitat_world
import numpy as np
import pytest
from dfhelpers import assert_same_files

from dataforge.errors import MissingDependencyError
from dataforge.inputs import Inputs
from dataforge.pipelines.findingdory.config import EpisodesConfig
from dataforge.pipelines.findingdory.generate import build_job
from dataforge.pipelines.findingdory.plan import EpisodePlan
from dataforge.run import ExecutionOptions, run_job
from dataforge.store import open_dataset
from dataforge.validation import validate

SCENE = "102344049"
FURNITURE = [  # handle, category row id, centre (x, z) in habitat's frame
    ("table_a_:0000", "table_a", (4.6, -1.5)),
    ("table_a_:0001", "table_a", (-4.6, 1.5)),
    ("counter_b_:0000", "counter_b", (1.5, 4.6)),
    ("counter_b_:0001", "counter_b", (-1.5, -4.6)),
    ("shelf_c_:0000", "shelf_c", (4.6, 2.5)),
    ("shelf_c_:0001", "shelf_c", (-2.5, 4.6)),
]
OBJECTS = {  # template -> (category, half extents, colour)
    "apple_01": ("apple", [0.05, 0.05, 0.05], [230, 30, 30]),
    "mug_01": ("mug", [0.05, 0.06, 0.05], [30, 30, 230]),
    "book_01": ("book", [0.1, 0.03, 0.14], [30, 160, 30]),
    "book_02": ("book", [0.09, 0.02, 0.12], [40, 140, 60]),
    "bowl_01": ("bowl", [0.08, 0.04, 0.08], [200, 200, 40]),
}


def write_data(root: Path) -> Path:
    trimesh = pytest.importorskip("trimesh")
    hab = root / "hssd-hab"
    (hab / "scenes").mkdir(parents=True)
    meshes = hab / "meshes"
    meshes.mkdir()
    v = [[-0.4, 0.4, -0.4], [0.4, 0.4, -0.4], [-0.4, 0.4, 0.4], [0.4, 0.4, 0.4]]
    trimesh.Trimesh(v, [[0, 2, 1], [1, 2, 3]], process=False).export(meshes / "top.glb")
    objects = [
        {
            "handle": h,
            "translation": [x, 0.4, z],
            "aabb": [[-0.4] * 3, [0.4] * 3],
            "color": [120 + 20 * k, 90, 60],
            "user_defined": {"receptacle_mesh_top": {"name": "top", "mesh_filepath": "top.glb"}},
            "file_directory": str(meshes),
        }
        for k, (h, _, (x, z)) in enumerate(FURNITURE)
    ]
    doc = {
        "scenes": {
            SCENE: {
                "floor_y": 0.0,
                "rects": [[-4, -4, 4, 4]],
                "objects": objects,
                "regions": [
                    {
                        "id": "0",
                        "category": "kitchen",
                        "poly_loop": [[-5, -5], [0, -5], [0, 5], [-5, 5]],
                        "floor_height": 0.0,
                        "extrusion_height": 2.5,
                    },
                    {
                        "id": "1",
                        "category": "living room",
                        "poly_loop": [[0, -5], [5, -5], [5, 5], [0, 5]],
                        "floor_height": 0.0,
                        "extrusion_height": 2.5,
                    },
                ],
            }
        }
    }
    (hab / "hssd-hab.scene_dataset_config.json").write_text(json.dumps(doc))
    instance = {"stage_instance": {"template_name": "stages/" + SCENE}, "object_instances": []}
    (hab / "scenes" / f"{SCENE}.scene_instance.json").write_text(json.dumps(instance))
    configs = root / "objects" / "train_val" / "google_scanned" / "configs"
    configs.mkdir(parents=True)
    for name, (_, half, colour) in OBJECTS.items():
        tpl = {"aabb": [[-h for h in half], half], "color": colour}
        (configs / f"{name}.object_config.json").write_text(json.dumps(tpl))
    rows = "".join(f"{name},{cat}\n" for name, (cat, _, _) in OBJECTS.items())
    (root / "objects" / "object_categories.csv").write_text("id,main_category\n" + rows)
    recs = "".join(f"{rid},{rid.split('_')[0]},True\n" for rid in sorted({f[1] for f in FURNITURE}))
    (root / "objects" / "hssd-receptacles.csv").write_text(
        "id,main_category,hasReceptacles\n" + recs + "lamp_d,lamp,False\n"
    )
    return root


@pytest.fixture
def hs(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    fake = fake_habitat_world.module()
    monkeypatch.setitem(sys.modules, "habitat_sim", fake)
    monkeypatch.setitem(sys.modules, "magnum", fake_habitat_world.magnum())
    return fake


def generate(data: Path, out: Path, seed: int = 3) -> None:
    cfg = EpisodesConfig(split="val", episodes=2, rearrangements=(2, 2))
    inputs = Inputs({"scenes": Path("habitat:" + str(data))})
    job = build_job(cfg, seed=seed, fmt="zarr", inputs=inputs)
    run_job(job, out, ExecutionOptions())


@pytest.fixture
def made(hs: ModuleType, tmp_path: Path) -> tuple[Path, Path]:
    data = write_data(tmp_path / "data")
    out = tmp_path / "episodes"
    generate(data, out)
    return data, out


def _plans(out: Path) -> tuple[dict[str, Any], list[EpisodePlan]]:
    with open_dataset(out) as ds:
        (ep,) = list(ds.episodes())
        meta = dict(ep.metadata)
    return meta, [EpisodePlan.from_dict(d) for d in meta["episodes"]]


def test_episodes_follow_the_pairing_rules(made: tuple[Path, Path]) -> None:
    _, out = made
    meta, plans = _plans(out)
    assert meta["origin"]["source"] == "habitat" and meta["origin"]["scene_id"] == SCENE
    recs = {r["id"]: r for r in meta["receptacles"]}
    assert set(recs) == {h for h, _, _ in FURNITURE}  # every piece of furniture has viewpoints
    assert {r["category"] for r in recs.values()} == {"table", "counter", "shelf"}
    assert {r["room"] for r in recs.values()} == {"region_0", "region_1"}
    assert plans, meta["rejected"]
    for plan in plans:
        assert len(plan.rearrangements) == 2
        cats = [r.category for r in plan.rearrangements]
        assert len(set(cats)) == 2 and set(cats) <= {"apple", "mug", "book", "bowl"}
        assert sorted(d.category for d in plan.distractors) == sorted(cats)
        for r in plan.rearrangements:
            assert recs[r.start_receptacle]["category"] != recs[r.goal_receptacle]["category"]
            assert OBJECTS[r.asset][0] == r.category
            for s in r.pick_spots:
                assert math.dist(s.position[::2], r.start_position[::2]) <= 1.0 + 1e-6
            for s in r.place_spots:
                assert math.dist(s.position[::2], r.goal_position[::2]) <= 1.0 + 1e-6
            # resting on the furniture's top (0.8 m) with the object's half height above it
            half = OBJECTS[r.asset][1][1]
            for p in (r.start_position, r.goal_position):
                assert p[1] == pytest.approx(0.8 + half, abs=1e-3)


def test_pick_spots_show_their_objects(made: tuple[Path, Path], hs: ModuleType) -> None:
    from dataforge.pipelines.findingdory.goals import coverage_of, instance_ids_of
    from dataforge.pipelines.findingdory.habitat_scene import open_habitat_world, stretch_agent
    from dataforge.world.scene_sources import hssd_layout

    data, out = made
    _, plans = _plans(out)
    cfg = EpisodesConfig(split="val")
    world = open_habitat_world(hssd_layout(data), SCENE, cfg)
    try:
        # the Stretch is FindingDory's to pass: core's default agent is habitat-sim's
        assert world.agent == stretch_agent(cfg.agent_radius)
        assert (world.agent.height, world.agent.max_climb) == (1.41, 0.01)
        agent_cfg = world.sim.config.agents[0]
        assert (agent_cfg.radius, agent_cfg.height) == (0.25, 1.41)
        plan = plans[0]
        handles = {}
        for obj, rid in plan.spawns():
            res = world.place_pose(obj.asset_id, rid, obj.position, obj.rotation)
            assert res.ok, res
            handles[obj.id] = res.object_id
        r = plan.rearrangements[0]
        s = r.pick_spots[0]
        frame = world.render(
            (s.position[0], s.position[1] + cfg.camera.height_m, s.position[2]),
            s.yaw,
            cfg.camera.tilt_deg,
        )
        cov = coverage_of(frame.instance, instance_ids_of(world.ids, [handles[r.object]]))
        assert cov >= cfg.min_coverage
        assert cov == pytest.approx(s.coverage, rel=0.2)
    finally:
        world.close()


def test_the_dataset_validates_and_repeats(made: tuple[Path, Path], tmp_path: Path) -> None:
    data, out = made
    report = validate(out)
    assert report.ok, report
    again = tmp_path / "again"
    generate(data, again)
    assert_same_files(out, again)


def test_a_floating_object_fails_the_replay(made: tuple[Path, Path]) -> None:
    from dataforge.pipelines.findingdory.checks import check_scene

    data, out = made
    with open_dataset(out) as ds:
        (ep,) = list(ds.episodes())
        arrays, meta = ep.read(), json.loads(json.dumps(ep.metadata))
        cfg = EpisodesConfig.from_dict(dict(ds.manifest.config))
    r = meta["episodes"][0]["rearrangements"][0]
    r["goal_position"][1] += 0.2
    found = [k for k, _ in check_scene(arrays, meta, cfg, data)]
    assert "replay" in found and "spots" not in found


def test_checks_need_the_same_scene_folder(made: tuple[Path, Path]) -> None:
    from dataforge.errors import DatasetError, InputNotFoundError
    from dataforge.pipelines.findingdory.checks import check_scene

    data, out = made
    with open_dataset(out) as ds:
        (ep,) = list(ds.episodes())
        arrays, meta = ep.read(), dict(ep.metadata)
        cfg = EpisodesConfig.from_dict(dict(ds.manifest.config))
    with pytest.raises(InputNotFoundError, match="no HSSD data folder"):
        list(check_scene(arrays, meta, cfg, None))
    instance = data / "hssd-hab" / "scenes" / f"{SCENE}.scene_instance.json"
    instance.write_text(instance.read_text() + " ")
    with pytest.raises(DatasetError, match="another scene instance") as err:
        list(check_scene(arrays, meta, cfg, data))
    assert "\n" not in str(err.value)


def test_without_habitat_sim_the_run_stops_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "habitat_sim", None)
    data = write_data(tmp_path / "data")
    with pytest.raises(MissingDependencyError) as err:
        generate(data, tmp_path / "out")
    assert "habitat-sim" in str(err.value) and "\n" not in str(err.value)


def collect_and_tasks(eps: Path, days: Path, tasks: Path) -> None:
    from dataforge.pipelines.findingdory import collect
    from dataforge.pipelines.findingdory import tasks as tasks_stage
    from dataforge.pipelines.findingdory.config import CollectConfig, TasksConfig

    job = collect.build_job(
        CollectConfig(resolution=(64, 48)), seed=0, fmt="zarr", inputs=Inputs({"episodes": eps})
    )
    run_job(job, days, ExecutionOptions())
    job = tasks_stage.build_job(
        TasksConfig(), seed=0, fmt="zarr", inputs=Inputs({"experience": days})
    )
    run_job(job, tasks, ExecutionOptions())


@pytest.fixture(scope="module")
def stages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fd-habitat")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "habitat_sim", fake_habitat_world.module())
        mp.setitem(sys.modules, "magnum", fake_habitat_world.magnum())
        paths = {k: root / k for k in ("data", "episodes", "days", "tasks")}
        write_data(paths["data"])
        generate(paths["data"], paths["episodes"])
        collect_and_tasks(paths["episodes"], paths["days"], paths["tasks"])
    return paths


def test_the_oracle_lives_a_day_in_the_scene(stages: dict[str, Path], hs: ModuleType) -> None:
    from dataforge.pipelines.findingdory.goals import coverage_of
    from dataforge.pipelines.findingdory.oracle import SNAP

    _, plans = _plans(stages["episodes"])
    assert plans  # a day per plan is checked below
    assert validate(stages["days"]).ok
    with open_dataset(stages["days"]) as ds:
        recorded = ds.manifest.inputs
        assert recorded["locations"]["scenes"] == str(stages["data"].resolve())
        assert any(k.startswith("scenes:hssd-hab/scenes/") for k in recorded["files"])
        assert len(ds.episode_ids) == len(plans)
        for eid, plan in zip(ds.episode_ids, plans, strict=True):
            ep = ds[eid]
            meta = ep.metadata
            assert meta["ended"] == "done" and meta["origin"]["source"] == "habitat"
            assert meta["blind_picks"] == 0
            ids = meta["instances"]
            actions = ep["action"].read()
            inst = ep["instance"].read()
            snaps = np.nonzero(actions == SNAP)[0]
            assert len(snaps) == len(plan.rearrangements)
            for f, r in zip(snaps, plan.rearrangements, strict=True):
                # the frame before the grasp shows the object, and no frame after it until
                # its place does
                assert coverage_of(inst[f - 1], [ids[r.object]]) >= 0.001
            yaw = ep["yaw"].read()
            assert np.all((yaw >= 0) & (yaw < 360)) and 100 < len(yaw) < 4000


def test_tasks_validate_and_the_oracle_scores_one(
    stages: dict[str, Path], hs: ModuleType, tmp_path: Path
) -> None:
    from dataforge.pipelines.findingdory.baselines import run_baseline
    from dataforge.pipelines.findingdory.scoring import run_score

    assert validate(stages["tasks"]).ok
    preds = tmp_path / "oracle.jsonl"
    run_baseline(stages["tasks"], kind="oracle", out=preds)
    with open_dataset(stages["tasks"]) as ds:
        tasks = [t for eid in ds.episode_ids for t in ds[eid].metadata["tasks"]]
        meta = ds[ds.episode_ids[0]].metadata
        poses = ds[ds.episode_ids[0]]["frame_pose"].read()
    assert meta["origin"]["source"] == "habitat" and meta["final_objects"]
    solvable = [t for t in tasks if t["solvable"]]
    assert len(solvable) > 20
    # a trajectory from the day's end straight to a valid frame of a single-goal task, stopping
    task = next(t for t in solvable if not t["multi_goal"] and t["id"].startswith(meta["episode"]))
    f = task["oracle_frames"][0]
    traj = {
        "id": task["id"],
        "positions": [list(poses[-1, :3]), list(poses[f, :3])],
        "yaws": [float(poses[-1, 3]), float(poses[f, 3])],
        "stops": [1],
    }
    (tmp_path / "traj.jsonl").write_text(json.dumps(traj) + "\n")
    got = run_score(stages["tasks"], preds, trajectories=tmp_path / "traj.jsonl")
    block = got["scores"]["solvable"]["overall"]
    assert block["tasks"] == len(solvable)
    assert block["HL-SR"]["mean"] == 1.0 and block["HL-SPL-frames"]["mean"] == pytest.approx(1.0)
    assert 0 < block["HL-SPL"]["mean"] <= 1.0  # over entities: the nearest frame's may be farther
    assert block["LL-SR"] == {"mean": 1.0, "n": 1}
    assert 0 < block["LL-SPL"]["mean"] <= 1.0


def test_days_and_tasks_repeat(stages: dict[str, Path], hs: ModuleType, tmp_path: Path) -> None:
    collect_and_tasks(stages["episodes"], tmp_path / "days", tmp_path / "tasks")
    for name in ("days", "tasks"):
        assert_same_files(stages[name], tmp_path / name)


def test_viewpoints_see_their_furniture(made: tuple[Path, Path]) -> None:
    _, out = made
    with open_dataset(out) as ds:
        (ep,) = list(ds.episodes())
        views = np.asarray(ep["viewpoints"].read(), dtype=np.float64)
        idx = np.asarray(ep["viewpoint_receptacle"].read())
        recs = ep.metadata["receptacles"]
    centres = {h: (x, -z) for h, _, (x, z) in FURNITURE}  # dataforge frame: z mirrored
    assert {r["id"] for r in recs} == set(centres)  # every piece of furniture is checked
    for k, r in enumerate(recs):
        pts = views[idx == k]
        assert len(pts)
        cx, cz = centres[r["id"]]
        # within reach (1 m) of the 0.8 m footprint, on the free floor shrunk by 0.25 m
        d = np.maximum(np.abs(pts[:, 0] - cx), np.abs(pts[:, 2] - cz)) - 0.4
        assert d.max() <= 1.0 + 1e-6
        assert np.all(np.abs(pts[:, [0, 2]]) <= 3.75 + 1e-6)
