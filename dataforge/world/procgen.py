"""New ProcTHOR houses from procthor's own ``HouseGenerator``, with this world as its simulator.

ProcTHOR's generator (``procthor.generation.HouseGenerator``) samples the floor plan, doors,
windows, materials, lights, floor and wall furniture by itself; it asks AI2-THOR only for the
small objects (``add_small_objects``: ``CreateHouse``, ``SpawnAsset``, ``OpenObject``,
``InitialRandomSpawn``, ``DisableObject``) and to let dropped objects settle
(``AdvancePhysicsStep``). :class:`EmbeddedController` answers exactly those actions from the
embedded world: ``InitialRandomSpawn`` is :meth:`World.spawn` on the named receptacle (a top
surface, or inside a container's box; collision-checked against every object placed so far),
and physics is a straight drop of a box onto the highest surface under it. Nothing else of
the generator is rewritten.

Where this departs from houses made with AI2-THOR:

- Small objects stand upright on one of the receptacle's support surfaces (its archetype's top,
  shelf boards, seat, the inside of a drawer or fridge: :mod:`dataforge.world.surfaces`), turned
  in quarter turns from the receptacle; AI2-THOR uses the asset's own receptacle trigger boxes
  and random poses. Dropped objects (baseball bats) fall straight down onto the highest surface
  under them and do not topple.
- Collision checks are between the boxes of the objects' parts (a pickupable object's whole
  box), so objects never overlap but may stand further apart than meshes would allow.

Determinism: the generator draws from Python's and numpy's global random state, seeded by
``HouseGenerator.set_seed``. Its asset-group table is sampled once per process and cached by
procthor; :func:`generate_house` fills that cache under a fixed seed first, so a house depends
only on its seed, not on which houses the process made before. procthor also iterates over sets
of strings, so the generator runs in a helper process started with ``PYTHONHASHSEED=0``
(:class:`WorkerProcess` here starts ``python -m dataforge.world.procgen_worker``, which imports
this module; this module never imports that one).

procthor's generation code imports ``ai2thor`` (for type hints), ``pandas``, ``trimesh`` and
``moviepy<2`` without declaring them: they are the ``procthor`` extra.
"""

from __future__ import annotations

import atexit
import copy
import dataclasses
import importlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from shapely.geometry import Point

from dataforge.errors import DataforgeError, MissingDependencyError, UsageError
from dataforge.world.assets import AssetCatalogue
from dataforge.world.boxes import OrientedBox, object_box
from dataforge.world.house import HouseObject, load_house
from dataforge.world.placement import World

if TYPE_CHECKING:
    from dataforge.world.validity import HouseCheck

SPLITS = ("train", "val", "test")
BELOW_FLOOR = -1.0  # m: a spawned object waits below this height until it is placed
TABLE_TYPES = frozenset({"DiningTable", "CoffeeTable", "SideTable", "Desk"})
CHAIR_TYPES = frozenset({"Chair", "Stool"})
TABLE_TOP_M = 0.05
# The 12 triangles of a box whose corners are ordered as in OrientedBox.corners() (x, y, z bits).
BOX_TRIANGLES = np.array(
    [
        [0, 1, 3],
        [0, 3, 2],
        [4, 6, 7],
        [4, 7, 5],  # x = -, x = +
        [0, 4, 5],
        [0, 5, 1],
        [2, 3, 7],
        [2, 7, 6],  # y = -, y = +
        [0, 2, 6],
        [0, 6, 4],
        [1, 5, 7],
        [1, 7, 3],  # z = -, z = +
    ]
)
_GENERATION_MODULES = ("attrs", "pandas", "fcl", "trimesh", "moviepy.editor", "ai2thor.controller")


class GenerationFailed(DataforgeError):
    """procthor's generator gave up on a seed (no valid floor plan, ...): try another seed."""


@dataclass
class Event:
    """The part of ``ai2thor.server.Event`` that procthor's generator reads."""

    metadata: dict[str, Any]

    def __bool__(self) -> bool:
        return bool(self.metadata.get("lastActionSuccess", False))


