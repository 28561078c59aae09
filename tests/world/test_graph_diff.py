"""World-graph diffs (graph_diff / apply_graph_diff) on real houses changed through World, and
the structure nodes (floors, ceilings, walls, doors, windows) of the graph."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
from dfhelpers import SHARED

from dataforge.errors import MalformedInputError
from dataforge.world import WorldGraph, load_catalogue, load_house, world_graph
from dataforge.world.graph import GRAPH_FORMAT, apply_graph_diff, graph_diff, structure_nodes
from dataforge.world.placement import World

HOUSES = SHARED / "data" / "procthor_houses"
NAMES = ["house_3703", "house_746", "procthor_train_1"]
pytestmark = pytest.mark.skipif(
    not HOUSES.is_dir(), reason=f"example ProcTHOR houses not present ({HOUSES})"
)
STEPS = ("start", "spawned", "removed", "moved")


def plain(data: Any) -> Any:
    """What storing as JSON and reading back gives (tuples become lists)."""
    return json.loads(json.dumps(data))


def size(data: Any) -> int:
    return len(json.dumps(data))


def first_ok(results: Any) -> Any:
    for res in results:
        if res.ok:
            return res
    raise AssertionError("no placement succeeded")


@pytest.fixture(scope="module")
def catalogue() -> Any:
    return load_catalogue()


@pytest.fixture(scope="module", params=NAMES)
def changes(request: pytest.FixtureRequest, catalogue: Any) -> dict[str, Any]:
    """The graph dicts of one house before and after each change, and what each change did."""
    house = load_house(HOUSES / f"{request.param}.json", catalogue=catalogue)
    world = World(house, catalogue)
    rng = np.random.default_rng(3)
    graphs = {"start": plain(world.graph().to_dict())}
    top = [o.id for o in world.objects if o.parent_id is None and world.is_receptacle(o.id)]
    spawned = first_ok(world.spawn("Apple_1", r, rng) for r in top for _ in range(4))
    graphs["spawned"] = plain(world.graph().to_dict())
    # a small object resting on something, with nothing on it
    small = next(
        o.id
        for o in world.objects
        if o.parent_id is not None and o.id != spawned.object_id and not world.children(o.id)
    )
    removed = world.remove(small)
    graphs["removed"] = plain(world.graph().to_dict())
    mover = next(
        o.id
        for o in world.objects
        if o.parent_id is not None and o.id != spawned.object_id and not world.children(o.id)
    )
    old_parent = world.object(mover).parent_id
    moved = first_ok(world.place(mover, r, rng) for r in top if r != old_parent for _ in range(4))
    graphs["moved"] = plain(world.graph().to_dict())
    return {
        "house": house,
        "graphs": graphs,
        "spawned": spawned,
        "removed": [o.id for o in removed],
        "moved": moved,
        "old_parent": old_parent,
    }


def test_round_trip_between_every_pair_of_states(changes: dict[str, Any]) -> None:
    graphs = changes["graphs"]
    for a in STEPS:
        for b in STEPS:
            diff = plain(graph_diff(graphs[a], graphs[b]))
            assert apply_graph_diff(graphs[a], diff) == graphs[b], (a, b)
            # the result is a valid graph that rebuilds the same WorldGraph
            assert WorldGraph.from_dict(apply_graph_diff(graphs[a], diff)) == WorldGraph.from_dict(
                graphs[b]
            )


def test_chained_diffs_rebuild_every_state(changes: dict[str, Any]) -> None:
    graphs = changes["graphs"]
    diffs = [plain(graph_diff(graphs[a], graphs[b])) for a, b in pairwise(STEPS)]
    state = graphs["start"]
    for step, diff in zip(STEPS[1:], diffs, strict=True):
        state = apply_graph_diff(state, diff)
        assert state == graphs[step]
    # a full graph, then per change a diff: far smaller than storing each graph in full
    assert sum(size(d) for d in diffs) < 0.25 * sum(size(graphs[s]) for s in STEPS[1:])
    for d in diffs:
        assert size(d) < 0.15 * size(graphs["start"])


def test_identical_graphs_have_no_node_lists(changes: dict[str, Any]) -> None:
    for step, g in changes["graphs"].items():
        diff = graph_diff(g, plain(g))
        assert diff == {"format": GRAPH_FORMAT, "house": g["house"]}, step
        assert apply_graph_diff(g, diff) == g


def test_diffs_name_exactly_what_changed(changes: dict[str, Any]) -> None:
    graphs = changes["graphs"]
    spawned, moved = changes["spawned"], changes["moved"]

    d = graph_diff(graphs["start"], graphs["spawned"])
    assert "structure" not in d and "rooms" not in d
    assert d["objects"]["removed"] == []
    assert [n["id"] for n in d["objects"]["set"]] == [spawned.object_id]
    (node,) = d["objects"]["set"]
    assert node["parent_id"] == spawned.receptacle_id and node["asset_id"] == "Apple_1"
    changed = {n["id"] for n in d["receptacles"]["set"]}
    assert spawned.receptacle_id in changed  # its child list grew
    assert d["receptacles"]["removed"] == []

    d = graph_diff(graphs["spawned"], graphs["removed"])
    assert d["objects"] == {"set": [], "removed": sorted(changes["removed"])}
    assert "structure" not in d and "rooms" not in d

    d = graph_diff(graphs["removed"], graphs["moved"])
    assert d["objects"]["removed"] == []
    (node,) = d["objects"]["set"]
    assert node["id"] == moved.object_id and node["parent_id"] == moved.receptacle_id
    assert moved.receptacle_id != changes["old_parent"]
    # both the old and the new parent's node change (child lists)
    ids = {n["id"] for n in d["receptacles"]["set"]}
    assert {changes["old_parent"], moved.receptacle_id} <= ids
    assert "structure" not in d


def test_diff_between_different_houses_round_trips(catalogue: Any) -> None:
    graphs = [
        plain(world_graph(load_house(HOUSES / f"{n}.json"), catalogue).to_dict()) for n in NAMES
    ]
    for a in graphs:
        for b in graphs:
            diff = graph_diff(a, b)
            assert apply_graph_diff(a, diff) == b
            if a is not b:
                assert diff["house"] == b["house"]
                assert {"rooms", "structure", "objects"} <= set(diff)


def test_structure_lists_every_floor_ceiling_wall_and_opening(changes: dict[str, Any]) -> None:
    house = changes["house"]
    cat = load_catalogue()
    nodes = structure_nodes(house, cat)
    keys = [(n.id, n.kind) for n in nodes]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    want = {(r.id, k) for r in house.rooms for k in ("floor", "ceiling")}
    want |= {(w.id, "wall") for w in house.walls}
    want |= {(d.id, "door") for d in house.doors} | {(w.id, "window") for w in house.windows}
    assert set(keys) == want
    assert len(nodes) == 2 * len(house.rooms) + len(house.walls) + len(house.openings)
    by_key = {(n.id, n.kind): n for n in nodes}
    for r in house.rooms:
        assert by_key[r.id, "floor"].label == "Floor" and by_key[r.id, "floor"].room_ids == (r.id,)
        assert by_key[r.id, "ceiling"].label == "Ceiling"
        assert by_key[r.id, "ceiling"].room_ids == (r.id,)
    for w in house.walls:
        assert by_key[w.id, "wall"].label == "Wall" and by_key[w.id, "wall"].room_ids == (
            w.room_id,
        )
    for o in house.openings:
        n = by_key[o.id, o.kind]
        assert n.label == cat.asset(o.asset_id).object_type
        assert n.label in ("Doorway", "Doorframe", "Window")
        assert n.room_ids == tuple(o.room_ids)
    # the world graph carries them, unchanged by moving objects
    for g in changes["graphs"].values():
        assert [(n["id"], n["kind"]) for n in g["structure"]] == keys


def test_graph_with_structure_survives_to_dict_and_json(changes: dict[str, Any]) -> None:
    house = changes["house"]
    g = world_graph(house, load_catalogue())
    assert g.structure and {n.kind for n in g.structure} >= {"floor", "ceiling", "wall", "door"}
    assert WorldGraph.from_dict(g.to_dict()) == g
    assert WorldGraph.from_dict(plain(g.to_dict())) == g
    data = plain(g.to_dict())
    assert data["format"] == GRAPH_FORMAT
    del data["structure"]
    with pytest.raises(MalformedInputError, match="structure"):
        WorldGraph.from_dict(data)
    with pytest.raises(MalformedInputError, match="format"):
        WorldGraph.from_dict({**plain(g.to_dict()), "format": GRAPH_FORMAT - 2})
    # format 3 (before receptacles had an openness) still reads, every receptacle shut
    old = plain(g.to_dict())
    old["format"] = 3
    for r in old["receptacles"]:
        del r["openness"]
    assert WorldGraph.from_dict(old) == g
