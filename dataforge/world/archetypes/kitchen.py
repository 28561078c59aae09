"""Archetypes of food and kitchen things: fruit and vegetables, bread, eggs, tableware, cookware,
utensils, bottles and shakers.

Every archetype fits its parts to the asset's own box (``info.size``), so the proportions come from
the asset: a lying object (a knife, a loaf) runs along the longer of the box's horizontal axes
(:class:`~dataforge.world.archetypes.small_parts.LongAxis`), an upright one stands in the box.
Natural things whose colour says what they are (an apple, a tomato, a lettuce, an egg) give it
explicitly, varied per asset by ``builder.rng``; manufactured things paint their body with the
``primary`` role (the asset's materials). Containers get an ``interior`` surface at their inner
floor with the inner clearance; a plate a ``top`` a few millimetres above its bottom.
"""

from __future__ import annotations

import math
from typing import Any

from dataforge.world.archetypes import register
from dataforge.world.archetypes.small_parts import (
    DARK,
    RGB,
    STEM,
    LongAxis,
    add_cone,
    add_interior,
    add_ring,
    add_rod,
    add_turned_box,
    jitter_color,
    round_word,
    shade_color,
)
from dataforge.world.assets import AssetInfo
from dataforge.world.shapes import ShapeBuilder

# -- food ----------------------------------------------------------------------------------

APPLE_COLORS: tuple[RGB, ...] = (
    (182, 28, 36),
    (150, 22, 32),
    (198, 52, 38),
    (205, 70, 45),
    (128, 178, 62),
    (168, 190, 70),
    (210, 176, 62),
)


@register("Apple")
def apple(b: ShapeBuilder, info: AssetInfo) -> None:
    body_h = b.h * 0.9
    color = jitter_color(b, b.choice(APPLE_COLORS))
    b.describe(shape=round_word(b))
    b.sphere((0.0, body_h / 2.0, 0.0), (b.w / 2.0, body_h / 2.0, b.d / 2.0), color=color)
    r = max(min(b.w, b.d) * 0.035, 0.002)
    add_rod(b, (0.0, body_h * 0.85, 0.0), (b.w * 0.03, b.h, 0.0), r, color=STEM)
    if b.uniform(0, 1) < 0.4:  # a leaf by the stem
        leaf = (b.w * 0.14, b.h * 0.03, b.d * 0.07)
        b.sphere(
            (b.w * 0.12, body_h * 0.96, 0.0), leaf, color=(70, 130, 50), rotation=(0.0, 20.0, 15.0)
        )


@register("Tomato")
def tomato(b: ShapeBuilder, info: AssetInfo) -> None:
    color = jitter_color(b, b.choice(((200, 38, 28), (215, 55, 32), (180, 30, 26), (222, 70, 40))))
    b.describe(shape=round_word(b))
    body_h = b.h * 0.97
    b.sphere((0.0, body_h / 2.0, 0.0), (b.w / 2.0, body_h / 2.0, b.d / 2.0), color=color)
    green = (70, 120, 45)
    r = min(b.w, b.d)
    for k in range(3):  # the calyx: a star of sepals on top
        add_turned_box(
            b,
            (0.0, b.h * 0.975, 0.0),
            (r * 0.42, b.h * 0.04, r * 0.07),
            (0.0, 60.0 * k + 15.0, 0.0),
            color=green,
        )
    b.cylinder(0.0, 0.0, (body_h * 0.96, b.h), r * 0.04, color=green)


