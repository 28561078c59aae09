"""``--scenes`` (dataforge.world.scene_sources): what the option accepts, the one-line errors for
what it refuses, the scene names, the Habitat scenes of a folder, and one work unit per scene
with every file it reads recorded."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import SHARED, needs_house_generator

from dataforge.errors import InputNotFoundError, MissingDependencyError, UsageError
from dataforge.inputs import Inputs
from dataforge.run import WorkUnit
from dataforge.world.scene_sources import (
    SceneSpec,
    habitat_scenes,
    house_bytes,
    house_scene_names,
    load_scene_house,
    parse_scenes,
    plan_scene_units,
    resolve_scenes,
    unit_name,
)

HOUSE = SHARED / "data" / "procthor_houses" / "procthor_train_1.json"


def one_line(exc: pytest.ExceptionInfo[Exception], part: str) -> None:
    text = str(exc.value)
    assert "\n" not in text and part in text, text


def write_houses(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for k, name in enumerate(names):
        (folder / name).write_text(json.dumps({"id": name, "rooms": [], "n": k}))
    return folder


def write_jsonl_gz(path: Path, n: int) -> Path:
    lines = "".join(json.dumps({"id": f"house-{k}", "rooms": []}) + "\n\n" for k in range(n))
    path.write_bytes(gzip.compress(lines.encode(), mtime=0))
    return path


def touch(root: Path, *rels: str) -> None:
    for rel in rels:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(rel.encode())


# -- parse_scenes --------------------------------------------------------------------------------


def test_generate_takes_a_count() -> None:
    assert parse_scenes("generate:3") == SceneSpec("generate", count=3)
    assert parse_scenes(" generate:12 ") == SceneSpec("generate", count=12)
    assert parse_scenes("generate") == SceneSpec("generate", count=1)


@pytest.mark.parametrize("text", ["generate:0", "generate:-2", "generate:x", "generate:"])
def test_a_bad_count_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError) as exc:
        parse_scenes(text)
    one_line(exc, "generate:K needs a house count K >= 1")


def test_a_folder_a_jsonl_file_and_a_habitat_folder(tmp_path: Path) -> None:
    houses = write_houses(tmp_path / "houses", ["a.json"])
    lines = write_jsonl_gz(tmp_path / "houses.jsonl.gz", 2)
    assert parse_scenes(str(houses)) == SceneSpec("dir", houses)
    assert parse_scenes(str(lines)) == SceneSpec("jsonl", lines)
    assert parse_scenes(f"habitat:{tmp_path}") == SceneSpec("habitat", tmp_path)


def test_a_missing_path_is_input_not_found(tmp_path: Path) -> None:
    with pytest.raises(InputNotFoundError) as exc:
        parse_scenes(str(tmp_path / "nope"))
    one_line(exc, "not found (generate:K")
    with pytest.raises(InputNotFoundError) as exc:
        parse_scenes(f"habitat:{tmp_path / 'nope'}")
    one_line(exc, "is not a folder of Habitat scenes")
    touch(tmp_path, "file.glb")
    with pytest.raises(InputNotFoundError):
        parse_scenes(f"habitat:{tmp_path / 'file.glb'}")  # a file, not a folder


# -- names ---------------------------------------------------------------------------------------


def test_unit_name_is_file_safe() -> None:
    assert unit_name("house_746") == "house_746"
    assert unit_name("17DRP5sb8fy") == "17DRP5sb8fy"
    assert unit_name("a b/c:d") == "a_b_c_d"
    assert unit_name("..//..") == "scene"
    assert unit_name("x" * 300) == "x" * 128


def test_house_scene_names(tmp_path: Path) -> None:
    from dataforge.world.house_sources import open_source

    houses = write_houses(tmp_path / "d", ["b house.json", "a.json"])
    assert house_scene_names(open_source(houses)) == ["a", "b_house"]
    lines = write_jsonl_gz(tmp_path / "train.jsonl.gz", 2)
    assert house_scene_names(open_source(lines)) == ["train-000000", "train-000001"]


# -- Habitat scenes ------------------------------------------------------------------------------


def test_habitat_scenes_are_the_glbs_with_a_navmesh(tmp_path: Path) -> None:
    touch(tmp_path, "b/b.glb", "b/b.navmesh", "a/a.glb", "a/a.navmesh", "c/c.glb", "d.glb")
    touch(tmp_path, "d.navmesh", "e/e.navmesh")
    assert habitat_scenes(tmp_path) == [
        ("a/a.glb", tmp_path / "a" / "a.glb"),
        ("b/b.glb", tmp_path / "b" / "b.glb"),
        ("d.glb", tmp_path / "d.glb"),
    ]


def test_a_folder_without_habitat_scenes_is_input_not_found(tmp_path: Path) -> None:
    touch(tmp_path, "c/c.glb", "e/e.navmesh")
    with pytest.raises(InputNotFoundError) as exc:
        habitat_scenes(tmp_path)
    one_line(exc, "no <scene>.glb with a <scene>.navmesh beside it")


# -- plan_scene_units ----------------------------------------------------------------------------


def test_one_unit_per_house_of_a_folder(tmp_path: Path) -> None:
    houses = write_houses(tmp_path / "houses", ["house_b.json", "house_a.json"])
    (houses / "notes.txt").write_text("not a house")
    inputs = Inputs({"scenes": houses})
    units, source = plan_scene_units(parse_scenes(str(houses)), inputs, "scenes", split="train")
    assert units == [
        WorkUnit("house_a", {"index": 0, "ordinal": 0}),
        WorkUnit("house_b", {"index": 1, "ordinal": 1}),
    ]
    assert source is not None and source.kind == "dir"
    assert [source.read(k)["id"] for k in range(len(source))] == ["house_a.json", "house_b.json"]
    assert sorted(inputs.files) == ["scenes:house_a.json", "scenes:house_b.json"]
    assert inputs.to_dict()["locations"] == {"scenes": str(houses.resolve())}


def test_one_unit_per_line_of_a_jsonl_file(tmp_path: Path) -> None:
    lines = write_jsonl_gz(tmp_path / "val.jsonl.gz", 3)
    inputs = Inputs({"houses": lines})
    units, source = plan_scene_units(parse_scenes(str(lines)), inputs, "houses", split="val")
    assert [u.id for u in units] == ["val-000000", "val-000001", "val-000002"]
    assert [dict(u.params) for u in units][2] == {"index": 2, "ordinal": 2}
    assert source is not None and source.kind == "jsonl" and len(source) == 3
    assert list(inputs.files) == ["houses"]  # the file itself, read once


def test_generated_houses_are_named_by_split_and_read_nothing() -> None:
    inputs = Inputs()
    units, source = plan_scene_units(SceneSpec("generate", count=2), inputs, "scenes", split="val")
    assert units == [
        WorkUnit("procthor-val-000000", {"index": 0, "ordinal": 0}),
        WorkUnit("procthor-val-000001", {"index": 1, "ordinal": 1}),
    ]
    assert source is None and inputs.files == {}


def test_habitat_units_record_their_navmeshes_and_repeated_names_get_a_suffix(
    tmp_path: Path,
) -> None:
    touch(tmp_path, "x/s.glb", "x/s.navmesh", "y/s.glb", "y/s.navmesh", "z.glb", "z.navmesh")
    inputs = Inputs({"scenes": tmp_path})
    units, source = plan_scene_units(SceneSpec("habitat", tmp_path), inputs, "scenes", split="t")
    root = tmp_path.resolve()
    assert source is None
    assert units == [
        WorkUnit("s", {"scene_id": "x/s.glb", "navmesh": str(root / "x/s.navmesh"), "ordinal": 0}),
        WorkUnit(
            "s-1", {"scene_id": "y/s.glb", "navmesh": str(root / "y/s.navmesh"), "ordinal": 1}
        ),
        WorkUnit("z", {"scene_id": "z.glb", "navmesh": str(root / "z.navmesh"), "ordinal": 2}),
    ]
    assert sorted(inputs.files) == ["scenes:x/s.navmesh", "scenes:y/s.navmesh", "scenes:z.navmesh"]


# -- resolve_scenes ------------------------------------------------------------------------------


def test_resolve_a_folder_keeps_its_location(tmp_path: Path) -> None:
    houses = write_houses(tmp_path / "houses", ["a.json"])
    inputs = Inputs({"scenes": houses})
    spec = resolve_scenes(inputs, "scenes", kind="generate", generated_count=0)
    assert spec == SceneSpec("dir", houses) and inputs.locations == {"scenes": houses}


def test_resolve_without_scenes_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as exc:
        resolve_scenes(Inputs(), "scenes", kind="dir", generated_count=0)
    one_line(exc, "this run needs --scenes")
    with pytest.raises(UsageError):
        resolve_scenes(Inputs(), "scenes", kind="generate", generated_count=0)


@needs_house_generator()
def test_resolve_a_count_drops_the_location() -> None:
    inputs = Inputs({"scenes": Path("generate:2")})
    assert resolve_scenes(inputs, "scenes", kind="dir", generated_count=0) == SceneSpec(
        "generate", count=2
    )
    assert "scenes" not in inputs
    again = Inputs()  # reproduce: the count is in the config
    assert resolve_scenes(again, "scenes", kind="generate", generated_count=5).count == 5
    with pytest.raises(UsageError, match="unknown --room-spec"):
        resolve_scenes(Inputs(), "scenes", kind="generate", generated_count=1, room_spec="nope")


def test_resolve_a_reproduced_habitat_folder(tmp_path: Path) -> None:
    inputs = Inputs({"scenes": tmp_path})  # recorded without its habitat: prefix
    try:
        import habitat_sim  # noqa: F401
    except ImportError:
        with pytest.raises(MissingDependencyError, match="habitat-sim"):
            resolve_scenes(inputs, "scenes", kind="habitat", generated_count=0)
        return
    spec = resolve_scenes(inputs, "scenes", kind="habitat", generated_count=0)
    assert spec == SceneSpec("habitat", tmp_path) and inputs.locations["scenes"] == tmp_path


# -- load_scene_house ----------------------------------------------------------------------------


def test_a_read_house_is_stored_as_sorted_json_and_draws_nothing(tmp_path: Path) -> None:
    if not HOUSE.is_file():
        pytest.skip(f"needs {HOUSE}")
    from dataforge.world.assets import load_catalogue

    folder = tmp_path / "houses"
    folder.mkdir()
    shutil.copyfile(HOUSE, folder / "one.json")
    shutil.copyfile(HOUSE, folder / "two.json")
    units, source = plan_scene_units(
        SceneSpec("dir", folder), Inputs({"scenes": folder}), "scenes", split="train"
    )
    rng = np.random.default_rng(4)
    before = rng.bit_generator.state
    house, raw, origin = load_scene_house(
        "dir",
        source,
        units[1],
        rng,
        split="train",
        room_spec=None,
        max_attempts=10,
        catalogue=load_catalogue(),
    )
    assert rng.bit_generator.state == before
    assert house.name == "two" and house.rooms
    assert raw == json.loads(HOUSE.read_text())
    assert list(raw) == sorted(raw)
    assert origin == {"source": "dir", "index": 1, "name": "two.json"}
    assert house_bytes(raw) == json.dumps(raw, sort_keys=True, indent=1).encode()
