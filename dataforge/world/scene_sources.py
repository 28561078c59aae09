"""Where a pipeline's scenes come from: the ``--scenes`` option.

``--scenes`` accepts

- ``generate:K`` (``generate`` alone: K = 1): K new houses from procthor's generator on the
  embedded world, as ``dataforge houses generate`` makes them (same unit id and seed, same
  house);
- a folder of ProcTHOR house ``*.json`` files, or a ``.jsonl`` / ``.jsonl.gz`` file of houses
  (:mod:`dataforge.world.house_sources`; every file read is recorded with its sha256);
- ``habitat:SCENES_DIR``: every ``<scene>.glb`` under the folder that has a
  ``<scene>.navmesh`` beside it (e.g. ``<scan>/<scan>.glb``), read through habitat-sim; or, for
  pipelines on HSSD scenes with OVMM objects (``hssd=True``), a folder laid out like
  upstream's ``data/`` (:func:`hssd_layout`).

One scene is one work unit. :func:`parse_scenes` reads the option, :func:`resolve_scenes` turns
a job's inputs (or a reproduced config) into a :class:`SceneSpec` and checks that what it needs
is installed, :func:`plan_scene_units` makes the units (recording the files they read), and
:func:`load_scene_house` gives a unit's ProcTHOR house.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import InputNotFoundError, UsageError
from dataforge.inputs import Inputs
from dataforge.run import WorkUnit
from dataforge.world.house_sources import HouseSource, open_source

if TYPE_CHECKING:
    from dataforge.world.assets import AssetCatalogue
    from dataforge.world.house import House

HABITAT_PREFIX = "habitat:"
GENERATE_PREFIX = "generate:"


@dataclass(frozen=True)
class SceneSpec:
    """What ``--scenes`` says: its kind, and the location or count."""

    kind: str  # generate | dir | jsonl | habitat
    path: Path | None = None
    count: int = 0


def parse_scenes(text: str) -> SceneSpec:
    """The :class:`SceneSpec` of a ``--scenes`` value; a one-line error when it names nothing."""
    s = str(text).strip()
    if s.startswith(GENERATE_PREFIX) or s == "generate":
        raw = s[len(GENERATE_PREFIX) :] if ":" in s else "1"
        try:
            k = int(raw)
        except ValueError:
            k = -1
        if k < 1:
            raise UsageError(f"--scenes generate:K needs a house count K >= 1, got {text!r}")
        return SceneSpec("generate", count=k)
    if s.startswith(HABITAT_PREFIX):
        path = Path(s[len(HABITAT_PREFIX) :])
        if not path.is_dir():
            raise InputNotFoundError(f"--scenes {text}: {path} is not a folder of Habitat scenes")
        return SceneSpec("habitat", path)
    path = Path(s)
    if path.is_dir():
        return SceneSpec("dir", path)
    if path.is_file():
        return SceneSpec("jsonl", path)
    raise InputNotFoundError(
        f"--scenes {text}: not found (generate:K, a folder of house *.json, a .jsonl(.gz) of "
        "houses, or habitat:SCENES_DIR)"
    )


def unit_name(text: str) -> str:
    """A file-safe unit id from a scene name."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-") or "scene"
    return name[:128]


def habitat_scenes(root: Path) -> list[tuple[str, Path]]:
    """``(scene_id relative to root, glb)`` of every glb under ``root`` with a navmesh beside
    it, sorted."""
    out = []
    for glb in sorted(root.rglob("*.glb")):
        if glb.with_suffix(".navmesh").is_file():
            out.append((glb.relative_to(root).as_posix(), glb))
    if not out:
        raise InputNotFoundError(f"{root}: no <scene>.glb with a <scene>.navmesh beside it")
    return out


HSSD_SETS = ("amazon_berkeley", "google_scanned", "ai2thorhab", "hssd")


