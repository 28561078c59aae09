"""The challenge's episode format: a generated content file has the released minival file's
schema, key by key and type by type, read through the same reader; and the split's files
follow habitat's layout (no episode in both, the same category maps)."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from dfhelpers import SHARED, needs_house_generator

from dataforge.errors import UsageError
from dataforge.pipelines.multion.episodes import content_file, read_document, split_file
from dataforge.store.manifest import read_manifest

MINIVAL = SHARED / "data" / "multion" / "3_ON_minival_val.json.gz"
# Where the released file writes null, ours may hold a value of the type habitat-lab documents
# for the field (MultiObjectGoal / MultiObjectNavEpisode: optional str / float).
OPTIONAL = {"start_room": "str", "radius": "number", "room_id": "str", "room_name": "str"}

pytestmark = [
    pytest.mark.slow,
    needs_house_generator(),
    pytest.mark.skipif(not MINIVAL.is_file(), reason=f"needs the released minival file {MINIVAL}"),
]


def kind(value: Any) -> str:
    """A JSON value's type, numbers as one (the released rotations mix 0 and floats)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "str", list: "list", dict: "dict"}[type(value)]


def kinds(items: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Every key of ``items`` (objects) with the set of types its values have."""
    out: dict[str, set[str]] = {}
    for item in items:
        for k, v in item.items():
            out.setdefault(k, set()).add(kind(v))
    return out


def assert_same_schema(real: list[dict[str, Any]], ours: list[dict[str, Any]], where: str) -> None:
    """Same keys in every object; per key, the same types, where a null of the real file may
    be the optional field's documented type in ours."""
    real_keys = {frozenset(x) for x in real}
    our_keys = {frozenset(x) for x in ours}
    assert len(real_keys) == 1, f"{where}: the released objects differ in keys"
    assert our_keys == real_keys, f"{where}: keys {our_keys} != released {real_keys}"
    rk, ok = kinds(real), kinds(ours)
    for key, types in rk.items():
        allowed = set(types)
        if "null" in types and key in OPTIONAL:
            allowed.add(OPTIONAL[key])
        assert ok[key] <= allowed, f"{where}.{key}: types {ok[key]} != released {types}"


@pytest.fixture(scope="module")
def dataset(tiny_dataset: Any) -> Path:
    return tiny_dataset("multion")


@pytest.fixture(scope="module")
def docs(dataset: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the released minival document, one generated content document), both read with
    ``read_document``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the released rotations are normalised with a warning
        real = read_document(MINIVAL)
    split = read_manifest(dataset).config["split"]
    content = sorted((dataset / split / "content").glob("*.json.gz"))
    assert content, "the tiny example wrote no content file"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ours are unit quaternions: no warning
        ours = read_document(content[0])
    return real, ours


def test_top_level_schema_is_the_released_files(docs: Any) -> None:
    real, ours = docs
    assert_same_schema([real], [ours], "top level")
    assert ours["episodes"], "a content file holds the scene's episodes"


def test_episode_goal_and_info_schema_is_the_released_files(docs: Any) -> None:
    real, ours = docs
    assert_same_schema(real["episodes"], ours["episodes"], "episode")
    assert_same_schema(
        [e["info"] for e in real["episodes"]], [e["info"] for e in ours["episodes"]], "info"
    )
    assert_same_schema(
        [g for e in real["episodes"] for g in e["goals"]],
        [g for e in ours["episodes"] for g in e["goals"]],
        "goal",
    )
    assert ours["episodes"]
    for e in ours["episodes"]:
        assert isinstance(e["episode_id"], str) and e["shortest_paths"] == [[]]
        assert len(e["start_position"]) == 3 and len(e["start_rotation"]) == 4
        assert all(len(g["position"]) == 3 for g in e["goals"])
        x, y, z, w = e["start_rotation"]
        assert x == 0 and z == 0 and math.isclose(math.hypot(y, w), 1.0, abs_tol=1e-9)
    for key in ("start_position", "start_rotation"):
        values = [v for e in real["episodes"] + ours["episodes"] for v in e[key]]
        assert {kind(v) for v in values} == {"number"}


def test_no_episode_is_in_both_the_split_file_and_a_content_file(dataset: Path) -> None:
    split = read_manifest(dataset).config["split"]
    head = read_document(dataset / split_file(split))
    assert head["episodes"] == []
    scenes = read_manifest(dataset).episode_ids
    assert len(scenes) >= 2  # ids restarting in each scene is what is checked below
    for scene in scenes:
        path = dataset / content_file(split, scene)
        assert path.is_file()
        assert read_document(path)["episodes"], f"{path} holds no episodes"


# -- habitat-lab's loader ---------------------------------------------------------------------
# saimwani/multiON 2ba4d25, habitat/datasets/pointnav/pointnav_dataset.py (PointNavDatasetV1:
# __init__, _get_scenes_from_folder, DEFAULT_SCENE_PATH_PREFIX) and
# habitat/datasets/multi_nav/multi_nav_dataset.py (MultiNavDatasetV1.from_json, line 131).
DEFAULT_SCENE_PATH_PREFIX = "data/scene_datasets/"
SCENES_DIR = "/root/multion/data/scene_datasets"


def habitat_loads(split_path: Path, scenes_dir: str) -> list[dict[str, Any]]:
    """The episodes habitat-lab's MultiNav-v1 dataset holds after loading ``split_path``, by
    its rules: the split file's episodes, then those of every ``content/<scene>.json.gz``
    (scenes sorted by name); each file's episodes renumbered ``episode_id = str(i)``;
    ``scene_id`` stripped of the default prefix and joined to ``SCENES_DIR``."""
    content = split_path.parent / "content"
    ext = ".json.gz"
    scenes = sorted(f.name[: -len(ext)] for f in content.iterdir() if f.name.endswith(ext))
    out = []
    for path in [split_path, *(content / f"{s}.json.gz" for s in scenes)]:
        deserialized = json.loads(gzip.decompress(path.read_bytes()))
        for i, episode in enumerate(deserialized["episodes"]):
            episode = dict(episode)
            episode["episode_id"] = str(i)
            if episode["scene_id"].startswith(DEFAULT_SCENE_PATH_PREFIX):
                episode["scene_id"] = episode["scene_id"][len(DEFAULT_SCENE_PATH_PREFIX) :]
            episode["scene_id"] = os.path.join(scenes_dir, episode["scene_id"])
            out.append(episode)
    return out


def teleport(episode: dict[str, Any]) -> dict[str, Any]:
    """An agent that reaches each goal and calls FOUND there, keyed by the ``scene_id`` and
    ``episode_id`` habitat gave the episode; its path is made of the episode's own points."""
    goals = [g["position"] for g in episode["goals"]]
    return {
        "scene_id": episode["scene_id"],
        "episode_id": episode["episode_id"],
        "actions": [1, 0] * len(goals),
        "positions": [episode["start_position"], *(p for g in goals for p in (g, g))],
    }


def test_the_ids_habitat_loads_key_the_episodes_scored(dataset: Path, tmp_path: Path) -> None:
    """Issue 40: habitat-lab renumbers each content file's episodes from 0. Ours are written
    that way, so trajectories keyed by what the loader gives an agent score the very episodes
    it ran: every goal found, each episode's stored total its file's."""
    from dataforge.pipelines.multion.score import score_datasets
    from dataforge.store import open_dataset

    split = read_manifest(dataset).config["split"]
    loaded = habitat_loads(dataset / split_file(split), SCENES_DIR)
    with open_dataset(dataset) as ds:
        stored = {ep.id: [str(int(i)) for i in ep["episode_id"].read()] for ep in ds.episodes()}
    assert len(loaded) == sum(len(v) for v in stored.values())
    assert len({e["episode_id"] for e in loaded}) < len(loaded)  # ids repeat across scenes
    for ids in stored.values():  # the loader's renumbering is the identity
        assert ids == [str(i) for i in range(len(ids))]
    t = tmp_path / "habitat.jsonl"
    t.write_text("".join(json.dumps(teleport(e)) + "\n" for e in loaded))
    report = score_datasets([dataset], [t])
    scored = {(s.scene, s.episode_id): s for s in report.episodes}
    assert len(scored) == len(loaded)
    for e in loaded:
        scene = Path(e["scene_id"]).name[: -len(".json")]
        s = scored[scene, e["episode_id"]]
        assert s.success == 1.0 and s.found == len(e["goals"])
        assert s.geodesic_distance == e["info"]["geodesic_distance"]
    assert report.overall()["success"] == 1.0
    # the numbering dataforge wrote before (one across the split): a trajectory that is another
    # episode's is refused, in one line, by its start
    later = {**teleport(loaded[1]), "episode_id": loaded[0]["episode_id"]}
    t.write_text(json.dumps(later) + "\n")
    with pytest.raises(UsageError, match="does not start at the start of the episode") as e:
        score_datasets([dataset], [t], subset=True)
    assert "\n" not in str(e.value)


def test_split_file_maps_are_the_released_maps(dataset: Path, docs: Any) -> None:
    real, _ = docs
    split = read_manifest(dataset).config["split"]
    head = read_document(dataset / split_file(split))
    for key in ("category_to_mp3d_category_id", "category_to_task_category_id"):
        assert head[key] == real[key]


def _points(e: dict[str, Any]) -> list[list[float]]:
    return [e["start_position"], *(g["position"] for g in e["goals"])]


@pytest.mark.parametrize("which", ["released", "ours"])
def test_geodesic_bounds_straight_line_and_one_height(docs: Any, which: str) -> None:
    """The total geodesic is at least the straight-line tour, and all points of an episode
    share one height (true of the released file too, to its float32 rounding)."""
    real, ours = docs
    doc, tol = (real, 1e-3) if which == "released" else (ours, 1e-9)
    assert doc["episodes"], which
    for e in doc["episodes"]:
        pts = _points(e)
        straight = sum(math.dist(a, b) for a, b in itertools.pairwise(pts))
        assert e["info"]["geodesic_distance"] >= straight - tol, e["episode_id"]
        assert max(p[1] for p in pts) - min(p[1] for p in pts) <= tol, e["episode_id"]
