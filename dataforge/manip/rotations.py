"""Quaternion (w, x, y, z) and roll-pitch-yaw conversions, batched over leading axes."""

from __future__ import annotations

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


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
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
