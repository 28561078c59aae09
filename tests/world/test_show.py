"""``dataforge houses show`` on a real house: a picture and a world graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dfhelpers import SHARED, run_cli
from PIL import Image

HOUSE = SHARED / "data" / "procthor_houses" / "house_3703.json"


@pytest.mark.slow
@pytest.mark.skipif(not HOUSE.is_file(), reason="needs ../shared/data/procthor_houses, absent here")
def test_show_writes_a_map_views_and_the_world_graph(tmp_path: Path) -> None:
    png, graph = tmp_path / "house.png", tmp_path / "graph.json"
    r = run_cli("houses", "show", str(HOUSE), "--out", str(png), "--graph", str(graph))
    assert r.returncode == 0, r.stderr
    assert "2 rooms, 39 objects" in r.stdout
    img = Image.open(png)
    assert img.size[0] > 800
    g = json.loads(graph.read_text())
    raw = json.loads(HOUSE.read_text())
    assert {room["id"] for room in g["rooms"]} == {room["id"] for room in raw["rooms"]}
    assert len(g["objects"]) == 39


def test_malformed_house_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rooms": [], "walls": [], "objects": [{"id": "x"}]}))
    r = run_cli("houses", "show", str(bad), "--out", str(tmp_path / "x.png"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "bad.json" in r.stderr
