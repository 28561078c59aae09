"""Archetypes of the other small objects: vases, boxes, paper goods, electronics and gadgets,
stationery, books, cleaning things, textiles, sports gear, decor.

As in ``kitchen``, parts are fitted to the asset's own box and a lying object runs along the
longer horizontal axis. Receptacles get support surfaces: a carton's inside (opened first when the
box is openable), a footstool's ``top``.
"""

from __future__ import annotations

import math
from typing import Any

from dataforge.world.archetypes import register
from dataforge.world.archetypes.small_parts import (
    CARDBOARD,
    DARK,
    WHITE,
    AxialFrame,
    LongAxis,
    add_cone,
    add_interior,
    add_ring,
    add_rod,
    add_turned_box,
    flat_word,
    jitter_color,
    shade_color,
)
from dataforge.world.assets import AssetInfo
from dataforge.world.shapes import ShapeBuilder


@register("Vase")
def vase(b: ShapeBuilder, info: AssetInfo) -> None:
    rx, rz = b.w / 2.0, b.d / 2.0
    aspect = b.h / min(b.w, b.d)
    if aspect < 0.6:  # a flat vase: a squat bulb with a small mouth
        b.describe(shape="bulbous")
        b.sphere((0.0, b.h * 0.45, 0.0), (rx, b.h * 0.45, rz))
        b.cylinder(0.0, 0.0, (b.h * 0.75, b.h), rx * 0.3, rz * 0.3, taper=1.25, open_top=True)
        return
    kind = (
        b.choice(("bulb", "bulb", "straight", "amphora"))
        if aspect > 1.15
        else b.choice(("bulb", "open"))
    )
    if "Open" in info.asset_id:
        kind = "open"
    # a widening open cone, a slightly flared cylinder, a double cone, a bulb under a neck
    words = {"open": "conical", "straight": "cylindrical", "amphora": "diamond"}
    b.describe(shape=words.get(kind, "bulbous"))
    if kind == "open":
        taper = b.uniform(1.25, 1.5)
        b.cylinder(0.0, 0.0, (0.0, b.h * 0.08), rx / taper * 0.9, rz / taper * 0.9)
        b.cylinder(0.0, 0.0, (b.h * 0.06, b.h), rx / taper, rz / taper, taper=taper, open_top=True)
    elif kind == "straight":
        b.cylinder(0.0, 0.0, (0.0, b.h * 0.9), rx * 0.82, rz * 0.82, taper=b.uniform(1.05, 1.2))
        b.cylinder(0.0, 0.0, (b.h * 0.9, b.h), rx * 0.7, rz * 0.7, open_top=True)
    elif kind == "amphora":
        mid = b.h * 0.55
        b.cylinder(0.0, 0.0, (0.0, mid), rx * 0.5, rz * 0.5, taper=2.0)
        b.cylinder(0.0, 0.0, (mid, b.h * 0.85), rx, rz, taper=0.35)
        b.cylinder(0.0, 0.0, (b.h * 0.84, b.h), rx * 0.35, rz * 0.35, taper=1.4, open_top=True)
    else:
        bulb = b.h * (0.62 if aspect > 1.15 else 0.8)
        b.sphere((0.0, bulb / 2.0, 0.0), (rx, bulb / 2.0, rz))
        b.cylinder(0.0, 0.0, (bulb * 0.8, b.h * 0.92), rx * 0.32, rz * 0.32)
        b.cylinder(0.0, 0.0, (b.h * 0.9, b.h), rx * 0.32, rz * 0.32, taper=1.5, open_top=True)


@register("Box")
def box(b: ShapeBuilder, info: AssetInfo) -> None:
    b.describe(shape="cuboidal")
    if not info.openable:  # a decorative box: open, with a band round its top
        b.describe(print_or_design="a band")
        band = b.h * 0.85
        b.box((-b.w / 2, b.w / 2), (0.0, band), (-b.d / 2, b.d / 2), open_top=True)
        b.box(
            (-b.w / 2, b.w / 2), (band, b.h), (-b.d / 2, b.d / 2), role="secondary", open_top=True
        )
        wall = min(b.w, b.d) * 0.03
        add_interior(b, info, 0.005, b.w / 2 - wall, b.d / 2 - wall)
        return
    e = 0.002
    b.box((-b.w / 2, b.w / 2), (0.0, b.h - e), (-b.d / 2 + e, b.d / 2 - e))
    # the flaps' seam along the longer side, under tape running down the front and back
    b.describe(print_or_design="tape")
    tape = jitter_color(b, b.choice(((205, 170, 110), (215, 205, 185), (150, 110, 70))), 0.05)
    seam = min(b.w, b.d) * 0.005
    tw = min(b.w, b.d) * 0.16
    along_z = b.d >= b.w
    if along_z:
        b.box((-tw / 2, tw / 2), (b.h - e, b.h), (-b.d / 2, b.d / 2), color=tape)
        for zs in (-1.0, 1.0):
            z = (zs * (b.d / 2 - e), zs * b.d / 2)
            b.box((-tw / 2, tw / 2), (b.h * 0.72, b.h), (min(z), max(z)), color=tape)
        b.box(
            (-seam, seam), (b.h - e * 0.5, b.h), (-b.d / 2, b.d / 2), color=shade_color(tape, 0.6)
        )
    else:
        b.box((-b.w / 2, b.w / 2), (b.h - e, b.h), (-tw / 2, tw / 2), color=tape)
        b.box((-b.w / 2, b.w / 2), (b.h * 0.72, b.h), (b.d / 2 - e, b.d / 2), color=tape)
        b.box((-b.w / 2, b.w / 2), (b.h * 0.72, b.h), (-b.d / 2, -b.d / 2 + e), color=tape)
        b.box(
            (-b.w / 2, b.w / 2), (b.h - e * 0.5, b.h), (-seam, seam), color=shade_color(tape, 0.6)
        )
    wall = min(b.w, b.d) * 0.03
    add_interior(b, info, 0.005, b.w / 2 - wall, b.d / 2 - wall, needs_open=info.openable)


