"""Corner-hub geodesics against analytic values, against NavGrid's own fields, and on real
ProcTHOR houses; and grids with round obstacles added after building."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from dfhelpers import SHARED
from shapely.geometry import LineString, box

from dataforge.nav.grid import NavGrid
from dataforge.nav.hubs import HubGeodesics, corner_hubs

R = 0.2
CELL = 0.05


def two_rooms() -> NavGrid:
    """Rooms [0,4]x[0,4] and [4,8]x[0,4]; a 1 m door in the wall x = 4 at z in [1.5, 2.5]."""
    walls = [LineString([(4, 0), (4, 1.5)]), LineString([(4, 2.5), (4, 4)])]
    return NavGrid.build(box(0, 0, 8, 4), walls, agent_radius=R, cell=CELL)


def test_corner_hubs_are_the_free_cells_at_convex_corners() -> None:
    free = np.ones((5, 5), dtype=bool)
    free[2, 2] = False  # one blocked cell: its four diagonal neighbours are hubs
    hubs = corner_hubs(free)
    assert {tuple(c) for c in np.argwhere(hubs)} >= {(1, 1), (1, 3), (3, 1), (3, 3)}
    assert not hubs[2, 1] and not hubs[1, 2]  # beside a blocked cell, not at its corner
    assert not corner_hubs(np.ones((4, 4), bool))[1:3, 1:3].any()  # open space has none inside


def test_open_room_is_straight_line_and_needs_no_hub() -> None:
    g = NavGrid.build(box(0, 0, 6, 6), [], agent_radius=R, cell=CELL)
    hg = HubGeodesics(g)
    a, b = (1.03, 0.0, 1.11), (4.97, 0.0, 5.02)
    assert hg.distance(a, b) == pytest.approx(math.hypot(3.94, 3.91), abs=1e-12)
    assert hg.distance(a, a) == 0.0


def test_through_a_door_matches_the_analytic_length_and_navgrid() -> None:
    g = two_rooms()
    hg = HubGeodesics(g)
    a, b = (1.0, 0.0, 0.5), (7.0, 0.0, 0.5)
    # the path bends round the jamb at (4, 1.5), grown by R into a disc: tangent-arc-tangent
    corner = np.array([4.0, 1.5])
    pa, pb = np.array([1.0, 0.5]), np.array([7.0, 0.5])
    la, lb = np.linalg.norm(pa - corner), np.linalg.norm(pb - corner)
    inner = math.acos(np.dot(pa - corner, pb - corner) / (la * lb))
    arc = 2 * math.pi - inner - math.acos(R / la) - math.acos(R / lb)
    analytic = math.sqrt(la**2 - R**2) + math.sqrt(lb**2 - R**2) + R * arc
    d = hg.distance(a, b)
    assert d > 6.0 + 0.4  # it does go round
    assert d == pytest.approx(analytic, abs=CELL)
    assert d == pytest.approx(g.distance(a, b), abs=2 * CELL)
    assert hg.distance(b, a) == pytest.approx(d, abs=1e-9)  # symmetric by construction


def test_other_components_are_unreachable() -> None:
    walls = [LineString([(4, 0), (4, 4)])]
    g = NavGrid.build(box(0, 0, 8, 4), walls, agent_radius=R, cell=CELL)
    hg = HubGeodesics(g)  # the largest of two equal rooms: either is fine
    inside = next(p for p in [(1.0, 0.0, 1.0), (7.0, 0.0, 1.0)] if hg.contains(p))
    outside = (7.0, 0.0, 1.0) if inside[0] < 4 else (1.0, 0.0, 1.0)
    assert math.isinf(hg.distance(inside, outside))
    assert np.isinf(hg.distances_from(inside, [outside])).all()


def test_distances_from_equals_pairwise_distance() -> None:
    g = two_rooms()
    hg = HubGeodesics(g)
    rng = np.random.default_rng(1)
    cells = np.argwhere(hg.mask)
    pts = [g.center(tuple(cells[k])) for k in rng.integers(len(cells), size=12)]
    many = hg.distances_from(pts[0], pts[1:])
    assert many == pytest.approx([hg.distance(pts[0], p) for p in pts[1:]], abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["procthor_train_1", "house_746", "house_3703"])
def test_real_houses_agree_with_navgrid_fields(name: str) -> None:
    path = SHARED / "data" / "procthor_houses" / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"needs {path}")
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house
    from dataforge.world.navigation import house_nav_grid

    cat = load_catalogue()
    house = load_house(json.loads(path.read_text()), name=name, catalogue=cat)
    g = house_nav_grid(house, cat, agent_radius=0.1)
    hg = HubGeodesics(g)
    rng = np.random.default_rng(0)
    cells = np.argwhere(hg.mask)
    errs = []
    for _ in range(60):
        a, b = (g.center(tuple(cells[k])) for k in rng.integers(len(cells), size=2))
        d, ref = hg.distance(a, b), g.distance(a, b)
        assert d >= math.hypot(a[0] - b[0], a[2] - b[2]) - 1e-9
        errs.append(d - ref)
    # measured: within 7.5 cm of one field read from the source, mean near 0
    assert max(abs(e) for e in errs) < 0.1
    assert abs(float(np.mean(errs))) < 0.02


def test_with_discs_blocked_blocks_round_obstacles_only() -> None:
    g = NavGrid.build(box(0, 0, 4, 4), [], agent_radius=0.1, cell=CELL)
    c = (2.0, 0.0, 2.0)
    b = g.with_discs_blocked([c], 0.2)
    assert g.navigable(c) and not b.navigable(c)
    assert b.navigable((2.3, 0.0, 2.0)) and not b.navigable((2.15, 0.0, 2.0))
    assert g.free.sum() - b.free.sum() == pytest.approx(math.pi * 0.2**2 / CELL**2, rel=0.15)
    assert g.navigable(c)  # the original grid is untouched
    # going round the disc costs the tangent-arc-tangent detour
    a, z = (1.0, 0.0, 2.0), (3.0, 0.0, 2.0)
    assert b.distance(a, z) > g.distance(a, z) + 0.05
