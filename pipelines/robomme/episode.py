"""One RoboMME episode: pass 1 (plan + physics, retrying on failure), pass 2 (cameras), and
the per-step arrays in RoboMME's fields.

As RoboMME's writer stores them, step k holds action k and the observation *after* it (cameras,
proprioception, ``is_completed``); the reset observation is not stored. ``is_completed`` turns
true at the first step at which the task's success check holds and stays true to the end of
that subgoal's motion, the episode's last step (RoboMME's harness finishes the running solve).
``env_state`` keeps every state (before each action, then the final one) for replays.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.manip.executor import Noise, Recording
from dataforge.manip.rotations import continuous_rpy
from dataforge.pipelines.robomme.seeds import EpisodeSpec

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from dataforge.manip.replay import CameraFrames
    from dataforge.pipelines.robomme.env import RobommeEnv


POINT = re.compile(r"[\[<](-?\d+), (-?\d+)[\]>]")  # a grounded pixel: [row, col] or <y, x>


@dataclass
class Filtered:
    seed: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "reason": self.reason}


@dataclass
class Pass1:
    """A successful pass 1: the seed that worked, the recording, the episode's texts and the
    actors (and articulations) its state vectors hold, in order."""

    seed: int
    recording: Recording
    goals: list[str]  # RoboMME's task_goal: every phrasing of the language goal
    layout: dict[str, Any]
    filtered: list[Filtered] = field(default_factory=list)
    state_keys: list[str] = field(default_factory=list)
    missed_grasp: dict[str, Any] | None = None  # RoboMME's recovery, when the episode has one


def jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        return round(float(value), 6)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


def noise_rng(seed: int) -> np.random.Generator:
    """The noise stream of an episode: a function of its seed alone."""
    return np.random.Generator(np.random.PCG64([seed, 0x6E6F697365]))


def run_pass1(
    spec: EpisodeSpec,
    noise: Noise,
    *,
    max_retries: int,
    max_steps: int = 6000,
    recovery: bool = False,
) -> tuple[Pass1 | None, list[Filtered]]:
    """Plan and simulate ``spec`` (physics only); on a planner or task failure try the next
    seed, up to ``max_retries`` times. Returns the kept run (or None) and the filtered seeds.
    With ``recovery``, RoboMME's missed grasp goes into the episodes its rule names
    (``recovery.py``)."""
    from dataforge.manip.executor import Executor, TaskFailed
    from dataforge.manip.planner import PlanningFailed
    from dataforge.pipelines.robomme.placement import PlacementError
    from dataforge.pipelines.robomme.recovery import (
        MissedGrasp,
        missed_grasp,
        recovery_mode,
        upstream_pick,
        with_missed_grasp,
    )
    from dataforge.pipelines.robomme.sim import shared_env

    filtered: list[Filtered] = []
    env = shared_env(spec.task, spec.difficulty, render=False)
    mode = recovery_mode(spec.task, spec.episode) if recovery else None
    with_recovery = mode is not None
    for retry in range(max_retries + 1):
        seed = spec.seed + retry
        base = env.unwrapped
        try:
            # a layout upstream cannot place fails the seed, as upstream's SceneGenerationError
            env.reset(seed=seed, options={"recovery": mode})
            ex = Executor(
                env,
                noise=noise,
                rng=noise_rng(seed),
                max_steps=max_steps,
                finish_subgoal=True,
                from_measured=True,  # as upstream's solver plans
            )
            miss: MissedGrasp | None = None
            kinds: list[str] = []
            if with_recovery:
                pick = upstream_pick(spec.task, seed, spec.difficulty)
                miss = missed_grasp(spec.task, spec.episode, seed, pick)
            rec = ex.run(with_missed_grasp(base.plan(), miss, kinds))
        except (PlanningFailed, TaskFailed, PlacementError) as exc:
            filtered.append(Filtered(seed, f"{type(exc).__name__}: {exc}"))
            continue
        kept = Pass1(
            seed,
            rec,
            base.goals(),
            jsonable(base.layout),
            filtered,
            base.state_keys(),
            miss.to_dict(kinds[0] if kinds else None) if miss else None,
        )
        return kept, filtered
    return None, filtered


def run_pass2(
    spec: EpisodeSpec, run: Pass1, cameras: Sequence[str], size: int
) -> dict[str, CameraFrames]:
    """Render the states after each of pass 1's actions through ``cameras`` (``size`` px) in
    this worker's rendering env.

    The reset to the kept seed (a retry's, when earlier seeds were filtered) rebuilds the
    rendering env's scene from that seed's layout, so it holds exactly the actors of pass 1's
    scene; checked before replaying, so a mismatch can never mis-assign states silently."""
    from dataforge.errors import DataforgeError
    from dataforge.manip.replay import render_states
    from dataforge.pipelines.robomme.env import FRONT_SIZE
    from dataforge.pipelines.robomme.sim import shared_env

    env = shared_env(spec.task, spec.difficulty, render=True, size=size)
    miss = run.missed_grasp
    env.reset(seed=run.seed, options={"recovery": miss["mode"] if miss else None})
    have = env.unwrapped.state_keys()
    if have != run.state_keys:
        raise DataforgeError(
            f"{spec.task} seed {run.seed}: the rendering env's scene holds {have}, "
            f"pass 1's held {run.state_keys}"
        )
    rec = run.recording
    firsts = {sg["start"] for sg in rec.subgoals if sg.get("segment")}
    assert rec.final_state is not None  # Executor.run sets it
    frames = render_states(env, [*rec.state[1:], rec.final_state], cameras, segment=firsts)
    ground_subgoals(
        rec.subgoals,
        frames[cameras[0]].segmentation,
        segment_ids(env.unwrapped),
        scale=size / FRONT_SIZE,  # task texts project into the 256 px camera
    )
    return frames


def segment_ids(env: RobommeEnv) -> dict[str, set[int]]:
    """Segmentation ids by name: an actor's own; an articulation's, all its links'; one link's
    as ``<articulation>/<link>`` (RoboMME's segments name a button's cap, a peg's link)."""
    ids: dict[str, set[int]] = {}
    for actor in env.scene.actors.values():
        ids.setdefault(actor.name, set()).add(int(actor._objs[0].per_scene_id))
    for art in env.scene.articulations.values():
        for key, link in art.links_map.items():
            link_id = int(link._objs[0].entity.per_scene_id)
            ids.setdefault(art.name, set()).add(link_id)
            ids[f"{art.name}/{key}"] = {link_id}
    return ids


def ground_subgoals(
    subgoals: list[dict[str, Any]],
    segmentation: dict[int, np.ndarray],
    ids: dict[str, set[int]],
    scale: float = 1.0,
) -> None:
    """RoboMME's grounded texts: each ``<row, col>`` of a subgoal that names its ``segment``
    actors becomes the integer mean row and column of that actor's pixels in the front camera
    at the subgoal's first step; where one is not in view, the text falls back to the simple
    one. Other pixels (projections of an actor's origin in the 256 px camera) are scaled by
    ``scale`` to the rendered size, and the first one is kept in ``point`` (``choice_action``
    names it). The text as planned stays in ``projected``: grounding again gives the same."""
    for sg in subgoals:
        planned = sg.setdefault("projected", sg["grounded"])
        matches = list(POINT.finditer(planned))
        scaled = [[round(int(m.group(1)) * scale), round(int(m.group(2)) * scale)] for m in matches]
        if scaled:
            sg["point"] = scaled[0]
        names = sg.get("segment") or []
        seg = segmentation.get(sg["start"]) if names else None
        pieces, last = [], 0
        for k, m in enumerate(matches):
            r, c = scaled[k]
            if seg is not None and k < len(names):
                rows, cols = np.nonzero(np.isin(seg, list(ids.get(names[k], ()))))
                if len(rows) == 0:  # out of view: RoboMME gives the simple text
                    break
                r, c = int(rows.mean()), int(cols.mean())
            pieces += [planned[last : m.start()], f"<{r}, {c}>"]
            last = m.end()
        else:
            sg["grounded"] = "".join(pieces) + planned[last:]
            continue
        sg["grounded"] = sg["simple"]


def choices(task: str) -> list[dict[str, Any]]:
    """RoboMME's multiple-choice options of ``task`` (``setup/available_multi_choices``):
    ``{"label", "action", "need_parameter"}`` with labels a, b, ... (from upstream's
    ``utils/vqa_options.py``; ``templates/robomme/multi_choice.json``)."""
    from importlib import resources

    path = resources.files("dataforge.templates") / "robomme" / "multi_choice.json"
    options = json.loads(path.read_text("utf-8"))[task]
    return [
        {"label": chr(ord("a") + k), "action": action, "need_parameter": need}
        for k, (action, need) in enumerate(options)
    ]


def step_subgoals(rec: Recording) -> tuple[np.ndarray, np.ndarray]:
    """Per step: the planner-view subgoal index and the online-view one: the entry the task's
    sequential check examined at that step (RoboMME's rule; the check's entries are the plan's
    recorded subgoals, in order; every task reports it, ``RobommeEnv.online_entry``)."""
    n = len(rec)
    planner = np.zeros(n, np.int16)
    for k, sg in enumerate(rec.subgoals):
        planner[sg["start"] : sg["end"]] = k
    online = planner.copy()
    checked = [k for k, sg in enumerate(rec.subgoals) if sg.get("record", True)]
    if len(rec.online) == n and checked:
        entry = np.clip(np.asarray(rec.online), 0, len(checked) - 1)
        online = np.asarray(checked, np.int16)[entry]
    return planner, online


# the per-step arrays of a stored episode (one row per recorded step)
STEP_FIELDS = (
    "front_rgb",
    "wrist_rgb",
    "front_depth",
    "wrist_depth",
    "joint_state",
    "eef_state",
    "gripper_state",
    "is_gripper_close",
    "front_camera_extrinsic",
    "wrist_camera_extrinsic",
    "joint_action",
    "eef_action",
    "waypoint_action",
    "is_video_demo",
    "is_subgoal_boundary",
    "is_completed",
    "subgoal",
    "subgoal_online",
    "eef_state_quat",
    "eef_action_quat",
    "choice_point",
)


def drop_unrecorded(
    arrays: dict[str, np.ndarray], subgoals: list[dict[str, Any]]
) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]]:
    """The arrays and subgoals without the steps of subgoals that are not recorded (RoboMME's
    "NO RECORD" restaging): per-step rows dropped, subgoal indices and spans renumbered,
    boundaries taken again; ``env_state`` keeps every simulated step."""
    kept = [k for k, sg in enumerate(subgoals) if sg.get("record", True)]
    if len(kept) == len(subgoals):
        return arrays, subgoals
    planner = arrays["subgoal"]
    keep = np.isin(planner, kept)
    new_at: np.ndarray = np.cumsum(keep) - keep  # each old step's index among the kept ones
    out = dict(arrays)
    for name in STEP_FIELDS:
        out[name] = arrays[name][keep]
    # an online view pointing at a dropped subgoal names the next recorded one
    renumber = np.searchsorted(kept, np.arange(len(subgoals)))
    renumber = np.minimum(renumber, len(kept) - 1).astype(np.int16)
    out["subgoal"] = renumber[planner[keep]]
    out["subgoal_online"] = renumber[arrays["subgoal_online"][keep]]
    out["is_subgoal_boundary"] = subgoal_boundaries(out["subgoal"], out["is_completed"])
    spans = []
    for k in kept:
        sg = dict(subgoals[k])
        n_steps = sg["end"] - sg["start"]
        start = int(new_at[sg["start"]]) if n_steps else int(keep[: sg["start"]].sum())
        sg["end"] = start + (sg["end"] - sg["start"])
        sg["start"] = start
        spans.append(sg)
    return out, spans


