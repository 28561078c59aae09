"""NavGrid geodesics on synthetic layouts and on real ProcTHOR houses."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dfhelpers import SHARED
from shapely.geometry import LineString, Point, Polygon, box

from dataforge.nav.grid import NavGrid

R = 0.2


def two_rooms(door: bool) -> NavGrid:
    """Rooms [0,4]x[0,4] and [4,8]x[0,4]; the shared wall x=4 has a door z in [1.5, 2.5]."""
    floor = box(0, 0, 8, 4)
    walls = [LineString([(4, 0), (4, 1.5)]), LineString([(4, 2.5), (4, 4)])]
    if not door:
        walls = [LineString([(4, 0), (4, 4)])]
    return NavGrid.build(floor, walls, agent_radius=R, cell=0.05)


def test_open_square_geodesic_is_euclidean() -> None:
    g = NavGrid.build(box(0, 0, 10, 10), [], agent_radius=R, cell=0.05)
    rng = np.random.default_rng(0)
    pts = rng.uniform(1, 9, size=(30, 3))
    d = g.distances(pts[:10], pts[10:])
    e = np.linalg.norm((pts[:10, None] - pts[None, 10:])[..., [0, 2]], axis=-1)
    assert np.all(d >= e - 0.1)  # the target is read at its cell: within one cell diagonal
    assert np.all(np.abs(d - e) <= 0.1 + 0.02 * e)  # first-order FMM: ~2% on diagonals


def test_door_gives_the_two_segment_length_and_no_door_is_unreachable() -> None:
    g = two_rooms(door=True)
    a, b = (1.0, 0.0, 2.0), (7.0, 0.0, 2.3)
    # Through the door (centre line z = 2): the grown door jamb at (4, 1.5 + R) is not in
    # the way of this straight line, so the geodesic is the straight line itself.
    straight = math.dist((1, 2), (7, 2.3))
    via = LineString([(1, 2), (7, 2.3)])
    assert via.intersection(LineString([(4, 1.5 + R), (4, 2.5 - R)])).geom_type == "Point"
    assert g.distance(a, b) == pytest.approx(straight, abs=0.1)
    # Around the jamb: from deep in a corner the path must bend at the grown door edge.
    c, d = (1.0, 0.0, 0.5), (7.0, 0.0, 0.5)
    corner = (4.0, 1.5 + R)
    bend = math.dist((1, 0.5), corner) + math.dist(corner, (7, 0.5))
    assert g.distance(c, d) == pytest.approx(bend, rel=0.03)
    assert g.distance(c, d) > math.dist((1, 0.5), (7, 0.5)) + 0.5
    closed = two_rooms(door=False)
    assert math.isinf(closed.distance(a, b))
    labels = closed.components()
    assert labels[closed.cell_of(a)] != labels[closed.cell_of(b)]


def test_paths_avoid_furniture_and_walls() -> None:
    table = box(3, 1, 5, 3)
    g = NavGrid.build(box(0, 0, 8, 4), [table], agent_radius=R, cell=0.05)
    a, b = (1.0, 0.0, 2.0), (7.0, 0.0, 2.0)
    path = g.shortest_path(a, b)
    assert len(path) >= 3
    grown = table.buffer(R - 0.01)
    for p, q in itertools.pairwise(path):
        seg = LineString([(p[0], p[2]), (q[0], q[2])])
        assert not seg.intersects(grown)
        assert g.segment_clear(p, q)
    length = sum(math.dist(p[[0, 2]], q[[0, 2]]) for p, q in itertools.pairwise(path))
    assert length >= 6.0 and length == pytest.approx(g.distance(a, b), rel=0.05)
    assert math.dist(path[0][[0, 2]], (1, 2)) < 0.05 and math.dist(path[-1][[0, 2]], (7, 2)) < 0.05


def test_reachable_positions_lie_on_the_lattice_and_off_furniture() -> None:
    table = box(3, 1, 5, 3)
    g = NavGrid.build(box(0, 0, 8, 4), [table], agent_radius=R, cell=0.05)
    pts = g.reachable_positions(step=0.25)
    assert len(pts) > 200
    assert np.allclose(np.round(pts[:, [0, 2]] / 0.25) * 0.25, pts[:, [0, 2]])
    assert all(g.is_navigable(p) for p in pts)
    assert not any(table.buffer(R - 0.01).contains(Point(p[0], p[2])) for p in pts)
    walls = two_rooms(door=False)
    left = walls.reachable_positions(start=(1, 0, 1))
    assert len(left) and np.all(left[:, 0] < 4)


def test_distances_matrix_shape_and_off_grid_points() -> None:
    g = two_rooms(door=True)
    d = g.distances([(1, 0, 1), (50, 0, 50)], [(2, 0, 2), (7, 0, 3), (-9, 0, 0)])
    assert d.shape == (2, 3)
    assert np.isfinite(d[0, :2]).all() and np.isinf(d[0, 2]) and np.isinf(d[1]).all()
    assert g.distance((1, 0, 1), (1, 0, 1)) == 0.0


HOUSES = SHARED / "data" / "procthor_houses"


@pytest.mark.skipif(not (HOUSES / "house_746.json").is_file(), reason="needs shared houses")
@pytest.mark.parametrize("name", ["house_746.json", "procthor_train_1.json"])
def test_house_paths_never_cross_walls_or_furniture(name: str) -> None:
    from dataforge.world import load_catalogue, load_house
    from dataforge.world.navigation import house_nav_grid, object_obstacles, wall_obstacles

    cat = load_catalogue()
    house = load_house(HOUSES / name, catalogue=cat)
    g = house_nav_grid(house, cat)
    pts = g.reachable_positions()
    walls = wall_obstacles(house)
    furniture = [fp.buffer(-0.01) for fp in object_obstacles(house, cat)]
    rng = np.random.default_rng(0)
    for _ in range(15):
        a, b = pts[rng.integers(len(pts))], pts[rng.integers(len(pts))]
        path = g.shortest_path(a, b)
        assert path, (a, b)
        d = g.distance(a, b)
        assert d >= math.dist(a[[0, 2]], b[[0, 2]]) - 0.08
        for p, q in itertools.pairwise(path):
            seg = LineString([(p[0], p[2]), (q[0], q[2])])
            assert not any(seg.intersects(w) for w in walls)
            assert not any(seg.intersects(f) for f in furniture)


@pytest.mark.skipif(not (HOUSES / "house_746.json").is_file(), reason="needs shared houses")
def test_rooms_without_a_door_between_them_are_unreachable() -> None:
    from dataforge.world import load_catalogue, load_house
    from dataforge.world.navigation import house_nav_grid

    cat = load_catalogue()
    raw = load_house(HOUSES / "house_746.json", catalogue=cat).to_json_dict()
    raw["doors"] = []  # close every doorway
    house = load_house(raw, catalogue=cat)
    g = house_nav_grid(house, cat)
    centres = [Polygon(r.polygon_xz).representative_point() for r in house.rooms]
    reps = [(c.x, 0.0, c.y) for c in centres]
    d = g.distances(reps, reps)
    assert np.all(np.isinf(d[~np.eye(len(reps), dtype=bool)]))
