"""Small value types shared by the world modules (AI2-THOR frame: metres, y up)."""

from __future__ import annotations

from typing import Any

Vec3 = tuple[float, float, float]
XZ = tuple[float, float]
RGB = tuple[float, float, float]


def vec3(values: Any) -> Vec3:
    """Three numbers (a list, tuple or array) as a tuple of floats."""
    x, y, z = values
    return (float(x), float(y), float(z))
