"""Invariants, statistics and the Fig. 5-style plot of MultiON episode datasets (registered in
``__init__``).

Every check runs in :func:`check_dataset`, one stored scene at a time: the scene's navigable
space is rebuilt once (:func:`.scenes.stored_space`, from the stored house and the manifest's
config) and every leg is measured again; the rest is vectorised over the scene's episodes. Each
invariant reports at most one problem per scene, naming the first few episodes it concerns.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import UsageError
from dataforge.pipelines.multion.scenes import SceneSpace, same_floor
from dataforge.registry import PipelineStats
from dataforge.stats import DatasetStats
from dataforge.store.manifest import Manifest
from dataforge.store.reader import Dataset, StoredEpisode

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["INVARIANTS", "check_dataset", "check_scene", "plot", "stats"]

INVARIANTS = {
    "episode_ids": "each scene's episode ids are 0, 1, ..., n-1 in stored order: the ids "
    "habitat-lab's MultiNav-v1 loader gives the episodes of a content file (it renumbers them, "
    "multi_nav_dataset.py: episode_id = str(i)), so an id names the same episode after habitat "
    "loads the split; an episode is named by its scene and id",
    "challenge_files": "<split>/<split>.json.gz holds no episodes and both category maps; each "
    "scene's <split>/content/<scene>.json.gz holds exactly the stored scene's episodes in the "
    "challenge format (so no episode is in both or missing); scenes/procthor/<scene>.json is "
    "the stored house",
    "geodesics": "every leg (start -> g1, g1 -> g2, ...) measured again on the stored scene "
    "matches the stored leg within 0.01 m and lies in [min_geodesic, max_geodesic]; "
    "geodesic_distance is the sum of the legs",
    "navigable": "the start and every goal are navigable and on the start's floor",
    "goals": "exactly m goals per episode, with distinct task categories in 0..7",
    "separation": "goals are at least two cylinder radii apart (x/z), and every goal at least "
    "an agent plus a cylinder radius from the start",
    "reachable": "with blocking cylinders (--block, embedded world), every goal can still be "
    "walked up to from the start with the cylinders in the way",
    "rotation": "start_rotation is a unit quaternion about +y ([0, y, 0, w])",
    "rooms": "start_room and goal_room are -1 or indices into the metadata's rooms, and are the "
    "rooms of the points",
}

LEG_TOL_M = 0.01  # a re-measured leg may differ this much from the stored one
SUM_TOL_M = 1e-9
UNIT_TOL = 1e-9
DIST_SLACK = 1e-9  # separation limits: as the sampler's ``<``, up to rounding
SHOW_IDS = 3
CATEGORY_COUNT = 8
MINIVAL = "multion/3_ON_minival_val.json.gz"
PAPER_MINIVAL = "the challenge's 3-ON minival: 9.4-41.2 m, mean 23.0"
LONG_M = 30.0  # stats: the share of episodes longer than this (the minival's: 24 %)


def _ids(ids: Iterable[object]) -> str:
    """``episode 7`` / ``episodes 3, 5, 9 and 12 more``."""
    names = [str(i) for i in ids]
    if len(names) == 1:
        return f"episode {names[0]}"
    head = ", ".join(names[:SHOW_IDS])
    more = len(names) - SHOW_IDS
    return f"episodes {head}" + (f" and {more} more" if more > 0 else "") + f" ({len(names)})"


def _bad(ids: np.ndarray, mask: np.ndarray) -> list[int]:
    return [int(i) for i in ids[np.asarray(mask, dtype=bool)]]


# -- one scene ---------------------------------------------------------------------------------


def check_scene(
    arrays: Mapping[str, np.ndarray],
    metadata: Mapping[str, Any],
    config: Mapping[str, Any],
    space: SceneSpace | None,
) -> Iterator[tuple[str, str]]:
    """``(key, message)`` for the invariants of one stored scene that need no other file:
    goals, rotation, separation, and with its navigable ``space`` (None: not rebuilt)
    geodesics, navigable, reachable and rooms. At most one message per key."""
    ids = np.asarray(arrays["episode_id"])
    n = len(ids)
    m = int(config.get("m", 0))
    start = np.asarray(arrays["start_position"], dtype=np.float64)
    goals = np.asarray(arrays["goal_position"], dtype=np.float64)
    cats = np.asarray(arrays["goal_category"])
    legs = np.asarray(arrays["leg_geodesic"], dtype=np.float64)
    total = np.asarray(arrays["geodesic_distance"], dtype=np.float64)
    rows = {k: len(v) for k, v in arrays.items() if k != "house_json"}
    if len(set(rows.values())) > 1:
        yield "goals", f"the scene's arrays differ in episode count: {rows}"
        return
    shapes_ok = (
        goals.shape[1:] == (m, 3)
        and cats.shape[1:] == (m,)
        and legs.shape[1:] == (m,)
        and np.asarray(arrays["goal_room"]).shape[1:] == (m,)
    )
    if not shapes_ok:
        yield "goals", f"goal arrays hold {goals.shape[1]} goals per episode, not m = {m}"
        return
    if n == 0:
        return
    # goals: categories distinct and in 0..7
    in_range = np.all((cats >= 0) & (cats < CATEGORY_COUNT), axis=1)
    srt = np.sort(cats.astype(np.int64), axis=1)
    distinct = np.all(srt[:, 1:] != srt[:, :-1], axis=1) if m > 1 else np.ones(n, bool)
    if bad := _bad(ids, ~(in_range & distinct)):
        yield "goals", f"{_ids(bad)}: goal categories repeat or are not in 0..7"
    # rotation: [0, y, 0, w], unit
    q = np.asarray(arrays["start_rotation"], dtype=np.float64)
    about_y = (np.abs(q[:, 0]) <= 1e-12) & (np.abs(q[:, 2]) <= 1e-12)
    unit = np.abs(np.sqrt(np.sum(q * q, axis=1)) - 1.0) <= UNIT_TOL
    if bad := _bad(ids, ~(about_y & unit)):
        yield "rotation", f"{_ids(bad)}: start_rotation is not a unit quaternion about +y"
    # separation (x/z)
    r_cyl = float(config.get("cylinder_radius", 0.1))
    r_agent = float(config.get("agent_radius", 0.1))
    gxz = goals[:, :, [0, 2]]
    to_start = np.hypot(*(gxz - start[:, None, [0, 2]]).transpose(2, 0, 1))
    close = np.any(to_start < r_agent + r_cyl - DIST_SLACK, axis=1)
    for a in range(m):
        for b in range(a + 1, m):
            d = np.hypot(*(gxz[:, a] - gxz[:, b]).T)
            close |= d < 2 * r_cyl - DIST_SLACK
    if bad := _bad(ids, close):
        yield (
            "separation",
            f"{_ids(bad)}: goals closer than {2 * r_cyl:g} m to each other or "
            f"{r_agent + r_cyl:g} m to the start",
        )
    # geodesic_distance = sum of legs (needs no space)
    sum_bad = ~(np.abs(total - legs.sum(axis=1)) <= SUM_TOL_M)
    if space is None:
        if bad := _bad(ids, sum_bad):
            yield "geodesics", f"{_ids(bad)}: geodesic_distance is not the sum of the legs"
        return
    yield from _space_checks(ids, start, goals, legs, sum_bad, arrays, metadata, config, space)


def _space_checks(
    ids: np.ndarray,
    start: np.ndarray,
    goals: np.ndarray,
    legs: np.ndarray,
    sum_bad: np.ndarray,
    arrays: Mapping[str, np.ndarray],
    metadata: Mapping[str, Any],
    config: Mapping[str, Any],
    space: SceneSpace,
) -> Iterator[tuple[str, str]]:
    n, m = goals.shape[:2]
    lo, hi = float(config.get("min_geodesic", 0.0)), float(config.get("max_geodesic", math.inf))
    measured = np.full((n, m), np.nan)
    finite = np.all(np.isfinite(start), axis=1) & np.all(np.isfinite(goals), axis=(1, 2))
    nav_bad = ~finite
    reach_bad = np.zeros(n, bool)
    block = bool(config.get("block", False)) and space.kind == "embedded"
    clearance = float(config.get("agent_radius", 0.1)) + float(config.get("cylinder_radius", 0.1))
    for e in np.flatnonzero(finite):
        s = start[e]
        prev = s
        ok = space.nav.navigable(s)
        for k in range(m):
            g = goals[e, k]
            ok = ok and space.nav.navigable(g) and same_floor(s, g)
            measured[e, k] = space.nav.distance(prev, g)
            prev = g
        nav_bad[e] = not ok
        if block:
            reach_bad[e] = not space.reachable_with(s, goals[e], clearance)
    off = ~(np.abs(measured - legs) <= LEG_TOL_M)
    out_of_range = ~((legs >= lo - 1e-9) & (legs <= hi + 1e-9))
    geo_bad = np.any(off | out_of_range, axis=1) | sum_bad
    if bad := _bad(ids, geo_bad):
        first = int(np.flatnonzero(geo_bad)[0])
        yield (
            "geodesics",
            f"{_ids(bad)}: legs re-measured {np.round(measured[first], 3).tolist()} m vs stored "
            f"{np.round(legs[first], 3).tolist()} m (first one; legs must match within "
            f"{LEG_TOL_M} m, lie in [{lo:g}, {hi:g}] m and sum to geodesic_distance)",
        )
    if bad := _bad(ids, nav_bad):
        yield "navigable", f"{_ids(bad)}: a start or goal is not navigable or not on one floor"
    if bad := _bad(ids, reach_bad):
        yield (
            "reachable",
            f"{_ids(bad)}: with the goal cylinders in the way a goal cannot be reached",
        )
    yield from _room_checks(ids, start, goals, arrays, metadata, space)


def _room_checks(
    ids: np.ndarray,
    start: np.ndarray,
    goals: np.ndarray,
    arrays: Mapping[str, np.ndarray],
    metadata: Mapping[str, Any],
    space: SceneSpace,
) -> Iterator[tuple[str, str]]:
    n, m = goals.shape[:2]
    count = len(metadata.get("rooms") or [])
    sr = np.asarray(arrays["start_room"], dtype=np.int64)
    gr = np.asarray(arrays["goal_room"], dtype=np.int64)
    valid = ((sr >= -1) & (sr < count)) & np.all((gr >= -1) & (gr < count), axis=1)
    want_s = space.room_indices(start)
    want_g = space.room_indices(goals.reshape(-1, 3)).reshape(n, m)
    same = (sr == want_s) & np.all(gr == want_g, axis=1)
    if bad := _bad(ids, ~(valid & same)):
        yield (
            "rooms",
            f"{_ids(bad)}: start_room / goal_room are not the points' rooms (-1 or an index "
            f"into the {count} metadata rooms)",
        )


# -- the dataset -------------------------------------------------------------------------------


def _read_json(root: Path, rel: str) -> object:
    """A dataset file's JSON (gzip when ``.gz``), read without following links."""
    from dataforge.store.hashing import read_inside

    raw = read_inside(root, rel)
    return json.loads(gzip.decompress(raw) if rel.endswith(".gz") else raw)


