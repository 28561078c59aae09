"""FindingDory's task template engine: the 60 templates of the paper's Table 3 (as data in
``templates/findingdory/templates.json``) instantiated from an episode's interaction log. Pure
logic: no simulator, no rendering; valid goal frames are computed elsewhere.

The log (:class:`EpisodeLog`) is what collection records: objects (interacted ones and their
non-interacted same-category distractors), receptacles, rooms with the frames spent in each,
the interactions in order (interaction k = the k-th object rearranged, with its pick and place
frame spans), the frame count, the clock and geodesic distances from the final pose.

``select`` vocabulary (one goal entity ``kind``: object | receptacle | room, and one source):

- ``set``: the goals are a set of entities of ``kind`` --
  object ``all`` (distractors included) | ``interacted`` | ``not_interacted``;
  receptacle ``all`` | ``interacted`` (picked from or placed on) | ``not_interacted`` (the
  episode's *candidate* receptacles not interacted with: those of the categories of the
  interactions' start and goal receptacles, as upstream draws them from the episode's
  ``candidate_start_receps_noninteracted`` + ``candidate_goal_receps_noninteracted`` less the
  interacted ones, ``findingdory_task.py:1360-1390``; never a receptacle of another category
  elsewhere in the house) | ``pick`` | ``place``; room ``all`` | ``visited`` | ``not_visited``.
  Sets are ordered by first appearance in the interactions, else by log order. Narrowed (at
  most one) by ``category_slot`` (one filling per category of the set; ``unique: true`` rejects
  a category with several members: "*the* {target_object_name} that you interacted with"),
  ``attribute: {name, slot}`` (one filling per attribute value of an interacted object; null
  values never fill) or ``appearance_slot`` (the k-th entity of the set, k written "first", ...).
- ``interaction: {by, ...}`` with ``role`` (object | pick | place): the goal is the object, the
  pick (start) receptacle / room or the place (goal) receptacle / room of the chosen interaction.
  ``by``: ``order`` + ``slot`` (the k-th interaction), ``object`` + ``slot`` (the interaction of
  the interacted object of that category), ``receptacle`` + ``role`` + ``slot`` (the interaction
  picking from / placing on a receptacle of that category), ``receptacle_order`` + ``role`` +
  ``slot`` (the interaction(s) of the k-th distinct pick/place receptacle), ``offset`` +
  ``anchor_slot`` + ``offset`` (+1 after, -1 before) [+ ``count_slot``: offset times N, N >= 2],
  ``between`` + ``anchor_slots`` [a, b] (the one interaction strictly between a and a + 2). A
  filling whose slot text names several interactions ("the object you picked from the counter
  top" after two such picks) is rejected, never guessed.
- ``at_time_slot``: the object (interval = pick start .. place end) or receptacle (pick span of
  the start receptacle, place span of the goal receptacle) being interacted with at a minute
  that lies in exactly one such interval; the minute is drawn with the rng, written ``H:MM``.

Modifiers: ``extreme`` -- ``farthest`` (largest ``distance_from_end``), ``longest`` /
``shortest`` (rearrangement duration in frames, place end - pick start), ``most_time`` (room
frames): one entity or, on a tie, no task. ``each`` (multi-goal) -- ``distinct`` (one subgoal
per entity, unordered) or ``sequence`` (one per distinct entity, in the order of its first
interaction, ordered: upstream has one sub-expression per matched entity and a repeat in the
interaction sequence maps to the same one, ``task/pddl/pddl_domain.py:507-548``, so it counts
once, ``task/measures.py:171-176``, and its first visit sets the order,
``pddl_logical_expr.py:155-208``); at least :data:`MIN_SUBGOALS` subgoals.

Goals are a list of subgoals, each a list of acceptable entity ids (reaching any satisfies):
single-goal tasks have exactly one. A template the log cannot supply gives :class:`Skip` with a
reason, never a fake filling.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import MalformedInputError, UsageError
from dataforge.pipelines.findingdory.log import (
    EpisodeLog,
)

if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

KINDS = ("object", "receptacle", "room")
PREDICATES = {
    "object": "robot_at_object",
    "receptacle": "robot_at_receptacle",
    "room": "robot_in_room",
}
SETS = {
    "object": ("all", "interacted", "not_interacted"),
    "receptacle": ("all", "interacted", "not_interacted", "pick", "place"),
    "room": ("all", "visited", "not_visited"),
}
GROUPS = {
    "spatial": {
        "object_recall": 2,
        "interaction": 6,
        "conditional_interaction": 7,
        "object_attributes": 5,
        "spatial_relationship": 5,
        "room_visitation": 5,
    },
    "temporal": {"interaction_order": 16, "time_based": 2, "duration_tracking": 3},
    "multi_goal": {"unordered_revisitation": 6, "ordered_revisitation": 3},
}
ATTRIBUTES = ("shape", "color", "print_or_design", "material", "functionality")
DEFAULT_CAP = 1  # ~ the paper's density: 5,876 val tasks / 100 episodes ~ one per template
MIN_SUBGOALS = 2
_SLOT = re.compile(r"\{([A-Za-z0-9_:]+)\}")
_ORDINALS = (
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
)


# ---------------------------------------------------------------- clock and wording


def query_time(minutes: int) -> str:
    """A time as time-based instructions write it: ``H:MM``, the hour not zero-padded."""
    return f"{minutes // 60}:{minutes % 60:02d}"


def ordinal(k: int) -> str:
    """0 -> "first", ..., 9 -> "tenth", 10 -> "11th"."""
    if k < len(_ORDINALS):
        return _ORDINALS[k]
    n = k + 1
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def display_name(category: str) -> str:
    """``CellPhone`` -> "cell phone", ``chest_of_drawers`` -> "chest of drawers", ``CD`` -> "CD"."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z]*|[a-z]+|\d+", category)
    return " ".join(w if len(w) > 1 and w.isupper() else w.lower() for w in words)