@register("TissueBox")
def tissue_box(b: ShapeBuilder, info: AssetInfo) -> None:
    body = b.h * 0.8
    b.describe(shape="cuboidal")
    b.box((-b.w / 2, b.w / 2), (0.0, body), (-b.d / 2, b.d / 2))
    b.box((-b.w * 0.25, b.w * 0.25), (body, body + 0.001), (-b.d * 0.12, b.d * 0.12), color=DARK)
    b.sphere(
        (0.0, body, 0.0), (b.w * 0.2, b.h - body, b.d * 0.14), color=WHITE, rotation=(0.0, 0.0, 8.0)
    )


@register("Candle")
def candle(b: ShapeBuilder, info: AssetInfo) -> None:
    r = min(b.w, b.d) / 2.0
    wick = (45, 38, 32)
    b.describe(shape="cylindrical")
    if b.w > 0.08 and b.h > 2.2 * b.w:  # a glass holder on a stem with a candle in its cup
        b.cylinder(0.0, 0.0, (0.0, b.h * 0.04), r * 0.8, role="glass")
        b.cylinder(0.0, 0.0, (b.h * 0.04, b.h * 0.6), r * 0.16, role="glass")
        b.cylinder(
            0.0, 0.0, (b.h * 0.58, b.h * 0.8), r * 0.7, taper=1.4, role="glass", open_top=True
        )
        b.cylinder(0.0, 0.0, (b.h * 0.6, b.h * 0.94), r * 0.42)
        b.cylinder(0.0, 0.0, (b.h * 0.94, b.h), r * 0.05, color=wick)
        return
    top = b.h - max(min(b.h * 0.08, 0.012), 0.004)
    b.cylinder(0.0, 0.0, (0.0, top), r, taper=1.0 if r > 0.015 else 0.9)
    b.cylinder(0.0, 0.0, (top, b.h), max(r * 0.08, 0.001), color=wick)


@register("ToiletPaper")
def toilet_paper(b: ShapeBuilder, info: AssetInfo) -> None:
    r = min(b.w, b.d) / 2.0
    b.describe(shape="cylindrical")
    if r < 0.03:  # used up: the cardboard core alone
        b.cylinder(0.0, 0.0, (0.0, b.h), r, color=CARDBOARD, open_top=True)
        b.cylinder(0.0, 0.0, (0.0, b.h * 0.06), r, color=(90, 70, 50))
        return
    b.cylinder(0.0, 0.0, (0.0, b.h * 0.99), r, role="paper")
    b.cylinder(0.0, 0.0, (0.0, b.h), r * 0.38, color=CARDBOARD, open_top=True)
    b.cylinder(0.0, 0.0, (0.0, b.h * 0.9), r * 0.36, color=(90, 70, 50))


