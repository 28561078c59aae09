"""FindingDory episode creation: the pairing rules on real houses, pick and place spots that
really show their objects and are in reach by path (never behind a wall), viewpoints near every
receptacle, counted rejections, and one-line errors for impossible requests."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from dfhelpers import SHARED, run_cli
from roomhelpers import standing, two_rooms

from dataforge.errors import UsageError
from dataforge.pipelines.findingdory.config import EpisodesConfig
from dataforge.pipelines.findingdory.creation import (
    Rejection,
    SceneContext,
    draw_episode,
    spots_for,
)
from dataforge.pipelines.findingdory.plan import EpisodePlan
from dataforge.store import open_dataset

HOUSES = SHARED / "data" / "procthor_houses"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fd") / "episodes"
    r = run_cli(
        "findingdory",
        "episodes",
        "--scenes",
        "generate:1",
        "--room-spec",
        "kitchen-living-room",
        "--episodes",
        "3",
        "--rearrangements",
        "3-4",
        "--seed",
        "5",
        "--out",
        str(out),
        "--quiet",
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    return out


def _house(name: str):  # type: ignore[no-untyped-def]
    path = HOUSES / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"needs {path} (../shared/data)")
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house

    cat = load_catalogue()
    return load_house(json.loads(path.read_text()), name=name, catalogue=cat), cat


def test_plans_follow_the_pairing_rules(dataset: Path) -> None:
    with open_dataset(dataset) as ds:
        (ep,) = list(ds.episodes())
        meta = ep.metadata
        recs = {r["id"]: r["category"] for r in meta["receptacles"]}
        plans = [EpisodePlan.from_dict(d) for d in meta["episodes"]]
        assert len(plans) + meta["given_up"] == 3
        for plan in plans:
            assert 3 <= len(plan.rearrangements) <= 4
            cats = [r.category for r in plan.rearrangements]
            assert len(set(cats)) == len(cats)
            assert sorted(d.category for d in plan.distractors) == sorted(cats)
            for r in plan.rearrangements:
                assert recs[r.start_receptacle] != recs[r.goal_receptacle]
                assert r.pick_spots and r.place_spots
                for spot, target in [(s, r.start_position) for s in r.pick_spots] + [
                    (s, r.goal_position) for s in r.place_spots
                ]:
                    assert math.dist(spot.position[::2], target[::2]) <= 1.0 + 1e-6
                    assert spot.coverage >= 0.001
            for d in plan.distractors:
                twin = next(r for r in plan.rearrangements if r.category == d.category)
                assert d.receptacle != twin.start_receptacle and d.object != twin.object


def test_spots_show_their_objects_when_rendered_again(dataset: Path) -> None:
    """Replaying a plan in a world built from the stored house and rendering the head camera
    (at the check size) from a pick spot shows the object on the stored share of pixels."""
    from dataforge.pipelines.findingdory.creation import SceneContext
    from dataforge.pipelines.findingdory.goals import coverage_of, instance_ids_of
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import HouseObject, load_house

    with open_dataset(dataset) as ds:
        (ep,) = list(ds.episodes())
        cfg = EpisodesConfig.from_dict(dict(ds.manifest.config))
        raw = json.loads(ep["house_json"].read().tobytes())
        plan = EpisodePlan.from_dict(ep.metadata["episodes"][0])
    cat = load_catalogue()
    ctx = SceneContext(load_house(raw, name="h", catalogue=cat), cat, cfg)
    world = ctx.fresh_world()
    for r in plan.rearrangements:
        obj = HouseObject(r.object, r.asset, r.category, r.start_position, r.start_rotation)
        assert world.world.place_at(obj, r.start_receptacle).ok
    for d in plan.distractors:
        obj = HouseObject(d.object, d.asset, d.category, d.position, d.rotation)
        assert world.world.place_at(obj, d.receptacle).ok
    world._changed()
    cam = cfg.camera
    r = plan.rearrangements[0]
    spot = r.pick_spots[0]
    eye = (spot.position[0], spot.position[1] + cam.height_m, spot.position[2])
    frame = world.render(eye, spot.yaw, cam.tilt_deg)
    cov = coverage_of(frame.instance, instance_ids_of(world.ids, [r.object]))
    assert cov >= cfg.min_coverage
    assert cov == pytest.approx(spot.coverage, abs=2e-4)
    # turned away, the object is out of view
    frame = world.render(eye, (spot.yaw + 180.0) % 360.0, cam.tilt_deg)
    assert coverage_of(frame.instance, instance_ids_of(world.ids, [r.object])) == 0.0


def test_a_spot_behind_a_wall_is_refused() -> None:
    """Rooms A and B (``two_rooms``: doorway at z 0.3..1.3 in the wall x = 3), a dresser in A
    against that wall and an object on it 0.15 m from the wall. Two viewpoints within reach in
    a straight line: one in front of the dresser (0.55 m) and one in B behind the wall (0.45 m,
    ~8 m by path). The view is stubbed to show the object from anywhere, so only the distance
    rule decides: the spot in B is refused, the one in A kept."""
    from dataforge.simulators import EmbeddedWorld
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house

    cat = load_catalogue()
    dresser = cat.asset("Dresser_205_1")
    x = 3.0 - dresser.size[2] / 2 - 0.01  # against the wall x = 3, turned 90 degrees
    raw = two_rooms("door", [standing(cat, "Dresser|1", dresser.asset_id, x, 4.5, yaw=90.0)])
    world = EmbeddedWorld(load_house(raw, catalogue=cat), cat, agent_radius=0.25)
    obj = np.array([2.85, 0.8, 4.5])
    front, behind = (2.3, world.grid.y, 4.5), (3.3, world.grid.y, 4.5)
    assert world.grid.navigable(front) and world.grid.navigable(behind)
    shown = SimpleNamespace(instance=np.ones((8, 8), dtype=np.int64))
    backend = SimpleNamespace(
        grid=world.grid,
        walls=world.walls,
        ids={"obj": 1},
        render=lambda eye, yaw, tilt: shown,
        center=lambda oid: obj,
    )
    ctx = SimpleNamespace(
        cfg=EpisodesConfig(),
        views_of=lambda rid: np.array([behind, front]),
        distances=world.distances,
    )
    spots = spots_for(ctx, backend, "obj", "Dresser|1")  # type: ignore[arg-type]
    assert [s.position[0] for s in spots] == [pytest.approx(2.3)]


def test_viewpoints_surround_every_receptacle() -> None:
    import shapely

    house, cat = _house("procthor_train_1")
    cfg = EpisodesConfig()
    ctx = SceneContext(house, cat, cfg)
    assert len(ctx.receptacles) >= 10
    lattice = ctx.lattice
    grid = ctx.backend.grid  # type: ignore[attr-defined]
    np.testing.assert_array_equal(lattice, grid.reachable_positions(step=cfg.viewpoint_spacing_m))
    for rec, views in zip(ctx.receptacles, ctx.viewpoints, strict=True):
        d = shapely.distance(shapely.points(views[:, 0], views[:, 2]), rec.footprint)
        assert d.max() <= cfg.reach_m + 1e-9
        # every viewpoint is a lattice point of the largest component
        assert all(np.min(np.abs(lattice - v).max(axis=1)) < 1e-6 for v in views[:20])
    # a navigable point next to a table is within 0.1 m of one of the table's viewpoints
    rec, views = next(
        (r, v)
        for r, v in zip(ctx.receptacles, ctx.viewpoints, strict=True)
        if r.category == "DiningTable"
    )
    p = views[len(views) // 2] + np.array([0.05, 0.0, 0.04])
    if grid.navigable(p):
        assert np.min(np.hypot(views[:, 0] - p[0], views[:, 2] - p[2])) <= 0.1


def test_draws_are_rejected_with_reasons() -> None:
    house, cat = _house("procthor_train_1")
    ctx = SceneContext(house, cat, EpisodesConfig(rearrangements=(6, 6)))
    ctx.types = ctx.types[:5]  # a world that spawns only five categories
    got = draw_episode(ctx, np.random.default_rng(0), "h")
    assert isinstance(got, Rejection) and got.reason == "too_few_categories"
    ctx = SceneContext(house, cat, EpisodesConfig(rearrangements=(2, 2)))
    rng = np.random.default_rng(1)
    plans = [draw_episode(ctx, rng, "h") for _ in range(6)]
    made = [p for p in plans if isinstance(p, EpisodePlan)]
    assert made, [p for p in plans if isinstance(p, Rejection)]
    for p in plans:
        if isinstance(p, Rejection):
            assert p.reason in (
                "pick_unreachable",
                "distractor_unplaced",
                "place_unreachable",
                "no_start_pose",
                "no_end_pose",
            )


def test_impossible_requests_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="rearrangements"):
        EpisodesConfig(rearrangements=(5, 2))
    r = run_cli(
        "findingdory",
        "episodes",
        "--scenes",
        str(tmp_path / "nowhere"),
        "--out",
        str(tmp_path / "o"),
    )
    assert r.returncode != 0
    lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "nowhere" in lines[0]
    r = run_cli("findingdory", "episodes", "--rearrangements", "x", "--out", str(tmp_path / "o"))
    assert r.returncode != 0 and "2-11" in r.stderr


def test_drawing_asks_the_world_only_through_the_protocol() -> None:
    """draw_episode and the scene's queries use WorldBackend's members, and nothing else of
    the world but the embedded grid and walls that goals.reference_point snaps by (a NavGrid
    is snapped by path around the walls; other simulators by their reachable positions)."""
    from dataforge.simulators.protocol import WorldBackend

    house, cat = _house("procthor_train_1")
    ctx = SceneContext(house, cat, EpisodesConfig(rearrangements=(2, 2)))
    used: set[str] = set()

    class Spy:
        def __init__(self, inner: object) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> object:
            used.add(name)
            return getattr(self._inner, name)

    ctx.backend = Spy(ctx.backend)  # type: ignore[assignment]
    plans = [draw_episode(ctx, np.random.default_rng(k), "h") for k in range(3)]
    assert any(isinstance(p, EpisodePlan) for p in plans)
    members = {n for n in dir(WorldBackend) if not n.startswith("_")}
    members |= set(WorldBackend.__annotations__)
    assert {"reset", "spawn", "pick", "place", "render", "world_graph"} <= used
    assert used - members <= {"grid", "walls"}, used - members