class EmbeddedController:
    """A stand-in for ``ai2thor.controller.Controller`` that answers from the embedded world.

    Only the actions ProcTHOR's generator sends are understood; any other action fails with
    ``lastActionSuccess = False`` and an ``errorMessage`` naming it. Every object of the
    current house is listed in ``metadata["objects"]`` (the object filter is ignored).
    """

    def __init__(self, catalogue: AssetCatalogue) -> None:
        self.catalogue = catalogue
        self.world: World | None = None
        self._pending: dict[str, HouseObject] = {}
        self._meta_cache: dict[HouseObject, tuple[Any, Any, Any]] = {}
        self.last_event = Event({"lastActionSuccess": True, "objects": []})

    # -- the controller interface -----------------------------------------------------------

    def reset(self, *args: Any, **kwargs: Any) -> Event:
        self.world = None
        self._pending = {}
        self._meta_cache = {}
        return self._event(True)

    def step(self, action: str | Mapping[str, Any] | None = None, **kwargs: Any) -> Event:
        """Run ``action`` like ai2thor 5.0.0's ``Controller.step``.

        A failed action returns a falsy event; with ``raise_for_failure=True`` it raises
        ``RuntimeError(errorMessage)`` instead, as ``Controller.step`` does for failures that are
        not about the call itself (it raises ``ValueError`` for an unknown action or a wrong
        argument whatever ``raise_for_failure`` says; an action the embedded world lacks is not
        that, it fails like any other). procthor's generator passes ``raise_for_failure=True``
        to ``OpenObject``.
        """
        if isinstance(action, Mapping):
            kwargs = {**action, **kwargs}
            action = kwargs.pop("action")
        raise_for_failure = bool(kwargs.pop("raise_for_failure", False))
        handler = getattr(self, f"_do_{action}", None)
        if handler is None:
            event = self._event(False, f"{action} is not supported by the embedded world")
        else:
            kwargs.pop("renderImage", None)
            event = handler(**kwargs)
        if raise_for_failure and not event:
            raise RuntimeError(event.metadata.get("errorMessage") or f"{action} failed")
        return event

    def stop(self) -> None:
        self.reset()

    # -- actions ----------------------------------------------------------------------------

    def _do_SetRandomSeed(self, seed: int = 0, **_: Any) -> Event:
        return self._event(True)

    def _do_ResetObjectFilter(self, **_: Any) -> Event:
        return self._event(True)

    def _do_SetObjectFilter(self, objectIds: Sequence[str] = (), **_: Any) -> Event:
        return self._event(True)

    def _do_CreateHouse(self, house: Mapping[str, Any], **_: Any) -> Event:
        loaded = load_house(copy.deepcopy(dict(house)), name="procthor", catalogue=self.catalogue)
        self.world = World(loaded, self.catalogue)
        self._pending = {}
        return self._event(True)

    def _do_SpawnAsset(
        self,
        assetId: str,
        generatedId: str,
        position: Mapping[str, float] | None = None,
        rotation: Mapping[str, float] | None = None,
        **_: Any,
    ) -> Event:
        """Create an object with its pivot at ``position`` (default: below the floor) that is
        not part of the house until ``InitialRandomSpawn`` places it.

        AI2-THOR's ``SpawnAsset`` (BaseFPSAgentController.cs) calls
        ``ProceduralTools.spawnSimObjPrefab`` with ``positionBoundingBoxCenter`` false: the
        asset's pivot, not its box centre, goes to ``position`` (``CreateHouse`` passes true: a
        house's positions are box centres). Pivots are unknown here, so every asset's pivot is
        taken to be the bottom centre of its box, which is where most ProcTHOR assets have it: in
        procthor's ``ai2thor-object-metadata.json`` (AI2-THOR's metadata of its scenes: pivot =
        ``position``, box = ``axisAlignedBoundingBox``; upright instances), 1,002 of 1,390 assets
        have the pivot within 5% of the box height from its bottom, 210 at its middle, 178
        elsewhere; about half have it within 5 mm of the box's vertical axis. The box centre is thus
        half the asset's height above ``position`` along the asset's turned up axis. procthor's
        generator spawns small objects 20 m below the floor before ``InitialRandomSpawn`` (so
        the pivot does not matter there); its furniture groups pass box centres, which AI2-THOR
        then, too, takes for pivots.
        """
        if assetId not in self.catalogue:
            return self._event(False, f"unknown assetId {assetId}")
        if generatedId in self._pending or (self.world is not None and generatedId in self.world):
            return self._event(False, f"object id {generatedId} exists already")
        from dataforge.world.boxes import rotation_matrix
        from dataforge.world.vectors import vec3

        info = self.catalogue.asset(assetId)
        rot = (0.0, 0.0, 0.0) if rotation is None else vec3([rotation[k] for k in "xyz"])
        if position is None:
            centre = (0.0, BELOW_FLOOR - info.size[1], 0.0)
        else:  # the pivot at the bottom centre: the box centre is half the height up from it
            up = rotation_matrix(rot) @ np.array([0.0, info.size[1] / 2, 0.0])
            centre = vec3(np.array([float(position[k]) for k in "xyz"]) + up)
        self._pending[generatedId] = HouseObject(
            generatedId, assetId, info.object_type, centre, rot
        )
        return self._event(True)

    def _do_GetInSceneAssetGeometry(self, objectId: str, **_: Any) -> Event:
        """The object's collision shape as one triangle mesh (see :func:`collision_box`)."""
        obj = self._pending.get(objectId)
        if obj is None and self.world is not None and objectId in self.world:
            obj = self.world.object(objectId)
        if obj is None:
            return self._event(False, f"no object {objectId}")
        corners = collision_box(obj, self.catalogue).corners()
        event = self._event(True)
        event.metadata["actionReturn"] = [
            {
                "vertices": [_xyz(c) for c in corners],
                "triangles": [int(i) for i in BOX_TRIANGLES.ravel()],
            }
        ]
        return event

    def _do_OpenObject(
        self,
        objectId: str,
        openness: float = 1.0,
        **_: Any,
    ) -> Event:
        if objectId in self._pending:
            obj = self._pending[objectId]
            if not self.catalogue.asset(obj.asset_id).openable:
                return self._event(False, f"{objectId} cannot be opened")
            self._pending[objectId] = dataclasses.replace(obj, openness=float(openness))
            return self._event(True)
        ok = self._world().open(objectId, float(openness))
        return self._event(ok, "" if ok else f"{objectId} cannot be opened")

    def _do_InitialRandomSpawn(
        self,
        randomSeed: int = 0,
        objectIds: Sequence[str] = (),
        receptacleObjectIds: Sequence[str] = (),
        **_: Any,
    ) -> Event:
        world = self._world()
        rng = np.random.default_rng(int(randomSeed))
        receptacles = [r for r in receptacleObjectIds if r in world and world.is_receptacle(r)]
        placed_all = True
        for oid in objectIds:
            obj = self._pending.get(oid)
            if obj is None:
                return self._event(False, f"{oid} was not spawned")
            for rid in receptacles:
                # Every surface of the receptacle counts, its drawers and cupboards too (procthor
                # passes a receptacle's child sim objects along with it), closed or not: AI2-THOR
                # fills closed containers, and the house JSON keeps the receptacle as it was.
                result = world.place(obj, rid, rng, prefer_open=False)
                if result.ok:
                    del self._pending[oid]
                    break
            else:
                placed_all = False
        return self._event(placed_all, "" if placed_all else "no free space on the receptacles")

    def _do_DisableObject(self, objectId: str, **_: Any) -> Event:
        if self._pending.pop(objectId, None) is not None:
            return self._event(True)
        world = self._world()
        if objectId in world:
            world.remove(objectId)
            return self._event(True)
        return self._event(False, f"no object {objectId}")

    def _do_AdvancePhysicsStep(self, **_: Any) -> Event:
        settle(self._world())
        return self._event(True)

    # -- internals --------------------------------------------------------------------------

    def _world(self) -> World:
        if self.world is None:
            raise UsageError("the embedded controller has no house: CreateHouse first")
        return self.world

    def _event(self, success: bool, error: str = "") -> Event:
        objects = []
        if self.world is not None:
            objects = [self._metadata(o) for o in self.world.objects]
        objects += [self._metadata(o) for o in self._pending.values()]
        self.last_event = Event(
            {
                "lastActionSuccess": bool(success),
                "errorMessage": error,
                "objects": objects,
                "actionReturn": None,
            }
        )
        return self.last_event

    def _metadata(self, obj: HouseObject) -> dict[str, Any]:
        """AI2-THOR's object metadata (the fields procthor reads), new dicts every time."""
        facts = self._meta_cache.get(obj)
        if facts is None:
            info = self.catalogue.asset(obj.asset_id)
            aabb = object_box(obj, self.catalogue).aabb()
            facts = self._meta_cache[obj] = (aabb.center, aabb.size, info)
        centre, size, info = facts
        return {
            "objectId": obj.id,
            "objectType": obj.object_type,
            "assetId": obj.asset_id,
            "position": _xyz(obj.position),
            "rotation": _xyz(obj.rotation),
            "axisAlignedBoundingBox": {"center": _xyz(centre), "size": _xyz(size)},
            "breakable": "CanBreak" in info.secondary_properties,
            "openable": info.openable,
            "openness": obj.openness or 0.0,
            "receptacle": info.receptacle,
            "parentReceptacles": None if obj.parent_id is None else [obj.parent_id],
        }


