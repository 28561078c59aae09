"""Houses built in code (one room; two rooms with a wall between), for tests of shapes,
surfaces, placement, sight and goals."""

from __future__ import annotations

from typing import Any

from dataforge.world.assets import AssetCatalogue


def _xyz(x: float, y: float, z: float) -> dict[str, float]:
    return {"x": x, "y": y, "z": z}


def standing(
    catalogue: AssetCatalogue, object_id: str, asset_id: str, x: float, z: float, yaw: float = 0.0
) -> dict[str, Any]:
    """A house object of ``asset_id`` standing on the floor at (x, z), turned by ``yaw``."""
    height = catalogue.asset(asset_id).size[1]
    return {
        "id": object_id,
        "assetId": asset_id,
        "kinematic": True,
        "position": _xyz(x, height / 2.0, z),
        "rotation": _xyz(0.0, yaw, 0.0),
    }


def resting(
    catalogue: AssetCatalogue, object_id: str, asset_id: str, x: float, bottom_y: float, z: float
) -> dict[str, Any]:
    """A (non-kinematic) child object of ``asset_id`` whose bottom is at ``bottom_y``, at (x, z)."""
    height = catalogue.asset(asset_id).size[1]
    return {
        "id": object_id,
        "assetId": asset_id,
        "kinematic": False,
        "position": _xyz(x, bottom_y + height / 2.0, z),
        "rotation": _xyz(0.0, 0.0, 0.0),
    }


def one_room_house(objects: list[dict[str, Any]], size: float = 6.0) -> dict[str, Any]:
    """A ``size`` x ``size`` m room with four 2.5 m walls, the agent in its middle."""
    corners = [(0.0, 0.0), (0.0, size), (size, size), (size, 0.0)]
    walls = []
    for k, (a, b) in enumerate(zip(corners, corners[1:] + corners[:1], strict=True)):
        walls.append(
            {
                "id": f"wall|1|{k}",
                "roomId": "room|1",
                "material": {"name": "PureWhite"},
                "polygon": [
                    _xyz(a[0], 0, a[1]),
                    _xyz(b[0], 0, b[1]),
                    _xyz(b[0], 2.5, b[1]),
                    _xyz(a[0], 2.5, a[1]),
                ],
            }
        )
    return {
        "rooms": [
            {
                "id": "room|1",
                "roomType": "LivingRoom",
                "floorMaterial": {"name": "WoodFloorsCross"},
                "floorPolygon": [_xyz(x, 0, z) for x, z in corners],
            }
        ],
        "walls": walls,
        "doors": [],
        "windows": [],
        "objects": objects,
        "metadata": {"agent": {"position": _xyz(size / 2, 0.95, size / 2)}},
    }


def _plan_wall(wid: str, room: str, a: tuple, b: tuple, empty: bool = False) -> dict[str, Any]:
    poly = [_xyz(a[0], 0, a[1]), _xyz(b[0], 0, b[1]), _xyz(b[0], 2.5, b[1]), _xyz(a[0], 2.5, a[1])]
    out: dict[str, Any] = {"id": wid, "roomId": room, "polygon": poly}
    if empty:
        out["empty"] = True
    return out


def two_rooms(shared: str, objects: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Rooms A = [0, 3] x [0, 6] and B = [3, 6] x [0, 6]. ``shared``: the wall x = 3 between them
    is ``"door"`` (solid, with a doorway at z 0.3..1.3) or ``"empty"`` (an open boundary);
    ``objects``: the house's objects (none by default)."""
    rooms, walls = [], []
    for name, x0 in (("A", 0.0), ("B", 3.0)):
        corners = [(x0, 0.0), (x0, 6.0), (x0 + 3, 6.0), (x0 + 3, 0.0)]
        rooms.append(
            {
                "id": f"room|{name}",
                "roomType": "LivingRoom",
                "floorPolygon": [_xyz(x, 0, z) for x, z in corners],
            }
        )
        for k, (a, b) in enumerate(zip(corners, corners[1:] + corners[:1], strict=True)):
            is_shared = a[0] == b[0] == 3.0
            walls.append(
                _plan_wall(
                    f"wall|{name}|{k}", f"room|{name}", a, b, shared == "empty" and is_shared
                )
            )
    doors = []
    if shared == "door":
        doors.append(
            {
                "id": "door|A|B",
                "assetId": "Doorway_9",
                "room0": "room|A",
                "room1": "room|B",
                "wall0": "wall|A|2",  # (3, 6) -> (3, 0)
                "wall1": "wall|B|0",  # (3, 0) -> (3, 6)
                "openable": True,
                "openness": 1,
                # offsets along wall0, which runs from (3, 6) to (3, 0)
                "holePolygon": [_xyz(4.7, 0, 0), _xyz(5.7, 2.1, 0)],
            }
        )
    return {
        "rooms": rooms,
        "walls": walls,
        "doors": doors,
        "windows": [],
        "objects": list(objects or []),
        "metadata": {"agent": {"position": _xyz(1.5, 0.95, 3.0)}},
    }