def subgoal_boundaries(planner: np.ndarray, completed: np.ndarray) -> np.ndarray:
    """RoboMME's ``is_subgoal_boundary``: true where the writer's task index changes
    (``RecordWrapper.py:876-887``): the first step, each step that starts a new subgoal, and the
    first completed step (the index moves past the task list, ``RecordWrapper.py:57-71``)."""
    boundary = np.ones(len(planner), bool)
    boundary[1:] = planner[1:] != planner[:-1]
    done = np.asarray(completed, bool)
    boundary[1:] |= done[1:] & ~done[:-1]
    return boundary


def aligned_quats(quat: np.ndarray, dtype: DTypeLike) -> np.ndarray:
    """(n, 4) wxyz as RoboMME's writer stores them (``rpy_util.build_endeffector_pose_dict``):
    in ``dtype``, normalised (the unit quaternion where that fails), each one's sign flipped
    when its dot product with the previous stored one is negative."""
    q = np.asarray(quat, dtype=dtype).copy()
    norm = np.linalg.norm(q, axis=1, keepdims=True)
    ok = np.isfinite(q).all(1, keepdims=True) & np.isfinite(norm) & (norm > 1e-12)
    q = np.where(ok, q / np.where(ok, norm, 1), np.array([1, 0, 0, 0], dtype=dtype))
    for t in range(1, len(q)):
        if np.dot(q[t], q[t - 1]) < 0:
            q[t] = -q[t]
    return q.astype(dtype)


