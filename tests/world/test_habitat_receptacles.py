"""The habitat backend's category CSVs and receptacle helpers (no simulator needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dataforge.errors import MalformedInputError
from dataforge.simulators.habitat_receptacles import (
    HabitatSurface,
    object_shortname,
    read_categories,
    sample_surface_point,
    triangle_areas,
    yaw_of,
)


def _csv(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_object_categories_use_id_and_main_category(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "object_categories.csv",
        "id,name,main_category,clean_category\n"
        "apple_1,Apple,fruit bowl.n.01,ignored\n"
        "mug_2,Mug,cup,other\n"
        "blank_3,Blank,,x\n",
    )
    assert read_categories(path) == {"apple_1": "fruit_bowl", "mug_2": "cup"}


def test_name_and_clean_category_are_the_fallbacks(tmp_path: Path) -> None:
    path = _csv(tmp_path, "c.csv", "name,clean_category\nbox_a,storage box\nbox_b,shelf.x\n")
    assert read_categories(str(path)) == {"box_a": "storage_box", "box_b": "shelf"}


def test_receptacle_rows_need_has_receptacles(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        "hssd-receptacles.csv",
        "id,main_category,hasReceptacles,notes\n"
        "abc,table,True,\n"
        "def,kitchen counter,true,\n"
        "ghi,lamp,False,pickupable\n"
        "jkl,sofa,,\n",
    )
    assert read_categories(path, receptacles=True) == {"abc": "table", "def": "kitchen_counter"}
    assert len(read_categories(path)) == 4  # no filter asked for
    other = _csv(tmp_path, "no_column.csv", "id,main_category\nabc,table\n")
    assert read_categories(other, receptacles=True) == {"abc": "table"}


def test_bad_category_files_say_so(tmp_path: Path) -> None:
    with pytest.raises(MalformedInputError):
        read_categories(tmp_path / "missing.csv")
    with pytest.raises(MalformedInputError):
        read_categories(_csv(tmp_path, "x.csv", "key,category\na,b\n"))


def test_shortnames_follow_habitat_lab() -> None:
    assert object_shortname("data/objects/configs/apple.object_config.json") == "apple"
    assert object_shortname("apple_:0003") == "apple"
    assert object_shortname("0a1b2c_:0000") == "0a1b2c"


def test_surface_sampling_is_by_area_and_inside_the_triangles() -> None:
    big = np.array([[[0, 1, 0], [2, 1, 0], [0, 1, 2]]], float)  # area 2
    small = np.array([[[5, 1, 5], [6, 1, 5], [5, 1, 6]]], float)  # area 0.5
    surfaces = [HabitatSurface("a", big, 2.0, 1.0), HabitatSurface("b", small, 0.5, 1.0)]
    rng = np.random.default_rng(0)
    picks = [sample_surface_point(surfaces, rng) for _ in range(2000)]
    share = np.mean([k == 0 for k, _ in picks])
    assert share == pytest.approx(0.8, abs=0.03)
    for k, p in picks:
        x, z = (p[0], p[2]) if k == 0 else (p[0] - 5, p[2] - 5)
        scale = 2 if k == 0 else 1
        assert x >= -1e-12 and z >= -1e-12 and x + z <= scale + 1e-12 and p[1] == 1
    again = [sample_surface_point(surfaces, np.random.default_rng(0)) for _ in range(1)]
    assert again[0][0] == picks[0][0] and np.array_equal(again[0][1], picks[0][1])
    assert triangle_areas(big)[0] == pytest.approx(2.0)


@pytest.mark.parametrize("yaw", [0.0, 30.0, 90.0, 200.0, 359.5])
def test_yaw_reads_back_from_a_habitat_rotation(yaw: float) -> None:
    t = np.radians(-yaw)  # dataforge yaw a is habitat's R_y(-a)
    m = np.eye(4)
    m[:3, :3] = [[np.cos(t), 0, np.sin(t)], [0, 1, 0], [-np.sin(t), 0, np.cos(t)]]
    assert yaw_of(m) == pytest.approx(yaw)
