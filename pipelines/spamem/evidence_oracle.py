"""The evidence oracle (``dataforge spamem baseline --kind evidence``): answers every question
from only what the record gives the model: its frames, read as a perfect perceiver would read
them (instance and semantic masks, depth, camera pose and intrinsics), at L2 the text history
in its prompt, and the record's ``referents``: what the prompt names, grounded to instance
ids. It never reads ``answer``, ``context``, ``evidence`` or a world graph, so where it scores
below 1 a question is not answerable from what it is given (or the oracle's perception rule is
wrong: compare with the record's ``evidence``).

Perception rules:

- An instance is seen when its mask has at least ``min_pixels`` pixels (the question builder's
  rule, :data:`~.sequence_view.VISIBLE_SHARE`); its type is the semantic class of its pixels.
- Holders are the instances of :func:`holder_types`; every other instance but the house's
  structure is an object. Support: an object rests on the holder whose surface lies nearest
  the object's lowest visible points (:data:`BOTTOM_PCT`), no more than :data:`MAX_GAP_M`
  below and :data:`ABOVE_M` above them; an object inside the visible extent of an open
  cabinet or drawer (:data:`PARTS`) is in it. A surface is either the holder's points within
  :data:`FOOTPRINT_M` of the object's plan footprint (the object's centre must lie over the
  holder's plan extent), or the holder's pixels right under the object's lowest pixels in the
  image when they are not behind the object (a counter seen from below its top, whose front
  edge hides the top). A shelf within those limits wins over any other holder: a shelf is
  open, the unit's side or back stands beside what rests on its board.
- Boxes are mask extents; distances the median depth of the mask; a lifespan the first and
  last step whose frame shows the object; a path one entry per receptacle (instance) it is
  seen on; neighbours by the distance between centres, the middle of each one's visible
  points' extent, directions in the camera frame as the question builder's rule.

L2 records show the frame of the query step q and, in the prompt, a text history of steps
0..q-1 (:meth:`.questions.Builder.history`): each receptacle's objects by type and position at
step 0, then those of the receptacles each step changed. The oracle reads that text
(:class:`History`) for the steps before q and the frame for q; the receptacles a question names
are the history's names found in the question's text (longest first). The frame's objects are
paired one to one with the history's of their type, nearest first, within :data:`MATCH_M` (in
a drawer at any distance: it is drawn pulled out, the history states the closed drawer): an
object added since a history step is one of the frame's on the receptacle left unpaired; one
removed, one of the history's left unpaired. CSR compares step 0 with q through step q-1
(:meth:`History.follow`): the history's objects at q-1 that were there at step 0 are those
that can have stayed; one that came between is added whatever it pairs with, one that left
between is removed. An object the prompt names "the Mug on the Table at step s" (TL, STT) is
followed through the history by its position: it stays where a step lists it at the same
position (or does not list its receptacle) until a step's action takes it from there (moved:
where the action put it; removed); at q the frame's referent shows it (named at q but not in
the frame: where q-1 lists it on the named receptacle, as one action moves one object). STT's
path has one entry per receptacle name (two drawers are two entries). RSR-M about a step
before q reads the positions the history lists then and the camera it states for that step.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.errors import UsageError
from dataforge.pipelines.spamem import qa

BOTTOM_PCT = 2.0  # percentile of the object's visible heights taken as its bottom
MAX_GAP_M = 0.10  # the surface may lie this far below the object's lowest visible point
ABOVE_M = 0.03  # ... or this far above it (a soft surface, rounding)
FOOTPRINT_M = 0.08  # plan margin around the object's points in which its surface is sought
CONTACT_PX = 3  # image rows under an object's lowest pixel searched for what holds it
MATCH_M = 0.3  # a frame object is a history object of its type within this distance
SAME_M = 0.006  # two steps of the history list an object that stayed at the same position
PARTS = frozenset({"Cabinet", "Drawer", "SinkBasin"})  # parts that hold what is inside them
STRUCTURE = frozenset({"nothing", "Floor", "Wall", "Ceiling", "Doorframe", "Doorway", "Window"})


@functools.lru_cache(maxsize=1)
def holder_types() -> frozenset[str]:
    """Types that hold objects and never rest on one: procthor's receptacle types and the
    furniture's parts (drawers, shelves, ...), less the types its statistics also place on a
    receptacle (a Bowl, a Box). World knowledge from the asset catalogue, not from a scene."""
    from dataforge.world.assets import load_catalogue
    from dataforge.world.shapes import SUB_RECEPTACLE_TYPES

    cat = load_catalogue()
    placed = {o for r in cat.receptacle_types() for o in cat.receptacle_pairs(r)}
    return frozenset((set(cat.receptacle_types()) | set(SUB_RECEPTACLE_TYPES)) - placed)


class Frame:
    """One view as a perfect perceiver reads it."""

    def __init__(
        self,
        instance: np.ndarray,
        depth_mm: np.ndarray,
        semantic: np.ndarray,
        class_names: Sequence[str],
        K: np.ndarray,
        pose: np.ndarray,
        min_pixels: int,
    ) -> None:
        from dataforge.render.camera import unproject, world_to_camera

        self.inst = np.asarray(instance, np.int64)
        self.depth = np.asarray(depth_mm, np.float64) / 1000.0
        ids, counts = np.unique(self.inst, return_counts=True)
        self.seen = {int(i) for i, n in zip(ids, counts, strict=True) if i and n >= min_pixels}
        sem = np.asarray(semantic, np.int64)
        self.type: dict[int, str] = {}
        for i in self.seen:
            classes, n = np.unique(sem[self.inst == i], return_counts=True)
            self.type[i] = str(class_names[int(classes[np.argmax(n)])])
        v, u = np.nonzero(self.depth > 0)
        self.world = np.full((*self.inst.shape, 3), np.nan)
        self.world[v, u] = unproject(self.depth, K, pose, u, v)
        self.w2c = world_to_camera(pose)
        things = {i for i in self.seen if self.type[i] not in STRUCTURE}
        self.holders = {i for i in things if self.type[i] in holder_types()}
        self.objects = things - self.holders
        self._support: dict[int, int | None] = {}
        self._points: dict[int, np.ndarray] = {}

    def points(self, i: int) -> np.ndarray:
        """World points of instance ``i``'s pixels with depth (once per instance)."""
        if i not in self._points:
            self._points[i] = self.world[(self.inst == i) & (self.depth > 0)]
        return self._points[i]

    def support(self, i: int) -> int | None:
        """The instance object ``i`` rests on (module docstring), or None."""
        if i not in self._support:
            self._support[i] = self._find_support(i)
        return self._support[i]

    def _find_support(self, i: int) -> int | None:
        pts = self.points(i)
        if not len(pts):
            return None
        bottom = float(np.percentile(pts[:, 1], BOTTOM_PCT))
        lo, hi = pts[:, [0, 2]].min(0) - FOOTPRINT_M, pts[:, [0, 2]].max(0) + FOOTPRINT_M
        centre = pts[:, [0, 2]].mean(0)
        gaps: dict[int, float] = {}
        for k in self.holders - {i}:
            q = self.points(k)
            if not len(q):
                continue
            plan = q[:, [0, 2]]
            over = np.all(centre >= plan.min(0) - 0.02) and np.all(centre <= plan.max(0) + 0.02)
            near = np.all((plan >= lo) & (plan <= hi), axis=1) & (q[:, 1] < bottom + ABOVE_M)
            if over and near.any():
                gaps[k] = bottom - float(q[near, 1].max())
        for k, ys in self._contacts(i).items():
            if len(ys) >= 2:
                g = bottom - float(np.median(ys))
                gaps[k] = min(gaps.get(k, g), g, key=abs)
        held = {k: g for k, g in gaps.items() if -ABOVE_M < g < MAX_GAP_M}
        if not held:
            return None
        shelves = {k: g for k, g in held.items() if self.type[k] == "Shelf"}
        held = shelves or held  # a shelf's board, not the unit's side or back beside the object
        return self._enclosing(i, bottom) or min(held, key=lambda k: (abs(held[k]), k))

    def _enclosing(self, i: int, bottom: float) -> int | None:
        """The part of a piece of furniture (:data:`PARTS`: an open cabinet, a drawer, a sink
        basin) whose visible extent holds object ``i``'s centre in plan and its bottom in
        height: the floor of a cabinet is drawn as the carcass's, so what stands on it seems
        to rest on the furniture, yet it is in the cabinet; a cup in a basin rests on the
        sink as much as on the basin."""
        centre = self.points(i)[:, [0, 2]].mean(0)
        for k in sorted(self.holders - {i}):
            q = self.points(k)
            if self.type[k] not in PARTS or not len(q):
                continue
            lo, hi = q.min(0), q.max(0)
            inside = np.all(centre >= lo[[0, 2]]) and np.all(centre <= hi[[0, 2]])
            if inside and lo[1] - ABOVE_M <= bottom <= hi[1]:
                return k
        return None

    def _contacts(self, i: int) -> dict[int, list[float]]:
        """Holder -> heights of its pixels right under object ``i``'s lowest pixel per column,
        where they are not farther from the camera than the object there."""
        m = self.inst == i
        h = m.shape[0]
        out: dict[int, list[float]] = {}
        for u in np.nonzero(m.any(0))[0]:
            v = int(np.nonzero(m[:, u])[0].max())
            for dv in range(1, CONTACT_PX + 1):
                if v + dv >= h:
                    break
                k = int(self.inst[v + dv, u])
                if k == i:
                    continue
                d = self.depth[v + dv, u]
                if k in self.holders and 0 < d <= self.depth[v, u] + 0.05:
                    out.setdefault(k, []).append(float(self.world[v + dv, u, 1]))
                break
        return out

    def on(self, holders: Iterable[int]) -> set[int] | None:
        """The objects resting on any of ``holders``; None when none of them is seen."""
        hs = set(holders)
        if not hs & self.seen:
            return None
        return {o for o in self.objects if self.support(o) in hs}

    def box(self, i: int) -> list[int]:
        v, u = np.nonzero(self.inst == i)
        return [int(u.min()), int(v.min()), int(u.max()), int(v.max())]

    def median_depth_m(self, i: int) -> float:
        d = self.depth[(self.inst == i) & (self.depth > 0)]
        return float(np.median(d)) if len(d) else 0.0

    def centroid(self, i: int) -> np.ndarray:
        return self.points(i).mean(0)

    def centre(self, i: int) -> np.ndarray:
        """Instance ``i``'s centre as seen: the middle of its visible points' extent (x, y, z).
        Seen from above at a slant, an object's top and near sides span its whole box, while
        their centroid lies on the near side (issue 37, 3 question sets: the error to the 3D
        box centre has median 1.5 cm for standing furniture and 1.1 cm for what rests on
        something, against 18 and 3.9 cm for the centroid moved back by 0.35 of its width)."""
        p = self.points(i)
        return (p.min(0) + p.max(0)) / 2

    def direction(self, anchor: int, other: int) -> str:
        """The question builder's rule (:meth:`.SequenceView.direction`) on visible centroids."""
        from dataforge.pipelines.spamem.sequence_view import direction

        a, b = (self.w2c[:3, :3] @ self.centre(k) + self.w2c[:3, 3] for k in (anchor, other))
        return direction(float(b[0] - a[0]), float(b[2] - a[2]))