GRIPPER_CLOSED_M = 0.03  # RoboMME: the gripper is "closed" when a finger is nearer than this


def keyframe_rpy(quat: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw of one keyframe quaternion (wxyz) as RoboMME's writer converts a
    waypoint (``RobommeRecordWrapper._refresh_pending_waypoint`` -> ``rpy_util``): the
    quaternion as float32, normalised in float32, scipy's extrinsic "xyz" Euler angles (each in
    [-pi, pi], so a top-down keyframe's roll is +pi or -pi by the quaternion's sign and its
    last bits), as float32. Nothing is unwrapped: the writer's continuity cache holds the
    end-effector's batched (1, 4) quaternion, whose shape a single (4,) keyframe never matches,
    so a keyframe is converted on its own."""
    import torch
    from scipy.spatial.transform import Rotation

    q = torch.as_tensor(np.asarray(quat, dtype=np.float32))
    norm = torch.linalg.norm(q)
    if not (torch.isfinite(q).all() and torch.isfinite(norm) and norm > 1e-12):
        q = torch.tensor([1.0, 0.0, 0.0, 0.0])  # the writer's fallback
    else:
        q = q / norm
    w, x, y, z = q.numpy()
    rpy = Rotation.from_quat(np.array([x, y, z, w])).as_euler("xyz", degrees=False)
    return rpy.astype(np.float32)


def waypoint_rows(waypoint: np.ndarray) -> np.ndarray:
    """RoboMME's ``waypoint_action`` rows [x, y, z, roll, pitch, yaw, gripper] from the
    recorded keyframes [p, wxyz, gripper] (NaN rows stay NaN), as its writer stores them: the
    position as float32, the angles by :func:`keyframe_rpy`, the gripper flag (1 "open", -1
    "close") as recorded."""
    out = np.full((len(waypoint), 7), np.nan)
    for t in range(len(waypoint)):
        row = waypoint[t]
        if np.isnan(row[0]):
            continue
        if t > 0 and np.array_equal(row, waypoint[t - 1]):
            out[t] = out[t - 1]
            continue
        p = np.asarray(row[:3], dtype=np.float32)
        out[t] = np.concatenate([p, keyframe_rpy(row[3:7]), row[7:]])
    return out


def episode_arrays(
    run: Pass1, frames: dict[str, CameraFrames], front: str, wrist: str
) -> dict[str, np.ndarray]:
    """The stored arrays of one episode (RoboMME's obs/action/info fields, step-major)."""
    rec = run.recording
    qpos = np.asarray(rec.qpos, dtype=np.float64)
    # the finger joints; RoboMME writes zeros for its gripperless stick robot (7 joints)
    fingers = qpos[:, 7:9] if qpos.shape[1] > 7 else np.zeros((len(qpos), 2))
    tcp = np.asarray(rec.tcp, dtype=np.float64)
    eef_rpy = continuous_rpy(tcp[:, 3:])
    eef = np.asarray(rec.eef_action, dtype=np.float64)
    # the FK pose goes through a float32 ``sapien.Pose`` upstream (RecordWrapper.py:623-631)
    eef[:, :7] = eef[:, :7].astype(np.float32)
    eef_quat = aligned_quats(eef[:, 3:7], np.float64)
    planner, online = step_subgoals(rec)
    completed = np.asarray(rec.success, dtype=bool)
    state = np.asarray([*rec.state, rec.final_state], dtype=np.float32)
    return {
        "front_rgb": frames[front].rgb,
        "wrist_rgb": frames[wrist].rgb,
        "front_depth": frames[front].depth,
        "wrist_depth": frames[wrist].depth,
        "joint_state": qpos[:, :7].astype(np.float32),
        "eef_state": np.concatenate([tcp[:, :3], eef_rpy], 1).astype(np.float32),
        "gripper_state": fingers.astype(np.float32),
        "is_gripper_close": np.any(fingers < GRIPPER_CLOSED_M, axis=1),
        "front_camera_extrinsic": frames[front].extrinsic,
        "wrist_camera_extrinsic": frames[wrist].extrinsic,
        "joint_action": np.asarray(rec.joint_action, dtype=np.float64),
        "eef_action": np.concatenate([eef[:, :3], continuous_rpy(eef_quat), eef[:, 7:]], 1),
        "waypoint_action": waypoint_rows(np.asarray(rec.waypoint_action)),
        "is_video_demo": np.asarray(rec.video, dtype=bool),
        "is_subgoal_boundary": subgoal_boundaries(planner, completed),
        "is_completed": completed,
        "subgoal": planner,
        "subgoal_online": online,
        "eef_state_quat": aligned_quats(tcp[:, 3:], np.float32),
        "eef_action_quat": eef_quat,
        "choice_point": choice_points(
            anchors(rec),
            frames[front].intrinsic,
            frames[front].extrinsic,
            frames[front].rgb.shape[1:3],
        ),
        "env_state": state.reshape(-1),
        "front_camera_intrinsic": frames[front].intrinsic,
        "wrist_camera_intrinsic": frames[wrist].intrinsic,
    }


def anchors(rec: Recording) -> np.ndarray:
    """(n, 3) per step: the subgoal's anchor point after the step (NaN when none; recordings
    made before anchors were recorded: all NaN)."""
    if len(rec.anchor) != len(rec):
        return np.full((len(rec), 3), np.nan)
    return np.asarray(rec.anchor, dtype=np.float64).reshape(len(rec), 3)


def _project(
    point: np.ndarray, k: np.ndarray, ext: np.ndarray, hw: tuple[int, int]
) -> tuple[int, int] | None:
    cam = ext @ np.append(point, 1.0)
    z = float(cam[2])
    if not np.isfinite(z) or z <= 1e-8:
        return None
    uvw = k @ cam
    x, y = float(uvw[0] / z), float(uvw[1] / z)
    if not (np.isfinite(x) and np.isfinite(y)):
        return None
    px, py = int(np.rint(x)), int(np.rint(y))
    return (py, px) if 0 <= px < hw[1] and 0 <= py < hw[0] else None


def choice_points(
    points: np.ndarray, intrinsic: np.ndarray, extrinsic: np.ndarray, hw: Sequence[int]
) -> np.ndarray:
    """(n, 2) int16 [row, col] per step: each step's anchor projected into the front camera as
    RoboMME's writer projects the ``choice_action`` point (``choice_action_mapping.py::
    project_world_to_pixel``, ``RecordWrapper.py:717-751``): float64, OpenCV world-to-camera
    extrinsic, rounded half to even, [-1, -1] when there is no anchor, it lies behind the
    camera or outside the image; where the first projection fails, the writer tries the
    extrinsic inverted (as camera-to-world) once more."""
    k = np.asarray(intrinsic, dtype=np.float64).reshape(3, 3)
    hw = (int(hw[0]), int(hw[1]))
    out = np.full((len(points), 2), -1, dtype=np.int16)
    for t, point in enumerate(np.asarray(points, dtype=np.float64)):
        if not np.isfinite(point).all():
            continue
        ext = np.asarray(extrinsic[t], dtype=np.float64).reshape(3, 4)
        pixel = _project(point, k, ext, hw)
        if pixel is None:
            full = np.eye(4)
            full[:3] = ext
            with contextlib.suppress(np.linalg.LinAlgError):
                pixel = _project(point, k, np.linalg.inv(full)[:3], hw)
        if pixel is not None:
            out[t] = pixel
    return out


def choice_action(sg: dict[str, Any], options: list[dict[str, Any]], point: Any = None) -> str:
    """RoboMME's ``choice_action`` JSON for a step in subgoal ``sg``: the upper-case label of the
    option its ``choice`` names ("" when none) and the pixel [row, col] of the subgoal's anchor
    at that step (``point``: a ``choice_points`` row, [-1, -1] giving []); without ``point``
    (datasets written before it was stored) the grounded text's first pixel, [] for none."""
    if point is not None:
        point = [int(v) for v in point] if int(point[0]) >= 0 else []
    elif "point" in sg:
        point = sg["point"]
    else:
        m = POINT.search(sg["grounded"])
        point = [int(m.group(1)), int(m.group(2))] if m else []
    label = next((o["label"] for o in options if o["action"] == sg.get("choice")), "")
    return json.dumps({"choice": label.upper(), "point": point})


def multi_choices(options: list[dict[str, Any]]) -> str:
    return json.dumps(options)
