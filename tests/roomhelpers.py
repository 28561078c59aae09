"""A one-room house built in code, for tests of shapes, surfaces and placement."""

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