def collision_box(obj: HouseObject, catalogue: AssetCatalogue) -> OrientedBox:
    """The box procthor's furniture-group collision check sees for ``obj``.

    Its bounding box, except for tables (only their top, a 5 cm slab: the legs are thin) and
    chairs (their lower half, seat and legs: a backrest stands above a table's top). In
    ProcTHOR's released houses the only floor objects whose boxes overlap are chairs tucked under
    dining tables (20 pairs in the three example houses, up to 38% of a chair's footprint):
    AI2-THOR's mesh checks allow that, and so does this.
    """
    box = object_box(obj, catalogue)
    sx, sy, sz = box.size
    cx, cy, cz = box.center
    if obj.object_type in TABLE_TYPES:
        slab = min(TABLE_TOP_M, sy)
        return dataclasses.replace(box, center=(cx, cy + (sy - slab) / 2, cz), size=(sx, slab, sz))
    if obj.object_type in CHAIR_TYPES:
        return dataclasses.replace(box, center=(cx, cy - sy / 4, cz), size=(sx, sy / 2, sz))
    return box


def settle(world: World, only: set[str] | None = None) -> list[str]:
    """Let unsupported objects fall straight down onto the highest surface under their centre
    (the floor at y = 0, a receptacle's support surface, or another object's box top); return
    the ids that moved. ``only``: the ids that may move (default: all)."""
    moved = []
    objects = sorted(world.objects, key=lambda o: world.box(o.id).bottom)
    for obj in objects:
        if only is not None and obj.id not in only:
            continue
        box = world.box(obj.id)
        if box.bottom <= 1e-3:  # on the floor (or below it, waiting to be placed)
            continue
        centre = Point(box.center[0], box.center[2])
        support = 0.0
        for other in world.objects:
            if other.id == obj.id:
                continue
            surfaces = world.surfaces(other.id, all_surfaces=True)
            if surfaces:
                for surf in surfaces:
                    if surf.y <= box.bottom + 1e-3 and surf.polygon.contains(centre):
                        support = max(support, surf.y)
                continue
            ob = world.box(other.id)
            if ob.top <= box.bottom + 1e-3 and ob.footprint().contains(centre):
                support = max(support, ob.top)
        drop = box.bottom - support
        if drop > 1e-3:
            x, y, z = obj.position
            world.move(obj.id, (x, y - drop, z))
            moved.append(obj.id)
    return moved


