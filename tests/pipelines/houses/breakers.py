"""One breaker per houses invariant: each changes a stored house (and its houses/<id>.json copy,
where the invariant is not about the copy) so that exactly that invariant is broken, and
re-seals the manifest (tests/test_conformance.py runs them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sealing import edit_episode, edit_file

from dataforge.pipelines.houses.generate import house_bytes, house_file, surface_counts
from dataforge.world import load_catalogue, load_house

EPISODE = "house-000000"
Edit = Callable[[dict[str, Any], dict[str, Any]], None]  # (house, metadata), in place


def _edit_house(root: Path, edit: Edit) -> None:
    """Change the stored house and its metadata, and write the same house to its file."""
    data: dict[str, bytes] = {}

    def mutate(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        house = json.loads(a["house_json"].tobytes())
        edit(house, meta)
        data["bytes"] = house_bytes(house)
        a["house_json"] = np.frombuffer(data["bytes"], np.uint8)

    edit_episode(root, EPISODE, mutate)
    edit_file(root, house_file(EPISODE), lambda p: p.write_bytes(data["bytes"]))


def loads(root: Path) -> None:
    def edit(house: dict[str, Any], meta: dict[str, Any]) -> None:
        house["objects"][0]["assetId"] = "NoSuchAsset_1"

    _edit_house(root, edit)


def house_file_differs(root: Path) -> None:
    edit_file(root, house_file(EPISODE), lambda p: p.write_bytes(p.read_bytes() + b"\n"))


def rooms_reachable(root: Path) -> None:
    """A second room far from the first: nothing in it is reachable from the agent's start
    (the metadata is updated to match, so only ProcTHOR's reachability test fails)."""

    def edit(house: dict[str, Any], meta: dict[str, Any]) -> None:
        corners = [(50.0, 50.0), (50.0, 52.0), (52.0, 52.0), (52.0, 50.0)]
        room = dict(house["rooms"][0], id="room|99", children=[], ceilings=[])
        room["floorPolygon"] = [{"x": x, "y": 0, "z": z} for x, z in corners]
        house["rooms"].append(room)
        meta["counts"]["rooms"] += 1
        meta["reachable_per_room"]["room|99"] = 0
        meta["rooms"].append({"id": "room|99", "type": room["roomType"]})

    _edit_house(root, edit)


def reachable(root: Path) -> None:
    def mutate(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        a["reachable"][:, 0] += np.float32(0.25)

    edit_episode(root, EPISODE, mutate)


def placement(root: Path) -> None:
    """A child lifted half a metre above its parent (the metadata's surface counts follow, so
    only the placement invariant breaks)."""

    def edit(house: dict[str, Any], meta: dict[str, Any]) -> None:
        parent = next(o for o in house["objects"] if o.get("children"))
        parent["children"][0]["position"]["y"] += 0.5  # hovers half a metre above its parent
        catalogue = load_catalogue()
        meta["surfaces"] = surface_counts(load_house(house, catalogue=catalogue), catalogue)

    _edit_house(root, edit)


def metadata(root: Path) -> None:
    def mutate(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        meta["counts"]["objects"] += 1

    edit_episode(root, EPISODE, mutate)


BREAKERS = {
    "loads": loads,
    "house-file": house_file_differs,
    "rooms-reachable": rooms_reachable,
    "reachable": reachable,
    "placement": placement,
    "metadata": metadata,
}