@register("PaperTowelRoll")
def paper_towel_roll(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    r = lf.A / 2.0
    s0 = -lf.L / 2.0 + r
    b.describe(shape="cylindrical")
    lf.cylinder(s0, 0.0, (0.0, b.h * 0.985), r, role="paper")
    lf.cylinder(s0, 0.0, (0.0, b.h), r * 0.32, color=CARDBOARD)
    # the loose sheet hanging from the roll
    lf.box((s0 + r * 0.6, lf.L / 2.0), (-r * 0.9, r * 0.9), (b.h * 0.12, b.h * 0.9), role="paper")


@register("AluminumFoil")
def aluminum_foil(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    r = min(b.h, lf.A) * 0.42
    end = lf.L * 0.02
    for s0 in (-lf.L / 2.0, lf.L / 2.0 - end):  # the roll's ends show past the carton
        lf.rod(s0, s0 + end, b.h / 2.0, r, role="metal")
    lf.box((-lf.L / 2.0 + end, lf.L / 2.0 - end), (-lf.A / 2.0, lf.A / 2.0), (0.0, b.h))
    lf.box(
        (-lf.L * 0.45, lf.L * 0.45),
        (lf.A / 2.0 - 0.001, lf.A / 2.0),
        (b.h * 0.55, b.h * 0.95),
        role="metal",
    )


# -- electronics and small things ----------------------------------------------------------


@register("CellPhone")
def cell_phone(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    body = b.h * 0.8
    b.describe(shape="rectangular")
    lf.box((-lf.L / 2.0, lf.L / 2.0), (-lf.A / 2.0, lf.A / 2.0), (0.0, body))
    keyboard = "blackberry" in info.asset_id.lower()
    s_lo = -lf.L * 0.05 if keyboard else -lf.L * 0.44
    lf.box((s_lo, lf.L * 0.42), (-lf.A * 0.44, lf.A * 0.44), (body, b.h), role="screen")
    if keyboard:
        lf.box(
            (-lf.L * 0.44, -lf.L * 0.1),
            (-lf.A * 0.42, lf.A * 0.42),
            (body, b.h * 0.95),
            role="secondary",
        )


@register("Laptop")
def laptop(b: ShapeBuilder, info: AssetInfo) -> None:
    t = min(max(b.h * 0.06, 0.012), 0.025)
    tl = t * 0.55
    b.describe(shape="rectangular")
    best: tuple[float, float, float, float] | None = None
    for k in range(12, 71):  # a lean of 6 to 35 degrees: the base about as deep as the lid
        a = math.radians(k * 0.5)
        lid = (b.h - t * 0.6 - tl * math.sin(a)) / math.cos(a)
        base = b.d - lid * math.sin(a) - tl * math.cos(a)
        err = abs(base / lid - 0.92)
        if best is None or err < best[0]:
            best = (err, a, lid, base)
    assert best is not None
    _, a, lid, base = best
    base = max(base, b.d * 0.4)
    z0 = b.d / 2.0 - base
    b.box((-b.w / 2, b.w / 2), (0.0, t), (z0, b.d / 2))
    kb = (40, 40, 44)
    b.box(
        (-b.w * 0.42, b.w * 0.42), (t, t + 0.0015), (z0 + base * 0.07, z0 + base * 0.52), color=kb
    )
    b.box(
        (-b.w * 0.13, b.w * 0.13),
        (t, t + 0.0015),
        (z0 + base * 0.6, z0 + base * 0.9),
        role="secondary",
    )
    ca, sa = math.cos(a), math.sin(a)
    cy = b.h - (lid / 2.0 * ca + tl / 2.0 * sa)
    cz = -b.d / 2.0 + lid / 2.0 * sa + tl / 2.0 * ca
    lw = b.w * 0.98
    add_turned_box(b, (0.0, cy, cz), (lw, lid, tl), (-math.degrees(a), 0.0, 0.0))
    ts = 0.0015
    off = tl / 2.0 + ts / 2.0  # along the lid's front normal (0, sin a, cos a)
    up = lid * 0.03  # toward the lid's top (0, cos a, -sin a)
    center = (0.0, cy + off * sa + up * ca, cz + off * ca - up * sa)
    add_turned_box(
        b, center, (lw * 0.9, lid * 0.84, ts), (-math.degrees(a), 0.0, 0.0), role="screen"
    )


@register("RemoteControl")
def remote_control(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    body = b.h * 0.78
    b.describe(shape="rectangular", print_or_design="buttons")
    lf.box((-lf.L / 2.0, lf.L / 2.0), (-lf.A / 2.0, lf.A / 2.0), (0.0, body))
    L, A = lf.L, lf.A
    lf.box((L * 0.36, L * 0.43), (-A * 0.12, A * 0.12), (body, b.h), color=(190, 40, 36))
    lf.cylinder(L * 0.18, 0.0, (body, b.h * 0.95), A * 0.22, color=(150, 150, 155))
    btn = (175, 175, 180)
    for row in range(3):
        s = -L * 0.05 - row * L * 0.1
        for col in (-1, 1):
            c = col * A * 0.18
            lf.box((s - L * 0.03, s + L * 0.03), (c - A * 0.1, c + A * 0.1), (body, b.h), color=btn)


@register("AlarmClock")
def alarm_clock(b: ShapeBuilder, info: AssetInfo) -> None:
    digital = b.w > 1.35 * b.h or b.uniform(0, 1) < 0.25
    face = (240, 238, 228)
    if digital:
        b.describe(shape="cuboidal", print_or_design="digits")
        b.box((-b.w / 2, b.w / 2), (0.0, b.h * 0.94), (-b.d / 2, b.d / 2 - 0.002))
        b.box(
            (-b.w / 2 * 0.96, b.w / 2 * 0.96),
            (b.h * 0.9, b.h),
            (-b.d * 0.4, b.d * 0.4),
            role="secondary",
        )
        b.box(
            (-b.w * 0.38, b.w * 0.38),
            (b.h * 0.25, b.h * 0.75),
            (b.d / 2 - 0.002, b.d / 2),
            role="screen",
        )
        digit = b.choice(((255, 70, 50), (90, 255, 120), (120, 200, 255)))
        for k in range(4):
            x = -b.w * 0.27 + k * b.w * 0.18 + (b.w * 0.03 if k >= 2 else 0.0)
            b.box(
                (x - b.w * 0.05, x + b.w * 0.05),
                (b.h * 0.35, b.h * 0.65),
                (b.d / 2 - 0.0025, b.d / 2),
                color=digit,
            )
        return
    round_body = b.uniform(0, 1) < 0.65
    b.describe(shape="cylindrical" if round_body else "cuboidal", print_or_design="a clock face")
    feet = b.h * 0.08
    if round_body:
        R = min(b.w / 2.0 * 0.82, (b.h - feet) / 2.0 * 0.82)
        yc = feet + R
        b.hcylinder("z", (0.0, yc, -b.d * 0.1), b.d * 0.7, R)
        fz = b.d * 0.25
        b.hcylinder("z", (0.0, yc, fz + b.d * 0.05), b.d * 0.1, R * 0.82, color=face)
        for side in (-1.0, 1.0):
            b.sphere(
                (side * R * 0.62, yc + R * 0.92, -b.d * 0.05),
                (R * 0.32, R * 0.26, R * 0.32),
                role="metal",
            )
            b.cylinder(side * R * 0.55, -b.d * 0.05, (0.0, feet * 1.2), R * 0.12, role="metal")
        hz = fz + b.d * 0.1
    else:
        b.box((-b.w / 2, b.w / 2), (0.0, b.h), (-b.d / 2, b.d / 2 - b.d * 0.08))
        R = min(b.w, b.h) * 0.36
        yc = b.h / 2.0
        b.hcylinder("z", (0.0, yc, b.d / 2 - b.d * 0.05), b.d * 0.1, R, color=face)
        hz = b.d / 2
    th = max(R * 0.05, 0.0015)
    z = (hz - 0.002, hz)
    b.box((-th, th), (yc, yc + R * 0.65), z, color=DARK)
    b.box((0.0, R * 0.45), (yc - th, yc + th), z, color=DARK)


@register("Watch")
def watch(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    r = min(lf.A * 0.5, lf.L * 0.25)
    case_y = (b.h * 0.55, b.h * 0.85)
    b.describe(shape="circular")  # a round case on a band
    b.cylinder(0.0, 0.0, case_y, r, role="metal")
    b.cylinder(0.0, 0.0, (case_y[1], b.h), r * 0.85, color=(236, 234, 226))
    band_w = r * 1.3
    arm = lf.L / 2.0 - r * 0.6
    drop = b.h * 0.5
    pitch = math.degrees(math.atan2(drop, arm))
    t = max(b.h * 0.1, 0.002)
    for sign in (-1.0, 1.0):
        s = sign * (r * 0.6 + arm / 2.0)
        lf.rbox(
            s,
            b.h * 0.72 - drop / 2.0,
            0.0,
            (math.hypot(arm, drop), t, band_w),
            pitch=-sign * pitch,
            role="secondary",
        )
    lf.box(
        (-lf.L / 2.0, -lf.L / 2.0 + lf.L * 0.06),
        (-band_w / 2, band_w / 2),
        (0.0, b.h * 0.2),
        role="metal",
    )


@register("KeyChain")
def key_chain(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    ring = min(lf.A * 0.9, lf.L * 0.35)
    b.describe(shape="irregular")  # a ring and keys
    s_ring = -lf.L / 2.0 + ring / 2.0
    tube = min(b.h, ring * 0.12)
    add_ring(b, lf.pt(s_ring, tube / 2.0), ring, tube, "y", role="metal")
    n = 2 if lf.A > 0.05 else 1
    t = max(b.h * 0.4, 0.0015)
    for k in range(n):
        c = 0.0 if n == 1 else (k - 0.5) * lf.A * 0.45
        head_r = min(lf.A / (2 * n) * 0.85, lf.L * 0.09)
        s_head = s_ring + ring * 0.45 + head_r
        color = (196, 170, 88) if k == 0 else (180, 182, 186)
        lf.cylinder(s_head, c, (0.0, t), head_r, color=color)
        lf.box(
            (s_head, lf.L / 2.0 - k * lf.L * 0.08),
            (c - head_r * 0.35, c + head_r * 0.35),
            (0.0, t * 0.8),
            color=color,
        )
    if b.uniform(0, 1) < 0.5:  # a fob
        lf.box(
            (s_ring - ring * 0.3, s_ring + ring * 0.3),
            (-lf.A / 2.0, -lf.A / 2.0 + lf.A * 0.25),
            (0.0, b.h),
        )


@register("CD")
def cd(b: ShapeBuilder, info: AssetInfo) -> None:
    r = min(b.w, b.d) / 2.0
    b.describe(shape="circular", print_or_design="circular pattern")  # rings round the hub
    b.cylinder(0.0, 0.0, (0.0, b.h * 0.7), r, color=(206, 208, 218))
    b.cylinder(0.0, 0.0, (b.h * 0.7, b.h * 0.95), r * 0.9)
    b.cylinder(0.0, 0.0, (b.h * 0.7, b.h), r * 0.16, color=(150, 152, 160))
    b.cylinder(0.0, 0.0, (b.h * 0.95, b.h), r * 0.07, color=DARK)


@register("CreditCard")
def credit_card(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    b.describe(shape="rectangular", print_or_design="a chip and a stripe")
    lf.box((-lf.L / 2.0, lf.L / 2.0), (-lf.A / 2.0, lf.A / 2.0), (0.0, b.h * 0.75))
    lf.box(
        (-lf.L * 0.38, -lf.L * 0.22),
        (-lf.A * 0.05, lf.A * 0.2),
        (b.h * 0.75, b.h),
        color=(212, 178, 86),
    )
    lf.box(
        (-lf.L * 0.4, lf.L * 0.3),
        (-lf.A * 0.32, -lf.A * 0.24),
        (b.h * 0.75, b.h * 0.9),
        role="secondary",
    )


@register("Pen")
def pen(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    r = min(lf.A, b.h) / 2.0
    L = lf.L
    y = r
    b.describe(shape="cylindrical")
    lf.rod(-L / 2.0, L * 0.32, y, r)
    lf.rod(L * 0.32, L * 0.42, y, r * 0.9, role="plastic")
    lf.cone(L * 0.42, L / 2.0, y, r * 0.8, r * 0.15, role="metal")
    if b.h > lf.A * 1.2:  # the clip rides on top
        lf.box((-L * 0.45, -L * 0.2), (-r * 0.35, r * 0.35), (2 * r * 0.9, b.h), role="metal")
    else:
        lf.box((-L * 0.45, -L * 0.2), (-r * 0.3, r * 0.3), (r, 2 * r), role="metal")


@register("Pencil")
def pencil(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    r = min(lf.A, b.h) / 2.0
    L = lf.L
    y = r
    b.describe(shape="cylindrical")
    lf.rod(-L / 2.0, -L / 2.0 + L * 0.05, y, r * 0.95, color=(226, 140, 150))
    lf.rod(-L / 2.0 + L * 0.05, -L / 2.0 + L * 0.09, y, r, role="metal")
    lf.rod(-L / 2.0 + L * 0.09, L / 2.0 - L * 0.1, y, r)
    lf.cone(L / 2.0 - L * 0.1, L / 2.0 - L * 0.025, y, r, r * 0.3, color=(222, 190, 145))
    lf.cone(L / 2.0 - L * 0.025, L / 2.0, y, r * 0.3, r * 0.05, color=(50, 50, 52))


@register("Newspaper")
def newspaper(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    L, A = lf.L, lf.A
    paper = (222, 218, 204)
    f = min(b.h / 2.0, A * 0.1)
    b.describe(shape="rectangular", print_or_design="lines")  # a headline bar, a picture, lines
    lf.box((-L / 2.0, L / 2.0), (-A / 2.0 + f, A / 2.0), (0.0, b.h * 0.5), color=paper)
    lf.box(
        (-L * 0.49, L * 0.49),
        (-A / 2.0 + f, A * 0.48),
        (b.h * 0.5, b.h * 0.96),
        color=shade_color(paper, 1.05),
    )
    lf.rod(-L / 2.0, L / 2.0, f, f, c=-A / 2.0 + f, color=paper)
    ink = (150, 148, 142)
    top = (b.h * 0.96, b.h)
    lf.box((-L * 0.42, L * 0.42), (A * 0.28, A * 0.4), top, color=(45, 45, 48))
    lf.box((-L * 0.42, -L * 0.05), (-A * 0.3, A * 0.2), top, color=(120, 122, 128))
    for k in range(4):
        c = -A * 0.3 + k * A * 0.13
        lf.box((L * 0.02, L * 0.42), (c, c + A * 0.06), top, color=ink)


@register("Book")
def book(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)  # the spine runs along the longer side, at -across
    L, A = lf.L, lf.A
    t = min(max(b.h * 0.12, 0.0015), 0.004)
    band = b.uniform(0, 1) < 0.5
    b.describe(shape="cuboidal", print_or_design="a band" if band else None)
    lf.box((-L / 2.0, L / 2.0), (-A / 2.0, A / 2.0), (0.0, t))
    lf.box((-L / 2.0, L / 2.0), (-A / 2.0, A / 2.0), (b.h - t, b.h - (t * 0.3 if band else 0.0)))
    lf.box((-L / 2.0, L / 2.0), (-A / 2.0, -A / 2.0 + t * 1.5), (t, b.h - t))
    e = min(0.004, A * 0.02)
    lf.box((-L / 2.0 + e, L / 2.0 - e), (-A / 2.0 + t, A / 2.0 - e), (t, b.h - t), role="paper")
    if band:  # a band across the cover
        lf.box((-L * 0.3, -L * 0.2), (-A / 2.0, A / 2.0), (b.h - t, b.h), role="secondary")


@register("SoapBar")
def soap_bar(b: ShapeBuilder, info: AssetInfo) -> None:
    b.describe(shape="oval")  # a puffy rounded slab
    _rounded_slab(b, seam=False)


@register("DishSponge")
def dish_sponge(b: ShapeBuilder, info: AssetInfo) -> None:
    b.describe(shape="cuboidal")
    b.box((-b.w / 2, b.w / 2), (0.0, b.h * 0.7), (-b.d / 2, b.d / 2), color=(238, 206, 72))
    b.box((-b.w / 2, b.w / 2), (b.h * 0.7, b.h), (-b.d / 2, b.d / 2), color=(52, 128, 64))


@register("ScrubBrush")
def scrub_brush(b: ShapeBuilder, info: AssetInfo) -> None:
    r = min(b.w, b.d) / 2.0
    if b.h > 1.5 * max(b.w, b.d):  # a toilet brush standing in its holder
        cup = b.h * 0.34
        b.cylinder(0.0, 0.0, (0.0, cup), r, taper=0.9, open_top=True)
        b.cylinder(0.0, 0.0, (0.0, cup * 0.9), r * 0.8, color=WHITE)
        b.cylinder(0.0, 0.0, (cup * 0.8, b.h * 0.96), r * 0.1, role="secondary")
        b.sphere((0.0, b.h * 0.96, 0.0), (r * 0.18, b.h * 0.04, r * 0.18), role="secondary")
        return
    lf = LongAxis(b)
    lf.box((-lf.L / 2.0, lf.L / 2.0), (-lf.A / 2.0, lf.A / 2.0), (b.h * 0.4, b.h))
    lf.box(
        (-lf.L * 0.46, lf.L * 0.46),
        (-lf.A * 0.44, lf.A * 0.44),
        (0.0, b.h * 0.4),
        color=(236, 226, 200),
    )


@register("Cloth")
def cloth(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    L, A = lf.L, lf.A
    if b.h > 0.15 * min(L, A):  # crumpled: soft lumps
        b.describe(shape="irregular")
        lf.sphere(-L * 0.15, b.h * 0.45, 0.0, L * 0.36, b.h * 0.45, A * 0.48)
        lf.sphere(L * 0.22, b.h * 0.5, A * 0.05, L * 0.28, b.h * 0.5, A * 0.4)
        lf.box((-L * 0.48, L * 0.45), (-A * 0.46, A * 0.46), (0.0, b.h * 0.15))
        return
    half = b.h / 2.0
    b.describe(shape="rectangular")  # folded flat
    lf.box((-L / 2.0, L / 2.0), (-A / 2.0, A / 2.0 - half), (0.0, half))
    lf.box(
        (-L * 0.48, L * 0.48),
        (-A / 2.0 + A * 0.08, A / 2.0 - half),
        (half, b.h),
        role="secondary" if b.uniform(0, 1) < 0.3 else "primary",
    )
    lf.rod(-L / 2.0, L / 2.0, half, half, c=A / 2.0 - half)


def _hanging_towel(b: ShapeBuilder) -> None:
    r = b.d / 2.0
    b.describe(shape="rectangular", print_or_design="stripes")
    b.box((-b.w * 0.48, b.w * 0.48), (0.0, b.h - r), (-b.d * 0.42, b.d * 0.42))
    b.hcylinder("x", (0.0, b.h - r, 0.0), b.w * 0.97, r)
    for y in (0.08, 0.14):
        b.box(
            (-b.w * 0.48, b.w * 0.48),
            (b.h * y, b.h * (y + 0.03)),
            (-b.d / 2, b.d / 2),
            role="secondary",
        )


@register("Towel", "HandTowel")
def towel(b: ShapeBuilder, info: AssetInfo) -> None:
    if b.h > 2.0 * min(b.w, b.d) and b.d < b.w:
        _hanging_towel(b)
    else:
        cloth(b, info)


def _rounded_slab(b: ShapeBuilder, seam: bool = True, **kw: Any) -> None:
    """A puffy rounded square (a cushion, a soap bar): two crossed ellipsoids on a seam."""
    y = b.h / 2.0
    b.sphere((0.0, y, 0.0), (b.w / 2.0, y, b.d * 0.44), **kw)
    b.sphere((0.0, y, 0.0), (b.w * 0.44, y, b.d / 2.0), **kw)
    if seam:
        b.box((-b.w * 0.44, b.w * 0.44), (b.h * 0.44, b.h * 0.56), (-b.d * 0.44, b.d * 0.44), **kw)


@register("Pillow")
def pillow(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    L, A = lf.L, lf.A
    if abs(b.h - A) < 0.15 * A and L > 1.5 * A:  # a bolster
        b.describe(shape="cylindrical")
        r = min(b.h, A) / 2.0
        lf.rod(-L / 2.0 + L * 0.03, L / 2.0 - L * 0.03, r, r)
        for sign in (-1.0, 1.0):
            s = sign * (L / 2.0 - L * 0.015)
            lf.rod(s - L * 0.015, s + L * 0.015, r, r * 0.85, role="secondary")
        return
    b.describe(shape=flat_word(b))
    _rounded_slab(b)
    if b.uniform(0, 1) < 0.35:  # a button in the middle
        b.sphere(
            (0.0, b.h * 0.97, 0.0),
            (min(b.w, b.d) * 0.04, b.h * 0.03, min(b.w, b.d) * 0.04),
            role="secondary",
        )


@register("Boots")
def boots(b: ShapeBuilder, info: AssetInfo) -> None:
    sole = (40, 34, 30)
    half = b.w / 2.0
    bw = half * 0.9
    foot_h = min(b.h * 0.22, 0.11)
    shaft_d = b.d * 0.45
    for side in (-1.0, 1.0):
        x0 = side * half / 2.0 + b.uniform(-0.005, 0.005)
        xs = (x0 - bw / 2.0, x0 + bw / 2.0)
        b.box(xs, (0.0, b.h * 0.02), (-b.d / 2, b.d / 2 - bw * 0.3), color=sole)
        b.cylinder(x0, -b.d / 2 + shaft_d / 2.0, (b.h * 0.02, b.h), bw / 2.0, shaft_d / 2.0)
        b.box(xs, (b.h * 0.02, foot_h), (-b.d / 2, b.d / 2 - bw / 2.0))
        b.cylinder(x0, b.d / 2 - bw / 2.0, (0.0, foot_h * 0.85), bw / 2.0)
        b.cylinder(
            x0,
            -b.d / 2 + shaft_d / 2.0,
            (b.h * 0.93, b.h),
            bw / 2.0 * 1.0,
            shaft_d / 2.0,
            role="secondary",
        )


# -- sport and decor -----------------------------------------------------------------------


@register("BaseballBat")
def baseball_bat(b: ShapeBuilder, info: AssetInfo) -> None:
    ax = AxialFrame(b)
    L, R = ax.L, ax.R * 0.95
    ax.seg(0.0, L * 0.03, R * 0.85, R)
    ax.seg(L * 0.03, L * 0.4, R, R * 0.95)
    ax.seg(L * 0.4, L * 0.8, R * 0.95, R * 0.36)
    ax.seg(L * 0.8, L * 0.96, R * 0.36, R * 0.33, color=(40, 40, 42))
    ax.seg(L * 0.96, L, R * 0.55, R * 0.5)


@register("Dumbbell")
def dumbbell(b: ShapeBuilder, info: AssetInfo) -> None:
    ax = AxialFrame(b)
    L, R = ax.L, ax.R
    b.describe(shape="elongated")  # two weights on a bar
    ax.seg(0.0, L, R * 0.17, role="metal")
    for t0, t1 in ((0.0, L * 0.24), (L * 0.76, L)):
        ax.seg(t0, t1, R)
    for t0 in (L * 0.24, L * 0.73):
        ax.seg(t0, t0 + L * 0.03, R * 0.45, role="metal")


@register("BasketBall")
def basketball(b: ShapeBuilder, info: AssetInfo) -> None:
    r = min(b.w, b.h, b.d) / 2.0
    b.describe(shape="spherical", print_or_design="lines")  # two dark seams
    b.sphere(
        (0.0, b.h / 2.0, 0.0),
        (r * 0.985, r * 0.985, r * 0.985),
        color=jitter_color(b, (204, 98, 38), 0.05),
    )
    seam = (38, 30, 26)
    add_ring(b, (0.0, b.h / 2.0, 0.0), 2.0 * r, r * 0.05, "y", color=seam)
    add_ring(b, (0.0, b.h / 2.0, 0.0), 2.0 * r, r * 0.05, "x", color=seam)


@register("TennisRacket")
def tennis_racket(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    L, A = lf.L, lf.A
    head = min(A, L * 0.45)
    tube = max(min(b.h * 0.7, head * 0.07), 0.004)
    sc = L / 2.0 - head / 2.0
    y = b.h / 2.0
    add_ring(b, lf.pt(sc, y), head, tube, "y")
    strings = head / 2.0 - tube * 0.9
    lf.cylinder(sc, 0.0, (y - 0.001, y + 0.001), strings, color=(232, 230, 214))
    throat = sc - head / 2.0 + tube * 0.3
    s_grip = throat - L * 0.18
    for c in (-1.0, 1.0):
        add_rod(b, lf.pt(throat + tube, y, c * head * 0.2), lf.pt(s_grip, y, 0.0), tube * 0.45)
    lf.rod(s_grip, -L / 2.0, y, tube * 0.6, color=(40, 40, 44))


@register("Footstool")
def footstool(b: ShapeBuilder, info: AssetInfo) -> None:
    seat_h = b.h * b.uniform(0.3, 0.42)
    top = b.h - seat_h
    frame = seat_h * 0.3
    round_seat = abs(b.w - b.d) < 0.1 * max(b.w, b.d) and b.uniform(0, 1) < 0.5
    if round_seat:
        r = min(b.w, b.d) / 2.0
        b.cylinder(0.0, 0.0, (top, top + frame), r * 0.97, role="wood")
        b.cylinder(0.0, 0.0, (top + frame * 0.8, b.h - seat_h * 0.2), r, role="fabric")
        b.sphere((0.0, b.h - seat_h * 0.2, 0.0), (r * 0.99, seat_h * 0.2, r * 0.99), role="fabric")
        leg_at = [(r * 0.62 * math.cos(a), r * 0.62 * math.sin(a)) for a in (0.8, 2.4, 3.9, 5.5)]
    else:
        b.box((-b.w * 0.48, b.w * 0.48), (top, top + frame), (-b.d * 0.48, b.d * 0.48), role="wood")
        y = (top + frame * 0.8, b.h - seat_h * 0.2)
        b.box((-b.w / 2, b.w / 2), y, (-b.d / 2, b.d / 2), role="fabric")
        b.sphere(
            (0.0, b.h - seat_h * 0.2, 0.0), (b.w * 0.49, seat_h * 0.2, b.d * 0.49), role="fabric"
        )
        leg_at = [(sx * b.w * 0.4, sz * b.d * 0.4) for sx in (-1, 1) for sz in (-1, 1)]
    lr = min(b.w, b.d) * 0.06
    taper = b.choice((1.0, 0.7))
    for x, z in leg_at:
        b.cylinder(x, z, (0.0, top), lr * taper, taper=1.0 / taper, role="wood")
    if info.receptacle:
        hw, hd = b.w * 0.42, b.d * 0.42
        b.surface("top", b.h, (-hw, hw), (-hd, hd))


def _figure(b: ShapeBuilder, base_h: float) -> None:
    """A standing figure on a plinth: legs/robe, torso, head, arms."""
    w, d = b.w, b.d
    fh = b.h - base_h
    r = min(w, d) * 0.3
    head_r = min(fh * 0.09, min(w, d) * 0.22)
    b.cylinder(0.0, 0.0, (base_h, base_h + fh * 0.5), r, taper=0.8)
    b.cylinder(0.0, 0.0, (base_h + fh * 0.5, base_h + fh * 0.8), r * 0.8, taper=0.8)
    b.sphere((0.0, b.h - head_r, 0.0), (head_r, head_r, head_r))
    ar = r * 0.22
    y_sh = base_h + fh * 0.77
    wave = b.uniform(0, 1) < 0.5
    for side in (-1.0, 1.0):
        sx = side * r * 0.85
        if wave and side > 0:
            add_rod(b, (sx, y_sh, 0.0), (min(w / 2 - ar, sx + r * 0.6), b.h - ar, 0.0), ar)
        else:
            add_rod(
                b, (sx, y_sh, 0.0), (side * min(w / 2 - ar, r * 1.1), base_h + fh * 0.45, 0.0), ar
            )


@register("Statue")
def statue(b: ShapeBuilder, info: AssetInfo) -> None:
    aid = info.asset_id.lower()
    base_h = b.h * 0.08
    if "dog" in aid or (b.w > 1.15 * b.h and "hand" not in aid):  # an animal on four legs
        b.describe(shape="animal")
        lf = LongAxis(b)
        L, A = lf.L, lf.A
        leg_h = b.h * 0.4
        lf.sphere(-L * 0.05, leg_h + b.h * 0.15, 0.0, L * 0.33, b.h * 0.17, A * 0.36)
        hr = min(b.h * 0.16, A * 0.45)
        lf.sphere(L * 0.3, b.h - hr, 0.0, hr * 1.05, hr, hr * 0.9)
        lf.sphere(L / 2.0 - hr * 0.6, b.h - hr * 1.4, 0.0, hr * 0.6, hr * 0.45, hr * 0.45)
        for s in (-L * 0.28, L * 0.16):
            for c in (-A * 0.22, A * 0.22):
                lf.cylinder(s, c, (0.0, leg_h + b.h * 0.05), min(A * 0.1, L * 0.05))
        lf.rod(-L * 0.36, -L / 2.0 + A * 0.05, leg_h + b.h * 0.2, A * 0.05, y1=b.h * 0.75)
        return
    if "hand" in aid or b.h < 0.6 * min(b.w, b.d):  # a low sculpture: slab and a hand-like form
        b.describe(shape="hand")
        lf = LongAxis(b)
        L, A = lf.L, lf.A
        b.box((-b.w / 2, b.w / 2), (0.0, base_h * 1.5), (-b.d / 2, b.d / 2), role="secondary")
        lf.sphere(-L * 0.15, b.h * 0.4, 0.0, L * 0.25, b.h * 0.3, A * 0.35)
        for k in range(4):
            c = (k - 1.5) * A * 0.17
            lf.rod(
                L * 0.05,
                L * 0.45 - abs(k - 1.5) * L * 0.05,
                b.h * 0.45,
                min(A * 0.07, b.h * 0.15),
                c=c,
                y1=b.h * 0.35,
            )
        return
    r = min(b.w, b.d) / 2.0
    b.cylinder(0.0, 0.0, (0.0, base_h), r, role="secondary")
    if "fertility" in aid or "towel" in aid:  # rounded stacked forms
        b.describe(shape="bulbous")
        b.sphere(
            (0.0, base_h + (b.h - base_h) * 0.3, 0.0), (r * 0.85, (b.h - base_h) * 0.3, r * 0.85)
        )
        b.sphere(
            (0.0, base_h + (b.h - base_h) * 0.68, 0.0), (r * 0.6, (b.h - base_h) * 0.18, r * 0.6)
        )
        b.sphere((0.0, b.h - (b.h - base_h) * 0.1, 0.0), (r * 0.4, (b.h - base_h) * 0.1, r * 0.4))
        return
    b.describe(shape="human")
    _figure(b, base_h)


@register("TableTopDecor")
def table_top_decor(b: ShapeBuilder, info: AssetInfo) -> None:
    tray = min(b.h * 0.15, 0.02)
    b.describe(shape="irregular")  # a tray with a ball, a candle and a block on it
    b.box((-b.w / 2, b.w / 2), (0.0, tray), (-b.d / 2, b.d / 2), role="wood")
    r = min(b.w, b.d) * 0.2
    b.sphere((-b.w * 0.22, tray + r * 0.8, 0.0), (r, r * 0.8, r), role="ceramic")
    b.cylinder(b.w * 0.12, -b.d * 0.15, (tray, b.h), r * 0.5, role="secondary")
    b.box((b.w * 0.2, b.w * 0.42), (tray, tray + (b.h - tray) * 0.45), (b.d * 0.05, b.d * 0.35))


@register("TeddyBear")
def teddy_bear(b: ShapeBuilder, info: AssetInfo) -> None:
    fur = jitter_color(b, b.choice(((150, 100, 60), (196, 150, 100), (120, 80, 50))), 0.05)
    w, h, d = b.w, b.h, b.d
    body_r = min(w * 0.28, h * 0.28)
    b.sphere((0.0, h * 0.3, -d * 0.1), (body_r, h * 0.3, d * 0.32), color=fur)
    hr = min(h * 0.2, w * 0.2)
    hy = h - hr - h * 0.04
    b.sphere((0.0, hy, -d * 0.05), (hr, hr, hr * 0.95), color=fur)
    b.sphere(
        (0.0, hy - hr * 0.25, -d * 0.05 + hr * 0.85),
        (hr * 0.4, hr * 0.3, hr * 0.3),
        color=shade_color(fur, 1.35),
    )
    b.sphere(
        (0.0, hy - hr * 0.1, -d * 0.05 + hr * 1.08), (hr * 0.12, hr * 0.1, hr * 0.08), color=DARK
    )
    for side in (-1.0, 1.0):
        b.hcylinder(
            "z", (side * hr * 0.75, h - hr * 0.32, -d * 0.05), hr * 0.3, hr * 0.32, color=fur
        )
        add_rod(
            b,
            (side * body_r * 0.5, h * 0.12, d * 0.0),
            (side * w * 0.3, h * 0.1, d / 2 - h * 0.1),
            h * 0.1,
            color=fur,
        )
        add_rod(
            b,
            (side * body_r * 0.8, h * 0.5, -d * 0.1),
            (side * (w / 2 - h * 0.07), h * 0.3, d * 0.1),
            h * 0.07,
            color=fur,
        )


@register("WateringCan")
def watering_can(b: ShapeBuilder, info: AssetInfo) -> None:
    lf = LongAxis(b)
    L, A = lf.L, lf.A
    r = min(A / 2.0, L * 0.3)
    s0 = -L / 2.0 + r
    body_h = b.h * 0.6
    lf.cylinder(s0, 0.0, (0.0, body_h), r)
    lf.cylinder(s0, 0.0, (body_h, body_h + b.h * 0.05), r, taper=0.7)
    rs = r * 0.13
    tip = (L / 2.0 - rs * 2.0, b.h * 0.85)
    add_cone(b, lf.pt(s0 + r * 0.7, body_h * 0.25), lf.pt(tip[0], tip[1]), rs * 1.3, rs * 0.9)
    add_cone(
        b,
        lf.pt(tip[0] - rs, tip[1] - rs * 0.5),
        lf.pt(L / 2.0, tip[1] + rs * 0.5),
        rs,
        rs * 2.0,
        role="secondary",
    )
    outer = min(2.0 * r * 0.9, (b.h - body_h) * 2.0 * 0.95)
    axis = "z" if lf.axis == "x" else "x"
    add_ring(b, lf.pt(s0, b.h - outer / 2.0), outer, max(r * 0.1, 0.006), axis)


@register("Plunger")
def plunger(b: ShapeBuilder, info: AssetInfo) -> None:
    rubber = jitter_color(b, b.choice(((150, 30, 30), (40, 40, 42), (190, 60, 40))), 0.05)
    cup = b.h * 0.15
    b.cylinder(0.0, 0.0, (0.0, cup * 0.35), b.w / 2.0, b.d / 2.0, color=rubber)
    b.sphere((0.0, cup, 0.0), (b.w / 2.0 * 0.95, cup, b.d / 2.0 * 0.95), color=rubber)
    r = min(b.w, b.d) * 0.09
    b.cylinder(0.0, 0.0, (cup * 1.6, b.h * 0.97), r, role="wood")
    b.sphere((0.0, b.h - r * 1.2, 0.0), (r * 1.4, r * 1.2, r * 1.4), role="wood")
