"""NavmeshPathfinder, the one wrapper of habitat-sim's PathFinder, through the strict stand-in
(tests/fake_habitat_sim.py; islands and the lattice through tests/fake_habitat_world.py's
PathFinder). The off-mesh rule is habitat-sim's own: a point is off the mesh (inf distances, empty
paths, no island) only when ``snap_point`` finds nothing in Detour's query box (NaN), as
``find_path`` alone; otherwise it stands for its snapped point. A finite ``snap_tolerance=``
(none by default) makes the rule stricter; the tests at 0.5 m pass it explicitly.

The navmesh, in habitat's frame at height 0.2: a 4 m x 4 m room (x, z in [0, 4]) and a 1 m x 1 m
island (x in [10, 11], z in [0, 1])."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import ModuleType

import fake_habitat_sim
import fake_habitat_world
import numpy as np
import pytest

from dataforge.errors import InputNotFoundError, MissingDependencyError, UsageError
from dataforge.nav.oracle import HabitatOracle
from dataforge.nav.pathfinder import SNAP_TOLERANCE_M, NavmeshPathfinder

Y = 0.2
ROOM, ISLAND = [0, 0, 4, 4], [10, 0, 11, 1]
A, B = (1.0, Y, 1.0), (3.0, Y, 3.0)
EDGE = (4.0, Y, 2.0)  # on the room's edge
NEAR = (4.3, Y, 2.0)  # 0.3 m off the mesh: snaps to EDGE
FAR = (4.8, Y, 2.0)  # 0.8 m off: snaps to EDGE too (Detour's query box: 2 m in x and z)
ABOVE = (2.0, Y + 0.8, 2.0)  # 0.8 m above the floor: snaps to (2, Y, 2) (box: 4 m in y)
BOX_EDGE = (5.9, Y, 2.0)  # 1.9 m off: still in the query box, snaps to EDGE
PAST_BOX = (6.1, Y, 2.0)  # 2.1 m off the room, 3.9 m off the island: nothing in the box
ON_ISLAND = (10.5, Y, 0.5)
NOWHERE = (50.0, 0.0, 50.0)  # nothing within Detour's query box
STRICT = 0.5  # a caller's stricter rule (snap_tolerance=), none by default


@pytest.fixture
def hs(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    fake = fake_habitat_sim.module()
    monkeypatch.setitem(sys.modules, "habitat_sim", fake)
    return fake


@pytest.fixture
def navmesh(tmp_path: Path) -> Path:
    path = tmp_path / "scene.navmesh"
    path.write_text(json.dumps({"floor_y": Y, "rects": [ROOM, ISLAND]}))
    return path


@pytest.fixture
def nav(hs: ModuleType, navmesh: Path) -> NavmeshPathfinder:
    return NavmeshPathfinder.load(navmesh)


def raw_geodesic(nav: NavmeshPathfinder, hs: ModuleType, a: object, b: object) -> float:
    """``find_path`` alone on the raw points (habitat-sim's own snap, no tolerance)."""
    path = hs.ShortestPath()
    path.requested_start = np.asarray(a, np.float32)
    path.requested_end = np.asarray(b, np.float32)
    return float(path.geodesic_distance) if nav.pathfinder.find_path(path) else math.inf


def test_points_on_the_mesh_get_the_pathfinders_geodesic(
    nav: NavmeshPathfinder, hs: ModuleType
) -> None:
    d = nav.distance(A, B)
    assert d == pytest.approx(raw_geodesic(nav, hs, A, B))
    assert d == pytest.approx(math.hypot(2, 2), rel=0.05)
    assert nav.distance(A, A) == 0.0
    m = nav.distances([A, B, ON_ISLAND], [B, EDGE])
    assert m.shape == (3, 2)
    assert m[0, 0] == d and m[1, 0] == 0.0
    assert m[0, 1] == pytest.approx(nav.distance(A, EDGE))
    path = nav.shortest_path(A, B)
    assert len(path) >= 2 and all(p.dtype == np.float64 for p in path)
    np.testing.assert_allclose(path[0], A, atol=1e-6)
    np.testing.assert_allclose(path[-1], B, atol=1e-6)


def test_a_point_off_the_mesh_stands_for_its_snap(nav: NavmeshPathfinder) -> None:
    snapped = nav.snap(NEAR)
    assert snapped is not None
    np.testing.assert_allclose(snapped, EDGE, atol=1e-6)
    assert not nav.navigable(NEAR)  # not on the mesh, but it snaps
    assert nav.distance(A, NEAR) == nav.distance(A, EDGE)  # the snap offset is not added
    assert nav.distance(NEAR, A) == nav.distance(EDGE, A)
    path = nav.shortest_path(A, NEAR)
    np.testing.assert_allclose(path[-1], EDGE, atol=1e-6)


def test_the_default_rule_is_find_paths_own_snap(nav: NavmeshPathfinder, hs: ModuleType) -> None:
    """No limit but Detour's query box: 0.8 m (or 1.9 m) beside the room joins as find_path alone
    joins it; 2.1 m beside it (nothing in the box) is off the mesh."""
    assert math.isinf(SNAP_TOLERANCE_M) and math.isinf(nav.snap_tolerance)
    # A (1, 1) to EDGE (4, 2) is a straight line across the empty room: hypot(3, 1)
    d_edge = math.hypot(3.0, 1.0)
    for point in (FAR, BOX_EDGE):
        snapped = nav.snap(point)
        assert snapped is not None
        np.testing.assert_allclose(snapped, EDGE, atol=1e-6)
        d = nav.distance(A, point)
        assert d == pytest.approx(raw_geodesic(nav, hs, A, point))
        assert d == nav.distance(A, EDGE) and d == pytest.approx(d_edge, rel=0.05)
        assert nav.distance(point, A) == pytest.approx(raw_geodesic(nav, hs, point, A))
        path = nav.shortest_path(A, point)
        np.testing.assert_allclose(path[0], A, atol=1e-6)
        np.testing.assert_allclose(path[-1], EDGE, atol=1e-6)
    # 0.8 m above the floor snaps straight down to (2, Y, 2): hypot(1, 1) from A
    down = nav.snap(ABOVE)
    assert down is not None
    np.testing.assert_allclose(down, (2.0, Y, 2.0), atol=1e-6)
    assert nav.distance(A, ABOVE) == nav.distance(A, (2.0, Y, 2.0))
    assert nav.distance(A, ABOVE) == pytest.approx(math.hypot(1.0, 1.0), rel=0.05)
    # past the query box find_path alone finds nothing, and neither does the wrapper
    assert math.isinf(raw_geodesic(nav, hs, A, PAST_BOX))
    assert nav.snap(PAST_BOX) is None
    assert math.isinf(nav.distance(A, PAST_BOX)) and nav.shortest_path(PAST_BOX, A) == []


def test_a_stricter_tolerance_is_the_callers_choice(hs: ModuleType, navmesh: Path) -> None:
    strict = NavmeshPathfinder.load(navmesh, snap_tolerance=STRICT)
    assert strict.snap_tolerance == STRICT
    snapped = strict.snap(NEAR)
    assert snapped is not None
    np.testing.assert_allclose(snapped, EDGE, atol=1e-6)
    assert strict.distance(A, NEAR) == strict.distance(A, EDGE)
    just_in = (4.0 + STRICT - 0.01, Y, 2.0)
    just_out = (4.0 + STRICT + 0.01, Y, 2.0)
    assert math.isfinite(strict.distance(A, just_in))
    assert math.isinf(strict.distance(A, just_out))
    with pytest.raises(UsageError):
        NavmeshPathfinder(strict.pathfinder, habitat_sim=hs, snap_tolerance=-1.0)
    with pytest.raises(UsageError):
        NavmeshPathfinder(strict.pathfinder, habitat_sim=hs, snap_tolerance=math.nan)


@pytest.mark.parametrize("point", [FAR, ABOVE], ids=["beside", "above"])
def test_a_point_over_a_stricter_tolerance_is_off_the_mesh(
    hs: ModuleType, navmesh: Path, point: tuple[float, float, float]
) -> None:
    strict = NavmeshPathfinder.load(navmesh, snap_tolerance=STRICT)
    # find_path alone (and the default rule) snaps it ...
    assert math.isfinite(raw_geodesic(strict, hs, A, point))
    assert NavmeshPathfinder(strict.pathfinder, habitat_sim=hs).snap(point) is not None
    # ... a 0.5 m tolerance does not
    assert strict.snap(point) is None and strict.island_of(point) is None
    assert math.isinf(strict.distance(A, point)) and math.isinf(strict.distance(point, A))
    m = strict.distances([A, point], [point, B])
    assert np.isinf(m).tolist() == [[True, False], [True, True]]
    assert strict.shortest_path(A, point) == [] and strict.shortest_path(point, A) == []


def test_no_snap_and_an_unreachable_target_give_inf_and_no_path(
    nav: NavmeshPathfinder, hs: ModuleType
) -> None:
    assert math.isinf(raw_geodesic(nav, hs, A, NOWHERE))
    assert nav.snap(NOWHERE) is None
    assert math.isinf(nav.distance(A, NOWHERE)) and math.isinf(nav.distance(NOWHERE, A))
    assert nav.shortest_path(NOWHERE, A) == [] and nav.shortest_path(A, NOWHERE) == []
    assert np.isinf(nav.distances([A, NOWHERE], [B])).tolist() == [[False], [True]]
    # the island: both ends snap (they are on the mesh), no path joins them
    assert nav.snap(ON_ISLAND) is not None and nav.navigable(ON_ISLAND)
    assert math.isinf(raw_geodesic(nav, hs, A, ON_ISLAND))
    assert math.isinf(nav.distance(A, ON_ISLAND))
    assert nav.shortest_path(A, ON_ISLAND) == []
    assert nav.distance(ON_ISLAND, (10.9, Y, 0.9)) == pytest.approx(math.hypot(0.4, 0.4), abs=0.1)


def test_the_habitat_oracle_is_the_wrapper(hs: ModuleType, navmesh: Path) -> None:
    oracle = HabitatOracle(navmesh)
    nav = NavmeshPathfinder.load(navmesh)
    points = [A, B, NEAR, FAR, ON_ISLAND, NOWHERE]
    np.testing.assert_array_equal(oracle.distances(points, points), nav.distances(points, points))


def test_navigable_points_and_clear_segments(nav: NavmeshPathfinder) -> None:
    assert nav.navigable(A) and nav.navigable(EDGE)
    assert not nav.navigable(ABOVE)
    assert nav.navigable((2.0, Y + 0.4, 2.0))  # habitat's max_y_delta 0.5
    assert not nav.navigable((2.0, Y + 0.4, 2.0), max_y_delta=0.1)
    assert nav.segment_clear(A, B)
    assert not nav.segment_clear(A, NEAR)  # its end is off the mesh
    assert not nav.segment_clear(A, ON_ISLAND)  # crosses the gap
    lo, hi = nav.bounds()
    np.testing.assert_allclose(lo, [0, Y, 0], atol=1e-6)
    np.testing.assert_allclose(hi, [11, Y, 4], atol=1e-6)


def test_sampling_is_seeded_and_keeps_to_big_islands(hs: ModuleType, navmesh: Path) -> None:
    def draws(seed: int, radius: float) -> list[np.ndarray]:
        nav = NavmeshPathfinder.load(navmesh, seed=seed)
        return [nav.sample(min_island_radius=radius) for _ in range(40)]

    first = draws(3, 1.5)
    assert all(p.dtype == np.float64 and p[0] <= 4 for p in first)  # never the 1 m island
    assert all(np.array_equal(p, q) for p, q in zip(first, draws(3, 1.5), strict=True))
    assert not all(np.array_equal(p, q) for p, q in zip(first, draws(4, 1.5), strict=True))
    nav = NavmeshPathfinder.load(navmesh, seed=3)
    assert all(nav.navigable(nav.sample()) for _ in range(20))
    with pytest.raises(UsageError, match=r"radius 10\.0 m or more in 5 draws"):
        nav.sample(min_island_radius=10.0, tries=5)


def test_islands_and_the_lattice(monkeypatch: pytest.MonkeyPatch, navmesh: Path) -> None:
    monkeypatch.setitem(sys.modules, "habitat_sim", fake_habitat_world.module())
    nav = NavmeshPathfinder.load(navmesh)
    room = nav.largest_island()
    assert room is not None and nav.island_of(A) == room
    island = nav.island_of(ON_ISLAND)
    assert island is not None and island != room
    assert nav.island_of(NEAR) == room and nav.island_of(FAR) == room  # habitat's own snap
    assert nav.island_of(ABOVE) == room
    assert nav.island_of(NOWHERE) is None and nav.island_of(PAST_BOX) is None
    every = nav.lattice(1.0)
    assert len(every) == 25 + 4 and np.all(every[:, 1] == np.float32(Y))
    mine = nav.lattice(1.0, island=room)
    assert len(mine) == 25 and np.all(mine[:, [0, 2]] <= 4)
    assert len(nav.lattice(1.0, island=island)) == 4
    with pytest.raises(UsageError):
        nav.lattice(0.0)


def test_loading_fails_in_one_line(
    hs: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(InputNotFoundError, match="navmesh not found"):
        NavmeshPathfinder.load(tmp_path / "missing.navmesh")
    bad = tmp_path / "bad.navmesh"
    bad.write_text("not a navmesh")
    with pytest.raises(InputNotFoundError, match="could not load"):
        NavmeshPathfinder.load(bad)
    monkeypatch.setitem(sys.modules, "habitat_sim", None)  # import habitat_sim fails
    with pytest.raises(MissingDependencyError, match="conda install habitat-sim"):
        NavmeshPathfinder.load(bad)
    with pytest.raises(MissingDependencyError, match="conda install habitat-sim"):
        HabitatOracle.require()
