"""What FindingDory's collection logs about an episode, as the template engine reads it
(:mod:`.templates`): objects (interacted ones and their same-category distractors), receptacles,
rooms with the frames spent in each, the interactions in order, the frame count, the clock and
geodesic distances from the final pose; and the objects' attributes: the words for how each
is drawn (shape, colour, print or design, material: :mod:`dataforge.world.appearance`) and, per
category, functionality (and material where the drawing names none) from
``templates/findingdory/attributes.json``."""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

from dataforge.errors import MalformedInputError

Span = tuple[int, int]
ATTRIBUTE_COLUMNS = ("shape", "color", "print_or_design", "material", "functionality")
DRAWN_COLUMNS = ("shape", "color", "print_or_design", "material")
"""The columns read off the drawn object (:mod:`dataforge.world.appearance`)."""


def _hhmm(text: str) -> int:
    h, m = text.split(":")
    return int(h) * 60 + int(m)


def clock_minutes(frame: int, start: str = "06:00", end: str = "22:00", steps: int = 4000) -> int:
    """Minutes since midnight at ``frame``: ``start`` + frame / steps x (end - start), floored.

    Upstream's formula (wake 6, sleep 22, 4,000 steps a day: 14.4 s a frame) in exact integer
    arithmetic; upstream's floats read one minute early at frames 1025 and 2050."""
    a, b = _hhmm(start), _hhmm(end)
    return a + frame * (b - a) // steps


def clock(frame: int, start: str = "06:00", end: str = "22:00", steps: int = 4000) -> str:
    """The ``HH:MM`` stamp (zero-padded, as drawn on the frames) of ``frame``."""
    m = clock_minutes(frame, start, end, steps)
    return f"{m // 60:02d}:{m % 60:02d}"


@dataclass(frozen=True)
class Clock:
    start: str = "06:00"
    end: str = "22:00"
    steps: int = 4000

    def minutes(self, frame: int) -> int:
        return clock_minutes(frame, self.start, self.end, self.steps)

    def __call__(self, frame: int) -> str:
        return clock(frame, self.start, self.end, self.steps)


def _span(v: Any) -> Span | None:
    return None if v is None else (int(v[0]), int(v[1]))


def _list(span: Span | None) -> list[int] | None:
    return None if span is None else [span[0], span[1]]


