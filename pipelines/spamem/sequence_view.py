"""A stored SpaMEM sequence as the question builder reads it: the world state per step (which
object rests on which receptacle), what each step changed, what each view shows (2D boxes and
pixel counts from the masks), 3D centres, cameras, and names for receptacles and objects that a
question can use.

"Objects" here are the things resting on something (a parent in the world graph); an object's
receptacle is the sub-receptacle it is in or on (``2|0|Drawer_3``), else its parent. "Standing"
objects rest on nothing: the furniture and appliances on the floor, the paintings on the walls;
RSR/RSR-M list them among their candidates (:meth:`SequenceView.candidates`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from dataforge.pipelines.spamem.episode import graphs_by_step, instance_keys
from dataforge.pipelines.spamem.naming import receptacle_names

if TYPE_CHECKING:
    from dataforge.store.reader import StoredEpisode


VISIBLE_SHARE = 0.0005
"""An instance counts as visible in a view when its mask covers at least this share of the
image (0.05 %: 154 pixels at 640x480), and at least :data:`VISIBLE_MIN` pixels."""
VISIBLE_MIN = 4
SEEN_SPAN = 0.5
"""A standing RSR candidate's mask must span at least this share of its 3D box's image box
in width and in height (:meth:`SequenceView.mostly_seen`)."""
STRUCTURE_TYPES = frozenset({"Floor", "Wall", "Ceiling", "Door", "Doorframe", "Doorway", "Window"})
"""Types of the house's structure: never a candidate object, whatever a graph holds."""


def direction(dx: float, dz: float) -> str:
    """Where a point lies from an anchor, by their offset in the camera frame (x right, z ahead):
    ``behind`` when it is farther by more than it is to the side, else ``left`` / ``right``."""
    if dz > abs(dx):
        return "behind"
    return "right" if dx >= 0 else "left"


def visible_pixels(width: int, height: int) -> int:
    """The visibility threshold in pixels at ``width`` x ``height`` (:data:`VISIBLE_SHARE`)."""
    return max(VISIBLE_MIN, int(np.ceil(VISIBLE_SHARE * width * height)))


@dataclass(frozen=True)
class Event:
    """What step ``step`` did to one object: ``spawn`` (to), ``remove`` (frm) or ``place``."""

    step: int
    kind: str
    obj: str
    frm: str | None
    to: str | None


