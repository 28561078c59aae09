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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.balance import CONTROL_SHARE, GUESS_LIMIT, Balancer, guesses
from dataforge.pipelines.spamem.evidence import NOTHING, EvidenceRules, shown
from dataforge.pipelines.spamem.sequence_view import SequenceView

_FIELD = re.compile(r"\{([a-z_]+)\}")
MIN_CANDIDATES = 7
"""RSR/RSR-M list every object in their frame a model can name (furniture too,
:meth:`.SequenceView.candidates`) and need this many besides the anchor: the list is in a drawn
order, so naming its first 3 finds 3/n <= 3/7 = 0.43 of the neighbours in expectation, whatever
the scene (issue 37)."""
NEAR_MARGIN_M = 0.05
"""RSR/RSR-M ask about an anchor only when its 4th nearest candidate is at least this much
farther than its 3rd (:meth:`.SequenceView.nearest_gap`): closer, which 3 are nearest is not
a thing the images show (the visible points' centroids and the 3D centres disagree). Measured on
20 sequences (issue 37): the evidence oracle's 3 nearest agree with the gold on 0.953 of the
anchors without the margin, 0.979 with it, which keeps 77 % of them."""


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
    control_share: float = CONTROL_SHARE  # tests of the answer rules ask every control (1.0)
    min_candidates: int = MIN_CANDIDATES  # ... and RSR over any number of candidates
    near_margin_m: float = NEAR_MARGIN_M  # ... and whatever the 3rd and 4th nearest's distances
    guess_limit: float = GUESS_LIMIT  # ... and TL about every object (1.0)


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
    guesses: dict[str, float] = field(default_factory=dict)
    """What each prompt-only guess scores on this answer (TL's lifespans, SED/CSR's empty set,
    IC's counts): a task's questions are balanced so that none scores much without looking
    (:meth:`.balance.Balancer.balanced`)."""


