"""Houses: ProcTHOR houses made by procthor's own generator on the embedded world.

Inputs
    none: procthor's generator and databases (the ``procthor`` extra); nothing is downloaded.
Randomization and seeds
    one work unit per house (``house-000000``, ...); the unit's stream (global seed + unit id)
    draws procthor seeds until a house passes :func:`dataforge.world.validity.check_house`
    (at most ``max_attempts``). procthor's generator runs with ``PYTHONHASHSEED=0`` (see
    ``dataforge/world/procgen.py``), so a seed fixes the house on any machine.
Outputs
    ``houses/<unit>.json``: the house, ProcTHOR's house JSON (loads in AI2-THOR's
    ``CreateHouse`` and in ``dataforge houses show``). One stored episode per house:
    ``house_json`` uint8 (the same bytes), ``reachable`` float32 (N, 3) AI2-THOR-style reachable
    positions (0.25 m grid) from the agent's start, ``reachable_room`` int16 (index of the room
    of each, -1 none); metadata: procthor seed, rejected attempts with their reasons, room spec,
    rooms, counts of doors, windows and objects, objects per kind of support surface and
    sub-receptacle, reachable positions per room.
Invariants checked by validate
    see ``checks.INVARIANTS``.
Where it departs from ProcTHOR
    small objects are placed by the embedded world (box tops and container boxes, quarter-turn
    poses, box collision checks) instead of AI2-THOR's ``InitialRandomSpawn``; furniture groups
    are collision-checked on boxes (tables as their top, chairs as their lower half) instead of
    meshes; reachability is the embedded world's grid. See ``docs/houses.md``.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import numpy as np

from dataforge.inputs import Inputs
from dataforge.pipelines.houses.config import HousesConfig
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema

if TYPE_CHECKING:
    from dataforge.store.reader import Dataset
    from dataforge.world.assets import AssetCatalogue
    from dataforge.world.house import House

PIPELINE = "houses"
HOUSES_DIR = "houses"
PAPER = (
    "Deitke, VanderBilt, Herrasti, Weihs, Salvador, Ehsani, Han, Kolve, Farhadi, Kembhavi, "
    "Mottaghi. ProcTHOR: Large-Scale Embodied AI Using Procedural Generation. NeurIPS 2022."
)


def schema() -> Schema:
    return Schema(
        {
            "house_json": ArraySpec(
                "uint8", (None,), description="the house: ProcTHOR house JSON, UTF-8"
            ),
            "reachable": ArraySpec(
                "float32",
                (None, 3),
                units="m",
                description="reachable positions (0.25 m grid) from the agent's start",
            ),
            "reachable_room": ArraySpec(
                "int16", (None,), description="index into rooms of each reachable position, -1 none"
            ),
        }
    )


def house_bytes(house: Mapping[str, object]) -> bytes:
    """The stored form of a house: sorted keys, two-space indent, trailing newline."""
    return (json.dumps(house, sort_keys=True, indent=2) + "\n").encode()


def house_file(unit_id: str) -> str:
    return f"{HOUSES_DIR}/{unit_id}.json"


def units(cfg: HousesConfig) -> list[WorkUnit]:
    return [WorkUnit(f"house-{k:06d}", {"index": k}) for k in range(cfg.count)]


def produce(cfg: HousesConfig, unit: WorkUnit, rng: np.random.Generator) -> Iterator[Episode]:
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house
    from dataforge.world.procgen import generate_usable_house

    catalogue = load_catalogue()
    made = generate_usable_house(
        rng,
        name=unit.id,
        split=cfg.split,
        room_spec=cfg.room_spec,
        max_attempts=cfg.max_attempts,
        catalogue=catalogue,
    )
    data = house_bytes(made.raw)
    house = load_house(made.raw, name=unit.id, catalogue=catalogue)
    check = made.check
    yield Episode(
        id=unit.id,
        arrays={
            "house_json": np.frombuffer(data, np.uint8),
            "reachable": check.reachable.astype(np.float32),
            "reachable_room": check.reachable_room.astype(np.int16),
        },
        metadata={
            "procthor_seed": made.seed,
            "rejected": list(made.rejected),
            "room_spec": house.metadata.get("roomSpecId"),
            "rooms": [{"id": r.id, "type": r.room_type} for r in house.rooms],
            "counts": house_counts(house),
            "surfaces": surface_counts(house, catalogue),
            "reachable_per_room": check.per_room,
            "file": house_file(unit.id),
        },
    )


def house_counts(house: House) -> dict[str, int]:
    return {
        "rooms": len(house.rooms),
        "doors": len(house.doors),
        "windows": len(house.windows),
        "objects": len(house.objects),
        "floor_and_wall_objects": sum(o.parent_id is None for o in house.objects),
        "objects_on_receptacles": sum(o.parent_id is not None for o in house.objects),
    }


def surface_counts(house: House, catalogue: AssetCatalogue) -> dict[str, int]:
    """How many objects rest on each kind of support surface of their parent (``top``,
    ``shelf``, ``seat``, ``interior``, ``basin``; ``none``: tilted, dropped objects), and how
    many are in or on each kind of sub-receptacle (``in Drawer``, ``on Shelf``, ...)."""
    from dataforge.world.graph import world_graph

    graph = world_graph(house, catalogue)
    types = {r.id: r.object_type for r in graph.receptacles}
    out: Counter[str] = Counter()
    for node in graph.objects:
        if node.parent_id is None:
            continue
        out[node.surface_kind or "none"] += 1
        if node.element_id is not None:
            out[f"sub-receptacle {types[node.element_id]}"] += 1
    return dict(sorted(out.items()))


def house_files(ds: Dataset) -> dict[str, bytes]:
    """Each stored house as its own JSON file (the stored bytes, unchanged)."""
    return {ep.metadata["file"]: ep["house_json"].read().tobytes() for ep in ds.episodes()}


def build_job(cfg: HousesConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    """Check that procthor's generator is importable and the room spec known, record procthor's
    version in the config, and make the job (it reads no inputs)."""
    from dataforge.world.assets import load_catalogue
    from dataforge.world.procgen import require_generator

    require_generator(cfg.room_spec)
    cfg = cfg.with_(procthor=load_catalogue().version)
    return Job(
        pipeline=PIPELINE,
        name=f"{PIPELINE}-{cfg.split}-{cfg.count}",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(),
        units=tuple(units(cfg)),
        produce=functools.partial(produce, cfg),
        extra_files=house_files,
        description=f"{cfg.count} ProcTHOR houses ({cfg.split} assets) made by procthor's "
        "generator with dataforge's embedded world answering its simulator queries.",
        license_url="https://github.com/allenai/procthor",
        url="https://procthor.allenai.org",
        citation=PAPER,
    )
