"""One SpaMEM interaction sequence: decide, check, act (with recovery), capture, log.

A sequence starts from the house's initial state. Per step the planner proposes an action
(:mod:`.planner`); :meth:`Rules.check` rejects impossible ones (feedback to the planner); the
action runs in the world backend: spawn and place search the chosen receptacle's support
surfaces for a free, supported pose (``find_smart_position`` of §8.3 is
:meth:`dataforge.world.placement.World.place`: surfaces behind doors or in drawers open the
receptacle first, per-category ``sink``/``hover`` limits, collision checks against neighbours),
remove takes the object out. A failed placement (no free space, collision, closed) is fed back
and the planner asked again, at most ``recoveries`` decisions per step; a step that gets none
through ends the sequence early (recorded). A sequence that ends before its first action holds
no action to write: the caller draws it again (:func:`empty_reason` says why it was empty).

Captured states: step 0 (the initial state, before any action; its cameras look at the target
of the first action as planned) and every successful action (cameras look at the object's new
pose, or where a removed object was). Every decision, check and attempt is logged.

What is acted on is captured open (§8.3: "For enclosed receptacles like Fridges or Drawers, the
system automatically executes a pre-action OpenObject command"): a spawn or place into a
drawer, a cupboard or a fridge, or a remove from one, opens it first; the step is captured with
it open (drawn open, ``openness`` in the step's graph, its ids in the step record's
``opened``), the orbit turned by the least angle that puts an azimuth on the open face's normal
(none for furniture standing square to the walls), then it is shut again, so the next step
starts as the house was. ``acted_visible_views`` counts the step's views that show what was
acted on with at least the tasks' visible pixels (:data:`~.sequence_view.VISIBLE_SHARE`): the
object spawned or placed, or for a remove the surface it left (its drawer or cupboard, else the
receptacle).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.pipelines.spamem.capture import Capture, CaptureSettings, ViewBuffer, capture
from dataforge.pipelines.spamem.planner import Planner, PlanState
from dataforge.pipelines.spamem.rules import Action, Rules
from dataforge.world.boxes import OrientedBox
from dataforge.world.graph import ReceptacleNode, WorldGraph
from dataforge.world.placement import opened_ids
from dataforge.world.viewpoints import WallSight

if TYPE_CHECKING:
    from dataforge.nav.grid import NavGrid
    from dataforge.simulators.protocol import HouseBackend


@dataclass
class SequenceRun:
    frames: ViewBuffer
    captures: list[Capture] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)  # step 0 .. S-1
    graphs: list[dict[str, Any]] = field(default_factory=list)  # full graph dict per step
    boxes3d: list[np.ndarray] = field(default_factory=list)  # per step (M, 10)
    log: list[dict[str, Any]] = field(default_factory=list)
    ended_early: dict[str, Any] | None = None  # the step that failed and its attempts

    @property
    def actions(self) -> int:
        """Actions done (captured states after step 0)."""
        return max(len(self.captures) - 1, 0)


@dataclass(frozen=True)
class Scene:
    """What stays fixed over a house's sequences: navigation grid, wall sight, floor."""

    grid: NavGrid
    sight: WallSight
    floor_y: float
    component: int


def _centre(node: ReceptacleNode) -> tuple[float, float, float]:
    lo, hi = np.asarray(node.aabb.lo), np.asarray(node.aabb.hi)
    c = (lo + hi) / 2.0
    return (float(c[0]), float(c[1]), float(c[2]))


def planned_target(action: Action, graph: WorldGraph, backend: HouseBackend) -> tuple[float, ...]:
    """Where an action will happen, before it runs: the receptacle's box centre, or the
    object's (remove)."""
    if action.action == "remove":
        return tuple(float(v) for v in backend.world.box(action.object).center)
    assert action.receptacle is not None  # a checked spawn or place names one (Rules.check)
    return _centre(graph.receptacle(action.receptacle))


