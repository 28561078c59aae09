"""Fixture archetypes: wall and room fixtures, lamps, plants, electronics, doors and windows.

Each archetype draws a recognisable silhouette from a few primitives fitted to the asset's box
(front +z; wall-mounted things have their back, local -z, on the wall). Per-asset variation comes
from ``builder.rng`` (seeded from the asset id): a lamp's shade, a plant's foliage, a painting's
picture, the toggles of a light switch.

Doors and windows sit in a wall hole: local x along the wall, z across it (the frame is centred
in z), y up. A ``Doorway`` is its frame (jambs and head) followed by its door leaves drawn
closed; the leaves' parts come last in the part list. :func:`door_leaves` says where each leaf is
and which parts are its own, :func:`door_leaf_rects` gives the leaves' (x0, x1, hinge) only, and
:func:`swung_door_shape` is the whole shape with the leaves turned open about their hinges.

Receptacles: the bars of towel holders and toilet-paper hangers are narrow ``top`` surfaces (a
towel or roll hangs there), a toaster's slots are ``interior`` surfaces, a coffee machine holds a
mug on its drip tray (``shelf``, clear up to the head) and things on its top.
"""

from __future__ import annotations

import colorsys
import functools
import itertools
import math
from dataclasses import dataclass, replace
from typing import cast

import numpy as np

from dataforge.world.archetypes import register, shape_of
from dataforge.world.assets import AssetInfo
from dataforge.world.shapes import Part, Shape, ShapeBuilder, variant_rng
from dataforge.world.vectors import Vec3

RGB = tuple[int, int, int]
DARK: RGB = (28, 28, 30)  # slots, keys, wheels
BLACK_FRAME: RGB = (35, 33, 32)
GOLD_FRAME: RGB = (190, 155, 80)
WHITE_FRAME: RGB = (235, 233, 226)
LEAF_GREENS: tuple[RGB, ...] = ((58, 110, 45), (85, 140, 60), (45, 90, 50), (100, 130, 55))
DOORWAY = "doorway"  # the archetype's name: its builder's rng is seeded with it
DOOR_LEAF_THICKNESS = 0.04
DOOR_GAP = 0.004  # m between a leaf and its frame (and between the two leaves of a double door)


# -- helpers ---------------------------------------------------------------------------------


def _hsv(h: float, s: float, v: float) -> RGB:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, min(max(s, 0.0), 1.0), min(max(v, 0.0), 1.0))
    return (round(r * 255), round(g * 255), round(b * 255))


def _random_color(b: ShapeBuilder, sat: tuple[float, float], val: tuple[float, float]) -> RGB:
    return _hsv(b.uniform(0.0, 1.0), b.uniform(*sat), b.uniform(*val))


def _clip(v: float, lo: float, hi: float) -> float:
    return min(max(v, lo), hi)


def _ordered(a: float, b: float) -> tuple[float, float]:
    """``(a, b)`` in ascending order, as ``sorted`` gives them."""
    lo, hi = sorted((a, b))
    return lo, hi


def _fit_part(b: ShapeBuilder, primitive: str, center, size, role: str, **kw) -> None:
    """A (turned) part scaled down about its centre and moved inside the box, as the builder's
    own spheres and lying cylinders are (its boxes are clamped before turning, which a turned
    box can overrun)."""
    size_v = np.asarray(size, dtype=np.float64)
    probe = Part(primitive, (0.0, 0.0, 0.0), cast(Vec3, tuple(float(s) for s in size_v)), **kw)
    ext = np.abs(probe.matrix()) @ probe.extent()
    box = np.array([b.w, b.h, b.d])
    scale = min(1.0, float(np.min(box / np.maximum(ext, 1e-9))))
    ext = ext * scale
    c = np.array([center[0], center[1] - b.h / 2.0, center[2]], dtype=np.float64)
    c = np.clip(c, -box / 2 + ext / 2, box / 2 - ext / 2)
    b.parts.append(
        Part(
            primitive,
            (float(c[0]), float(c[1]), float(c[2])),
            cast(Vec3, tuple(float(s) for s in size_v * scale)),
            role,
            **kw,
        )
    )


def _tilted_box(b: ShapeBuilder, center, size, rotation, role: str = "primary", **kw) -> None:
    """A box of ``size`` centred at ``center`` (y from the bottom), turned by ``rotation``."""
    _fit_part(b, "box", center, size, role, rotation=tuple(float(r) for r in rotation), **kw)


def _rod(b: ShapeBuilder, p0, p1, radius: float, role: str = "metal", **kw) -> None:
    """A round rod from point ``p0`` to ``p1`` (x, y from the bottom, z)."""
    v = np.subtract(p1, p0).astype(np.float64)
    length = float(np.linalg.norm(v))
    if length < 1e-6:
        return
    u = v / length
    pitch = -math.degrees(math.asin(_clip(float(u[1]), -1.0, 1.0)))
    yaw = math.degrees(math.atan2(float(u[0]), float(u[2])))
    centre = (np.asarray(p0, dtype=np.float64) + np.asarray(p1, dtype=np.float64)) / 2.0
    _fit_part(
        b,
        "cylinder",
        tuple(centre),
        (2 * radius, length, 2 * radius),
        role,
        axis="z",
        rotation=(pitch, yaw, 0.0),
        **kw,
    )


def _frame(
    b: ShapeBuilder,
    x: tuple[float, float],
    y: tuple[float, float],
    z: tuple[float, float],
    bar: float,
    role: str = "primary",
    **kw,
) -> None:
    """Four bars around the rectangle ``x`` by ``y`` (a picture or window frame), ``z`` deep."""
    (x0, x1), (y0, y1) = x, y
    b.box((x0, x1), (y1 - bar, y1), z, role, **kw)
    b.box((x0, x1), (y0, y0 + bar), z, role, **kw)
    b.box((x0, x0 + bar), (y0 + bar, y1 - bar), z, role, **kw)
    b.box((x1 - bar, x1), (y0 + bar, y1 - bar), z, role, **kw)


# -- wall fixtures ---------------------------------------------------------------------------


@register("Blinds")
def blinds(b: ShapeBuilder, info: AssetInfo) -> None:
    """A head rail, a stack of tilted slats and a bottom rail, with two lift cords in front."""
    rail = min(0.045, b.h * 0.22)
    b.box((-b.w / 2, b.w / 2), (b.h - rail, b.h), (-b.d / 2, b.d / 2), "primary")
    bottom = min(0.02, b.h * 0.1)
    b.box((-b.w / 2 + 0.005, b.w / 2 - 0.005), (0.0, bottom), (-b.d / 2, b.d / 2 * 0.8), "primary")
    span = b.h - rail - bottom
    pitch = b.uniform(0.018, 0.028)
    n = int(_clip(round(span / pitch) - 1, 2, 24))
    tilt = b.choice((8.0, 15.0, 25.0))
    for k in range(n):
        y = bottom + span * (k + 1) / (n + 1)
        _tilted_box(b, (0.0, y, 0.0), (b.w * 0.985, 0.003, b.d * 0.85), (tilt, 0.0, 0.0))
    for cx in (-b.w / 3, b.w / 3):
        b.box((cx - 0.002, cx + 0.002), (bottom, b.h - rail), (b.d / 2 - 0.004, b.d / 2), "fabric")


