"""Helpers shared by the archetypes of small objects (``kitchen``, ``household``): colours
shaded or jittered per asset, rods and cones between two points, turned boxes and rings fitted to
the box, the long axis of a lying object (:class:`LongAxis`) or an axial one
(:class:`AxialFrame`), and a container's interior surface.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dataforge.world.assets import AssetInfo
from dataforge.world.shapes import ShapeBuilder

RGB = tuple[int, int, int]
P3 = tuple[float, float, float]

DARK: RGB = (30, 30, 33)
STEM: RGB = (92, 66, 38)
WHITE: RGB = (244, 243, 238)
CARDBOARD: RGB = (176, 136, 92)


# -- helpers -------------------------------------------------------------------------------


def shade_color(color: RGB, k: float) -> RGB:
    """``color`` times ``k`` (k > 1 lightens toward white), clipped to 0..255."""
    if k <= 1.0:
        return tuple(round(c * k) for c in color)  # type: ignore[return-value]
    t = min(k - 1.0, 1.0)
    return tuple(round(c + (255 - c) * t) for c in color)  # type: ignore[return-value]


def jitter_color(b: ShapeBuilder, color: RGB, amount: float = 0.08) -> RGB:
    """``color`` made a little lighter or darker for this asset."""
    return shade_color(color, 1.0 + b.uniform(-amount, amount))


def add_rod(
    b: ShapeBuilder, p0: P3, p1: P3, radius: float, role: str = "primary", **kw: Any
) -> None:
    """A cylinder (frustum with ``taper`` <= 1) from point ``p0`` to ``p1`` (y from the bottom);
    ``taper`` narrows it toward ``p1``."""
    d = np.subtract(p1, p0)
    length = float(np.linalg.norm(d))
    if length < 1e-5:
        return
    u = d / length
    pitch = -math.degrees(math.asin(max(-1.0, min(1.0, float(u[1])))))
    yaw = math.degrees(math.atan2(float(u[0]), float(u[2])))
    mid = tuple(float(v) for v in (np.add(p0, p1) / 2.0))
    b.hcylinder("z", mid, length, radius, role=role, rotation=(pitch, yaw, 0.0), **kw)  # type: ignore[arg-type]


def add_cone(
    b: ShapeBuilder, p0: P3, p1: P3, r0: float, r1: float, role: str = "primary", **kw: Any
) -> None:
    """A frustum from ``p0`` (radius ``r0``) to ``p1`` (radius ``r1``)."""
    if r1 <= r0:
        add_rod(b, p0, p1, r0, role, taper=r1 / max(r0, 1e-9), **kw)
    else:
        add_rod(b, p1, p0, r1, role, taper=r0 / max(r1, 1e-9), **kw)


def add_turned_box(
    b: ShapeBuilder, center: P3, size: P3, rotation: P3, role: str = "primary", **kw: Any
):
    """A box of ``size`` centred at ``center`` (y from the bottom), turned by ``rotation``, scaled
    and moved to fit the asset's box after turning (``ShapeBuilder.box`` clamps before turning)."""
    b.turned_box(center, size, rotation, role, **kw)


def add_ring(
    b: ShapeBuilder, center: P3, outer: float, tube: float, axis: str, role: str = "primary", **kw
) -> None:
    """A torus whose tube is at least a millimetre thick and thinner than its ring."""
    tube = max(min(tube, outer * 0.45), 0.001)
    b.torus(center, outer, tube, axis=axis, role=role, **kw)