@dataclass(frozen=True)
class HssdLayout:
    """An HSSD + OVMM data folder as habitat-lab's OVMM configs lay it out (``data/``):
    ``hssd-hab/*.scene_dataset_config.json`` with ``hssd-hab/scenes/*.scene_instance.json``,
    the object configs ``objects/train_val/<set>/configs`` and the category tables
    ``objects/hssd-receptacles.csv`` and ``objects/object_categories.csv``."""

    root: Path
    dataset_config: Path
    scenes: tuple[tuple[str, Path], ...]  # (scene id, scene_instance.json), sorted
    object_dirs: tuple[Path, ...]
    receptacle_csv: Path
    object_csv: Path


def hssd_layout(root: Path) -> HssdLayout:
    """The :class:`HssdLayout` under ``root``, or a one-line error naming what is missing."""
    hab = root / "hssd-hab"
    configs = sorted(hab.glob("*.scene_dataset_config.json"))
    if len(configs) != 1:
        raise InputNotFoundError(
            f"{root}: expected one hssd-hab/*.scene_dataset_config.json, found {len(configs)}"
        )
    suffix = ".scene_instance.json"
    scenes = tuple((p.name[: -len(suffix)], p) for p in sorted((hab / "scenes").glob("*" + suffix)))
    if not scenes:
        raise InputNotFoundError(f"{hab / 'scenes'}: no *{suffix}")
    dirs = tuple(
        d for s in HSSD_SETS if (d := root / "objects" / "train_val" / s / "configs").is_dir()
    )
    if not dirs:
        raise InputNotFoundError(
            f"{root / 'objects' / 'train_val'}: no <set>/configs for any of {', '.join(HSSD_SETS)}"
        )
    csvs = [root / "objects" / n for n in ("hssd-receptacles.csv", "object_categories.csv")]
    for c in csvs:
        if not c.is_file():
            raise InputNotFoundError(f"{c}: missing (it comes with the OVMM objects)")
    return HssdLayout(root, configs[0], scenes, dirs, csvs[0], csvs[1])


def house_scene_names(source: HouseSource) -> list[str]:
    """A scene name per house of ``source``: a file's stem, or ``<file>-<k:06d>`` per line."""
    if source.kind == "dir":
        return [unit_name(Path(n).stem) for n in source.names]
    return [f"{unit_name(source.path.name.split('.')[0])}-{k:06d}" for k in range(len(source))]


def resolve_scenes(
    inputs: Inputs,
    location: str,
    *,
    kind: str,
    generated_count: int,
    room_spec: str | None = None,
) -> SceneSpec:
    """The scenes of a job: ``inputs``' ``location`` when given (on reproduce a Habitat folder
    is recorded without its prefix: ``kind`` says so), else ``generated_count`` houses when
    ``kind`` is ``generate``. Checks that procthor's generator (with ``room_spec``) or
    habitat-sim is installed when the scenes need it, and leaves ``inputs.locations`` as the
    manifest records it: no location for a count, the bare folder for Habitat scenes. The
    caller keeps ``spec.kind`` and ``spec.count`` in its config."""
    if location in inputs:
        text = str(inputs.root(location))
        if kind == "habitat" and not text.startswith(HABITAT_PREFIX):
            text = HABITAT_PREFIX + text  # reproduce: the recorded location is the folder
        spec = parse_scenes(text)
    elif kind == "generate" and generated_count:
        spec = SceneSpec("generate", count=generated_count)
    else:
        raise UsageError("this run needs --scenes")
    if spec.kind == "generate":
        inputs.locations.pop(location, None)  # a count, not a location: it is in the config
        from dataforge.world.procgen import require_generator

        require_generator(room_spec)
    elif spec.kind == "habitat":
        from dataforge.nav.oracle import HabitatOracle

        HabitatOracle.require()
        inputs.locations[location] = spec.path  # type: ignore[assignment]
    return spec


