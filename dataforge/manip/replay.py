"""Pass 2: replay saved env states through the cameras.

Physics and planning run first without rendering (pass 1, :mod:`dataforge.manip.executor`),
saving the env state before every action. Here a rendering env of the same scene takes each
state with ``set_state`` and captures its cameras: RGB, depth (int16 millimetres, as ManiSkill
gives it) and the camera's extrinsic (3 x 4, world -> OpenCV camera) per step.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class CameraFrames:
    rgb: np.ndarray  # (T, H, W, 3) uint8
    depth: np.ndarray  # (T, H, W, 1) int16, millimetres
    extrinsic: np.ndarray  # (T, 3, 4) float32
    intrinsic: np.ndarray  # (3, 3) float32
    # per-pixel ids of the scene's actors and links (SAPIEN's per_scene_id), for the steps asked
    segmentation: dict[int, np.ndarray] = field(default_factory=dict)


def _params(obs: dict[str, Any], cam: str) -> tuple[np.ndarray, np.ndarray]:
    p = obs["sensor_param"][cam]
    return (
        p["extrinsic_cv"][0].cpu().numpy().astype(np.float32),
        p["intrinsic_cv"][0].cpu().numpy().astype(np.float32),
    )


def render_states(
    env: Any,
    states: Sequence[np.ndarray] | np.ndarray,
    cameras: Sequence[str],
    *,
    segment: Collection[int] = (),
) -> dict[str, CameraFrames]:
    """Render every state of ``states`` (flat ManiSkill state vectors) with ``cameras``, and the
    first camera's segmentation (ids as ``env.segmentation_id_map``) at the indices ``segment``.

    ``env`` must hold the scene the states were saved from (the same actors, in the same order):
    reset it to the episode's seed first. A ManiSkill env splits a flat vector by the actors of
    the scene its constructor built, unless it takes that split again after each rebuild (as
    RoboMME's envs do)."""
    import torch

    base = env.unwrapped
    n = len(states)
    out: dict[str, dict[str, Any]] = {}
    for k in range(n):
        base.set_state(torch.as_tensor(np.asarray(states[k])[None], dtype=torch.float32))
        obs = base.get_obs(info={}, unflattened=True)
        for cam in cameras:
            data = obs["sensor_data"][cam]
            if cam not in out:
                rgb0 = data["rgb"][0]
                out[cam] = {
                    "rgb": np.empty((n, *rgb0.shape), np.uint8),
                    "depth": np.empty((n, *rgb0.shape[:2], 1), np.int16),
                    "extrinsic": np.empty((n, 3, 4), np.float32),
                }
                out[cam]["intrinsic"] = _params(obs, cam)[1]
            if k in segment and cam == cameras[0]:
                sensor = base._sensors[cam]  # captured by get_obs: fetch one more texture
                seg = sensor.get_obs(rgb=False, depth=False, position=False, segmentation=True)
                out[cam].setdefault("segmentation", {})[k] = (
                    seg["segmentation"][0, ..., 0].cpu().numpy().astype(np.int32)
                )
            out[cam]["rgb"][k] = data["rgb"][0].cpu().numpy()
            out[cam]["depth"][k] = data["depth"][0].cpu().numpy()
            out[cam]["extrinsic"][k] = _params(obs, cam)[0]
    return {cam: CameraFrames(**d) for cam, d in out.items()}
