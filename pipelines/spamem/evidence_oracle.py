"""The evidence oracle (``dataforge spamem baseline --kind evidence``): answers every L1 and L3
question from only the frames the record gives the model, read as a perfect perceiver would
read them (instance and semantic masks, depth, camera pose and intrinsics), plus the record's
``referents``: what the prompt names, grounded to instance ids. It never reads ``answer``,
``context``, ``evidence`` or a world graph, so where it scores below 1 a question is not
answerable from its frames (or the oracle's perception rule is wrong: compare with the record's
``evidence``).

Perception rules:

- An instance is seen when its mask has at least ``min_pixels`` pixels (the question builder's
  rule, :data:`~.sequence_view.VISIBLE_SHARE`); its type is the semantic class of its pixels.
- Holders are the instances of :func:`holder_types`; every other instance but the house's
  structure is an object. Support: an object rests on the holder whose surface lies closest
  below the object's lowest visible points (:data:`BOTTOM_PCT`), no more than
  :data:`MAX_GAP_M` below and :data:`ABOVE_M` above them. A surface is either the holder's
  points within :data:`FOOTPRINT_M` of the object's plan footprint (the object's centre must
  lie over the holder's plan extent), or the holder's pixels right under the object's lowest
  pixels in the image when they are not behind the object (a counter seen from below its top,
  whose front edge hides the top).
- Boxes are mask extents; distances the median depth of the mask; a lifespan the first and
  last step whose frame shows the object; neighbours by the distance between the centroids of
  the visible points, directions in the camera frame as the question builder's rule.

L2 questions are not answered: their history is text, which this oracle does not read.
"""

from __future__ import annotations

import functools
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
                gaps[k] = min(gaps.get(k, g), g)
        held = {k: g for k, g in gaps.items() if -ABOVE_M < g < MAX_GAP_M}
        return min(held, key=lambda k: (abs(held[k]), k)) if held else None

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

    def direction(self, anchor: int, other: int) -> str:
        """The question builder's rule (:meth:`.SequenceView.direction`) on visible centroids."""
        from dataforge.pipelines.spamem.sequence_view import direction

        a, b = (self.w2c[:3, :3] @ self.centroid(k) + self.w2c[:3, 3] for k in (anchor, other))
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
    if task == "STT":
        path: list[str] = []
        for s in range(first, last + 1):
            f = frames.get(s)
            held = f.support(obj) if f is not None and obj in f.objects else None
            if held is not None and (not path or path[-1] != f.type[held]):  # type: ignore[union-attr]
                path.append(f.type[held])  # type: ignore[union-attr]
        return path
    raise ValueError(task)


def _neighbours(f: Frame | None, anchor: int | None, labels: Mapping[str, int]) -> dict[str, str]:
    if f is None or anchor not in (f.seen if f else ()):
        return {}
    seen = {lab: i for lab, i in labels.items() if i in f.seen}
    c = f.centroid(anchor)  # type: ignore[arg-type]
    near = sorted(seen, key=lambda lab: (float(np.linalg.norm(f.centroid(seen[lab]) - c)), lab))
    return {lab: f.direction(anchor, seen[lab]) for lab in near[: qa.K_NEIGHBOURS]}  # type: ignore[arg-type]


def answers(questions: Sequence[Mapping[str, Any]], tasks_dir: str | Path) -> list[Any]:
    """The oracle's answer per question (None for L2 records, which it does not answer)."""
    if any("referents" not in q for q in questions):
        raise UsageError(
            "--kind evidence needs question records with referents: rerun 'dataforge spamem "
            "tasks' with this version"
        )
    reader = FrameReader(tasks_dir)
    try:
        return [None if q["level"] == 2 else answer(q, reader.frames(q)) for q in questions]
    finally:
        reader.close()