def object_boxes(backend: HouseBackend) -> np.ndarray:
    """(M, 10) rows ``instance, cx, cy, cz, sx, sy, sz, pitch, yaw, roll`` (degrees, AI2-THOR
    Euler angles) of every object's oriented box, where it is drawn (moved out with an open
    drawer it rests in)."""
    rows = []
    for obj in sorted(backend.world.objects, key=lambda o: o.id):
        b = backend.world.box(obj.id)
        centre = drawn_centre(backend, obj.parent_id, b) if obj.parent_id else b.center
        rows.append([backend.ids(obj.id), *centre, *b.size, *b.rotation_deg])
    return np.asarray(rows, np.float64).reshape(-1, 10)


def holder_of(action: Action, graph: WorldGraph, backend: HouseBackend) -> str | None:
    """The object an action opens if it needs to: the receptacle's object (a drawer's dresser)
    for spawn and place, the removed object's parent for remove."""
    if action.action == "remove":
        return backend.world.object(action.object).parent_id
    assert action.receptacle is not None  # a checked spawn or place names one (Rules.check)
    node = graph.receptacle(action.receptacle)
    return node.parent_id or node.id


def acted_instance(record: dict[str, Any], graph: WorldGraph) -> str | None:
    """What the step's views must show: the object spawned or placed; for a remove, the surface
    it left (its element, else the receptacle); None when it left none (a floor object)."""
    if record["action"] != "remove":
        return record["object"]
    node = graph.object(record["object"])
    return node.element_id or node.parent_id


def visible_views(cap: Capture, instance: int, min_pixels: int) -> int:
    """How many of a capture's views show ``instance`` with at least ``min_pixels`` pixels."""
    return sum(1 for b in cap.boxes if np.any((b[:, 0] == instance) & (b[:, 5] >= min_pixels)))


def min_pixels(settings: CaptureSettings) -> int:
    """The tasks' visibility threshold at the capture's resolution."""
    from dataforge.pipelines.spamem.sequence_view import visible_pixels

    return visible_pixels(settings.width, settings.height)


def orbit_turn(
    backend: HouseBackend, holder: str, opened: list[str], settings: CaptureSettings
) -> float:
    """The least turn of the orbit (degrees) that puts one of its azimuths on the normal of the
    first opened element's (or door's) face, so that one camera pair looks straight into it;
    0 when the face already lies on an azimuth (furniture turned by multiples of 45 degrees) or
    has no motion."""
    from dataforge.world.shape_mesh import opening_bearing

    obj = backend.world.object(holder)
    element = None if opened[0] == holder else opened[0][len(holder) + 1 :]
    bearing = opening_bearing(obj, backend.world.catalogue.asset(obj.asset_id), element)
    if bearing is None:
        return 0.0
    pitch = 360.0 / len(settings.azimuths)
    turn = (bearing + pitch / 2.0) % pitch - pitch / 2.0
    return 0.0 if abs(turn) < 1e-6 else turn


def drawn_centre(backend: HouseBackend, holder: str | None, box: OrientedBox) -> tuple[float, ...]:
    """The centre of ``box`` where it is drawn: moved with ``holder``'s drawer when it rests in
    an open one (the cameras look there)."""
    from dataforge.world.shape_mesh import drawn_offset

    centre = np.asarray(box.center, dtype=np.float64)
    if holder is not None and holder in backend.world:
        parent = backend.world.object(holder)
        centre = centre + drawn_offset(box, parent, backend.world.catalogue.asset(parent.asset_id))
    return tuple(float(v) for v in centre)