@dataclass(frozen=True)
class LoggedObject:
    """A small object: rearranged (``interacted``) or a distractor left where it spawned."""

    id: str
    category: str
    interacted: bool
    start_receptacle: str
    goal_receptacle: str | None = None
    pick: Span | None = None  # [first, last] frame of the pick routine
    place: Span | None = None  # [first, last] frame of the place routine
    pick_room: str | None = None
    place_room: str | None = None
    attributes: dict[str, str | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "pick": _list(self.pick), "place": _list(self.place)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LoggedObject:
        return cls(**{**d, "pick": _span(d.get("pick")), "place": _span(d.get("place"))})


@dataclass(frozen=True)
class LoggedReceptacle:
    id: str
    category: str
    room: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LoggedReceptacle:
        return cls(**d)


@dataclass(frozen=True)
class LoggedRoom:
    id: str
    name: str
    frames: int = 0  # frames spent in it; 0 = not visited

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LoggedRoom:
        return cls(**d)


@dataclass(frozen=True)
class Interaction:
    """The k-th rearrangement: the object and its pick and place frame spans."""

    object: str
    pick: Span
    place: Span

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object, "pick": _list(self.pick), "place": _list(self.place)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Interaction:
        return cls(str(d["object"]), _span(d["pick"]), _span(d["place"]))  # type: ignore[arg-type]


@dataclass(frozen=True)
class EpisodeLog:
    objects: tuple[LoggedObject, ...]
    receptacles: tuple[LoggedReceptacle, ...]
    rooms: tuple[LoggedRoom, ...]
    interactions: tuple[Interaction, ...]
    frames: int
    clock: Clock = field(default_factory=Clock)
    distance_from_end: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problem = _log_problem(self)
        if problem:
            raise MalformedInputError(f"episode log: {problem}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "objects": [o.to_dict() for o in self.objects],
            "receptacles": [r.to_dict() for r in self.receptacles],
            "rooms": [r.to_dict() for r in self.rooms],
            "interactions": [i.to_dict() for i in self.interactions],
            "frames": self.frames,
            "clock": dict(self.clock.__dict__),
            "distance_from_end": dict(self.distance_from_end),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EpisodeLog:
        try:
            return cls(
                objects=tuple(LoggedObject.from_dict(o) for o in d["objects"]),
                receptacles=tuple(LoggedReceptacle.from_dict(r) for r in d["receptacles"]),
                rooms=tuple(LoggedRoom.from_dict(r) for r in d["rooms"]),
                interactions=tuple(Interaction.from_dict(i) for i in d["interactions"]),
                frames=int(d["frames"]),
                clock=Clock(**d.get("clock", {})),
                distance_from_end={k: float(v) for k, v in d.get("distance_from_end", {}).items()},
            )
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise MalformedInputError(f"episode log: {type(e).__name__}: {e}") from None

    def with_attributes(
        self,
        drawn: Mapping[str, Mapping[str, str | None] | None] | None = None,
        table: dict[str, dict[str, str | None]] | None = None,
    ) -> EpisodeLog:
        """Objects' ``attributes`` (:data:`ATTRIBUTE_COLUMNS`): shape, color, print_or_design and
        material from ``drawn`` (object id -> the words for how that object is drawn), then
        functionality, and material where the drawn words have none, from the category
        ``table`` (attributes.json by default). An object without drawn words has shape, color
        and print_or_design None (unknown: nothing is claimed for it); one with neither drawn
        words nor a table row gets None. Objects that already carry attributes keep them."""
        table = load_attributes() if table is None else table
        drawn = {} if drawn is None else drawn
        objs = tuple(
            o
            if o.attributes is not None
            else replace(o, attributes=_attributes(drawn.get(o.id), table.get(o.category)))
            for o in self.objects
        )
        return replace(self, objects=objs)


def _log_problem(log: EpisodeLog) -> str | None:
    ids = [
        *(o.id for o in log.objects),
        *(r.id for r in log.receptacles),
        *(r.id for r in log.rooms),
    ]
    dup = [i for i, n in Counter(ids).items() if n > 1]
    if dup:
        return f"ids used twice: {dup}"
    recs, rooms = {r.id for r in log.receptacles}, {r.id for r in log.rooms}
    objs = {o.id: o for o in log.objects}
    for r in log.receptacles:
        if r.room is not None and r.room not in rooms:
            return f"receptacle {r.id} in unknown room {r.room}"
    for o in log.objects:
        if o.start_receptacle not in recs or o.goal_receptacle not in (recs | {None}):
            return f"object {o.id} names an unknown receptacle"
        if any(r is not None and r not in rooms for r in (o.pick_room, o.place_room)):
            return f"object {o.id} names an unknown room"
        if o.interacted and (o.goal_receptacle is None or o.pick is None or o.place is None):
            return f"interacted object {o.id} lacks its goal receptacle or spans"
    done = [i.object for i in log.interactions]
    if sorted(done) != sorted(o.id for o in log.objects if o.interacted):
        return "the interactions must name each interacted object exactly once"
    last = -1
    for k, i in enumerate(log.interactions):
        o = objs[i.object]
        if (o.pick, o.place) != (i.pick, i.place):
            return f"interaction {k}: spans differ from object {o.id}'s"
        if not last < i.pick[0] <= i.pick[1] <= i.place[0] <= i.place[1] < log.frames:
            return f"interaction {k}: spans out of order or past the last frame"
        last = i.place[1] - 1  # the next may start on this one's last frame
    return None


@functools.lru_cache(maxsize=1)
def _attribute_file() -> dict[str, Any]:
    path = resources.files("dataforge.templates") / "findingdory" / "attributes.json"
    return json.loads(path.read_text(encoding="utf-8"))


def load_attributes() -> dict[str, dict[str, str | None]]:
    """Category -> {material, functionality}: what the drawing cannot say (per category)."""
    return {k: dict(v) for k, v in _attribute_file()["categories"].items()}


def _attributes(
    drawn: Mapping[str, str | None] | None, row: Mapping[str, str | None] | None
) -> dict[str, str | None] | None:
    if drawn is None and row is None:
        return None
    drawn, row = drawn or {}, row or {}
    out = {c: drawn.get(c) for c in DRAWN_COLUMNS}
    out["material"] = out["material"] or row.get("material")
    out["functionality"] = row.get("functionality")
    return out