def habitat_id_problem(ids: np.ndarray) -> str:
    """Why a scene's ids are not the ones habitat-lab's loader will give its episodes (0, 1, ...
    in file order); "" when they are."""
    want = np.arange(len(ids))
    wrong = np.flatnonzero(np.asarray(ids).astype(np.int64) != want)
    if not len(wrong):
        return ""
    k = int(wrong[0])
    return (
        f"{len(wrong)} of {len(ids)} episode ids are not their position in the scene "
        f"(episode {k} has id {int(ids[k])}): habitat-lab's loader renumbers a content file's "
        "episodes 0, 1, ..., so trajectories keyed by its ids would score other episodes"
    )


def _normalised(doc: object) -> Any:
    return json.loads(json.dumps(doc))


def _check_split_file(ds: Dataset, split: str) -> Iterator[tuple[str | None, str, str]]:
    from dataforge.pipelines.multion.cylinders import CATEGORIES
    from dataforge.pipelines.multion.episodes import split_file

    rel = split_file(split)
    try:
        doc = _read_json(ds.root, rel)
    except (OSError, ValueError) as exc:
        yield None, "challenge_files", f"{rel} cannot be read: {exc}"
        return
    if not isinstance(doc, dict):
        yield None, "challenge_files", f"{rel} is not a JSON object"
        return
    if doc.get("episodes") != []:
        n = len(doc["episodes"]) if isinstance(doc.get("episodes"), list) else "no"
        yield None, "challenge_files", f"{rel} holds {n} episodes; they belong in content/"
    for key in ("category_to_mp3d_category_id", "category_to_task_category_id"):
        if doc.get(key) != CATEGORIES:
            yield None, "challenge_files", f"{rel}: {key} is not the 8 cylinders' map"