# ---------------------------------------------------------------- the episode log


# ---------------------------------------------------------------- templates


@dataclass(frozen=True)
class Template:
    id: str
    group: str
    category: str
    text: str
    predicate: str
    multi_goal: bool
    ordered: bool
    select: dict[str, Any]
    note: str | None = None

    @property
    def slots(self) -> tuple[str, ...]:
        return tuple(_SLOT.findall(self.text))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Template:
        return cls(**d)


def select_slots(select: dict[str, Any]) -> set[str]:
    """The slot names a select fills."""
    out = {select[k] for k in ("category_slot", "appearance_slot", "at_time_slot") if k in select}
    if "attribute" in select:
        out.add(select["attribute"]["slot"])
    sel = select.get("interaction", {})
    out |= {sel[k] for k in ("slot", "anchor_slot", "count_slot") if k in sel}
    return out | set(sel.get("anchor_slots", ()))


_BY = {
    "order": {"slot"},
    "object": {"slot"},
    "receptacle": {"slot", "role"},
    "receptacle_order": {"slot", "role"},
    "offset": {"anchor_slot", "offset", "count_slot"},
    "between": {"anchor_slots"},
}
_KEYS = {
    "kind",
    "set",
    "interaction",
    "at_time_slot",
    "role",
    "category_slot",
    "unique",
    "attribute",
    "appearance_slot",
    "extreme",
    "each",
}