@register("LightSwitch")
def light_switch(b: ShapeBuilder, info: AssetInfo) -> None:
    """A wall plate with one to three toggles or rockers."""
    plate_d = max(min(b.d * 0.35, 0.01), 0.004)
    z0 = -b.d / 2
    b.box((-b.w / 2, b.w / 2), (0.0, b.h), (z0, z0 + plate_d), "primary")
    n = int(_clip(round(b.w / (b.h * 0.75)), 1, 3))
    style = b.choice(("toggle", "rocker"))
    col = (b.w - 0.02) / n
    for k in range(n):
        cx = -b.w / 2 + 0.01 + col * (k + 0.5)
        if style == "rocker":
            hw, hh = min(col * 0.32, 0.025), min(b.h * 0.3, 0.04)
            depth = min(b.d - plate_d, 0.012)
            _tilted_box(
                b,
                (cx, b.h / 2, z0 + plate_d + depth / 2),
                (2 * hw, 2 * hh, depth),
                (b.choice((-7.0, 7.0)), 0.0, 0.0),
                "secondary",
            )
        else:
            bw, bh = min(col * 0.22, 0.014), min(b.h * 0.18, 0.022)
            b.box(
                (cx - bw, cx + bw),
                (b.h / 2 - bh, b.h / 2 + bh),
                (z0, z0 + plate_d + 0.003),
                "secondary",
            )
            lever = min(b.d - plate_d, 0.02)
            _tilted_box(
                b,
                (cx, b.h / 2 + bh * 0.35, z0 + plate_d + lever / 2),
                (bw * 0.7, bh * 0.9, lever),
                (-20.0, 0.0, 0.0),
                "secondary",
            )


@register("Painting")
def painting(b: ShapeBuilder, info: AssetInfo) -> None:
    """A frame of four bars round a canvas with a picture: coloured blocks, a landscape with a
    sun, or discs; photos have a white mat between frame and picture."""
    z0 = -b.d / 2
    bar = min(b.w, b.h) * b.uniform(0.035, 0.08)
    frame = b.choice(("wood", BLACK_FRAME, GOLD_FRAME, WHITE_FRAME))
    fkw = {"role": "wood"} if frame == "wood" else {"role": "primary", "color": frame}
    _frame(b, (-b.w / 2, b.w / 2), (0.0, b.h), (z0, b.d / 2), bar, **fkw)
    x0, x1, y0, y1 = -b.w / 2 + bar, b.w / 2 - bar, bar, b.h - bar
    canvas_front = z0 + b.d * 0.45
    layer = min(0.0015, b.d * 0.08)
    if "photo" in info.asset_id.lower() or b.uniform(0, 1) < 0.25:  # a mat round the picture
        b.box((x0, x1), (y0, y1), (z0, canvas_front), "paper", color=WHITE_FRAME)
        m = min(x1 - x0, y1 - y0) * b.uniform(0.07, 0.14)
        x0, x1, y0, y1 = x0 + m, x1 - m, y0 + m, y1 - m
        canvas_front += layer
    motif = b.choice(("blocks", "landscape", "discs"))
    pw, ph = x1 - x0, y1 - y0

    def block(rx0, rx1, ry0, ry1, color, k) -> None:  # in picture fractions
        zf = canvas_front + layer * k
        b.box(
            (x0 + pw * rx0, x0 + pw * rx1),
            (y0 + ph * ry0, y0 + ph * ry1),
            (z0, zf),
            "primary",
            color=color,
        )

    def disc(rx, ry, rr, color, k) -> None:
        r = min(rr * min(pw, ph), pw * min(rx, 1 - rx), ph * min(ry, 1 - ry))
        if r > 0.005:
            zc = (canvas_front + layer * (k - 1) + canvas_front + layer * k) / 2
            b.hcylinder(
                "z", (x0 + pw * rx, y0 + ph * ry, zc), layer, r, role="primary", color=color
            )

    if motif == "landscape":
        sky = _hsv(b.uniform(0.52, 0.62), b.uniform(0.2, 0.5), b.uniform(0.75, 0.95))
        horizon = b.uniform(0.3, 0.5)
        block(0, 1, horizon, 1, sky, 0)
        block(0, 1, 0, horizon, _hsv(b.uniform(0.18, 0.33), b.uniform(0.4, 0.7), 0.55), 0)
        block(0, 1, horizon * 0.75, horizon, _hsv(b.uniform(0.3, 0.45), 0.5, 0.35), 1)
        disc(b.uniform(0.2, 0.8), b.uniform(0.72, 0.85), 0.1, (245, 200, 70), 1)
    elif motif == "discs":
        block(0, 1, 0, 1, _random_color(b, (0.05, 0.3), (0.75, 0.95)), 0)
        for k in range(int(b.rng.integers(2, 4))):
            disc(
                b.uniform(0.25, 0.75),
                b.uniform(0.25, 0.75),
                b.uniform(0.12, 0.3),
                _random_color(b, (0.4, 0.9), (0.35, 0.9)),
                k + 1,
            )
    else:
        block(0, 1, 0, 1, _random_color(b, (0.0, 0.25), (0.7, 0.95)), 0)
        for k in range(int(b.rng.integers(3, 6))):
            rx0, ry0 = b.uniform(0.0, 0.6), b.uniform(0.0, 0.6)
            rx1, ry1 = rx0 + b.uniform(0.15, 0.4), ry0 + b.uniform(0.15, 0.4)
            block(
                rx0,
                min(rx1, 1.0),
                ry0,
                min(ry1, 1.0),
                _random_color(b, (0.35, 0.9), (0.3, 0.9)),
                k + 1,
            )


@register("TowelHolder")
def towel_holder(b: ShapeBuilder, info: AssetInfo) -> None:
    """A bar along x in front of the wall on two brackets (round wall plates and posts)."""
    r = _clip(min(b.h, b.d) * 0.2, 0.005, 0.013)
    zb = b.d / 2 - r
    yc = b.h / 2
    b.hcylinder("x", (0.0, yc, zb), b.w, r, role="metal")
    for sx in (-1.0, 1.0):
        cx = sx * (b.w / 2 - max(0.03, r * 2))
        plate = min(b.h / 2, 0.03)
        b.hcylinder("z", (cx, yc, -b.d / 2 + 0.005), 0.01, plate, role="metal")
        _rod(b, (cx, yc, -b.d / 2 + 0.01), (cx, yc, zb), r * 0.8)
    zr = max(r, 0.006)
    b.surface("top", yc + r, (-b.w / 2 + 0.05, b.w / 2 - 0.05), (zb - zr, zb + zr))


@register("HandTowelHolder")
def hand_towel_holder(b: ShapeBuilder, info: AssetInfo) -> None:
    """A ring hanging in front of the wall from a bracket at its top."""
    tube = _clip(min(b.d * 0.35, b.w * 0.1), 0.008, 0.018)
    zr = b.d / 2 - tube / 2
    plate_h = min(0.05, b.h * 0.25)
    b.box((-0.03, 0.03), (b.h - plate_h, b.h), (-b.d / 2, -b.d / 2 + 0.012), "metal")
    arm_y = b.h - plate_h / 2
    b.box((-0.008, 0.008), (arm_y - 0.008, arm_y + 0.008), (-b.d / 2 + 0.012, zr), "metal")
    outer = min(b.w, arm_y - 0.008)
    cy = arm_y - 0.008 - outer / 2
    b.torus((0.0, cy, zr), outer, tube, axis="z", role="metal")
    inner_bottom = cy - outer / 2 + tube
    half = max(tube / 2, 0.006)
    b.surface("top", inner_bottom, (-outer * 0.3, outer * 0.3), (zr - half, zr + half))


