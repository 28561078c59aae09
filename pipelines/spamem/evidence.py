"""Evidence of SpaMEM question records (issue 37): for each gold item, the record's frames
(or, at L2, the text history) that show it, by the rules a reader of docs/spamem.md can state
(an object seen from above the surface it rests on with its bottom in view, a compared step
that shows what stayed, a shut receptacle hiding what it holds, ...). :class:`EvidenceRules`
is a part of :class:`.questions.Builder`; :func:`shown` says whether a record's evidence is
complete (``--frames evidence`` keeps only those records)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.pipelines.spamem.sequence_view import SequenceView

if TYPE_CHECKING:
    from dataforge.pipelines.spamem.questions import Draft

NOTHING = "(nothing)"
"""The evidence item of an empty set answer: the receptacle, seen without the objects."""
SUPPORT_TASKS = frozenset(
    {"SOR", "CC", "IC", "SOR-M", "LOR", "SED-Add", "SED-Rem", "CSR-Add", "CSR-Rem", "STT"}
)
"""Tasks whose answer says what rests on what: their evidence needs the surface seen from
above (:meth:`EvidenceRules.shows`)."""
BOTTOM_SEEN_PX = 2
BOTTOM_SEEN_SHARE = 0.01
"""An object shows what it rests on when its mask reaches within this many pixels (or this
share of the image height) of the image row of its bottom centre
(:meth:`EvidenceRules.bottom_seen`)."""
DRAWN_AS_TOLD_M = 0.05
"""An object is drawn where the L2 history states it when its rendered box's centre lies this
close to its stated position (:meth:`EvidenceRules.in_history`)."""
COMPARED_ITEM = "the receptacle at step"
"""The evidence item of an added/removed set's compared step
(:meth:`.questions.Builder.compared`)."""
COMPARED_STEPS = {
    "SED-Add": lambda first, q: (q, first),
    "SED-Rem": lambda first, q: (first, q),
    "CSR-Add": lambda first, q: (q, 0),
    "CSR-Rem": lambda first, q: (0, q),
}
"""Task -> (window start, query step) -> (the step its items are read at, the step compared
with): an added object is seen after and missed before, a removed one the other way round."""


class EvidenceRules:
    """The evidence rules of a question builder (its ``seq``: the sequence asked about)."""

    seq: SequenceView

    def evidence(self, d: Draft, level: int, refs: list[tuple[int, int]]) -> list[dict[str, Any]]:
        """Per gold item, the record's frames that show it (:meth:`shows`): those of its step in
        which one of its instances is visible (at least ``min_pixels``); a receptacle drawn shut
        shows no item (that it holds nothing cannot be seen), though as an object (a shut
        Microwave on a counter) it is seen. Where the answer rests on what stands on what
        (:data:`SUPPORT_TASKS`), the camera must also look down on the surface concerned. An
        added/removed set compares two steps: the receptacle at the compared step shows only
        where every object that stayed on it and is seen at the other step is seen there too
        (:meth:`comparable`; else it could have come or gone). At L2, items of the steps before
        the query step are in the text history (``"history": true``), not in a frame. An STT
        entry shows only in its own stay (:meth:`stays`): an object back on a receptacle it
        left shows the later visit, not the first. TL/STT about an object with a gap in its
        lifespan show nothing (:meth:`one_lifespan`)."""
        seq = self.seq
        support = d.task in SUPPORT_TASKS
        out = []
        for item, alts in sorted(self.stays(d).items()):
            contents = item == NOTHING or item.startswith(COMPARED_ITEM)
            frames, ids = [], set()
            for step, view in refs:
                hit = [
                    seq.instance_id[k]
                    for s, k in alts
                    if s == step and self.shows(step, view, k, support, contents)
                ]
                if hit:
                    frames.append([step, view])
                    ids.update(hit)
            entry: dict[str, Any] = {"item": item, "frames": frames, "instances": sorted(ids)}
            if level == 2 and any(s < d.step for s, _ in alts) and self.in_history(d):
                entry["history"] = True
            out.append(entry)
        if not self.comparable(d, level, refs):
            for e in out:
                if e["item"].startswith(COMPARED_ITEM):
                    e["frames"], e["instances"] = [], []
        if not self.one_lifespan(d):
            for e in out:
                e["frames"], e["instances"] = [], []
                e.pop("history", None)
        return out

    def one_lifespan(self, d: Draft) -> bool:
        """For TL/STT: the named object exists at every step between two of its steps in the
        window. A removed object never comes back, so a gap is a later spawn given the removed
        one's id: two objects to any viewer, whose one "lifespan" no frame or history shows.
        True for every other task."""
        if d.task not in ("TL", "STT"):
            return True
        obj = d.named["object"]
        first, last = (int(x) for x in d.named["window"])
        steps = [s for s in range(first, last + 1) if self.seq.exists(s, obj)]
        return not steps or steps[-1] - steps[0] + 1 == len(steps)

    def stays(self, d: Draft) -> dict[str, list[tuple[int, str]]]:
        """``d.shows``; for STT each path entry ("2. Drawer") shown only by the steps of its
        own stay: the i-th run of steps on one receptacle within the window (the steps it was
        gone between two stays on the same receptacle do not end the stay, as in
        :meth:`.SequenceView.path`). Without it an entry shows at any step on a receptacle of
        that entry, e.g. the first of a visit back, which leaves the first stay unseen."""
        if d.task != "STT":
            return d.shows
        seq, obj = self.seq, d.named["object"]
        first, last = (int(x) for x in d.named["window"])
        runs: list[tuple[str, list[int]]] = []
        for s in range(first, last + 1):
            r = seq.on[s].get(obj)
            if r is None:
                continue
            if not runs or runs[-1][0] != r:
                runs.append((r, []))
            runs[-1][1].append(s)
        out = {}
        for item in d.shows:
            i = int(item.split(".", 1)[0]) - 1
            out[item] = [(s, obj) for s in runs[i][1]]
        return out

    def in_history(self, d: Draft) -> bool:
        """Whether the L2 text history tells the items of ``d`` before its query step q: always,
        but for TL/STT about an object named where step q moved it (the history lists it, by
        type and position, only where it lay before, and no frame shows where it came from),
        and for RSR-M about a step whose frame drew the anchor or a candidate elsewhere than
        the history states it (an open drawer is drawn pulled out, its contents with it) or
        whose candidates include standing furniture (the history lists what rests on things)."""
        seq, q = self.seq, d.step
        obj = d.named.get("object")
        if d.task == "RSR-M" and obj is not None and int(d.named.get("past", q)) < q:
            s = int(d.named["past"])
            return all(  # standing furniture (a candidate too) is not in the history
                o in seq.positions[s]
                and float(np.linalg.norm(np.subtract(seq.positions[s][o], seq.centre(s, o))))
                <= DRAWN_AS_TOLD_M
                for o in [obj, *d.named.get("labels", {}).values()]
            )
        if d.task not in ("TL", "STT") or obj is None or d.named.get("named_at") != q:
            return True
        before = seq.on[q - 1].get(obj) if q > 0 else None
        return before is not None and before == seq.on[q].get(obj)

    def shows(
        self, step: int, view: int, key: str, support: bool = False, contents: bool = False
    ) -> bool:
        """Whether frame (step, view) shows ``key``: visible, and, where it stands for what a
        receptacle holds (``contents``: an empty set, a compared step), not drawn shut (as an
        object or a neighbour, e.g. a shut Microwave on a counter, it is seen all the same); with
        ``support``, an object only from above the surface it rests on and a receptacle only
        from above its lowest surface (from below a surface one cannot tell what rests on it
        from what stands behind it) where the world graph records the surface's height."""
        seq = self.seq
        if key not in seq.visible(seq.row(step, view)):
            return False
        is_object = key in seq.on[step]
        if contents and not is_object and key in seq.shut[step]:
            return False
        if not support:
            return True
        y = self.surface_heights(step).get(key)
        if y is None:
            return True
        if float(seq.viewpoints[step][view]["position"][1]) <= y:
            return False
        return not is_object or self.bottom_seen(step, view, key, y)

    def bottom_seen(self, step: int, view: int, obj: str, y: float) -> bool:
        """Whether ``obj``'s mask reaches down to where it meets its surface (height ``y``)
        below its centre, within :data:`BOTTOM_SEEN_PX`: an object whose bottom is hidden (by
        another object, a drawer's front) may stand on anything."""
        seq = self.seq
        row = seq.row(step, view)
        x, _, z = seq.centre(step, obj)
        cam = seq.camera_xyz(row, np.array([[x, y, z]]))[0]
        if cam[2] <= 0:
            return False
        v = seq.K[1, 1] * cam[1] / cam[2] + seq.K[1, 2]
        return seq.visible(row)[obj][3] >= v - max(BOTTOM_SEEN_PX, BOTTOM_SEEN_SHARE * seq.height)

    @functools.lru_cache(maxsize=64)  # noqa: B019 (one builder per sequence, short-lived)
    def surface_heights(self, step: int) -> dict[str, float]:
        """Object -> the height of the surface it rests on at ``step``; receptacle -> its
        lowest surface (only those the world graph records a height for)."""
        g = self.seq.graphs[step]
        surfaces: dict[tuple[str, int], float] = {}
        out: dict[str, float] = {}
        for r in g["receptacles"]:
            ys = [(x.get("index"), x["y"]) for x in r.get("surfaces") or [] if "y" in x]
            for i, y in ys:
                surfaces[(r["id"], i)] = float(y)
            if ys:
                out[r["id"]] = min(float(y) for _, y in ys)
        for o in g["objects"]:
            at = [(o.get("element_id"), o.get("surface")), (o.get("parent_id"), o.get("surface"))]
            y = next((surfaces[k] for k in at if k in surfaces), None)
            if y is not None:
                out[o["id"]] = y
        return out

    def comparable(self, d: Draft, level: int, refs: list[tuple[int, int]]) -> bool:
        """For an added/removed set (:data:`COMPARED_STEPS`): every object that stayed on the
        receptacle and is visible at the step the answer is read at is shown (resting on it)
        at the step it is compared with too (a step before the query step of an L2 record
        shows every object: the text history lists them). True for every other task."""
        if d.task not in COMPARED_STEPS:
            return True
        seq = self.seq
        first = int(d.named.get("window", (d.step, d.step))[0])
        at, other = COMPARED_STEPS[d.task](first, d.step)
        views = dict(refs)

        def seen(s: int, o: str, support: bool) -> bool:
            if level == 2 and s < d.step:
                return True
            return s in views and self.shows(s, views[s], o, support)

        for r in d.named.get("receptacles", []):
            stayed = set(seq.objects_on(at, r)) & set(seq.objects_on(other, r))
            if any(seen(at, o, False) and not seen(other, o, True) for o in sorted(stayed)):
                return False
        return True


def shown(record: dict[str, Any]) -> bool:
    """Every gold item of the record is in one of its frames (or, at L2, in the history)."""
    return all(e["frames"] or e.get("history") for e in record["evidence"])
