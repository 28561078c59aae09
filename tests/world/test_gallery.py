"""``dataforge houses assets``: the contact sheet and shape JSON, and real meshes from --assets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import run_cli
from PIL import Image
from renderhelpers import needs_egl

from dataforge.errors import MalformedInputError
from dataforge.world import load_catalogue
from dataforge.world.gallery import gallery_records, render_gallery, representative
from dataforge.world.mesh_assets import MeshLibrary

CAT = load_catalogue()


def test_records_describe_parts_fill_and_surfaces() -> None:
    entries = {e.object_type: e for e in gallery_records(CAT, ["Chair", "ShelvingUnit", "Fridge"])}
    chair = entries["Chair"].record
    assert chair["archetype"] == "chair" and chair["parts"] >= 6
    seat = max(chair["surfaces"], key=lambda s: s["height_m"])
    assert seat["kind"] == "seat" and seat["height_frac"] < 0.7
    assert 0 < chair["fill"] < 0.5  # legs and a back: far from a solid box
    fridge = entries["Fridge"].record
    assert all(s["needs_open"] and s["kind"] == "interior" for s in fridge["surfaces"])
    assert fridge["fill"] > 0.8
    shelves = entries["ShelvingUnit"].record
    assert set(shelves["sub_receptacles"].values()) == {"Shelf"}
    assert entries["Chair"].asset == representative(CAT, "Chair")


@needs_egl()
def test_gallery_tiles_differ_from_the_boxes(tmp_path: Path) -> None:
    entries = gallery_records(CAT, ["Chair", "Apple", "DiningTable"])
    shaped = render_gallery(entries, columns=3)
    boxes = render_gallery(entries, boxes=True, columns=3)
    assert shaped.shape == boxes.shape and shaped.shape[1] == 3 * 200
    assert np.abs(shaped.astype(int) - boxes.astype(int)).mean() > 2


def _box_glb(path: Path, extents: tuple[float, float, float]) -> None:
    trimesh = pytest.importorskip("trimesh")
    mesh = trimesh.creation.box(extents=extents)
    mesh.visual.vertex_colors = np.tile([200, 30, 30, 255], (len(mesh.vertices), 1))
    mesh.export(path)


def test_a_mesh_library_fits_meshes_to_the_asset_box(tmp_path: Path) -> None:
    info = CAT.asset("Apple_1")
    _box_glb(tmp_path / "Apple_1.glb", (10.0, 20.0, 30.0))  # centimetre-like units
    lib = MeshLibrary(tmp_path)
    g = lib.geometry(info)
    assert g is not None
    assert np.allclose(g.vertices.max(axis=0) - g.vertices.min(axis=0), info.size, atol=1e-6)
    assert np.allclose(g.vertices.mean(axis=0), 0.0, atol=1e-6)
    assert tuple(g.colors[0]) == (200, 30, 30)
    assert lib.geometry(CAT.asset("Apple_2")) is None
    assert lib.fill(info) == pytest.approx(1.0, rel=1e-6)  # a box fills its box
    assert "1 asset meshes used" in lib.report() and "1 assets fell back" in lib.report()
    (tmp_path / "Tomato_1.obj").write_text("not a mesh\n")
    with pytest.raises(MalformedInputError, match=r"Tomato_1\.obj"):
        MeshLibrary(tmp_path).geometry(CAT.asset("Tomato_1"))


@needs_egl()
def test_houses_assets_cli(tmp_path: Path) -> None:
    meshes = tmp_path / "meshes"
    meshes.mkdir()
    apple = representative(CAT, "Apple")
    _box_glb(meshes / f"{apple.asset_id}.glb", (1.0, 1.0, 1.0))
    png, js = tmp_path / "g.png", tmp_path / "g.json"
    r = run_cli(
        "houses",
        "assets",
        "--types",
        "Apple,Chair",
        "--out",
        str(png),
        "--json",
        str(js),
        "--assets",
        str(meshes),
    )
    assert r.returncode == 0, r.stderr
    assert "2 object types" in r.stdout and "1 asset meshes used" in r.stdout
    assert Image.open(png).size == (10 * 200, 218)
    data = json.loads(js.read_text())
    assert set(data) == {"Apple", "Chair"} and data["Apple"]["mesh"] == f"{apple.asset_id}.glb"
    bad = run_cli("houses", "assets", "--types", "Unicorn", "--out", str(png))
    assert bad.returncode == 2 and "Unicorn" in bad.stderr and bad.stderr.count("\n") == 1
    missing = run_cli("houses", "assets", "--out", str(png), "--assets", str(tmp_path / "nope"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