@register("ToiletPaperHanger")
def toilet_paper_hanger(b: ShapeBuilder, info: AssetInfo) -> None:
    """A rod along x held by one or two arms from wall plates; a cover shelf over it when the
    box is tall."""
    z0 = -b.d / 2
    plate_d = min(0.012, b.d * 0.2)
    cover = b.h > 0.12 and b.choice((True, False))
    top = b.h - 0.015 if cover else b.h
    rr = _clip(min(top, b.d) * 0.14, 0.005, 0.011)
    ry = top / 2 if not cover else min(top / 2, top - 0.05)
    rz = b.d / 2 - rr - (0.003 if not cover else 0.02)
    rz = max(rz, z0 + plate_d + rr)
    style = b.choice(("two_arms", "one_arm"))
    plate_w = min(0.035, b.w * 0.18)
    ends = (-1.0, 1.0) if style == "two_arms" else (-1.0,)
    for sx in ends:
        xa, xb = sorted((sx * b.w / 2, sx * (b.w / 2 - plate_w)))
        b.box((xa, xb), (max(ry - 0.035, 0.0), min(ry + 0.035, top)), (z0, z0 + plate_d), "metal")
        b.box((xa + 0.004, xb - 0.004), (ry - rr, ry + rr), (z0 + plate_d, rz + rr), "metal")
    if style == "two_arms":
        rx = (-b.w / 2 + plate_w, b.w / 2 - plate_w)
    else:
        rx = (-b.w / 2 + plate_w, b.w / 2 - 0.01)
    b.hcylinder("x", ((rx[0] + rx[1]) / 2, ry, rz), rx[1] - rx[0], rr, role="metal")
    if cover:
        b.box((-b.w / 2, b.w / 2), (top, b.h), (z0, b.d / 2), "metal")
        b.box((-b.w / 2, b.w / 2), (top - 0.03, top), (b.d / 2 - 0.006, b.d / 2), "metal")
    half = max(rr, 0.006)
    b.surface("top", ry + rr, rx, (rz - half, rz + half))


@register("ShowerCurtain")
def shower_curtain(b: ShapeBuilder, info: AssetInfo) -> None:
    """A rod along x at the top and a pleated curtain hanging from it (a zigzag of panels)."""
    rr = 0.012
    b.hcylinder("x", (0.0, b.h - rr, 0.0), b.w, rr, role="metal")
    n = int(_clip(round(b.w / 0.07), 4, 28))
    dx = b.w / n
    amp = min(b.d * 0.8, dx * 2.0)
    y0, y1 = b.uniform(0.02, 0.08), b.h - 2 * rr - 0.01
    length = math.hypot(dx, amp)
    for k in range(n):
        cx = -b.w / 2 + dx * (k + 0.5)
        yaw = math.degrees(math.atan2(amp, dx)) * (1 if k % 2 else -1)
        _tilted_box(
            b, (cx, (y0 + y1) / 2, 0.0), (length, y1 - y0, 0.004), (0.0, yaw, 0.0), "fabric"
        )
    for k in range(0, n + 1, 2):  # rings on the rod
        cx = _clip(-b.w / 2 + dx * k, -b.w / 2 + 0.01, b.w / 2 - 0.01)
        b.box((cx - 0.004, cx + 0.004), (y1 - 0.01, b.h), (-0.01, 0.01), "metal")


@register("ShowerHead")
def shower_head(b: ShapeBuilder, info: AssetInfo) -> None:
    """A shower column: mixer valve with a lever low down, a riser pipe up the wall, an arm out
    from its top and a wide head facing down."""
    z0 = -b.d / 2
    pr = _clip(min(b.w, b.d) * 0.06, 0.008, 0.014)
    zp = z0 + 0.025 + pr
    if b.h > 0.5:  # a column: valve low down, riser up to the head
        vy = b.h * b.uniform(0.12, 0.3)
        vr = min(b.w / 2, 0.045)
        b.hcylinder("z", (0.0, vy, z0 + 0.03), 0.06, vr, role="metal")
        b.box(
            (-0.012, 0.012),
            (vy - 0.01, vy + 0.01),
            (z0 + 0.06, z0 + 0.06 + min(0.08, b.d * 0.35)),
            "metal",
        )
        b.cylinder(0.0, zp, (vy, b.h - 0.03), pr, role="metal")
        for by in (vy + (b.h - vy) * 0.45, b.h - 0.1):
            b.box((-0.015, 0.015), (by - 0.015, by + 0.015), (z0, zp), "metal")
    else:
        b.hcylinder("z", (0.0, b.h - 0.03, z0 + 0.01), 0.02, min(0.03, b.w / 2), role="metal")
    hr_x = _clip(b.w / 2, 0.04, 0.15)
    hr_z = _clip((b.d - 0.06) / 2, 0.04, 0.15)
    zh = b.d / 2 - hr_z
    arm_y = b.h - 0.03
    _rod(b, (0.0, arm_y, zp), (0.0, arm_y, zh), pr)
    b.cylinder(0.0, zh, (arm_y - 0.045, arm_y - 0.005), hr_x * 0.35, hr_z * 0.35, role="metal")
    b.cylinder(0.0, zh, (arm_y - 0.07, arm_y - 0.045), hr_x, hr_z, role="metal", taper=0.7)
    b.cylinder(0.0, zh, (arm_y - 0.075, arm_y - 0.07), hr_x * 0.9, hr_z * 0.9, role="plastic")


@register("Faucet")
def faucet(b: ShapeBuilder, info: AssetInfo) -> None:
    """A column at the back with a spout reaching forward (+z): straight and low, or an arched
    gooseneck when the faucet is tall; two handles on a wide faucet, else one lever."""
    rc = _clip(min(b.w, b.d) * 0.16, 0.008, 0.024)
    wide = b.w > 0.25
    zc = -b.d / 2 + max(rc * 1.8, min(0.045, b.d * 0.18))
    base_r = min(rc * 1.8, b.w / 2, zc + b.d / 2)
    base_h = min(0.02, b.h * 0.1)
    b.cylinder(0.0, zc, (0.0, base_h), base_r, role="metal")
    if wide:  # deck plate joining the handles
        b.box(
            (-b.w / 2 + 0.01, b.w / 2 - 0.01),
            (0.0, base_h * 0.6),
            (zc - rc * 1.2, zc + rc * 1.2),
            "metal",
        )
    rt = min(rc * 0.7, 0.0145)  # under 3 cm across: a cheap 8-sided rod
    z_end = b.d / 2 - rt * 1.2
    arched = b.h > 0.6 * b.d or b.h > 0.3
    if arched:
        rad = max((z_end - zc) / 2, rt * 2)
        rad = min(rad, (b.h - base_h) * 0.35)
        yc = b.h - rad - rt
        b.cylinder(0.0, zc, (base_h, yc), rc, role="metal")
        pts = []
        for k in range(5):
            a = math.pi * k / 4
            pts.append((0.0, yc + rad * math.sin(a), zc + rad * (1 - math.cos(a))))
        for p0, p1 in itertools.pairwise(pts):  # overlapping a little at the joints
            v = np.subtract(p1, p0) * (rt * 0.7 / math.dist(p0, p1))
            _rod(b, np.subtract(p0, v), np.add(p1, v), rt)
        end = pts[-1]
        tip = (0.0, max(end[1] - min(0.05, b.h * 0.15), base_h), end[2])
        _rod(b, end, tip, rt * 1.1)
    else:
        top = b.h - rt * 1.2
        b.cylinder(0.0, zc, (base_h, top + rt), rc, role="metal")
        _rod(b, (0.0, top, zc), (0.0, top, z_end), rt)
        b.cylinder(0.0, z_end, (top - rt - min(0.02, top * 0.3), top), rt * 1.1, role="metal")
    if wide:
        hx = b.w / 2 - rc * 1.3
        hh = min(b.h * 0.35, 0.07)
        for sx in (-1.0, 1.0):
            b.cylinder(sx * hx, zc, (0.0, hh), min(rc * 0.9, 0.0145), role="metal", taper=0.8)
            b.box(
                (sx * hx - rc * 1.2, sx * hx + rc * 1.2),
                (hh, hh + 0.012),
                (zc - 0.006, zc + 0.006),
                "metal",
            )
    elif b.w / 2 - rc > 0.025:  # a lever on the column's side, tilted back
        ly = min(b.h * 0.55, b.h - 0.04) if arched else b.h - rt * 1.2
        lx = rc + 0.005
        _rod(b, (lx, ly, zc), (min(lx + 0.05, b.w / 2 - 0.006), ly + 0.02, zc - 0.01), 0.006)
    else:  # a narrow faucet: the lever stands up from the column's back, leaning back
        ly = min(b.h * 0.55, b.h - 0.04) if arched else b.h - rt * 2.5
        back = max(zc - 0.045, -b.d / 2 + 0.007)
        _rod(b, (0.0, ly, zc - rc * 0.5), (0.0, min(ly + 0.035, b.h - 0.007), back), 0.006)


