"""SpaMEM's multi-view capture (§8.4): 8 azimuths x 2 heights around the target of an action.

The cameras stand on navigable positions (:func:`dataforge.world.viewpoints.orbit_viewpoints`)
``camera_radius`` metres from the target in plan view, at AI2-THOR's standing and crouching
camera heights, looking at the target. The paper gives no heights, radius, pitch or field of
view (spec notes); the choices, recorded in every episode:

- heights: the default AI2-THOR agent's camera is 0.675 m above the agent's centre when
  standing and at the centre when crouching (Unity ``BaseFPSAgentController``: crouching
  camera = standing camera - 0.675 m), and the centre is 0.901 m above the floor (the agent's
  ``position.y`` on a floor at 0): 1.576 m and 0.901 m;
- radius 1.5 m, AI2-THOR's default interaction (visibility) distance; pitch: looking at the
  target's centre; field of view: AI2-THOR's default 90 degrees (vertical).

A rendered candidate whose image is more than ``MAX_CLOSE_SHARE`` closer than ``CLOSE_M`` (a
camera against a wall, a door leaf or furniture) is redrawn at the next candidate position
(:func:`~dataforge.world.viewpoints.orbit_viewpoints`); when every candidate fails the first is
kept and its views marked unusable (``usable`` 0), so every state keeps its views.

Per view it stores RGB, depth (uint16 millimetres, 0 = nothing), instance and semantic ids
(uint16), the camera-to-world pose, the 2D boxes of the instances in the mask and a ``view``
row (``VIEW_COLUMNS``): the nominal azimuth (the view's slot), the camera's real height above
the floor and real bearing from the target in plan view (``atan2(x - target x, z - target z)``
in degrees, 0 = +z, 90 = +x, as the azimuths), how it was found and whether it is usable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import DataforgeError
from dataforge.render.camera import thor_camera_pose
from dataforge.render.masks import mask_boxes
from dataforge.render.renderer import StoredFrames
from dataforge.world.viewpoints import Viewpoint, WallSight, orbit_viewpoints

if TYPE_CHECKING:
    from dataforge.nav.grid import NavGrid
    from dataforge.simulators.protocol import HouseBackend

CAMERA_HEIGHTS_M = {"standing": 1.576, "crouching": 0.901}
VIEW_COLUMNS = (
    "azimuth_deg",
    "camera_height_m",
    "radius_m",
    "on_bearing",
    "sees_target",
    "target_x",
    "target_y",
    "target_z",
    "bearing_deg",
    "usable",
)
CLOSE_M = 0.2  # a pixel nearer than this (and not background) is "against" the camera
CLOSE_MM = round(CLOSE_M * 1000)  # the same in stored depth (a pixel under 199.5 mm)
MAX_CLOSE_SHARE = 1.0 / 3.0  # more close pixels than this: the view is redrawn


@dataclass(frozen=True)
class CaptureSettings:
    width: int
    height: int
    fov: float
    views: int  # azimuths x len(heights)
    radius: float
    heights: tuple[tuple[str, float], ...] = tuple(CAMERA_HEIGHTS_M.items())

    @property
    def azimuths(self) -> tuple[float, ...]:
        n = self.views // len(self.heights)
        return tuple(360.0 * k / n for k in range(n))

    def to_dict(self) -> dict[str, Any]:
        return {
            "resolution": [self.width, self.height],
            "vfov_deg": self.fov,
            "views": self.views,
            "azimuths_deg": list(self.azimuths),
            "heights_m": dict(self.heights),
            "radius_m": self.radius,
            "search_radius_m": [0.5, 3.0],
            "pitch": "looking at the target's centre",
            "order": "azimuth-major: view = azimuth index * heights + height index",
        }


class ViewBuffer:
    """The per-view arrays of a whole sequence, written in place as views are rendered.

    Allocated for the most states a sequence can have; pages are only touched as rows are
    written, and :meth:`arrays` hands out the written rows without copying, so a sequence's
    images exist once in memory (a 25-step sequence at 640x480 is 1.15 GB raw). Renderers
    write a state's first candidates straight into their rows (``frames``); a redrawn
    candidate goes to ``scratch`` and is copied to its rows when it is kept."""

    def __init__(self, rows: int, width: int, height: int, heights: int = 2) -> None:
        self.frames = StoredFrames.empty(rows, width, height)
        self.scratch = StoredFrames.empty(heights, width, height)
        self.pose = np.empty((rows, 4, 4), np.float32)
        self.view = np.empty((rows, len(VIEW_COLUMNS)), np.float32)
        self.n = 0

    @property
    def rgb(self) -> np.ndarray:
        return self.frames.rgb

    @property
    def depth(self) -> np.ndarray:
        return self.frames.depth

    @property
    def instance(self) -> np.ndarray:
        return self.frames.instance

    @property
    def semantic(self) -> np.ndarray:
        return self.frames.semantic

    def arrays(self) -> dict[str, np.ndarray]:
        n = self.n
        return {
            "rgb": self.rgb[:n],
            "depth": self.depth[:n],
            "instance": self.instance[:n],
            "semantic": self.semantic[:n],
            "pose": self.pose[:n],
            "view": self.view[:n],
        }


@dataclass
class Capture:
    """What one captured state adds besides its images (those go to the :class:`ViewBuffer`)."""

    boxes: list[np.ndarray]  # per view (K, 6): instance, x0, y0, x1, y1, pixels
    viewpoints: list[Viewpoint]


def close_share(depth_mm: np.ndarray) -> float:
    """Share of the pixels of a stored depth image (uint16 millimetres, 0 = nothing: not near)
    nearer than ``CLOSE_M`` (under ``CLOSE_MM`` millimetres)."""
    return float(np.count_nonzero((depth_mm > 0) & (depth_mm < CLOSE_MM))) / float(depth_mm.size)


def capture(
    backend: HouseBackend,
    grid: NavGrid,
    sight: WallSight,
    target: Sequence[float],
    settings: CaptureSettings,
    buffer: ViewBuffer,
    *,
    floor_y: float,
    component: int,
    facing: float = 0.0,
) -> Capture:
    """Render every view of ``settings`` around ``target`` in ``backend``'s current state into
    the next rows of ``buffer``; ``facing`` turns the orbit (its azimuth 0 looks from that
    bearing: an open drawer's or door's face). The first candidates of all azimuths are drawn
    in one go, straight into their rows (:func:`orbit_viewpoints` batches them); a candidate
    tried after its azimuth's first was refused is drawn apart and its images replace the
    first's only if it is accepted."""
    base, per = buffer.n, len(settings.heights)
    if base + settings.views > len(buffer.frames):
        raise DataforgeError(f"view buffer full at {base} views")
    azimuths = tuple((a + facing) % 360.0 for a in settings.azimuths)
    slots = {az: base + k * per for k, az in enumerate(azimuths)}

    def accept(groups: list[list[Viewpoint]], first: bool) -> list[bool]:
        rows = [slots[g[0].azimuth_deg] for g in groups]
        cams = [(vp.position, vp.yaw_deg, vp.horizon_deg) for g in groups for vp in g]
        direct = first and rows == list(range(rows[0], rows[0] + len(cams), per))
        if direct:
            out = buffer.frames.rows(rows[0], rows[0] + len(cams))
        else:
            if len(cams) > len(buffer.scratch):
                buffer.scratch = StoredFrames.empty(len(cams), settings.width, settings.height)
            out = buffer.scratch.rows(0, len(cams))
        backend.render_stored(cams, out)
        verdicts = []
        for j, row in enumerate(rows):
            ok = all(close_share(out.depth[j * per + h]) <= MAX_CLOSE_SHARE for h in range(per))
            if not direct and (ok or first):  # a first candidate's images stay unless replaced
                for h in range(per):
                    out.copy_to(j * per + h, buffer.frames, row + h)
            verdicts.append(ok)
        return verdicts

    vps = orbit_viewpoints(
        grid,
        sight,
        target,
        floor_y=floor_y,
        heights=dict(settings.heights),
        azimuths=azimuths,
        radius=settings.radius,
        component=component,
        accept=accept,
    )
    out = Capture([], vps)
    for k, vp in enumerate(vps):
        row = base + k
        buffer.pose[row] = thor_camera_pose(vp.position, vp.yaw_deg, vp.horizon_deg)
        flags = [float(vp.on_bearing), float(vp.sees_target)]
        buffer.view[row] = [
            vp.azimuth_deg,
            vp.height_m,
            vp.radius_m,
            *flags,
            *map(float, target),
            vp.bearing_deg,
            float(vp.usable),
        ]
        out.boxes.append(mask_boxes(buffer.instance[row]))
    buffer.n = base + len(vps)
    return out