def generate_house(
    seed: int,
    *,
    split: str = "train",
    room_spec: str | None = None,
    catalogue: AssetCatalogue | None = None,
) -> dict[str, Any]:
    """One new house (ProcTHOR house JSON) from procthor's generator and this world.

    ``room_spec``: a room spec id of ProcTHOR-10K's sampler (e.g. ``"kitchen"``,
    ``"2-bed-1-bath"``, see :func:`room_spec_ids`), or several comma-separated, one of which
    procthor draws with ProcTHOR-10K's weights; None samples one as ProcTHOR-10K does. The
    house's ``metadata.roomSpecId`` says which.

    procthor iterates over sets of strings (room ids, wall ids) while it draws random numbers,
    so a house depends on Python's string hashing. Unless this process runs with
    ``PYTHONHASHSEED=0``, the house is made in a helper process that does
    (:mod:`dataforge.world.procgen_worker`), so a seed gives the same house everywhere.
    """
    if split not in SPLITS:
        raise UsageError(f"split {split!r} must be one of {', '.join(SPLITS)}")
    if sys.flags.hash_randomization:
        return worker().generate(int(seed), split, room_spec)
    return generate_or_fail(int(seed), split, room_spec, catalogue)


def generate_or_fail(
    seed: int, split: str, room_spec: str | None, catalogue: AssetCatalogue | None = None
) -> dict[str, Any]:
    """:func:`generate_house_here`, with procthor's own exceptions (it raises bare
    ``Exception`` when no floor plan fits, asserts, ...) turned into :class:`GenerationFailed`
    so that the caller can try the next seed; dataforge's own errors pass unchanged."""
    try:
        return generate_house_here(seed, split, room_spec, catalogue)
    except DataforgeError:
        raise
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        raise GenerationFailed(f"seed {seed}: {type(exc).__name__}: {first}") from None


