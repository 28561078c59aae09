"""FindingDory's metrics (paper appendix B.3): HL-SR, DTG-SR, SC-SR, HL-SPL, LL-SR, LL-SPL and
their per-category summary. Pure functions: the caller renders, teleports and measures (e.g.
:class:`.goals.GoalCheck`), and passes check results and geodesic distances in.

Sources, in order of authority: the spec notes (``shared/specs/findingdory.md``, "Predicates"
and "Scoring"), then upstream's code as docs/findingdory_upstream.md §6-7 records it (paths
below are relative to upstream's ``findingdory/``), then the paper. Where this module departs
from upstream the docstring says so.

A *result* -- what one pose measures against one entity -- is either GoalCheck-like (has
``passes(max_distance, max_angle, min_coverage, *, skip=...)`` returning the failed check
names; the thresholds come from the task's predicate, :data:`THRESHOLDS`), or the failed check
names themselves (an iterable of str: ``()`` = satisfied; ``("room",)`` = outside the room), or
a bool (``robot_in_room``: inside the room). Entities missing from a frame's mapping are not
satisfied.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dataforge.errors import UsageError
from dataforge.pipelines.findingdory.goals import CHECKS
from dataforge.tsp import solve_open_path, to_integer_costs


@dataclass(frozen=True)
class Thresholds:
    """Bounds of a ``robot_at_*`` predicate (inclusive, as :meth:`GoalCheck.passes` applies
    them): geodesic distance (m), heading angle (degrees), instance-mask coverage (0..1)."""

    max_distance_m: float
    max_angle_deg: float
    min_coverage: float


ROBOT_AT_OBJECT = Thresholds(2.0, 45.0, 0.001)
"""``robot_at_object``: ≤ 2.0 m geodesic to the object's navmesh-snapped position, ≤ 45°,
coverage ≥ 0.1 % (spec "Predicates"; upstream ``config/task/pddl_domain_fp.yaml``)."""
ROBOT_AT_RECEPTACLE = Thresholds(0.1, 90.0, 0.001)
"""``robot_at_receptacle``: ≤ 0.1 m geodesic to the receptacle's *nearest navigable viewpoint*
(the caller measures that distance), ≤ 90°, coverage ≥ 0.1 % (spec; upstream same; the
paper's §5 "1.0 m" is the ImageNav stop radius and is not used)."""
THRESHOLDS: dict[str, Thresholds | None] = {
    "robot_at_object": ROBOT_AT_OBJECT,
    "robot_at_receptacle": ROBOT_AT_RECEPTACLE,
    "robot_in_room": None,  # region membership: the base is inside the room (no thresholds)
}
ROOM_CHECK = "room"
"""The failed-check name of ``robot_in_room`` (the base is outside the room)."""

RELAXATIONS: dict[str, tuple[str, ...]] = {
    "HL-SR": (),
    "DTG-SR": ("coverage",),
    "SC-SR": ("distance",),
}
"""Checks each success rate drops (spec "Scoring"). The angle check stays on in all three
(upstream ``findingdory_task.py::_set_new_predicate_args`` too). Upstream relaxes by setting
``semantic_cov_thresh = 0`` (same as dropping) and ``dist_thresh = 10000`` m (differs from
dropping only for an infinite distance, e.g. an object that does not snap to the navmesh: it
still fails there, and passes here). ``robot_in_room`` is never relaxed (neither upstream)."""

LL_MAX_STEPS = 1000
"""Low-level step cap (spec; upstream ``low_level_policy_max_steps: 1000``)."""
EXACT_TOUR_LIMIT = 6
"""Unordered tours over at most this many subgoals are solved exactly by permutations (upstream:
brute force for ≤ 6 goals)."""

Result = Any  # GoalCheck-like | Iterable[str] (failed check names) | bool
FrameResults = Mapping[Any, Result]
"""Entity id (hashable) -> result. The key type is Any: Mapping is invariant in it, so a
``dict[str, ...]`` would not be a ``Mapping[Hashable, ...]``."""


class TaskLike(Protocol):
    """What the metrics read of a task (read-only, so a list of tuples is acceptable goals)."""

    @property
    def goals(self) -> Sequence[Sequence[Hashable]]: ...

    @property
    def ordered(self) -> bool: ...

    @property
    def predicate(self) -> str: ...


# ------------------------------------------------------------------ one result, one frame


def _relax(relax: Iterable[str]) -> frozenset[str]:
    dropped = frozenset(relax)
    unknown = sorted(dropped - set(CHECKS))
    if unknown:
        raise UsageError(f"cannot relax {unknown}; choose from {', '.join(CHECKS)}")
    return dropped


def satisfied(result: Result, predicate: str | None = None, *, relax: Iterable[str] = ()) -> bool:
    """Whether ``result`` (see the module docstring) satisfies its predicate once the checks in
    ``relax`` (of ``distance``, ``angle``, ``coverage``) are dropped. ``predicate`` selects the
    :data:`THRESHOLDS` of a GoalCheck-like result and is required only for one."""
    dropped = _relax(relax)
    if isinstance(result, bool | np.bool_):
        return bool(result)
    if hasattr(result, "passes"):
        if predicate not in THRESHOLDS:
            raise UsageError(f"a measured result needs a robot_at_* predicate, got {predicate!r}")
        t = THRESHOLDS[predicate]
        if t is None:
            raise UsageError(f"{predicate} is region membership: pass a bool, not a GoalCheck")
        failed = result.passes(t.max_distance_m, t.max_angle_deg, t.min_coverage, skip=dropped)
        return not failed
    names = {result} if isinstance(result, str) else set(result)
    return not (names - dropped)


def _reached(
    subgoal: Sequence[Hashable], frame: FrameResults, predicate: str | None, relax: frozenset[str]
) -> bool:
    return any(e in frame and satisfied(frame[e], predicate, relax=relax) for e in subgoal)


# ------------------------------------------------------------------ high level


def prediction_problem(task: TaskLike, indices: Sequence[Any], n_frames: int) -> str | None:
    """Why the predicted frame ``indices`` of ``task`` are malformed, or None when well formed:
    an unparsed answer (``[-1]``), a count other than the number of subgoals (1 for a
    single-goal task), a non-integer index or one outside ``0 .. n_frames - 1``. A malformed
    prediction scores as a failure on every metric. Source: upstream
    ``findingdory_task.py::assign_and_validate_high_level_goal`` (response error, num targets
    error, out of bounds); the fact sheet's upstream bound is "> number of collection steps",
    here a frame index must name one of the ``n_frames`` frames."""
    idx = list(indices)
    if idx == [-1]:
        return "no frame indices could be parsed from the answer"
    want = len(task.goals)
    if len(idx) != want:
        return f"expected {want} frame ind{'ex' if want == 1 else 'ices'}, got {len(idx)}"
    bad = [i for i in idx if isinstance(i, bool) or not isinstance(i, int | np.integer)]
    if bad:
        return f"frame indices must be integers, got {bad!r}"
    out = [int(i) for i in idx if not 0 <= i < n_frames]
    if out:
        return f"frame ind{'ex' if len(out) == 1 else 'ices'} {out} outside 0..{n_frames - 1}"
    return None


def high_level_success(
    task_goals: Sequence[Sequence[Hashable]],
    ordered: bool,
    frame_results: Sequence[FrameResults],
    *,
    relax: Iterable[str] = (),
    predicate: str | None = None,
) -> bool:
    """Whether the predicted frames, in the order predicted, solve the task (HL-SR; with
    ``relax`` from :data:`RELAXATIONS`, DTG-SR or SC-SR).

    ``task_goals``: subgoals, each a list of acceptable entity ids; ``frame_results``: per
    predicted frame, {entity id: result}; ``predicate``: the task's predicate (needed for
    GoalCheck-like results). Rules (upstream ``task/pddl/pddl_logical_expr.py``
    AND_SEQUENTIAL[_ORDERED], as the fact sheet §6 states them):

    - the number of frames must equal the number of subgoals (single-goal: one frame, success
      when it satisfies any acceptable entity);
    - frames are taken in order; each locks at most one *new* subgoal -- the first not yet
      locked that it satisfies, in subgoal order (upstream's loop); a frame that locks none
      fails the task;
    - ordered tasks: a subgoal reached before its predecessor is locked fails the task, so
      frame k must satisfy subgoal k (a frame also satisfying a later subgoal is fine: only
      one is locked);
    - success = every subgoal locked.

    Note: the spec's "one frame per entity" would also accept an assignment the greedy lock
    misses (frame 1 satisfies A and B, frame 2 only A: upstream locks A at frame 1 and fails);
    this follows upstream's lock order. Upstream's "connected receptacles" leniency is the
    caller's to express by listing them as acceptable entities of the subgoal.
    """
    dropped = _relax(relax)
    goals = [tuple(g) for g in task_goals]
    if not goals or len(frame_results) != len(goals):
        return False
    locked = [False] * len(goals)
    for frame in frame_results:
        new = next(
            (
                i
                for i, g in enumerate(goals)
                if not locked[i] and _reached(g, frame, predicate, dropped)
            ),
            None,
        )
        if new is None:
            return False
        if ordered and new > 0 and not locked[new - 1]:
            return False
        locked[new] = True
    return all(locked)


def success_rates(task: TaskLike, frame_results: Sequence[FrameResults]) -> dict[str, bool]:
    """HL-SR, DTG-SR and SC-SR of one task (one bool each): :func:`high_level_success` under
    each of :data:`RELAXATIONS`, with the task's goals, order and predicate."""
    return {
        name: high_level_success(
            task.goals, task.ordered, frame_results, relax=relax, predicate=task.predicate
        )
        for name, relax in RELAXATIONS.items()
    }


# ------------------------------------------------------------------ SPL and tours


def spl(success: bool, shortest: float, taken: float) -> float:
    """SPL = S · l / max(p, l) (paper B.3, spec "Scoring"; Anderson et al.): 0 when not
    ``success``; 1 when l = p = 0 (upstream: "both 0 -> SPL = S"). ``shortest`` (l) and
    ``taken`` (p) are finite non-negative metres when ``success``.

    HL-SPL-frames (the paper's and the spec's reading, reported beside upstream's HL-SPL,
    :func:`entity_hl_spl`): S = HL success, l = geodesic from the start pose (collection's final
    pose) to the closest valid goal frame, p = the geodesic path to the predicted frame's pose
    (multi-goal: l = :func:`shortest_tour`, p = :func:`path_length` through the predicted
    poses). LL-SPL: S = LL success, p = the base's path, l as for HL-SPL-frames."""
    if not success:
        return 0.0
    for name, v in (("shortest", shortest), ("taken", taken)):
        if not (math.isfinite(v) and v >= 0):
            raise UsageError(f"SPL needs a finite non-negative {name} length, got {v!r}")
    if shortest == 0 and taken == 0:
        return 1.0
    return float(shortest / max(taken, shortest))


def entity_hl_spl(
    success: bool,
    multi_goal: bool,
    distances: Mapping[Hashable, float | None],
    chosen: Hashable | None,
) -> float | None:
    """HL-SPL as upstream computes it (``task/measures.py:736-766``,
    ``FindingDoryHighLevelSPL``), over entities, not frames: 0 when HL failed; single-goal:
    d_min / max(d_min, d_chosen), 1 when d_chosen = 0, where ``distances`` are the geodesics from
    the start pose (the day's final pose) to each acceptable entity of the subgoal (objects: to
    the snapped centre; receptacles: to the nearest viewpoint; rooms: 0 inside), d_min their
    minimum (``_find_closest_target``) and d_chosen the distance to ``chosen``, the entity the
    predicted frame satisfied (``_check_min_d2g_valid_assign``). Multi-goal: None, not computed
    (upstream writes -1 after a success and 0 after a failure; a mean can take neither without
    a bias, so multi-goal tasks are left out of it). None too where the chosen entity's distance
    is unknown (off the navigable space)."""
    if multi_goal:
        return None
    if not success:
        return 0.0
    known = {e: float(d) for e, d in distances.items() if d is not None and math.isfinite(d)}
    if chosen not in known:
        return None
    d_min, d_chosen = min(known.values()), known[chosen]
    if d_chosen == 0:
        return 1.0
    return float(d_min / max(d_min, d_chosen))


def path_length(
    start: Hashable, stops: Sequence[Hashable], distance: Callable[[Any, Any], float]
) -> float:
    """Sum of ``distance`` over consecutive legs ``start -> stops[0] -> stops[1] ...`` (0 for no
    stops): p of a multi-goal HL-SPL, or of LL-SPL from the base positions per step (upstream
    ``FindingDorySPL``: geodesics between consecutive base positions)."""
    pts = [start, *stops]
    return float(sum(distance(a, b) for a, b in itertools.pairwise(pts)))


def _ordered_tour(
    start: Hashable, subgoals: Sequence[Sequence[Hashable]], d: Callable[[Any, Any], float]
) -> tuple[float, list[Hashable]]:
    """DP over acceptable entities: best[e] = shortest path from ``start`` visiting the
    subgoals so far in order and ending at entity e; returns the length and the entity chosen
    per subgoal (in the given order)."""
    best: dict[Hashable, tuple[float, tuple[Hashable, ...]]] = {start: (0.0, ())}
    for goal in subgoals:
        nxt: dict[Hashable, tuple[float, tuple[Hashable, ...]]] = {}
        for f in goal:
            c, path = min(
                ((c + d(e, f), path) for e, (c, path) in best.items()), key=lambda x: x[0]
            )
            nxt[f] = (c, (*path, f))
        best = nxt
        if not best:
            return math.inf, []
    c, path = min(best.values(), key=lambda x: x[0])
    return c, list(path)


def shortest_tour(
    start: Hashable,
    subgoals: Sequence[Sequence[Hashable]],
    distance: Callable[[Any, Any], float],
    ordered: bool,
    *,
    solver: str = "elkai",
) -> float:
    """l of a multi-goal task: the length of :func:`shortest_tour_path`."""
    return shortest_tour_path(start, subgoals, distance, ordered, solver=solver)[0]


def shortest_tour_path(
    start: Hashable,
    subgoals: Sequence[Sequence[Hashable]],
    distance: Callable[[Any, Any], float],
    ordered: bool,
    *,
    solver: str = "elkai",
) -> tuple[float, list[tuple[int, Hashable]]]:
    """The shortest path (m) from ``start`` reaching one acceptable entity of every subgoal
    (spec "Scoring": "the shortest ordered/unordered tour"), and the visits in order: (subgoal
    index, entity). ``distance(a, b)``: geodesic metres between points/entities (called at
    most once per pair); ``inf`` and no visits when no finite tour exists (e.g. a subgoal
    without entities).

    - ordered: subgoals in the given order, one acceptable entity each chosen by dynamic
      programming (exact);
    - unordered, ≤ :data:`EXACT_TOUR_LIMIT` subgoals: the best of all orders (exact);
    - unordered, more: the order is an open path from ``start`` by the repo's TSP solver
      (:func:`dataforge.tsp.solve_open_path`, ``solver``) on integer centimetres
      (:func:`~dataforge.tsp.to_integer_costs`), each subgoal represented by its nearest
      entities (min over entity pairs), the start pinned first by a prohibitive cost into it;
      the length of that order is then computed exactly by the DP (so it is a real tour, at
      most the optimum plus the solver's and the rounding's slack).

    Upstream (``task/measures.py::FindingDorySPL``) differs: ordered = the candidate objects'
    snapped positions in sequence (no choice among acceptable entities, objects even for
    receptacle templates); unordered = brute force ≤ 6, networkx Christofides beyond;
    receptacles measured at the parent's translation, not its viewpoints (the caller's
    ``distance`` decides that here)."""
    goals = [tuple(g) for g in subgoals]
    if not goals:
        return 0.0, []
    if any(not g for g in goals):
        return math.inf, []
    cache: dict[tuple[Hashable, Hashable], float] = {}

    def d(a: Hashable, b: Hashable) -> float:
        if (a, b) not in cache:
            cache[(a, b)] = float(distance(a, b))
        return cache[(a, b)]

    def along(order: Sequence[int]) -> tuple[float, list[tuple[int, Hashable]]]:
        c, path = _ordered_tour(start, [goals[i] for i in order], d)
        return c, list(zip(order, path, strict=False)) if math.isfinite(c) else []

    if ordered or len(goals) == 1:
        return along(range(len(goals)))
    if len(goals) <= EXACT_TOUR_LIMIT:
        return min(
            (along(p) for p in itertools.permutations(range(len(goals)))), key=lambda x: x[0]
        )
    nodes: list[tuple[Hashable, ...]] = [(start,), *goals]
    n = len(nodes)
    cost = np.array(
        [
            [0.0 if i == j else min(d(a, b) for a in nodes[i] for b in nodes[j]) for j in range(n)]
            for i in range(n)
        ]
    )
    finite = cost[np.isfinite(cost)]
    cap = n * (float(finite.max()) if finite.size else 1.0) + 1.0
    cost[~np.isfinite(cost)] = cap  # an unreachable leg: avoided if possible, checked below
    cost[1:, 0] = n * cap  # nothing enters the start: it comes first
    order = solve_open_path(to_integer_costs(cost), solver).order
    return along([i - 1 for i in order if i != 0])


# ------------------------------------------------------------------ low level


def low_level_success(
    task: TaskLike,
    step_results: Sequence[FrameResults],
    stops: Iterable[int],
    *,
    max_steps: int = LL_MAX_STEPS,
) -> bool:
    """Whether the low-level agent solved ``task`` (LL-SR of one task): ``step_results[s]``:
    {entity id: result} at the pose where the agent took step s (0-based; results are needed
    at stop steps only); ``stops``: the steps at which it called stop.

    Stops at step ≥ ``max_steps`` are past the cap (upstream: timeout at step 1,001). Stops are
    taken in step order like predicted frames (:func:`high_level_success`'s lock rules): each
    must lock a new subgoal (upstream ``pddl_intermediate_stop``: a stop that reaches no new
    subgoal fails; single-goal: the first stop decides), in order where ordered; success when
    every subgoal is locked at a stop within the cap (stops after that are ignored). Upstream
    (``findingdory_task.py::is_goal_satisfied``, evaluated every step) may also lock subgoals
    the agent passes without stopping; here, per the spec ("the low-level agent must stop
    satisfying the same predicates"), only stops count. Whether HL succeeded is applied by
    :func:`summarize` (LL counts only where HL succeeded)."""
    if max_steps < 1:
        raise UsageError(f"max_steps must be >= 1, got {max_steps}")
    n = len(task.goals)
    kept = sorted({int(s) for s in stops if 0 <= int(s) < max_steps})[:n]  # the deciding stops
    beyond = [s for s in kept if s >= len(step_results)]
    if beyond:
        raise UsageError(f"stop step(s) {beyond} have no results ({len(step_results)} steps)")
    frames = [step_results[s] for s in kept]  # fewer than n: the cap came first (failure)
    return high_level_success(task.goals, task.ordered, frames, predicate=task.predicate)


# ------------------------------------------------------------------ summary

METRICS = ("HL-SR", "HL-SPL", "HL-SPL-frames", "DTG-SR", "SC-SR", "LL-SR", "LL-SR|HL", "LL-SPL")


@dataclass(frozen=True)
class TaskScore:
    """One task's scores. ``hl``/``dtg``/``sc``: HL-SR, DTG-SR, SC-SR (a malformed prediction:
    all False); ``hl_spl``: HL-SPL over entities as upstream (:func:`entity_hl_spl`), None when
    not computed (multi-goal); ``ll``: the low-level run's success, None when it was not run or
    not scored; ``ll_spl``: LL-SPL of that run, None likewise; ``hl_spl_frames``: HL-SPL over
    frames (:func:`spl`), None when not computed. ``solvable``: :func:`is_solvable`."""

    category: str
    solvable: bool
    hl: bool
    dtg: bool
    sc: bool
    hl_spl: float | None = None
    ll: bool | None = None
    ll_spl: float | None = None
    hl_spl_frames: float | None = None


def is_solvable(valid_frames: Sequence[Sequence[int]]) -> bool:
    """A task is solvable when every subgoal has a valid goal frame in the video (spec:
    unsolvable tasks are reported separately; upstream marks a subgoal without one ``[-1]``)."""
    return bool(valid_frames) and all(any(f >= 0 for f in fs) for fs in valid_frames)


def _values(scores: Sequence[TaskScore], metric: str, low_level: bool) -> list[float]:
    out: list[float] = []
    for s in scores:
        v: float | None
        if metric in ("HL-SR", "DTG-SR", "SC-SR"):
            v = float({"HL-SR": s.hl, "DTG-SR": s.dtg, "SC-SR": s.sc}[metric])
        elif metric in ("HL-SPL", "HL-SPL-frames"):
            x = s.hl_spl if metric == "HL-SPL" else s.hl_spl_frames
            v = None if x is None else (float(x) if s.hl else 0.0)
        elif metric == "LL-SR|HL":
            v = None if not s.hl or s.ll is None else float(s.ll)
        elif not low_level or (s.hl and s.ll is None):
            v = None  # low level not scored in this summary / this task's run missing
        elif metric == "LL-SR":
            v = float(bool(s.hl and s.ll))
        elif s.hl and s.ll:  # LL-SPL of a success
            v = None if s.ll_spl is None else float(s.ll_spl)
        else:
            v = 0.0
        if v is not None:
            if not math.isfinite(v):
                raise UsageError(f"{metric} of a {s.category} task is {v!r}")
            out.append(v)
    return out


def _block(scores: Sequence[TaskScore], low_level: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"tasks": len(scores)}
    for m in METRICS:
        vs = _values(scores, m, low_level)
        block[m] = {"mean": (sum(vs) / len(vs)) if vs else None, "n": len(vs)}
    return block


def summarize(
    records: Iterable[TaskScore | Mapping[str, Any]], *, categories: Iterable[str] = ()
) -> dict[str, Any]:
    """Means with counts of :data:`METRICS`, overall and per template category, for solvable
    and unsolvable tasks separately (spec: "Report unsolvable tasks separately"):
    ``{"solvable": {"overall": block, "categories": {category: block}}, "unsolvable": ...}``,
    a block being ``{"tasks": n, metric: {"mean": float | None, "n": int}}``. ``categories``
    lists categories to report even without tasks. Plain floats; ``None`` where no task
    counts, never NaN.

    HL-SR, DTG-SR, SC-SR: over all tasks. HL-SPL (single-goal tasks, as upstream) and
    HL-SPL-frames: over tasks with a value (0 where HL failed). LL-SR (paper B.3 / spec: LL is
    scored where HL succeeds): when any record has a low-level result, over tasks with one plus
    the HL failures, a task counting as a success only when both HL and LL succeeded (the agent
    does not run after an HL failure); LL-SR|HL: the same conditioned on HL success (over tasks
    with HL success and an LL result). LL-SPL likewise (0 unless HL and LL succeeded)."""
    scores = [r if isinstance(r, TaskScore) else TaskScore(**r) for r in records]
    low_level = any(s.ll is not None for s in scores)
    names = sorted({*categories, *(s.category for s in scores)})
    out: dict[str, Any] = {}
    for group, solvable in (("solvable", True), ("unsolvable", False)):
        mine = [s for s in scores if s.solvable is solvable]
        out[group] = {
            "overall": _block(mine, low_level),
            "categories": {
                c: _block([s for s in mine if s.category == c], low_level) for c in names
            },
        }
    return out