def _select_problem(t: Template) -> str | None:
    s = t.select
    kind = s.get("kind")
    if kind not in KINDS or set(s) - _KEYS:
        return f"bad kind or unknown keys in {sorted(s)}"
    if PREDICATES[kind] != t.predicate:
        return f"predicate {t.predicate} does not fit kind {kind}"
    if sum(k in s for k in ("set", "interaction", "at_time_slot")) != 1:
        return "needs exactly one of set / interaction / at_time_slot"
    if "set" in s and s["set"] not in SETS[kind]:
        return f"set {s['set']!r} is not one of {SETS[kind]}"
    if "interaction" in s:
        by = s["interaction"].get("by")
        if by not in _BY or set(s["interaction"]) - _BY[by] - {"by"}:
            return f"bad interaction selector {s['interaction']}"
        roles = {"object": ("object",), "receptacle": ("pick", "place"), "room": ("pick", "place")}
        if s.get("role") not in roles[kind]:
            return f"role {s.get('role')!r} does not fit kind {kind}"
    if sum(k in s for k in ("category_slot", "attribute", "appearance_slot")) > 1:
        return "at most one of category_slot / attribute / appearance_slot"
    if "attribute" in s and s["attribute"].get("name") not in ATTRIBUTES:
        return f"attribute must name one of {ATTRIBUTES}"
    if ("category_slot" in s and kind == "room") or ("attribute" in s and kind != "object"):
        return f"category_slot / attribute do not apply to kind {kind}"
    if ("category_slot" in s or "attribute" in s or "appearance_slot" in s) and "set" not in s:
        return "category_slot / attribute / appearance_slot narrow a set"
    if s.get("extreme") not in (None, "farthest", "longest", "shortest", "most_time"):
        return f"unknown extreme {s['extreme']!r}"
    if s.get("each") not in (None, "distinct", "sequence"):
        return f"unknown each {s['each']!r}"
    if s.get("each") == "sequence" and (s.get("set") not in ("interacted", "pick", "place")):
        return "each: sequence needs set interacted / pick / place"
    if t.multi_goal != ("each" in s) or t.ordered != (s.get("each") == "sequence"):
        return "multi_goal / ordered do not match select.each"
    if set(t.slots) != select_slots(s) or len(t.slots) != len(set(t.slots)):
        return f"slots in text {t.slots} do not match the select's {sorted(select_slots(s))}"
    return None


def validate_templates(entries: Sequence[dict[str, Any]]) -> tuple[Template, ...]:
    """Check the table: 60 templates T01..T60, counts per category, 51 single- and 9
    multi-goal, predicates fitting the goal kind, slots in the text matching the select."""
    try:
        ts = tuple(Template.from_dict(d) for d in entries)
    except TypeError as e:
        raise MalformedInputError(f"findingdory templates: {e}") from None
    want = {c: n for cats in GROUPS.values() for c, n in cats.items()}
    problems = []
    if [t.id for t in ts] != [f"T{k:02d}" for k in range(1, 61)]:
        problems.append("ids must be T01..T60 in order")
    for t in ts:
        if t.category not in GROUPS.get(t.group, {}):
            problems.append(f"{t.id}: category {t.category!r} is not in group {t.group!r}")
        p = _select_problem(t)
        if p:
            problems.append(f"{t.id}: {p}")
    got = Counter(t.category for t in ts)
    if got != Counter(want):
        problems.append(f"counts per category {dict(got)} != {want}")
    if sum(t.multi_goal for t in ts) != 9:
        problems.append("need 51 single-goal and 9 multi-goal templates")
    if problems:
        raise MalformedInputError("findingdory templates: " + "; ".join(problems))
    return ts


@functools.lru_cache(maxsize=1)
def load_templates() -> tuple[Template, ...]:
    path = resources.files("dataforge.templates") / "findingdory" / "templates.json"
    return validate_templates(json.loads(path.read_text(encoding="utf-8"))["templates"])


def check_template_ids(ids: Sequence[str]) -> list[str]:
    """``ids`` (``--templates``), each a template of Table 3, or one line naming the unknown
    ones and listing the known ones."""
    known = [t.id for t in load_templates()]
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(
            f"--templates: unknown template {', '.join(unknown)} (known: {', '.join(known)})"
        )
    return list(ids)


# ---------------------------------------------------------------- instantiation


@dataclass(frozen=True)
class Task:
    template: str
    category: str
    group: str
    text: str
    goal_kind: str
    goals: tuple[tuple[str, ...], ...]  # subgoals, each: acceptable entity ids
    ordered: bool
    multi_goal: bool
    predicate: str
    slots: dict[str, str]  # slot -> the words written into the text
    interactions: tuple[int, ...]  # 0-based interactions the instruction refers to

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["goals"] = [list(g) for g in self.goals]
        d["interactions"] = list(self.interactions)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Task:
        goals = tuple(tuple(g) for g in d["goals"])
        return cls(**{**d, "goals": goals, "interactions": tuple(d["interactions"])})


@dataclass(frozen=True)
class Skip:
    template: str
    reason: str


class _Unsupplied(Exception):
    """The log cannot supply the template (the message is the reason)."""


