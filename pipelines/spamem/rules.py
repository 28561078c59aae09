"""What SpaMEM's planners may do (§8.2): small pickupable assets only, never Toilet or Floor.

:class:`Rules` holds the spawnable object types, the receptacles a planner may target and
procthor's receptacle co-occurrence statistics (``receptacles.json``: how likely an object
type is on a receptacle type), and :meth:`Rules.check` says what is wrong with a proposed
action (the same check for every planner, and the feedback an LLM gets).

Spawnable types: :func:`dataforge.world.spawnable.small_pickupable_types` under the statistics
without the forbidden receptacles. A sub-receptacle (a dresser's drawer, a shelving unit's
shelf) takes its parent's statistics.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from dataforge.world.assets import AssetCatalogue
from dataforge.world.graph import ReceptacleNode, WorldGraph
from dataforge.world.spawnable import receptacle_pairs, small_pickupable_types, split_assets

T = TypeVar("T")

ACTIONS = ("spawn", "place", "remove")
FORBIDDEN_RECEPTACLES = frozenset({"Toilet", "Floor"})


@dataclass(frozen=True)
class Action:
    """One planner decision: ``object`` is an object type for spawn (``Mug``), an object id for
    place and remove; ``receptacle`` a receptacle id (an object, or a sub-receptacle
    ``<object id>|Drawer_2``) for spawn and place, None for remove."""

    action: str
    object: str
    receptacle: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "object": self.object, "receptacle": self.receptacle}

    @classmethod
    def from_dict(cls, d: Any) -> Action:
        rec = d.get("receptacle")
        return cls(str(d["action"]), str(d["object"]), None if rec in (None, "") else str(rec))


class Rules:
    def __init__(self, catalogue: AssetCatalogue, split: str | None = None) -> None:
        self.catalogue = catalogue
        self.split = split
        self.pairs = receptacle_pairs(catalogue, exclude=FORBIDDEN_RECEPTACLES)
        self.spawnable: tuple[str, ...] = small_pickupable_types(catalogue, self.pairs, split)

    def assets(self, object_type: str) -> tuple[str, ...]:
        """Asset ids of ``object_type`` usable in ``split`` (assets of no split: all)."""
        return split_assets(self.catalogue, object_type, self.split)

    def stats_type(self, node: ReceptacleNode, graph: WorldGraph) -> str:
        """The receptacle type whose statistics apply (a sub-receptacle's parent's)."""
        if node.parent_id is not None and node.object_type not in self.pairs:
            return graph.receptacle(node.parent_id).object_type
        return node.object_type

    def likelihood(self, object_type: str, node: ReceptacleNode, graph: WorldGraph) -> float:
        return float(self.pairs.get(self.stats_type(node, graph), {}).get(object_type, 0.0))

    def targets(self, graph: WorldGraph) -> tuple[ReceptacleNode, ...]:
        """Receptacles a planner may put things on or in: a usable surface, not forbidden."""
        return tuple(
            r
            for r in graph.receptacles
            if r.object_type not in FORBIDDEN_RECEPTACLES
            and self.stats_type(r, graph) not in FORBIDDEN_RECEPTACLES
            and any(s.usable for s in r.surfaces)
        )

    def movable(self, graph: WorldGraph) -> tuple[str, ...]:
        """Ids of objects a planner may place or remove: small pickupable objects resting on a
        receptacle with nothing on them."""
        parents = {o.parent_id for o in graph.objects if o.parent_id is not None}
        return tuple(
            o.id
            for o in graph.objects
            if o.object_type in self.spawnable and o.parent_id is not None and o.id not in parents
        )

    def check(self, action: Action, graph: WorldGraph) -> str | None:
        """What is wrong with ``action`` in ``graph`` (one sentence), or None."""
        if action.action not in ACTIONS:
            return f"'action' must be one of {', '.join(ACTIONS)}, not {action.action!r}"
        if action.action == "spawn":
            if action.object not in self.spawnable:
                return (
                    f"{action.object!r} cannot be spawned: choose a small pickupable type "
                    f"such as {', '.join(self.spawnable[:6])}"
                )
        else:
            ids = {o.id for o in graph.objects}
            if action.object not in ids:
                return f"there is no object {action.object!r} in the house"
            if action.object not in self.movable(graph):
                return (
                    f"{action.object} cannot be moved: only small objects resting on a receptacle"
                )
        if action.action == "remove":
            return None
        if action.receptacle is None:
            return f"{action.action} needs a 'receptacle'"
        known = {r.id: r for r in graph.receptacles}
        node = known.get(action.receptacle)
        if node is None:
            return f"there is no receptacle {action.receptacle!r} in the house"
        if node.id not in {r.id for r in self.targets(graph)}:
            return f"{action.receptacle} ({node.object_type}) is not a valid target"
        if action.action == "place":
            obj = graph.object(action.object)
            if action.receptacle in (obj.parent_id, obj.element_id):
                return f"{action.object} is already on {action.receptacle}"
        return None


def weighted_choice(rng: np.random.Generator, items: Iterable[T], weights: Iterable[float]) -> T:
    """One of ``items`` drawn with probability proportional to ``weights`` (all > 0)."""
    items, w = list(items), np.asarray(list(weights), dtype=np.float64)
    return items[int(rng.choice(len(items), p=w / w.sum()))]
