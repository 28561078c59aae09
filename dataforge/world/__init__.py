"""The embedded world: ProcTHOR houses, their assets, object boxes and a world graph.

``house`` (typed records over a house JSON, kept unchanged for writing back), ``assets`` (the
asset catalogue shipped in the ``procthor`` wheel: sizes, properties, receptacle statistics),
``boxes`` (oriented 3D boxes; AI2-THOR's position and rotation conventions, with the evidence),
``shapes`` and ``archetypes`` (a shaped asset per object type, with support surfaces and
sub-receptacles), ``surfaces`` (those surfaces in the world) and ``graph`` (rooms, receptacles
and their surfaces, objects with their room and surface). docs/world.md is the map.
"""

from dataforge.world.assets import AssetCatalogue, AssetInfo, TypeInfo, WallHole, load_catalogue
from dataforge.world.boxes import Aabb, OrientedBox, object_box, rotation_matrix, yaw_offset
from dataforge.world.graph import (
    ObjectNode,
    ReceptacleNode,
    RoomNode,
    WorldGraph,
    room_of,
    top_surface_cm2,
    world_graph,
)
from dataforge.world.house import House, HouseObject, Opening, Room, Wall, load_house

__all__ = [
    "Aabb",
    "AssetCatalogue",
    "AssetInfo",
    "House",
    "HouseObject",
    "ObjectNode",
    "Opening",
    "OrientedBox",
    "ReceptacleNode",
    "Room",
    "RoomNode",
    "TypeInfo",
    "Wall",
    "WallHole",
    "WorldGraph",
    "load_catalogue",
    "load_house",
    "object_box",
    "room_of",
    "rotation_matrix",
    "top_surface_cm2",
    "world_graph",
    "yaw_offset",
]
