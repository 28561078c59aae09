"""Is a house usable? ProcTHOR's own acceptance test, plus checks of where objects stand.

ProcTHOR keeps a generated house when, from the agent's start pose, ``GetReachablePositions``
reaches at least 5 positions in every room (``procthor.generation.house.House.validate``).
:func:`check_house` runs that test on the embedded world's navigation grid and adds checks that
AI2-THOR's physics would otherwise have enforced:

- every top-level object stands inside the house (its box centre is in a room's floor polygon);
- every child object rests on or inside its parent: its box centre is over the parent's
  footprint, its bottom no lower than the parent's bottom and at most ``max_hover`` above the
  parent's top (ProcTHOR records breakable objects 5 cm high, before they drop);
- with ``surfaces=True`` (houses this world generated), every child rests on a support surface
  of its parent (:func:`~dataforge.world.surfaces.surface_under`: a shelf board, a seat, the
  inside of a drawer); ProcTHOR's released houses were settled by AI2-THOR's physics on the
  assets' own meshes, whose shelf heights the archetypes only approximate, so they are held to
  the box rules above (:func:`~dataforge.world.settle.settle` moves them onto the archetypes'
  surfaces, after which they pass this check too);
- small (pickupable) objects on receptacles do not overlap one another (box test; furniture
  such as a television may overlap a bowl's box in AI2-THOR, whose meshes allow it; objects
  tilted by the simulator's physics, such as a bat leaning on a pillow, are not checked).

The same checks pass on ProcTHOR's released houses (tested on the three example houses).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from shapely.geometry import Point

from dataforge.world.assets import AssetCatalogue
from dataforge.world.boxes import OrientedBox, object_box
from dataforge.world.house import House

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

MIN_REACHABLE_PER_ROOM = 5  # ProcTHOR's House.validate
MAX_HOVER_M = 0.08  # a child's bottom may be this far above its parent's top
SINK_TOL_M = 0.02  # ... and this far below its parent's bottom
FOOTPRINT_TOL_M = 0.02
OVERLAP_TOL_M = 0.005  # boxes may touch or overlap by this much (AI2-THOR settles contacts)


@dataclass
class HouseCheck:
    """Problems found (empty: the house is usable) and the reachable positions they rest on."""

    problems: list[str] = field(default_factory=list)
    placement: list[str] = field(default_factory=list)  # those of the problems about objects
    reachable: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    reachable_room: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))
    per_room: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def agent_start(house: House) -> tuple[float, float, float] | None:
    """The agent's start position from ``metadata.agent.position`` (None when absent)."""
    pos = house.metadata.get("agent", {}).get("position")
    if not isinstance(pos, dict) or not all(k in pos for k in "xyz"):
        return None
    return (float(pos["x"]), float(pos["y"]), float(pos["z"]))


def check_house(
    house: House,
    catalogue: AssetCatalogue,
    *,
    min_per_room: int = MIN_REACHABLE_PER_ROOM,
    agent_radius: float = 0.2,
    surfaces: bool = False,
) -> HouseCheck:
    from dataforge.world.navigation import house_nav_grid

    out = HouseCheck()
    grid = house_nav_grid(house, catalogue, agent_radius=agent_radius)
    start = agent_start(house)
    if start is None:
        out.problems.append("metadata.agent.position is missing")
        reachable = grid.reachable_positions()
    elif grid.component_of(start) == 0:
        out.problems.append(f"the agent's start {start} is not navigable")
        reachable = grid.reachable_positions()
    else:
        reachable = grid.reachable_positions(start=start)
    out.reachable = reachable
    out.reachable_room = rooms_of(house, reachable[:, [0, 2]])
    counts = np.bincount(out.reachable_room[out.reachable_room >= 0], minlength=len(house.rooms))
    out.per_room = {r.id: int(n) for r, n in zip(house.rooms, counts, strict=True)}
    for room_id, n in out.per_room.items():
        if n < min_per_room:
            out.problems.append(
                f"{room_id}: {n} reachable positions from the start, fewer than {min_per_room}"
            )
    out.placement = object_problems(house, catalogue, surfaces=surfaces)
    out.problems += out.placement
    return out


