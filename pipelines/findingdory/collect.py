"""FindingDory experience collection (paper appendix B.2): the oracle agent's day, frame by
frame, with the time of day, and the interaction log the tasks are made from.

Inputs
    a ``findingdory`` episodes dataset (``dataforge findingdory episodes``; its manifest is
    recorded with its sha256, which covers every file of it).
Randomization and seeds
    none: the plan fixes everything and the agent is deterministic. One work unit per episode.
Outputs
    one stored episode per FindingDory episode (``<scene>-<k>``), one row per frame (frame 0:
    the spawn; then one per action): ``rgb`` uint8 (the head camera's picture, clean: the
    clock is drawn where frames are shown, :mod:`.stamps`), ``depth`` uint16 (mm, 0: nothing),
    ``instance`` uint16 (ids of the metadata's ``instances``: element id -> id; 0 nothing),
    ``semantic`` uint16 (ids of the metadata's ``semantic_classes``), ``position`` float64
    (x, floor y, z), ``yaw`` float64 (degrees, AI2-THOR: 0 faces +z, 90 +x), ``action`` int8
    (upstream's ids, :data:`.oracle.ACTION_NAMES`; -1 for the spawn), ``clock`` int16 (minutes
    since midnight), ``phase`` int8 (index into :data:`.oracle.PHASES`), ``rearrangement`` int8
    (-1: none), ``room`` int16 (index into the metadata's ``rooms``, -1: none) and
    ``intrinsics`` (3 x 3); and the scene's ``house_json`` and receptacle ``viewpoints`` /
    ``viewpoint_receptacle`` (copied from the episodes dataset: the experience stands alone).
    Frames are streamed to the shard in blocks (bounded memory at 4,000 frames). Metadata:
    the plan, the :class:`~.log.EpisodeLog` (``log``), the pick and place events, re-plans,
    blind picks, how the run ended, the clock and the camera. With ``--video mp4``:
    ``videos/<episode>.mp4`` beside the shards (H.264 via PyAV, ``--fps``), each frame with
    its clock ``HH:MM`` top-left (the paper's Fig. 6) and its frame number top-right
    (:func:`.stamps.stamp_frame`), so the numbers in the tasks' answers can be read off it.
Invariants checked by validate
    see ``collect_checks.INVARIANTS``: actions replay to the stored poses; the clock follows
    the frame index; the log agrees with the frames (spans, events, rooms); every pick shows
    the object before its SNAP and a carried object is drawn only in hand; videos decode to
    the stored frames' count and show them with the stamps of the stored clock and frame number.
Where it departs from the paper
    see docs/findingdory.md: the agent walks to place spots (upstream teleports and replays
    recorded arm actions); the arm's 10 frames before a pick or place and after a place are
    still frames, and the carried object is drawn at a fixed pose in front of the camera
    (habitat-sim: not drawn); frames are fewer than the paper's
    400-3,500 because ProcTHOR houses are smaller than HSSD's.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import DatasetError, UsageError
from dataforge.inputs import Inputs
from dataforge.pipelines.findingdory.config import CITATION, LICENSE_URL, URL, CollectConfig
from dataforge.pipelines.findingdory.habitat_scene import carry_scenes
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema

if TYPE_CHECKING:
    from dataforge.pipelines.findingdory.oracle import StepRecord
    from dataforge.store.builder import ExtraFile
    from dataforge.store.reader import Dataset

PIPELINE = "findingdory-collect"
EPISODES = "episodes"
BLOCK = 16  # frames per streamed block
VIDEOS_DIR = "videos"


def schema(cfg: CollectConfig) -> Schema:
    w, h = cfg.resolution
    img: dict[str, Any] = {"chunk_rows": 1}
    return Schema(
        {
            "rgb": ArraySpec(
                "uint8",
                (None, h, w, 3),
                kind="rgb",
                description="head camera, clean (no stamp)",
                **img,
            ),
            "depth": ArraySpec(
                "uint16", (None, h, w), kind="depth", units="mm", description="0: nothing", **img
            ),
            "instance": ArraySpec(
                "uint16", (None, h, w), kind="mask", description="metadata instances ids", **img
            ),
            "semantic": ArraySpec(
                "uint16",
                (None, h, w),
                kind="mask",
                description="metadata semantic_classes ids",
                **img,
            ),
            "position": ArraySpec("float64", (None, 3), units="m", description="agent base"),
            "yaw": ArraySpec("float64", (None,), units="deg", description="0 faces +z"),
            "action": ArraySpec("int8", (None,), description="upstream action id; -1 spawn"),
            "clock": ArraySpec("int16", (None,), units="min", description="since midnight"),
            "phase": ArraySpec("int8", (None,), description="index into metadata phases"),
            "rearrangement": ArraySpec("int8", (None,), description="-1: none"),
            "room": ArraySpec("int16", (None,), description="index into metadata rooms; -1"),
            "intrinsics": ArraySpec("float32", (3, 3), description="pinhole K in pixels"),
            "house_json": ArraySpec("uint8", (None,), description="the scene's house JSON"),
            "viewpoints": ArraySpec(
                "float32", (None, 3), units="m", description="receptacle viewpoints x, y, z"
            ),
            "viewpoint_receptacle": ArraySpec(
                "int16", (None,), description="index into log receptacles"
            ),
        }
    )


# -- one episode -----------------------------------------------------------------------------


def read_scene(root: str, scene: str) -> tuple[bytes, Mapping[str, Any], np.ndarray]:
    """A stored scene of the episodes dataset: house (or scene instance) JSON, metadata,
    viewpoints (with their receptacle index as a 4th column)."""
    from dataforge.store import open_dataset

    with open_dataset(root) as ds:
        ep = ds[scene]
        raw = ep["house_json"].read().tobytes()
        views = np.column_stack(
            [
                ep["viewpoints"].read().astype(np.float64),
                ep["viewpoint_receptacle"].read().astype(np.float64),
            ]
        )
        return raw, dict(ep.metadata), views


def produce(
    cfg: CollectConfig,
    root: str,
    scenes_root: str | None,
    unit: WorkUnit,
    rng: np.random.Generator,
) -> Iterator[Episode]:
    from dataforge.pipelines.findingdory.day_world import is_habitat, plan_world, room_polygons
    from dataforge.pipelines.findingdory.log import Clock
    from dataforge.pipelines.findingdory.oracle import PHASES, OracleAgent
    from dataforge.pipelines.findingdory.plan import EpisodePlan
    from dataforge.render.camera import intrinsics
    from dataforge.render.renderer import depth_mm, to_uint16
    from dataforge.world.assets import load_catalogue
    from dataforge.world.graph import room_of

    raw, meta, views = read_scene(root, str(unit.params["scene"]))
    plan_dict = next(d for d in meta["episodes"] if d["id"] == unit.id)
    plan = EpisodePlan.from_dict(plan_dict)
    habitat = is_habitat(meta)
    catalogue = None if habitat else load_catalogue()
    cam = cfg.camera
    day = plan_world(
        raw,
        meta,
        plan,
        camera=cam,
        agent_radius=cfg.agent_radius,
        scenes_root=None if scenes_root is None else Path(scenes_root),
        catalogue=catalogue,
    )
    agent = OracleAgent(
        day,
        plan,
        camera=cam,
        forward_m=cfg.forward_m,
        turn_deg=cfg.turn_deg,
        min_coverage=cfg.min_coverage,
        max_frames=cfg.max_frames,
    )
    clock = Clock(cfg.day_start, cfg.day_end, cfg.day_steps)
    rooms = [dict(r) for r in meta["rooms"]]
    polygons = room_polygons(day)
    room_index = {r["id"]: k for k, r in enumerate(rooms)}
    room_frames: Counter[str] = Counter()
    last: dict[str, Any] = {}

    def blocks() -> Iterator[dict[str, np.ndarray]]:
        buf: list[StepRecord] = []
        for rec in agent.run():
            buf.append(rec)
            if len(buf) == BLOCK:
                yield block(buf)
                buf = []
        if buf:
            yield block(buf)

    def block(recs: list[StepRecord]) -> dict[str, np.ndarray]:
        rids = [room_of(r.position, polygons) for r in recs]
        room_frames.update(x for x in rids if x is not None)
        last["pose"] = (recs[-1].position, recs[-1].yaw)
        last["frames"] = recs[-1].index + 1
        return {
            "rgb": np.stack([r.frame.rgb for r in recs]).astype(np.uint8, copy=False),
            "depth": np.stack([depth_mm(r.frame.depth) for r in recs]),
            "instance": np.stack([to_uint16(r.frame.instance, "instance") for r in recs]),
            "semantic": np.stack([to_uint16(r.frame.semantic, "semantic") for r in recs]),
            "position": np.array([r.position for r in recs], dtype=np.float64),
            "yaw": np.array([r.yaw for r in recs], dtype=np.float64),
            "action": np.array([r.action for r in recs], dtype=np.int8),
            "clock": np.array([clock.minutes(r.index) for r in recs], dtype=np.int16),
            "phase": np.array([PHASES.index(r.phase) for r in recs], dtype=np.int8),
            "rearrangement": np.array([r.rearrangement for r in recs], dtype=np.int8),
            "room": np.array(
                [-1 if x is None else room_index.get(x, -1) for x in rids], dtype=np.int16
            ),
        }

    def metadata() -> dict[str, Any]:
        from dataforge.pipelines.findingdory.experience import episode_log

        log = episode_log(
            day,
            plan,
            meta,
            views,
            agent.events,
            room_frames,
            last["frames"],
            last["pose"],
            clock,
            cfg.split,
        )
        origin = {"origin": dict(meta["origin"])} if habitat else {}
        return {
            "scene": plan.scene,
            "plan": plan_dict,
            "log": log.to_dict(),
            "events": agent.events,
            "replans": agent.replans,
            "blind_picks": agent.blind_picks,
            "ended": agent.ended,
            "rooms": rooms,
            "phases": list(PHASES),
            "instances": day.ids.to_dict(),
            "semantic_classes": day.semantics.to_dict(),
            "camera": {
                "width": cam.width,
                "height": cam.height,
                "hfov_deg": cam.hfov_deg,
                "height_m": cam.height_m,
                "tilt_deg": cam.tilt_deg,
            },
            **origin,
        }

    w, h = cfg.resolution
    empty = {
        name: np.zeros((0, *spec.trailing), dtype=spec.dtype)
        for name, spec in schema(cfg).items()
        if spec.shape[0] is None
    }
    empty["intrinsics"] = intrinsics(w, h, cam.vfov_deg).astype(np.float32)
    empty["house_json"] = np.frombuffer(raw, dtype=np.uint8)
    empty["viewpoints"] = views[:, :3].astype(np.float32)
    empty["viewpoint_receptacle"] = views[:, 3].astype(np.int16)
    yield Episode(unit.id, empty, metadata, blocks=blocks())
    day.close()


# -- videos ----------------------------------------------------------------------------------


def extras(ds: Dataset) -> dict[str, ExtraFile]:
    """The files beside the shards (registered): the MP4s when the dataset asks for them."""
    config = ds.manifest.config
    return video_files(ds, float(config["fps"])) if config["video"] == "mp4" else {}


def video_files(ds: Dataset, fps: float) -> dict[str, ExtraFile]:
    """``videos/<episode>.mp4`` of every stored episode's RGB, written from the shards, each
    frame stamped with its clock and frame number (:func:`video_frame`)."""
    return {
        f"{VIDEOS_DIR}/{eid}.mp4": functools.partial(_write_video, ds, eid, fps)
        for eid in ds.episode_ids
    }


def _write_video(ds: Dataset, eid: str, fps: float, path: Path) -> None:
    from dataforge.viz.video import Mp4Writer

    rgb = ds[eid]["rgb"]
    minutes = ds[eid]["clock"].read()
    n = len(rgb)
    if n == 0:
        raise DatasetError(f"episode {eid} has no frames to write as a video")
    h, w = rgb.shape[1:3]
    with Mp4Writer(path, w, h, fps=fps) as out:
        for s in range(0, n, 64):
            for i, frame in enumerate(rgb[s : min(n, s + 64)], start=s):
                out.write(video_frame(frame, int(minutes[i]), i, clean=True))


def video_frame(rgb: np.ndarray, minutes: int, index: int, *, clean: bool) -> np.ndarray:
    """Frame ``index`` of an episode's MP4: the stored frame with its clock and its frame number
    stamped (:func:`.stamps.stamp_frame`). ``clean``: the dataset stores clean RGB; the videos
    of older datasets are their stored frames, the clock drawn in, no number."""
    from dataforge.pipelines.findingdory.stamps import stamp_frame

    return stamp_frame(rgb, minutes, index) if clean else np.asarray(rgb)


# -- the job ---------------------------------------------------------------------------------


def build_job(cfg: CollectConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    from dataforge.store import open_dataset

    inputs = inputs if inputs is not None else Inputs()
    if EPISODES not in inputs:
        raise UsageError("collection needs the FindingDory episodes dataset to play (DIR)")
    manifest = inputs.dataset(EPISODES, "findingdory", "dataforge findingdory episodes")
    if cfg.video == "mp4":
        from dataforge.viz.video import _av

        _av("--video mp4")  # a missing PyAV stops here, in one line
    src = dict(manifest.config)
    scenes_root = carry_scenes(inputs, manifest, habitat=src.get("scene_kind") == "habitat")
    cfg = cfg.with_(
        clean_rgb=True,
        split=str(src.get("split", cfg.split)),
        agent_radius=float(src.get("agent_radius", cfg.agent_radius)),
        min_coverage=float(src.get("min_coverage", cfg.min_coverage)),
    )
    root = str(inputs.root(EPISODES))
    units: list[WorkUnit] = []
    with open_dataset(root) as ds:
        for scene in ds.episode_ids:
            plans = ds[scene].metadata.get("episodes") or []
            for d in plans[: cfg.limit]:
                units.append(WorkUnit(str(d["id"]), {"scene": scene}))
    if not units:
        raise DatasetError(f"{root} holds no FindingDory episodes")
    w, h = cfg.resolution
    return Job(
        pipeline=PIPELINE,
        name=f"{PIPELINE}-{manifest.config.get('split')}",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(cfg),
        units=tuple(units),
        produce=functools.partial(produce, cfg, root, scenes_root),
        extra_files=extras,
        description=f"FindingDory oracle experience ({len(units)} episodes, {w}x{h} RGB-D, "
        f"instance and semantic masks, clock {cfg.day_start}-{cfg.day_end}).",
        url=URL,
        license_url=LICENSE_URL,
        citation=CITATION,
        inputs=inputs,
    )