def generate_house_here(
    seed: int, split: str, room_spec: str | None, catalogue: AssetCatalogue | None = None
) -> dict[str, Any]:
    """:func:`generate_house` in this process (deterministic only with ``PYTHONHASHSEED=0``)."""
    from dataforge.world.assets import load_catalogue

    gen = _generation()
    controller = _controller(catalogue or load_catalogue(), split, gen)
    sampler = gen.PROCTHOR10K_ROOM_SPEC_SAMPLER
    if room_spec is not None:
        # HouseGenerator.sample() ignores its own room_spec and always asks the sampler, so
        # the sampler is narrowed to the specs asked for (weights as in ProcTHOR-10K).
        sampler = gen.RoomSpecSampler([sampler[s] for s in room_specs(room_spec)])
    generator = gen.HouseGenerator(
        split=split, seed=seed, room_spec_sampler=sampler, controller=controller
    )
    house, _ = generator.sample()
    return settled(house.data, catalogue or load_catalogue())


def settled(house: dict[str, Any], catalogue: AssetCatalogue) -> dict[str, Any]:
    """``house`` with its objects dropped onto the surfaces under them (:func:`settle`), as
    AI2-THOR's physics drops them when the house is loaded: procthor's generator puts the
    objects of an asset group (pillows on a bed, a television on its stand) at the box top of
    their parent, which for a bed is its headboard's height, not its mattress's. Only the
    ``y`` of moved objects changes, and only objects on receptacles move: wall objects
    (paintings, televisions on walls) hang where procthor put them."""
    world = World(load_house(copy.deepcopy(house), name="procthor", catalogue=catalogue), catalogue)
    children = {o.id for o in world.objects if o.parent_id is not None}
    moved = set(settle(world, only=children))
    if not moved:
        return house

    def visit(objects: list[dict[str, Any]]) -> None:
        for obj in objects:
            if obj.get("id") in moved:
                obj["position"] = dict(obj["position"], y=world.object(obj["id"]).position[1])
            visit(obj.get("children") or [])

    out = copy.deepcopy(house)
    visit(out.get("objects") or [])
    return out