class FrameReader:
    """The frames a record references, from the sequences datasets its tasks manifest records."""

    def __init__(self, tasks_dir: str | Path, data_root: str | Path | None = None) -> None:
        from dataforge.pipelines.spamem.evaluate import FrameSource

        self.source = FrameSource(Path(tasks_dir), Path(data_root) if data_root else None)
        self._cache: dict[tuple[str, str, int, int], Frame] = {}

    def frame(self, ref: Mapping[str, Any]) -> Frame:
        from dataforge.pipelines.spamem.sequence_view import visible_pixels

        key = (ref["dataset"], ref["episode"], int(ref["step"]), int(ref["view"]))
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            ds, _ = self.source.dataset(ref["dataset"])
            ep = ds[ref["episode"]]
            meta = ep.metadata
            row = key[2] * int(meta["views_per_state"]) + key[3]
            w, h = (int(x) for x in meta["capture"]["resolution"])
            self._cache[key] = Frame(
                ep["instance"][row],
                ep["depth"][row],
                ep["semantic"][row],
                meta["classes"]["names"],
                np.asarray(ep["intrinsics"].read(), np.float64),
                np.asarray(ep["pose"][row], np.float64),
                visible_pixels(w, h),
            )
        return self._cache[key]

    def frames(self, q: Mapping[str, Any]) -> dict[int, Frame]:
        """Step -> the record's (first rgb) frame of that step."""
        out: dict[int, Frame] = {}
        for f in q["frames"]:
            if f["modality"] == "rgb" and int(f["step"]) not in out:
                out[int(f["step"])] = self.frame(f)
        return out

    def close(self) -> None:
        self.source.close()