# -- lamps -----------------------------------------------------------------------------------


def _shade(
    b: ShapeBuilder, cx: float, cz: float, y: tuple[float, float], r: float, taper: float
) -> None:
    """A lamp shade (open frustum, role primary) with a glowing disc across its bottom."""
    b.cylinder(cx, cz, y, r, role="primary", taper=taper, open_top=True)
    b.cylinder(cx, cz, (y[0] + 0.004, y[0] + 0.012), r * 0.93, role="light")


@register("FloorLamp")
def floor_lamp(b: ShapeBuilder, info: AssetInfo) -> None:
    """A base (disc or three legs), a pole and a shade: a drum or cone with light inside, or a
    torchiere bowl opening upward."""
    r = min(b.w, b.d) / 2
    style = b.choice(("classic", "classic", "tripod", "torchiere"))
    pole_r = b.uniform(0.01, 0.017)
    top0 = b.h - b.uniform(0.15, 0.22) if style == "torchiere" else b.h * b.uniform(0.72, 0.82)
    if style == "tripod":
        hub = b.h * b.uniform(0.45, 0.6)
        for k in range(3):
            a = math.radians(90 + 120 * k)
            foot = (r * 0.85 * math.cos(a), 0.015, r * 0.85 * math.sin(a))
            _rod(b, foot, (0.0, hub, 0.0), pole_r * 0.9, role="wood")
        b.cylinder(0.0, 0.0, (hub - 0.02, top0 + 0.05), pole_r, role="metal")
    else:
        b.cylinder(0.0, 0.0, (0.0, 0.025), r * b.uniform(0.45, 0.65), role="metal", taper=0.85)
        b.cylinder(0.0, 0.0, (0.025, top0 + 0.05), pole_r, role="metal")
    if style == "torchiere":
        b.cylinder(0.0, 0.0, (top0, b.h), r * 0.45, role="primary", taper=2.0, open_top=True)
        b.cylinder(0.0, 0.0, (b.h - 0.03, b.h - 0.02), r * 0.8, role="light")
    else:
        _shade(b, 0.0, 0.0, (top0, b.h), r * 0.95, b.uniform(0.55, 1.0))


@register("DeskLamp")
def desk_lamp(b: ShapeBuilder, info: AssetInfo) -> None:
    """A table lamp (base, stem or vase body, shade with light inside) in a near-square box; an
    arm lamp (base, two arms, a head shining down) along the box's longer side otherwise."""
    if max(b.w, b.d) / min(b.w, b.d) > 1.25:
        _arm_lamp(b)
        return
    r = min(b.w, b.d) / 2
    shade_y0 = b.h * b.uniform(0.45, 0.62)
    if b.choice(("stem", "vase")) == "vase":
        b.cylinder(0.0, 0.0, (0.0, 0.02), r * 0.45, role="secondary")
        body_top = shade_y0 - 0.02
        br = r * b.uniform(0.3, 0.45)
        b.sphere(
            (0.0, (0.02 + body_top) / 2 - 0.01, 0.0),
            (br, (body_top - 0.02) / 2 * 0.95, br),
            role="secondary",
        )
        b.cylinder(0.0, 0.0, (body_top - 0.02, shade_y0 + 0.04), 0.01, role="metal")
    else:
        b.cylinder(0.0, 0.0, (0.0, 0.025), r * 0.55, role="metal", taper=0.8)
        b.cylinder(0.0, 0.0, (0.025, shade_y0 + 0.04), max(0.008, r * 0.06), role="metal")
    _shade(b, 0.0, 0.0, (shade_y0, b.h), r * 0.97, b.uniform(0.55, 0.95))


def _arm_lamp(b: ShapeBuilder) -> None:
    along_z = b.d >= b.w
    length, across = (b.d, b.w) if along_z else (b.w, b.d)

    def at(u: float, y: float) -> tuple[float, float, float]:
        return (0.0, y, u) if along_z else (u, y, 0.0)

    rb = min(across / 2, length * 0.22)
    ub = -length / 2 + rb
    if along_z:
        b.cylinder(0.0, ub, (0.0, 0.025), across / 2 * 0.95, rb, role="secondary")
    else:
        b.cylinder(ub, 0.0, (0.0, 0.025), rb, across / 2 * 0.95, role="secondary")
    rh = min(across / 2, length * 0.2, b.h * 0.18)
    uh = length / 2 - rh
    elbow = at(ub + (uh - ub) * 0.15, b.h * 0.82)
    head_top = b.h * 0.9
    arm_r = max(0.006, min(across, length) * 0.04)
    _rod(b, at(ub, 0.025), elbow, arm_r, role="primary")
    _rod(b, elbow, at(uh, head_top), arm_r, role="primary")
    y0 = head_top - max(rh * 1.5, b.h * 0.15)
    hx, _, hz = at(uh, 0.0)
    b.cylinder(hx, hz, (y0, head_top), rh, role="primary", taper=0.45)
    b.cylinder(hx, hz, (y0 - 0.004, y0 + 0.004), rh * 0.9, role="light")


# -- room decor, plants, cleaning -------------------------------------------------------------


