"""MultiON episodes in the challenge's file format (habitat-lab's ``MultiNav-v1`` dataset), to and
from the stored arrays.

A split is ``<split>/<split>.json.gz`` holding no episodes (``"episodes": []``) and the two
category maps, plus one ``<split>/content/<scene>.json.gz`` per scene with that scene's episodes
and the maps again, as habitat-lab's loader expects (``content_scenes_path =
{data_path}/content/{scene}.json.gz``). No episode is in both. Each episode has the keys of the
released ``3_ON_minival_val.json.gz``: ``episode_id`` (a string), ``scene_id``,
``start_position``, ``start_rotation`` (``[x, y, z, w]``, a unit quaternion about +y),
``info.geodesic_distance`` (the total oracle geodesic start -> g1 -> ... -> gm),
``start_room``, ``shortest_paths`` (``[[]]``, as released), ``goals`` (``object_category``,
``position``, ``radius``, ``room_id``, ``room_name``). Where the reference writes null and
dataforge knows the value (the rooms of a ProcTHOR house), the value is written; ``radius`` stays
null as released (habitat-lab reads the success distance from the task config).

Files are written deterministically (a scene's episodes in their stored order, which is
ascending episode id; compact JSON; gzip with no timestamp).
"""

from __future__ import annotations

import gzip
import json
import math
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.errors import MalformedInputError
from dataforge.inputs import read_json
from dataforge.pipelines.multion.cylinders import CATEGORIES, NAMES

TOP_KEYS = ("category_to_mp3d_category_id", "category_to_task_category_id", "episodes")


def split_file(split: str) -> str:
    return f"{split}/{split}.json.gz"


def content_file(split: str, scene: str) -> str:
    return f"{split}/content/{scene}.json.gz"


def category_maps() -> dict[str, dict[str, int]]:
    return {
        "category_to_mp3d_category_id": dict(CATEGORIES),
        "category_to_task_category_id": dict(CATEGORIES),
    }


def episode_dicts(arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> list[dict]:
    """The challenge-format episodes of one stored scene (arrays and metadata of
    ``generate.produce``)."""
    rooms = meta.get("rooms") or []
    scene_id = meta["scene_id"]

    def room(k: int) -> tuple[str | None, str | None]:
        return (rooms[k][0], rooms[k][1]) if 0 <= k < len(rooms) else (None, None)

    out = []
    ids = arrays["episode_id"]
    for n in range(len(ids)):
        goals = []
        for g in range(arrays["goal_category"].shape[1]):
            rid, rname = room(int(arrays["goal_room"][n, g]))
            goals.append(
                {
                    "object_category": NAMES[int(arrays["goal_category"][n, g])],
                    "position": [float(v) for v in arrays["goal_position"][n, g]],
                    "radius": None,
                    "room_id": rid,
                    "room_name": rname,
                }
            )
        out.append(
            {
                "episode_id": str(int(ids[n])),
                "scene_id": scene_id,
                "start_position": [float(v) for v in arrays["start_position"][n]],
                "start_rotation": [float(v) for v in arrays["start_rotation"][n]],
                "info": {"geodesic_distance": float(arrays["geodesic_distance"][n])},
                "start_room": room(int(arrays["start_room"][n]))[0],
                "shortest_paths": [[]],
                "goals": goals,
            }
        )
    return out


def document(episodes: list[dict]) -> dict[str, Any]:
    return {**category_maps(), "episodes": episodes}


def gz_json(doc: object) -> bytes:
    """Compact JSON, gzip-compressed without a timestamp (the same bytes every run)."""
    text = json.dumps(doc, separators=(",", ":"), allow_nan=False)
    return gzip.compress(text.encode(), compresslevel=6, mtime=0)


def write_gz_json(path: Path, doc: object) -> None:
    path.write_bytes(gz_json(doc))


# -- reading challenge-format files ------------------------------------------------------------


def read_document(path: Path | str, what: str = "MultiON episodes") -> dict[str, Any]:
    """A challenge-format ``.json.gz`` (or ``.json``), checked for the top-level keys; a
    ``start_rotation`` that is not a unit quaternion is normalised with a warning (the released
    minival file's are not)."""
    doc = read_json(Path(path), what)
    if not isinstance(doc, dict) or not isinstance(doc.get("episodes"), list):
        raise MalformedInputError(f"{path}: {what} must be an object with an 'episodes' list")
    odd = 0
    for ep in doc["episodes"]:
        rot = ep.get("start_rotation") if isinstance(ep, dict) else None
        if not (isinstance(rot, list) and len(rot) == 4):
            raise MalformedInputError(f"{path}: episode {_eid(ep)} has no 4-number start_rotation")
        norm = math.sqrt(sum(float(v) ** 2 for v in rot))
        if norm == 0:
            raise MalformedInputError(f"{path}: episode {_eid(ep)} has a zero start_rotation")
        if abs(norm - 1) > 1e-6:
            odd += 1
            ep["start_rotation"] = [float(v) / norm for v in rot]
    if odd:
        warnings.warn(
            f"{path}: {odd} start_rotation values were not unit quaternions; normalised",
            stacklevel=2,
        )
    return doc


def _eid(ep: object) -> str:
    return str(ep.get("episode_id")) if isinstance(ep, dict) else "?"


def read_split(root: Path, split: str) -> list[dict]:
    """Every episode of a split in the challenge layout under ``root`` (the split file's, then
    each content file's in name order)."""
    doc = read_document(root / split_file(split))
    episodes = list(doc["episodes"])
    content = root / split / "content"
    for path in sorted(content.glob("*.json.gz")) if content.is_dir() else []:
        episodes.extend(read_document(path)["episodes"])
    return episodes