def answer(q: Mapping[str, Any], frames: Mapping[int, Frame]) -> Any:
    """The oracle's answer to one L1/L3 record (``frames``: step -> frame)."""
    task, ref, step = q["task"], q["referents"], int(q["step"])
    recs = ref["receptacles"]
    obj = ref.get("object")

    def on(s: int) -> set[int]:
        f = frames.get(s)
        found = f.on(recs) if f is not None else None
        return found or set()

    def types(s: int, objs: Iterable[int]) -> set[str]:
        return {frames[s].type[o] for o in objs}

    if task in ("SOR", "CC", "IC"):
        got = on(step)
        if task == "SOR":
            return sorted(types(step, got))
        if task == "CC":
            return len(types(step, got))
        return sum(1 for o in got if frames[step].type[o] == ref["category"])
    if task == "VGL":
        return [frames[step].box(o) for o in sorted(on(step))]
    if task == "DPE":
        return {lab: round(frames[step].median_depth_m(i), 4) for lab, i in ref["labels"].items()}
    if task in ("RSR", "RSR-M"):
        s = int(ref.get("past", step))
        return _neighbours(frames.get(s), obj, ref["labels"])
    if task == "SOR-M":
        s = int(ref["past"])
        return sorted(types(s, on(s))) if s in frames else []
    first, last = (int(x) for x in ref.get("window", (step, step)))
    if task in ("SED-Add", "SED-Rem", "CSR-Add", "CSR-Rem"):
        before = first if task.startswith("SED") else 0
        if before not in frames or last not in frames:
            return []
        a, b = on(before), on(last)
        return sorted(types(last, b - a) if task.endswith("Add") else types(before, a - b))
    if task == "LOR":
        return sorted({t for s in range(first, last + 1) if s in frames for t in types(s, on(s))})
    if task == "VGL-M":
        f = frames.get(step)
        return [f.box(obj)] if f is not None and obj in f.seen else []
    if task == "TL":
        seen = [s for s in range(first, last + 1) if s in frames and obj in frames[s].seen]
        return {"first": seen[0], "last": seen[-1]} if seen else {"first": first, "last": last}
    if task == "STT":  # one entry per receptacle (instance): two drawers are two entries
        path: list[tuple[int, str]] = []
        for s in range(first, last + 1):
            f = frames.get(s)
            held = f.support(obj) if f is not None and obj in f.objects else None
            if held is not None and (not path or path[-1][0] != held):
                path.append((held, f.type[held]))  # type: ignore[union-attr]
        return [t for _, t in path]
    raise ValueError(task)