def execute(
    backend: HouseBackend, action: Action, graph: WorldGraph, rules: Rules, rng: np.random.Generator
) -> dict[str, Any]:
    """Run a checked action; the outcome record (``status`` ``placed``/``removed`` when done)."""
    if action.action == "remove":
        box = backend.world.box(action.object)
        before = {o.id for o in backend.world.objects}
        parent = backend.world.object(action.object).parent_id
        surface = graph.object(action.object).surface
        if parent is not None and surface is not None:
            backend.open_surface(parent, surface)  # pre-action OpenObject (§8.3)
        backend.remove(action.object)
        removed = sorted(before - {o.id for o in backend.world.objects})
        return {
            "status": "removed",
            "object": action.object,
            "from": parent,
            "removed": removed,
            "target": [float(v) for v in box.center],
        }
    assert action.receptacle is not None  # a checked spawn or place names one (Rules.check)
    node = graph.receptacle(action.receptacle)
    parent = node.parent_id or node.id
    surfaces = [s for s in node.surfaces if s.usable]
    weights = np.array([max(s.free_area_cm2, 1e-3) for s in surfaces])
    surface = surfaces[int(rng.choice(len(surfaces), p=weights / weights.sum()))].index
    backend.open_surface(parent, surface)  # pre-action OpenObject (§8.3): a drawer, a fridge
    if action.action == "spawn":
        assets = rules.assets(action.object)
        asset = assets[int(rng.integers(len(assets)))]
        res = backend.spawn(asset, parent, rng, surface=surface)
        came_from = None
    else:
        came_from = graph.object(action.object).parent_id
        res = backend.place(action.object, parent, rng, surface=surface)
    out: dict[str, Any] = {"status": res.status, "object": res.object_id, "from": came_from}
    out.update(surface=surface, message=res.message, tries=res.attempts)
    if res.ok:
        assert res.position is not None and res.rotation is not None  # a placed object's pose
        out["target"] = [float(v) for v in backend.world.box(res.object_id).center]
        out["position"], out["rotation"] = list(res.position), list(res.rotation)
        out["surface_kind"] = res.kind
    return out


def failure_feedback(action: Action, outcome: dict[str, Any]) -> str:
    where = action.receptacle or ""
    reasons = {
        "no_free_space": f"there is no free space for it on {where}",
        "collision": f"every pose tried on {where} collides with other objects",
        "closed": f"{where} is closed",
        "not_a_receptacle": f"{where} is not a receptacle",
    }
    why = reasons.get(outcome["status"], outcome.get("message") or outcome["status"])
    return (
        f"The {action.action} of {action.object} failed: {why}. Choose another location or "
        "another object."
    )


def run_sequence(
    backend: HouseBackend,
    scene: Scene,
    planner: Planner,
    rules: Rules,
    settings: CaptureSettings,
    *,
    sequence: str,
    steps: int,
    recoveries: int,
    place_rng: np.random.Generator,
) -> SequenceRun:
    run = SequenceRun(ViewBuffer((steps + 1) * settings.views, settings.width, settings.height))
    graph = backend.world_graph()
    history: list[dict[str, Any]] = []

    def snap(target: tuple[float, ...], record: dict[str, Any], facing: float = 0.0) -> None:
        cap = capture(
            backend,
            scene.grid,
            scene.sight,
            target,
            settings,
            run.frames,
            floor_y=scene.floor_y,
            component=scene.component,
            facing=facing,
        )
        run.captures.append(cap)
        run.steps.append(record)
        run.graphs.append(graph.to_dict())
        run.boxes3d.append(object_boxes(backend))

    for step in range(1, steps + 1):
        failed: list[Action] = []
        feedback: str | None = None
        attempts: list[dict[str, Any]] = []
        done: dict[str, Any] | None = None
        for decision in range(recoveries):
            state = PlanState(sequence, step, steps, graph, tuple(history), tuple(failed))
            proposal = planner.propose(state, feedback)
            run.log.append({"step": step, "decision": decision, **proposal.record})
            action = proposal.action
            if action is None:
                feedback = "No usable action was given."
                attempts.append({"action": None, "status": "no_action"})
                continue
            problem = rules.check(action, graph)
            if problem is not None:
                failed.append(action)
                feedback = f"That action is not possible: {problem}."
                attempts.append({**action.to_dict(), "status": "invalid", "message": problem})
                continue
            if step == 1 and not run.captures:
                snap(planned_target(action, graph, backend), {"step": 0, "action": "initial"})
            holder = holder_of(action, graph, backend)
            was = None if holder is None else backend.world.object(holder)
            gone = backend.world.box(action.object) if action.action == "remove" else None
            outcome = execute(backend, action, graph, rules, place_rng)
            attempts.append({**action.to_dict(), **outcome})
            if outcome["status"] in ("placed", "removed"):
                box = gone if gone is not None else backend.world.box(outcome["object"])
                done = {
                    "action": action,
                    "outcome": outcome,
                    "was": was,
                    "look_at": drawn_centre(backend, holder, box),
                }
                break
            if was is not None:
                backend.reclose(was)  # a failed placement leaves nothing open
            failed.append(action)
            feedback = failure_feedback(action, outcome)
        if done is None:
            run.ended_early = {
                "step": step,
                "reason": f"no action succeeded in {recoveries} decisions",
                "attempts": attempts,
            }
            break
        before = graph
        graph = backend.world_graph()
        record = step_record(step, done["action"], done["outcome"], before, graph, attempts)
        was = done["was"]
        opened = [] if was is None else opened_ids(was, backend.world.object(was.id))
        record["opened"] = opened
        history.append(record)
        facing = orbit_turn(backend, was.id, opened, settings) if opened else 0.0
        snap(done["look_at"], record, facing)
        acted = acted_instance(record, before if record["action"] == "remove" else graph)
        record["acted_visible_views"] = (
            None
            if acted is None
            else visible_views(run.captures[-1], backend.ids(acted), min_pixels(settings))
        )
        if opened:
            backend.reclose(was)  # shut again: the next step starts as the house was
            graph = backend.world_graph()
    return run