@register("Potato")
def potato(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    color = jitter_color(b, b.choice(((160, 118, 70), (176, 132, 80), (140, 100, 58))), 0.06)
    b.describe(shape="oval")  # a long lump and a smaller one
    main_s = -lf.L * b.uniform(0.06, 0.12)
    lf.sphere(main_s, b.h * 0.5, 0.0, lf.L * 0.4, b.h * 0.5, lf.A * 0.5, color=color)
    lump_s = lf.L * b.uniform(0.18, 0.26)
    c = lf.A * b.uniform(-0.08, 0.08)
    lf.sphere(
        lump_s, b.h * 0.46, c, lf.L * 0.3, b.h * 0.42, lf.A * 0.4, color=shade_color(color, 0.93)
    )


@register("Egg")
def egg(b: ShapeBuilder, info: AssetInfo) -> None:
    color = jitter_color(
        b, b.choice(((242, 236, 222), (214, 172, 122), (196, 146, 98), (232, 212, 178))), 0.04
    )
    b.describe(shape="oval")
    b.sphere((0.0, b.h * 0.42, 0.0), (b.w / 2.0, b.h * 0.42, b.d / 2.0), color=color)
    b.sphere((0.0, b.h * 0.56, 0.0), (b.w * 0.43, b.h * 0.44, b.d * 0.43), color=color)


@register("Lettuce")
def lettuce(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    outer = jitter_color(b, b.choice(((62, 132, 48), (78, 146, 56), (52, 116, 44))))
    inner = jitter_color(b, (160, 204, 96))
    b.describe(shape=round_word(b))
    lf.sphere(-lf.L * 0.05, b.h * 0.5, 0.0, lf.L * 0.45, b.h * 0.5, lf.A * 0.5, color=outer)
    lf.sphere(lf.L * 0.08, b.h * 0.52, 0.0, lf.L * 0.42, b.h * 0.4, lf.A * 0.4, color=inner)
    lf.rod(-lf.L / 2.0, -lf.L * 0.44, b.h * 0.5, min(lf.A, b.h) * 0.2, color=(214, 224, 170))


@register("Bread")
def bread(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    crust = jitter_color(b, b.choice(((196, 136, 70), (176, 112, 56), (210, 158, 92))))
    score = shade_color(crust, 1.35)
    if lf.L / lf.A < 1.25:  # a round loaf
        b.describe(shape="circular")
        r = min(b.w, b.d) / 2.0
        b.cylinder(0.0, 0.0, (0.0, b.h * 0.4), r * 0.96, color=shade_color(crust, 1.1))
        b.sphere((0.0, b.h / 2.0, 0.0), (b.w / 2.0, b.h / 2.0, b.d / 2.0), color=crust)
        for yaw in (45.0, 135.0):
            add_turned_box(
                b,
                (0.0, b.h * 0.985, 0.0),
                (r * 0.8, b.h * 0.03, r * 0.07),
                (0.0, yaw, 0.0),
                color=score,
            )
        return
    baguette = lf.L / lf.A > 2.2 and b.h < lf.A * 0.8
    b.describe(shape="elongated" if baguette else "oval")
    if not baguette:  # a flat bottom under the dome
        lf.cylinder(
            0.0, 0.0, (0.0, b.h * 0.4), lf.L * 0.47, lf.A * 0.47, color=shade_color(crust, 1.1)
        )
    lf.sphere(0.0, b.h / 2.0, 0.0, lf.L / 2.0, b.h / 2.0, lf.A / 2.0, color=crust)
    n = 3 if baguette else b.choice((2, 3, 4))
    for k in range(n):
        s = (k - (n - 1) / 2.0) * lf.L * (0.6 / n)
        f = s / (lf.L / 2.0)
        y = b.h / 2.0 + b.h / 2.0 * math.sqrt(max(1.0 - f * f, 0.0)) - b.h * 0.035
        lf.rbox(s, y, 0.0, (lf.L * 0.05, b.h * 0.06, lf.A * 0.4), yaw=25.0, color=score)


# -- tableware and kitchen -----------------------------------------------------------------


@register("Plate")
def plate(b: ShapeBuilder, info: AssetInfo) -> None:
    rx, rz = b.w / 2.0, b.d / 2.0
    well = b.uniform(0.58, 0.7)
    b.cylinder(0.0, 0.0, (0.0, b.h), rx * well, rz * well, taper=1.0 / well, open_top=True)
    floor = min(0.004, b.h * 0.35)
    b.cylinder(0.0, 0.0, (0.0, floor), rx * well * 1.02, rz * well * 1.02)
    tube = min(b.h * 0.45, min(rx, rz) * 0.12)
    rim_role = "secondary" if b.uniform(0, 1) < 0.3 else "primary"
    b.describe(shape="circular" if abs(b.w - b.d) < 0.1 * max(b.w, b.d) else "oval")
    if rim_role == "secondary":
        b.describe(print_or_design="a colored rim")
    add_ring(b, (0.0, b.h - tube / 2.0, 0.0), 2.0 * min(rx, rz), tube, "y", role=rim_role)
    if info.receptacle:
        b.surface(
            "top", floor, (-rx * well * 0.9, rx * well * 0.9), (-rz * well * 0.9, rz * well * 0.9)
        )


@register("Bowl")
def bowl(b: ShapeBuilder, info: AssetInfo) -> None:
    taper = b.uniform(1.35, 1.8)
    b.describe(shape="concave")
    rx, rz = b.w / 2.0 / taper, b.d / 2.0 / taper
    foot = b.h * 0.08
    b.cylinder(0.0, 0.0, (0.0, foot * 1.2), rx * 0.8, rz * 0.8)
    b.cylinder(0.0, 0.0, (foot, b.h), rx, rz, taper=taper, open_top=True)
    add_interior(b, info, foot, rx * 0.8, rz * 0.8)


@register("Cup")
def cup(b: ShapeBuilder, info: AssetInfo) -> None:
    handle = abs(b.w - b.d) / min(b.w, b.d) > 0.12
    lf = LongAxis(b)
    diameter = min(lf.A, lf.L * 0.8) if handle else min(b.w, b.d)
    taper = b.uniform(1.0, 1.3)
    r = diameter / 2.0 / taper
    s0 = -lf.L / 2.0 + diameter / 2.0 if handle else 0.0
    x, z = lf.xz(s0, 0.0)
    base = b.h * 0.06
    b.cylinder(x, z, (0.0, base), r)
    b.cylinder(x, z, (0.0, b.h), r, taper=taper, open_top=True)
    b.describe(shape="cylindrical")
    if b.uniform(0, 1) < 0.4:  # a coloured band
        b.describe(print_or_design="a band")
        y0, y1 = b.h * 0.55, b.h * 0.7
        rb = r * (1.0 + (taper - 1.0) * 0.55) * 1.03
        b.cylinder(
            x,
            z,
            (y0, y1),
            rb,
            taper=(r * (1.0 + (taper - 1.0) * 0.7) * 1.03) / rb,
            role="secondary",
        )
    if handle:
        _mug_handle(b, lf, s0 + diameter / 2.0 * 0.85, diameter / 2.0)
    add_interior(b, info, base, r * 0.75, r * 0.75, x, z)


def _mug_handle(b: ShapeBuilder, lf: LongAxis, s_edge: float, r: float) -> None:
    """A ring handle standing on the body's side at ``s_edge``, reaching the box's end."""
    outer = min(max(2.0 * (lf.L / 2.0 - s_edge), b.h * 0.35), b.h * 0.75)
    sc = lf.L / 2.0 - outer / 2.0
    tube = max(min(outer * 0.22, b.h * 0.1, r * 0.3), 0.003)
    axis = "z" if lf.axis == "x" else "x"
    add_ring(b, lf.pt(sc, b.h * 0.55), outer, tube, axis)


@register("Mug")
def mug(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    r = 0.5 * min(lf.A, lf.L * 0.8)
    s0 = -lf.L / 2.0 + r
    x, z = lf.xz(s0, 0.0)
    taper = b.choice((1.0, 1.0, 0.92))
    b.describe(shape="cylindrical")
    b.cylinder(x, z, (0.0, b.h), r, open_top=True, taper=taper)
    base = b.h * 0.06
    b.cylinder(x, z, (0.0, base), r * 0.98)
    _mug_handle(b, lf, s0 + r * 0.85, r)
    add_interior(b, info, base, r * 0.7, r * 0.7, x, z)


def _cookware(b: ShapeBuilder, info: AssetInfo, deep: bool) -> None:
    """A pan (shallow) or pot (deep): one long handle when the box is long, else two lugs."""
    lf = LongAxis(b)
    long_handle = lf.L / lf.A >= 1.4
    if long_handle:
        R = min(lf.A / 2.0, lf.L * 0.31)
        s0 = lf.L / 2.0 - R
    else:
        R = min(lf.A / 2.0, lf.L / 2.0 * 0.86)
        s0 = 0.0
    # a pan's handle may rise above its rim: a tall pan box is mostly handle
    shallow_h = b.h if b.h < 0.06 else max(0.045, b.h * 0.55)
    body_h = b.h * 0.97 if deep else shallow_h
    taper = 1.0 if deep else 1.12
    b.describe(shape="cylindrical" if deep else "concave")
    x, z = lf.xz(s0, 0.0)
    b.cylinder(x, z, (0.0, body_h), R / taper, taper=taper, open_top=True)
    floor = min(0.006, body_h * 0.1)
    b.cylinder(x, z, (0.0, floor), R / taper * 0.99)
    if long_handle:
        rh = max(min(b.h * 0.22, R * 0.08, 0.014), 0.004)
        y0 = body_h * 0.75 if not deep else body_h * 0.85
        y1 = min(b.h - rh, y0 + (lf.L / 2.0 - R) * 0.25)
        s_grip = -lf.L / 2.0 + rh + (lf.L / 2.0 - R) * 0.45
        lf.rod(s0 - R * 0.9, s_grip, y0, rh, y1=y0 + (y1 - y0) * 0.45)
        lf.rod(
            s_grip, -lf.L / 2.0 + rh, y0 + (y1 - y0) * 0.45, rh * 1.25, y1=y1, color=(38, 38, 40)
        )
    else:
        lug = max(lf.L / 2.0 - R, 0.006)
        y = (body_h * 0.78, body_h * 0.95)
        for sign in (-1.0, 1.0):
            s = (sign * (R * 0.9), sign * (R + lug))
            lf.box((min(s), max(s)), (-R * 0.22, R * 0.22), y, role="primary")
    add_interior(b, info, floor, R * 0.7, R * 0.7, x, z)


@register("Pan")
def pan(b: ShapeBuilder, info: AssetInfo) -> None:
    _cookware(b, info, deep=False)


@register("Pot")
def pot(b: ShapeBuilder, info: AssetInfo) -> None:
    _cookware(b, info, deep=True)


@register("Kettle")
def kettle(b: ShapeBuilder, info: AssetInfo) -> None:
    r = 0.5 * min(b.w * 0.9, b.d * 0.7)
    body_h = b.h * 0.62
    taper = 0.78
    b.describe(shape="conical")  # a narrowing body under a domed lid
    zc = -b.d / 2.0 + r + b.d * 0.03
    b.cylinder(0.0, zc, (0.0, body_h), r, taper=taper)
    rt = r * taper
    b.sphere((0.0, body_h, zc), (rt * 0.95, b.h * 0.07, rt * 0.95))
    b.sphere((0.0, body_h + b.h * 0.07, zc), (rt * 0.18, b.h * 0.04, rt * 0.18), color=DARK)
    # spout: from the lower front of the body up to the box's front
    rs = r * 0.16
    add_cone(
        b,
        (0.0, body_h * 0.35, zc + r * 0.8),
        (0.0, body_h * 1.05, b.d / 2.0 - rs * 0.6),
        rs,
        rs * 0.55,
    )
    # handle over the top, across x
    yc = body_h * 0.95
    outer = min(2.0 * (b.h - yc), rt * 2.0 * 1.1)
    yc = b.h - outer / 2.0
    add_ring(b, (0.0, yc, zc), outer, max(b.h * 0.05, 0.006), "z", color=DARK)


# -- utensils ------------------------------------------------------------------------------


def _flat(lf: LongAxis, b: ShapeBuilder) -> bool:
    """Whether a utensil lies flat (wider across than high) rather than on its edge."""
    return b.h <= lf.A


def _plate_piece(
    lf: LongAxis,
    b: ShapeBuilder,
    s: tuple[float, float],
    width: float,
    thick: float,
    y_mid: float,
    **kw,
) -> None:
    """A flat piece along ``s``: ``width`` in the utensil's wide direction, ``thick`` in its thin
    one (flat utensils: wide across, thin in y; edge-on ones: the other way round)."""
    if _flat(lf, b):
        lf.box(s, (-width / 2.0, width / 2.0), (y_mid - thick / 2.0, y_mid + thick / 2.0), **kw)
    else:
        lf.box(s, (-thick / 2.0, thick / 2.0), (y_mid - width / 2.0, y_mid + width / 2.0), **kw)


def _wide(lf: LongAxis, b: ShapeBuilder) -> tuple[float, float]:
    """(wide, thin) sizes of a utensil's box across its length."""
    return (lf.A, b.h) if _flat(lf, b) else (b.h, lf.A)


@register("Knife", "ButterKnife")
def knife(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    wide, thin = _wide(lf, b)
    L = lf.L
    butter = info.object_type == "ButterKnife"
    b.describe(shape="elongated")
    handle_end = -L / 2.0 + L * (0.42 if not butter else 0.4)
    flat = _flat(lf, b)
    # handle: a thick bar at the low / back side
    hw = wide * (0.55 if not butter else 0.75)
    hy = (b.h / 2.0) if flat else hw / 2.0
    _plate_piece(lf, b, (-L / 2.0, handle_end), hw, thin, hy)
    blade_w = wide * (0.95 if not butter else 0.7)
    by = (b.h / 2.0) if flat else b.h - blade_w / 2.0
    tip = L / 2.0 - L * 0.12
    _plate_piece(lf, b, (handle_end, tip), blade_w, thin * 0.35, by, role="metal")
    # the point: the spine side runs on, the edge side stops short
    if flat:
        lf.box(
            (tip, L / 2.0),
            (-blade_w / 2.0, 0.0),
            (b.h / 2.0 - thin * 0.17, b.h / 2.0 + thin * 0.17),
            role="metal",
        )
    else:
        lf.box(
            (tip, L / 2.0), (-thin * 0.17, thin * 0.17), (b.h - blade_w * 0.45, b.h), role="metal"
        )
    # bolster between handle and blade
    _plate_piece(
        lf,
        b,
        (handle_end - L * 0.02, handle_end + L * 0.01),
        hw * 1.05,
        thin * 0.8,
        hy,
        role="metal",
    )


@register("Fork")
def fork(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    wide, thin = _wide(lf, b)
    L = lf.L
    flat = _flat(lf, b)
    b.describe(shape="elongated")
    t = min(thin * 0.35, 0.004)
    yh = thin / 2.0 if not flat else b.h * 0.35
    # handle rising toward its end
    lf.rbox(
        -L * 0.2, yh + thin * 0.12, 0.0, (L * 0.58, t * 1.4, wide * 0.32), pitch=-3.0, role="metal"
    )
    head1 = L * 0.28
    _plate_piece(lf, b, (L * 0.08, head1), wide * 0.9, t, yh, role="metal")
    lf.box(
        (L * 0.05, L * 0.12),
        (-wide * 0.12, wide * 0.12),
        (yh - t / 2.0, yh + t / 2.0),
        role="metal",
    )
    n = 4
    for k in range(n):
        c = (k - (n - 1) / 2.0) * wide * 0.9 / n
        tw = wide * 0.9 / n * 0.5
        if flat:
            lf.box(
                (head1, L / 2.0),
                (c - tw / 2.0, c + tw / 2.0),
                (yh - t / 2.0, yh + t / 2.0),
                role="metal",
            )
        else:
            lf.box(
                (head1, L / 2.0),
                (-t / 2.0, t / 2.0),
                (yh + c - tw / 2.0, yh + c + tw / 2.0),
                role="metal",
            )


@register("Spoon")
def spoon(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    L = lf.L
    bowl_len = L * 0.3
    bowl_w = min(lf.A, bowl_len * 0.75)
    b.describe(shape="elongated")
    t = max(min(b.h * 0.2, 0.004), 0.0015)
    lf.sphere(
        L / 2.0 - bowl_len / 2.0,
        b.h * 0.3,
        0.0,
        bowl_len / 2.0,
        b.h * 0.3,
        bowl_w / 2.0,
        role="metal",
    )
    lf.rod(L / 2.0 - bowl_len * 0.95, -L / 2.0 + L * 0.04, b.h * 0.5, t, y1=b.h - t, role="metal")
    lf.sphere(-L / 2.0 + L * 0.07, b.h - t * 1.2, 0.0, L * 0.07, t * 1.2, lf.A * 0.22, role="metal")


@register("Ladle")
def ladle(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    L = lf.L
    r = min(lf.A / 2.0, L * 0.16)
    depth = min(b.h * 0.7, r * 1.1)
    b.describe(shape="elongated")
    s0 = L / 2.0 - r
    lf.cylinder(s0, 0.0, (0.0, depth), r * 0.62, taper=1.0 / 0.62, open_top=True, role="metal")
    t = max(min(b.h * 0.1, r * 0.15, 0.005), 0.002)
    lf.rod(s0 - r * 0.9, -L / 2.0 + t, depth * 0.95, t, y1=b.h - t, role="primary")
    lf.box(
        (-L / 2.0, -L / 2.0 + L * 0.15), (-t * 1.6, t * 1.6), (b.h - 2.2 * t, b.h), role="primary"
    )


@register("Spatula")
def spatula(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    L = lf.L
    head = L * 0.32
    t = max(min(b.h * 0.2, 0.004), 0.0015)
    b.describe(shape="elongated")
    # the head lies flat on the bottom, the handle rises from it
    lf.box((L / 2.0 - head, L / 2.0), (-lf.A / 2.0, lf.A / 2.0), (0.0, t), role="metal")
    for k in (-1, 0, 1):  # slots
        c = k * lf.A * 0.25
        lf.box(
            (L / 2.0 - head * 0.8, L / 2.0 - head * 0.15),
            (c - lf.A * 0.035, c + lf.A * 0.035),
            (t, t * 1.3),
            color=DARK,
        )
    rh = max(min(b.h * 0.3, lf.A * 0.12), 0.003)
    lf.rod(
        L / 2.0 - head,
        L / 2.0 - head - L * 0.12,
        t / 2.0 + rh / 2.0,
        rh * 0.6,
        y1=b.h * 0.55,
        role="metal",
    )
    lf.rod(L / 2.0 - head - L * 0.12, -L / 2.0 + rh, b.h * 0.55, rh, y1=b.h - rh)


# -- containers and bottles ----------------------------------------------------------------


def _bottle(
    b: ShapeBuilder,
    body: float,
    shoulder: float,
    neck_r: float,
    glass: RGB | None,
    cap: RGB,
    label: bool,
):
    """Body cylinder up to ``body`` x h, shoulder frustum up to ``shoulder`` x h, neck, cap."""
    r = min(b.w, b.d) / 2.0
    b.describe(shape="cylindrical")
    kw: dict[str, Any] = {"color": glass} if glass else {"role": "glass"}
    b.cylinder(0.0, 0.0, (0.0, b.h * body), r * 0.97, **kw)
    b.cylinder(0.0, 0.0, (b.h * body, b.h * shoulder), r * 0.97, taper=neck_r / r / 0.97, **kw)
    b.cylinder(0.0, 0.0, (b.h * shoulder, b.h * 0.93), neck_r, **kw)
    b.cylinder(0.0, 0.0, (b.h * 0.9, b.h), neck_r * 1.12, color=cap)
    if label:
        b.describe(print_or_design="a label")
        b.cylinder(0.0, 0.0, (b.h * body * 0.3, b.h * body * 0.8), r * 1.0, role="paper")


@register("Bottle")
def bottle(b: ShapeBuilder, info: AssetInfo) -> None:
    r = min(b.w, b.d) / 2.0
    glass = b.choice(((150, 190, 160), (120, 85, 50), (170, 200, 210)))
    _bottle(
        b,
        b.uniform(0.55, 0.62),
        0.75,
        r * 0.34,
        jitter_color(b, glass),
        (185, 185, 190),
        label=False,
    )
    # a label band just outside the body
    b.describe(print_or_design="a label")
    b.cylinder(0.0, 0.0, (b.h * 0.18, b.h * 0.42), r, role="paper")


@register("WineBottle")
def wine_bottle(b: ShapeBuilder, info: AssetInfo) -> None:
    r = min(b.w, b.d) / 2.0
    glass = jitter_color(b, b.choice(((40, 72, 44), (58, 40, 30), (30, 50, 36))))
    _bottle(b, 0.6, 0.7, r * 0.3, glass, (110, 24, 36), label=True)


def _shaker(b: ShapeBuilder, content: RGB) -> None:
    r = min(b.w, b.d) / 2.0
    body = b.h * 0.72
    b.describe(shape="cylindrical")
    b.cylinder(0.0, 0.0, (0.0, body), r, taper=b.uniform(0.85, 1.0), color=content)
    b.cylinder(0.0, 0.0, (body, b.h * 0.86), r * 0.82, role="metal")
    b.sphere((0.0, b.h * 0.86, 0.0), (r * 0.82, b.h * 0.14, r * 0.82), role="metal")


@register("SaltShaker")
def salt_shaker(b: ShapeBuilder, info: AssetInfo) -> None:
    _shaker(b, (236, 236, 232))


@register("PepperShaker")
def pepper_shaker(b: ShapeBuilder, info: AssetInfo) -> None:
    _shaker(b, (58, 52, 46))


@register("SoapBottle")
def soap_bottle(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    flat = abs(b.w - b.d) / min(b.w, b.d) > 0.25
    body_h = b.h * b.uniform(0.62, 0.72)
    pump = b.uniform(0, 1) < 0.7
    b.describe(shape="cuboidal" if flat else "cylindrical")
    if flat:  # a flat bottle: a box with a rounded shoulder
        e = min(0.0015, lf.A * 0.02)
        lf.box((-lf.L * 0.48, lf.L * 0.48), (-lf.A / 2.0 + e, lf.A / 2.0 - e), (0.0, body_h))
        lf.cylinder(
            0.0, 0.0, (body_h, body_h + b.h * 0.08), lf.L * 0.48, lf.A / 2.0 - e, taper=0.45
        )
        neck_r = min(lf.A, lf.L) * 0.2
    else:
        r = min(b.w, b.d) / 2.0
        b.cylinder(0.0, 0.0, (0.0, body_h), r * 0.97)
        b.cylinder(0.0, 0.0, (body_h, body_h + b.h * 0.08), r * 0.97, taper=0.45)
        neck_r = r * 0.35
    top = body_h + b.h * 0.08
    b.cylinder(0.0, 0.0, (top, top + b.h * 0.06), neck_r, role="plastic")
    if pump:
        y0 = top + b.h * 0.06
        b.cylinder(0.0, 0.0, (y0, b.h * 0.93), neck_r * 0.45, role="plastic")
        b.cylinder(0.0, 0.0, (b.h * 0.9, b.h), neck_r * 0.9, role="plastic")
        nr = min(neck_r * 0.3, b.h * 0.02)
        lf.rod(neck_r * 0.5, lf.L / 2.0 - nr, b.h * 0.95, nr, role="plastic")
    else:
        b.cylinder(0.0, 0.0, (top + b.h * 0.05, b.h), neck_r * 1.15, role="plastic")
    if b.uniform(0, 1) < 0.5:  # a label: on the front of a flat bottle, round a round one
        b.describe(print_or_design="a label")
        ys = (body_h * 0.25, body_h * 0.75)
        if flat:
            lf.box((-lf.L * 0.35, lf.L * 0.35), (lf.A / 2.0 - 0.002, lf.A / 2.0), ys, role="paper")
        else:
            b.cylinder(0.0, 0.0, ys, min(b.w, b.d) / 2.0, role="paper")


@register("SprayBottle")
def spray_bottle(b: ShapeBuilder, info: AssetInfo) -> None:
    # body at the back, trigger head reaching the front (+z) or +x, whichever is longer
    lf = LongAxis(b)
    rb_c = lf.A / 2.0
    rb_s = min(lf.L * 0.32, max(rb_c * 1.3, lf.L * 0.25))
    s0 = -lf.L / 2.0 + rb_s
    body_h = b.h * 0.68
    b.describe(shape="cylindrical")  # the body under the trigger head
    lf.cylinder(s0, 0.0, (0.0, body_h), rb_s, rb_c)
    lf.cylinder(s0, 0.0, (body_h, body_h + b.h * 0.05), rb_s, rb_c, taper=0.55)
    neck = min(rb_s, rb_c) * 0.55
    y0 = body_h + b.h * 0.05
    lf.cylinder(s0, 0.0, (y0, b.h * 0.8), neck, role="plastic")
    # the sprayer: a cap over the neck and a nose reaching the front
    c = min(rb_c * 0.55, neck)
    lf.cylinder(s0, 0.0, (b.h * 0.8, b.h), neck * 1.1, role="secondary")
    lf.box((s0, lf.L / 2.0), (-c, c), (b.h * 0.82, b.h * 0.93), role="secondary")
    lf.box(
        (lf.L / 2.0 - lf.L * 0.03, lf.L / 2.0),
        (-c * 0.6, c * 0.6),
        (b.h * 0.85, b.h * 0.9),
        color=DARK,
    )
    s_t = s0 + (lf.L / 2.0 - s0) * 0.5
    lf.rbox(s_t, b.h * 0.76, 0.0, (lf.L * 0.05, b.h * 0.12, c * 1.2), pitch=-15.0, role="secondary")
