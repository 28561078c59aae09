"""NavSpace, the one navigable-space protocol: every implementation has its members, and the
new ones (sample, navigable) behave as stated: uniform over the navigable area, on the right
component, seeded where the space is ours, habitat's own stream where it is habitat-sim's."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

import fake_habitat_sim
import numpy as np
import pytest
from shapely.geometry import LineString, box

from dataforge.errors import UsageError
from dataforge.nav.grid import NavGrid
from dataforge.nav.hubs import HubGeodesics
from dataforge.nav.pathfinder import NavmeshPathfinder
from dataforge.nav.space import NavSpace
from dataforge.simulators.habitat import NavMeshPaths

MEMBERS = ("sample", "navigable", "distance", "distances", "shortest_path", "segment_clear")


def test_the_protocol_lists_the_members_the_issue_names() -> None:
    found = {n for n, v in vars(NavSpace).items() if callable(v) and not n.startswith("_")}
    assert found == set(MEMBERS)


@pytest.mark.parametrize("cls", [NavGrid, HubGeodesics, NavmeshPathfinder, NavMeshPaths])
def test_every_implementation_has_every_member(cls: type) -> None:
    for name in MEMBERS:
        want = inspect.signature(getattr(NavSpace, name))
        got = inspect.signature(getattr(cls, name))
        needed = [p for p in want.parameters.values() if p.name != "self"]
        params = [p for p in got.parameters.values() if p.name != "self"]
        # the protocol's positional parameters, in order; anything more has a default
        assert len(params) >= len(needed), (cls.__name__, name)
        assert all(p.default is not inspect.Parameter.empty for p in params[len(needed) :])


def islands() -> NavGrid:
    """A 4 m x 2 m room and, 1 m away past a full wall, a 1 m x 1 m closet (y = 0.7)."""
    walls = [LineString([(4.5, -1), (4.5, 3)])]
    return NavGrid.build(
        [box(0, 0, 4, 2), box(5, 0, 6, 1)], walls, agent_radius=0.1, cell=0.1, y=0.7
    )


def test_a_grid_samples_its_largest_component_uniformly() -> None:
    g = islands()
    rng = np.random.default_rng(0)
    pts = np.array([g.sample(rng) for _ in range(6000)])
    assert np.all(pts[:, 1] == 0.7)  # the grid's y
    assert np.all(pts[:, 0] < 4)  # never the closet
    assert all(g.navigable(p) for p in pts[:50])
    assert np.array_equal(pts, np.round(pts, 6))
    # uniform by area: the room's left half (x < 2) gets half the draws
    assert abs(np.mean(pts[:, 0] < 2.0) - 0.5) < 0.03
    # the same seed, the same points
    again = np.array([g.sample(np.random.default_rng(0)) for _ in range(1)])
    assert np.array_equal(again[0], pts[0])


def test_hub_geodesics_are_a_space_of_their_component() -> None:
    g = islands()
    closet = g.components()[g.cell_of((5.5, 0.7, 0.5))]
    room, small = HubGeodesics(g), HubGeodesics(g, component=int(closet))
    rng = np.random.default_rng(1)
    assert all(p[0] > 5 for p in (small.sample(rng) for _ in range(50)))
    a, b = room.sample(rng), room.sample(rng)
    assert room.navigable(a) and not small.navigable(a)
    d = room.distances([a, b], [b, a, (5.5, 0.7, 0.5)])
    assert d.shape == (2, 3) and d[0, 1] == 0.0 and d[1, 0] == 0.0
    assert d[0, 0] == pytest.approx(room.distance(a, b)) and np.isinf(d[:, 2]).all()
    path = room.shortest_path((0.5, 0.7, 0.5), (3.5, 0.7, 1.5))
    assert np.allclose(path[-1][[0, 2]], (3.5, 1.5), atol=0.1)
    assert room.segment_clear((0.5, 0.7, 0.5), (3.5, 0.7, 1.5))
    assert not room.segment_clear((3.5, 0.7, 0.5), (5.5, 0.7, 0.5))


def test_nothing_navigable_is_one_line() -> None:
    g = NavGrid.build(box(0, 0, 0.1, 0.1), [], agent_radius=0.2, cell=0.05)
    with pytest.raises(UsageError, match="nothing is navigable"):
        g.sample(np.random.default_rng(0))


def test_a_pathfinder_samples_big_islands_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``min_island_radius`` given at load is what ``sample(rng)`` keeps to (habitat-sim's own
    seeded stream: the rng is not used)."""
    monkeypatch.setitem(sys.modules, "habitat_sim", fake_habitat_sim.module())
    navmesh = tmp_path / "s.navmesh"
    navmesh.write_text(json.dumps({"floor_y": 0.0, "rects": [[0, 0, 4, 3], [10, 0, 11, 1]]}))
    big = NavmeshPathfinder.load(navmesh, seed=5, min_island_radius=1.5)
    pts = [big.sample(np.random.default_rng(k)) for k in range(40)]
    assert all(p[0] <= 4 and big.navigable(p) for p in pts)
    same = NavmeshPathfinder.load(navmesh, seed=5, min_island_radius=1.5)
    assert all(np.array_equal(same.sample(None), p) for p in pts)
    anywhere = NavmeshPathfinder.load(navmesh, seed=5)
    assert any(p[0] >= 10 for p in (anywhere.sample() for _ in range(200)))