def planner_gave_nothing(run: SequenceRun) -> str | None:
    """Why the sequence ended early without the planner ever giving a valid action at its last
    step (every decision had no action or an impossible one), with the counts; None when it ran
    to the end or some action was valid but could not be executed (a full house)."""
    ended = run.ended_early
    if ended is None:
        return None
    statuses = Counter(a["status"] for a in ended["attempts"])
    if not set(statuses) <= {"no_action", "invalid"}:
        return None
    answers: Counter[str] = Counter()
    for rec in run.log:
        if rec["step"] == ended["step"]:
            answers.update(a["outcome"] for a in rec.get("dialog", {}).get("attempts", []))
    said = ", ".join(f"{n} {k}" for k, n in sorted(answers.items()))
    return (
        f"step {ended['step']}: the planner gave no valid action in "
        f"{sum(statuses.values())} decisions ({statuses['no_action']} without an action, "
        f"{statuses['invalid']} impossible" + (f"; answers: {said}" if said else "") + ")"
    )


def empty_reason(run: SequenceRun) -> str:
    """Why a sequence ended without any action: :func:`planner_gave_nothing`'s line, else the
    first step's attempts by status (valid actions that could not be executed)."""
    why = planner_gave_nothing(run)
    if why is not None:
        return why
    ended = run.ended_early or {"step": 1, "attempts": []}
    statuses = Counter(a["status"] for a in ended["attempts"])
    said = ", ".join(f"{n} {k}" for k, n in sorted(statuses.items()))
    where = f"step {ended['step']}: no executable action"
    return f"{where} in {sum(statuses.values())} decisions" + (f" ({said})" if said else "")


def step_record(
    step: int,
    action: Action,
    outcome: dict[str, Any],
    before: WorldGraph,
    after: WorldGraph,
    attempts: list[dict[str, Any]],
) -> dict[str, Any]:
    oid = outcome["object"]
    node = (after if action.action != "remove" else before).object(oid)
    rec: dict[str, Any] = {
        "step": step,
        "action": action.action,
        "object": oid,
        "object_type": node.object_type,
        "asset_id": node.asset_id,
        "receptacle": action.receptacle,
        "receptacle_type": (
            before.receptacle(action.receptacle).object_type if action.receptacle else None
        ),
        "from": outcome.get("from"),
        "target": outcome["target"],
        "decisions": len(attempts),
        "attempts": attempts,
    }
    if action.action == "remove":
        rec["from_type"] = (
            before.receptacle(outcome["from"]).object_type if outcome["from"] else None
        )
        rec["removed"] = outcome["removed"]
    else:
        rec["parent"] = node.parent_id
        rec["element"] = node.element_id
        rec["surface_kind"] = node.surface_kind
        rec["position"], rec["rotation"] = outcome["position"], outcome["rotation"]
    return rec