def rooms_of(house: House, points_xz: np.ndarray) -> np.ndarray:
    """Index into ``house.rooms`` of the room containing each (x, z) point; -1 for none."""
    import shapely

    out = np.full(len(points_xz), -1, np.int16)
    pts = shapely.points(points_xz) if len(points_xz) else []
    for k, room in enumerate(house.rooms):
        poly = shapely.Polygon(room.polygon_xz)
        inside = shapely.covers(poly, pts) if len(points_xz) else np.zeros(0, bool)
        out[(out < 0) & inside] = k
    return out


def object_problems(
    house: House, catalogue: AssetCatalogue, *, surfaces: bool = False
) -> list[str]:
    from shapely.geometry import Polygon

    from dataforge.world.surfaces import object_surfaces, surface_under

    problems: list[str] = []
    boxes: dict[str, OrientedBox] = {o.id: object_box(o, catalogue) for o in house.objects}
    rooms = [Polygon(r.polygon_xz).buffer(FOOTPRINT_TOL_M) for r in house.rooms]
    for obj in house.objects:
        box = boxes[obj.id]
        centre = Point(box.center[0], box.center[2])
        if obj.parent_id is None:
            if not any(r.covers(centre) for r in rooms):
                problems.append(f"{obj.id} ({obj.object_type}) stands outside every room")
            continue
        parent = boxes[obj.parent_id]
        if not parent.footprint().buffer(FOOTPRINT_TOL_M).covers(centre):
            problems.append(f"{obj.id} is not over its parent {obj.parent_id}")
        if box.bottom < parent.bottom - SINK_TOL_M:
            problems.append(f"{obj.id} sinks below its parent {obj.parent_id}")
        if box.bottom > parent.top + MAX_HOVER_M:
            gap = box.bottom - parent.top
            problems.append(f"{obj.id} hovers {gap:.3f} m above its parent {obj.parent_id}")
        elif surfaces and abs(obj.rotation[0]) < 1.0 and abs(obj.rotation[2]) < 1.0:
            parent_obj = house.object(obj.parent_id)
            info = catalogue.asset(parent_obj.asset_id)
            if surface_under(box, object_surfaces(parent_obj, info, all_surfaces=True)) is None:
                problems.append(
                    f"{obj.id} rests on no support surface of its parent {obj.parent_id}"
                )
    children = [
        o
        for o in house.objects
        if o.parent_id is not None
        and catalogue.asset(o.asset_id).pickupable
        and abs(o.rotation[0]) < 1.0
        and abs(o.rotation[2]) < 1.0
    ]
    for a, b in itertools.combinations(children, 2):
        if boxes_overlap(boxes[a.id], boxes[b.id]):
            problems.append(f"{a.id} and {b.id} overlap")
    return problems


def boxes_overlap(a: OrientedBox, b: OrientedBox) -> bool:
    """Whether two small objects' boxes overlap by more than ``OVERLAP_TOL_M`` (in height and
    in plan, where the overlap must also be that deep)."""
    lo_a, hi_a = np.asarray(a.aabb().lo), np.asarray(a.aabb().hi)
    lo_b, hi_b = np.asarray(b.aabb().lo), np.asarray(b.aabb().hi)
    if np.any(np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b) <= OVERLAP_TOL_M):
        return False
    inter = a.footprint().intersection(b.footprint())
    return bool(inter.area > OVERLAP_TOL_M**2) and _depth(inter) > OVERLAP_TOL_M


def _depth(poly: BaseGeometry) -> float:
    """Smallest side of the overlap's minimum rotated rectangle (how deep boxes interpenetrate)."""
    rect = poly.minimum_rotated_rectangle
    xs, ys = rect.exterior.coords.xy
    sides = [float(np.hypot(xs[i + 1] - xs[i], ys[i + 1] - ys[i])) for i in range(2)]
    return min(sides)