class LongAxis:
    """Coordinates of an object lying along the longer of the box's horizontal axes.

    ``s`` runs along that axis from -L/2 (tail) to +L/2 (head), ``c`` across it (A wide), y up.
    """

    def __init__(self, b: ShapeBuilder, axis: str | None = None) -> None:
        self.b = b
        self.axis = axis or ("x" if b.w > b.d else "z")
        self.L = b.w if self.axis == "x" else b.d
        self.A = b.d if self.axis == "x" else b.w
        self.across = "z" if self.axis == "x" else "x"

    def xz(self, s: float, c: float) -> tuple[float, float]:
        return (s, c) if self.axis == "x" else (c, s)

    def pt(self, s: float, y: float, c: float = 0.0) -> P3:
        x, z = self.xz(s, c)
        return (x, y, z)

    def radii(self, rs: float, ry: float, rc: float) -> P3:
        return (rs, ry, rc) if self.axis == "x" else (rc, ry, rs)

    def box(
        self,
        s: tuple[float, float],
        c: tuple[float, float],
        y: tuple[float, float],
        role="primary",
        **kw,
    ):
        if self.axis == "x":
            self.b.box(s, y, c, role=role, **kw)
        else:
            self.b.box(c, y, s, role=role, **kw)

    def rbox(
        self, s: float, y: float, c: float, size: P3, yaw: float = 0.0, pitch: float = 0.0, **kw
    ):
        """A turned box: ``size`` is (along, up, across); ``pitch`` tilts its head end up."""
        if self.axis == "x":
            add_turned_box(
                self.b, self.pt(s, y, c), (size[0], size[1], size[2]), (0.0, yaw, pitch), **kw
            )
        else:
            add_turned_box(
                self.b, self.pt(s, y, c), (size[2], size[1], size[0]), (-pitch, yaw, 0.0), **kw
            )

    def rod(
        self,
        s0: float,
        s1: float,
        y0: float,
        r: float,
        y1: float | None = None,
        c: float = 0.0,
        **kw,
    ):
        add_rod(self.b, self.pt(s0, y0, c), self.pt(s1, y0 if y1 is None else y1, c), r, **kw)

    def cone(self, s0: float, s1: float, y: float, r0: float, r1: float, c: float = 0.0, **kw):
        add_cone(self.b, self.pt(s0, y, c), self.pt(s1, y, c), r0, r1, **kw)

    def sphere(self, s: float, y: float, c: float, rs: float, ry: float, rc: float, **kw):
        self.b.sphere(self.pt(s, y, c), self.radii(rs, ry, rc), **kw)

    def cylinder(
        self, s: float, c: float, y: tuple[float, float], rs: float, rc: float | None = None, **kw
    ):
        x, z = self.xz(s, c)
        rc = rs if rc is None else rc
        rx, rz = (rs, rc) if self.axis == "x" else (rc, rs)
        self.b.cylinder(x, z, y, rx, rz, **kw)

    def surface(self, kind: str, y: float, s: tuple[float, float], c: tuple[float, float], **kw):
        x, z = (s, c) if self.axis == "x" else (c, s)
        self.b.surface(kind, y, x, z, **kw)


def longest_axis(b: ShapeBuilder) -> str:
    """The box's longest axis ('x', 'y' or 'z')."""
    return "xyz"[int(np.argmax([b.w, b.h, b.d]))]


class AxialFrame:
    """Coordinates along the box's longest axis, upright or lying: ``t`` from 0 to ``L``."""

    def __init__(self, b: ShapeBuilder) -> None:
        self.b = b
        self.axis = longest_axis(b)
        dims = {"x": b.w, "y": b.h, "z": b.d}
        self.L = dims[self.axis]
        cross = [v for k, v in dims.items() if k != self.axis]
        self.R = min(cross) / 2.0  # the largest radius that fits across

    def pt(self, t: float) -> P3:
        if self.axis == "y":
            return (0.0, t, 0.0)
        mid_y = self.b.h / 2.0
        if self.axis == "x":
            return (t - self.L / 2.0, mid_y, 0.0)
        return (0.0, mid_y, t - self.L / 2.0)

    def seg(self, t0: float, t1: float, r0: float, r1: float | None = None, role="primary", **kw):
        add_cone(self.b, self.pt(t0), self.pt(t1), r0, r0 if r1 is None else r1, role, **kw)


def add_interior(
    b: ShapeBuilder, info: AssetInfo, floor: float, rx: float, rz: float, cx=0.0, cz=0.0, **kw
):
    """An ``interior`` surface on a container's inner floor (receptacles only)."""
    if info.receptacle:
        b.surface(
            "interior", floor, (cx - rx, cx + rx), (cz - rz, cz + rz), clearance=b.h - floor, **kw
        )


def round_word(b: ShapeBuilder) -> str:
    """A round thing's shape word: ``spherical`` when its box is about as high as wide and deep
    (longest side under 1.2 times the shortest), else ``oval``."""
    lo, _, hi = sorted((b.w, b.h, b.d))
    return "spherical" if hi < 1.2 * lo else "oval"


def flat_word(b: ShapeBuilder) -> str:
    """A flat thing's shape word seen from above: ``square`` when its sides differ by under
    10 %, else ``rectangular``."""
    return "square" if abs(b.w - b.d) < 0.1 * max(b.w, b.d) else "rectangular"
