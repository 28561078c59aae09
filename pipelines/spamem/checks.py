"""Invariants, statistics and previews of SpaMEM datasets (registered in ``__init__``).

Images are read one captured state at a time (16 views), so checking an episode holds one
state's images in memory, not the sequence's.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any, cast

import numpy as np

from dataforge.pipelines.spamem.capture import VIEW_COLUMNS
from dataforge.pipelines.spamem.episode import graphs_by_step, instance_keys
from dataforge.pipelines.spamem.figures import plot, preview
from dataforge.registry import PipelineStats
from dataforge.render.camera import unproject
from dataforge.render.masks import mask_boxes
from dataforge.store.reader import Dataset, StoredEpisode
from dataforge.world.boxes import OrientedBox, rotation_matrix
from dataforge.world.settle import SETTLED_M
from dataforge.world.vectors import Vec3
from dataforge.world.viewpoints import MIN_SEPARATION_M

__all__ = ["INVARIANTS", "check_episode", "plot", "preview", "preview_frames", "stats"]

INVARIANTS = {
    "views-per-state": "every captured state has views_per_state views in every per-view "
    "array, one graph per state, and step records 0..states-1",
    "mask-ids-known": "every instance id in a mask names an element (object, sub-receptacle, "
    "wall, floor, ceiling, door, window) of that state's world graph",
    "removed-absent": "a removed object is in no mask, graph or 3D box after its removal",
    "rests-on-surface": "every object on or in another rests on one of its parent's support "
    "surfaces in every state's graph, its 3D box's bottom within 3 cm of the surface's height; "
    "a spawned or placed object's parent is its receptacle",
    "depth-on-surface": "sampled depth pixels unproject into the 3D box of the object their "
    "mask names (floor pixels onto the floor)",
    "rigid-pose": "camera poses are rigid (orthonormal rotation, |det| 1, last row 0 0 0 1)",
    "box2d-encloses": "the 2D boxes are exactly the extents and pixel counts of the masks",
    "allowed-actions": "actions are spawn / place / remove of small pickupable types, never "
    "onto a Toilet or the Floor",
    "acted-visible": "every action's acted_visible_views is the number of its state's views "
    "whose mask shows what was acted on (the object spawned or placed, the surface a removed "
    "object left) with at least the tasks' visible pixels, and what it opened is open in that "
    "state's graph and shut in the next",
    "views-apart": "no two cameras of one state stand within 0.20 m of each other (3D)",
    "bearing-recorded": "each view's stored bearing is that of its camera from the target in "
    "plan view (atan2(dx, dz), 0 = +z), its stored height the camera's above the floor, both "
    "as in the metadata viewpoints",
    "no-hole-window": "no pixel inside a window's 2D box has depth 0 (windows have panes)",
}
ACTED_MIN_VIEWS = 4  # the visibility rule: what is acted on shows in at least 4 of 16 views
SAMPLES_PER_VIEW = 32
BOX_TOL_M = 0.03  # depth is whole millimetres; meshes lie inside their boxes
REST_TOL_M = SETTLED_M  # how far a child's bottom may be from its surface (3 cm)
POSE_TOL = 1e-4
SEPARATION_TOL_M = 1e-4  # float32 poses
BEARING_TOL_DEG = 0.05  # float32 positions and targets, cameras 0.5 m or more away
HEIGHT_TOL_M = 1e-3
OFF_AZIMUTH_DEG = 5.0  # stats: a view this far from its azimuth slot is "off"
COL = {name: k for k, name in enumerate(VIEW_COLUMNS)}


def _structure_key(node: dict[str, Any]) -> str:
    return f"{node['kind']}:{node['id']}" if node["kind"] in ("floor", "ceiling") else node["id"]


def graph_keys(graph: dict[str, Any]) -> set[str]:
    """The instance keys of everything a graph lists."""
    keys = {o["id"] for o in graph["objects"]} | {r["id"] for r in graph["receptacles"]}
    return keys | {_structure_key(n) for n in graph["structure"]}


def check_episode(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    meta = ep.metadata
    views, states = int(meta["views_per_state"]), int(meta["states"])
    rows = views * states
    for name in ("rgb", "depth", "instance", "semantic", "pose", "view"):
        if len(ep[name]) != rows:
            yield "views-per-state", f"{name} has {len(ep[name])} rows, not {states} x {views}"
            return
    graphs = graphs_by_step(ep["graphs"].read(), ep["graph_index"].read())
    steps = meta["steps"]
    if len(graphs) != states or [s["step"] for s in steps] != list(range(states)):
        yield "views-per-state", f"{len(graphs)} graphs / steps {len(steps)} for {states} states"
        return
    yield from _check_actions(steps)
    keys = instance_keys(meta)
    ids_of = {k: i for i, k in keys.items()}
    box3d = ep["box3d"].read()
    box2d = ep["box2d"].read()
    removed: set[str] = set()
    yield from _check_rests(steps, graphs, box3d, ids_of)
    yield from _check_acted(ep, steps, graphs, box2d, ids_of, views)
    poses = ep["pose"].read()
    K = ep["intrinsics"].read().astype(np.float64)
    for r, pose in enumerate(poses):
        R = pose[:3, :3].astype(np.float64)
        if not (
            np.allclose(R.T @ R, np.eye(3), atol=POSE_TOL)
            and abs(abs(np.linalg.det(R)) - 1) < POSE_TOL
            and np.allclose(pose[3], [0, 0, 0, 1])
        ):
            yield "rigid-pose", f"view row {r}: pose is not a rigid transform"
    floor_y = _floor_y(ep)
    view = ep["view"].read()
    yield from _check_apart(poses, views)
    yield from _check_bearings(poses, view, meta["viewpoints"], views, floor_y)
    rng = np.random.default_rng(0)
    for s in range(states):
        graph = graphs[s]
        known = graph_keys(graph)
        opened = {r["id"] for r in graph["receptacles"] if r.get("openness", 0.0) > 0}
        windows = {ids_of.get(n["id"], -1) for n in graph["structure"] if n["kind"] == "window"}
        if steps[s].get("action") == "remove":
            removed |= set(steps[s].get("removed", []))
        gone = removed & {o["id"] for o in graph["objects"]}
        if gone:
            yield "removed-absent", f"step {s}: removed {sorted(gone)[0]} is still in the graph"
        gone_ids = {ids_of[k] for k in removed if k in ids_of}
        in_box3d = set(box3d[box3d[:, 0] == s][:, 1].astype(int).tolist())
        if gone_ids & in_box3d:
            yield "removed-absent", f"step {s}: a removed object still has a 3D box"
        boxes = {int(b[1]): b[2:] for b in box3d[box3d[:, 0] == s]}
        lo, hi = s * views, (s + 1) * views
        inst = ep["instance"][lo:hi]
        depth = ep["depth"][lo:hi]
        for v in range(views):
            row = lo + v
            ids = np.unique(inst[v])
            unknown = [int(i) for i in ids if i and keys.get(int(i)) not in known]
            if unknown:
                yield (
                    "mask-ids-known",
                    f"step {s} view {v}: instance {unknown[0]} ({keys.get(unknown[0])}) "
                    "is not in the world graph",
                )
            if gone_ids & set(ids.tolist()):
                yield "removed-absent", f"step {s} view {v}: a removed object is in the mask"
            want = mask_boxes(inst[v])
            have = box2d[box2d[:, 0] == row][:, 1:]
            if want.shape != have.shape or not np.array_equal(want, have):
                yield "box2d-encloses", f"step {s} view {v}: 2D boxes differ from the mask's"
            yield from _check_windows(s, v, depth[v], want, windows)
            yield from _check_depth(
                s, v, depth[v], inst[v], K, poses[row], keys, boxes, ids_of, floor_y, rng, opened
            )


def _check_apart(poses: np.ndarray, views: int) -> Iterator[tuple[str, str]]:
    eyes = poses[:, :3, 3].astype(np.float64)
    for lo in range(0, len(eyes), views):
        state = eyes[lo : lo + views]
        gaps = np.linalg.norm(state[:, None] - state[None], axis=-1)
        gaps[np.diag_indices(len(state))] = np.inf
        if gaps.min() < MIN_SEPARATION_M - SEPARATION_TOL_M:
            a, b = np.unravel_index(int(np.argmin(gaps)), gaps.shape)
            yield (
                "views-apart",
                f"step {lo // views}: cameras of views {a} and {b} stand "
                f"{gaps[a, b]:.3f} m apart (< {MIN_SEPARATION_M} m)",
            )


def _check_bearings(
    poses: np.ndarray,
    view: np.ndarray,
    viewpoints: list[list[dict[str, Any]]],
    views: int,
    floor_y: float,
) -> Iterator[tuple[str, str]]:
    if view.shape[1] != len(VIEW_COLUMNS):
        yield "bearing-recorded", f"view has {view.shape[1]} columns, not {len(VIEW_COLUMNS)}"
        return
    flat = [vp for state in viewpoints for vp in state]
    for r, (pose, row) in enumerate(zip(poses.astype(np.float64), view, strict=True)):
        s, v = divmod(r, views)
        dx = pose[0, 3] - float(row[COL["target_x"]])
        dz = pose[2, 3] - float(row[COL["target_z"]])
        want = float(np.degrees(np.arctan2(dx, dz)) % 360.0)
        have = float(row[COL["bearing_deg"]])
        gap = abs((want - have + 180.0) % 360.0 - 180.0)
        if np.hypot(dx, dz) > 0.01 and gap > BEARING_TOL_DEG:
            yield "bearing-recorded", f"step {s} view {v}: bearing {have:.2f}, camera at {want:.2f}"
            return
        height = pose[1, 3] - floor_y
        if abs(height - float(row[COL["camera_height_m"]])) > HEIGHT_TOL_M:
            yield "bearing-recorded", f"step {s} view {v}: camera height {height:.3f} m differs"
            return
        vp = flat[r] if r < len(flat) else {}
        if abs(float(vp.get("bearing_deg", np.nan)) - have) > BEARING_TOL_DEG or bool(
            vp.get("usable")
        ) != bool(row[COL["usable"]]):
            yield "bearing-recorded", f"step {s} view {v}: metadata viewpoint differs from view"
            return


def _check_windows(
    s: int, v: int, depth: np.ndarray, boxes: np.ndarray, windows: set[int]
) -> Iterator[tuple[str, str]]:
    for i, x0, y0, x1, y1, _ in boxes:
        if int(i) in windows and not np.all(depth[y0 : y1 + 1, x0 : x1 + 1]):
            yield "no-hole-window", f"step {s} view {v}: depth 0 inside window {int(i)}'s box"
            return


def _floor_y(ep: StoredEpisode) -> float:
    """The floor height the cameras stood on (as the capture computed it)."""
    from dataforge.world.house import load_house
    from dataforge.world.navigation import house_floor_y

    return house_floor_y(load_house(json.loads(ep["house_json"].read().tobytes())))


def _check_actions(steps: list[dict[str, Any]]) -> Iterator[tuple[str, str]]:
    from dataforge.pipelines.spamem.rules import ACTIONS, FORBIDDEN_RECEPTACLES
    from dataforge.world.assets import load_catalogue

    catalogue = load_catalogue()
    for rec in steps[1:]:
        if rec["action"] not in ACTIONS:
            yield "allowed-actions", f"step {rec['step']}: action {rec['action']!r}"
            continue
        if not catalogue.type_info(rec["object_type"]).pickupable:
            yield "allowed-actions", f"step {rec['step']}: {rec['object_type']} is not pickupable"
        if rec.get("receptacle_type") in FORBIDDEN_RECEPTACLES:
            yield "allowed-actions", f"step {rec['step']}: onto a {rec['receptacle_type']}"


def _check_rests(
    steps: list[dict[str, Any]],
    graphs: list[dict[str, Any]],
    box3d: np.ndarray,
    ids_of: dict[str, int],
) -> Iterator[tuple[str, str]]:
    for s, graph in enumerate(graphs):
        yield from _check_resting(s, graph, box3d[box3d[:, 0] == s], ids_of)
    for rec in steps[1:]:
        if rec["action"] in ("spawn", "place"):
            yield from _check_target(rec, graphs[rec["step"]])


def _check_resting(
    s: int, graph: dict[str, Any], box3d: np.ndarray, ids_of: dict[str, int]
) -> Iterator[tuple[str, str]]:
    """Every child of state ``s`` rests on a surface of its parent, within ``REST_TOL_M``."""
    surface_y = {
        oid: float(x["y"])
        for r in graph["receptacles"]
        for x in r["surfaces"]
        for oid in x["object_ids"]
    }
    rows = {int(b[1]): b for b in box3d}
    for node in graph["objects"]:
        oid = node["id"]
        if node["parent_id"] is None:
            continue
        if oid not in surface_y:
            yield "rests-on-surface", f"step {s}: {oid} rests on no surface of {node['parent_id']}"
            continue
        row = rows.get(ids_of.get(oid, -1))
        if row is None:
            yield "rests-on-surface", f"step {s}: {oid} has no 3D box"
            continue
        gap = _bottom(row) - surface_y[oid]
        if abs(gap) > REST_TOL_M:
            yield "rests-on-surface", f"step {s}: {oid}'s bottom is {gap:+.3f} m from its surface"


def _bottom(row: np.ndarray) -> float:
    """The lowest point of a box3d row's box (tilted boxes included)."""
    cx, cy, cz, sx, sy, sz, pitch, yaw, roll = (float(x) for x in row[2:11])
    return OrientedBox((cx, cy, cz), (sx, sy, sz), yaw, pitch, roll).bottom