def _neighbours(f: Frame | None, anchor: int | None, labels: Mapping[str, int]) -> dict[str, str]:
    if f is None or anchor not in (f.seen if f else ()):
        return {}
    seen = {lab: i for lab, i in labels.items() if i in f.seen}
    c = f.centre(anchor)  # type: ignore[arg-type]
    near = sorted(seen, key=lambda lab: (float(np.linalg.norm(f.centre(seen[lab]) - c)), lab))
    return {lab: f.direction(anchor, seen[lab]) for lab in near[: qa.K_NEIGHBOURS]}  # type: ignore[arg-type]


def answers(questions: Sequence[Mapping[str, Any]], tasks_dir: str | Path) -> list[Any]:
    """The oracle's answer per question: L1 and L3 from their frames (:func:`answer`), L2
    from the frame of the query step and the prompt's text history (:func:`answer_l2`)."""
    if any("referents" not in q for q in questions):
        raise UsageError(
            "--kind evidence needs question records with referents: rerun 'dataforge spamem "
            "tasks' with this version"
        )
    reader = FrameReader(tasks_dir)
    try:
        return [
            answer_l2(q, reader.frames(q), History(q["prompt"]))
            if q["level"] == 2
            else answer(q, reader.frames(q))
            for q in questions
        ]
    finally:
        reader.close()


# -- L2: the text history --------------------------------------------------------------------

_STEP = re.compile(r"^Step (\d+)\b")
_ITEM = re.compile(r"([A-Za-z]+) at \((-?[\d.]+), (-?[\d.]+), (-?[\d.]+)\)")
_NOW = "Current observation, step"
_CAMERA = re.compile(r"camera at \((-?[\d.]+), (-?[\d.]+), (-?[\d.]+)\), yaw (-?[\d.]+) deg")


