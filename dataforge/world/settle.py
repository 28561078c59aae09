"""Objects rest on their furniture: settle the children of a house read from JSON.

ProcTHOR's house files record where AI2-THOR's physics left each child on the asset's own mesh,
and its generator records breakable objects 5 cm above their surface, before they drop. The
embedded world draws furniture from archetypes (:mod:`dataforge.world.archetypes`) whose
support surfaces only approximate those meshes, so a pillow recorded on top of a bed's box
hovers over the archetype's mattress and an egg hovers between a fridge's shelves.

:func:`settle` moves every child object (an object with a parent, level or tilted) so that its
box's bottom lies on a support surface of its parent (those of
:func:`~dataforge.world.surfaces.object_surfaces`, a non-receptacle's own surfaces included, as
the world graph reads them):

- a child whose bottom is within ``SETTLED_M`` (3 cm) of a surface under its centre stays where
  it is (AI2-THOR settles objects into soft receptacles, a bed or a sofa, by up to that much);
- otherwise it is dropped onto the highest surface under its centre that lies below its bottom,
  or at most ``RISE_M`` above it and below the child's centre (a child sunk into a board: a
  laptop whose recorded pose cuts a dresser's top), its bottom then at the surface's height;
- a child over no such surface is removed, with its own children; so is a small object whose
  drop would push it into another one (a phone recorded lying on the edge of a tennis racket
  on a bed: its bed is 4 cm below, the racket's box in the way).

A moved child carries its children along. The result is the house JSON re-read, with only the
moved objects' ``position.y`` changed and the removed ones taken out of their parent's
``children``; a :class:`SettleReport` lists both. A house whose children all rest is returned
unchanged (the same object), so settling is idempotent.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from dataforge.world.assets import AssetCatalogue
from dataforge.world.boxes import object_box
from dataforge.world.house import House, HouseObject, load_house
from dataforge.world.surfaces import object_surfaces, surfaces_over
from dataforge.world.validity import boxes_overlap

SETTLED_M = 0.03  # a child whose bottom is this close to a surface of its parent rests on it
RISE_M = 0.10  # a child sunk this far into a surface, its centre above it, is lifted onto it


@dataclass(frozen=True)
class SettleReport:
    """What :func:`settle` changed: metres each moved child's bottom went by its own move
    (negative: down) and why each removed object went, in file order."""

    moved: dict[str, float] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.moved or self.removed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dropped": len(self.moved),
            "removed": len(self.removed),
            "moved_m": {k: round(v, 4) for k, v in sorted(self.moved.items())},
            "removed_why": dict(self.removed),
        }


def settle(house: House, catalogue: AssetCatalogue) -> tuple[House, SettleReport]:
    """``house`` with every child resting on a surface of its parent, and what changed (see
    the module docstring)."""
    now = {o.id: o for o in house.objects}  # objects as settled so far (the rest as read)
    carried: dict[str, float] = {}  # object id -> how far its y moved, parents' moves included
    report = SettleReport()
    for obj in house.objects:  # parents before their children
        if obj.parent_id is None:
            continue
        if obj.parent_id not in now:
            report.removed[obj.id] = f"its parent {obj.parent_id} was removed"
            del now[obj.id]
            continue
        inherited = carried.get(obj.parent_id, 0.0)
        here = _lifted(obj, inherited)
        step = rest_shift(here, now[obj.parent_id], catalogue)
        why = _why_not(here, step, now, catalogue)
        if why is not None:
            report.removed[obj.id] = why
            del now[obj.id]
            continue
        assert step is not None  # _why_not gives a reason when no surface is under the object
        if step:
            report.moved[obj.id] = step
        if inherited + step:
            carried[obj.id] = inherited + step
        now[obj.id] = _lifted(here, step)
    if not report.changed:
        return house, report
    raw = _settled_raw(house.raw, carried, set(report.removed))
    return load_house(raw, name=house.name, catalogue=catalogue), report


def rest_shift(child: HouseObject, parent: HouseObject, catalogue: AssetCatalogue) -> float | None:
    """How far ``child`` must move up (negative: down) to rest on a surface of ``parent``: 0
    when it rests already, None when no surface of the parent is under it."""
    box = object_box(child, catalogue)
    surfaces = object_surfaces(parent, catalogue.asset(parent.asset_id), all_surfaces=True)
    over = surfaces_over(box, surfaces)
    if any(abs(box.bottom - s.y) <= SETTLED_M for s in over):
        return 0.0
    below = [s.y for s in over if s.y <= box.bottom + RISE_M and s.y < box.center[1]]
    return max(below) - box.bottom if below else None


def _why_not(
    obj: HouseObject,
    step: float | None,
    now: dict[str, HouseObject],
    catalogue: AssetCatalogue,
) -> str | None:
    """Why ``obj`` cannot move by ``step`` (None: it can)."""
    if step is None:
        return f"over no surface of its parent {obj.parent_id}"
    if not step or not _small_and_level(obj, catalogue):
        return None
    before, after = object_box(obj, catalogue), object_box(_lifted(obj, step), catalogue)
    for other in now.values():
        if other.id == obj.id or other.parent_id is None or not _small_and_level(other, catalogue):
            continue
        box = object_box(other, catalogue)
        if boxes_overlap(after, box) and not boxes_overlap(before, box):
            return f"would overlap {other.id} on its parent's surface"
    return None


def _small_and_level(obj: HouseObject, catalogue: AssetCatalogue) -> bool:
    """A pickupable object standing upright (the objects whose boxes may not overlap)."""
    level = abs(obj.rotation[0]) < 1.0 and abs(obj.rotation[2]) < 1.0
    return level and catalogue.asset(obj.asset_id).pickupable


def _lifted(obj: HouseObject, dy: float) -> HouseObject:
    if not dy:
        return obj
    x, y, z = obj.position
    return dataclasses.replace(obj, position=(x, y + dy, z))


def _settled_raw(raw: dict[str, Any], dy: dict[str, float], removed: set[str]) -> dict[str, Any]:
    """A copy of the house JSON with ``dy`` added to objects' ``position.y`` and the objects in
    ``removed`` taken out."""
    out = copy.deepcopy(raw)
    out["objects"] = _settled_nodes(out.get("objects", []), dy, removed)
    return out


def _settled_nodes(
    nodes: list[dict[str, Any]], dy: dict[str, float], removed: set[str]
) -> list[dict[str, Any]]:
    kept = []
    for node in nodes:
        if node["id"] in removed:
            continue
        if node["id"] in dy:
            node["position"]["y"] += dy[node["id"]]
        if node.get("children"):
            node["children"] = _settled_nodes(node["children"], dy, removed)
        kept.append(node)
    return kept
