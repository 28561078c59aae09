"""``dataforge houses show`` on a real house: a picture and a world graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dfhelpers import SHARED, run_cli
from PIL import Image
from renderhelpers import needs_egl

HOUSE = SHARED / "data" / "procthor_houses" / "house_3703.json"


@pytest.mark.slow
@pytest.mark.skipif(not HOUSE.is_file(), reason="needs ../shared/data/procthor_houses, absent here")
@needs_egl()
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


def test_unwritable_outputs_are_refused_before_any_work(tmp_path: Path) -> None:
    """--out / --graph that cannot be written are usage errors raised before the house is
    read (the house file here does not even exist); missing folders are not created."""
    from dataforge.errors import UsageError
    from dataforge.pipelines.houses.show import show

    nowhere = tmp_path / "no_such_house.json"
    png = tmp_path / "house.png"
    cases = [
        ({"out": tmp_path / "missing" / "house.png"}, "--out .*missing.*does not exist"),
        ({"out": tmp_path}, "(?i)--out .*is a directory"),
        ({"out": Path("/proc/dataforge_house.png")}, "cannot write --out /proc/dataforge_house"),
        ({"out": tmp_path / "house.xyz"}, r"--out .*cannot write a \.xyz image"),
        ({"out": png, "graph_out": tmp_path / "missing" / "g.json"}, "--graph .*does not exist"),
        ({"out": png, "graph_out": tmp_path}, "(?i)--graph .*is a directory"),
        ({"out": png, "graph_out": png}, "--graph and --out name the same file"),
    ]
    for kwargs, message in cases:
        with pytest.raises(UsageError, match=message) as info:
            show(nowhere, **kwargs)
        assert "\n" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no probe or folder left behind


def test_unwritable_out_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rooms": [], "walls": [], "objects": [{"id": "x"}]}))
    out = tmp_path / "missing" / "x.png"
    r = run_cli("houses", "show", str(bad), "--out", str(out))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "does not exist" in r.stderr and "bad.json" not in r.stderr
    assert not out.parent.exists()


def test_absurd_coordinates_are_one_line_exit_2(tmp_path: Path) -> None:
    def corner(x: float, y: float, z: float) -> dict[str, float]:
        return {"x": x, "y": y, "z": z}

    house = {
        "rooms": [
            {
                "id": "room|1",
                "roomType": "Kitchen",
                "floorPolygon": [corner(0, 0, 0), corner(0, 0, 4), corner(4, 0, 4)],
            }
        ],
        "walls": [
            {
                "id": "wall|1",
                "roomId": "room|1",
                "polygon": [
                    corner(0, 0, 0),
                    corner(1e9, 0, 0),
                    corner(0, 2.5, 0),
                    corner(1e9, 2.5, 0),
                ],
            }
        ],
        "objects": [],
    }
    path = tmp_path / "far.json"
    path.write_text(json.dumps(house))
    png = tmp_path / "far.png"
    r = run_cli("houses", "show", str(path), "--out", str(png), "--views", "0")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "far.json: walls[0].polygon[1].x: coordinate 1e+09 m is out of range" in r.stderr
    assert not png.exists()