def _check_content(
    ds: Dataset, split: str, eid: str, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]
) -> Iterator[str]:
    """Problems of one scene's content file and house file (messages)."""
    from dataforge.pipelines.multion.episodes import content_file, document, episode_dicts
    from dataforge.pipelines.multion.generate import HOUSES_DIR

    rel = content_file(split, eid)
    cats = np.asarray(arrays["goal_category"])
    doc = None
    if cats.size and not np.all((cats >= 0) & (cats < CATEGORY_COUNT)):
        pass  # not expressible in the challenge format: "goals" reports it
    else:
        try:
            doc = _read_json(ds.root, rel)
        except (OSError, ValueError) as exc:
            yield f"{rel} cannot be read: {exc}"
    if doc is not None:
        want = _normalised(document(episode_dicts(arrays, meta)))
        if not isinstance(doc, dict) or not isinstance(doc.get("episodes"), list):
            yield f"{rel} is not a challenge-format episode file"
        elif doc != want:
            have_eps = {json.dumps(e, sort_keys=True) for e in doc["episodes"]}
            want_eps = {json.dumps(e, sort_keys=True) for e in want["episodes"]}
            have_ids = [e.get("episode_id") for e in doc["episodes"] if isinstance(e, dict)]
            want_ids = [e["episode_id"] for e in want["episodes"]]
            missing = [i for i in want_ids if i not in set(have_ids)]
            extra = [i for i in have_ids if i not in set(want_ids)]
            differ = [
                e["episode_id"]
                for e in want["episodes"]
                if json.dumps(e, sort_keys=True) not in have_eps and e["episode_id"] in have_ids
            ]
            parts = []
            if missing:
                parts.append(f"lacks {_ids(missing)}")
            if extra:
                parts.append(f"has {_ids(extra)} not stored in this scene")
            if differ:
                parts.append(f"differs from the stored {_ids(differ)}")
            if not parts:
                what = "episode order" if have_eps == want_eps else "top-level keys or maps"
                parts.append(f"differs in {what}")
            yield f"{rel} " + "; ".join(parts)
    house = np.asarray(arrays.get("house_json", np.zeros(0, np.uint8))).tobytes()
    hrel = f"{HOUSES_DIR}/{eid}.json"
    if house:
        from dataforge.store.hashing import read_inside

        try:
            if read_inside(ds.root, hrel) != house:
                yield f"{hrel} differs from the stored house"
        except OSError as exc:
            yield f"{hrel} cannot be read: {exc.strerror or exc}"
    elif hrel in ds.manifest.files:
        yield f"{hrel} is listed but the scene has no stored house"


