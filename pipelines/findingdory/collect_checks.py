"""Invariants, statistics and the preview of FindingDory experience datasets
(``findingdory-collect``, registered in ``__init__``)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dataforge.registry import PipelineStats
from dataforge.store.manifest import Manifest
from dataforge.store.reader import Dataset, StoredEpisode

if TYPE_CHECKING:
    from dataforge.pipelines.findingdory.config import CollectConfig

CARRIED_MM = 1200  # a carried object's pixels are this close (day_world.CARRY_OFFSET: 0.75 m)
INVARIANTS = {
    "replay": "frame 0 is the plan's start; every action moves the agent as it says (forward: "
    "at most forward_m along the yaw; turns: turn_deg; snap, desnap, arm, empty, stop: no motion); "
    "all per-frame arrays have one row per frame",
    "clock": "clock[i] is the configured day's minute of frame i (day_start + i / day_steps x "
    "(day_end - day_start)) and never goes back",
    "log": "the log parses and agrees with the frames: one pick and one place per interaction, "
    "in order, each span in that rearrangement's phase with one SNAP / DESNAP frame, a pick "
    "ending on its SNAP; rooms' frame "
    "counts are the room column's; the log's frame count is the frames'",
    "visibility": "before each SNAP (unless counted as a blind pick) the object covers at least "
    "the episodes' min_coverage of the frame; from its SNAP to its DESNAP it is drawn only in "
    "hand: none of its pixels is farther than CARRIED_MM from the camera",
    "videos": "with --video mp4, videos/<episode>.mp4 of every episode (and no other) decodes "
    "to as many frames as the episode has, and its first, middle and last frames are the "
    "stored frames with the stamps drawn from the stored clock and the frame number (mean "
    "absolute error under 8 levels; where the stamps change pixels, nearer the stamped frame "
    "than the clean one, and nearer it than one stamped a minute and a frame later)",
}

BLOCK = 64
VIDEO_TOL = 8.0  # mean |decoded - expected| of a video frame, levels (H.264 at crf 23)
POS_TOL = 2e-6
YAW_TOL = 2e-6


def _cfg(manifest: Manifest) -> CollectConfig:
    from dataforge.pipelines.findingdory.config import CollectConfig

    return CollectConfig.from_dict(dict(manifest.config))


def check_episode(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    cfg = _cfg(ep.dataset.manifest)
    yield from _replay(ep, cfg)
    yield from _clock(ep, cfg)
    yield from _log(ep)
    yield from _visibility(ep)


def _replay(ep: StoredEpisode, cfg: CollectConfig) -> Iterator[tuple[str, str]]:
    from dataforge.pipelines.findingdory.oracle import (
        ARM,
        DESNAP,
        EMPTY,
        MOVE_FORWARD,
        SNAP,
        SPAWN,
        STOP,
        TURN_LEFT,
        TURN_RIGHT,
    )
    from dataforge.pipelines.findingdory.plan import EpisodePlan

    n = len(ep["position"])
    for name in (
        "rgb",
        "depth",
        "instance",
        "semantic",
        "yaw",
        "action",
        "clock",
        "phase",
        "rearrangement",
        "room",
    ):
        if len(ep[name]) != n:
            yield "replay", f"{name} has {len(ep[name])} rows for {n} frames"
            return
    pos = ep["position"].read()
    yaw = ep["yaw"].read()
    act = ep["action"].read().astype(int)
    plan = EpisodePlan.from_dict(ep.metadata["plan"])
    if n == 0:
        yield "replay", "no frames"
        return
    if (
        act[0] != SPAWN
        or np.abs(pos[0] - plan.start.position).max() > POS_TOL
        or abs(_wrap(yaw[0] - plan.start.yaw)) > YAW_TOL
    ):
        yield "replay", "frame 0 is not the spawn at the plan's start pose"
    for i in range(1, n):
        d = pos[i] - pos[i - 1]
        turn = _wrap(yaw[i] - yaw[i - 1])
        a = act[i]
        if a == MOVE_FORWARD:
            t = math.radians(yaw[i - 1])
            along = d[0] * math.sin(t) + d[2] * math.cos(t)
            across = -d[0] * math.cos(t) + d[2] * math.sin(t)
            ok = (
                abs(turn) <= YAW_TOL
                and abs(across) <= POS_TOL
                and -POS_TOL <= along <= (cfg.forward_m + POS_TOL)
                and abs(d[1]) <= POS_TOL
            )
        elif a in (TURN_LEFT, TURN_RIGHT):
            want = cfg.turn_deg if a == TURN_RIGHT else -cfg.turn_deg
            ok = np.abs(d).max() <= POS_TOL and abs(turn - want) <= YAW_TOL
        elif a in (SNAP, DESNAP, ARM, EMPTY, STOP):
            ok = np.abs(d).max() <= POS_TOL and abs(turn) <= YAW_TOL
        else:
            ok = False
        if not ok:
            yield "replay", f"frame {i}: action {a} does not explain the pose change"
            return


def _clock(ep: StoredEpisode, cfg: CollectConfig) -> Iterator[tuple[str, str]]:
    from dataforge.pipelines.findingdory.log import Clock

    clock = Clock(cfg.day_start, cfg.day_end, cfg.day_steps)
    got = ep["clock"].read().astype(int)
    want = np.array([clock.minutes(i) for i in range(len(got))])
    bad = np.nonzero(got != want)[0]
    if len(bad):
        yield "clock", f"frames {bad[:3].tolist()}: clock {got[bad[0]]} != {want[bad[0]]}"


def _log(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    from dataforge.pipelines.findingdory.log import EpisodeLog
    from dataforge.pipelines.findingdory.oracle import DESNAP, PHASES, SNAP

    try:
        log = EpisodeLog.from_dict(ep.metadata["log"])
    except Exception as exc:
        yield "log", f"the log does not parse: {exc}"
        return
    n = len(ep["action"])
    if log.frames != n:
        yield "log", f"the log says {log.frames} frames, the episode has {n}"
    act = ep["action"].read().astype(int)
    phase = ep["phase"].read().astype(int)
    rearr = ep["rearrangement"].read().astype(int)
    plan_objects = [r["object"] for r in ep.metadata["plan"]["rearrangements"]]
    for inter in log.interactions:
        k = plan_objects.index(inter.object) if inter.object in plan_objects else -1
        for kind, span, code in (("pick", inter.pick, SNAP), ("place", inter.place, DESNAP)):
            a, b = span
            if not 0 <= a <= b < n:
                yield "log", f"{inter.object}: {kind} span {list(span)} outside the frames"
                return
            if int(np.count_nonzero(act[a : b + 1] == code)) != 1 or (
                kind == "pick" and act[b] != code
            ):
                yield "log", f"{inter.object}: {kind} span does not hold its one {kind} frame"
            if np.any(rearr[a : b + 1] != k) or any(PHASES[p] != kind for p in phase[a : b + 1]):
                yield "log", f"{inter.object}: frames of its {kind} span belong to another phase"
    counts = Counter(ep["room"].read().astype(int).tolist())
    rooms = ep.metadata["rooms"]
    for k, r in enumerate(log.rooms):
        if k < len(rooms) and r.frames != counts.get(k, 0):
            got = counts.get(k, 0)
            yield "log", f"room {r.id}: the log says {r.frames} frames, the frames say {got}"
    snaps = int(np.count_nonzero(act == SNAP))
    if snaps != len(log.interactions) and ep.metadata.get("ended") == "done":
        yield "log", f"{snaps} SNAP frames for {len(log.interactions)} interactions"


def desnap_frame(actions: np.ndarray, place: tuple[int, int]) -> int:
    """The frame of the DESNAP in a place span (its first; the log check wants exactly one)."""
    from dataforge.pipelines.findingdory.oracle import DESNAP

    return place[0] + int(np.argmax(actions[place[0] : place[1] + 1] == DESNAP))


def _visibility(ep: StoredEpisode) -> Iterator[tuple[str, str]]:
    from dataforge.pipelines.findingdory.log import EpisodeLog

    cfg = _cfg(ep.dataset.manifest)
    try:
        log = EpisodeLog.from_dict(ep.metadata["log"])
    except Exception:
        return  # reported by the log check
    ids = ep.metadata.get("instances") or {}
    inst, depth, act = ep["instance"], ep["depth"], ep["action"].read()
    n, blind = len(inst), int(ep.metadata.get("blind_picks") or 0)
    unseen = 0
    for inter in log.interactions:
        iid = ids.get(inter.object)
        if iid is None:
            yield "visibility", f"{inter.object} has no instance id"
            continue
        before = inter.pick[1] - 1
        if before >= 0:
            cov = float(np.count_nonzero(inst[before] == iid)) / inst[before].size
            if cov < cfg.min_coverage:
                unseen += 1
        a, b = inter.pick[1], desnap_frame(act, inter.place)  # the log check: it has one
        for s in range(a, b, BLOCK):
            mask = inst[s : min(b, s + BLOCK)] == iid
            far = np.flatnonzero((mask & (depth[s : min(b, s + BLOCK)] > CARRIED_MM)).any((1, 2)))
            if len(far):
                f = s + int(far[0])
                yield "visibility", f"{inter.object} in frame {f} beyond {CARRIED_MM} mm, carried"
                break
    if unseen > blind:
        yield "visibility", f"{unseen} objects not in view before their pick, {blind} blind picks"
    del n


def check_dataset(ds: Dataset) -> Iterator[tuple[str | None, str, str]]:
    from dataforge.pipelines.findingdory.collect import VIDEOS_DIR

    cfg = _cfg(ds.manifest)
    files = {f for f in ds.manifest.files if f.startswith(f"{VIDEOS_DIR}/")}
    if cfg.video != "mp4":
        if files:
            yield None, "videos", f"{len(files)} videos without --video mp4"
        return
    want = {f"{VIDEOS_DIR}/{eid}.mp4" for eid in ds.episode_ids}
    for f in sorted(files ^ want):
        yield None, "videos", f"{f}: {'no such episode' if f in files else 'missing'}"
    from dataforge.viz.video import mp4_frame_count

    for eid in ds.episode_ids:
        rel = f"{VIDEOS_DIR}/{eid}.mp4"
        if rel in files:
            try:
                got = mp4_frame_count(ds.root / rel)
            except Exception as exc:
                yield eid, "videos", f"{rel} does not decode ({exc})"
                continue
            if got != len(ds[eid]["rgb"]):
                yield eid, "videos", f"{rel} has {got} frames, the episode {len(ds[eid]['rgb'])}"
                continue
            problem = video_stamps(ds, eid, cfg.clean_rgb)
            if problem:
                yield eid, "videos", problem


def video_stamps(ds: Dataset, eid: str, clean: bool) -> str | None:
    """What is wrong with the first, middle and last frames of ``eid``'s video, or None: each
    must be the stored frame stamped from the stored clock and its frame number
    (:func:`.collect.video_frame`), up to the codec's error; where the stamps change pixels it
    must be nearer the stamped frame than the clean one (the stamps are there), and where a
    minute later and the next number would draw other pixels, nearer the right stamps (H.264
    blurs the glyphs but keeps them: measured ~6 levels from the right stamps, ~55 from
    others)."""
    from dataforge.pipelines.findingdory.collect import VIDEOS_DIR, video_frame
    from dataforge.viz.video import read_mp4_frames

    ep = ds[eid]
    rgb, minutes = ep["rgb"], ep["clock"].read()
    n = len(rgb)
    want = sorted({0, n // 2, n - 1})
    rel = f"{VIDEOS_DIR}/{eid}.mp4"
    for i, frame in enumerate(read_mp4_frames(ds.root / rel)):
        if i > want[-1]:
            break
        if i not in want:
            continue
        stored = np.asarray(rgb[i])
        expected = video_frame(stored, int(minutes[i]), i, clean=clean).astype(np.int16)
        got = frame[: stored.shape[0], : stored.shape[1]].astype(np.int16)  # even-size padding
        err = float(np.abs(got - expected).mean())
        if err > VIDEO_TOL:
            return f"{rel}: frame {i} is not the stored frame with its stamps (error {err:.1f})"
        if not clean:
            continue  # older datasets: the stored frames, clock drawn in, no number
        other = video_frame(stored, int(minutes[i]) + 1, i + 1, clean=True).astype(np.int16)
        checks = (
            (stored.astype(np.int16), "lacks its stamps"),
            (other, "is stamped with another clock or frame number"),
        )
        for against, what in checks:
            differ = np.any(expected != against, axis=2)
            if not differ.any():
                continue
            if np.abs(got - expected)[differ].mean() >= np.abs(got - against)[differ].mean():
                return f"{rel}: frame {i} {what}"
    return None


def _wrap(d: float) -> float:
    return (float(d) + 180.0) % 360.0 - 180.0


# -- statistics and the preview --------------------------------------------------------------


SUBSAMPLE = 96  # frames of the authors' subsampled videos (findingdory-train's README)


def caught(ep: StoredEpisode, k: int = SUBSAMPLE) -> list[tuple[bool, bool]]:
    """Per interaction of a collected day, whether a ``k``-frame subsample (upstream's,
    :func:`.evaluate.sample_frames`, which the findingdory-train export keeps) holds a frame
    that shows it happen: for the pick, a frame of the pick routine before the SNAP with the
    object in view; for the place, one from the DESNAP to the routine's end with the object
    in view (instance masks)."""
    from dataforge.pipelines.findingdory.evaluate import sample_frames
    from dataforge.pipelines.findingdory.log import EpisodeLog

    log = EpisodeLog.from_dict(ep.metadata["log"])
    ids = ep.metadata.get("instances") or {}
    act = ep["action"].read()
    inst = ep["instance"]
    picks = np.asarray(sample_frames(len(act), k), dtype=np.int64)
    out = []
    for i in log.interactions:
        iid = ids.get(i.object)
        desnap = desnap_frame(act, i.place)

        def shows(a: int, b: int, iid: int | None = iid) -> bool:
            return iid is not None and any(
                bool(np.any(inst[int(f)] == iid)) for f in picks[(picks >= a) & (picks <= b)]
            )

        out.append((shows(i.pick[0], i.pick[1] - 1), shows(desnap, i.place[1])))
    return out


def stats(ds: Dataset) -> PipelineStats:
    frames: list[float] = []
    rearr: list[float] = []
    actions: Counter[str] = Counter()
    replans = blind = 0
    ended: Counter[str] = Counter()
    seen: list[tuple[bool, bool]] = []
    from dataforge.pipelines.findingdory.oracle import ACTION_NAMES

    for ep in ds.episodes():
        meta = ep.metadata
        frames.append(float(len(ep["action"])))
        rearr.append(float(len(meta["log"]["interactions"])))
        actions.update(ACTION_NAMES.get(int(a), "spawn") for a in ep["action"].read())
        replans += int(meta.get("replans") or 0)
        blind += int(meta.get("blind_picks") or 0)
        ended[str(meta.get("ended"))] += 1
        seen.extend(caught(ep))
    n = max(len(seen), 1)
    return PipelineStats(
        counts={
            "episodes": len(frames),
            "frames": int(sum(frames)),
            "actions": dict(actions.most_common()),
            "re-plans (pick spot not usable)": replans,
            "blind picks": blind,
            "ended": dict(ended),
            f"interactions in view in a {SUBSAMPLE}-frame subsample": {
                kind: f"{sum(s[j] for s in seen)} of {len(seen)} "
                f"({sum(s[j] for s in seen) / n:.0%})"
                for j, kind in enumerate(("picks", "places"))
            },
            "paper": "400-3,500 frames per episode, 2-11 rearrangements (HSSD houses)",
        },
        distributions={"frames_per_episode": frames, "rearrangements": rearr},
    )


def preview(ep: StoredEpisode, path: Path, step: int | None) -> None:
    """The day's keyframes: the spawn, the frame before each pick and each place frame, and the
    last frame, with their clocks (``--step``: ignored)."""
    from dataforge.pipelines.findingdory.figures import keyframes_figure

    keyframes_figure(ep, path)