class Builder(EvidenceRules, Balancer):
    """The questions of one sequence (:meth:`records`); its evidence rules and balancing are
    :class:`.evidence.EvidenceRules` and :class:`.balance.Balancer`."""

    def __init__(
        self,
        seq: SequenceView,
        settings: Settings,
        rng: np.random.Generator,
        spawnable: Sequence[str],
        pairs: Mapping[str, Mapping[str, float]] | None = None,
    ) -> None:
        self.seq = seq
        self.settings = settings
        self.rng = rng
        self.spawnable = tuple(spawnable)
        self.pairs = pairs or {}
        """procthor's statistics: receptacle type -> {object type: how likely it is there}."""
        self.skipped: Counter[str] = Counter()
        self.asked_earlier: set[str] = set()  # short TL's objects spawned or removed before t
        self.stream = seq.view_index(*settings.stream_view)

    # -- records -----------------------------------------------------------------------------

    def records(self) -> Iterator[dict[str, Any]]:
        drafts: list[Draft] = []
        if 1 in self.settings.levels:
            drafts += list(self.level1())
        if {2, 3} & set(self.settings.levels):
            drafts += list(self.memory())
        kept: list[tuple[Draft, int, list[dict[str, Any]]]] = []
        for d in drafts:
            for level in qa.TASKS[d.task].levels:
                if level not in self.settings.levels:
                    continue
                recs = [self.record(d, level, m) for m in self.settings.modalities]
                # every modality shows the same frames, so has the same evidence
                if self.settings.frames == "evidence" and not shown(recs[0]):
                    why = f"{d.task} {d.horizon} L{level}: the answer is not in its frames"
                    self.skipped[why] += len(recs)
                    continue
                kept.append((d, level, recs))
        yield from self.balanced(kept)

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
            base, where_ctx = self.framed(rec, view, row)
            cats = sorted({seq.types[o] for o in objs})
            ctx = {
                **where_ctx,
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
            yield from self.rsr(rec)
            yield mk(task="CC", key=key, fields=base, answer=len(cats), context=ctx, shows=by_type)
            counts = Counter(seq.types[o] for o in objs)
            asked = self.counted_types(counts, rec)
            for c in asked:
                n = counts.get(c, 0)
                yield mk(
                    task="IC",
                    key=f"{key}-{c}",
                    fields={**base, "category": c},
                    answer=n,
                    context={**ctx, "category": c},
                    shows=self.shows_set([(0, o) for o in objs if seq.types[o] == c], (0, rec)),
                    named={"receptacles": [rec], "category": c},
                    guesses={
                        "count below 2": float(n < 2),
                        "count 0": float(n == 0),
                        "count 1": float(n == 1),
                    },
                )

    def rsr(self, rec: str) -> Iterator[Draft]:
        """RSR on ``rec``: an anchor drawn from the objects resting on it at step 0, in the
        usable step-0 view that shows one of them with the most candidates
        (:meth:`neighbourhood`); its 3 nearest candidates and their directions in that view."""
        seq = self.seq
        got = self.neighbourhood(0, seq.objects_on(0, rec), rec, self.usable(0))
        if isinstance(got, str):
            self.skipped[f"RSR: {got}"] += 1
            return
        view, anchor, others = got
        row = seq.row(0, view)
        labels, names = self.listed(0, row, anchor, others)
        near = seq.nearest(0, anchor, others, qa.K_NEIGHBOURS)
        base, where_ctx = self.framed(rec, view, row)
        yield Draft(
            task="RSR",
            horizon="static",
            step=0,
            key=f"r{view:02d}-{_slug(seq.receptacle_label[rec])}",
            fields={**base, "labels": ", ".join(names), "anchor": labels[anchor]},
            answer={labels[o]: seq.direction(row, 0, anchor, o) for o in near},
            context={
                **where_ctx,
                "anchor": labels[anchor],
                "object_ids": {labels[o]: o for o in [anchor, *others]},
            },
            labels=names,
            frames=[(0, view)],
            shows={labels[o]: [(0, o)] for o in [anchor, *near]},
            named={
                "receptacles": [rec],
                "object": anchor,
                "labels": {labels[o]: o for o in others},
            },
        )

    def framed(self, rec: str, view: int, row: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """An L1 question's prompt fields naming ``rec`` (with its box in step-0 view ``view``,
        or its furniture's) and the context every L1 record of that frame carries."""
        seq = self.seq
        vis = seq.visible(row)
        box = vis.get(rec) or vis.get(seq.parent.get(rec) or "")
        where = fill(templates()["receptacle_box"], box=list(box[:4])) if box else ""
        fields = {"receptacle": seq.receptacle_label[rec], "receptacle_box": where}
        ctx = {
            "receptacle": self.receptacle_context(rec),
            "view": view,
            "receptacle_box": list(box[:4]) if box else None,
            "camera_radius_m": float(seq.capture["radius_m"]),
            "image_size": [seq.width, seq.height],
        }
        return fields, ctx

    def usable(self, step: int) -> list[int]:
        """The views of ``step`` with a usable camera (not every position against something)."""
        vps = self.seq.viewpoints[step]
        return [v for v in range(self.seq.views) if vps[v].get("usable", True)]

    def neighbourhood(
        self, step: int, anchors: Sequence[str], rec: str, views: Sequence[int]
    ) -> tuple[int, str, list[str]] | str:
        """RSR/RSR-M's view, anchor and candidates at ``step``: of ``views``, those that show
        one of ``anchors`` (objects resting on ``rec``), most candidates first
        (:meth:`.SequenceView.candidates`, never the furniture ``rec`` belongs to: what holds the
        anchor is not its neighbour), then most anchors shown, then the lowest view; in the first
        of them where an anchor has at least ``min_candidates`` others and a clear 3 nearest
        (:data:`NEAR_MARGIN_M`), such an anchor (drawn) and its other candidates. Else why not
        (a skip reason)."""
        seq, k = self.seq, qa.K_NEIGHBOURS
        base = seq.furniture(rec)
        ranked = []
        for v in views:
            row = seq.row(step, v)
            vis = seq.visible(row)
            shown = [a for a in anchors if a in vis]
            if shown:
                cands = seq.candidates(step, row, without=[base])
                ranked.append((-len(cands), -len(shown), v, shown, cands))
        if not ranked:
            return "the anchor is in no usable view"
        least = self.settings.min_candidates
        enough = False
        for _, _, v, shown, cands in sorted(ranked, key=lambda x: x[:3]):
            clear = []
            for a in shown:
                others = [o for o in cands if o != a]
                if len(others) < least:
                    continue
                enough = True
                if seq.nearest_gap(step, a, others, k) >= self.settings.near_margin_m:
                    clear.append((a, others))
            if clear:
                anchor, others = clear[int(self.rng.integers(len(clear)))]
                return v, anchor, others
        if not enough:
            return f"fewer than {least} other objects in its frames"
        return f"no anchor whose {k} nearest stand {self.settings.near_margin_m:g} m clear"

    def listed(
        self, step: int, row: int, anchor: str, others: Sequence[str]
    ) -> tuple[dict[str, str], list[str]]:
        """Labels of the anchor and the candidates ``others`` in view ``row``: a type repeated
        among the objects of the image (:meth:`.SequenceView.objects_in_view`, listed or not)
        is numbered from left to right among them; and the candidates' labels in an order drawn
        from the seed, so that naming the first 3 finds 3/n of the neighbours in expectation."""
        seq = self.seq
        every = seq.left_to_right(row, {*seq.objects_in_view(step, row), anchor, *others}, step)
        labels = {o: every[o] for o in [anchor, *others]}
        names = sorted(labels[o] for o in others)
        order = self.rng.permutation(len(names))
        return labels, [names[int(i)] for i in order]

    def counted_types(self, counts: Counter[str], rec: str) -> list[str]:
        """IC's types for a cluster on ``rec``: every type with 2 or more objects, as many single
        ones (at least one; drawn), and one spawnable type absent from it, drawn by how likely
        procthor finds it on ``rec`` (:meth:`likely`; uniform without statistics), so that no
        count dominates (most clusters hold one object per type) and "is it usual there" does
        not tell the absent type from the present ones."""
        many = sorted(c for c, n in counts.items() if n >= 2)
        single = sorted(c for c, n in counts.items() if n == 1)
        k = min(len(single), max(1, len(many)))
        picked = [single[int(i)] for i in self.rng.choice(len(single), k, replace=False)]
        absent = [c for c in self.spawnable if c not in counts]
        if absent:
            likely = self.likely(rec)
            w = np.array([likely.get(c, 0.0) for c in absent])
            p = w / w.sum() if w.sum() > 0 else None
            picked.append(absent[int(self.rng.choice(len(absent), p=p))])
        return sorted(many + picked)

    def likely(self, rec: str) -> Mapping[str, float]:
        """{object type: p} on receptacle ``rec`` (a sub-receptacle without statistics takes
        its furniture's, as the planner does)."""
        parent = self.seq.parent.get(rec)
        for t in (self.seq.types.get(rec), self.seq.types.get(parent) if parent else None):
            if t and self.pairs.get(t):
                return self.pairs[t]
        return {}

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

    def lookalike(self, task: str, horizon: str, objs: set[str], opposite: set[str]) -> bool:
        """Whether an SED/CSR question is skipped (and counted) because an object of its set
        ``objs`` (added, or removed) and one of the ``opposite`` set look alike (the same
        asset): in images that swap is no change."""
        a = self.seq.assets
        if {a[o] for o in objs} & {a[o] for o in opposite}:
            self.skipped[f"{task} {horizon}: an added and a removed object look alike"] += 1
            return True
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
            for task, objs, opposite, at, other in (  # other: the step compared with
                ("SED-Add", after - before, before - after, t, t - 1),  # it was not there
                ("SED-Rem", before - after, after - before, t - 1, t),
                ("CSR-Add", after - start, start - after, t, 0),
                ("CSR-Rem", start - after, after - start, 0, t),
            ):
                if self.lookalike(task, "short", objs, opposite):
                    continue
                shown = ([(at, o) for o in sorted(objs)], (t, r))
                d = self._set(task, "short", t, k, f, {cats(o) for o in objs}, ctx, shown, named)
                d.guesses = {"empty set": 0.0 if objs else 1.0}
                yield self.compared(d, r, other)
        if focus:
            yield self.lor("short", t, focus, t - 1, t)
        acted = {ev.obj for ev in seq.events_at(t)}
        for obj in sorted(acted):
            yield from self.object_questions("short", t, obj, 0, t)
        earlier = sorted(
            {e.obj for e in seq.events if e.step < t and e.kind != "place"}
            - acted
            - self.asked_earlier
        )  # spawned or removed before t, not asked so yet: a lifespan that starts or ends
        if earlier:  # inside 0..t, asked about once (the same answer at every later step)
            obj = earlier[int(self.rng.integers(len(earlier)))]
            self.asked_earlier.add(obj)
            yield from self.object_questions("short", t, obj, 0, t, earlier=True)
        yield from self.grounding("short", t)
        for ev in seq.events_at(t):
            rel = self.relations("short", t, t, ev.obj) if ev.to is not None else None
            if rel is not None:
                yield rel

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
        self, horizon: str, q: int, obj: str, first: int, last: int, earlier: bool = False
    ) -> Iterator[Draft]:
        """TL and STT about ``obj`` over first..last (asked at q), the object named by where it
        rested at one step of the window: short-term (the object step q acted on, over 0..q)
        where it is at q, or at q-1 if q removed it, never the first step of its lifespan
        (issue 37: naming the first step gave the answer away); long-term, and short-term TL
        about an object spawned or removed before q (``earlier``, no STT), a step of its
        lifespan drawn from the seed."""
        seq = self.seq
        steps = [s for s in range(first, last + 1) if seq.exists(s, obj)]
        if horizon == "short" and not earlier:
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
        lifespan = {"first": steps[0], "last": steps[-1]}
        named = {
            "object": obj,
            "named_at": at,
            "receptacles": [seq.on[at][obj]],
            "window": [first, last],
        }
        shows = {k: [(s, obj)] for k, s in lifespan.items()}
        tl = Draft("TL", horizon, q, key, f, lifespan, ctx, shows=shows, named=named)
        tl.guesses = guesses(lifespan, first, last, q, at)
        yield tl
        path = seq.path(obj, first, last)
        if (
            len(path) >= 3 and not earlier
        ):  # it moved twice within the window: one move is TL's and SED's
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
                if self.lookalike(task, "long", end - start, start - end):
                    continue
                shown = ([(at, o) for o in sorted(objs)], (T, r))
                cats = {seq.types[o] for o in objs}
                d = self._set(task, "long", T, k, f, cats, ctx, shown, named)
                d.guesses = {"empty set": 0.0 if objs else 1.0}
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
        """RSR-M: the neighbours of ``ev_obj`` right after step s, among the candidates of the
        frame of step s that the record pins: the stream view, or (``--frames evidence``) the
        usable view of step s that shows ``ev_obj`` with the most candidates
        (:meth:`neighbourhood`)."""
        seq = self.seq
        rec = seq.on[s][ev_obj]
        views = self.usable(s) if self.settings.frames == "evidence" else [self.stream]
        got = self.neighbourhood(s, [ev_obj], rec, views)
        if isinstance(got, str):
            self.skipped[f"RSR-M {horizon}: {got}"] += 1
            return None
        desc = seq.refer(ev_obj, s)
        if desc is None:
            self.skipped[f"RSR-M {horizon}: {seq.unreferable(ev_obj, s)}"] += 1
            return None
        view, _, others = got
        row = seq.row(s, view)
        labels, names = self.listed(s, row, ev_obj, others)
        near = seq.nearest(s, ev_obj, others, qa.K_NEIGHBOURS)
        ans = {labels[o]: seq.direction(row, s, ev_obj, o) for o in near}
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
            shows={labels[o] if o != ev_obj else "anchor": [(s, o)] for o in [ev_obj, *near]},
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


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")