@dataclass(frozen=True)
class _Filling:
    slots: dict[str, str]
    goals: tuple[tuple[str, ...], ...]
    interactions: tuple[int, ...]


class _View:
    """Lookups over one log."""

    def __init__(self, log: EpisodeLog) -> None:
        self.log = log
        self.obj = {o.id: o for o in log.objects}
        self.rec = {r.id: r for r in log.receptacles}
        self.n = len(log.interactions)

    def seq(self, role: str, kind: str = "receptacle") -> list[str | None]:
        """Per interaction: the object id, or the pick / place receptacle or room."""
        objs = [self.obj[i.object] for i in self.log.interactions]
        if role == "object":
            return [o.id for o in objs]
        if kind == "room":
            return [o.pick_room if role == "pick" else o.place_room for o in objs]
        return [o.start_receptacle if role == "pick" else o.goal_receptacle for o in objs]

    def members(self, kind: str, name: str) -> list[str]:
        if kind == "object":
            if name == "interacted":
                return self.seq("object")  # type: ignore[return-value]
            return [o.id for o in self.log.objects if name == "all" or not o.interacted]
        if kind == "room":
            return [
                r.id
                for r in self.log.rooms
                if name == "all" or (r.frames > 0) == (name == "visited")
            ]
        inter = _unique(
            r for pair in zip(self.seq("pick"), self.seq("place"), strict=True) for r in pair
        )
        if name in ("pick", "place"):
            return _unique(self.seq(name))
        if name == "interacted":
            return inter
        if name == "all":
            return [r.id for r in self.log.receptacles]
        candidates = {self.rec[r].category for r in inter}
        return [
            r.id for r in self.log.receptacles if r.category in candidates and r.id not in inter
        ]

    def category(self, kind: str, eid: str) -> str:
        return self.obj[eid].category if kind == "object" else self.rec[eid].category

    def touching(self, ids: Iterable[str]) -> tuple[int, ...]:
        ids = set(ids)
        rows = zip(self.seq("object"), self.seq("pick"), self.seq("place"), strict=True)
        return tuple(k for k, row in enumerate(rows) if ids & set(row))


def _unique(xs: Iterable[T | None]) -> list[T]:
    return [x for x in dict.fromkeys(xs) if x is not None]


def _group(items: Iterable[Any], key: Callable[[Any], Any]) -> dict[Any, list[Any]]:
    out: dict[Any, list[Any]] = {}
    for i in items:
        out.setdefault(key(i), []).append(i)
    return out


def _from_set(s: dict[str, Any], v: _View) -> tuple[list[_Filling], list[str]]:
    kind, name = s["kind"], s["set"]
    ids = v.members(kind, name)
    if not ids:
        raise _Unsupplied(f"no {name.replace('_', ' ')} {kind} in the log")
    groups: list[tuple[dict[str, str], list[str]]] = []
    rejects: list[str] = []
    if "category_slot" in s:
        for cat, members in _group(ids, lambda i: v.category(kind, i)).items():
            if s.get("unique") and len(members) > 1:
                rejects.append(f"{len(members)} {name} {display_name(cat)} (ambiguous)")
            else:
                groups.append(({s["category_slot"]: display_name(cat)}, members))
    elif "attribute" in s:
        attr = s["attribute"]["name"]
        values = {i: (v.obj[i].attributes or {}).get(attr) for i in ids}
        by_value = _group([i for i in ids if values[i]], lambda i: values[i])
        if not by_value:
            raise _Unsupplied(f"no {name} object has a known {attr}")
        groups = [({s["attribute"]["slot"]: val}, m) for val, m in by_value.items()]
    elif "appearance_slot" in s:
        groups = [({s["appearance_slot"]: ordinal(k)}, [i]) for k, i in enumerate(ids)]
    else:
        groups = [({}, ids)]
    out = []
    for slots, members in groups:
        try:
            goals = _shape_goals(s, v, members)
        except _Unsupplied as e:
            rejects.append(str(e))
            continue
        if "appearance_slot" in s:  # the interaction where it first appears
            refs: tuple[int, ...] = (v.seq(name).index(members[0]),)
        else:
            refs = v.touching(g for sub in goals for g in sub)
        out.append(_Filling(slots, goals, refs))
    return out, rejects