def _check_target(rec: dict[str, Any], graph: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """A spawned or placed object is a child of its receptacle, on one of its surfaces."""
    s, oid, target = rec["step"], rec["object"], rec["receptacle"]
    node = next((o for o in graph["objects"] if o["id"] == oid), None)
    recs = {r["id"]: r for r in graph["receptacles"]}
    if node is None or target not in recs:
        yield "rests-on-surface", f"step {s}: {oid} or {target} missing from the graph"
        return
    tnode = recs[target]
    parent = tnode.get("parent_id") or target
    on_target = node["parent_id"] == parent and (
        tnode.get("parent_id") is None or node["element_id"] == target
    )
    if not on_target or not any(oid in x["object_ids"] for x in tnode["surfaces"]):
        yield "rests-on-surface", f"step {s}: {oid} does not rest on a surface of {target}"


def _check_acted(
    ep: StoredEpisode,
    steps: list[dict[str, Any]],
    graphs: list[dict[str, Any]],
    box2d: np.ndarray,
    ids_of: dict[str, int],
    views: int,
) -> Iterator[tuple[str, str]]:
    from dataforge.pipelines.spamem.sequence_view import visible_pixels

    height, width = ep["instance"][0].shape
    least = visible_pixels(width, height)
    for rec in steps[1:]:
        s = rec["step"]
        if "acted_visible_views" not in rec:
            yield "acted-visible", f"step {s}: no acted_visible_views"
            continue
        acted = rec["object"]
        if rec["action"] == "remove":
            if any(o["id"] == acted for o in graphs[s]["objects"]):
                continue  # not removed after all: removed-absent's to report
            node = next((o for o in graphs[s - 1]["objects"] if o["id"] == acted), None)
            acted = None if node is None else (node.get("element_id") or node["parent_id"])
        want = None
        if acted is not None:
            iid = ids_of.get(acted, -1)
            rows = (box2d[:, 0] >= s * views) & (box2d[:, 0] < (s + 1) * views)
            shown = box2d[rows & (box2d[:, 1] == iid) & (box2d[:, 6] >= least)]
            want = len(np.unique(shown[:, 0]))
        if rec["acted_visible_views"] != want:
            yield (
                "acted-visible",
                f"step {s}: acted_visible_views is {rec['acted_visible_views']}, the masks "
                f"show {acted} in {want} views",
            )
        for rid in rec.get("opened", []):
            now = _openness(graphs[s], rid)
            after = _openness(graphs[s + 1], rid) if s + 1 < len(graphs) else 0.0
            again = s + 1 < len(steps) and rid in steps[s + 1].get("opened", [])
            if not now > 0 or (after > 0 and not again):
                yield "acted-visible", f"step {s}: {rid} is not open only while captured"


def _openness(graph: dict[str, Any], rid: str) -> float:
    node = next((r for r in graph["receptacles"] if r["id"] == rid), None)
    return 0.0 if node is None else float(node.get("openness", 0.0))


def _check_depth(
    s: int,
    v: int,
    depth: np.ndarray,
    inst: np.ndarray,
    K: np.ndarray,
    pose: np.ndarray,
    keys: dict[int, str],
    boxes: dict[int, np.ndarray],
    ids_of: dict[str, int],
    floor_y: float,
    rng: np.random.Generator,
    opened: set[str],
) -> Iterator[tuple[str, str]]:
    vs, us = np.nonzero(inst)
    if not len(us):
        return
    pick = rng.choice(len(us), size=min(SAMPLES_PER_VIEW, len(us)), replace=False)
    u, vv = us[pick], vs[pick]
    pts = unproject(depth.astype(np.float64) / 1000.0, K, pose.astype(np.float64), u, vv)
    for p, i in zip(pts, inst[vv, u], strict=True):
        key = keys.get(int(i), "")
        if key.startswith("floor:"):
            if abs(p[1] - floor_y) > BOX_TOL_M:
                yield (
                    "depth-on-surface",
                    f"step {s} view {v}: a floor pixel is {p[1] - floor_y:+.3f} m off the floor",
                )
                return
            continue
        if key in opened:
            continue  # a drawer pulled out, a door swung open: outside its closed object's box
        # an object's own id, or a sub-receptacle's ("<object id>|Drawer_2"): its object's box
        obj = ids_of.get(key)
        if obj is None or obj not in boxes:
            obj = ids_of.get(key.rsplit("|", 1)[0])
        row = boxes.get(int(obj)) if obj is not None else None
        if row is None:
            continue  # walls, ceilings, doors and windows: no box to check against
        R = rotation_matrix(cast(Vec3, tuple(float(a) for a in row[6:9])))
        local = R.T @ (p - row[:3].astype(np.float64))
        if np.any(np.abs(local) > row[3:6].astype(np.float64) / 2 + BOX_TOL_M):
            yield (
                "depth-on-surface",
                f"step {s} view {v}: a pixel of {key} unprojects outside its 3D box",
            )
            return


def stats(ds: Dataset) -> PipelineStats:
    houses: set[str] = set()
    actions: Counter[str] = Counter()
    receptacles: Counter[str] = Counter()
    objects: Counter[str] = Counter()
    instance_types: set[str] = set()
    receptacle_types: set[str] = set()
    states = views = early = redraws = 0
    per_sequence: list[float] = []
    off_bearing: list[float] = []
    settled: dict[str, dict[str, int]] = {}  # house -> children dropped / removed by settle
    acted_views: list[float] = []
    opened = 0
    off_azimuth: list[float] = []
    unusable = 0
    for ep in ds.episodes():
        meta = ep.metadata
        houses.add(meta["house"])
        if "settled" in meta["house_origin"]:
            report = meta["house_origin"]["settled"]
            settled[meta["house"]] = {k: int(report[k]) for k in ("dropped", "removed")}
        states += meta["states"]
        views += meta["states"] * meta["views_per_state"]
        early += meta["ended_early"] is not None
        redraws += int(meta.get("redraws", 0))  # absent in datasets made before redraws
        per_sequence.append(float(meta["actions"]))
        for rec in meta["steps"][1:]:
            actions[rec["action"]] += 1
            objects[rec["object_type"]] += 1
            rtype = rec.get("receptacle_type") or rec.get("from_type")
            if rtype:
                receptacles[rtype] += 1
            opened += bool(rec.get("opened"))
            if rec.get("acted_visible_views") is not None:
                acted_views.append(float(rec["acted_visible_views"]))
        flat = [vp for state in meta["viewpoints"] for vp in state]
        off_bearing.append(100.0 * sum(not vp["on_bearing"] for vp in flat) / max(len(flat), 1))
        off = [_azimuth_gap(vp) > OFF_AZIMUTH_DEG for vp in flat if "bearing_deg" in vp]
        off_azimuth.append(100.0 * sum(off) / max(len(off), 1))
        unusable += sum(not vp.get("usable", True) for vp in flat)
        _, size = ep["graph_index"][0]  # the first state's graph, in full: its bytes only
        first = json.loads(ep["graphs"][0 : int(size)].tobytes())
        instance_types |= {o["object_type"] for o in first["objects"]}
        receptacle_types |= {r["object_type"] for r in first["receptacles"]}
    total = sum(actions.values())
    return PipelineStats(
        counts={
            "houses": len(houses),
            "sequences": len(ds),
            "actions": total,
            "actions by type": {k: actions[k] for k in ("spawn", "place", "remove")},
            "action shares (%)": {
                k: round(100.0 * actions[k] / max(total, 1), 1)
                for k in ("spawn", "place", "remove")
            },
            "states (captured, incl. step 0)": states,
            "views (states x views per state)": views,
            "images (views x 4 modalities)": views * 4,
            "sequences ended early": early,
            "redraws (draws without any action, dropped)": redraws,
            "children settled in houses read from JSON": {
                k: sum(x[k] for x in settled.values()) for k in ("dropped", "removed")
            },
            "unusable views (every camera position too close to something)": unusable,
            "object types in the houses (initial world graphs)": len(instance_types),
            "object types acted on": len(objects),
            "receptacle types in the houses": len(receptacle_types),
            "receptacle types acted on": len(receptacles),
            "top receptacles (interactions)": dict(receptacles.most_common(8)),
            "top objects (interactions)": dict(objects.most_common(15)),
            "actions done with a container opened": opened,
            f"actions whose acted-on target shows in >= {ACTED_MIN_VIEWS} views (%)": round(
                100.0 * sum(n >= ACTED_MIN_VIEWS for n in acted_views) / max(len(acted_views), 1),
                1,
            ),
        },
        distributions={
            "actions per sequence": per_sequence,
            "views off their bearing per sequence (%)": off_bearing,
            "views showing the acted-on target per action": acted_views,
            f"views more than {OFF_AZIMUTH_DEG:g} deg off their azimuth per sequence (%)": (
                off_azimuth
            ),
        },
    )


def _azimuth_gap(vp: dict[str, Any]) -> float:
    """Degrees between a view's real bearing and its nominal azimuth."""
    return abs((float(vp["bearing_deg"]) - float(vp["azimuth_deg"]) + 180.0) % 360.0 - 180.0)


def preview_frames(ep: StoredEpisode, count: int) -> list[int]:
    """The views of the first action's state (step 1, else step 0)."""
    views, states = int(ep.metadata["views_per_state"]), int(ep.metadata["states"])
    s = 1 if states > 1 else 0
    return list(range(s * views, s * views + min(count, views)))
