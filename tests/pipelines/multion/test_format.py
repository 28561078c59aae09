"""The challenge's episode format: a generated content file has the released minival file's
schema, key by key and type by type, read through the same reader; and the split's files
follow habitat's layout (no episode in both, the same category maps)."""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path
from typing import Any

import pytest
from dfhelpers import SHARED, needs_house_generator

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
    seen: set[str] = set()
    for path in sorted((dataset / split / "content").glob("*.json.gz")):
        ids = [e["episode_id"] for e in read_document(path)["episodes"]]
        assert len(set(ids)) == len(ids) and not seen & set(ids)
        seen |= set(ids)
    scenes = read_manifest(dataset).episode_ids
    assert seen and scenes  # content files with episodes, one per scene, were checked
    assert all((dataset / content_file(split, s)).is_file() for s in scenes)


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