def _shape_goals(s: dict[str, Any], v: _View, ids: list[str]) -> tuple[tuple[str, ...], ...]:
    if "extreme" in s:
        return ((_extreme(s["extreme"], s["kind"], v, ids),),)
    each = s.get("each")
    if each is None:
        return (tuple(ids),)
    if each == "sequence":
        role = "object" if s["kind"] == "object" else s["set"]
        ids = list(dict.fromkeys(x for x in v.seq(role) if x is not None))
    if len(ids) < MIN_SUBGOALS:
        raise _Unsupplied(f"fewer than {MIN_SUBGOALS} {s['kind']}s to revisit")
    return tuple((i,) for i in ids)


def _extreme(how: str, kind: str, v: _View, ids: list[str]) -> str:
    if how == "farthest":
        missing = [i for i in ids if i not in v.log.distance_from_end]
        if missing:
            raise _Unsupplied(f"no distance_from_end for {missing}")
        score = {i: v.log.distance_from_end[i] for i in ids}
    elif how == "most_time":
        frames = {r.id: r.frames for r in v.log.rooms}
        score = {i: float(frames[i]) for i in ids}
    else:
        spans = {i.object: i.place[1] - i.pick[0] for i in v.log.interactions}
        score = {i: float(spans[i] if how == "longest" else -spans[i]) for i in ids}
    best = max(score.values())
    top = [i for i in ids if abs(score[i] - best) <= 1e-9]
    if len(top) > 1:
        raise _Unsupplied(f"tie for {how.replace('_', ' ')}: {top}")
    return top[0]


def _chosen(
    s: dict[str, Any], v: _View
) -> tuple[list[tuple[dict[str, str], list[int]]], list[str]]:
    """Slot fillings with the interaction(s) each names (several = ambiguous) and rejects."""
    sel, n = s["interaction"], v.n
    by = sel["by"]
    need = 3 if by == "between" or "count_slot" in sel else 2 if by == "offset" else 1
    if n < need:
        raise _Unsupplied(f"{n} interaction(s); {by} needs at least {need}")
    objs = v.seq("object")
    cats = _group(range(n), lambda k: v.obj[objs[k]].category)
    name = {k: display_name(c) for c, ks in cats.items() for k in ks}
    unique = {ks[0] for ks in cats.values() if len(ks) == 1}
    rejects = [
        f"{len(ks)} interacted {display_name(c)} (ambiguous)"
        for c, ks in cats.items()
        if len(ks) > 1
    ]
    out: list[tuple[dict[str, str], list[int]]] = []
    if by == "order":
        out = [({sel["slot"]: ordinal(k)}, [k]) for k in range(n)]
    elif by == "object":
        out = [({sel["slot"]: name[k]}, [k]) for k in sorted(unique)]
    elif by in ("receptacle", "receptacle_order"):
        recs = v.seq(sel["role"])
        groups = _group(range(n), lambda k: recs[k])  # by receptacle instance
        if by == "receptacle":
            groups = _group(range(n), lambda k: v.rec[recs[k]].category)
        rejects = []
        for k, (key, ks) in enumerate(groups.items()):
            word = ordinal(k) if by == "receptacle_order" else display_name(key)
            if len(ks) > 1:
                done = "picked from" if sel["role"] == "pick" else "placed on"
                rejects.append(f"{len(ks)} objects {done} the {word} receptacle (ambiguous)")
            else:
                out.append(({sel["slot"]: word}, ks))
    elif by == "offset":
        counts = range(2, n) if "count_slot" in sel else [1]
        for a in sorted(unique):
            for c in counts:
                k = a + sel["offset"] * c
                slots = {sel["anchor_slot"]: name[a]} | (
                    {sel["count_slot"]: str(c)} if "count_slot" in sel else {}
                )
                if 0 <= k < n:
                    out.append((slots, [a, k]))
    else:  # between: the one interaction strictly between a and a + 2
        s1, s2 = sel["anchor_slots"]
        out = [
            ({s1: name[a], s2: name[a + 2]}, [a, a + 2, a + 1])
            for a in range(n - 2)
            if a in unique and a + 2 in unique
        ]
    return out, rejects


