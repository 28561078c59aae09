"""Names for receptacles that a model can ground in what it sees (issue 37, item 3).

A receptacle is named by its type, the furniture it belongs to, the room and its place among its
furniture's elements of the same type, never by an id or a number:

- a piece of furniture (a receptacle without a parent): its type and room, "Dresser in the
  Bedroom"; when that fits two pieces of furniture of the house, a relation to a landmark (a
  piece of furniture of another type that is the only one of its type in the room, at most
  :data:`NEAR_MAX_M` away): "SideTable next to the Bed in the Bedroom" when no other piece with
  the same name stands within :data:`NEAR_MARGIN_M` as close to the landmark, else "SideTable
  left of the Bed in the Bedroom" (left / right as seen by someone facing the landmark's front,
  local +z) when no other such piece stands on that side as close;
- an element (a drawer, cabinet, shelf or basin, ``<furniture>|Drawer_3``): its place among the
  furniture's elements of its type, then "of the" and the furniture's name: "top left drawer of
  the Dresser in the Bedroom". Rows are the heights of the elements' bottoms (those within
  :data:`ROW_TOLERANCE_M` form a row), named from the top; within a row the elements are named
  from the left as seen by someone facing the furniture's front. Two in a row are top / bottom
  (left / right), three add "middle"; beyond that the ones between are counted from the nearer
  end in words ("second from the top"): an ordinal a model can count in the image, from an edge
  it sees, never an id.

A name that still fits two receptacles of the house (no landmark tells them apart, two elements
side by side at one height, a graph without positions) makes both :attr:`Names.ambiguous`: a
question must not name them (the builder skips and counts it). The geometry is the stored world
graphs' (receptacle boxes, object positions and rotations, rooms), read at the first step that
holds each node; nothing is rendered.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ROW_TOLERANCE_M = 0.05
"""Elements whose bottoms lie within this height of each other form one row."""
ARM_DEPTH_M = 0.2
"""An element this far in front of the back-most one of its row stands on a counter's arm."""
SIDE_TOLERANCE_M = 0.05
"""Two elements of one row closer than this side to side cannot be told apart."""
NEAR_MAX_M = 2.0
"""A landmark is at most this far (plan distance between positions) from what it names."""
NEAR_MARGIN_M = 0.3
"""'next to L' needs every other piece of the same name this much farther from L."""
SIDE_MIN_M = 0.2
"""'left of L' needs the piece this far to the side of L's centre."""

