"""SpaMEM questions of one sequence, every answer computed from the logged world graphs, masks,
depths and boxes (never from a model). Formats and tasks: :mod:`.qa`; wording:
``templates/spamem/questions.json``; the rules per task: docs/spamem.md ("Tasks").

- L1 (step 0): one topology cluster per receptacle: the objects visible on it (mask at least
  :data:`~.sequence_view.VISIBLE_SHARE` of the image) in the step-0 view that sees most of them.
- L2 / L3: short-term queries after every step t (window t-1..t; CSR accumulates over 0..t),
  long-term queries at T (window 0..T), about the receptacles and objects the actions touched.
  L2 and L3 ask the same questions with the same answers (paper §3.4); only the history differs:
  L2 gets the text history of steps 0..q-1 and the current frame q, L3 the frames 0..q with
  their steps: one view per step, the stream view or (``--frames evidence``) the view that shows
  what the question names (:meth:`Builder.view_for`); records whose answer is not in their
  frames are then skipped.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.sequence_view import SequenceView

_FIELD = re.compile(r"\{([a-z_]+)\}")
NOTHING = "(nothing)"
"""The evidence item of an empty set answer: the receptacle, seen without the objects."""
CONTROL_RATE = 0.25
"""SED/CSR ask about a receptacle that gained (Add) or lost (Rem) nothing with this probability
only, so that empty answers stay near 20 % (a control keeps "nothing" a possible answer)."""
PLAIN_RATE = 0.3
"""TL asks with this probability only about an object whose lifespan in the window is the whole
window or the query step alone: "the whole window" and "the query step" guess those without
looking; the rest (spawned or removed inside the window) are always asked."""
SUPPORT_TASKS = frozenset(
    {"SOR", "CC", "IC", "SOR-M", "LOR", "SED-Add", "SED-Rem", "CSR-Add", "CSR-Rem", "STT"}
)
"""Tasks whose answer says what rests on what: their evidence needs the surface seen from
above (:meth:`Builder.shows`)."""
BOTTOM_SEEN_PX = 2
BOTTOM_SEEN_SHARE = 0.01
"""An object shows what it rests on when its mask reaches within this many pixels (or this
share of the image height) of the image row of its bottom centre (:meth:`Builder.bottom_seen`)."""
NEAREST_MARGIN_M = 0.05
"""RSR/RSR-M: the k-th nearest candidate must be this much nearer the anchor than the next
(:meth:`Builder.separated`)."""
DRAWN_AS_TOLD_M = 0.05
"""An object is drawn where the L2 history states it when its rendered box's centre lies this
close to its stated position (:meth:`Builder.in_history`)."""
COMPARED_ITEM = "the receptacle at step"
"""The evidence item of an added/removed set's compared step (:meth:`Builder.compared`)."""
COMPARED_STEPS = {
    "SED-Add": lambda first, q: (q, first),
    "SED-Rem": lambda first, q: (first, q),
    "CSR-Add": lambda first, q: (q, 0),
    "CSR-Rem": lambda first, q: (0, q),
}
"""Task -> (window start, query step) -> (the step its items are read at, the step compared
with): an added object is seen after and missed before, a removed one the other way round."""
MIN_CANDIDATES = 7
"""RSR/RSR-M list every object in their frame and need this many besides the anchor: naming
3 of n candidates finds n >= 7 neighbours' share 3/n <= 0.43 by chance (issue 37)."""


@functools.lru_cache(maxsize=1)
def templates() -> dict[str, Any]:
    path = resources.files("dataforge.templates") / "spamem" / "questions.json"
    return json.loads(path.read_text(encoding="utf-8"))


def fill(text: str, **fields: Any) -> str:
    """``{name}`` placeholders filled from ``fields`` (JSON braces in the text stay as they are)."""
    return _FIELD.sub(
        lambda m: str(fields[m.group(1)]) if m.group(1) in fields else m.group(0), text
    )


@dataclass(frozen=True)
class Settings:
    levels: tuple[int, ...]
    horizons: tuple[str, ...]
    modalities: tuple[str, ...]
    stream_view: tuple[float, str]  # azimuth (deg), standing | crouching
    dataset: str  # the sequences dataset, relative to the tasks directory
    frames: str = "stream"  # evidence | stream: how an L2/L3 question's view per step is chosen
    control_rate: float = CONTROL_RATE  # tests of the answer rules ask every control
    min_candidates: int = MIN_CANDIDATES  # ... and RSR over any number of candidates
    plain_rate: float = PLAIN_RATE  # ... and TL about every object