@register("HousePlant")
def house_plant(b: ShapeBuilder, info: AssetInfo) -> None:
    """A pot (widening frustum, open) with soil and foliage: a leafy bush (ellipsoids), blade
    leaves fanning out, broad leaves on stems, or a small tree (trunk and crowns) when tall."""
    r = min(b.w, b.d) / 2
    tall = b.h > 1.6 * max(b.w, b.d)
    style = b.choice(("tree", "blades", "bush") if tall else ("bush", "blades", "broad"))
    pot_h = b.h * (b.uniform(0.2, 0.3) if tall else b.uniform(0.28, 0.4))
    taper = b.uniform(1.12, 1.35)
    pot_r = r * b.uniform(0.55, 0.75)
    pot = b.choice(
        ({"role": "ceramic"}, {"role": "primary"}, {"role": "primary", "color": (170, 92, 60)})
    )
    b.cylinder(0.0, 0.0, (0.0, pot_h), pot_r / taper, open_top=True, taper=taper, **pot)
    b.cylinder(0.0, 0.0, (pot_h * 0.86, pot_h * 0.9), pot_r * 0.97, role="soil")
    y0 = pot_h * 0.88
    greens = [LEAF_GREENS[int(b.rng.integers(len(LEAF_GREENS)))] for _ in range(3)]
    if style == "tree":
        trunk_top = y0 + (b.h - y0) * b.uniform(0.4, 0.55)
        b.cylinder(0.0, 0.0, (y0, trunk_top + 0.05), max(0.01, r * 0.06), role="wood", taper=0.7)
        cy = (trunk_top + b.h) / 2
        ry = (b.h - trunk_top) / 2 + 0.03
        b.sphere((0.0, cy, 0.0), (b.w / 2 * 0.95, ry, b.d / 2 * 0.95), role="leaf")
        b.sphere(
            (b.w * b.uniform(-0.15, 0.15), cy - ry * 0.5, b.d * 0.12),
            (b.w * 0.3, ry * 0.55, b.d * 0.3),
            role="leaf",
            color=greens[0],
        )
    elif style == "bush":
        span = b.h - y0
        b.sphere(
            (0.0, y0 + span * 0.45, 0.0), (b.w / 2 * 0.9, span * 0.45, b.d / 2 * 0.9), role="leaf"
        )
        b.sphere(
            (b.w * b.uniform(-0.12, 0.12), y0 + span * 0.72, b.d * b.uniform(-0.1, 0.1)),
            (b.w * 0.28, span * 0.28, b.d * 0.28),
            role="leaf",
            color=greens[0],
        )
    elif style == "blades":
        n = int(b.rng.integers(7, 12))
        length = (b.h - y0) * 1.02
        width = _clip(r * 0.22, 0.015, 0.06)
        for k in range(n):
            yaw = 360.0 * k / n + b.uniform(-15, 15)
            lean = b.uniform(12, 38) if k % 3 else b.uniform(0, 10)
            ln = length * b.uniform(0.7, 1.0)
            a = math.radians(yaw)
            off = math.sin(math.radians(lean)) * ln / 2
            c = (off * math.sin(a), y0 + math.cos(math.radians(lean)) * ln / 2, off * math.cos(a))
            _tilted_box(b, c, (width, ln, 0.006), (lean, yaw, 0.0), "leaf", color=greens[k % 3])
    else:  # broad leaves on stems
        n = int(b.rng.integers(5, 9))
        span = b.h - y0
        for k in range(n):
            yaw = 360.0 * k / n + b.uniform(-20, 20)
            a = math.radians(yaw)
            reach = b.uniform(0.35, 0.85)
            tip_y = y0 + span * b.uniform(0.45, 0.8)
            end = (r * reach * math.sin(a), tip_y, r * reach * math.cos(a))
            stem_len = math.dist((0.0, y0, 0.0), end)
            stem_lean = math.degrees(math.acos(_clip((end[1] - y0) / stem_len, -1.0, 1.0)))
            mid = (end[0] / 2, (y0 + end[1]) / 2, end[2] / 2)
            _tilted_box(
                b, mid, (0.006, stem_len, 0.006), (stem_lean, yaw, 0.0), "leaf", color=greens[2]
            )
            lw = _clip(r * 0.35, 0.03, 0.14)
            ll = min(span * 0.45, r * 0.9)
            c = (
                end[0] + math.sin(a) * ll * 0.3,
                end[1] + ll * 0.3,
                end[2] + math.cos(a) * ll * 0.3,
            )
            _tilted_box(
                b, c, (lw, ll, 0.006), (b.uniform(20, 55), yaw, 0.0), "leaf", color=greens[k % 2]
            )


@register("RoomDecor")
def room_decor(b: ShapeBuilder, info: AssetInfo) -> None:
    """A tall floor vase (belly and neck) holding branches that fan out to the top."""
    r = min(b.w, b.d) / 2
    vase_h = b.h * b.uniform(0.38, 0.5)
    shoulder = vase_h * b.uniform(0.55, 0.7)
    belly = r * b.uniform(0.6, 0.8)
    vase = b.choice(({"role": "ceramic"}, {"role": "primary"}))
    b.cylinder(0.0, 0.0, (0.0, shoulder), belly * 0.7, taper=1 / 0.7, **vase)
    b.cylinder(0.0, 0.0, (shoulder, vase_h), belly, taper=0.35, **vase)
    neck_r = belly * 0.35
    twig = (95, 70, 45)
    n = int(b.rng.integers(5, 9))
    for k in range(n):
        a = math.radians(360.0 * k / n + b.uniform(-20, 20))
        spread = b.uniform(0.5, 0.95)
        top = (
            b.w / 2 * spread * math.sin(a),
            b.h * b.uniform(0.85, 1.0),
            b.d / 2 * spread * math.cos(a),
        )
        start = (neck_r * 0.5 * math.sin(a), vase_h - 0.05, neck_r * 0.5 * math.cos(a))
        _rod(b, start, top, 0.005, role="wood", color=twig)


@register("GarbageBag")
def garbage_bag(b: ShapeBuilder, info: AssetInfo) -> None:
    """A lumpy dark plastic bag: two overlapping ellipsoids, a gathered neck and a knot."""
    color = b.choice(((32, 32, 36), (40, 44, 40), (30, 36, 52)))
    body_h = b.h * 0.8
    b.sphere(
        (0.0, body_h * 0.5, 0.0),
        (b.w / 2 * 0.92, body_h * 0.5, b.d / 2 * 0.92),
        role="plastic",
        color=color,
    )
    lx, lz = b.uniform(-0.2, 0.2) * b.w, b.uniform(-0.2, 0.2) * b.d
    b.sphere(
        (lx, body_h * 0.62, lz),
        (b.w * 0.3, body_h * 0.36, b.d * 0.3),
        role="plastic",
        color=tuple(min(c + 10, 255) for c in color),
    )
    b.cylinder(0.0, 0.0, (body_h * 0.9, b.h * 0.93), 0.014, role="plastic", color=color)
    ear = min(min(b.w, b.d) * 0.07, 0.022)  # under 5 cm: a cheap sphere
    for sx in (-1.0, 1.0):
        _fit_part(
            b,
            "sphere",
            (sx * ear * 0.9, b.h - ear * 0.8, 0.0),
            (ear * 2.2, ear * 1.4, ear),
            "plastic",
            color=color,
            rotation=(0.0, 0.0, sx * 30.0),
        )


@register("VacuumCleaner")
def vacuum_cleaner(b: ShapeBuilder, info: AssetInfo) -> None:
    """An upright vacuum: a floor head with a rounded bumper and rear wheels, a body with a clear
    dust bin, and a handle pole with a grip."""
    head_h = min(0.08, b.h * 0.09)
    z0 = -b.d / 2
    b.box((-b.w / 2, b.w / 2), (0.008, head_h), (z0 + 0.09, b.d / 2 - head_h / 2), "secondary")
    b.hcylinder(
        "x", (0.0, head_h / 2 + 0.004, b.d / 2 - head_h / 2), b.w, head_h / 2, role="secondary"
    )
    wr = min(0.06, b.d * 0.2)
    for sx in (-1.0, 1.0):
        b.hcylinder(
            "x", (sx * (b.w / 2 - 0.025), wr, z0 + wr), 0.045, wr, role="plastic", color=DARK
        )
    bz = z0 + min(b.d * 0.35, 0.12)
    brx, brz = b.w * 0.28, min(b.d * 0.28, 0.09)
    body_top = b.h * b.uniform(0.6, 0.7)
    b.box((-brx, brx), (wr * 0.6, wr * 1.8), (z0 + 0.03, bz + brz), "primary")
    b.cylinder(0.0, bz, (wr * 1.6, body_top), brx, brz, role="primary")
    b.cylinder(
        0.0, bz + brz * 0.9, (body_top * 0.35, body_top * 0.8), brx * 0.7, brz * 0.6, role="glass"
    )
    b.cylinder(0.0, bz, (body_top, b.h - 0.03), 0.014, role="metal")
    b.box((-0.018, 0.018), (b.h - 0.11, b.h), (bz - 0.025, bz + 0.05), "plastic", color=DARK)


# -- electronics and appliances --------------------------------------------------------------


def _screen_panel(
    b: ShapeBuilder,
    x: tuple[float, float],
    y: tuple[float, float],
    z: tuple[float, float],
    bezel: float,
    chin: float = 0.0,
) -> None:
    """A panel (role primary) with a dark screen standing 3 mm proud of its front face."""
    front = z[1]
    b.box(x, y, (z[0], front - 0.003), "primary")
    b.box(
        (x[0] + bezel, x[1] - bezel),
        (y[0] + bezel + chin, y[1] - bezel),
        (front - 0.004, front),
        "screen",
    )