class SequenceView:
    """Read-only access to one stored sequence (``ep``: a stored episode of a spamem dataset)."""

    def __init__(self, ep: StoredEpisode) -> None:
        meta = ep.metadata
        self.id: str = ep.id
        self.views: int = int(meta["views_per_state"])
        self.states: int = int(meta["states"])
        self.capture: Mapping[str, Any] = meta["capture"]
        self.width, self.height = (int(x) for x in self.capture["resolution"])
        self.viewpoints: list[list[dict[str, Any]]] = meta["viewpoints"]
        self._ep = ep
        self._frames: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # the last view read
        self.graphs = graphs_by_step(ep["graphs"].read(), ep["graph_index"].read())
        self.instance_key = instance_keys(meta)
        self.instance_id = {k: i for i, k in self.instance_key.items()}
        self.poses = ep["pose"].read().astype(np.float64)
        self.K = ep["intrinsics"].read().astype(np.float64)
        box2d = ep["box2d"].read()
        order = np.argsort(box2d[:, 0], kind="stable")
        box2d = box2d[order]
        rows, starts = np.unique(box2d[:, 0], return_index=True)
        ends = [*starts[1:].tolist(), len(box2d)][: len(starts)]  # none for an empty table
        self._boxes = {int(r): box2d[a:b] for r, a, b in zip(rows, starts, ends, strict=True)}
        self._visible: dict[int, Mapping[str, tuple[int, int, int, int, int]]] = {}
        box3d = ep["box3d"].read().astype(np.float64)
        self._centres = {(int(r[0]), int(r[1])): r[2:5] for r in box3d}
        self._box3d = {(int(r[0]), int(r[1])): r[2:11] for r in box3d}
        self.min_pixels = visible_pixels(self.width, self.height)
        # world state per step
        self.on: list[dict[str, str]] = []
        self.types: dict[str, str] = {}
        self.assets: dict[str, str] = {}  # object id -> its asset (what it looks like)
        self.parent: dict[str, str | None] = {}  # sub-receptacle -> its furniture
        self.positions: list[dict[str, tuple[float, float, float]]] = []
        self.shut: list[set[str]] = []  # per step: closed containers (their inside unseen)
        self.standing: list[frozenset[str]] = []  # per step: objects resting on nothing
        for g in self.graphs:
            here: dict[str, str] = {}
            pos: dict[str, tuple[float, float, float]] = {}
            for o in g["objects"]:
                self.types.setdefault(o["id"], o["object_type"])
                self.assets.setdefault(o["id"], o.get("asset_id") or o["id"])
                if o.get("parent_id"):
                    here[o["id"]] = o.get("element_id") or o["parent_id"]
                    pos[o["id"]] = tuple(float(x) for x in o["position"])  # type: ignore[assignment]
            for r in g["receptacles"]:
                self.types.setdefault(r["id"], r["object_type"])
                self.parent.setdefault(r["id"], r.get("parent_id"))
            self.on.append(here)
            self.standing.append(
                frozenset(
                    o["id"]
                    for o in g["objects"]
                    if not o.get("parent_id") and o["object_type"] not in STRUCTURE_TYPES
                )
            )
            self.positions.append(pos)
            self.shut.append({r["id"] for r in g["receptacles"] if _shut(r)})
        names = receptacle_names(
            self.graphs,
            {r["id"] for g in self.graphs for r in g["receptacles"]} | self._all_receptacles(),
            self.types,
        )
        self.receptacle_label: dict[str, str] = names.label
        """Receptacle id -> its name (:mod:`.naming`: "top drawer of the Dresser in the
        Bedroom"), without an article."""
        self.unnamed: frozenset[str] = names.ambiguous
        """The receptacles whose name fits another one too: no question names them."""
        self.events = self._events()

    # -- state -------------------------------------------------------------------------------

    def _all_receptacles(self) -> set[str]:
        return {r for here in self.on for r in here.values()}

    @property
    def last(self) -> int:
        return self.states - 1

    def objects_on(self, step: int, receptacle: str) -> list[str]:
        return sorted(o for o, r in self.on[step].items() if r == receptacle)

    def categories_on(self, step: int, receptacle: str) -> set[str]:
        return {self.types[o] for o in self.objects_on(step, receptacle)}

    def exists(self, step: int, obj: str) -> bool:
        return obj in self.on[step]

    def _events(self) -> list[Event]:
        out = []
        for t in range(1, self.states):
            before, after = self.on[t - 1], self.on[t]
            for o in sorted(set(before) | set(after)):
                a, b = before.get(o), after.get(o)
                if a == b:
                    continue
                kind = "spawn" if a is None else "remove" if b is None else "place"
                out.append(Event(t, kind, o, a, b))
        return out

    def events_at(self, step: int) -> list[Event]:
        return [e for e in self.events if e.step == step]

    def ambiguous(self, receptacle: str) -> bool:
        """Whether ``receptacle``'s name fits another receptacle of the house too."""
        return receptacle in self.unnamed

    def focus(self, step: int) -> list[str]:
        """The receptacles the action of ``step`` changed (sorted by label)."""
        recs = {r for e in self.events_at(step) for r in (e.frm, e.to) if r is not None}
        return self.by_label(recs)

    def by_label(self, receptacles: Iterable[str]) -> list[str]:
        """``receptacles`` sorted by name, then id: names need not be unique (ambiguous ones, in
        the L2 history), and a set's order would change from run to run."""
        return sorted(receptacles, key=lambda r: (self.receptacle_label[r], r))

    def tracked_objects(self) -> list[str]:
        return sorted({o for here in self.on for o in here})

    # -- views -------------------------------------------------------------------------------

    def row(self, step: int, view: int) -> int:
        return step * self.views + view

    def visible(self, row: int) -> Mapping[str, tuple[int, int, int, int, int]]:
        """Element key -> (x0, y0, x1, y1, pixels) of every instance visible in view ``row``
        (built once per view: the question builder asks for each view many times)."""
        if row not in self._visible:
            out: dict[str, tuple[int, int, int, int, int]] = {}
            for r in self._boxes.get(row, ()):
                if int(r[6]) >= self.min_pixels and int(r[1]) in self.instance_key:
                    box = cast(tuple[int, int, int, int, int], tuple(int(x) for x in r[2:7]))
                    out[self.instance_key[int(r[1])]] = box
            self._visible[row] = MappingProxyType(out)
        return self._visible[row]

    def centre(self, step: int, obj: str) -> np.ndarray:
        return self._centres[(step, self.instance_id[obj])]

    def has_centre(self, step: int, key: str) -> bool:
        """Whether ``key`` has a 3D box at ``step`` (objects do; walls and furniture parts not)."""
        return key in self.instance_id and (step, self.instance_id[key]) in self._centres

    def whole(self, row: int, key: str) -> bool:
        """Whether ``key``'s mask in view ``row`` stays off the image border (not cut by it)."""
        x0, y0, x1, y1, _ = self.visible(row)[key]
        return x0 > 0 and y0 > 0 and x1 < self.width - 1 and y1 < self.height - 1

    def mostly_seen(self, step: int, row: int, key: str) -> bool:
        """Whether ``key``'s mask in view ``row`` spans at least :data:`SEEN_SPAN` of the image
        box of its 3D box (``step``) in width and in height: not hidden for the most part behind
        what stands in front of it (a chair behind a table shows its backrest's top)."""
        from dataforge.world.boxes import OrientedBox

        cx, cy, cz, sx, sy, sz, pitch, yaw, roll = (
            float(x) for x in self._box3d[(step, self.instance_id[key])]
        )
        corners = OrientedBox((cx, cy, cz), (sx, sy, sz), yaw, pitch, roll).corners()
        cam = self.camera_xyz(row, corners)
        if (cam[:, 2] <= 0).any():
            return False  # partly behind the camera: not all of it can be in the image
        u = self.K[0, 0] * cam[:, 0] / cam[:, 2] + self.K[0, 2]
        v = self.K[1, 1] * cam[:, 1] / cam[:, 2] + self.K[1, 2]
        u0, u1 = np.clip([u.min(), u.max()], 0, self.width - 1)
        v0, v1 = np.clip([v.min(), v.max()], 0, self.height - 1)
        x0, y0, x1, y1, _ = self.visible(row)[key]
        return bool(
            x1 - x0 + 1 >= SEEN_SPAN * (u1 - u0 + 1) and y1 - y0 + 1 >= SEEN_SPAN * (v1 - v0 + 1)
        )

    def objects_in_view(self, step: int, row: int) -> list[str]:
        """Every object of view ``row`` (``step``) a question can name by its type: visible,
        with a 3D centre, resting on something or :attr:`standing` (sorted)."""
        return sorted(
            k
            for k in self.visible(row)
            if (k in self.on[step] or k in self.standing[step]) and self.has_centre(step, k)
        )

    def candidates(self, step: int, row: int, without: Iterable[str] = ()) -> list[str]:
        """RSR/RSR-M's candidates in view ``row`` (``step``): the :meth:`objects_in_view` but
        ``without``, a standing one only when the image holds all of it (:meth:`whole`) and
        it is not hidden for the most part (:meth:`mostly_seen`): the centre of a piece of
        furniture cut by the border, or of a chair behind a table, cannot be seen. Measured
        on 20 sequences (issue 37): with the cut ones, the 3 nearest read from the visible
        points agree with the 3D centres' 0.967 of the time, without them 0.979 (both with
        ``near_margin``, :meth:`nearest_gap`)."""
        skip = set(without)
        return [
            k
            for k in self.objects_in_view(step, row)
            if k not in skip
            and (k in self.on[step] or (self.whole(row, k) and self.mostly_seen(step, row, k)))
        ]

    def furniture(self, receptacle: str) -> str:
        """The standing object ``receptacle`` belongs to (a drawer's dresser), else itself."""
        return self.parent.get(receptacle) or receptacle

    def camera_xyz(self, row: int, points: np.ndarray) -> np.ndarray:
        """World points (N x 3) in the OpenCV camera frame of view ``row`` (x right, z ahead)."""
        from dataforge.render.camera import world_to_camera

        w2c = world_to_camera(self.poses[row])
        return np.asarray(points, np.float64) @ w2c[:3, :3].T + w2c[:3, 3]

    def median_depth_m(self, row: int, obj: str) -> float:
        """Median planar depth (m) of the pixels of ``obj``'s mask in view ``row``."""
        if row not in self._frames:
            self._frames = {row: (self._ep["instance"][row], self._ep["depth"][row])}
        inst, depth = self._frames[row]
        sel = (inst == self.instance_id[obj]) & (depth > 0)
        return float(np.median(depth[sel].astype(np.float64))) / 1000.0

    def view_index(self, azimuth: float, height: str) -> int:
        """The view (of every step) at ``azimuth`` degrees and ``height`` (standing|crouching)."""
        for v, vp in enumerate(self.viewpoints[0]):
            if abs(float(vp["azimuth_deg"]) - azimuth) < 1e-6 and vp["height"] == height:
                return v
        have = sorted({(float(vp["azimuth_deg"]), vp["height"]) for vp in self.viewpoints[0]})
        raise LookupError(f"no view at azimuth {azimuth:g} {height} (views: {have})")

    def camera_text(self, row: int) -> str:
        step, view = divmod(row, self.views)
        vp = self.viewpoints[step][view]
        x, y, z = vp["position"]
        return f"camera at ({x:.2f}, {y:.2f}, {z:.2f}), yaw {float(vp['yaw_deg']):.0f} deg"

    # -- names -------------------------------------------------------------------------------

    def left_to_right(self, row: int, objs: Iterable[str], step: int) -> dict[str, str]:
        """Object -> label: its type, numbered from left to right (by the projected centre in
        view ``row``) when the type repeats among ``objs``."""
        objs = list(objs)
        if not objs:
            return {}
        cam = self.camera_xyz(row, np.stack([self.centre(step, o) for o in objs]))
        u = cam[:, 0] / np.maximum(cam[:, 2], 1e-6)
        order = sorted(range(len(objs)), key=lambda i: (float(u[i]), objs[i]))
        counts = Counter(self.types[o] for o in objs)
        seen: Counter[str] = Counter()
        out = {}
        for i in order:
            t = self.types[objs[i]]
            seen[t] += 1
            out[objs[i]] = t if counts[t] == 1 else f"{t} {seen[t]}"
        return out

    def direction(self, row: int, step: int, anchor: str, other: str) -> str:
        """``behind`` when ``other`` is farther from the camera than ``anchor`` by more than it
        is to the side; else ``left`` / ``right`` by the side (camera frame of view ``row``)."""
        a, b = self.camera_xyz(row, np.stack([self.centre(step, anchor), self.centre(step, other)]))
        return direction(float(b[0] - a[0]), float(b[2] - a[2]))

    def distances(
        self, step: int, anchor: str, candidates: Iterable[str]
    ) -> list[tuple[float, str]]:
        """(distance between 3D centres, candidate), nearest first (ties by key), the anchor
        left out."""
        c = self.centre(step, anchor)
        out = [
            (float(np.linalg.norm(self.centre(step, o) - c)), o) for o in candidates if o != anchor
        ]
        return sorted(out)

    def nearest(self, step: int, anchor: str, candidates: Iterable[str], k: int) -> list[str]:
        return [o for _, o in self.distances(step, anchor, candidates)[:k]]

    def nearest_gap(self, step: int, anchor: str, candidates: Iterable[str], k: int) -> float:
        """How much farther (m) the (k+1)-th nearest candidate is from ``anchor`` than the k-th:
        the k nearest are a clear set only when this is well above 0 (inf with k or fewer)."""
        d = [x for x, _ in self.distances(step, anchor, candidates)]
        return d[k] - d[k - 1] if len(d) > k else float("inf")

    def refer(self, obj: str, step: int) -> str | None:
        """ "the Mug on the DiningTable in the Kitchen at step 3": where ``obj`` rests at
        ``step`` (it must exist then), or None when another object of its type rests there too
        or the receptacle's name is :meth:`ambiguous`."""
        rec = self.on[step][obj]
        cat = self.types[obj]
        if self.ambiguous(rec):
            return None
        if sum(1 for o in self.objects_on(step, rec) if self.types[o] == cat) > 1:
            return None
        return f"the {cat} on the {self.receptacle_label[rec]} at step {step}"

    def unreferable(self, obj: str, step: int) -> str:
        """Why :meth:`refer` gives None for ``obj`` at ``step`` (a skip reason)."""
        if self.ambiguous(self.on[step][obj]):
            return "a receptacle whose name fits another one"
        return "another object of its type on its receptacle"

    def action_text(self, step: int) -> str:
        """What the action of ``step`` did, in words."""
        lab = self.receptacle_label
        parts = []
        for e in self.events_at(step):
            cat = self.types[e.obj]
            if e.kind == "spawn":
                parts.append(f"a {cat} was spawned onto the {lab[e.to]}")  # type: ignore[index]
            elif e.kind == "remove":
                parts.append(f"the {cat} was removed from the {lab[e.frm]}")  # type: ignore[index]
            else:
                parts.append(f"the {cat} was moved from the {lab[e.frm]} to the {lab[e.to]}")  # type: ignore[index]
        return "; ".join(parts) or "nothing changed"

    def path(self, obj: str, first: int, last: int) -> list[str]:
        """The receptacles ``obj`` rested on over steps first..last, in order (keys)."""
        out: list[str] = []
        for s in range(first, last + 1):
            r = self.on[s].get(obj)
            if r is not None and (not out or out[-1] != r):
                out.append(r)
        return out


def _shut(receptacle: Mapping[str, Any]) -> bool:
    """A container drawn shut: every surface of it needs opening and its openness is 0 (graphs
    before format 4 have no openness: their containers read as shut)."""
    surfaces = receptacle.get("surfaces") or []
    opened = float(receptacle.get("openness") or 0.0)
    return bool(surfaces) and all(x.get("needs_open") for x in surfaces) and not opened
