"""Sampling tabletop layouts: positions in the robot's workspace that keep a clearance."""

from __future__ import annotations

import numpy as np

from dataforge.errors import DataforgeError

X_RANGE = (-0.18, 0.14)  # metres along the table, in front of the robot base (x = -0.615)
Y_RANGE = (-0.28, 0.28)


class LayoutImpossible(DataforgeError):
    """No arrangement with the required clearances was found."""


def sample_positions(
    rng: np.random.Generator,
    n: int,
    clearance: float,
    *,
    x: tuple[float, float] = X_RANGE,
    y: tuple[float, float] = Y_RANGE,
    avoid: list[np.ndarray] | None = None,
    tries: int = 2000,
) -> list[np.ndarray]:
    """``n`` xy points at least ``clearance`` apart (and from every point in ``avoid``)."""
    placed: list[np.ndarray] = []
    fixed = [np.asarray(a, dtype=np.float64)[:2] for a in (avoid or [])]
    for _ in range(tries):
        if len(placed) == n:
            return placed
        p = np.array([rng.uniform(*x), rng.uniform(*y)])
        if all(np.hypot(*(p - q)) >= clearance for q in placed + fixed):
            placed.append(p)
    if len(placed) == n:
        return placed
    raise LayoutImpossible(f"cannot place {n} objects {clearance} m apart in the workspace")


def yaw(rng: np.random.Generator) -> float:
    return float(rng.uniform(-np.pi / 4, np.pi / 4))
