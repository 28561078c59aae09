"""MultiON generation: the paper's rules on real houses for every m, the defaults, the scene
sources, impossible constraints ending a unit with one line (not a hang), the goal meshes read
from the challenge's glb files, and the command table."""

from __future__ import annotations

import gzip
import json
import math
import shutil
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import SHARED, needs_house_generator, run_cli

from dataforge.errors import InputNotFoundError, UsageError
from dataforge.pipelines.multion import cylinders, episodes
from dataforge.pipelines.multion.config import MultionConfig
from dataforge.pipelines.multion.sampling import Rules, SceneTooSmall, draw_episodes
from dataforge.pipelines.multion.scenes import SceneSpace, house_space
from dataforge.store import open_dataset
from dataforge.world.house import load_house
from dataforge.world.scene_sources import parse_scenes

HOUSES = SHARED / "data" / "procthor_houses"
OBJECTS = SHARED / "data" / "multion" / "objects"


def named_space(name: str) -> SceneSpace:
    path = HOUSES / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"needs {path}")
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house

    cat = load_catalogue()
    house = load_house(json.loads(path.read_text()), name=name, catalogue=cat)
    return house_space(house, cat, agent_radius=0.1, cell=0.05)


@pytest.fixture(scope="module")
def space_746() -> SceneSpace:
    return named_space("house_746")


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
def test_every_m_follows_the_rules(space_746: SceneSpace, m: int) -> None:
    rules = Rules(m, 2.0, 20.0, 0.1, 0.1, True)
    drawn, tally = draw_episodes(space_746, rules, np.random.default_rng(m), 30)
    assert len(drawn) == 30 and tally.episodes == 30
    for d in drawn:
        assert d.goals.shape == (m, 3) and len(set(d.categories.tolist())) == m
        assert set(d.categories.tolist()) <= set(range(8))
        pts = [d.start, *d.goals]
        for a, b, leg in zip(pts, pts[1:], d.legs, strict=False):
            assert 2.0 <= leg <= 20.0
            assert leg == pytest.approx(space_746.nav.distance(a, b), abs=1e-12)
            assert leg >= math.hypot(a[0] - b[0], a[2] - b[2]) - 1e-9
        for i, g in enumerate(d.goals):
            assert space_746.nav.navigable(g)
            assert math.hypot(g[0] - d.start[0], g[2] - d.start[2]) > 0.2
            for h in d.goals[i + 1 :]:
                assert math.hypot(g[0] - h[0], g[2] - h[2]) > 0.2
        assert space_746.reachable_with(d.start, d.goals, 0.2)
        q = d.rotation
        assert q[0] == q[2] == 0 and math.isclose(float(np.hypot(q[1], q[3])), 1.0)
        assert len({p[1] for p in pts}) == 1  # one floor


def test_a_scene_too_small_ends_with_one_line_not_a_hang() -> None:
    space = named_space("house_3703")  # about 6 m across
    rules = Rules(2, 15.0, 20.0, 0.1, 0.1, True)
    t0 = time.perf_counter()
    with pytest.raises(SceneTooSmall) as err:
        draw_episodes(space, rules, np.random.default_rng(0), 5)
    assert time.perf_counter() - t0 < 60
    text = str(err.value)
    assert "\n" not in text and "longest measured here is" in text
    longest = float(text.split("longest measured here is ")[1].split(" m")[0])
    assert 3.0 < longest < 15.0


def test_defaults_are_the_papers() -> None:
    assert MultionConfig().episodes == 50_000
    assert MultionConfig(split="val").episodes == MultionConfig(split="test").episodes == 12_500
    assert MultionConfig(episodes_per_scene=7).episodes == 7
    with pytest.raises(UsageError, match="--min-geodesic"):
        MultionConfig(min_geodesic=5.0, max_geodesic=4.0)


def test_generated_houses_are_multi_room_procthor_specs() -> None:
    """The default house pool: ProcTHOR-10K specs of 4 to 7 rooms (docs/multion.md, "House
    size"); procthor-10k and an old manifest's null hand procthor its own sampler."""
    from dataforge.pipelines.multion.config import PROCTHOR_10K

    pool = MultionConfig().room_spec
    assert pool == "4-room,5-room,2-bed-1-bath,2-bed-2-bath,7-room-3-bed"
    assert MultionConfig().generator_room_spec == pool
    assert MultionConfig(room_spec=PROCTHOR_10K).generator_room_spec is None
    assert MultionConfig.from_dict({"room_spec": None}).generator_room_spec is None
    assert MultionConfig().min_floor_area == 0.0


@needs_house_generator()
def test_the_house_pool_is_procthor_10k_specs() -> None:
    from dataforge.world.procgen import room_specs

    assert len(room_specs(str(MultionConfig().room_spec))) == 5


