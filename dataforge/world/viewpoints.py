"""Cameras around a point of interest: azimuths x heights, on navigable positions.

:func:`orbit_viewpoints` puts a camera at each azimuth (0 degrees = the point's +z side, 90 =
its +x side, as AI2-THOR's yaw turns) and each height above the floor, ``radius`` metres from
the point in plan view, looking at the point. A camera stands where the agent could: its
position must be navigable for the agent (:class:`~dataforge.nav.grid.NavGrid`, obstacles grown
by the agent's radius, so never inside a wall or furniture), in the component of the agent's
start, and see the point without a wall in between (plan-view test against the walls' planes;
door and window holes are ignored, which is conservative). When the ideal position on an
azimuth's bearing fails, the nearest distance on the same bearing within ``[min_radius,
max_radius]`` that passes is taken (``on_bearing`` True, ``radius`` the distance used); when none
does, the bearing turns by 5, 10, ... up to 90 degrees either way (nearest turn first) to a
position that passes and is at least ``MIN_SEPARATION_M`` from the cameras of earlier azimuths
(``on_bearing`` False); failing that, the navigable position nearest to the ideal one that sees
the point; when none sees it, the nearest navigable position (``sees_target`` False). Every
viewpoint records what it is (its position gives the bearing it was moved to).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from shapely.geometry import LineString

from dataforge.world.house import House

AZIMUTHS_8 = tuple(float(a) for a in range(0, 360, 45))
RADIUS_STEP_M = 0.05
# A blocked bearing turns by these angles (nearest first) to a free one, keeping cameras of
# different azimuths at least MIN_SEPARATION_M apart so that they do not all collapse onto the
# one free spot in front of an object against a wall.
TURNS_DEG = tuple(t for k in range(1, 19) for t in (5.0 * k, -5.0 * k))
MIN_SEPARATION_M = 0.3
MAX_HORIZON_DEG = 89.0


@dataclass(frozen=True)
class Viewpoint:
    """One camera: AI2-THOR-style pose (position, yaw, horizon > 0 looking down) and how it was
    found."""

    azimuth_deg: float
    height_name: str
    position: tuple[float, float, float]
    yaw_deg: float
    horizon_deg: float
    radius_m: float  # plan-view distance from the target
    on_bearing: bool  # on the azimuth's bearing (else the nearest usable position)
    sees_target: bool  # no wall between the camera and the target in plan view

    def to_dict(self) -> dict[str, Any]:
        return {
            "azimuth_deg": self.azimuth_deg,
            "height": self.height_name,
            "position": list(self.position),
            "yaw_deg": self.yaw_deg,
            "horizon_deg": self.horizon_deg,
            "radius_m": self.radius_m,
            "on_bearing": self.on_bearing,
            "sees_target": self.sees_target,
        }


class WallSight:
    """Plan-view line of sight against a house's wall planes (standing walls only: an
    ``empty`` wall, ProcTHOR's open boundary between rooms, is neither drawn nor an obstacle)."""

    def __init__(self, house: House) -> None:
        lines = [
            LineString([w.start, w.end])
            for w in house.walls
            if w.length > 0 and w.height > 0 and not w.empty
        ]
        self._tree = shapely.STRtree(lines)
        self._lines = lines

    def clear(self, a: Sequence[float], b: Sequence[float]) -> bool:
        """No wall crosses the segment from ``a`` to ``b`` (plan-view x, z)."""
        seg = LineString([(a[0], a[1]), (b[0], b[1])])
        hits = self._tree.query(seg, predicate="intersects")
        return len(hits) == 0


def look_at_angles(eye: Sequence[float], target: Sequence[float]) -> tuple[float, float]:
    """(yaw, horizon) in degrees of a camera at ``eye`` looking at ``target`` (AI2-THOR
    conventions: yaw 0 faces +z, 90 faces +x; horizon > 0 looks down)."""
    dx, dy, dz = (float(t) - float(e) for e, t in zip(eye, target, strict=True))
    yaw = math.degrees(math.atan2(dx, dz)) % 360.0
    horizon = math.degrees(math.atan2(-dy, math.hypot(dx, dz)))
    return yaw, max(-MAX_HORIZON_DEG, min(MAX_HORIZON_DEG, horizon))