@register("Television")
def television(b: ShapeBuilder, info: AssetInfo) -> None:
    """A thin panel with a dark screen in its bezel: on a pedestal or two feet when the box is
    deeper than 8 cm, flat against the wall (with a box on its back) otherwise."""
    bezel = min(b.w, b.h) * b.uniform(0.02, 0.04)
    natural = (b.w - 2 * bezel) * 9 / 16 + 2 * bezel
    if b.d > 0.08:
        stand_h = max(b.h - natural, 0.06)
        pt = min(0.05, b.d * 0.4)
        _screen_panel(b, (-b.w / 2, b.w / 2), (stand_h, b.h), (-pt / 2, pt / 2), bezel)
        if b.choice(("pedestal", "feet")) == "pedestal":
            pw = min(b.w * 0.22, 0.3)
            b.box((-pw, pw), (0.0, 0.02), (-b.d / 2, b.d / 2), "primary")
            b.box((-0.035, 0.035), (0.02, stand_h + 0.12), (-pt / 2 - 0.025, -pt / 2), "primary")
            b.box((-pw * 0.5, pw * 0.5), (0.0, 0.04), (-pt / 2 - 0.03, -pt / 2 + 0.03), "primary")
        else:
            for sx in (-1.0, 1.0):
                fx = sx * b.w * b.uniform(0.32, 0.4)
                b.box((fx - 0.02, fx + 0.02), (0.0, 0.02), (-b.d / 2, b.d / 2), "primary")
                _rod(
                    b, (fx, 0.02, 0.0), (fx, stand_h + 0.05, -pt / 2 - 0.006), 0.008, role="primary"
                )
    else:
        pt = min(b.d, 0.045)
        _screen_panel(b, (-b.w / 2, b.w / 2), (0.0, b.h), (b.d / 2 - pt, b.d / 2), bezel)
        if b.d - pt > 0.005:
            b.box(
                (-b.w * 0.3, b.w * 0.3),
                (b.h * 0.25, b.h * 0.75),
                (-b.d / 2, b.d / 2 - pt),
                "primary",
            )


@register("Desktop")
def desktop(b: ShapeBuilder, info: AssetInfo) -> None:
    """A monitor on a stand at the back, a keyboard slab at the front and a mouse on its right."""
    z0 = -b.d / 2
    mw = min(b.w * 0.7, b.h * 1.6)
    bezel = 0.015
    pt = min(0.03, b.d * 0.12)
    neck_d = min(0.025, b.d * 0.1)
    panel_h = min(b.h * 0.7, mw * 0.6)
    pz = (z0 + neck_d, z0 + neck_d + pt)
    _screen_panel(b, (-mw / 2, mw / 2), (b.h - panel_h, b.h), pz, bezel)
    b.box((-mw * 0.2, mw * 0.2), (0.0, 0.015), (z0, z0 + min(0.16, b.d * 0.55)), "primary")
    b.box((-0.03, 0.03), (0.015, b.h - panel_h * 0.4), (z0, z0 + neck_d), "primary")
    kd = min(0.15, b.d * 0.45)
    kw = min(0.22, b.w * 0.27)
    kz = (b.d / 2 - kd - 0.005, b.d / 2 - 0.005)
    kx = -min(0.05, b.w * 0.05)
    b.box((kx - kw, kx + kw), (0.0, 0.018), kz, "plastic")
    b.box(
        (kx - kw + 0.01, kx + kw - 0.01),
        (0.018, 0.024),
        (kz[0] + 0.012, kz[1] - 0.025),
        "plastic",
        color=DARK,
    )
    mx = min(kx + kw + 0.08, b.w / 2 - 0.035)
    b.sphere((mx, 0.018, b.d / 2 - 0.06), (0.03, 0.018, 0.05), role="plastic")


@register("Toaster")
def toaster(b: ShapeBuilder, info: AssetInfo) -> None:
    """A body rounded along its top edges with dark slots along z on top (two, or four across a
    wide toaster), a lever and a knob on the front end; a bread slot is an ``interior``."""
    lever_d = 0.02
    ze = b.d / 2 - lever_d
    r = min(b.w * 0.1, b.h * 0.12, 0.022)  # the rounding of the top edges
    zb = (-b.d / 2, ze)
    b.box((-b.w / 2, b.w / 2), (0.0, b.h - r), zb, "primary")
    b.box((-b.w / 2 + r, b.w / 2 - r), (b.h - r, b.h - 0.003), zb, "primary")
    length = ze + b.d / 2
    for sx in (-1.0, 1.0):
        b.hcylinder(
            "z", (sx * (b.w / 2 - r), b.h - r, (zb[0] + zb[1]) / 2), length, r, role="primary"
        )
    n = 2 if b.w < 0.26 else b.choice((2, 4))
    top_w = b.w - 2 * r
    pitch = top_w / n
    sw = min(0.032, pitch * 0.55)
    sz = (-b.d / 2 + 0.045, ze - 0.045)
    for k in range(n):
        cx = -top_w / 2 + pitch * (k + 0.5)
        b.box((cx - sw / 2, cx + sw / 2), (b.h - 0.004, b.h), sz, "primary", color=DARK)
        b.surface("interior", b.h * 0.3, (cx - sw / 2, cx + sw / 2), sz, clearance=b.h * 0.7)
    b.box((-0.006, 0.006), (b.h * 0.25, b.h * 0.85), (ze, ze + 0.003), "primary", color=DARK)
    ly = b.h * b.uniform(0.6, 0.75)
    b.box((-0.022, 0.022), (ly - 0.008, ly + 0.008), (ze, b.d / 2), "plastic", color=DARK)
    b.hcylinder(
        "z",
        (b.w * 0.25 if b.w > 0.2 else 0.0, b.h * 0.3, ze + 0.008),
        0.016,
        min(0.015, b.w * 0.08),
        role="plastic",
        color=DARK,
    )


@register("CoffeeMachine")
def coffee_machine(b: ShapeBuilder, info: AssetInfo) -> None:
    """A column at the back, a head reaching forward at the top with spouts under it, a base
    with a drip tray in front (a mug stands there: ``shelf`` clear up to the spouts) and a flat
    top; an espresso machine has a portafilter, a drip machine a clear water tank."""
    z0 = -b.d / 2
    col_d = b.d * b.uniform(0.38, 0.5)
    zc1 = z0 + col_d
    style = b.choice(("espresso", "drip", "pod"))
    head_y = b.h * b.uniform(0.62, 0.72)
    front = b.d / 2 - b.uniform(0.0, 0.04)
    hw = b.w / 2 * (0.92 if style == "pod" else 1.0)
    if style == "drip":
        b.box((-hw, hw), (0.0, b.h * 0.5), (z0, zc1), "primary")
        b.box((-hw * 0.9, hw * 0.9), (b.h * 0.5, b.h - 0.02), (z0 + 0.01, zc1 - 0.01), "glass")
    else:
        b.box((-hw, hw), (0.0, b.h), (z0, zc1), "primary")
    b.box((-hw, hw), (head_y, b.h), (zc1 - 0.001, front - 0.003), "primary")
    base_h = min(0.035, b.h * 0.09)
    b.box((-b.w / 2, b.w / 2), (0.0, base_h), (zc1 - 0.001, b.d / 2), "primary")
    tw = b.w * 0.32
    tray_z = (zc1 + 0.01, b.d / 2 - 0.012)
    tray_top = base_h + 0.012
    b.box((-tw, tw), (base_h, tray_top), tray_z, "metal")
    for k in range(3):
        gz = tray_z[0] + (tray_z[1] - tray_z[0]) * (k + 1) / 4
        b.box(
            (-tw + 0.01, tw - 0.01),
            (tray_top, tray_top + 0.002),
            (gz - 0.004, gz + 0.004),
            "primary",
            color=DARK,
        )
    zs = (zc1 + front) / 2
    spout_y = head_y - 0.03
    if style == "espresso":
        b.cylinder(0.0, zs, (head_y - 0.04, head_y), 0.04, role="metal")
        b.box(
            (-0.012, 0.012), (head_y - 0.03, head_y - 0.015), (zs, b.d / 2), "plastic", color=DARK
        )
        spout_y = head_y - 0.055
        b.cylinder(0.0, zs, (spout_y, head_y - 0.04), 0.012, role="metal")
    else:  # a dispenser block with two spouts
        b.box((-0.035, 0.035), (head_y - 0.02, head_y), (zs - 0.03, zs + 0.03), "metal")
        for sx in (-0.015, 0.015):
            b.cylinder(sx, zs, (spout_y, head_y - 0.02), 0.007, role="metal")
    if style == "pod":
        b.cylinder(0.0, zs, (b.h - 0.01, b.h), min(0.05, b.w * 0.15), role="metal")
    knob_y = (head_y + b.h) / 2
    b.box((-hw * 0.5, hw * 0.5), (knob_y - 0.02, knob_y + 0.02), (front - 0.005, front), "screen")
    b.hcylinder("z", (hw * 0.72, knob_y, front - 0.006), 0.012, 0.015, role="metal")
    b.surface("shelf", tray_top, (-tw, tw), tray_z, clearance=spout_y - tray_top)
    b.surface("top", b.h, (-hw, hw), (z0, front))