def room_spec_ids() -> tuple[str, ...]:
    """Room spec ids of ProcTHOR-10K's sampler, in its order."""
    gen = _generation()
    return tuple(s.room_spec_id for s in gen.PROCTHOR10K_ROOM_SPEC_SAMPLER.room_specs)


# -- the helper process (PYTHONHASHSEED=0) -------------------------------------------------

WORKER_MODULE = "dataforge.world.procgen_worker"  # its main program: serves generate_or_fail


class WorkerProcess:
    """One generator process; :meth:`generate` sends a request and waits for the house.

    The process (``python -m dataforge.world.procgen_worker``) reads one JSON request per line
    and answers one JSON line per request on its own copy of stdout (procthor's prints go to
    stderr)."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", WORKER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )

    def generate(self, seed: int, split: str, room_spec: str | None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"seed": seed, "split": split, "room_spec": room_spec}
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            code = self.proc.poll()
            raise DataforgeError(f"the house generator process stopped (exit code {code})")
        reply = json.loads(line)
        if "house" in reply:
            return reply["house"]
        kind, message = reply.get("kind"), reply.get("error", "unknown error")
        if kind == "usage":
            raise UsageError(message)
        if kind == "missing":
            raise MissingDependencyError(message)
        raise GenerationFailed(message)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


_WORKER: WorkerProcess | None = None


def worker() -> WorkerProcess:
    """This process's generator process (started on first use, stopped at exit)."""
    global _WORKER
    if _WORKER is None or _WORKER.proc.poll() is not None:
        _WORKER = WorkerProcess()
        atexit.register(_WORKER.close)
    return _WORKER


# -- procthor's generation package ---------------------------------------------------------

_CONTROLLERS: dict[str, EmbeddedController] = {}


def room_specs(room_spec: str) -> tuple[str, ...]:
    """The ids of a ``--room-spec`` value (one id or several comma-separated), each checked
    against ProcTHOR-10K's (one line naming the unknown one)."""
    from dataforge.config import parse_list

    ids = parse_list(room_spec)
    known = room_spec_ids()
    for spec in ids or ("",):
        if spec not in known:
            raise UsageError(f"unknown --room-spec {spec!r}; choose from {', '.join(known)}")
    if len(set(ids)) != len(ids):
        raise UsageError(f"--room-spec {room_spec!r} names a room spec twice")
    return ids


def require_generator(room_spec: str | None = None) -> None:
    """Fail with one line when procthor's generator cannot be imported here, or when
    ``room_spec`` (``--room-spec``: one id or several comma-separated) is not ProcTHOR-10K's."""
    _generation()
    if room_spec is not None:
        room_specs(room_spec)


def _generation() -> Any:
    for name in _GENERATION_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            raise MissingDependencyError(
                f"house generation needs procthor's generator and the packages it imports "
                f"without declaring them ({name.split('.')[0]} is missing): "
                "pip install 'dataforge[procthor]'"
            ) from None
    gen = importlib.import_module("procthor.generation")
    _stable_room_hashes()
    _televisions_without_assets()
    return gen


def _stable_room_hashes() -> None:
    """procthor's floor-plan sampler grows rooms in the order of ``set(rooms)``, and its room
    classes hash by memory address, so one seed gave different houses in different runs. Hash
    them by room id instead (equality stays identity), which makes that order the seed's."""
    from procthor.utils import types

    def room_hash(room: Any) -> int:
        # An int's hash is itself, whatever PYTHONHASHSEED says (a str's is not).
        room_id = room.__dict__.get("room_id", room.__dict__.get("_room_id"))
        return room_id if isinstance(room_id, int) else 0

    types.LeafRoom.__hash__ = room_hash
    types.MetaRoom.__hash__ = room_hash