class History:
    """An L2 prompt's text history: per step 0..q-1, each receptacle's objects as (type,
    position), carried over from the step before for receptacles a step does not list, and
    the question's text (what follows the history)."""

    def __init__(self, prompt: str) -> None:
        self.states: list[dict[str, list[tuple[str, np.ndarray]]]] = []
        self.actions: list[str] = []  # per step, what its action did ("" at step 0)
        self.listed: list[set[str]] = []  # per step, the receptacles it lists
        self.cameras: list[tuple[np.ndarray, float] | None] = []  # per step: position, yaw
        self.question = ""
        groups_of: dict[str, list[list[tuple[str, np.ndarray]]]] = {}  # name -> receptacles
        lines = prompt.splitlines()
        for i, line in enumerate(lines):
            if line.startswith(_NOW):
                self.question = "\n".join(lines[i + 1 :])
                break
            if m := _STEP.match(line):
                prev = self.states[-1] if self.states else {}
                self.states.append(dict(prev))
                self.listed.append(set())
                self.actions.append(line[m.end() :].removeprefix(": ").split(" (camera at")[0])
                cam = _CAMERA.search(line)
                self.cameras.append(
                    (np.array([float(cam.group(k)) for k in (1, 2, 3)]), float(cam.group(4)))
                    if cam
                    else None
                )
            elif line.startswith("- ") and self.states:
                label, _, items = line[2:].partition(": ")
                listed = [
                    (m.group(1), np.array([float(m.group(k)) for k in (2, 3, 4)]))
                    for m in _ITEM.finditer(items)
                ]
                new = label in self.listed[-1]  # a second receptacle of that name, this step
                groups = self._list(groups_of.setdefault(label, []), listed, new)
                self.listed[-1].add(label)
                self.states[-1][label] = [it for g in groups for it in g]

    def _list(
        self,
        groups: list[list[tuple[str, np.ndarray]]],
        items: list[tuple[str, np.ndarray]],
        new: bool,
    ) -> list[list[tuple[str, np.ndarray]]]:
        """``groups`` (the contents of each receptacle of one name; names need not be unique)
        with ``items`` listed for one of them: the one that shares an object's position with
        them, or, for an emptied one, the one whose objects' types the step's action took;
        else one left empty before (what an action puts on an emptied receptacle shares
        nothing with what it held); else (or when ``new``) a receptacle not seen before."""
        action = self.actions[-1]
        old = [] if new else list(enumerate(groups))

        def took(g: list[tuple[str, np.ndarray]]) -> bool:
            return bool(g) and all(re.search(rf"\b{t} was (removed|moved)", action) for t, _ in g)

        for fits in (
            lambda g: any(t == u and np.allclose(p, v) for t, p in g for u, v in items),
            lambda g: not items and took(g),
            lambda g: not g,
        ):
            for i, g in old:
                if fits(g):
                    groups[i] = items
                    return groups
        groups.append(items)
        return groups

    def labels(self) -> set[str]:
        return {lab for state in self.states for lab in state}

    def named(self) -> list[str]:
        """The history's receptacle names that the question names ("the <name>"), longest
        first, each occurrence taken once; a name inside another ("top drawer of the Dresser
        ...", "SideTable next to the Bed ...") names only the whole."""
        text, out = self.question, []
        for lab in sorted(self.labels(), key=lambda x: (-len(x), x)):
            named = re.compile(rf"(?<!of )(?<!next to )the {re.escape(lab)}\b")
            if named.search(text):
                out.append(lab)
                text = named.sub("#", text)
        return out

    def on(self, step: int, labels: Iterable[str]) -> list[tuple[str, np.ndarray]]:
        """The (type, position) of every object on ``labels`` at ``step`` (< q)."""
        return [it for lab in labels for it in self.states[step].get(lab, [])]

    def where(self, step: int, kind: str, at: np.ndarray, exact: bool = False) -> str | None:
        """The receptacle on which an object of type ``kind`` lies at ``at`` (as printed,
        ``exact``) or within :data:`MATCH_M` of it (the nearest) at ``step``, or None."""
        near = [
            (float(np.linalg.norm(p - at)), lab)
            for lab, items in self.states[step].items()
            for t, p in items
            if t == kind
        ]
        best = min(near, default=None)
        if best is None or best[0] > (SAME_M if exact else MATCH_M):
            return None
        return best[1]

    def follow(
        self, first: int, last: int, kind: str, at: np.ndarray
    ) -> tuple[str, np.ndarray] | None:
        """Where the object of type ``kind`` listed at ``at`` at step ``first`` lies at step
        ``last`` (receptacle name, position), None when a step removed it: it stays where a
        step lists it at the same position or does not list its receptacle, and moves where
        the step's action took an object of its type from its position."""
        lab = self.where(first, kind, at, exact=True)
        if lab is None:
            return None
        cur = (lab, at)
        for s in range(first + 1, last + 1):
            if (lab := self.where(s, kind, cur[1], exact=True)) is not None:
                cur = (lab, cur[1])
                continue
            went = self.left(s, kind)
            if went is not None and np.linalg.norm(went[1] - cur[1]) <= SAME_M:
                nxt = self.arrived(s, kind)
                if nxt is None:
                    return None
                cur = nxt
            elif (lab := self.where(s, kind, cur[1])) is not None:
                cur = (lab, cur[1])
            else:
                return None
        return cur

    def arrived(self, step: int, kind: str) -> tuple[str, np.ndarray] | None:
        """Where the action of ``step`` put an object of type ``kind`` (spawned or moved to):
        the object of that type on a receptacle the step lists that was not there before."""
        if not re.search(rf"\b{kind} was (spawned|moved)", self.actions[step]):
            return None
        return self._changed(step, step - 1, kind)

    def left(self, step: int, kind: str) -> tuple[str, np.ndarray] | None:
        """Where an object of type ``kind`` that the action of ``step`` moved or removed was
        at step - 1: the object of that type on a receptacle the step lists that is gone."""
        if not re.search(rf"\b{kind} was (removed|moved)", self.actions[step]):
            return None
        return self._changed(step - 1, step, kind)

    def _changed(self, here: int, there: int, kind: str) -> tuple[str, np.ndarray] | None:
        """An object of type ``kind`` on a receptacle listed at max(here, there) that lies
        there at step ``here`` and not at step ``there``."""
        for lab in sorted(self.listed[max(here, there)]):
            gone = self.states[there].get(lab, [])
            for t, p in self.states[here].get(lab, []):
                if t == kind and not any(u == t and np.allclose(p, v) for u, v in gone):
                    return lab, p
        return None