def orbit_viewpoints(
    grid: Any,
    sight: WallSight,
    target: Sequence[float],
    *,
    floor_y: float,
    heights: Mapping[str, float],
    azimuths: Sequence[float] = AZIMUTHS_8,
    radius: float = 1.5,
    min_radius: float = 0.5,
    max_radius: float = 3.0,
    component: int | None = None,
) -> list[Viewpoint]:
    """Viewpoints azimuth-major (for each azimuth, each height in ``heights`` order) around
    ``target`` (see the module docstring). ``component``: the grid component cameras must be
    in (default: the largest)."""
    tx, ty, tz = (float(v) for v in target)
    labels = grid.components()
    comp = grid.largest_component() if component is None else component

    def usable(x: float, z: float) -> bool:
        c = grid.cell_of((x, 0.0, z))
        return grid.inside(c) and bool(grid.free[c]) and int(labels[c]) == comp

    steps = round((max_radius - min_radius) / RADIUS_STEP_M)
    distances = sorted(
        (min_radius + k * RADIUS_STEP_M for k in range(steps + 1)),
        key=lambda d: (abs(d - radius), d),
    )
    cells = None
    taken: list[tuple[float, float]] = []

    def search(az: float, apart: bool) -> tuple[float, float, float] | None:
        s, c = math.sin(math.radians(az)), math.cos(math.radians(az))
        for d in distances:
            x, z = tx + d * s, tz + d * c
            if not usable(x, z):
                continue
            if apart and any(math.hypot(x - a, z - b) < MIN_SEPARATION_M for a, b in taken):
                continue
            if sight.clear((tx, tz), (x, z)):
                return x, z, d
        return None

    out: list[Viewpoint] = []
    for az in azimuths:
        hit = search(az, apart=False)
        found = None if hit is None else (*hit, True, True)
        for turn in () if found is not None else TURNS_DEG:
            hit = search(az + turn, apart=True)
            if hit is not None:
                found = (*hit, False, True)
                break
        if found is None:
            if cells is None:
                ii, jj = np.nonzero((labels == comp) & grid.free)
                cells = np.stack(
                    [
                        grid.origin[0] + (jj + 0.5) * grid.cell,
                        grid.origin[1] + (ii + 0.5) * grid.cell,
                    ],
                    axis=1,
                )
            s, c = math.sin(math.radians(az)), math.cos(math.radians(az))
            ideal = (tx + radius * s, tz + radius * c)
            found = _nearest(cells, sight, (tx, tz), ideal, min_radius, taken)
        x, z, d, on_bearing, sees = found
        taken.append((x, z))
        for name, h in heights.items():
            eye = (round(x, 6), round(floor_y + h, 6), round(z, 6))
            yaw, horizon = look_at_angles(eye, (tx, ty, tz))
            out.append(
                Viewpoint(
                    float(az),
                    name,
                    eye,
                    round(yaw, 6),
                    round(horizon, 6),
                    round(d, 6),
                    on_bearing,
                    sees,
                )
            )
    return out


def _nearest(
    cells: np.ndarray,
    sight: WallSight,
    target: tuple[float, float],
    ideal: tuple[float, float],
    min_radius: float,
    taken: list[tuple[float, float]],
) -> tuple[float, float, float, bool, bool]:
    """The cell nearest to ``ideal`` that sees the target from at least ``min_radius``, away
    from the cameras already ``taken`` if possible."""
    if len(cells) == 0:
        raise ValueError("no navigable position to put a camera on")
    order = np.argsort(np.hypot(cells[:, 0] - ideal[0], cells[:, 1] - ideal[1]), kind="stable")
    dist = np.hypot(cells[:, 0] - target[0], cells[:, 1] - target[1])
    for apart in (True, False):
        for k in order[:4000]:
            x, z = (float(v) for v in cells[k])
            if apart and any(math.hypot(x - a, z - b) < MIN_SEPARATION_M for a, b in taken):
                continue
            if dist[k] >= min_radius and sight.clear(target, (x, z)):
                return x, z, float(dist[k]), False, True
    x, z = (float(v) for v in cells[order[0]])
    return x, z, float(dist[order[0]]), False, False