def _televisions_without_assets() -> None:
    """procthor's ``add_televisions`` returns two values instead of three when the split has no
    wall television (val and test have none), so every val and test house with a room that
    takes one failed with "not enough values to unpack". Such a split places no television:
    give back an empty count as the third value."""
    from procthor.generation import wall_objects

    original = wall_objects.add_televisions
    if getattr(original, "_dataforge_fixed", False):
        return

    def add_televisions(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        if len(out) == 2:
            from collections import defaultdict

            return defaultdict(int), *out
        return out

    add_televisions._dataforge_fixed = True  # type: ignore[attr-defined]
    wall_objects.add_televisions = add_televisions


def _controller(catalogue: AssetCatalogue, split: str, gen: Any) -> EmbeddedController:
    """One controller per split and process, with procthor's asset-group table cached under a
    fixed seed (the table is sampled with the global random state on first use)."""
    if split not in _CONTROLLERS:
        controller = EmbeddedController(catalogue)
        py_state, np_state = random.getstate(), np.random.get_state()
        random.seed(0)
        np.random.seed(0)
        try:
            from procthor.databases import get_spawnable_asset_group_info

            get_spawnable_asset_group_info(split=split, controller=controller)
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)
        _CONTROLLERS[split] = controller
    return _CONTROLLERS[split]


# -- small helpers -------------------------------------------------------------------------


def _xyz(v: Iterable[float]) -> dict[str, float]:
    return dict(zip("xyz", (float(a) for a in v), strict=True))


@dataclass(frozen=True)
class UsableHouse:
    """A generated house that passed :func:`~dataforge.world.validity.check_house`: its JSON,
    the procthor seed that made it, the seeds rejected before it (with their reasons) and the
    check (reachable positions, per room)."""

    raw: dict[str, Any]
    seed: int
    rejected: tuple[dict[str, Any], ...]
    check: HouseCheck


def generate_usable_house(
    rng: np.random.Generator,
    *,
    name: str,
    split: str = "train",
    room_spec: str | None = None,
    max_attempts: int = 10,
    catalogue: AssetCatalogue | None = None,
    min_floor_area: float = 0.0,
) -> UsableHouse:
    """Draw procthor seeds from ``rng`` until a house passes the usability checks (every room
    reachable from the start, every child resting on a surface) and has at least
    ``min_floor_area`` m^2 of floor; at most ``max_attempts``.

    The house JSON is returned as stored (round-tripped through sorted JSON), so what a caller
    checks is what it writes."""
    from dataforge.world.assets import load_catalogue
    from dataforge.world.validity import check_house

    catalogue = catalogue or load_catalogue()
    rejected: list[dict[str, Any]] = []
    for _ in range(max_attempts):
        seed = int(rng.integers(0, 2**31 - 1))
        try:
            raw = generate_house(seed, split=split, room_spec=room_spec)
        except GenerationFailed as exc:
            rejected.append({"seed": seed, "reason": str(exc)})
            continue
        raw = json.loads(json.dumps(raw, sort_keys=True))
        house = load_house(raw, name=name, catalogue=catalogue)
        if house.floor_area < min_floor_area:
            reason = f"floor area {house.floor_area:.1f} m^2 < {min_floor_area:g}"
            rejected.append({"seed": seed, "reason": reason})
            continue
        check = check_house(house, catalogue, surfaces=True)
        if not check.ok:
            rejected.append({"seed": seed, "reason": "; ".join(check.problems[:3])})
            continue
        return UsableHouse(raw, seed, tuple(rejected), check)
    reasons = "; ".join(f"seed {r['seed']}: {r['reason']}" for r in rejected[:3])
    raise DataforgeError(
        f"{name}: no usable house in {max_attempts} attempts ({reasons}); "
        "raise --max-attempts or choose another --room-spec"
        + (" or a smaller --min-floor-area" if min_floor_area > 0 else "")
    )