# -- doors and windows -----------------------------------------------------------------------


@dataclass(frozen=True)
class DoorLeaf:
    """One leaf of a ``Doorway`` drawn closed, in the asset frame (origin at the box centre).

    ``x0``/``x1``: its edges along the wall; ``hinge``: ``"left"`` (hinge at ``x0``) or
    ``"right"`` (at ``x1``); ``y0``/``y1``: its bottom and top; ``z``: the centre of its thickness
    ``thickness``; ``parts``: the (start, stop) indices of its parts in ``shape_of(info).parts``
    (the slab, its panels and its handles)."""

    x0: float
    x1: float
    hinge: str
    y0: float
    y1: float
    z: float
    thickness: float
    parts: tuple[int, int]


@dataclass(frozen=True)
class _DoorLayout:
    jamb: float
    head: float
    depth: float  # the frame's thickness across the wall
    leaves: tuple[tuple[float, float, str], ...]  # x0, x1, hinge (from the box centre)
    style: str


def _door_layout(info: AssetInfo) -> _DoorLayout:
    w, _, d = info.size
    rng = variant_rng(info.asset_id, "door-layout")
    jamb = float(rng.uniform(0.045, 0.07))
    head = float(rng.uniform(0.045, 0.07))
    if info.hole is not None:
        depth = min(info.hole.hi[2] - info.hole.lo[2], d)
    else:
        depth = d if info.object_type == "Doorframe" else min(d, 0.1)
    x0, x1 = -w / 2 + jamb + DOOR_GAP, w / 2 - jamb - DOOR_GAP
    if "double" in info.asset_id.lower():
        leaves: tuple[tuple[float, float, str], ...] = (
            (x0, -DOOR_GAP / 2, "left"),
            (DOOR_GAP / 2, x1, "right"),
        )
    else:
        leaves = ((x0, x1, "left" if rng.uniform() < 0.5 else "right"),)
    style = ("panels", "panels", "flush", "glass")[int(rng.integers(4))]
    return _DoorLayout(jamb, head, depth, leaves, style)


def _door_frame(b: ShapeBuilder, lay: _DoorLayout) -> None:
    z = (-lay.depth / 2, lay.depth / 2)
    b.box((-b.w / 2, -b.w / 2 + lay.jamb), (0.0, b.h), z, "secondary")
    b.box((b.w / 2 - lay.jamb, b.w / 2), (0.0, b.h), z, "secondary")
    b.box((-b.w / 2 + lay.jamb, b.w / 2 - lay.jamb), (b.h - lay.head, b.h), z, "secondary")


def _draw_doorway(b: ShapeBuilder, info: AssetInfo) -> list[DoorLeaf]:
    lay = _door_layout(info)
    _door_frame(b, lay)
    b.box(
        (-b.w / 2 + lay.jamb, b.w / 2 - lay.jamb),
        (0.0, 0.008),
        (-lay.depth / 2, lay.depth / 2),
        "secondary",
    )  # threshold
    t = min(DOOR_LEAF_THICKNESS, lay.depth * 0.8)
    y0, y1 = 0.01, b.h - lay.head - DOOR_GAP
    reach = max(min(0.065, b.d / 2 - t / 2 - 0.003), 0.01)  # how far a handle stands out
    leaves = []
    for x0, x1, hinge in lay.leaves:
        start = len(b.parts)
        b.box((x0, x1), (y0, y1), (-t / 2, t / 2), "primary")
        lw, lh = x1 - x0, y1 - y0
        m = min(lw * 0.16, 0.11)
        px = (x0 + m, x1 - m)
        if lay.style == "panels":
            split = y0 + lh * 0.42
            for py in ((y0 + m, split - m * 0.5), (split + m * 0.5, y1 - m)):
                b.box(px, py, (-t / 2 - 0.005, t / 2 + 0.005), "secondary")
        elif lay.style == "glass":
            b.box(px, (y0 + lh * 0.45, y1 - m), (-t / 2 - 0.002, t / 2 + 0.002), "glass")
            b.box(px, (y0 + m, y0 + lh * 0.45 - m), (-t / 2 - 0.005, t / 2 + 0.005), "secondary")
        hx = x1 - 0.065 if hinge == "left" else x0 + 0.065
        sign = -1.0 if hinge == "left" else 1.0  # levers point toward the hinge
        hy = min(0.95, lh * 0.46)
        b.box(
            (hx - 0.022, hx + 0.022),
            (hy - 0.05, hy + 0.05),
            (-t / 2 - 0.006, t / 2 + 0.006),
            "metal",
        )
        for sz in (-1.0, 1.0):
            za, zb = sorted((sz * t / 2, sz * (t / 2 + reach)))
            b.box((hx - 0.01, hx + 0.01), (hy - 0.01, hy + 0.01), (za, zb), "metal")
            zl = sorted((sz * (t / 2 + reach - 0.018), sz * (t / 2 + reach)))
            lx = sorted((hx - sign * 0.01, hx + sign * 0.12))
            b.box((lx[0], lx[1]), (hy - 0.009, hy + 0.009), (zl[0], zl[1]), "metal")
        yc0, yc1 = y0 - b.h / 2, y1 - b.h / 2  # from the box centre, as x and z are
        leaves.append(DoorLeaf(x0, x1, hinge, yc0, yc1, 0.0, t, (start, len(b.parts))))
    return leaves


@register("Doorway", name=DOORWAY)
def doorway(b: ShapeBuilder, info: AssetInfo) -> None:
    """A door frame (jambs, head, threshold) and its leaf, or two leaves for ``Doorway_Double_*``,
    drawn closed: a slab with raised panels, a glazed upper half or none, and lever handles on
    both faces. The leaves' parts come last (:func:`door_leaves` gives their index ranges)."""
    _draw_doorway(b, info)


@register("Doorframe")
def doorframe(b: ShapeBuilder, info: AssetInfo) -> None:
    """A door frame without a leaf: two jambs and a head through the box's depth."""
    _door_frame(b, _door_layout(info))


def door_leaves(info: AssetInfo) -> list[DoorLeaf]:
    """Where the leaves of a ``Doorway`` asset are and which of its shape's parts are theirs
    (left to right); none for any other asset."""
    if info.object_type != "Doorway":
        return []
    return _draw_doorway(ShapeBuilder(info.size, info.asset_id, DOORWAY), info)


def door_leaf_rects(info: AssetInfo) -> list[tuple[float, float, str]]:
    """``(x0, x1, hinge)`` of each leaf of a ``Doorway`` asset, left to right, in the asset
    frame (x along the wall from the box centre); ``hinge`` is ``"left"`` (the hinge is at
    ``x0``) or ``"right"`` (at ``x1``). One leaf, or two for ``Doorway_Double_*``."""
    return [(leaf.x0, leaf.x1, leaf.hinge) for leaf in door_leaves(info)]