def _by_interaction(s: dict[str, Any], v: _View) -> tuple[list[_Filling], list[str]]:
    chosen, rejects = _chosen(s, v)
    seq = v.seq(s["role"], s["kind"])
    out = []
    for slots, ks in chosen:
        goal = seq[ks[-1]]  # the target is the last one named
        if goal is None:
            rejects.append(f"interaction {ks[-1]} has no {s['role']} {s['kind']} logged")
            continue
        out.append(_Filling(slots, ((goal,),), tuple(sorted(set(ks)))))
    return out, rejects


def _at_time(
    s: dict[str, Any], v: _View, rng: np.random.Generator
) -> tuple[list[_Filling], list[str]]:
    clk = v.log.clock
    spans: list[tuple[str, int, int, int]] = []  # entity, interaction, first, last minute
    for k, i in enumerate(v.log.interactions):
        o = v.obj[i.object]
        if s["kind"] == "object":
            spans.append((o.id, k, clk.minutes(i.pick[0]), clk.minutes(i.place[1])))
        else:
            spans.append((o.start_receptacle, k, clk.minutes(i.pick[0]), clk.minutes(i.pick[1])))
            spans.append((o.goal_receptacle, k, clk.minutes(i.place[0]), clk.minutes(i.place[1])))  # type: ignore[arg-type]
    if not spans:
        raise _Unsupplied("no interactions")
    cover = Counter(m for _, _, a, b in spans for m in range(a, b + 1))
    out, rejects = [], []
    for eid, k, a, b in spans:
        alone = [m for m in range(a, b + 1) if cover[m] == 1]
        if not alone:
            rejects.append(f"no minute of interaction {k} identifies it alone")
            continue
        m = alone[int(rng.integers(len(alone)))]
        out.append(_Filling({s["at_time_slot"]: query_time(m)}, ((eid,),), (k,)))
    return out, rejects


def _fill(text: str, slots: dict[str, str]) -> str:
    """Slots filled; "a" before a filled word starting with a vowel becomes "an"."""
    out, last = [], 0
    for m in _SLOT.finditer(text):
        head, value = text[last : m.start()], slots[m.group(1)]
        if value[:1].lower() in "aeiou":
            head = re.sub(r"(^|\s)([Aa]) $", r"\1\2n ", head)
        out += [head, value]
        last = m.end()
    return "".join(out) + text[last:]


def instantiate(
    template: Template, log: EpisodeLog, rng: np.random.Generator, cap: int | None = DEFAULT_CAP
) -> list[Task] | Skip:
    """Every task ``log`` supports for ``template`` (one per valid slot filling; at most ``cap``,
    drawn with ``rng``; None = all), or :class:`Skip` saying why there is none."""
    v, s = _View(log), template.select
    try:
        if "at_time_slot" in s:
            fillings, rejects = _at_time(s, v, rng)
        elif "interaction" in s:
            fillings, rejects = _by_interaction(s, v)
        else:
            fillings, rejects = _from_set(s, v)
    except _Unsupplied as e:
        return Skip(template.id, str(e))
    if not fillings:
        return Skip(template.id, "; ".join(dict.fromkeys(rejects)) or "nothing to fill")
    if cap is not None and len(fillings) > cap:
        keep = np.sort(rng.choice(len(fillings), size=cap, replace=False))
        fillings = [fillings[int(k)] for k in keep]
    return [
        Task(
            template=template.id,
            category=template.category,
            group=template.group,
            text=_fill(template.text, f.slots),
            goal_kind=s["kind"],
            goals=f.goals,
            ordered=template.ordered,
            multi_goal=template.multi_goal,
            predicate=template.predicate,
            slots=f.slots,
            interactions=f.interactions,
        )
        for f in fillings
    ]


def instantiate_all(
    log: EpisodeLog, rng: np.random.Generator, cap: int | None = DEFAULT_CAP
) -> tuple[list[Task], list[Skip]]:
    """All templates in table order: the tasks and the skipped templates."""
    tasks: list[Task] = []
    skips: list[Skip] = []
    for t in load_templates():
        got = instantiate(t, log, rng, cap)
        if isinstance(got, Skip):
            skips.append(got)
        else:
            tasks += got
    return tasks, skips
