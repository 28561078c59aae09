"""``--planner llm``: the paper's Think-and-Act cycle (§8.2) through an OpenAI-compatible server.

Per step the model gets the system prompt (``templates/spamem/planner_system.txt``: actions,
the paper's constraints, the JSON answer) and the house as text (``planner_user.txt``: the
world graph's rooms, receptacles with type, box, support surfaces and free area in cm², the
objects resting on them; the movable objects; the spawnable types; the actions so far). Its
answer is parsed and checked against :data:`ACTION_SCHEMA` and :meth:`Rules.check` (an invalid
or impossible answer is retried with feedback, at most ``--llm-attempts`` answers). A failed
placement continues the same conversation with what failed (the recovery loop). Every dialog
is logged in the decision's record (``dialog``: the new messages, raw answers, parsed values,
problems, latency, token usage), which ``--planner replay:DIR`` re-executes without a server.
"""

from __future__ import annotations

import dataclasses
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.pipelines.spamem.planner import PlanState, Proposal
from dataforge.pipelines.spamem.rules import ACTIONS, Action, Rules
from dataforge.world.graph import WorldGraph

if TYPE_CHECKING:
    from dataforge.llm.client import LLMSettings
    from dataforge.llm.dialog import DialogResult


ACTION_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"enum": list(ACTIONS)},
        "object": {"type": "string", "minLength": 1},
        "receptacle": {"type": ["string", "null"]},
    },
    "required": ["action", "object"],
}
HISTORY_SHOWN = 10  # the latest actions listed in the prompt


def template(name: str) -> str:
    return (resources.files("dataforge.templates") / "spamem" / name).read_text("utf-8")


def _m(v: float) -> str:
    return f"{v:.2f}"


def house_text(graph: WorldGraph, rules: Rules) -> str:
    """The world graph as the prompt shows it (rooms, then their receptacles)."""
    rooms = {r.id: r for r in graph.rooms}
    room_of = {o.id: o.room_id for o in graph.objects}
    types = {o.id: o.object_type for o in graph.objects}
    targets = {r.id for r in rules.targets(graph)}
    lines: dict[str | None, list[str]] = {r: [] for r in rooms}
    lines[None] = []
    for rec in graph.receptacles:
        if rec.id not in targets:
            continue
        owner = rec.parent_id or rec.id
        lo, hi = rec.aabb.lo, rec.aabb.hi
        head = f"- {rec.id} [{rec.object_type}"
        head += f" of {rec.parent_id}]" if rec.parent_id else "]"
        head += f" box ({', '.join(map(_m, lo))})-({', '.join(map(_m, hi))})"
        surfs = []
        for s in rec.surfaces:
            if not s.usable:
                continue
            on = ", ".join(f"{i} ({types.get(i, '?')})" for i in s.object_ids) or "nothing"
            closed = " behind a door/in a drawer" if s.needs_open else ""
            surfs.append(
                f"{s.kind} at {_m(s.y)} m{closed}: free {s.free_area_cm2:.0f} of "
                f"{s.area_cm2:.0f} cm2, holds {on}"
            )
        lines.setdefault(room_of.get(owner), []).append(head + "; " + "; ".join(surfs))
    out = []
    for rid, items in lines.items():
        if not items:
            continue
        room = rooms.get(rid) if rid is not None else None
        title = f"Room {rid} ({room.room_type}, {room.area_m2:.1f} m2)" if room else "Elsewhere"
        out.append(title + "\n" + "\n".join(items))
    return "\n".join(out)


def history_text(history: tuple[dict[str, Any], ...]) -> str:
    if not history:
        return "none yet"
    rows = []
    for rec in history[-HISTORY_SHOWN:]:
        where = rec.get("receptacle") or rec.get("from") or ""
        rows.append(
            f"{rec['step']}. {rec['action']} {rec['object']} ({rec['object_type']}) {where}"
        )
    return "\n".join(rows)


class LLMPlanner:
    name = "llm"

    def __init__(self, rules: Rules, settings: LLMSettings, attempts: int = 3) -> None:
        self.rules = rules
        self.settings = settings
        self.attempts = attempts
        self.system = template("planner_system.txt")
        self.user = template("planner_user.txt")
        self._seeded = settings  # the settings of the current sequence (its sampling seed)
        self._client: Any = None
        self._dialog: DialogResult | None = None  # the step's conversation so far
        self._step = 0

    def begin(self, sequence: str, rng: np.random.Generator) -> None:
        from dataforge.llm import ChatClient

        seed = int(rng.integers(0, 2**31 - 1))  # the server's sampling seed (vLLM honours it)
        if self._client is not None:
            self._client.close()
        self._seeded = dataclasses.replace(self.settings, seed=seed)
        self._client = ChatClient(self._seeded)
        self._dialog, self._step = None, 0

    def describe(self) -> dict[str, Any]:
        return {
            "planner": self.name,
            "llm": self._seeded.to_dict(),  # with this sequence's sampling seed
            "answers_per_decision": self.attempts,
            "prompt": {"system": self.system, "user": self.user},
            "schema": ACTION_SCHEMA,
        }

    def prompt(self, state: PlanState) -> list[dict[str, str]]:
        graph = state.graph
        where = {o.id: (o.object_type, o.element_id or o.parent_id) for o in graph.objects}
        movable = ", ".join(
            f"{i}: {where[i][0]} on {where[i][1]}" for i in self.rules.movable(graph)
        )
        user = self.user.format(
            step=state.step,
            steps=state.steps,
            house=house_text(graph, self.rules),
            movable=movable or "none",
            spawnable=", ".join(self.rules.spawnable),
            history=history_text(state.history),
        )
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def propose(self, state: PlanState, feedback: str | None) -> Proposal:
        from dataforge.llm import ask_json

        def check(value: dict[str, Any]) -> str | None:
            return self.rules.check(Action.from_dict(value), state.graph)

        if self._dialog is None or state.step != self._step or feedback is None:
            messages, logged = self.prompt(state), 0
        else:
            messages, logged = self._dialog.then(feedback), len(self._dialog.messages)
        self._step = state.step
        result = ask_json(
            self._client,
            messages,
            ACTION_SCHEMA,
            check,
            max_attempts=self.attempts,
            logged=logged,
        )
        self._dialog = result
        action = Action.from_dict(result.value) if result.ok and result.value else None
        record: dict[str, Any] = {
            "action": action.to_dict() if action else None,
            "dialog": result.to_dict(),
        }
        if feedback:
            record["feedback"] = feedback
        return Proposal(action, record)