def _pair(
    f: Frame,
    objs: Iterable[int],
    items: Sequence[tuple[str, np.ndarray]],
    free: set[int],
    new: Iterable[int] = (),
) -> tuple[set[int], list[int]]:
    """Frame objects ``objs`` paired one to one with history ``items`` of their type, nearest
    pairs first: within :data:`MATCH_M`, or at any distance for an object in ``free`` (those
    in the drawer asked about: a drawer is drawn pulled out, its contents with it, while the
    history states where they lie in the closed drawer). The unpaired objects, with those
    paired with an item of ``new`` (indices: items that are not the compared step's), and
    the indices of the unpaired items."""
    pairs = sorted(
        (float(np.linalg.norm(f.centre(o) - p)), o, i)
        for o in objs
        for i, (t, p) in enumerate(items)
        if t == f.type[o]
    )
    left, unpaired, came = set(objs), set(range(len(items))), set(new)
    paired: set[int] = set()
    for dist, o, i in pairs:
        if o not in paired and i in unpaired and (dist <= MATCH_M or o in free):
            paired.add(o)
            unpaired.discard(i)
            if i not in came:
                left.discard(o)
    return left, sorted(unpaired)


def answer_l2(q: Mapping[str, Any], frames: Mapping[int, Frame], history: History) -> Any:
    """The oracle's answer to one L2 record: steps before the query step from ``history``,
    the query step from its frame (``frames``: step -> frame)."""
    task, ref, step = q["task"], q["referents"], int(q["step"])
    f = frames.get(step)
    if task in ("VGL-M",) or (task == "RSR-M" and int(ref.get("past", step)) == step):
        return answer(q, frames)
    labels = history.named()
    now = (f.on(ref["receptacles"]) or set()) if f is not None else set()
    first, last = (int(x) for x in ref.get("window", (step, step)))
    if task == "SOR-M":
        return sorted({t for t, _ in history.on(int(ref["past"]), labels)})
    if task == "LOR":
        got = {t for s in range(first, min(last, step - 1) + 1) for t, _ in history.on(s, labels)}
        if last == step and f is not None:
            got |= {f.type[o] for o in now}
        return sorted(got)
    if task in ("SED-Add", "SED-Rem", "CSR-Add", "CSR-Rem"):
        base = first if task.startswith("SED") else 0
        start, before = history.on(base, labels), history.on(step - 1, labels)
        # the objects on the receptacles at step q-1 that were there at the compared step (each
        # followed through the history); the others there came between
        fates = [history.follow(base, step - 1, t, p) for t, p in start]
        stayed = [
            i
            for i, (t, p) in enumerate(before)
            if any(
                x is not None and x[0] in labels and np.linalg.norm(x[1] - p) <= SAME_M
                for x, (u, _) in zip(fates, start, strict=True)
                if u == t
            )
        ]
        if f is None:
            return []
        slid = now if any(f.type.get(r) == "Drawer" for r in ref["receptacles"]) else set()
        if task.endswith("Add"):
            came = [i for i in range(len(before)) if i not in stayed]
            added, _ = _pair(f, now, before, slid, came)
            return sorted({f.type[o] for o in added})
        _, removed = _pair(f, f.objects, before, slid)
        gone = {start[j][0] for j, x in enumerate(fates) if x is None or x[0] not in labels}
        return sorted(gone | {before[i][0] for i in removed if i in stayed})
    if task in ("TL", "STT"):
        return _tracked(task, q, f, history, first, last)
    return _told_neighbours(q, history)


