"""Invariants and statistics of house datasets (registered in ``__init__``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import numpy as np

from dataforge.errors import DataforgeError
from dataforge.registry import PipelineStats
from dataforge.store.reader import Dataset, StoredEpisode

INVARIANTS = {
    "loads": "the stored house is ProcTHOR house JSON that loads, every assetId in procthor's "
    "database",
    "house-file": "houses/<id>.json holds exactly the stored house bytes",
    "rooms-reachable": "from the agent's start, every room has at least 5 reachable positions "
    "(ProcTHOR's test)",
    "reachable": "the stored reachable positions and their rooms are the house's, recomputed",
    "placement": "top-level objects stand in a room; objects rest on a support surface of "
    "their parent (a top, shelf, seat, interior or basin); small objects do not overlap",
    "metadata": "the counts, objects per support surface and reachable positions per room in "
    "the metadata are the house's",
}


def check_episode(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    from dataforge.pipelines.houses.generate import house_counts, surface_counts
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house
    from dataforge.world.validity import check_house

    data = ep["house_json"].read().tobytes()
    catalogue = load_catalogue()
    try:
        house = load_house(json.loads(data), name=ep.id, catalogue=catalogue)
    except (ValueError, DataforgeError) as exc:
        yield "loads", f"the stored house does not load: {exc}"
        return
    check = check_house(house, catalogue, surfaces=True)
    for problem in check.problems:
        yield ("placement" if problem in check.placement else "rooms-reachable"), problem
    reachable = ep["reachable"].read()
    if reachable.shape != check.reachable.shape or not np.allclose(
        reachable, check.reachable, atol=1e-5
    ):
        yield (
            "reachable",
            f"{len(reachable)} stored reachable positions differ from the house's "
            f"{len(check.reachable)}",
        )
    elif not np.array_equal(ep["reachable_room"].read(), check.reachable_room):
        yield "reachable", "the stored rooms of reachable positions differ from the house's"
    meta = ep.metadata
    if meta.get("counts") != house_counts(house):
        yield (
            "metadata",
            f"metadata counts {meta.get('counts')} differ from the house's {house_counts(house)}",
        )
    if meta.get("surfaces") != surface_counts(house, catalogue):
        yield "metadata", "metadata surfaces (objects per support surface) differ from the house's"
    if meta.get("reachable_per_room") != check.per_room:
        yield "metadata", "metadata reachable_per_room differs from the house's"


def check_dataset(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    for ep in ds.episodes():
        rel = ep.metadata.get("file", "")
        path = ds.root / rel
        if not rel or rel not in ds.manifest.files or not path.is_file():
            yield ep.id, "house-file", f"house file {rel!r} is missing (or not a dataset file)"
        elif path.read_bytes() != ep["house_json"].read().tobytes():
            yield ep.id, "house-file", f"{rel} differs from the stored house"


def stats(ds: Dataset) -> PipelineStats:
    specs: Counter[str] = Counter()
    room_types: Counter[str] = Counter()
    rooms, objects, small, reachable, rejected = [], [], [], [], 0
    surfaces: Counter[str] = Counter()
    for ep in ds.episodes():
        meta = ep.metadata
        surfaces.update(meta.get("surfaces", {}))
        specs[str(meta.get("room_spec"))] += 1
        room_types.update(r["type"] for r in meta["rooms"])
        counts = meta["counts"]
        rooms.append(float(counts["rooms"]))
        objects.append(float(counts["objects"]))
        small.append(float(counts["objects_on_receptacles"]))
        reachable.append(float(sum(meta["reachable_per_room"].values())))
        rejected += len(meta.get("rejected", []))
    return PipelineStats(
        counts={
            "houses": len(rooms),
            "rooms": int(sum(rooms)),
            "objects": int(sum(objects)),
            "objects on receptacles": int(sum(small)),
            "rejected attempts": rejected,
            "objects by support surface": dict(sorted(surfaces.items())),
            "room specs": dict(sorted(specs.items())),
            "room types": dict(sorted(room_types.items())),
        },
        distributions={
            "rooms per house": rooms,
            "objects per house": objects,
            "objects on receptacles per house": small,
            "reachable positions per house": reachable,
        },
    )
