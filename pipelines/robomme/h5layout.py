"""RoboMME's released HDF5 layout (``record_dataset_<Task>.h5``; see RoboMME's
``h5_data_format.md``), written from the stored episodes of one task.

``episode_<k>/setup/{seed, difficulty, task_goal, available_multi_choices,
[fail_recover_mode, fail_recover_seed_anchor, fail_recover_xy_signs,
fail_recover_xy_signed_offset], front_camera_intrinsic,
wrist_camera_intrinsic}`` and ``episode_<k>/timestep_<t>/{obs, action, info}/...``, with ``k``
the 0-based metadata episode and ``t`` counting from 0, as RoboMME's writer
(``env_record_wrapper/RecordWrapper.py``) stores them and its replay tool reads them
(``h5_data_format.md`` says 1-based: the writer and the released files are 0-based). Dtypes as
the writer's: images uint8, depth int16 mm, states float32, joint/EEF/waypoint actions float64
(a waypoint not yet set is NaN x 7 float32), flags bool, subgoal texts variable-length bytes
(h5py's ascii strings: the writer passes ``str.encode()``), ``choice_action`` a JSON string.
``obs/eef_state_raw/{pose, quat, rpy}`` (float32) and ``action/eef_action_raw/{pose, quat,
rpy}`` (float64) are the pieces ``eef_state`` / ``eef_action`` are made of, plus the
quaternion (wxyz, normalised, sign-continuous). Images are stored uncompressed as upstream's;
``compress=True`` gzips them (level 1, lossless: readers see the same values).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import h5py
import numpy as np

from dataforge.pipelines.robomme.episode import choice_action, multi_choices
from dataforge.pipelines.robomme.suites import STICK_TASKS

if TYPE_CHECKING:
    from dataforge.store.reader import StoredEpisode


OBS_FIELDS = (
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
)
ACTION_FIELDS = ("joint_action", "eef_action", "waypoint_action")  # + choice_action (text)
INFO_FLAGS = ("is_video_demo", "is_subgoal_boundary", "is_completed")
SUBGOAL_TEXTS = (
    "simple_subgoal",
    "simple_subgoal_online",
    "grounded_subgoal",
    "grounded_subgoal_online",
)
IMAGES = {"front_rgb", "wrist_rgb", "front_depth", "wrist_depth"}
RAW = ("pose", "quat", "rpy")  # eef_state_raw / eef_action_raw
# RoboMME's planner-view subgoal once the last check has passed (subgoal_evaluate_func.py)
DONE_TEXT = b"All tasks completed"


def task_file(task: str) -> str:
    return f"record_dataset_{task}.h5"


def _scalar(group: h5py.Group, name: str, value: Any) -> None:
    group.create_dataset(name, data=value, track_times=False)


def _raw(group: h5py.Group, name: str, pose_rpy: np.ndarray, quat: np.ndarray) -> None:
    raw = group.create_group(name)
    parts = {"pose": pose_rpy[:3], "quat": quat, "rpy": pose_rpy[3:6]}
    for key in RAW:
        _scalar(raw, key, parts[key])


def _recovery(setup: h5py.Group, meta: dict[str, Any]) -> None:
    """RoboMME's ``setup/fail_recover_*`` of an episode with a missed grasp (absent otherwise):
    the mode ("z" / "xy", UTF-8 string), the seed anchor (the episode seed, int64) and, for
    "xy", the signs (int32 x 2) and the signed offset (float32 x 2)
    (``RecordWrapper.py:1327-1362``)."""
    miss = (meta.get("noise") or {}).get("missed_grasp")
    if not miss:
        return
    setup.create_dataset(
        "fail_recover_mode",
        data=str(miss["mode"]),
        dtype=h5py.string_dtype(encoding="utf-8"),
        track_times=False,
    )
    _scalar(setup, "fail_recover_seed_anchor", np.int64(meta["seed"]))
    if miss["mode"] == "xy":
        _scalar(setup, "fail_recover_xy_signs", np.asarray(miss["direction"][:2], np.int32))
        if "offset" in miss:  # xy_offset (float32) x signs (subgoal_planner_func.py:912-921)
            _scalar(setup, "fail_recover_xy_signed_offset", np.float32(miss["offset"][:2]))


def write_episode(f: h5py.File, ep: StoredEpisode, *, compress: bool = False) -> None:
    """Write one stored episode (``dataforge.store`` StoredEpisode) as ``episode_<k>``; with
    ``compress``, images gzipped (the same values)."""
    meta = ep.metadata
    arrays = {name: ep[name].read() for name in ep}
    g = f.create_group(f"episode_{meta['episode']}", track_order=True)
    setup = g.create_group("setup")
    _scalar(setup, "seed", np.int64(meta["seed"]))
    _scalar(setup, "difficulty", meta["difficulty"])
    setup.create_dataset(
        "task_goal", data=np.array(meta["task_goal"], dtype=h5py.string_dtype()), track_times=False
    )
    for cam in ("front", "wrist"):
        _scalar(setup, f"{cam}_camera_intrinsic", arrays[f"{cam}_camera_intrinsic"])
    _scalar(setup, "available_multi_choices", multi_choices(meta["choices"]))
    _recovery(setup, meta)
    subgoals = meta["subgoals"]
    texts = {
        "simple_subgoal": [sg["simple"].encode() for sg in subgoals],
        "grounded_subgoal": [sg["grounded"].encode() for sg in subgoals],
    }
    points = arrays.get("choice_point")  # absent from datasets written before it was stored
    choice = [choice_action(sg, meta["choices"]) for sg in subgoals]
    planner, online = arrays["subgoal"], arrays["subgoal_online"]
    if meta["task"] in STICK_TASKS:  # RoboMME writes the stick robot's fingers as np.zeros(2)
        arrays["gripper_state"] = arrays["gripper_state"].astype(np.float64)
    for t in range(len(planner)):
        step = g.create_group(f"timestep_{t}", track_order=True)
        obs = step.create_group("obs")
        for name in OBS_FIELDS:
            value = arrays[name][t]
            if name in IMAGES and compress:
                obs.create_dataset(
                    name,
                    data=value,
                    chunks=value.shape,
                    compression="gzip",
                    compression_opts=1,
                    track_times=False,
                )
            else:
                _scalar(obs, name, value)
        _raw(obs, "eef_state_raw", arrays["eef_state"][t], arrays["eef_state_quat"][t])
        act = step.create_group("action")
        for name in ACTION_FIELDS:
            value = arrays[name][t]
            if np.isnan(value).all():
                value = value.astype(np.float32)  # RoboMME's "no waypoint yet"
            _scalar(act, name, value)
            if name == "joint_action":
                _raw(act, "eef_action_raw", arrays["eef_action"][t], arrays["eef_action_quat"][t])
        if points is None:
            _scalar(act, "choice_action", choice[planner[t]])
        else:
            sg = subgoals[planner[t]]
            _scalar(act, "choice_action", choice_action(sg, meta["choices"], points[t]))
        info = step.create_group("info")
        simple = DONE_TEXT if arrays["is_completed"][t] else texts["simple_subgoal"][planner[t]]
        # bytes, as the writer passes them: h5py stores variable-length ascii strings
        _scalar(info, "simple_subgoal", simple)
        _scalar(info, "simple_subgoal_online", texts["simple_subgoal"][online[t]])
        _scalar(info, "grounded_subgoal", texts["grounded_subgoal"][planner[t]])
        _scalar(info, "grounded_subgoal_online", texts["grounded_subgoal"][online[t]])
        for name in INFO_FLAGS:
            _scalar(info, name, np.bool_(arrays[name][t]))


def write_task_file(
    path: Path, episodes: Iterable[StoredEpisode], *, compress: bool = False
) -> None:
    """Write ``path`` with ``episodes`` (in the order given); ``compress``: gzip the images."""
    with h5py.File(path, "w", libver=("v110", "v110"), track_order=True) as f:
        for ep in episodes:
            write_episode(f, ep, compress=compress)
