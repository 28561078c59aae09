"""Matterport3D simulator connectivity files (``<scan>_connectivity.json``) as :class:`NavGraph`.

Each file is a list of viewpoints: ``image_id``, a row-major 4x4 ``pose`` (camera-to-world; the
position is elements 3, 7, 11), ``included`` and ``unobstructed`` (one flag per viewpoint of the
file). The navigation graph keeps included viewpoints and the edge i -> j wherever viewpoint i
marks j unobstructed and both are included; an edge weighs the distance between the positions.
"""

from __future__ import annotations

from pathlib import Path

from dataforge.errors import MalformedInputError
from dataforge.inputs import read_json
from dataforge.nav.graph import NavGraph

WHAT = "Matterport3D connectivity graph"


def connectivity_path(directory: Path, scan: str) -> Path:
    return Path(directory) / f"{scan}_connectivity.json"


def load_connectivity(path: Path) -> NavGraph:
    """The navigation graph of one scan (see the module docstring)."""
    data = read_json(path, WHAT)
    if not isinstance(data, list) or not data:
        raise MalformedInputError(f"{path}: {WHAT} must be a non-empty list of viewpoints")
    n = len(data)
    for k, item in enumerate(data):
        problem = _bad_record(item, n)
        if problem:
            raise MalformedInputError(f"{path}: viewpoint record {k}: {problem}")
    included = [k for k, item in enumerate(data) if item["included"]]
    positions = {data[k]["image_id"]: [data[k]["pose"][i] for i in (3, 7, 11)] for k in included}
    if len(positions) != len(included):
        raise MalformedInputError(f"{path}: duplicate image_id among included viewpoints")
    edges = [
        (data[k]["image_id"], data[j]["image_id"])
        for k in included
        for j, free in enumerate(data[k]["unobstructed"])
        if free and j != k and data[j]["included"]
    ]
    return NavGraph.from_edges(positions, edges, directed=True)


def _bad_record(item: object, n: int) -> str | None:
    if not isinstance(item, dict):
        return "is not an object"
    for key in ("image_id", "pose", "included", "unobstructed"):
        if key not in item:
            return f"missing {key!r}"
    if not isinstance(item["image_id"], str):
        return "image_id is not a string"
    pose = item["pose"]
    if not (
        isinstance(pose, list)
        and len(pose) == 16
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in pose)
    ):
        return "pose is not 16 numbers"
    if not isinstance(item["included"], bool):
        return "included is not a boolean"
    free = item["unobstructed"]
    if not (isinstance(free, list) and len(free) == n and all(isinstance(v, bool) for v in free)):
        return f"unobstructed is not a list of {n} booleans"
    return None