def _told_neighbours(q: Mapping[str, Any], history: History) -> dict[str, str]:
    """RSR-M about a step s before the query step, from the history: the anchor (the named
    object) and, per listed candidate type, as many objects of it as are listed, the ones
    nearest the anchor, numbered from left to right as the camera the history states for
    step s sees them; then the k nearest and their directions in that camera's level frame
    (the history states no camera pitch)."""
    s = int(q["referents"]["past"])
    kind = _named_type(history.question)
    anchor = next((p for t, p in history.on(s, history.named()) if t == kind), None)
    cam = history.cameras[s] if s < len(history.cameras) else None
    if anchor is None or cam is None:
        return {}
    from dataforge.pipelines.spamem.sequence_view import direction

    eye, yaw = cam[0], np.radians(cam[1])
    right, fwd = (
        np.array([np.cos(yaw), 0.0, -np.sin(yaw)]),
        np.array([np.sin(yaw), 0.0, np.cos(yaw)]),
    )

    def xz(p: np.ndarray) -> tuple[float, float]:
        return float((p - eye) @ right), float((p - eye) @ fwd)

    kinds = [(lab, re.sub(r" \d+$", "", lab)) for lab in q["referents"]["labels"]]
    where: dict[str, np.ndarray] = {}
    for t in sorted({k for _, k in kinds}):
        labs = sorted((lab for lab, k in kinds if k == t), key=_numbered)
        objs = [p for items in history.states[s].values() for u, p in items if u == t]
        objs = [p for p in objs if not np.allclose(p, anchor)]
        near = sorted(objs, key=lambda p: float(np.linalg.norm(p - anchor)))[: len(labs)]
        near.sort(key=lambda p: xz(p)[0] / max(xz(p)[1], 1e-6))
        where.update(zip(labs, near, strict=False))
    ranked = sorted(where, key=lambda lab: (float(np.linalg.norm(where[lab] - anchor)), lab))
    ax, az = xz(anchor)
    out = {}
    for lab in ranked[: qa.K_NEIGHBOURS]:
        bx, bz = xz(where[lab])
        out[lab] = direction(bx - ax, bz - az)
    return out


def _numbered(label: str) -> tuple[int, str]:
    """A candidate label's number ("Mug 2" -> 2; unnumbered 0)."""
    m = re.search(r" (\d+)$", label)
    return (int(m.group(1)) if m else 0, label)


