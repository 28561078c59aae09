"""Planners: who decides the next action of a sequence.

Every planner answers :meth:`Planner.propose` with a :class:`Proposal`: the action (or None
when it gave no usable one) and a JSON record of how it decided, which the dataset logs
verbatim (``planner_log``) so that ``--planner replay:DIR`` can re-execute the same decisions
without deciding again. After a failed placement the sequence asks again with ``feedback``
saying what failed (the paper's recovery loop).

:class:`HeuristicPlanner` (``--planner heuristic``, the offline default) draws the action type
with the paper's shares (spawn 43.8 % / place 37.7 % / remove 18.5 %, Fig. 14) and then a target
by procthor's receptacle co-occurrence statistics: spawn draws an (object type, receptacle) pair
with probability proportional to how likely the type is on the receptacle's type, over every
receptacle of the house, sub-receptacles included (drawers, shelves, cupboards, a fridge's
inside), each divided by the square root of the number of targets its piece of furniture has
(a dresser is its top and six drawers): without that, drawers take over half of all
interactions; with it the receptacle shares come near the paper's (Drawer, then DiningTable,
Shelf, Bed, Cabinet on the example houses; the paper: Drawer, Shelf, DiningTable, Bed,
Dresser); place draws a movable
object, then a new receptacle for its type the same way; remove draws a movable object; place
and remove draw, half of the time, among the objects the sequence already spawned or placed
(:data:`REVISIT`). Targets that failed at this step are not drawn again.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from dataforge.pipelines.spamem.rules import Action, Rules, weighted_choice
from dataforge.world.graph import WorldGraph

ACTION_SHARES = {"spawn": 14536, "place": 12540, "remove": 6144}  # the paper's counts (Fig. 14)
REVISIT = 0.5
"""A place or remove acts, with this probability, on an object the sequence already spawned or
placed (ours; the paper's LLM decides freely): objects that move twice (STT) and lifespans
that begin and end inside the window (TL) are otherwise rare in a house of ~100 objects."""


@dataclass(frozen=True)
class PlanState:
    """What a planner sees before a decision."""

    sequence: str  # episode id
    step: int  # 1-based index of the action being decided
    steps: int  # actions in the sequence
    graph: WorldGraph
    history: tuple[dict[str, Any], ...]  # the actions done so far (their step records)
    failed: tuple[Action, ...] = ()  # decisions of this step whose execution failed


@dataclass(frozen=True)
class Proposal:
    action: Action | None
    record: dict[str, Any] = field(default_factory=dict)


class Planner(Protocol):
    name: str

    def begin(self, sequence: str, rng: np.random.Generator) -> None: ...

    def propose(self, state: PlanState, feedback: str | None) -> Proposal: ...

    def describe(self) -> dict[str, Any]: ...


class HeuristicPlanner:
    """The seeded default planner (see the module docstring)."""

    name = "heuristic"

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.rng = np.random.default_rng(0)

    def begin(self, sequence: str, rng: np.random.Generator) -> None:
        self.rng = rng

    def describe(self) -> dict[str, Any]:
        total = sum(ACTION_SHARES.values())
        return {
            "planner": self.name,
            "action_shares": {k: v / total for k, v in ACTION_SHARES.items()},
            "statistics": "procthor receptacles.json co-occurrence",
        }

    def propose(self, state: PlanState, feedback: str | None) -> Proposal:
        graph, rules = state.graph, self.rules
        failed = {(a.action, a.object, a.receptacle) for a in state.failed}
        movable: Sequence[str] = rules.movable(graph)
        kinds = [k for k in ACTION_SHARES if k == "spawn" or movable]
        kind = weighted_choice(self.rng, kinds, [ACTION_SHARES[k] for k in kinds])
        if kind != "spawn":
            movable = self._revisited(state, movable)
        action = None
        if kind == "remove":
            left = [o for o in movable if ("remove", o, None) not in failed]
            if left:
                action = Action("remove", left[int(self.rng.integers(len(left)))])
        elif kind == "place":
            action = self._place(graph, movable, failed)
        if action is None:
            action = self._spawn(graph, failed)
        record = {"kind": kind, "action": action.to_dict() if action else None}
        if feedback:
            record["feedback"] = feedback
        return Proposal(action, record)

    def _revisited(self, state: PlanState, movable: Sequence[str]) -> Sequence[str]:
        """The objects a place or remove draws from: with probability :data:`REVISIT` those
        this sequence already spawned or placed (when any is still movable), else all."""
        acted = {r["object"] for r in state.history if r.get("action") != "remove"}
        again = [o for o in movable if o in acted]
        if again and self.rng.random() < REVISIT:
            return again
        return movable

    def _pairs(
        self, graph: WorldGraph, types: Sequence[str], failed: set, kind: str, obj: str | None
    ) -> tuple[list[tuple[str, str]], list[float]]:
        pairs, weights = [], []
        targets = self.rules.targets(graph)
        siblings = Counter(n.parent_id or n.id for n in targets)
        for node in targets:
            share = 1.0 / math.sqrt(siblings[node.parent_id or node.id])
            for t in types:
                p = self.rules.likelihood(t, node, graph)
                if p > 0 and (kind, obj or t, node.id) not in failed:
                    pairs.append((t, node.id))
                    weights.append(p * share)
        return pairs, weights

    def _spawn(self, graph: WorldGraph, failed: set) -> Action | None:
        pairs, weights = self._pairs(graph, self.rules.spawnable, failed, "spawn", None)
        if not pairs:
            return None
        t, rec = weighted_choice(self.rng, pairs, weights)
        return Action("spawn", t, rec)

    def _place(self, graph: WorldGraph, movable: Sequence[str], failed: set) -> Action | None:
        order = list(movable)
        self.rng.shuffle(order)
        for oid in order[:8]:
            node = graph.object(oid)
            pairs, weights = self._pairs(graph, [node.object_type], failed, "place", oid)
            keep = [
                (p, w)
                for p, w in zip(pairs, weights, strict=True)
                if p[1] not in (node.parent_id, node.element_id)
            ]
            if keep:
                (_, rec) = weighted_choice(self.rng, [p for p, _ in keep], [w for _, w in keep])
                return Action("place", oid, rec)
        return None