def test_scene_options_are_parsed_or_refused_in_one_line(tmp_path: Path) -> None:
    assert parse_scenes("generate:3").count == 3 and parse_scenes("generate").count == 1
    with pytest.raises(UsageError, match="generate:K"):
        parse_scenes("generate:0")
    with pytest.raises(InputNotFoundError, match="not found"):
        parse_scenes(str(tmp_path / "nope"))
    with pytest.raises(InputNotFoundError, match="Habitat"):
        parse_scenes(f"habitat:{tmp_path / 'nope'}")
    assert parse_scenes(str(tmp_path)).kind == "dir"


def test_glb_cylinders_match_the_built_in_facts() -> None:
    if not OBJECTS.is_dir():
        pytest.skip(f"needs {OBJECTS}")
    read = cylinders.cylinders(OBJECTS)
    built = cylinders.cylinders(None)
    assert list(read) == list(cylinders.CATEGORIES)
    for name, mesh in read.items():
        assert mesh.radius == pytest.approx(0.1, abs=1e-3)
        assert mesh.height == pytest.approx(1.5, abs=1e-3)  # the paper's text says 0.75
        lo, hi = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
        assert np.allclose((lo + hi) / 2, 0, atol=1e-6)  # centred: half below the floor
        assert hi[1] - lo[1] > 5 * (hi[0] - lo[0])  # upright (the glb is Z-up)
        assert mesh.color == built[name].color
    assert read["cylinder_pink"].color == (251, 0, 255)  # the paper's magenta


def test_reading_the_released_file_normalises_its_rotations() -> None:
    path = SHARED / "data" / "multion" / "3_ON_minival_val.json.gz"
    if not path.is_file():
        pytest.skip(f"needs {path}")
    raw = json.loads(gzip.decompress(path.read_bytes()))
    norms = [math.hypot(*e["start_rotation"]) for e in raw["episodes"]]
    assert min(norms) < 0.5 < 1.1 < max(norms)  # as released: not unit quaternions
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        doc = episodes.read_document(path)
    assert any("normalised" in str(w.message) for w in caught)
    assert all(math.isclose(math.hypot(*e["start_rotation"]), 1.0) for e in doc["episodes"])


@pytest.mark.slow
def test_a_folder_of_houses_with_real_meshes(tmp_path: Path) -> None:
    if not (HOUSES / "house_746.json").is_file() or not OBJECTS.is_dir():
        pytest.skip("needs the shared ProcTHOR houses and MultiON objects")
    folder = tmp_path / "houses"
    folder.mkdir()
    shutil.copy(HOUSES / "house_746.json", folder / "house_746.json")
    out = tmp_path / "ds"
    args = ["multion", "generate", "--m", "3", "--split", "test", "--episodes-per-scene", "25"]
    r = run_cli(
        *args,
        "--scenes",
        str(folder),
        "--data-dir",
        str(SHARED / "data"),
        "--out",
        str(out),
        "--quiet",
    )
    assert r.returncode == 0, r.stderr
    assert "goal cylinders: glb" in r.stdout
    doc = episodes.read_document(out / "test" / "content" / "house_746.json.gz")
    assert len(doc["episodes"]) == 25
    assert {e["scene_id"] for e in doc["episodes"]} == {"procthor/house_746.json"}
    assert (out / "scenes" / "procthor" / "house_746.json").read_bytes()
    rooms = {e["goals"][0]["room_name"] for e in doc["episodes"]}
    assert rooms and None not in rooms  # ProcTHOR room types, not nulls
    with open_dataset(out) as ds:
        manifest = ds.manifest
        assert manifest.config["cylinders"] == "glb"
        meta = ds["house_746"].metadata
        house = load_house(json.loads((HOUSES / "house_746.json").read_text()), name="h")
        assert meta["floor_area_m2"] == pytest.approx(house.floor_area, abs=0.01)
        assert meta["room_spec"] == house.metadata.get("roomSpecId")
        assert any(k.startswith("data-dir:multion/objects/") for k in manifest.inputs["files"])
        assert any(k.startswith("scenes:") for k in manifest.inputs["files"])
    assert run_cli("validate", str(out)).returncode == 0


def test_the_oracle_is_a_multion_command_and_not_listed_on_its_own() -> None:
    top = run_cli("--help")
    assert top.returncode == 0
    assert " multion " in top.stdout and "multion-oracle" not in top.stdout
    sub = run_cli("multion", "--help")
    assert all(c in sub.stdout for c in ("generate", "oracle", "score"))
    oracle = run_cli("multion", "oracle", "--help")
    assert "EPISODES" in oracle.stdout and "--render" in oracle.stdout