ORDINALS = ("second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
MOST_IN_LINE = 2 * len(ORDINALS) + 3
"""The most elements of one line (a column of rows, or a row) that :func:`from_ends` names;
more make them ambiguous."""


@dataclass(frozen=True)
class Names:
    """Receptacle id -> name (without an article: "top drawer of the Dresser in the Bedroom"),
    and the receptacles whose name fits another one too."""

    label: dict[str, str]
    ambiguous: frozenset[str]


@dataclass(frozen=True)
class Node:
    """What the graphs say about one receptacle or top-level object."""

    id: str
    type: str
    parent: str | None = None
    room: str | None = None  # the room's type
    room_id: str | None = None
    xz: tuple[float, float] | None = None  # plan position (object position, else box centre)
    yaw: float | None = None  # rotation about y, degrees (objects only)
    bottom: float | None = None  # the box's lowest y
    rests: bool = False  # an object resting on another (a Bowl on a table): no landmark


def receptacle_names(
    graphs: Sequence[Mapping[str, Any]], receptacles: Iterable[str], types: Mapping[str, str]
) -> Names:
    """Names of ``receptacles`` (ids; a type missing from ``types`` is the id's last part),
    each unique among every receptacle of the graphs or marked ambiguous."""
    nodes = _nodes(graphs)
    wanted = sorted(set(receptacles))
    for r in wanted:
        nodes.setdefault(r, Node(r, types.get(r, r.rsplit("|", 1)[-1])))
    for p in {n.parent for n in list(nodes.values()) if n.parent is not None}:
        nodes.setdefault(p, Node(p, types.get(p, p.rsplit("|", 1)[-1])))
    label, unclear = furniture_names(nodes)
    for r, phrase in element_phrases(nodes).items():
        parent = nodes[r].parent
        assert parent is not None
        label[r] = f"{phrase or type_word(nodes[r].type)} of the {label[parent]}"
        if phrase is None or parent in unclear:
            unclear.add(r)
    counts = Counter(label.values())
    unclear |= {r for r in label if counts[label[r]] > 1}
    return Names({r: label[r] for r in wanted}, frozenset(unclear & set(wanted)))


def _nodes(graphs: Sequence[Mapping[str, Any]]) -> dict[str, Node]:
    """Receptacles and top-level objects as the first graph holding each describes them."""
    rooms: dict[str, str] = {}
    objects: dict[str, Mapping[str, Any]] = {}
    boxes: dict[str, Mapping[str, Any]] = {}
    for g in graphs:
        for room in g.get("rooms", ()):
            rooms.setdefault(room["id"], room["room_type"])
        for o in g.get("objects", ()):
            objects.setdefault(o["id"], o)
        for r in g.get("receptacles", ()):
            boxes.setdefault(r["id"], r)
    parents = {r["parent_id"] for r in boxes.values() if r.get("parent_id")}
    out = {}
    for rid in sorted(set(boxes) | (parents & set(objects))):
        r, o = boxes.get(rid, {}), objects.get(rid, {})
        out[rid] = Node(
            rid,
            r.get("object_type") or o["object_type"],
            parent=r.get("parent_id"),
            room=rooms.get(o.get("room_id") or ""),
            room_id=o.get("room_id"),
            xz=_plan(o, r),
            yaw=float(o["rotation"][1]) if o.get("rotation") else None,
            bottom=float(r["aabb_min"][1]) if r.get("aabb_min") else None,
            rests=bool(o.get("parent_id")),
        )
    return out


def _plan(obj: Mapping[str, Any], rec: Mapping[str, Any]) -> tuple[float, float] | None:
    if obj.get("position"):
        return (float(obj["position"][0]), float(obj["position"][2]))
    if rec.get("aabb_min") and rec.get("aabb_max"):
        lo, hi = rec["aabb_min"], rec["aabb_max"]
        return ((float(lo[0]) + float(hi[0])) / 2, (float(lo[2]) + float(hi[2])) / 2)
    return None


def type_word(thor_type: str) -> str:
    """An element's type in words: ``SinkBasin`` -> "sink basin"."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", thor_type).lower()


def local_xz(anchor: Node, xz: tuple[float, float]) -> tuple[float, float] | None:
    """``xz`` in ``anchor``'s own frame (x, z; front +z), None without its position and
    rotation. AI2-THOR: world offset = (dx cos t + dz sin t, -dx sin t + dz cos t) for the
    local offset (dx, dz) under rotation.y = t."""
    if anchor.xz is None or anchor.yaw is None:
        return None
    t = math.radians(anchor.yaw)
    wx, wz = xz[0] - anchor.xz[0], xz[1] - anchor.xz[1]
    return (wx * math.cos(t) - wz * math.sin(t), wx * math.sin(t) + wz * math.cos(t))


def right_of(anchor: Node, xz: tuple[float, float]) -> float | None:
    """How far ``xz`` lies to the right of ``anchor``'s position as seen by someone facing the
    anchor's front (looking along its local -z, with its local -x on their right), m."""
    local = local_xz(anchor, xz)
    return None if local is None else -local[0]


def from_ends(i: int, n: int, first: str, last: str) -> str:
    """The place of item ``i`` of ``n`` in a line running from ``first`` to ``last``, counted
    from the nearer end: "top", "middle", "second from the top", "bottom"."""
    if i == 0:
        return first
    if i == n - 1:
        return last
    if n % 2 == 1 and i == n // 2:
        return "middle"
    if i < n / 2:
        return f"{ORDINALS[i - 1]} from the {first}"
    return f"{ORDINALS[n - 2 - i]} from the {last}"


def element_phrases(nodes: Mapping[str, Node]) -> dict[str, str | None]:
    """Element id -> "top left drawer" (its type in words, where it is among its furniture's
    elements of that type) for every element of ``nodes``; None where two of them cannot be
    told apart."""
    groups: dict[tuple[str, str], list[str]] = {}
    for e, n in nodes.items():
        if n.parent is not None:
            groups.setdefault((n.parent, n.type), []).append(e)
    out: dict[str, str | None] = {}
    for (parent, kind), ids in sorted(groups.items()):
        word = type_word(kind)
        if len(ids) == 1:
            out[ids[0]] = word
            continue
        places = _places([nodes[e] for e in sorted(ids)], nodes[parent])
        for e in ids:
            place = places.get(e)
            out[e] = None if place is None else _phrase(place, word)
    return out


def _places(siblings: Sequence[Node], furniture: Node) -> dict[str, tuple[str, str] | None]:
    """Sibling id -> (place in height, place side to side; "" where alone), or None."""
    if any(s.bottom is None for s in siblings):
        return dict.fromkeys((s.id for s in siblings), None)
    rows: list[list[Node]] = []
    for s in sorted(siblings, key=lambda s: (-(s.bottom or 0.0), s.id)):
        if rows and (rows[-1][0].bottom or 0.0) - (s.bottom or 0.0) <= ROW_TOLERANCE_M:
            rows[-1].append(s)
        else:
            rows.append([s])
    if len(rows) > MOST_IN_LINE:
        return dict.fromkeys((s.id for s in siblings), None)
    out: dict[str, tuple[str, str] | None] = {}
    for i, row in enumerate(rows):
        height = from_ends(i, len(rows), "top", "bottom") if len(rows) > 1 else ""
        sides = _row_order(row, furniture) if len(row) <= MOST_IN_LINE else None
        for s in row:
            if len(row) == 1:
                out[s.id] = (height, "")
            elif sides is None:
                out[s.id] = None
            else:
                out[s.id] = (height, from_ends(sides.index(s.id), len(row), "left", "right"))
    return out


def _row_order(row: Sequence[Node], furniture: Node) -> list[str] | None:
    """The ids of one row from left to right (facing the furniture), or None when two stand at
    one place side to side (or the graph lacks the geometry)."""
    at: list[tuple[float, str]] = []
    for s in row:
        x = _along(furniture, s.xz, row) if s.xz is not None else None
        if x is None:
            return None
        at.append((x, s.id))
    at.sort()
    if any(b[0] - a[0] < SIDE_TOLERANCE_M for a, b in itertools.pairwise(at)):
        return None
    return [i for _, i in at]


def _along(furniture: Node, xz: tuple[float, float], row: Sequence[Node]) -> float | None:
    """Where ``xz`` lies along ``furniture`` from its left end, facing its front (m): the
    local -x; round the arms of an L or C counter, whose elements stand more than
    :data:`ARM_DEPTH_M` in front of the row's back-most one, the walk continues forwards from
    the arm's corner (so the front end of a left arm is left of its corner)."""
    local = local_xz(furniture, xz)
    if local is None:
        return None
    backs = [p[1] for s in row if s.xz is not None and (p := local_xz(furniture, s.xz))]
    ahead = local[1] - min(backs)
    x = local[0] + math.copysign(ahead, local[0]) if ahead > ARM_DEPTH_M else local[0]
    return -x


def _phrase(place: tuple[str, str], word: str) -> str:
    """ "top left drawer", "drawer second from the top", "left drawer second from the top"."""
    height, side = place
    if height == side == "middle":
        height, side = "centre", ""
    before = [p for p in (height, side) if p and " " not in p]
    after = [p for p in (height, side) if " " in p]
    return " ".join([*before, word]) + (" " + " and ".join(after) if after else "")


def furniture_names(nodes: Mapping[str, Node]) -> tuple[dict[str, str], set[str]]:
    """Id -> "Dresser in the Bedroom" of every top-level receptacle of ``nodes`` (with a
    landmark where its type and room fit another one), and the ids whose name still fits
    another one."""
    pieces = sorted((n for n in nodes.values() if n.parent is None), key=lambda n: n.id)
    base = {n.id: _with_room(n.type, n.room) for n in pieces}
    same = Counter(base.values())
    label = dict(base)
    for n in pieces:
        if same[base[n.id]] > 1:
            rivals = [m for m in pieces if m.id != n.id and base[m.id] == base[n.id]]
            rel = relation(n, rivals, pieces)
            if rel is not None:
                label[n.id] = _with_room(f"{n.type} {rel}", n.room)
    counts = Counter(label.values())
    # a piece left with its plain name while another has that name too stays unclear even when
    # the other got a landmark: the plain name still fits both
    unclear = {
        i for i in label if counts[label[i]] > 1 or (label[i] == base[i] and same[base[i]] > 1)
    }
    return label, unclear


def _with_room(name: str, room: str | None) -> str:
    return f"{name} in the {room}" if room else name


def relation(piece: Node, rivals: Sequence[Node], others: Sequence[Node]) -> str | None:
    """ "next to the Bed" or "left of the Bed": a landmark relation that fits ``piece`` and none
    of ``rivals`` (the other pieces with its name); None when no landmark does."""
    if piece.xz is None:
        return None
    here = [n for n in others if n.room_id == piece.room_id]
    in_room = Counter(n.type for n in here)
    marks = [
        n for n in here if n.type != piece.type and in_room[n.type] == 1 and n.xz and not n.rests
    ]
    for mark in sorted(marks, key=lambda n: (_dist(piece, n), n.id)):
        d = _dist(piece, mark)
        if d > NEAR_MAX_M:
            break
        closer = [r for r in rivals if _dist(r, mark) <= d + NEAR_MARGIN_M]
        if not closer:
            return f"next to the {mark.type}"
        side = _side(mark, piece)
        if side is not None and all(_side(mark, r) != side for r in closer):
            return f"{side} of the {mark.type}"
    return None


def _dist(a: Node, b: Node) -> float:
    if a.xz is None or b.xz is None:
        return math.inf
    return math.hypot(a.xz[0] - b.xz[0], a.xz[1] - b.xz[1])


def _side(mark: Node, piece: Node) -> str | None:
    """ "left" / "right" of ``mark`` (facing its front), None when too close to its centre."""
    x = right_of(mark, piece.xz) if piece.xz is not None else None
    if x is None or abs(x) < SIDE_MIN_M:
        return None
    return "right" if x > 0 else "left"
