"""NavGraph shortest paths and Matterport3D connectivity loading."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from ir2rhelpers import HAVE_SHARED, SHARED_DATA, line_positions, write_connectivity

from dataforge.errors import InputNotFoundError, MalformedInputError
from dataforge.nav.connectivity import load_connectivity
from dataforge.nav.graph import NavGraph
from dataforge.nav.oracle import GraphOracle


@pytest.mark.skipif(not HAVE_SHARED, reason="needs ../shared/data/mp3d_connectivity, absent here")
def test_distances_match_networkx_on_a_real_scan() -> None:
    g = load_connectivity(SHARED_DATA / "mp3d_connectivity" / "17DRP5sb8fy_connectivity.json")
    ref = dict(nx.all_pairs_dijkstra_path_length(g.to_networkx(), weight="weight"))
    d = g.distances(list(g.ids))
    for i, a in enumerate(g.ids):
        for j, b in enumerate(g.ids):
            assert d[i, j] == pytest.approx(ref[a].get(b, np.inf), abs=1e-9)
    a, b = g.ids[0], g.ids[-1]
    path = g.shortest_path(a, b)
    length = sum(np.linalg.norm(g.position(u) - g.position(v)) for u, v in itertools.pairwise(path))
    assert path[0] == a and path[-1] == b and length == pytest.approx(d[0, -1])


def test_one_way_edges_and_excluded_viewpoints(tmp_path: Path) -> None:
    pos = line_positions("v", 4)
    f = write_connectivity(
        tmp_path,
        "s",
        pos,
        [("v0", "v1"), ("v1", "v2"), ("v2", "v3")],
        directed=True,
        excluded=["v3"],
    )
    g = load_connectivity(f)
    assert "v3" not in g and len(g) == 3
    d = GraphOracle(g).distances(["v0", "v2"], ["v0", "v2"])
    np.testing.assert_allclose(d, [[0, 2], [np.inf, 0]])
    assert g.shortest_path("v2", "v0") == []


def test_co_located_nodes_stay_connected() -> None:
    g = NavGraph.from_edges(
        {"a": [0, 0, 0], "b": [0, 0, 0], "c": [1, 0, 0]}, [("a", "b"), ("b", "c")]
    )
    assert g.distances(["a"], ["c"])[0, 0] == pytest.approx(1.0)
    assert g.distances(["a"], ["b"])[0, 0] == 0.0


def test_bad_connectivity_files_name_the_record(tmp_path: Path) -> None:
    with pytest.raises(InputNotFoundError, match="connectivity graph not found"):
        load_connectivity(tmp_path / "x_connectivity.json")
    f = write_connectivity(tmp_path, "s", line_positions("v", 2), [("v0", "v1")])
    records = json.loads(f.read_text())
    records[1]["unobstructed"] = [True]
    f.write_text(json.dumps(records))
    with pytest.raises(MalformedInputError, match="viewpoint record 1: unobstructed is not"):
        load_connectivity(f)
    f.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(MalformedInputError, match="non-empty list"):
        load_connectivity(f)
