"""Quaternion (w, x, y, z) and roll-pitch-yaw conversions, batched over leading axes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def quat_to_rpy(q: np.ndarray) -> np.ndarray:
    """(..., 4) wxyz -> (..., 3) roll, pitch, yaw (extrinsic xyz, as transforms3d's 'sxyz')."""
    q = np.asarray(q, dtype=np.float64)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)


def rpy_to_quat(rpy: np.ndarray) -> np.ndarray:
    """(..., 3) roll, pitch, yaw -> (..., 4) wxyz; the inverse of :func:`quat_to_rpy`."""
    rpy = np.asarray(rpy, dtype=np.float64)
    cr, sr = np.cos(rpy[..., 0] / 2), np.sin(rpy[..., 0] / 2)
    cp, sp = np.cos(rpy[..., 1] / 2), np.sin(rpy[..., 1] / 2)
    cy, sy = np.cos(rpy[..., 2] / 2), np.sin(rpy[..., 2] / 2)
    return np.stack(
        [
            cr * cp * cy + sr * sp * sy,
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
        ],
        axis=-1,
    )


def yaw_quat(yaw: float) -> np.ndarray:
    """Rotation about +z by ``yaw`` as wxyz."""
    return np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])


def quat_mul(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> np.ndarray:
    """Hamilton product of wxyz quaternions."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def continuous_rpy(q: np.ndarray) -> np.ndarray:
    """(n, 4) wxyz over time -> (n, 3) roll, pitch, yaw made continuous: each step's change
    folded into (-pi, pi] and accumulated from the first value, so the angles never jump by
    2 pi (RoboMME's recorded end-effector states and actions)."""
    rpy = quat_to_rpy(q)
    if len(rpy) < 2:
        return rpy
    step = np.diff(rpy, axis=0)
    step = step - 2 * np.pi * np.ceil((step - np.pi) / (2 * np.pi))  # into (-pi, pi]
    return np.concatenate([rpy[:1], rpy[:1] + np.cumsum(step, axis=0)])


def nearest_rpy(rpy: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``rpy`` shifted by whole turns, per angle, to within (-pi, pi] of ``reference``."""
    d = np.asarray(rpy, dtype=np.float64) - reference
    return reference + d - 2 * np.pi * np.ceil((d - np.pi) / (2 * np.pi))