@dataclass
class Draft:
    """A question before it is expanded over levels and modalities."""

    task: str
    horizon: str
    step: int  # the query step (0 for L1)
    key: str  # unique within (sequence, task, horizon)
    fields: dict[str, Any]
    answer: Any
    context: dict[str, Any]
    labels: list[str] | None = None
    frames: list[tuple[int, int]] | None = None  # L1: (step, view)
    shows: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    """Gold item -> the (step, instance key) pairs any one of which shows it (:func:`evidence`)."""
    named: dict[str, Any] = field(default_factory=dict)
    """What the prompt names, as instance keys and steps (``referents`` of the record)."""
    pins: dict[int, int] = field(default_factory=dict)
    """Step -> the view its answer was computed in (a box, directions): that step shows it."""


class Builder:
    def __init__(
        self,
        seq: SequenceView,
        settings: Settings,
        rng: np.random.Generator,
        spawnable: Sequence[str],
    ) -> None:
        self.seq = seq
        self.settings = settings
        self.rng = rng
        self.spawnable = tuple(spawnable)
        self.skipped: Counter[str] = Counter()
        self.stream = seq.view_index(*settings.stream_view)

    # -- records -----------------------------------------------------------------------------

    def records(self) -> Iterator[dict[str, Any]]:
        drafts: list[Draft] = []
        if 1 in self.settings.levels:
            drafts += list(self.level1())
        if {2, 3} & set(self.settings.levels):
            drafts += list(self.memory())
        for d in drafts:
            spec = qa.TASKS[d.task]
            for level in spec.levels:
                if level not in self.settings.levels:
                    continue
                for modality in self.settings.modalities:
                    rec = self.record(d, level, modality)
                    if self.settings.frames == "evidence" and not shown(rec):
                        why = f"{d.task} {d.horizon} L{level}: the answer is not in its frames"
                        self.skipped[why] += 1
                        continue
                    yield rec

    def record(self, d: Draft, level: int, modality: str) -> dict[str, Any]:
        seq, t = self.seq, templates()
        spec = qa.TASKS[d.task]
        depth_note = t["depth_note"] if modality == "rgbd" else ""
        if level == 1:
            assert d.frames is not None
            refs = d.frames
        elif level == 2:
            refs = [(d.step, self.view_for(d, d.step))]
        else:
            refs = [(s, self.view_for(d, s)) for s in range(d.step + 1)]
        context = fill(
            t["context"][str(level)],
            step=d.step,
            width=seq.width,
            height=seq.height,
            depth_note=depth_note,
            history=self.history(d.step, self.cameras(d, refs)) if level == 2 else "",
        )
        fields = {"category_note": t["category_note"], "k": qa.K_NEIGHBOURS, **d.fields}
        question = fill(t["tasks"][d.task], **fields)
        answer_format = fill(t["answers"][spec.answer_type], k=qa.K_NEIGHBOURS)
        frames = []
        for step, view in refs:
            for m in ("rgb", "depth") if modality == "rgbd" else ("rgb",):
                frames.append(
                    {
                        "dataset": self.settings.dataset,
                        "episode": seq.id,
                        "step": step,
                        "view": view,
                        "modality": m,
                    }
                )
        rid = f"L{level}/{d.task}/{d.horizon}/{modality}/{seq.id}/{d.key}"
        out: dict[str, Any] = {
            "id": rid,
            "level": level,
            "task": d.task,
            "horizon": d.horizon,
            "modality": modality,
            "episode": seq.id,
            "step": d.step,
            "prompt": f"{context}\n\n{question}\n{answer_format}",
            "frames": frames,
            "answer_type": spec.answer_type,
            "answer": qa.canonical(spec.answer_type, d.answer),
            "context": d.context,
        }
        if d.labels is not None:
            out["labels"] = d.labels
        out["referents"] = self.referents(d)
        out["evidence"] = self.evidence(d, level, refs)
        return out

    def view_for(self, d: Draft, step: int) -> int:
        """The view of ``step`` an L2/L3 question shows: the stream view, or (``--frames
        evidence``) the view with the most pixels of what the question names at that step (its
        receptacles and what rests on them then; its object where it is then, else the
        receptacle it is named on), the lowest such view on a tie, the stream view when no view
        sees any of it. Never chosen by the gold items alone."""
        if step in d.pins:
            return d.pins[step]
        if self.settings.frames != "evidence":
            return self.stream
        seq, named = self.seq, d.named
        obj = named.get("object")
        if obj is not None:
            keys = [obj] if seq.exists(step, obj) else list(named.get("receptacles", []))
        else:
            recs = named.get("receptacles", [])
            keys = [*recs, *(o for r in recs for o in seq.objects_on(step, r))]
        return self.best_view(step, keys)

    def best_view(self, step: int, keys: Sequence[str]) -> int:
        """The usable view of ``step`` with the most visible pixels of ``keys`` (the lowest on a
        tie), the stream view when none sees any, or always with ``--frames stream``."""
        if self.settings.frames != "evidence":
            return self.stream
        seq = self.seq
        best, most = self.stream, 0
        for v in range(seq.views):
            if not seq.viewpoints[step][v].get("usable", True):
                continue  # every camera position of this view was against something
            vis = seq.visible(seq.row(step, v))
            n = sum(vis[k][4] for k in keys if k in vis)
            if n > most:
                best, most = v, n
        return best

    def referents(self, d: Draft) -> dict[str, Any]:
        """What the prompt names, grounded: instance ids of the receptacles, the named object
        and the listed labels; the asked category and the steps the prompt names (an evidence
        oracle reads these, never ``answer`` or ``context``)."""
        iid = self.seq.instance_id
        n = d.named
        out: dict[str, Any] = {
            "receptacles": [iid[r] for r in n.get("receptacles", []) if r in iid],
            "object": iid.get(n["object"]) if n.get("object") else None,
            "labels": {k: iid[v] for k, v in n.get("labels", {}).items() if v in iid},
        }
        for k in ("category", "past", "window", "named_at"):
            if k in n:
                out[k] = n[k]
        return out

    def evidence(self, d: Draft, level: int, refs: list[tuple[int, int]]) -> list[dict[str, Any]]:
        """Per gold item, the record's frames that show it (:meth:`shows`): those of its step in
        which one of its instances is visible (at least ``min_pixels``); a receptacle drawn shut
        shows no item (that it holds nothing cannot be seen), though as an object (a shut
        Microwave on a counter) it is seen. Where the answer rests on what stands on what
        (:data:`SUPPORT_TASKS`), the camera must also look down on the surface concerned. An
        added/removed set compares two steps: the receptacle at the compared step shows only
        where every object that stayed on it and is seen at the other step is seen there too
        (:meth:`comparable`; else it could have come or gone). At L2, items of the steps before
        the query step are in the text history (``"history": true``), not in a frame."""
        seq = self.seq
        support = d.task in SUPPORT_TASKS
        out = []
        for item, alts in sorted(d.shows.items()):
            frames, ids = [], set()
            for step, view in refs:
                hit = [
                    seq.instance_id[k]
                    for s, k in alts
                    if s == step and self.shows(step, view, k, support)
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
        if not self.separated(d):
            for e in out:
                e["frames"], e["instances"] = [], []
                e.pop("history", None)
        return out

    def separated(self, d: Draft) -> bool:
        """For RSR/RSR-M: the k-th nearest candidate lies at least :data:`NEAREST_MARGIN_M`
        nearer the anchor than the next one (centre distances), so that which k are nearest
        can be told from an image; True for every other task."""
        if d.task not in ("RSR", "RSR-M") or not d.named.get("object"):
            return True
        seq, k = self.seq, qa.K_NEIGHBOURS
        s = int(d.named.get("past", 0))
        anchor = seq.centre(s, d.named["object"])
        dist = sorted(
            float(np.linalg.norm(seq.centre(s, o) - anchor))
            for o in d.named.get("labels", {}).values()
        )
        return len(dist) <= k or dist[k] - dist[k - 1] >= NEAREST_MARGIN_M

    def in_history(self, d: Draft) -> bool:
        """Whether the L2 text history tells the items of ``d`` before its query step q: always,
        but for TL/STT about an object named where step q moved it (the history lists it, by
        type and position, only where it lay before, and no frame shows where it came from),
        and for RSR-M about a step whose frame drew the anchor or a candidate elsewhere than
        the history states it (an open drawer is drawn pulled out, its contents with it)."""
        seq, q = self.seq, d.step
        obj = d.named.get("object")
        if d.task == "RSR-M" and obj is not None and int(d.named.get("past", q)) < q:
            s = int(d.named["past"])
            return all(
                float(np.linalg.norm(np.subtract(seq.positions[s][o], seq.centre(s, o))))
                <= DRAWN_AS_TOLD_M
                for o in [obj, *d.named.get("labels", {}).values()]
            )
        if d.task not in ("TL", "STT") or obj is None or d.named.get("named_at") != q:
            return True
        before = seq.on[q - 1].get(obj) if q > 0 else None
        return before is not None and before == seq.on[q].get(obj)

    def shows(self, step: int, view: int, key: str, support: bool = False) -> bool:
        """Whether frame (step, view) shows ``key``: visible, and a receptacle not drawn shut
        (an object, e.g. a shut Microwave on a counter, is seen all the same); with
        ``support``, an object only from above the surface it rests on and a receptacle only
        from above its lowest surface (from below a surface one cannot tell what rests on it
        from what stands behind it) where the world graph records the surface's height."""
        seq = self.seq
        if key not in seq.visible(seq.row(step, view)):
            return False
        is_object = key in seq.on[step]
        if not is_object and key in seq.shut[step]:
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

    # -- level 1 -----------------------------------------------------------------------------

    def clusters(self) -> list[tuple[str, int, list[str]]]:
        """(receptacle, view, visible objects on it): per receptacle, the usable step-0 view that
        sees most of its objects (then most pixels, then the lowest view)."""
        seq = self.seq
        best: dict[str, tuple[tuple[int, int, int], int, list[str]]] = {}
        for v in range(seq.views):
            if not seq.viewpoints[0][v].get("usable", True):
                continue  # every camera position of this view was against something
            vis = seq.visible(seq.row(0, v))
            groups: dict[str, list[str]] = {}
            for o, r in seq.on[0].items():
                if o in vis:
                    groups.setdefault(r, []).append(o)
            for r, objs in groups.items():
                score = (len(objs), sum(vis[o][4] for o in objs), -v)
                if r not in best or score > best[r][0]:
                    best[r] = (score, v, sorted(objs))
        named = self.nameable(seq.by_label(best), "L1")
        return [(r, best[r][1], best[r][2]) for r in named]

    def level1(self) -> Iterator[Draft]:
        seq = self.seq
        for rec, view, objs in self.clusters():
            row = seq.row(0, view)
            vis = seq.visible(row)
            labels = seq.left_to_right(row, objs, 0)
            box = vis.get(rec) or vis.get(seq.parent.get(rec) or "")
            where = fill(templates()["receptacle_box"], box=list(box[:4])) if box else ""
            base = {"receptacle": seq.receptacle_label[rec], "receptacle_box": where}
            cats = sorted({seq.types[o] for o in objs})
            ctx = {
                "receptacle": self.receptacle_context(rec),
                "view": view,
                "receptacle_box": list(box[:4]) if box else None,
                "camera_radius_m": float(seq.capture["radius_m"]),
                "image_size": [seq.width, seq.height],
                "objects": [labels[o] for o in objs],
                "object_ids": {labels[o]: o for o in objs},
            }
            key = f"r{view:02d}-{_slug(seq.receptacle_label[rec])}"
            mk = functools.partial(
                Draft, horizon="static", step=0, frames=[(0, view)], named={"receptacles": [rec]}
            )
            each = {labels[o]: [(0, o)] for o in objs}
            by_type = self.shows_set([(0, o) for o in objs], (0, rec))
            yield mk(task="SOR", key=key, fields=base, answer=cats, context=ctx, shows=by_type)
            yield mk(
                task="VGL",
                key=key,
                fields=base,
                answer=[list(vis[o][:4]) for o in objs],
                context=ctx,
                shows=each,
            )
            names = sorted(labels.values())
            dpe = {labels[o]: round(seq.median_depth_m(row, o), 4) for o in objs}
            yield mk(
                task="DPE",
                key=key,
                fields={**base, "labels": ", ".join(names)},
                answer=dpe,
                context={**ctx, "distance": "median planar (z) depth of the mask's pixels"},
                labels=names,
                shows=each,
                named={"receptacles": [rec], "labels": {labels[o]: o for o in objs}},
            )
            inview = sorted(o for o in vis if o in seq.on[0])  # every object in the image
            if len(inview) - 1 >= self.settings.min_candidates:
                anchor = objs[int(self.rng.integers(len(objs)))]
                every = seq.left_to_right(row, inview, 0)
                near = seq.nearest(0, anchor, inview, qa.K_NEIGHBOURS)
                ans = {every[o]: seq.direction(row, 0, anchor, o) for o in near}
                others = sorted(every[o] for o in inview if o != anchor)
                yield mk(
                    task="RSR",
                    key=key,
                    fields={**base, "labels": ", ".join(others), "anchor": every[anchor]},
                    answer=ans,
                    context={**ctx, "anchor": every[anchor]},
                    labels=others,
                    shows={every[o]: [(0, o)] for o in [anchor, *near]},
                    named={
                        "receptacles": [rec],
                        "object": anchor,
                        "labels": {every[o]: o for o in inview if o != anchor},
                    },
                )
            else:
                why = f"fewer than {self.settings.min_candidates} other objects in the image"
                self.skipped[f"RSR: {why}"] += 1
            yield mk(task="CC", key=key, fields=base, answer=len(cats), context=ctx, shows=by_type)
            counts = Counter(seq.types[o] for o in objs)
            asked = self.counted_types(counts)
            for c in asked:
                yield mk(
                    task="IC",
                    key=f"{key}-{c}",
                    fields={**base, "category": c},
                    answer=counts.get(c, 0),
                    context={**ctx, "category": c},
                    shows=self.shows_set([(0, o) for o in objs if seq.types[o] == c], (0, rec)),
                    named={"receptacles": [rec], "category": c},
                )

    def counted_types(self, counts: Counter[str]) -> list[str]:
        """IC's types for a cluster: every type with 2 or more objects, as many single ones
        (at least one; drawn), and one spawnable type absent from it (drawn), so that no count
        dominates (most clusters hold one object per type)."""
        many = sorted(c for c, n in counts.items() if n >= 2)
        single = sorted(c for c, n in counts.items() if n == 1)
        k = min(len(single), max(1, len(many)))
        picked = [single[int(i)] for i in self.rng.choice(len(single), k, replace=False)]
        absent = [c for c in self.spawnable if c not in counts]
        if absent:
            picked.append(absent[int(self.rng.integers(len(absent)))])
        return sorted(many + picked)

    def nameable(self, recs: list[str], what: str) -> list[str]:
        """``recs`` without those whose name fits another receptacle (skipped and counted)."""
        for r in recs:
            if self.seq.ambiguous(r):
                self.skipped[f"{what}: a receptacle whose name fits another one"] += 1
        return [r for r in recs if not self.seq.ambiguous(r)]

    def receptacle_context(self, rec: str) -> dict[str, Any]:
        seq = self.seq
        parent = seq.parent.get(rec)
        return {
            "id": rec,
            "label": seq.receptacle_label[rec],
            "type": seq.types.get(rec),
            "parent_type": seq.types.get(parent) if parent else None,
        }

    # -- levels 2 and 3 ----------------------------------------------------------------------

    def memory(self) -> Iterator[Draft]:
        T = self.seq.last
        if T < 1:  # generate redraws these now; datasets made before that may hold them
            self.skipped["memory tasks: sequence without actions"] += 1
            return
        if "short" in self.settings.horizons:
            for t in range(1, T + 1):
                yield from self.short(t)
        if "long" in self.settings.horizons:
            yield from self.long(T)

    def _set(
        self,
        task: str,
        horizon: str,
        step: int,
        key: str,
        fields: dict[str, Any],
        answer: set[str],
        ctx: dict[str, Any],
        shown: tuple[list[tuple[int, str]], tuple[int, str]],
        named: dict[str, Any],
    ) -> Draft:
        """A set question; ``shown``: the (step, object) pairs behind the answer and, for an
        empty answer, the (step, receptacle) that shows it empty."""
        shows = self.shows_set(*shown)
        answer_list = sorted(answer)
        return Draft(task, horizon, step, key, fields, answer_list, ctx, shows=shows, named=named)

    def control(self, task: str, horizon: str) -> bool:
        """Whether an SED/CSR question whose answer is empty is asked (:data:`CONTROL_RATE`);
        one not asked is counted."""
        if self.rng.random() < self.settings.control_rate:
            return True
        self.skipped[f"{task} {horizon}: nothing changed there (controls kept at 1 in 4)"] += 1
        return False

    def compared(self, d: Draft, receptacle: str, other: int) -> Draft:
        """An added/removed set also needs the receptacle seen at the step it is compared with
        (added: before, removed: after), which shows the objects were not there."""
        d.shows[f"the receptacle at step {other}"] = [(other, receptacle)]
        return d

    def shows_set(
        self, pairs: Sequence[tuple[int, str]], empty: tuple[int, str]
    ) -> dict[str, list[tuple[int, str]]]:
        """Evidence items of a set of categories: each category the objects of ``pairs``
        (step, object) have, shown by any of them; :data:`NOTHING` shown by ``empty``."""
        out: dict[str, list[tuple[int, str]]] = {}
        for s, o in pairs:
            out.setdefault(self.seq.types[o], []).append((s, o))
        return out or {NOTHING: [empty]}

    def short(self, t: int) -> Iterator[Draft]:
        seq = self.seq
        lab = seq.receptacle_label
        win = {"first": t - 1, "last": t, "step": t, "past": t - 1}
        focus = self.nameable(seq.focus(t), "short")
        for r in focus:
            ctx = {"receptacle": self.receptacle_context(r), "window": [t - 1, t]}
            f = {**win, "receptacle": lab[r]}
            k = f"t{t:03d}-{_slug(lab[r])}"
            before, after = set(seq.objects_on(t - 1, r)), set(seq.objects_on(t, r))
            start = set(seq.objects_on(0, r))
            named = {"receptacles": [r], "window": [t - 1, t]}
            yield self._set(
                "SOR-M",
                "short",
                t,
                k,
                f,
                seq.categories_on(t - 1, r),
                ctx,
                ([(t - 1, o) for o in sorted(before)], (t - 1, r)),
                {**named, "past": t - 1},
            )
            cats = seq.types.__getitem__
            for task, objs, at, other in (  # other: the step compared with, where R shows
                ("SED-Add", after - before, t, t - 1),  # the object was not there
                ("SED-Rem", before - after, t - 1, t),
                ("CSR-Add", after - start, t, 0),
                ("CSR-Rem", start - after, 0, t),
            ):
                if not objs and not self.control(task, "short"):
                    continue
                shown = ([(at, o) for o in sorted(objs)], (t, r))
                d = self._set(task, "short", t, k, f, {cats(o) for o in objs}, ctx, shown, named)
                yield self.compared(d, r, other)
        if focus:
            yield self.lor("short", t, focus, t - 1, t)
        for ev in seq.events_at(t):
            yield from self.object_questions("short", t, ev.obj, 0, t)
        yield from self.grounding("short", t)
        for ev in seq.events_at(t):
            d = self.relations("short", t, t, ev.obj) if ev.to is not None else None
            if d is not None:
                yield d

    def lor(self, horizon: str, q: int, recs: list[str], first: int, last: int) -> Draft:
        seq = self.seq
        cats = {c for s in range(first, last + 1) for r in recs for c in seq.categories_on(s, r)}
        names = [f"the {seq.receptacle_label[r]}" for r in recs]
        joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        ctx = {"receptacles": [self.receptacle_context(r) for r in recs], "window": [first, last]}
        pairs = [(s, o) for s in range(first, last + 1) for r in recs for o in seq.objects_on(s, r)]
        return Draft(
            "LOR",
            horizon,
            q,
            f"t{q:03d}",
            {"receptacles": joined, "first": first, "last": last},
            sorted(cats),
            ctx,
            shows=self.shows_set(pairs, (last, recs[0])),
            named={"receptacles": list(recs), "window": [first, last]},
        )

    def object_questions(
        self, horizon: str, q: int, obj: str, first: int, last: int
    ) -> Iterator[Draft]:
        """TL and STT about ``obj`` over first..last (asked at q), the object named by where it
        rested at one step of the window: short-term (the object step q acted on, over 0..q)
        where it is at q, or at q-1 if q removed it, never the first step of its lifespan
        (issue 37: naming the first step gave the answer away); long-term a step of its lifespan
        drawn from the seed."""
        seq = self.seq
        steps = [s for s in range(first, last + 1) if seq.exists(s, obj)]
        if horizon == "short":
            at = q if seq.exists(q, obj) else q - 1
        else:
            at = steps[int(self.rng.integers(len(steps)))]
        desc = seq.refer(obj, at)
        if desc is None:
            self.skipped[f"TL/STT {horizon}: {seq.unreferable(obj, at)}"] += 1
            return
        key = f"t{q:03d}-{_slug(obj)}"
        ctx = {
            "object": obj,
            "category": seq.types[obj],
            "window": [first, last],
            "named_at": at,
            "receptacle": self.receptacle_context(seq.on[at][obj]),
        }
        f = {"object": desc, "first": first, "last": last}
        plain = (steps[0], steps[-1]) in ((first, last), (q, q))
        ask_tl = not plain or self.rng.random() < self.settings.plain_rate
        if not ask_tl:
            self.skipped[f"TL {horizon}: lifespan the whole window or the query step"] += 1
        named = {
            "object": obj,
            "named_at": at,
            "receptacles": [seq.on[at][obj]],
            "window": [first, last],
        }
        lifespan = {"first": steps[0], "last": steps[-1]}
        shows = {k: [(s, obj)] for k, s in lifespan.items()}
        if ask_tl:
            yield Draft("TL", horizon, q, key, f, lifespan, ctx, shows=shows, named=named)
        path = seq.path(obj, first, last)
        if len(path) >= 3:  # it moved twice within the window: one move is TL's and SED's
            on = [(s, seq.on[s].get(obj)) for s in range(first, last + 1)]
            yield Draft(
                "STT",
                horizon,
                q,
                key,
                f,
                [seq.types[r] for r in path],
                {**ctx, "path": [seq.receptacle_label[r] for r in path]},
                shows={
                    f"{i + 1}. {seq.types[r]}": [(s, obj) for s, here in on if here == r]
                    for i, r in enumerate(path)
                },
                named=named,
            )

    def long(self, T: int) -> Iterator[Draft]:
        seq = self.seq
        lab = seq.receptacle_label
        acted = seq.by_label({r for e in seq.events for r in (e.frm, e.to) if r is not None})
        acted = self.nameable(acted, "long")
        win = {"first": 0, "last": T, "step": T}
        for r in acted:
            ctx = {"receptacle": self.receptacle_context(r), "window": [0, T]}
            k = f"T-{_slug(lab[r])}"
            past = int(self.rng.integers(T))  # a step 0..T-1
            named = {"receptacles": [r], "window": [0, T]}
            yield self._set(
                "SOR-M",
                "long",
                T,
                k,
                {**win, "receptacle": lab[r], "past": past},
                seq.categories_on(past, r),
                {**ctx, "past": past},
                ([(past, o) for o in seq.objects_on(past, r)], (past, r)),
                {**named, "past": past},
            )
            start, end = set(seq.objects_on(0, r)), set(seq.objects_on(T, r))
            f = {**win, "receptacle": lab[r]}
            for task, objs, at in (("CSR-Add", end - start, T), ("CSR-Rem", start - end, 0)):
                if not objs and not self.control(task, "long"):
                    continue
                shown = ([(at, o) for o in sorted(objs)], (T, r))
                cats = {seq.types[o] for o in objs}
                d = self._set(task, "long", T, k, f, cats, ctx, shown, named)
                yield self.compared(d, r, 0 if task.endswith("Add") else T)
        if acted:
            yield self.lor("long", T, acted, 0, T)
        for obj in sorted({e.obj for e in seq.events}):
            yield from self.object_questions("long", T, obj, 0, T)
        yield from self.grounding("long", T)
        yield from self.relations_long(T)

    def grounding(self, horizon: str, q: int) -> Iterator[Draft]:
        """VGL-M at q: the box, in the frame of step q the record shows (the stream view's,
        or with ``--frames evidence`` the view that sees the object best), of one object
        visible in the stream frame, named by
        where it rested at a past step s (short-term s = q-1, or q for an object spawned at q;
        long-term s drawn from 0..q-1): an object the window's actions moved or spawned when
        one is visible, else any visible one."""
        seq = self.seq
        vis = seq.visible(seq.row(q, self.stream))
        named: dict[str, tuple[int, str]] = {}
        for o in sorted(vis):
            if not seq.exists(q, o):
                continue
            alive = [s for s in range(q) if seq.exists(s, o)] or [q]
            if horizon == "short":
                at = q - 1 if seq.exists(q - 1, o) else q
            else:
                at = alive[int(self.rng.integers(len(alive)))]
            desc = seq.refer(o, at)
            if desc is not None:
                named[o] = (at, desc)
        if not named:
            self.skipped[f"VGL-M {horizon}: no nameable object visible"] += 1
            return
        first = q - 1 if horizon == "short" else 0
        acted = sorted({e.obj for e in seq.events if first < e.step <= q} & set(named))
        pool = acted or sorted(named)
        obj = pool[int(self.rng.integers(len(pool)))]
        at, desc = named[obj]
        view = self.best_view(q, [obj])
        box = seq.visible(seq.row(q, view))[obj][:4]
        ctx = {
            "object": obj,
            "named_at": at,
            "window": [first, q],
            "image_size": [seq.width, seq.height],
        }
        yield Draft(
            "VGL-M",
            horizon,
            q,
            f"t{q:03d}",
            {"step": q, "object": desc},
            [list(box)],
            ctx,
            shows={"box": [(q, obj)]},
            pins={q: view},
            named={"object": obj, "named_at": at, "receptacles": [seq.on[at][obj]]},
        )

    def relations(self, horizon: str, q: int, s: int, ev_obj: str) -> Draft | None:
        """RSR-M: the neighbours of ``ev_obj`` on its receptacle right after step s."""
        seq = self.seq
        rec = seq.on[s][ev_obj]
        view = self.best_view(s, [ev_obj, *seq.objects_on(s, rec)])
        row = seq.row(s, view)
        others = [o for o in sorted(seq.visible(row)) if o in seq.on[s] and o != ev_obj]
        if len(others) < self.settings.min_candidates:
            why = f"fewer than {self.settings.min_candidates} other objects in its frame"
            self.skipped[f"RSR-M {horizon}: {why}"] += 1
            return None
        labels = seq.left_to_right(row, others, s)
        near = seq.nearest(s, ev_obj, others, qa.K_NEIGHBOURS)
        ans = {labels[o]: seq.direction(row, s, ev_obj, o) for o in near}
        names = sorted(labels.values())
        desc = seq.refer(ev_obj, s)
        if desc is None:
            self.skipped[f"RSR-M {horizon}: {seq.unreferable(ev_obj, s)}"] += 1
            return None
        f = {
            "past": s,
            "object": desc,
            "receptacle": seq.receptacle_label[rec],
            "labels": ", ".join(names),
        }
        ctx = {"object": ev_obj, "receptacle": self.receptacle_context(rec), "past": s}
        return Draft(
            "RSR-M",
            horizon,
            q,
            f"t{q:03d}-s{s:03d}",
            f,
            ans,
            ctx,
            labels=names,
            shows={labels.get(o, "anchor"): [(s, o)] for o in [ev_obj, *near]},
            named={
                "object": ev_obj,
                "named_at": s,
                "receptacles": [rec],
                "past": s,
                "labels": {labels[o]: o for o in others},
            },
            pins={s: view},
        )

    def relations_long(self, T: int) -> Iterator[Draft]:
        seq = self.seq
        cands = [(e.step, e.obj) for e in seq.events if e.to is not None]
        if not cands:
            self.skipped["RSR-M long: no placed object"] += 1
            return
        s, obj = cands[int(self.rng.integers(len(cands)))]
        d = self.relations("long", T, s, obj)
        if d is not None:
            yield d

    # -- the L2 history ----------------------------------------------------------------------

    def cameras(self, d: Draft, refs: list[tuple[int, int]]) -> tuple[int, ...]:
        """Per step 0..q, the view whose camera the L2 history states: the record's frame at q,
        a pinned step's view, else the stream view."""
        shown = dict(refs)
        return tuple(shown.get(s, d.pins.get(s, self.stream)) for s in range(d.step + 1))

    @functools.lru_cache(maxsize=64)  # noqa: B019 (one builder per sequence, short-lived)
    def history(self, q: int, cams: tuple[int, ...]) -> str:
        """Text summary of steps 0..q-1 (each receptacle's objects with positions), then the
        camera of the current frame q; ``cams``: per step, the view whose camera is stated."""
        seq = self.seq
        lines = ["Step 0 (initial state):"]
        for r in seq.by_label(set(seq.on[0].values())):
            lines.append(f"- {self._contents(0, r)}")
        for s in range(1, q):
            lines.append(
                f"Step {s}: {seq.action_text(s)} ({seq.camera_text(seq.row(s, cams[s]))})."
            )
            for r in seq.focus(s):
                lines.append(f"- {self._contents(s, r)}")
        lines.append(f"Current observation, step {q}: {seq.camera_text(seq.row(q, cams[q]))}.")
        return "\n".join(lines)

    def _contents(self, s: int, r: str) -> str:
        seq = self.seq
        items = [
            f"{seq.types[o]} at ({', '.join(f'{x:.2f}' for x in seq.positions[s][o])})"
            for o in seq.objects_on(s, r)
        ]
        return f"{seq.receptacle_label[r]}: {'; '.join(items) if items else 'nothing'}"


def shown(record: dict[str, Any]) -> bool:
    """Every gold item of the record is in one of its frames (or, at L2, in the history)."""
    return all(e["frames"] or e.get("history") for e in record["evidence"])


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")
