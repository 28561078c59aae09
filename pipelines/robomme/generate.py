"""RoboMME: demonstrations of the 16 memory-manipulation tasks on ManiSkill (CPU).

Inputs
    none: the tasks are built from primitives; ``--metadata-dir`` optionally names RoboMME's
    ``env_metadata/<split>/`` files to generate exactly their (task, seed, difficulty) episodes.
Randomization and seeds
    one work unit per episode (``<Task>-<episode>``); its seed is the released record's or
    ``base + stride * task_index + 100 * episode`` (``seeds.py``), and everything random about
    the episode (layout, noise) is drawn from that seed alone. A failed episode (planner or
    task check) is filtered and the next seed tried (``--max-retries``).
Outputs
    one stored episode per unit: RoboMME's per-step fields as arrays (each step's action and
    the observation after it: images, depth in mm, joint/EEF/waypoint actions, flags) plus
    ``env_state`` (flattened ManiSkill states, for replays), ``subgoal``/``subgoal_online``
    (indices into the metadata's subgoals) and the camera intrinsics; metadata: seed,
    difficulty, goal, subgoals, filtered seeds, noise detours. Beside the shards,
    ``record_dataset_<Task>.h5`` in RoboMME's released layout.
Invariants checked by validate
    see ``checks.INVARIANTS``.
Where it departs from the public benchmark
    the tasks follow RoboMME's public code (seed -> layout, objects, task lists, rules, recovery,
    HDF5 writer); what remains different, with reasons: ``docs/robomme.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dataforge.errors import DataforgeError
from dataforge.inputs import Inputs
from dataforge.pipelines.robomme.config import RobommeConfig
from dataforge.pipelines.robomme.episode import (
    choices,
    drop_unrecorded,
    episode_arrays,
    run_pass1,
)
from dataforge.pipelines.robomme.h5layout import task_file, write_task_file
from dataforge.pipelines.robomme.seeds import (
    EpisodeSpec,
    load_metadata,
    metadata_file,
    scheme_episodes,
)
from dataforge.pipelines.robomme.suites import TASK_SUITES
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema

if TYPE_CHECKING:
    from dataforge.store.reader import Dataset


PIPELINE = "robomme"
METADATA_DIR = "metadata-dir"  # the input location of --metadata-dir
PAPER = (
    "Dai, Fu, Lee, Liu, Zhang, Yang, Finn, Fazeli, Chai. RoboMME: Benchmarking and "
    "Understanding Memory for Robotic Generalist Policies. 2026."
)


def schema(size: int) -> Schema:
    img = (None, size, size)
    f32, f64 = "float32", "float64"  # RoboMME's writer stores actions as float64
    return Schema(
        {
            "front_rgb": ArraySpec("uint8", (*img, 3), kind="rgb", chunk_rows=8),
            "wrist_rgb": ArraySpec("uint8", (*img, 3), kind="rgb", chunk_rows=8),
            "front_depth": ArraySpec("int16", (*img, 1), kind="depth", units="mm", chunk_rows=8),
            "wrist_depth": ArraySpec("int16", (*img, 1), kind="depth", units="mm", chunk_rows=8),
            "joint_state": ArraySpec(f32, (None, 7), units="rad"),
            "eef_state": ArraySpec(
                f32, (None, 6), description="TCP [x, y, z, roll, pitch, yaw], angles continuous"
            ),
            "gripper_state": ArraySpec(f32, (None, 2), units="m"),
            "is_gripper_close": ArraySpec("bool", (None,)),
            "front_camera_extrinsic": ArraySpec(f32, (None, 3, 4)),
            "wrist_camera_extrinsic": ArraySpec(f32, (None, 3, 4)),
            "joint_action": ArraySpec(f64, (None, 8), description="7 joints + gripper (-1 close)"),
            "eef_action": ArraySpec(
                f64, (None, 7), description="FK of joint_action: [x, y, z, r, p, y, gripper]"
            ),
            "waypoint_action": ArraySpec(
                f64, (None, 7), description="the latest keyframe (NaN before the first)"
            ),
            "is_video_demo": ArraySpec("bool", (None,)),
            "is_subgoal_boundary": ArraySpec("bool", (None,)),
            "is_completed": ArraySpec("bool", (None,)),
            "subgoal": ArraySpec("int16", (None,), description="index into metadata subgoals"),
            "subgoal_online": ArraySpec("int16", (None,)),
            "eef_state_quat": ArraySpec(
                f32, (None, 4), description="TCP wxyz, normalised, sign-continuous (eef_state_raw)"
            ),
            "eef_action_quat": ArraySpec(
                f64, (None, 4), description="FK wxyz of joint_action, sign-continuous"
            ),
            "choice_point": ArraySpec(
                "int16",
                (None, 2),
                units="px",
                description="choice_action's [row, col]: the subgoal's anchor after the step "
                "in the front camera ([-1, -1]: none)",
            ),
            "env_state": ArraySpec(
                f32, (None,), description="(steps + 1) x state_dim: before each step, then final"
            ),
            "front_camera_intrinsic": ArraySpec(f32, (3, 3), units="px"),
            "wrist_camera_intrinsic": ArraySpec(f32, (3, 3), units="px"),
        }
    )


def episode_specs(cfg: RobommeConfig) -> list[EpisodeSpec]:
    if cfg.episodes:
        return list(cfg.episodes)
    return [
        spec
        for task in cfg.tasks
        for spec in scheme_episodes(task, cfg.split, cfg.episodes_per_task, cfg.first_episode)
    ]


def unit_id(spec: EpisodeSpec) -> str:
    return f"{spec.task}-{spec.episode:05d}"


def units(cfg: RobommeConfig) -> list[WorkUnit]:
    return [WorkUnit(unit_id(s), s.to_dict()) for s in episode_specs(cfg)]


def produce(cfg: RobommeConfig, unit: WorkUnit, rng: np.random.Generator) -> Iterator[Episode]:
    """Pass 1 (plan + physics, retrying) then pass 2 (cameras) for one episode."""
    from dataforge.pipelines.robomme.sim import require_sim

    require_sim()  # before SAPIEN is first imported in this worker
    from dataforge.manip.executor import Noise
    from dataforge.pipelines.robomme.env import FRONT_CAMERA, WRIST_CAMERA
    from dataforge.pipelines.robomme.episode import run_pass2

    spec = EpisodeSpec(**unit.params)
    assert cfg.noise_prob is not None  # RobommeConfig.__post_init__ fills it in
    noise = Noise(cfg.noise_prob, cfg.noise_scale) if cfg.noise == "waypoint" else Noise()
    # a released record names the seed that worked: generate exactly it, never another
    retries = 0 if cfg.episodes else cfg.max_retries
    run, filtered = run_pass1(spec, noise, max_retries=retries, recovery=cfg.noise == "upstream")
    if run is None:
        reasons = "; ".join(f"seed {f.seed}: {f.reason}" for f in filtered[:3])
        hint = "the released seed is kept as is" if cfg.episodes else "raise --max-retries"
        raise DataforgeError(
            f"{spec.task} episode {spec.episode}: every seed failed ({reasons}); {hint}"
        )
    frames = run_pass2(spec, run, (FRONT_CAMERA, WRIST_CAMERA), cfg.size)
    arrays, subgoals = drop_unrecorded(
        episode_arrays(run, frames, FRONT_CAMERA, WRIST_CAMERA), run.recording.subgoals
    )
    rec = run.recording
    yield Episode(
        id=unit.id,
        arrays=arrays,
        metadata={
            "task": spec.task,
            "suite": TASK_SUITES[spec.task],
            "episode": spec.episode,
            "seed": run.seed,
            "requested_seed": spec.seed,
            "difficulty": spec.difficulty,
            "split": cfg.split,
            "from_metadata": bool(cfg.episodes),
            "task_goal": run.goals,
            "steps": len(arrays["joint_action"]),
            "sim_steps": len(rec),
            "video_steps": int(arrays["is_video_demo"].sum()),
            "state_dim": int(rec.state[0].shape[0]),
            "subgoals": subgoals,
            "choices": choices(spec.task),
            "filtered": [f.to_dict() for f in filtered],
            "noise": {
                "mode": cfg.noise,
                "prob": cfg.noise_prob,
                "scale": cfg.noise_scale,
                "detours": rec.perturbed,
                "missed_grasp": run.missed_grasp,
            },
            "layout": run.layout,
        },
    )


def task_files(ds: Dataset) -> dict[str, Callable[[Path], None]]:
    """``record_dataset_<Task>.h5`` per task, episodes in index order (writers, not bytes)."""
    by_task: dict[str, list[str]] = {}
    for eid in ds.episode_ids:
        by_task.setdefault(ds[eid].metadata["task"], []).append(eid)

    def writer(ids: list[str]) -> Callable[[Path], None]:
        def write(path: Path) -> None:
            order = sorted(ids, key=lambda e: ds[e].metadata["episode"])
            write_task_file(path, (ds[e] for e in order))

        return write

    return {task_file(task): writer(ids) for task, ids in by_task.items()}


def build_job(cfg: RobommeConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    """The job of ``cfg``; with a ``metadata-dir`` input, exactly the released episodes of its
    metadata files (read and recorded). The simulator is checked before a real run."""
    from dataforge.pipelines.robomme.sim import require_sim

    inputs = inputs if inputs is not None else Inputs()
    if METADATA_DIR in inputs:
        specs = []
        for task in cfg.tasks:
            what = f"RoboMME's metadata of {task}"
            path = inputs.file(METADATA_DIR, metadata_file(Path(), task), what)
            specs += load_metadata(path.parent, task)[: cfg.episodes_per_task]
        cfg = cfg.with_(episodes=tuple(specs))
    tasks = sorted({s.task for s in episode_specs(cfg)})
    return Job(
        pipeline=PIPELINE,
        name=f"{PIPELINE}-{cfg.split}-{len(tasks)}tasks",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(cfg.size),
        units=tuple(units(cfg)),
        produce=functools.partial(produce, cfg),
        extra_files=task_files,
        description=f"RoboMME demonstrations ({cfg.split}) of {len(tasks)} tasks on ManiSkill, "
        "generated from keyframe waypoints by dataforge.",
        url="https://robomme.github.io/",
        citation=PAPER,
        inputs=inputs,
        preflight=require_sim,
    )