def _open_space(
    meta: Mapping[str, Any], house: bytes, config: Mapping[str, Any], manifest: Manifest
) -> SceneSpace:
    from dataforge.pipelines.multion.scenes import scenes_root, stored_space

    return stored_space(dict(meta), house, dict(config), scenes_root(manifest))


def check_dataset(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    from dataforge.pipelines.multion.episodes import content_file

    config = dict(ds.manifest.config)
    split = str(config.get("split", "train"))
    yield from _check_split_file(ds, split)
    expected_files: set[str] = set()
    for ep in ds.episodes():
        meta = ep.metadata
        arrays = ep.read()
        expected_files.add(content_file(split, ep.id))
        ids = np.asarray(arrays["episode_id"])
        if msg := habitat_id_problem(ids):
            yield ep.id, "episode_ids", msg
        for msg in _check_content(ds, split, ep.id, arrays, meta):
            yield ep.id, "challenge_files", msg
        house = np.asarray(arrays["house_json"]).tobytes()
        space = None
        try:
            space = _open_space(meta, house, config, ds.manifest)
        except Exception as exc:  # a broken house or a missing simulator: say so, once
            yield (
                ep.id,
                "geodesics",
                f"the scene's navigable space cannot be rebuilt to re-measure the legs "
                f"({type(exc).__name__}: {exc})",
            )
        for key, msg in check_scene(arrays, meta, config, space):
            yield ep.id, key, msg
    prefix = f"{split}/content/"
    for rel in sorted(ds.manifest.files):
        if rel.startswith(prefix) and rel not in expected_files:
            yield None, "challenge_files", f"{rel} is the content file of no stored scene"


# -- statistics and the plot -------------------------------------------------------------------


def stats(ds: Dataset) -> PipelineStats:
    config = ds.manifest.config
    rejected: Counter[str] = Counter()
    abandoned: Counter[str] = Counter()
    totals: list[float] = []
    legs: list[float] = []
    ratios: list[float] = []
    categories: list[float] = []
    room_types: Counter[str] = Counter()
    specs: Counter[str] = Counter()
    areas: list[float] = []
    episodes = scenes = 0
    for ep in ds.episodes():
        meta = ep.metadata
        scenes += 1
        sampling = meta.get("sampling") or {}
        rejected.update(sampling.get("rejected") or {})
        abandoned.update(sampling.get("abandoned") or {})
        room_types.update(str(r[1]) for r in meta.get("rooms") or [])
        if meta.get("room_spec"):
            specs[str(meta["room_spec"])] += 1
        if meta.get("floor_area_m2") is not None:
            areas.append(float(meta["floor_area_m2"]))
        total = ep["geodesic_distance"].read().astype(np.float64)
        episodes += len(total)
        totals += total.tolist()
        legs += ep["leg_geodesic"].read().astype(np.float64).ravel().tolist()
        categories += ep["goal_category"].read().astype(np.float64).ravel().tolist()
        start = ep["start_position"].read().astype(np.float64)
        goals = ep["goal_position"].read().astype(np.float64)
        points = np.concatenate([start[:, None, :], goals], axis=1)
        straight = np.linalg.norm(np.diff(points, axis=1), axis=2).sum(axis=1)
        ok = straight > 0
        ratios += (total[ok] / straight[ok]).tolist()
    return PipelineStats(
        counts={
            "scenes": scenes,
            "episodes": episodes,
            "m": config.get("m"),
            "split": config.get("split"),
            "rejected goal candidates": dict(sorted(rejected.items())),
            "abandoned episodes": dict(sorted(abandoned.items())),
            "rooms": sum(room_types.values()),
            "room types": dict(sorted(room_types.items())),
            "house room specs": dict(sorted(specs.items())),
            "total geodesic vs the released 3-ON minival": comparison_text(
                minival_comparison(totals)
            ),
        },
        distributions={
            "geodesic_distance_m": totals,
            "leg_geodesic_m": legs,
            "geodesic_to_euclidean": ratios,
            "goal_category": categories,
            "house_floor_area_m2": areas,
        },
    )


def minival_path() -> Path | None:
    """The released 3-ON minival file: under ``$DATAFORGE_DATA`` when set, else under
    ``../shared/data`` from the current directory; None when absent."""
    env = os.environ.get("DATAFORGE_DATA")
    base = Path(env) if env else Path.cwd().parent / "shared" / "data"
    path = base / MINIVAL
    return path if path.is_file() else None


def minival_totals(path: Path) -> list[float]:
    """``info.geodesic_distance`` of every episode of a challenge-format file."""
    from dataforge.pipelines.multion.episodes import read_document

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the released rotations are not unit quaternions
        doc = read_document(path, "MultiON minival episodes")
    return [float(e["info"]["geodesic_distance"]) for e in doc["episodes"]]


def minival_comparison(totals: Sequence[float], path: Path | None = None) -> dict[str, Any] | str:
    """The total geodesics beside the released 3-ON minival's (``path``, default
    :func:`minival_path`): episodes, mean, the share over ``LONG_M`` and the two-sample
    Kolmogorov-Smirnov statistic and p-value; a sentence when the file or episodes are
    missing."""
    path = path if path is not None else minival_path()
    if path is None:
        return f"{MINIVAL} not found under $DATAFORGE_DATA or ../shared/data ({PAPER_MINIVAL})"
    if not totals:
        return "no episodes"
    return _comparison(totals, minival_totals(path))


def _comparison(totals: Sequence[float], minival: Sequence[float]) -> dict[str, Any]:
    """:func:`minival_comparison` of totals and the minival's totals already read."""
    from scipy.stats import ks_2samp

    ours = np.asarray(totals, dtype=np.float64)
    ref = np.asarray(minival, dtype=np.float64)
    ks = ks_2samp(ours, ref)
    return {
        "episodes (ours, minival)": [len(ours), len(ref)],
        "mean m (ours, minival)": [round(float(ours.mean()), 2), round(float(ref.mean()), 2)],
        f"over {LONG_M:g} m (ours, minival)": [
            round(float(np.mean(ours > LONG_M)), 3),
            round(float(np.mean(ref > LONG_M)), 3),
        ],
        "KS statistic": round(float(ks.statistic), 4),
        "KS p-value": round(float(ks.pvalue), 4),
    }


def comparison_text(c: dict[str, Any] | str) -> str:
    """:func:`minival_comparison` in one line."""
    if isinstance(c, str):
        return c
    (n, n_ref), (mean, mean_ref) = c["episodes (ours, minival)"], c["mean m (ours, minival)"]
    long, long_ref = c[f"over {LONG_M:g} m (ours, minival)"]
    return (
        f"mean {mean:.1f} m vs {mean_ref:.1f}; over {LONG_M:g} m {100 * long:.1f} % vs "
        f"{100 * long_ref:.1f} %; KS D = {c['KS statistic']:.3f}, p = {c['KS p-value']:.3g} "
        f"({n} vs {n_ref} episodes)"
    )


def plot(stats: DatasetStats, path: Path) -> None:
    """:func:`fig5` written to ``path``."""
    from dataforge.viz.plots import save_figure

    save_figure(fig5(stats), path)


def fig5(stats: DatasetStats) -> Figure:
    """The paper's Fig. 5: the fraction of episodes per 2 m bin of total geodesic, beside the
    released 3-ON minival file's when it is found (see :func:`minival_path`), with the KS
    comparison of :func:`minival_comparison` (a matplotlib figure)."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ours = [float(v) for v in stats.distributions.get("geodesic_distance_m", [])]
    if not ours:
        raise UsageError("nothing to plot: the dataset has no episodes")
    ref_path = minival_path()
    ref = minival_totals(ref_path) if ref_path is not None else []
    m = stats.counts.get("m")
    name = stats.dataset.get("name", "dataset")
    panels = [(f"{name} ({m}-ON)", ours, "#3b75af")]
    if ref:
        panels.append(("released 3-ON minival (val)", ref, "#d9822b"))
    width = 5.2 * len(panels)
    fig, axes = plt.subplots(
        1, len(panels), figsize=(width, 4.0), squeeze=False, sharex=True, sharey=True
    )
    top = max(max(values) for _, values, _ in panels)
    edges = np.arange(0.0, 2.0 * math.ceil(top / 2.0) + 2.0, 2.0)  # 2 m bins, shared
    for ax, (label, values, color) in zip(axes[0], panels, strict=True):
        ax.hist(values, bins=edges, color=color, weights=np.full(len(values), 1 / len(values)))
        ax.axvline(float(np.mean(values)), color="black", lw=1, ls="--")
        ax.set_title(
            f"{label}\n{len(values)} episodes, {min(values):.1f}-{max(values):.1f} m, "
            f"mean {float(np.mean(values)):.1f}",
            fontsize=9,
        )
        ax.set_xlabel("total geodesic distance start -> g1 -> ... -> gm (m)", fontsize=8)
        ax.set_ylabel("fraction of episodes", fontsize=8)
        ax.tick_params(labelsize=8)
    title = "Geodesic distance per episode (Fig. 5)"
    if ref:
        ks = _comparison(ours, ref)  # the file is read once, above
        title += f"; KS vs the minival D = {ks['KS statistic']:.2f}, p = {ks['KS p-value']:.3g}"
    else:
        title += f"; {PAPER_MINIVAL} (file not found)"
    chars = int(width * 72 / 10 * 1.6)  # what a 10 pt line holds across the figure
    fig.suptitle("\n".join(textwrap.wrap(title, chars)), fontsize=10)
    fig.tight_layout()
    return fig


# -- inspect --preview ---------------------------------------------------------------------------


def preview(ep: StoredEpisode, path: Path, step: int | None) -> None:
    """Episode ``step`` (a row of the scene's table; default 0) on the house map: the start and
    its heading, the goal cylinders in order and the shortest path through them, beside what
    the agent sees at the start (256 x 256, 79 degrees, the challenge's camera)."""
    from dataforge.pipelines.multion.agent import start_pose, yaw_from_rotation
    from dataforge.pipelines.multion.config import OracleConfig
    from dataforge.pipelines.multion.figures import episode_figure, shortest_route
    from dataforge.pipelines.multion.scenes import scenes_root, stored_space

    config = dict(ep.dataset.manifest.config)
    arrays = {k: ep[k].read() for k in ep}
    n = len(arrays["episode_id"])
    row = 0 if step is None else int(step)
    if not 0 <= row < n:
        raise UsageError(f"--step {row}: scene {ep.id} has episodes 0..{n - 1}")
    meta = ep.metadata
    space = stored_space(
        meta, arrays["house_json"].tobytes(), config, scenes_root(ep.dataset.manifest)
    )
    goals = arrays["goal_position"][row]
    start = arrays["start_position"][row]
    if space.kind != "embedded":
        raise UsageError("the episode map is drawn from the embedded world's grid (not Habitat)")
    grid = space.move_grid(goals, config)
    from dataforge.pipelines.multion.oracle import SceneRenderer
    from dataforge.world.assets import load_catalogue

    renderer = SceneRenderer(OracleConfig(render=("rgb",)), space.house, load_catalogue(), None)
    renderer.set_episode(goals, arrays["goal_category"][row])
    frame = renderer.render(start_pose(start, arrays["start_rotation"][row])).rgb
    eid = int(arrays["episode_id"][row])
    episode_figure(
        path,
        grid,
        start,
        yaw_from_rotation(arrays["start_rotation"][row]),
        goals,
        arrays["goal_category"][row],
        title=f"{ep.id}, episode {eid}: {len(goals)}-ON, geodesic "
        f"{float(arrays['geodesic_distance'][row]):.1f} m "
        f"(legs {', '.join(f'{v:.1f}' for v in arrays['leg_geodesic'][row])})",
        shortest=shortest_route(grid, [start, *goals]),
        frames=[frame],
        frame_titles=["the start, as the agent sees it"],
    )
