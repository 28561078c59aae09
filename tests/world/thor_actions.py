"""AI2-THOR 5.0.0's actions as its Unity build binds them, for strict stand-in controllers.

Written from the sources: ``ai2thor/controller.py`` of ai2thor 5.0.0 (Unity build commit
f0825767cd50d69f666c7f282e54abfe58f1e917) and allenai/ai2thor's Unity scripts of that era:
``BaseFPSAgentController.cs`` (GetReachablePositions, GetShortestPathToPoint, OpenObject,
DisableObject, RemoveFromScene, TeleportObject, PlaceObjectAtPoint, InitialRandomSpawn,
SetObjectFilter, ResetObjectFilter, AdvancePhysicsStep, SetRandomSeed, CreateHouse, SpawnAsset,
GetInSceneAssetGeometry), ``AgentManager.cs`` (AddThirdPartyCamera, UpdateThirdPartyCamera,
``DynamicServerAction.AllowedExtraneousParameters``), ``ActionDispatcher.cs`` (binding),
``ProceduralData.cs`` / ``ProceduralTools.cs`` (the house CreateHouse reads). Only parameters in
the stored sources are listed (``navMeshId``, newer than 5.0.0, is left out).

Binding (``ActionDispatcher.Dispatch``): of an action's overloads the one whose parameter names
match most of the given keys wins (ties: fewer required parameters, then fewer parameters);
then a key that is not one of its parameters (``InvalidArgumentsException``), a missing required
parameter (``MissingArgumentsActionException``) or a value that does not convert fails the
action with errorCode ``InvalidArgument`` / ``MissingArguments``, and ``Controller.step`` raises
``ValueError(errorMessage)`` for those whatever ``raise_for_failure`` says; other failures raise
``RuntimeError`` only with ``raise_for_failure=True``. :func:`check_step` raises the same
``ValueError``, so a stand-in that calls it fails a test that sends a wrong name or type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Keys every action accepts besides its own (AgentManager.cs). ``raise_for_failure`` never
# reaches Unity: Controller.step pops it.
EXTRANEOUS = frozenset(
    {
        "action",
        "sequenceId",
        "renderImage",
        "agentId",
        "renderObjectImage",
        "renderClassImage",
        "renderNormalsImage",
        "renderInstanceSegmentation",
    }
)

Param = tuple[str, bool]  # (type, required)


def _sig(**params: Param) -> dict[str, Param]:
    return params


REQ, OPT = True, False

# action -> overloads; each overload: parameter -> (type, required). Types: str, int, float, bool,
# Vector3 (an {x, y, z} dict of numbers), OptionalVector3 (a subset of it), lists of those
# ("[]"), a trailing "?" for a nullable value, ProceduralHouse (see house_problems).
ACTIONS: dict[str, tuple[dict[str, Param], ...]] = {
    "AddThirdPartyCamera": (
        _sig(
            position=("Vector3", REQ),
            rotation=("Vector3", REQ),
            fieldOfView=("float", OPT),
            skyboxColor=("str?", OPT),
            orthographic=("bool", OPT),
            orthographicSize=("float?", OPT),
            nearClippingPlane=("float?", OPT),
            farClippingPlane=("float?", OPT),
            antiAliasing=("str", OPT),
        ),
    ),
    "UpdateThirdPartyCamera": (
        _sig(
            thirdPartyCameraId=("int", OPT),
            position=("OptionalVector3?", OPT),
            rotation=("OptionalVector3?", OPT),
            fieldOfView=("float?", OPT),
            skyboxColor=("str?", OPT),
            orthographic=("bool?", OPT),
            orthographicSize=("float?", OPT),
            nearClippingPlane=("float?", OPT),
            farClippingPlane=("float?", OPT),
        ),
    ),
    "GetReachablePositions": (
        _sig(
            maxStepCount=("int?", OPT),
            directionsRelativeAgent=("bool", OPT),
            gridSize=("float?", OPT),
        ),
    ),
    "GetShortestPathToPoint": (
        _sig(position=("Vector3", REQ), target=("Vector3", REQ), allowedError=("float", OPT)),
        _sig(target=("Vector3", REQ), allowedError=("float", OPT)),
    ),
    "OpenObject": (
        _sig(
            objectId=("str", REQ),
            openness=("float", OPT),
            forceAction=("bool", OPT),
            returnToStart=("bool", OPT),
            ignoreAgentInTransition=("bool", OPT),
            stopAtNonStaticCol=("bool", OPT),
            physicsInterval=("float?", OPT),
            moveMagnitude=("float?", OPT),
        ),
        _sig(
            x=("float", REQ),
            y=("float", REQ),
            forceAction=("bool", OPT),
            openness=("float", OPT),
            moveMagnitude=("float?", OPT),
        ),
    ),
    "DisableObject": (_sig(objectId=("str", REQ)),),
    "RemoveFromScene": (_sig(objectId=("str", REQ)), _sig(objectIds=("str[]", REQ))),
    "TeleportObject": tuple(
        _sig(
            objectId=("str", REQ),
            **where,
            rotation=("Vector3", REQ),
            forceAction=("bool", OPT),
            forceKinematic=("bool", OPT),
            allowTeleportOutOfHand=("bool", OPT),
            makeUnbreakable=("bool", OPT),
        )
        for where in (
            {"position": ("Vector3", REQ)},
            {"positions": ("Vector3[]", REQ)},
            {"x": ("float", REQ), "y": ("float", REQ), "z": ("float", REQ)},
        )
    ),
    "PlaceObjectAtPoint": tuple(
        _sig(
            objectId=("str", REQ),
            **where,
            rotation=("Vector3?", OPT),
            forceKinematic=("bool", OPT),
        )
        for where in ({"position": ("Vector3", REQ)}, {"positions": ("Vector3[]", REQ)})
    ),
    "InitialRandomSpawn": (
        _sig(
            randomSeed=("int", OPT),
            forceVisible=("bool", OPT),
            placeStationary=("bool", OPT),
            numDuplicatesOfType=("any", OPT),
            excludedReceptacles=("str[]?", OPT),
            excludedObjectIds=("str[]?", OPT),
            objectIds=("str[]?", OPT),
            receptacleObjectIds=("str[]?", OPT),
            numPlacementAttempts=("int", OPT),
            allowFloor=("bool", OPT),
            allowMoveable=("bool", OPT),
        ),
    ),
    "SetObjectFilter": (_sig(objectIds=("str[]", REQ)),),
    "ResetObjectFilter": (_sig(),),
    "AdvancePhysicsStep": (
        _sig(
            timeStep=("float", OPT),
            simSeconds=("float?", OPT),
            allowAutoSimulation=("bool", OPT),
        ),
    ),
    "PausePhysicsAutoSim": (_sig(),),
    "SetRandomSeed": (_sig(seed=("int", REQ)),),
    "CreateHouse": (_sig(house=("ProceduralHouse", REQ)),),
    "SpawnAsset": (
        _sig(
            assetId=("str", REQ),
            generatedId=("str", REQ),
            position=("Vector3?", OPT),
            rotation=("Vector3?", OPT),
        ),
    ),
    "GetInSceneAssetGeometry": (
        _sig(
            objectId=("str", REQ),
            triangles=("bool", OPT),
            uv=("bool", OPT),
            normals=("bool", OPT),
        ),
    ),
}


def _overload(action: str, keys: set[str]) -> dict[str, Param]:
    overloads = ACTIONS[action]

    def rank(sig: dict[str, Param]) -> tuple[int, int, int]:
        required = sum(req for _, req in sig.values())
        return (-len(keys & sig.keys()), required, len(sig))

    return min(overloads, key=rank)


def check_step(action: str, params: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` as ai2thor 5.0.0's ``Controller.step`` would for this call: an
    unknown action, a parameter the chosen overload lacks, a missing one, a wrong type."""
    if action not in ACTIONS:
        raise ValueError(f"Invalid action: {action}")
    keys = set(params) - EXTRANEOUS
    sig = _overload(action, keys)
    unknown = sorted(keys - sig.keys())
    if unknown:
        raise ValueError(
            f"Action: {action!r} called with invalid argument(s): {unknown}; "
            f"expected arguments: {sorted(sig)}"
        )
    missing = sorted(name for name, (_, req) in sig.items() if req and name not in params)
    if missing:
        raise ValueError(f"action: {action} is missing the following arguments: {missing}")
    for name in sorted(keys):
        problem = _type_problem(params[name], sig[name][0], name)
        if problem:
            raise ValueError(f"action: {action} has an invalid argument: {problem}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_problem(value: Any, kind: str, where: str) -> str | None:
    """Why ``value`` does not bind to ``kind`` (None when it does)."""
    if kind == "any":
        return None
    if kind.endswith("?"):
        return None if value is None else _type_problem(value, kind[:-1], where)
    if kind.endswith("[]"):
        if not isinstance(value, list | tuple):
            return f"{where}: expected a list, got {type(value).__name__}"
        for i, item in enumerate(value):
            problem = _type_problem(item, kind[:-2], f"{where}[{i}]")
            if problem:
                return problem
        return None
    if kind == "str":
        ok = isinstance(value, str)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "float":
        ok = _is_number(value)
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "Vector3":
        ok = isinstance(value, Mapping) and set(value) == {"x", "y", "z"}
        ok = ok and all(_is_number(value[k]) for k in "xyz")
    elif kind == "OptionalVector3":
        ok = isinstance(value, Mapping) and set(value) <= {"x", "y", "z"}
        ok = ok and all(_is_number(v) or v is None for v in value.values())
    elif kind == "ProceduralHouse":
        problems = house_problems(value)
        return f"{where}: {problems[0]}" if problems else None
    else:
        raise AssertionError(f"unknown parameter type {kind}")
    return None if ok else f"{where}: {value!r} is not a {kind}"


# -- the house CreateHouse reads (ProceduralData.cs, ProceduralTools.CreateHouse) -------------

HOUSE_SCHEMA = "1.0.0"  # ProceduralTools.CURRENT_HOUSE_SCHEMA; CreateHouse throws on any other


def house_problems(house: Any) -> list[str]:
    """What keeps AI2-THOR 5.0.0 from reading ``house`` as a ``ProceduralHouse`` and building it.

    Checked: the schema version, every ``MaterialProperties`` field (an object with a string
    ``name`` where CreateHouse reads ``.name``; a name string does not deserialise), the holes
    of doors and windows (``holePolygon``, ``assetPosition``), vectors, and agent poses.
    """
    if not isinstance(house, Mapping):
        return [f"house is a {type(house).__name__}, not an object"]
    out: list[str] = []
    meta = house.get("metadata")
    schema = meta.get("schema") if isinstance(meta, Mapping) else None
    if schema != HOUSE_SCHEMA:
        out.append(f"metadata.schema is {schema!r}, not {HOUSE_SCHEMA!r}")
    params = house.get("proceduralParameters")
    if not isinstance(params, Mapping):
        out.append("proceduralParameters missing")
    else:
        out += _material_problems(params.get("ceilingMaterial"), "ceilingMaterial", named=True)
    for i, room in enumerate(_items(house, "rooms", out)):
        out += _material_problems(room.get("floorMaterial"), f"rooms[{i}].floorMaterial", True)
        for j, ceiling in enumerate(room.get("ceilings") or []):
            out += _material_problems(
                ceiling.get("material"), f"rooms[{i}].ceilings[{j}].material", True
            )
        out += _vectors(room.get("floorPolygon"), f"rooms[{i}].floorPolygon")
    for i, wall in enumerate(_items(house, "walls", out)):
        out += _material_problems(wall.get("material"), f"walls[{i}].material", named=True)
        out += _vectors(wall.get("polygon"), f"walls[{i}].polygon")
    for kind in ("doors", "windows"):
        for i, hole in enumerate(_items(house, kind, out)):
            where = f"{kind}[{i}]"
            if "material" in hole:
                out += _material_problems(hole["material"], f"{where}.material", named=False)
            polygon = hole.get("holePolygon")
            if not isinstance(polygon, list) or len(polygon) < 2:
                out.append(f"{where}.holePolygon: needs 2 corners (min, max)")
            else:
                out += _vectors(polygon, f"{where}.holePolygon")
            if _type_problem(hole.get("assetPosition"), "Vector3", f"{where}.assetPosition"):
                out.append(f"{where}.assetPosition: missing or not a Vector3")
    stack = [(f"objects[{i}]", o) for i, o in enumerate(_items(house, "objects", out))]
    while stack:
        where, obj = stack.pop()
        if obj.get("material") is not None:
            out += _material_problems(obj["material"], f"{where}.material", named=False)
        problem = _type_problem(obj.get("position"), "Vector3", f"{where}.position")
        if problem:
            out.append(problem)
        stack += [(f"{where}.children[{j}]", c) for j, c in enumerate(obj.get("children") or [])]
    poses = meta.get("agentPoses") if isinstance(meta, Mapping) else None
    for mode, pose in (poses or {}).items():
        for key in ("position", "rotation"):
            problem = _type_problem(pose.get(key), "Vector3", f"agentPoses.{mode}.{key}")
            if problem:
                out.append(problem)
    return out


def _items(house: Mapping[str, Any], key: str, out: list[str]) -> list[Mapping[str, Any]]:
    items = house.get(key, [])
    if not isinstance(items, list) or not all(isinstance(x, Mapping) for x in items):
        out.append(f"{key}: expected a list of objects")
        return []
    return items


def _material_problems(value: Any, where: str, named: bool) -> list[str]:
    """A ``MaterialProperties``: an object; CreateHouse reads ``.name`` of the named ones."""
    if not isinstance(value, Mapping):
        return [f"{where}: {value!r} is not a MaterialProperties object"]
    out = []
    if named and not isinstance(value.get("name"), str):
        out.append(f"{where}.name: missing")
    color = value.get("color")
    if color is not None and not (
        isinstance(color, Mapping) and all(_is_number(color.get(k)) for k in "rgb")
    ):
        out.append(f"{where}.color: {color!r} is not an {{r, g, b}} colour")
    return out


def _vectors(points: Any, where: str) -> list[str]:
    if not isinstance(points, Sequence) or isinstance(points, str):
        return [f"{where}: expected a list of Vector3"]
    problems = [_type_problem(p, "Vector3", f"{where}[{i}]") for i, p in enumerate(points)]
    return [p for p in problems if p]