@functools.lru_cache(maxsize=1024)
def swung_door_shape(info: AssetInfo, openness: float) -> Shape:
    """The asset's shape with each door leaf turned by ``openness`` x 90 degrees toward local -z
    (0: closed, as :func:`shape_of` draws it) about a vertical axis through its hinge edge on its
    -z face, so that an open leaf stands clear of the jamb. Turned leaves leave the box."""
    shape = shape_of(info)
    leaves = door_leaves(info)
    if not leaves or openness <= 0.0:
        return shape
    parts = list(shape.parts)
    frac = min(float(openness), 1.0)
    for leaf in leaves:
        hx = leaf.x0 if leaf.hinge == "left" else leaf.x1
        hz = leaf.z - leaf.thickness / 2
        angle = (90.0 if leaf.hinge == "left" else -90.0) * frac
        t = math.radians(angle)
        c, s = math.cos(t), math.sin(t)
        for k in range(*leaf.parts):
            p = parts[k]
            dx, dz = p.center[0] - hx, p.center[2] - hz
            centre = (hx + c * dx + s * dz, p.center[1], hz - s * dx + c * dz)
            rot = (p.rotation[0], p.rotation[1] + angle, p.rotation[2])
            parts[k] = replace(p, center=centre, rotation=rot)
    return replace(shape, parts=tuple(parts))


@register("Window")
def window(b: ShapeBuilder, info: AssetInfo) -> None:
    """A frame of four bars in the hole with glass panes: fixed (muntin grid), slider (two sashes
    side by side), hung (two sashes one above the other; sills and side casings on both faces of
    its deeper box), or a bay (three angled pane groups projecting toward local -z)."""
    name = info.asset_id.lower()
    if "bay" in name or b.d > 0.35:
        _bay_window(b)
        return
    fd = min(b.d, 0.09)
    trim = 0.0
    if b.d > fd + 0.04:  # casings and sills on both faces
        hole_w = info.hole.hi[0] - info.hole.lo[0] if info.hole is not None else b.w - 0.06
        trim = _clip((b.w - hole_w) / 2, 0.02, 0.06)
        sill = min(0.03, b.h * 0.05)
        b.box((-b.w / 2, b.w / 2), (0.0, sill), (-b.d / 2, b.d / 2), "primary")
        for sz in (-1.0, 1.0):
            z = _ordered(sz * fd / 2, sz * min(fd / 2 + 0.02, b.d / 2))
            for sx in (-1.0, 1.0):
                xs = _ordered(sx * b.w / 2, sx * (b.w / 2 - trim))
                b.box(xs, (sill, b.h), z, "primary")
            b.box((-b.w / 2 + trim, b.w / 2 - trim), (b.h - trim, b.h), z, "primary")
    x0, x1 = -b.w / 2 + trim, b.w / 2 - trim
    bar = _clip(min(x1 - x0, b.h) * 0.045, 0.035, 0.06)
    z = (-fd / 2, fd / 2)
    _frame(b, (x0, x1), (0.0, b.h), z, bar)
    ix0, ix1, iy0, iy1 = x0 + bar, x1 - bar, bar, b.h - bar
    sash = bar * 0.6
    if "slider" in name:
        mid = (ix0 + ix1) / 2
        for k, (sx0, sx1) in enumerate(((ix0, mid + sash / 2), (mid - sash / 2, ix1))):
            zs = (-fd / 4 - 0.012, -fd / 4 + 0.012) if k == 0 else (fd / 4 - 0.012, fd / 4 + 0.012)
            _frame(b, (sx0, sx1), (iy0, iy1), zs, sash)
            b.box(
                (sx0 + sash, sx1 - sash),
                (iy0 + sash, iy1 - sash),
                (zs[0] + 0.008, zs[1] - 0.008),
                "glass",
            )
    elif "hung" in name:
        mid = (iy0 + iy1) / 2
        for k, (sy0, sy1) in enumerate(((iy0, mid + sash / 2), (mid - sash / 2, iy1))):
            zs = (fd / 4 - 0.012, fd / 4 + 0.012) if k == 0 else (-fd / 4 - 0.012, -fd / 4 + 0.012)
            _frame(b, (ix0, ix1), (sy0, sy1), zs, sash)
            b.box(
                (ix0 + sash, ix1 - sash),
                (sy0 + sash, sy1 - sash),
                (zs[0] + 0.008, zs[1] - 0.008),
                "glass",
            )
        if b.choice((True, False)):  # muntins in the upper sash
            cx = (ix0 + ix1) / 2
            b.box(
                (cx - 0.01, cx + 0.01),
                (mid + sash / 2, iy1 - sash),
                (-fd / 4 - 0.012, -fd / 4 + 0.012),
                "primary",
            )
    else:
        b.box((ix0, ix1), (iy0, iy1), (-0.004, 0.004), "glass")
        cols, rows = b.choice(((1, 1), (2, 1), (2, 2), (3, 2), (1, 2)))
        mt = min(0.025, bar * 0.6)
        for k in range(1, cols):
            cx = ix0 + (ix1 - ix0) * k / cols
            b.box((cx - mt / 2, cx + mt / 2), (iy0, iy1), (-0.012, 0.012), "primary")
        for k in range(1, rows):
            cy = iy0 + (iy1 - iy0) * k / rows
            b.box((ix0, ix1), (cy - mt / 2, cy + mt / 2), (-0.012, 0.012), "primary")


def _bay_window(b: ShapeBuilder) -> None:
    """Bay: the wall-side opening at +z, a pane group parallel to it at the back (-z) and two
    angled groups joining them; boards at the bottom (a seat) and the top."""
    board = min(0.06, b.h * 0.06)
    b.box((-b.w / 2, b.w / 2), (0.0, board), (-b.d / 2, b.d / 2), "primary")
    b.box((-b.w / 2, b.w / 2), (b.h - board, b.h), (-b.d / 2, b.d / 2), "primary")
    post = 0.05
    inset = min(b.d * 0.8, b.w * 0.22)
    cx1 = b.w / 2 - inset
    ys = (board, b.h - board)
    zb = (-b.d / 2, -b.d / 2 + post)
    for sx in (-1.0, 1.0):  # posts at the corners
        xs = _ordered(sx * cx1, sx * (cx1 - post))
        b.box(xs, ys, zb, "primary")
        xo = _ordered(sx * b.w / 2, sx * (b.w / 2 - post))
        b.box(xo, ys, (b.d / 2 - post, b.d / 2), "primary")
    b.box((-cx1 + post, cx1 - post), ys, (zb[0] + 0.02, zb[0] + 0.028), "glass")
    n_mull = b.choice((1, 2))
    for k in range(1, n_mull + 1):
        mx = -cx1 + 2 * cx1 * k / (n_mull + 1)
        b.box((mx - 0.02, mx + 0.02), ys, zb, "primary")
    rail_y = b.h * b.uniform(0.55, 0.7)
    b.box((-cx1, cx1), (rail_y - 0.02, rail_y + 0.02), zb, "primary")
    length = math.hypot(inset, b.d - post) - post
    yaw = math.degrees(math.atan2(inset, b.d - post))
    for sx in (-1.0, 1.0):
        c = (sx * (b.w / 2 - inset / 2 - post / 2), (ys[0] + ys[1]) / 2, 0.0)
        _tilted_box(b, c, (0.008, ys[1] - ys[0], length), (0.0, sx * yaw, 0.0), "glass")
        _tilted_box(b, (c[0], rail_y, 0.0), (0.04, 0.04, length), (0.0, sx * yaw, 0.0), "primary")