def plan_scene_units(
    spec: SceneSpec, inputs: Inputs, location: str, *, split: str, hssd: bool = False
) -> tuple[list[WorkUnit], HouseSource | None]:
    """One unit per scene, recording in ``inputs`` (under ``location``) the files the scenes
    are read from, and the house source to read them with (None: generated or Habitat).
    ``hssd``: Habitat scenes are an HSSD data folder (:func:`hssd_layout`), not glb scenes.

    Unit ids: ``procthor-<split>-<k:06d>`` (generated), the glb's stem (Habitat), the scene
    id (an HSSD folder, :func:`hssd_layout`), the house file's stem or ``<file>-<k:06d>`` (a
    JSON-lines file); a repeated id gets ``-1``, ``-2``... Params: ``index`` (houses) or
    ``scene_id`` (and ``navmesh`` for glb scenes), and ``ordinal``."""
    if spec.kind == "generate":
        names = [f"procthor-{split}-{k:06d}" for k in range(spec.count)]
        params: list[dict[str, Any]] = [{"index": k} for k in range(spec.count)]
        return _units(names, params), None
    if spec.kind == "habitat" and hssd:
        root = Path(spec.path or ".").resolve()
        layout = hssd_layout(root)
        for path in (layout.dataset_config, layout.receptacle_csv, layout.object_csv):
            inputs.file(location, path.relative_to(root), "HSSD / OVMM metadata")
        names, params = [], []
        for scene_id, path in layout.scenes:
            inputs.file(location, path.relative_to(root), "HSSD scene instance")
            names.append(unit_name(scene_id))
            params.append({"scene_id": scene_id})
        return _units(names, params), None
    if spec.kind == "habitat":
        root = Path(spec.path or ".").resolve()
        names, params = [], []
        for scene_id, glb in habitat_scenes(root):
            navmesh = glb.with_suffix(".navmesh")
            inputs.file(location, navmesh.relative_to(root), "Habitat navmesh")
            names.append(unit_name(glb.stem))
            params.append({"scene_id": scene_id, "navmesh": str(navmesh)})
        return _units(names, params), None
    source = open_source(spec.path or Path("."))
    for k in range(len(source)) if source.kind == "dir" else [0]:
        inputs.file(location, source.rel(k), "ProcTHOR house")
    names = house_scene_names(source)
    return _units(names, [{"index": k} for k in range(len(source))]), source


def _units(names: list[str], params: list[dict[str, Any]]) -> list[WorkUnit]:
    seen: dict[str, int] = {}
    units = []
    for ordinal, (name, p) in enumerate(zip(names, params, strict=True)):
        k = seen.get(name, 0)
        seen[name] = k + 1
        uid = name if k == 0 else f"{name}-{k}"
        units.append(WorkUnit(uid, {**p, "ordinal": ordinal}))
    return units


def load_scene_house(
    kind: str,
    source: HouseSource | None,
    unit: WorkUnit,
    rng: np.random.Generator,
    *,
    split: str,
    room_spec: str | None,
    max_attempts: int,
    catalogue: AssetCatalogue,
    min_floor_area: float = 0.0,
) -> tuple[House, dict[str, Any], dict[str, Any]]:
    """A house unit's house (``kind`` generate, dir or jsonl), its JSON as stored and what to
    record of where it came from. A generated house is drawn first from ``rng`` (as ``houses
    generate`` draws it, with at least ``min_floor_area`` m^2 of floor); a read house goes
    through sorted JSON, as a generated one does."""
    from dataforge.world.house import load_house

    k = int(unit.params["index"])
    if kind == "generate":
        from dataforge.world.procgen import generate_usable_house

        made = generate_usable_house(
            rng,
            name=unit.id,
            split=split,
            room_spec=room_spec,
            max_attempts=max_attempts,
            catalogue=catalogue,
            min_floor_area=min_floor_area,
        )
        raw = made.raw
        origin: dict[str, Any] = {"source": "generate", "procthor_seed": made.seed}
    else:
        assert source is not None
        raw = json.loads(json.dumps(source.read(k), sort_keys=True))
        origin = {"source": source.kind, "index": k, "name": source.names[k]}
    house = load_house(raw, name=unit.id, catalogue=catalogue)
    return house, raw, origin


def house_bytes(raw: dict[str, Any]) -> bytes:
    """A house's JSON as a dataset stores it: sorted keys, indent 1."""
    return json.dumps(raw, sort_keys=True, indent=1).encode()