def _tracked(
    task: str, q: Mapping[str, Any], f: Frame | None, history: History, first: int, last: int
) -> dict[str, int] | list[str]:
    """TL / STT at L2: the named object followed through the history (module docstring)."""
    ref, step = q["referents"], int(q["step"])
    at = int(ref.get("named_at", step))
    obj = ref.get("object")
    kind = _named_type(history.question)
    where: dict[int, tuple[str, np.ndarray]] = {}  # step -> (receptacle name, position)
    told = set(range(step))  # the steps whose place the history tells (by name)
    seen = f is not None and obj in f.objects
    if at < step or not seen:  # named at q but not in its frame: where q-1 lists it, as the
        # name says it lies there at q and an action moves one object (it stayed)
        s = min(at, step - 1)
        items = [
            (lab, p)
            for lab in history.named()
            for t, p in (history.states[s].get(lab, []) if s >= 0 else [])
            if t == kind
        ]
        if not items:
            return {"first": first, "last": last} if task == "TL" else []
        where[s] = items[0]
        if at == step:
            where[at] = items[0]
            told.add(at)
    else:
        held = f.support(obj)  # type: ignore[union-attr]
        where[at] = (f.type[held] if held is not None else "", f.centre(obj))  # type: ignore[union-attr]
    at = min(at, step - 1) if not seen else at
    for s in range(at - 1, first - 1, -1):  # backwards through the history
        p, lab = where[s + 1][1], None
        if s + 1 in told:  # a listed position: where it lay at s, or what put it there
            lab = history.where(s, kind, p, exact=True)
            came = history.arrived(s + 1, kind)
            if lab is None and came is not None and np.linalg.norm(came[1] - p) <= SAME_M:
                came = history.left(s + 1, kind)  # moved there (else spawned: it begins)
                if came is None:
                    break
                where[s] = came
                continue
        lab = lab or history.where(s, kind, p)
        if lab is None and s + 1 == step:  # the frame's object on its named receptacle
            lab = next((x for x in history.named() if x in _kinds(history, s, kind)), None)
            p = next((v for t, v in history.on(s, [lab]) if t == kind), p) if lab else p
        if lab is not None:
            where[s] = (lab, p)
        elif s + 1 < step and (came := history.left(s + 1, kind)) is not None:
            where[s] = came
        else:
            break
    for s in range(at + 1, last + 1):  # forwards
        p = where[s - 1][1]
        if s in where:
            continue
        if s < step:  # where it lay at s - 1, unless the action of s took it from there
            lab = history.where(s, kind, p, exact=True)
            went = history.left(s, kind)
            if lab is None and went is not None and np.linalg.norm(went[1] - p) <= SAME_M:
                nxt = history.arrived(s, kind)  # moved (else removed: it ends)
            else:
                lab = lab or history.where(s, kind, p)
                nxt = (lab, p) if lab is not None else history.arrived(s, kind)
            if nxt is None:
                break
            where[s] = nxt
        elif f is not None and obj in f.objects:  # the frame grounds the named object
            held = f.support(obj)
            where[s] = (f.type[held] if held is not None else "", f.centre(obj))
    alive = sorted(s for s in where if first <= s <= last)
    if task == "TL":
        return {"first": alive[0], "last": alive[-1]} if alive else {"first": first, "last": last}
    path: list[tuple[str, str]] = []  # (receptacle, its type): one entry per receptacle
    for s in alive:
        lab, p = where[s]
        stayed = s - 1 in where and float(np.linalg.norm(p - where[s - 1][1])) <= MATCH_M
        if s in told:
            here = (lab, _receptacle_type(lab))
        elif path and path[-1][1] == lab and stayed:
            here = path[-1]  # the frame's object where the history last lists it: it stayed
        else:
            here = (f"#frame {lab}", lab)
        if here[1] and (not path or path[-1] != here):
            path.append(here)
    return [t for _, t in path]


def _kinds(history: History, step: int, kind: str) -> set[str]:
    """The receptacle names on which the history lists an object of type ``kind`` at ``step``."""
    return {lab for lab, items in history.states[step].items() if any(t == kind for t, _ in items)}


def _named_type(question: str) -> str:
    """The type of the object a TL/STT question names ("Consider the Mug on the ...")."""
    m = re.search(r"Consider the ([A-Za-z]+) on the ", question)
    return m.group(1) if m else ""


def _receptacle_type(label: str) -> str:
    """The type a receptacle's name (:mod:`.naming`) starts from: an element's ("top drawer of
    the Dresser ..." -> Drawer), else the furniture's first word."""
    from dataforge.pipelines.spamem.naming import type_word
    from dataforge.world.shapes import SUB_RECEPTACLE_TYPES

    head, sep, _ = label.partition(" of the ")
    if sep:  # "left drawer second from the top", "drawer second from the top", "top shelf"
        for t in sorted(SUB_RECEPTACLE_TYPES, key=lambda x: -len(type_word(x))):
            if re.search(rf"\b{type_word(t)}\b", head):
                return t
    return label.split(" ")[0]
