"""Furniture archetypes: tables, seating, beds, storage, counters, large appliances.

Proportions are typical of real furniture (a seat 0.42-0.48 m up, a worktop 4 cm thick, drawer
fronts 15-25 cm high), scaled down where the asset's box is smaller. The front is local +z.
Sub-receptacles: drawers (``Drawer_k``), cupboards (``Cabinet_k``), shelf boards (``Shelf_k``)
and basins (``SinkBasin``), numbered from the top left, left to right then downwards.
Appliances with a door (fridge, microwave, safe, washer, dryer) hold things only inside, as
AI2-THOR's receptacle trigger boxes do: their tops are not surfaces.

CounterTop shapes follow the asset name: ``Countertop_I_*`` and ``Countertop_Island_*`` are
straight runs, ``Countertop_L_*`` is a run along the back (local -z) plus an arm along the
right side (+x), ``Countertop_C_*`` a run along the back plus arms on both sides, all 61 cm deep
(the depth of every ``I`` counter). Evidence: the 14 children of ``Countertop_L_4x4`` in
``procthor_train_1.json`` lie only on the back run and the right arm, the 8 of
``Countertop_C_10x6`` in ``house_746.json`` only on the back run and both arms.
"""

from __future__ import annotations

from dataforge.world.archetypes import register
from dataforge.world.assets import AssetInfo
from dataforge.world.shapes import Motion, ShapeBuilder

COUNTER_DEPTH = 0.611  # m: the depth of every straight ProcTHOR counter
WORKTOP = 0.04
PANEL = 0.018  # carcass board thickness
FRONT = 0.02  # drawer / door front thickness
HANDLE = 0.015
DRAWER_TRAVEL = 0.7  # an open drawer comes out this share of its depth
NORMALS = {"+z": (0.0, 1.0), "-z": (0.0, -1.0), "+x": (1.0, 0.0), "-x": (-1.0, 0.0)}


# -- helpers ---------------------------------------------------------------------------------


def legs(
    b: ShapeBuilder,
    top: float,
    inset: float,
    size: float,
    role: str = "primary",
    round_: bool = False,
    x: tuple[float, float] | None = None,
    z: tuple[float, float] | None = None,
) -> None:
    """Four legs from the floor to ``top`` at the corners (inset from the box edges)."""
    x0, x1 = x or (-b.w / 2, b.w / 2)
    z0, z1 = z or (-b.d / 2, b.d / 2)
    for lx in (x0 + inset + size / 2, x1 - inset - size / 2):
        for lz in (z0 + inset + size / 2, z1 - inset - size / 2):
            if round_:
                b.cylinder(lx, lz, (0.0, top), size / 2, role=role)
            else:
                b.box(
                    (lx - size / 2, lx + size / 2), (0.0, top), (lz - size / 2, lz + size / 2), role
                )


def front_panel(
    b: ShapeBuilder,
    x: tuple[float, float],
    y: tuple[float, float],
    z_face: float,
    element: str | None,
    *,
    facing: str = "+z",
    hinge: str | None = None,
) -> None:
    """A drawer (no ``hinge``) or door front on a carcass face at ``z_face`` (or x for
    side-facing runs) with a handle: a bar across a drawer, a vertical bar near the opening edge
    of a door. ``x`` is the range along the face, whichever axis that is."""
    gap = 0.004
    x0, x1 = x[0] + gap, x[1] - gap
    y0, y1 = y[0] + gap, y[1] - gap
    sign = 1.0 if facing[0] == "+" else -1.0
    across_face = facing[1] == "x"  # the face's own x runs along the asset's z

    def put(
        along: tuple[float, float], up: tuple[float, float], across: tuple[float, float], role: str
    ) -> None:
        if across_face:
            b.box(across, up, along, role, element=element, moves=True)
        else:
            b.box(along, up, across, role, element=element, moves=True)

    inner, outer = sorted((z_face - sign * FRONT, z_face))
    hz = z_face - sign * HANDLE / 2  # handle recessed into the front's thickness (inside the box)
    put((x0, x1), (y0, y1), (inner, outer), "primary")
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    if hinge is None:  # drawer: horizontal bar across the middle
        length = min((x1 - x0) * 0.4, 0.25)
        axis, centre = ("z", (hz, cy, cx)) if across_face else ("x", (cx, cy, hz))
        b.hcylinder(axis, centre, length, 0.008, role="metal", element=element, moves=True)
    else:  # door: vertical bar near the edge away from the hinge
        hx = x1 - 0.05 if hinge == "left" else x0 + 0.05
        length = min((y1 - y0) * 0.35, 0.3)
        hy = y1 - length / 2 - 0.05 if y1 - y0 > 0.5 else cy
        put(
            (hx - 0.008, hx + 0.008),
            (hy - length / 2, hy + length / 2),
            (hz - 0.008, hz + 0.008),
            "metal",
        )


def hinge_motion(along: tuple[float, float], face: float, facing: str, hinge: str) -> Motion:
    """A door on a face at ``face`` (z, or x for side-facing runs) spanning ``along``, hinged
    at its ``left`` (lower ``along``) or ``right`` edge, swinging out toward its normal."""
    normal = NORMALS[facing]
    at = along[0] if hinge == "left" else along[1]
    u = 1.0 if hinge == "left" else -1.0  # from the hinge toward the free edge, along the face
    ux, uz = (0.0, u) if facing[1] == "x" else (u, 0.0)
    pivot = (face, at) if facing[1] == "x" else (at, face)
    swing = 1.0 if ux * normal[1] - uz * normal[0] > 0 else -1.0
    return Motion("hinge", normal, pivot=pivot, swing=swing)


def drawer(
    b: ShapeBuilder,
    name: str,
    x: tuple[float, float],
    y: tuple[float, float],
    z: tuple[float, float],
    facing: str = "+z",
) -> None:
    """A drawer: front with a handle at the front face, an interior usable when open."""
    b.element(name, "Drawer")
    depth = (z[1] - z[0]) if facing[1] == "z" else (x[1] - x[0])
    b.motion(name, Motion("slide", NORMALS[facing], travel=DRAWER_TRAVEL * depth))
    if facing[1] == "z":
        face = z[1] if facing[0] == "+" else z[0]
        front_panel(b, x, y, face, name, facing=facing)
        inner_x, inner_z = (x[0] + 0.03, x[1] - 0.03), (z[0] + 0.03, z[1] - 0.05)
    else:
        face = x[1] if facing[0] == "+" else x[0]
        front_panel(b, z, y, face, name, facing=facing)
        inner_x, inner_z = (x[0] + 0.05, x[1] - 0.03), (z[0] + 0.03, z[1] - 0.03)
    depth = y[1] - y[0]
    b.surface(
        "interior",
        y[0] + 0.02,
        inner_x,
        inner_z,
        clearance=max(depth - 0.04, 0.01),
        element=name,
        needs_open=True,
    )


def cupboard(
    b: ShapeBuilder,
    name: str,
    x: tuple[float, float],
    y: tuple[float, float],
    z: tuple[float, float],
    facing: str = "+z",
    hinge: str = "left",
    shelves: int = 1,
) -> None:
    """A cupboard: a door with a handle, an interior floor and ``shelves`` inner boards."""
    b.element(name, "Cabinet")
    if facing[1] == "z":
        face = z[1] if facing[0] == "+" else z[0]
        front_panel(b, x, y, face, name, facing=facing, hinge=hinge)
        b.motion(name, hinge_motion(x, face, facing, hinge))
    else:
        face = x[1] if facing[0] == "+" else x[0]
        front_panel(b, z, y, face, name, facing=facing, hinge=hinge)
        b.motion(name, hinge_motion(z, face, facing, hinge))
    inner_x, inner_z = (x[0] + PANEL, x[1] - PANEL), (z[0] + PANEL, z[1] - FRONT - 0.01)
    if facing[1] == "x":
        inner_x, inner_z = (x[0] + FRONT, x[1] - FRONT), (z[0] + PANEL, z[1] - PANEL)
    levels = [
        y[0] + PANEL + (y[1] - y[0] - 2 * PANEL) * k / (shelves + 1) for k in range(shelves + 1)
    ]
    tops = [*levels[1:], y[1] - PANEL]
    for k, (lo, hi) in enumerate(zip(levels, tops, strict=True)):
        if k > 0:
            b.box(inner_x, (lo - PANEL, lo), inner_z, "secondary", element=name)
        b.surface(
            "interior", lo, inner_x, inner_z, clearance=hi - lo, element=name, needs_open=True
        )


def plinth(b: ShapeBuilder, height: float, inset: float = 0.04, role: str = "secondary") -> None:
    b.box(
        (-b.w / 2 + inset, b.w / 2 - inset), (0.0, height), (-b.d / 2 + 0.01, b.d / 2 - inset), role
    )


# -- tables ----------------------------------------------------------------------------------


@register("DiningTable", "CoffeeTable", name="table")
def table(b: ShapeBuilder, info: AssetInfo) -> None:
    top = min(WORKTOP, b.h * 0.12)
    b.box((-b.w / 2, b.w / 2), (b.h - top, b.h), (-b.d / 2, b.d / 2), "primary")
    b.surface("top", b.h, (-b.w / 2, b.w / 2), (-b.d / 2, b.d / 2))
    style = b.choice(("legs", "legs", "round legs", "pedestal")) if b.w < 1.6 else "legs"
    if style == "pedestal":
        r = min(b.w, b.d) * 0.3
        b.cylinder(0.0, 0.0, (0.0, 0.03), r, role="secondary")
        b.cylinder(0.0, 0.0, (0.03, b.h - top), min(r * 0.35, 0.08), role="secondary")
    else:
        size = min(0.07, min(b.w, b.d) * 0.1)
        legs(b, b.h - top, size * 0.5, size, "secondary", round_=style == "round legs")
    if info.object_type == "CoffeeTable" and b.uniform(0, 1) < 0.5 and b.h > 0.3:
        y = b.h * 0.25
        b.box((-b.w / 2 + 0.05, b.w / 2 - 0.05), (y - 0.02, y), (-b.d / 2 + 0.05, b.d / 2 - 0.05))
        b.surface(
            "shelf",
            y,
            (-b.w / 2 + 0.08, b.w / 2 - 0.08),
            (-b.d / 2 + 0.08, b.d / 2 - 0.08),
            clearance=b.h - top - y,
        )


@register("SideTable", "Desk", name="table_with_drawers")
def table_with_drawers(b: ShapeBuilder, info: AssetInfo) -> None:
    """A top on legs or panels, drawers under the top (a pedestal for wide desks), an optional
    lower shelf; a tall desk gets a hutch of shelves at the back."""
    work = min(b.h, 0.78) if info.object_type == "Desk" else b.h
    top = min(0.035, work * 0.1)
    hutch = info.object_type == "Desk" and b.h > 1.1
    b.box((-b.w / 2, b.w / 2), (work - top, work), (-b.d / 2, b.d / 2), "primary")
    zf = b.d / 2 - 0.01
    z_front = zf
    b.surface("top", work, (-b.w / 2, b.w / 2), (-b.d / 2 + (0.3 if hutch else 0.0), b.d / 2))
    leg = min(0.05, b.w * 0.08)
    if b.w > 1.0:  # desk-like: a drawer pedestal on one side, a panel on the other
        side = b.choice((-1.0, 1.0))
        pw = min(0.45, b.w * 0.35)
        px = (side * b.w / 2 - (pw if side > 0 else -pw), side * b.w / 2)
        px = (min(px), max(px))
        b.box(px, (0.0, work - top), (-b.d / 2 + 0.02, z_front - FRONT), "secondary")
        n = max(2, min(4, int((work - top) / 0.2)))
        hgt = (work - top) / n
        for k in range(n):
            y1 = work - top - k * hgt
            drawer(b, f"Drawer_{k + 1}", px, (y1 - hgt, y1), (-b.d / 2 + 0.05, z_front))
        ox = (-side * b.w / 2, -side * (b.w / 2 - PANEL * 2))
        b.box((min(ox), max(ox)), (0.0, work - top), (-b.d / 2 + 0.02, b.d / 2 - 0.02), "secondary")
    else:
        legs(b, work - top, 0.01, leg, "secondary")
        dh = min(0.14, (work - top) * 0.3)
        drawer(
            b,
            "Drawer_1",
            (-b.w / 2 + leg + 0.01, b.w / 2 - leg - 0.01),
            (work - top - dh, work - top),
            (-b.d / 2 + leg, zf),
        )
        if b.uniform(0, 1) < 0.6 and work > 0.35:
            y = work * 0.2
            b.box((-b.w / 2 + leg, b.w / 2 - leg), (y - 0.02, y), (-b.d / 2 + leg, b.d / 2 - leg))
            b.surface(
                "shelf",
                y,
                (-b.w / 2 + leg, b.w / 2 - leg),
                (-b.d / 2 + leg, b.d / 2 - leg),
                clearance=work - top - dh - y,
            )
    if hutch:
        n = 2
        for s in (-1, 1):
            b.box(
                (s * b.w / 2 - (PANEL if s > 0 else 0), s * b.w / 2 + (0 if s > 0 else PANEL)),
                (work, b.h),
                (-b.d / 2, -b.d / 2 + 0.3),
                "primary",
            )
        b.box((-b.w / 2, b.w / 2), (work, b.h), (-b.d / 2, -b.d / 2 + 0.01), "secondary")
        for k in range(n):
            y = work + (b.h - work) * (k + 1) / (n + 1)
            b.element(f"Shelf_{k + 1}", "Shelf")
            b.box(
                (-b.w / 2 + PANEL, b.w / 2 - PANEL),
                (y - PANEL, y),
                (-b.d / 2 + 0.01, -b.d / 2 + 0.3),
                "primary",
                element=f"Shelf_{k + 1}",
            )
            b.surface(
                "shelf",
                y,
                (-b.w / 2 + PANEL, b.w / 2 - PANEL),
                (-b.d / 2 + 0.01, -b.d / 2 + 0.3),
                clearance=(b.h - work) / (n + 1) - PANEL,
                element=f"Shelf_{k + 1}",
            )
        b.box((-b.w / 2, b.w / 2), (b.h - PANEL, b.h), (-b.d / 2, -b.d / 2 + 0.3), "primary")
        b.surface("top", b.h, (-b.w / 2, b.w / 2), (-b.d / 2, -b.d / 2 + 0.3))


# -- seating and beds ------------------------------------------------------------------------


@register("Chair", name="chair")
def chair(b: ShapeBuilder, info: AssetInfo) -> None:
    seat = min(0.47, b.h * 0.52)
    t = min(0.05, seat * 0.12)
    back = min(0.06, b.d * 0.12)
    b.box((-b.w / 2, b.w / 2), (seat - t, seat), (-b.d / 2, b.d / 2), "primary")
    b.surface("seat", seat, (-b.w / 2 + 0.02, b.w / 2 - 0.02), (-b.d / 2 + back, b.d / 2 - 0.02))
    size = min(0.045, b.w * 0.1)
    legs(b, seat - t, 0.01, size, "secondary", round_=b.uniform(0, 1) < 0.4)
    # Back: two posts and a panel (or slats), over the rear edge.
    for s in (-1, 1):
        x = s * (b.w / 2 - size / 2 - 0.01)
        b.box((x - size / 2, x + size / 2), (seat, b.h), (-b.d / 2, -b.d / 2 + back), "secondary")
    if b.uniform(0, 1) < 0.5:
        b.box(
            (-b.w / 2 + 0.02, b.w / 2 - 0.02),
            (seat + (b.h - seat) * 0.4, b.h),
            (-b.d / 2, -b.d / 2 + back * 0.7),
            "primary",
        )
    else:
        for k in range(3):
            y = seat + (b.h - seat) * (0.35 + 0.22 * k)
            b.box(
                (-b.w / 2 + 0.02, b.w / 2 - 0.02),
                (y, y + 0.05),
                (-b.d / 2, -b.d / 2 + back * 0.7),
                "primary",
            )


@register("Stool", "Ottoman", "DogBed", name="stool")
def stool(b: ShapeBuilder, info: AssetInfo) -> None:
    if info.object_type == "DogBed":
        b.box((-b.w / 2, b.w / 2), (0.0, b.h * 0.35), (-b.d / 2, b.d / 2), "fabric")
        b.torus((0.0, b.h * 0.6, 0.0), min(b.w, b.d), b.h * 0.8, role="fabric")
        r = min(b.w, b.d) / 2 - b.h * 0.7
        b.surface("seat", b.h * 0.35, (-max(r, 0.1), max(r, 0.1)), (-max(r, 0.1), max(r, 0.1)))
        return
    if info.object_type == "Ottoman":
        foot = min(0.08, b.h * 0.2)
        legs(b, foot, 0.03, 0.04, "wood")
        b.box((-b.w / 2, b.w / 2), (foot, b.h), (-b.d / 2, b.d / 2), "fabric")
        b.surface("top", b.h, (-b.w / 2, b.w / 2), (-b.d / 2, b.d / 2))
        return
    t = min(0.05, b.h * 0.1)
    r = min(b.w, b.d) / 2
    if b.uniform(0, 1) < 0.5:
        b.cylinder(0.0, 0.0, (b.h - t, b.h), r, role="primary")
    else:
        b.box((-b.w / 2, b.w / 2), (b.h - t, b.h), (-b.d / 2, b.d / 2), "primary")
    legs(b, b.h - t, min(b.w, b.d) * 0.12, min(0.04, r * 0.25), "secondary", round_=True)
    ring = b.h * 0.35
    b.box((-b.w / 2 + r * 0.3, b.w / 2 - r * 0.3), (ring, ring + 0.02), (-0.01, 0.01), "secondary")
    b.surface("seat", b.h, (-r * 0.7, r * 0.7), (-r * 0.7, r * 0.7))


@register("ArmChair", "Sofa", name="sofa")
def sofa(b: ShapeBuilder, info: AssetInfo) -> None:
    base = min(0.12, b.h * 0.15)
    seat = min(0.45, b.h * 0.55)
    arm = min(0.2, b.w * 0.13) if b.uniform(0, 1) < 0.85 else 0.0
    back = min(0.22, b.d * 0.25)
    arm_top = min(seat + 0.22, b.h * 0.8)
    legs(b, base, 0.03, 0.04, "wood")
    b.box((-b.w / 2, b.w / 2), (base, seat - 0.12), (-b.d / 2, b.d / 2), "fabric")
    inner = (-b.w / 2 + arm, b.w / 2 - arm)
    n = max(1, round((inner[1] - inner[0]) / 0.65))
    cw = (inner[1] - inner[0]) / n
    for k in range(n):
        x0 = inner[0] + k * cw
        b.box(
            (x0 + 0.005, x0 + cw - 0.005), (seat - 0.12, seat), (-b.d / 2 + back, b.d / 2), "fabric"
        )
        b.box(
            (x0 + 0.01, x0 + cw - 0.01),
            (seat, b.h * 0.92),
            (-b.d / 2 + back * 0.45, -b.d / 2 + back),
            "fabric",
        )
    b.box((-b.w / 2, b.w / 2), (seat - 0.12, b.h), (-b.d / 2, -b.d / 2 + back * 0.45), "fabric")
    if arm > 0:
        for s in (-1, 1):
            x = (s * b.w / 2, s * (b.w / 2 - arm))
            b.box((min(x), max(x)), (base, arm_top), (-b.d / 2, b.d / 2), "fabric")
    b.surface("seat", seat, inner, (-b.d / 2 + back, b.d / 2 - 0.03))
    if arm > 0:
        for s in (-1, 1):
            x = (s * b.w / 2, s * (b.w / 2 - arm))
            b.surface("top", arm_top, (min(x), max(x)), (-b.d / 2 + back, b.d / 2))


@register("Bed", name="bed")
def bed(b: ShapeBuilder, info: AssetInfo) -> None:
    frame = min(0.3, b.h * 0.3)
    mattress = min(frame + 0.25, b.h * 0.6)
    head = min(0.08, b.d * 0.05)
    legs(b, frame, 0.0, 0.07, "wood")
    b.box((-b.w / 2, b.w / 2), (frame * 0.5, frame), (-b.d / 2 + head, b.d / 2), "wood")
    b.box(
        (-b.w / 2 + 0.03, b.w / 2 - 0.03),
        (frame, mattress),
        (-b.d / 2 + head, b.d / 2 - 0.03),
        "fabric",
    )
    blanket = b.choice(("secondary", "fabric"))
    b.box(
        (-b.w / 2 + 0.02, b.w / 2 - 0.02),
        (mattress - 0.06, mattress + 0.015),
        (-b.d / 2 + head + b.d * 0.3, b.d / 2 - 0.02),
        blanket,
    )
    b.box((-b.w / 2, b.w / 2), (0.0, b.h), (-b.d / 2, -b.d / 2 + head), "wood")
    b.surface("top", mattress, (-b.w / 2 + 0.05, b.w / 2 - 0.05), (-b.d / 2 + head, b.d / 2 - 0.05))


# -- storage ---------------------------------------------------------------------------------


@register("ShelvingUnit", name="shelving_unit")
def shelving_unit(b: ShapeBuilder, info: AssetInfo) -> None:
    """Sides, back, a bottom board and 3-5 shelf boards (fewer in a low unit); tall wide units
    get a middle divider."""
    foot = min(0.05, b.h * 0.05)
    side = min(PANEL * 1.5, b.w * 0.05)
    for s in (-1, 1):
        x = (s * b.w / 2, s * (b.w / 2 - side))
        b.box((min(x), max(x)), (0.0, b.h), (-b.d / 2, b.d / 2), "primary")
    if b.uniform(0, 1) < 0.7:
        b.box(
            (-b.w / 2 + side, b.w / 2 - side), (0.0, b.h), (-b.d / 2, -b.d / 2 + 0.01), "secondary"
        )
    b.box((-b.w / 2 + side, b.w / 2 - side), (0.0, foot), (-b.d / 2, b.d / 2 - 0.01), "primary")
    levels = max(2, min(5, round((b.h - foot) / b.uniform(0.3, 0.4))))
    if b.h > 0.9:
        levels = max(levels, 3)
    pitch = (b.h - foot) / levels
    x_in = (-b.w / 2 + side, b.w / 2 - side)
    z_in = (-b.d / 2 + 0.01, b.d / 2)
    for k in range(levels):
        y = foot + k * pitch + (PANEL if k > 0 else 0.0)
        name = b.element(f"Shelf_{levels - k}", "Shelf")
        if k > 0:
            b.box(x_in, (y - PANEL, y), z_in, "primary", element=name)
        else:
            b.box(x_in, (foot - 0.005, foot), z_in, "primary", element=name)
        b.surface("shelf", y if k > 0 else foot, x_in, z_in, clearance=pitch - PANEL, element=name)
    b.box(x_in, (b.h - PANEL, b.h), z_in, "primary")
    b.surface("top", b.h, (-b.w / 2, b.w / 2), (-b.d / 2, b.d / 2))
    if b.w > 1.2:
        b.box((-PANEL / 2, PANEL / 2), (foot, b.h - PANEL), z_in, "primary")


@register("Dresser", name="dresser")
def dresser(b: ShapeBuilder, info: AssetInfo) -> None:
    """A carcass on a plinth with rows of drawers (two columns when wide) and handles."""
    base = min(0.08, b.h * 0.1)
    plinth(b, base)
    top = 0.025
    b.box((-b.w / 2, b.w / 2), (b.h - top, b.h), (-b.d / 2, b.d / 2), "primary")
    b.box((-b.w / 2, b.w / 2), (base, b.h - top), (-b.d / 2, b.d / 2 - FRONT), "primary")
    b.surface("top", b.h, (-b.w / 2, b.w / 2), (-b.d / 2, b.d / 2))
    rows = max(2, min(6, round((b.h - base - top) / b.uniform(0.18, 0.26))))
    cols = 2 if b.w > 1.1 else 1
    rh = (b.h - base - top) / rows
    cw = (b.w - 0.04) / cols
    k = 0
    for r in range(rows):
        y1 = b.h - top - r * rh
        for c in range(cols):
            k += 1
            x0 = -b.w / 2 + 0.02 + c * cw
            drawer(b, f"Drawer_{k}", (x0, x0 + cw), (y1 - rh, y1), (-b.d / 2 + 0.03, b.d / 2))


@register("TVStand", name="tv_stand")
def tv_stand(b: ShapeBuilder, info: AssetInfo) -> None:
    """A low carcass: open shelf compartments, and drawers or cupboards beside them."""
    base = min(0.06, b.h * 0.1)
    plinth(b, base)
    top = 0.03
    b.box((-b.w / 2, b.w / 2), (b.h - top, b.h), (-b.d / 2, b.d / 2), "primary")
    b.surface("top", b.h, (-b.w / 2, b.w / 2), (-b.d / 2, b.d / 2))
    for s in (-1, 1):
        x = (s * b.w / 2, s * (b.w / 2 - PANEL))
        b.box((min(x), max(x)), (base, b.h - top), (-b.d / 2, b.d / 2), "primary")
    b.box((-b.w / 2, b.w / 2), (base, b.h - top), (-b.d / 2, -b.d / 2 + 0.012), "secondary")
    b.box((-b.w / 2 + PANEL, b.w / 2 - PANEL), (base, base + PANEL), (-b.d / 2, b.d / 2), "primary")
    inner_h = b.h - top - base - PANEL
    shelf_x = (-b.w / 2 + PANEL, b.w / 2 - PANEL)
    side = b.choice(("drawers", "doors", "open")) if b.w > 0.9 else "open"
    if side != "open":
        cw = min(0.5, b.w * 0.35)
        cx = (b.w / 2 - PANEL - cw, b.w / 2 - PANEL)
        shelf_x = (-b.w / 2 + PANEL, cx[0] - PANEL)
        b.box((cx[0] - PANEL, cx[0]), (base, b.h - top), (-b.d / 2, b.d / 2), "primary")
        if side == "drawers":
            n = 2
            for k in range(n):
                y1 = b.h - top - k * inner_h / n
                drawer(b, f"Drawer_{k + 1}", cx, (y1 - inner_h / n, y1), (-b.d / 2 + 0.03, b.d / 2))
        else:
            cupboard(
                b,
                "Cabinet_1",
                cx,
                (base + PANEL, b.h - top),
                (-b.d / 2 + 0.012, b.d / 2),
                hinge="right",
            )
    levels = 2 if inner_h > 0.3 else 1
    y_levels = [base + PANEL + inner_h * k / levels for k in range(levels)]
    for k, y in enumerate(y_levels):
        name = b.element(f"Shelf_{levels - k}", "Shelf")
        if k > 0:
            b.box(
                shelf_x, (y - PANEL, y), (-b.d / 2 + 0.012, b.d / 2 - 0.01), "primary", element=name
            )
        else:
            b.box(
                shelf_x, (y - 0.005, y), (-b.d / 2 + 0.012, b.d / 2 - 0.01), "primary", element=name
            )
        b.surface(
            "shelf",
            y,
            shelf_x,
            (-b.d / 2 + 0.012, b.d / 2 - 0.01),
            clearance=inner_h / levels - PANEL,
            element=name,
        )


def _counter_runs(
    info: AssetInfo, b: ShapeBuilder
) -> list[tuple[tuple[float, float], tuple[float, float], str]]:
    """(x range, z range, facing) of each straight run of a counter (see the module docstring)."""
    name = info.asset_id
    depth = min(COUNTER_DEPTH, b.d, b.w)
    back = ((-b.w / 2, b.w / 2), (-b.d / 2, -b.d / 2 + depth), "+z")
    if name.startswith("Countertop_L_") and b.d > depth + 0.05:
        return [back, ((b.w / 2 - depth, b.w / 2), (-b.d / 2 + depth, b.d / 2), "-x")]
    if name.startswith("Countertop_C_") and b.d > depth + 0.05 and b.w > 2 * depth + 0.05:
        return [
            back,
            ((-b.w / 2, -b.w / 2 + depth), (-b.d / 2 + depth, b.d / 2), "+x"),
            ((b.w / 2 - depth, b.w / 2), (-b.d / 2 + depth, b.d / 2), "-x"),
        ]
    return [((-b.w / 2, b.w / 2), (-b.d / 2, b.d / 2), "+z")]


@register("CounterTop", name="counter")
def counter(b: ShapeBuilder, info: AssetInfo) -> None:
    """Base cabinets under a worktop, in straight runs (I, L, C shapes and islands), with a
    toe kick; units of about 60 cm alternate between a drawer stack and cupboards."""
    kick = min(0.1, b.h * 0.1)
    work = min(WORKTOP, b.h * 0.1)
    body_top = b.h - work
    counts = {"Drawer": 0, "Cabinet": 0}
    for x, z, facing in _counter_runs(info, b):
        b.box(x, (b.h - work, b.h), z, "secondary")
        b.surface("top", b.h, x, z)
        # Carcass set back from the front face by the fronts' thickness; toe kick further back.
        if facing == "+z":
            body_z, kick_z, along, face = (
                (z[0], z[1] - 0.02 - FRONT),
                (z[0], z[1] - 0.08),
                x,
                z[1] - 0.02,
            )
        elif facing == "-x":
            body_z, kick_z, along, face = (
                (x[0] + 0.02 + FRONT, x[1]),
                (x[0] + 0.08, x[1]),
                z,
                x[0] + 0.02,
            )
        else:
            body_z, kick_z, along, face = (
                (x[0], x[1] - 0.02 - FRONT),
                (x[0], x[1] - 0.08),
                z,
                x[1] - 0.02,
            )
        if facing == "+z":
            b.box(x, (kick, body_top), body_z, "primary")
            b.box(x, (0.0, kick), kick_z, "secondary")
        else:
            b.box(body_z, (kick, body_top), z, "primary")
            b.box(kick_z, (0.0, kick), z, "secondary")
        length = along[1] - along[0]
        units = max(1, round(length / 0.6))
        uw = length / units
        for u in range(units):
            a0 = along[0] + u * uw
            span = (a0, a0 + uw)
            kind = b.choice(("drawers", "doors", "doors"))
            if kind == "drawers":
                rows = 3
                rh = (body_top - kick) / rows
                for r in range(rows):
                    counts["Drawer"] += 1
                    name = f"Drawer_{counts['Drawer']}"
                    y = (body_top - (r + 1) * rh, body_top - r * rh)
                    if facing == "+z":
                        drawer(b, name, span, y, (z[0] + 0.03, face), facing)
                    elif facing == "-x":
                        drawer(b, name, (face, x[1] - 0.03), y, span, facing)
                    else:
                        drawer(b, name, (x[0] + 0.03, face), y, span, facing)
            else:
                counts["Cabinet"] += 1
                name = f"Cabinet_{counts['Cabinet']}"
                y = (kick, body_top)
                hinge = "left" if u % 2 == 0 else "right"
                if facing == "+z":
                    cupboard(b, name, span, y, (z[0] + 0.02, face), facing, hinge)
                elif facing == "-x":
                    cupboard(b, name, (face, x[1] - 0.02), y, span, facing, hinge)
                else:
                    cupboard(b, name, (x[0] + 0.02, face), y, span, facing, hinge)


# -- appliances and fixtures -------------------------------------------------------------------


def _appliance_body(b: ShapeBuilder, door_depth: float = FRONT) -> None:
    b.box((-b.w / 2, b.w / 2), (0.0, b.h), (-b.d / 2, b.d / 2 - door_depth), "primary")


def _interiors(
    b: ShapeBuilder, info: AssetInfo, y0: float, y1: float, levels: int, wall: float
) -> None:
    """Interior floors from ``y0`` to ``y1`` (``levels`` of them), usable when open."""
    x_in = (-b.w / 2 + wall, b.w / 2 - wall)
    z_in = (-b.d / 2 + wall, b.d / 2 - FRONT - 0.01)
    pitch = (y1 - y0) / levels
    for k in range(levels):
        y = y0 + k * pitch
        if k > 0:
            b.box(x_in, (y - 0.01, y), z_in, "glass")
        b.surface("interior", y, x_in, z_in, clearance=pitch - 0.01, needs_open=info.openable)


@register("Fridge", name="fridge")
def fridge(b: ShapeBuilder, info: AssetInfo) -> None:
    """Body, a freezer door and a main door with handles, interior shelves (open to use)."""
    _appliance_body(b, 0.04)
    split = b.h * b.uniform(0.62, 0.72)
    freezer_top = b.choice((True, False))
    doors = (
        [(split + 0.005, b.h - 0.01), (0.05, split - 0.005)]
        if freezer_top
        else [(b.h * 0.35, b.h - 0.01), (0.05, b.h * 0.35 - 0.01)]
    )
    for y in doors:
        b.box(
            (-b.w / 2 + 0.005, b.w / 2 - 0.005),
            y,
            (b.d / 2 - 0.04, b.d / 2 - 0.012),
            "primary",
            moves=True,
        )
        hl = min(0.4, (y[1] - y[0]) * 0.5)
        hy = y[0] + 0.08 + hl / 2 if y[1] > b.h * 0.5 and not freezer_top else (y[0] + y[1]) / 2
        b.box(
            (b.w / 2 - 0.08, b.w / 2 - 0.06),
            (hy - hl / 2, hy + hl / 2),
            (b.d / 2 - 0.012, b.d / 2),
            "metal",
            moves=True,
        )
    b.motion(None, hinge_motion((-b.w / 2, b.w / 2), b.d / 2, "+z", "left"))
    b.box((-b.w / 2, b.w / 2), (0.0, 0.05), (b.d / 2 - 0.04, b.d / 2 - 0.02), "secondary")
    lo, hi = doors[1] if freezer_top else doors[0]
    _interiors(b, info, lo + 0.03, hi - 0.03, 4, 0.04)


@register("Microwave", "Safe", "WashingMachine", "ClothesDryer", name="box_appliance")
def box_appliance(b: ShapeBuilder, info: AssetInfo) -> None:
    """A box body with a door on the front: a windowed door and control panel (microwave), a
    round porthole (washer, dryer), a dial and handle (safe); the interior is usable when open."""
    t = info.object_type
    _appliance_body(b)
    zf = (b.d / 2 - FRONT, b.d / 2)
    b.motion(None, hinge_motion((-b.w / 2, b.w / 2), b.d / 2, "+z", "left"))
    if t == "Microwave":
        panel = b.w * 0.25
        b.box((-b.w / 2 + 0.01, b.w / 2 - panel), (0.02, b.h - 0.02), zf, "primary", moves=True)
        b.box(
            (-b.w / 2 + 0.05, b.w / 2 - panel - 0.05),
            (0.06, b.h - 0.06),
            (b.d / 2 - 0.006, b.d / 2),
            "screen",
            moves=True,
        )
        b.box((b.w / 2 - panel + 0.01, b.w / 2 - 0.01), (0.02, b.h - 0.02), zf, "secondary")
        b.box(
            (b.w / 2 - panel * 0.8, b.w / 2 - panel * 0.2),
            (b.h * 0.7, b.h * 0.85),
            (b.d / 2 - 0.004, b.d / 2),
            "screen",
        )
        inner = (-b.w / 2 + 0.03, b.w / 2 - panel - 0.01)
        b.surface(
            "interior",
            0.03,
            inner,
            (-b.d / 2 + 0.03, b.d / 2 - FRONT - 0.01),
            clearance=b.h - 0.06,
            needs_open=info.openable,
        )
        return
    if t in ("WashingMachine", "ClothesDryer"):
        strip = min(0.15, b.h * 0.15)
        b.box((-b.w / 2, b.w / 2), (b.h - strip, b.h), (b.d / 2 - FRONT, b.d / 2), "secondary")
        b.cylinder(
            b.w * 0.3,
            b.d / 2 - 0.004,
            (b.h - strip * 0.75, b.h - strip * 0.25),
            0.025,
            role="metal",
        )
        r = min(b.w, b.h - strip) * 0.33
        cy = (b.h - strip) * 0.52
        b.torus((0.0, cy, b.d / 2 - 0.01), 2 * r, 0.04, axis="z", role="metal", moves=True)
        b.hcylinder(
            "z",
            (0.0, cy, b.d / 2 - 0.012),
            0.015,
            r * 0.85,
            role="glass" if t == "WashingMachine" else "screen",
            moves=True,
        )
        b.surface(
            "interior",
            cy - r * 0.7,
            (-r * 0.7, r * 0.7),
            (-b.d / 2 + 0.05, b.d / 2 - 0.05),
            clearance=r * 1.4,
            needs_open=info.openable,
        )
        return
    # Safe
    b.box((-b.w / 2 + 0.02, b.w / 2 - 0.02), (0.02, b.h - 0.02), zf, "primary", moves=True)
    b.hcylinder(
        "z",
        (b.w * 0.1, b.h * 0.6, b.d / 2 - 0.006),
        0.012,
        min(b.w, b.h) * 0.08,
        role="metal",
        moves=True,
    )
    b.box(
        (b.w * 0.25, b.w * 0.3),
        (b.h * 0.3, b.h * 0.55),
        (b.d / 2 - 0.01, b.d / 2),
        "metal",
        moves=True,
    )
    wall = min(0.04, b.w * 0.1)
    b.surface(
        "interior",
        wall,
        (-b.w / 2 + wall, b.w / 2 - wall),
        (-b.d / 2 + wall, b.d / 2 - FRONT - 0.01),
        clearance=b.h - 2 * wall,
        needs_open=info.openable,
    )


@register("GarbageCan", "LaundryHamper", name="bin")
def bin_(b: ShapeBuilder, info: AssetInfo) -> None:
    """An open-top bin: round or square, slightly widening; a hamper of fabric."""
    role = "fabric" if info.object_type == "LaundryHamper" else "primary"
    round_ = b.uniform(0, 1) < 0.5
    wall = 0.01
    if round_:
        r = min(b.w, b.d) / 2
        b.cylinder(0.0, 0.0, (0.0, b.h), r / 1.1, role=role, taper=1.1, open_top=True)
        inner = r * 0.6
    else:
        b.box((-b.w / 2, b.w / 2), (0.0, b.h), (-b.d / 2, b.d / 2), role, open_top=True)
        inner = min(b.w, b.d) / 2 - wall
    b.surface(
        "interior",
        0.01,
        (-inner, inner),
        (-inner, inner),
        clearance=b.h - 0.02,
        needs_open=info.openable,
    )


@register("Sink", name="sink")
def sink(b: ShapeBuilder, info: AssetInfo) -> None:
    """A basin (``SinkBasin``): set in a counter top (low assets) or on a vanity cabinet or
    pedestal (tall ones)."""
    basin_h = min(b.h, 0.2)
    y0 = b.h - basin_h
    if b.h > 0.5:
        if b.uniform(0, 1) < 0.5:
            b.cylinder(0.0, -b.d * 0.1, (0.0, y0), min(b.w, b.d) * 0.15, role="ceramic", taper=1.4)
        else:
            b.box(
                (-b.w / 2 + 0.02, b.w / 2 - 0.02), (0.0, y0), (-b.d / 2, b.d / 2 - 0.03), "primary"
            )
            b.box(
                (-b.w / 2 + 0.03, b.w / 2 - 0.03),
                (0.08, y0 - 0.01),
                (b.d / 2 - 0.03, b.d / 2),
                "secondary",
            )
    b.element("SinkBasin", "SinkBasin")
    rim = min(0.05, b.w * 0.08)
    deck = max(rim * 2, b.d * 0.3)  # the back deck the faucet stands on
    b.box((-b.w / 2, b.w / 2), (b.h - 0.02, b.h), (-b.d / 2, -b.d / 2 + deck), "ceramic")
    b.box((-b.w / 2, b.w / 2), (b.h - 0.02, b.h), (b.d / 2 - rim, b.d / 2), "ceramic")
    for s in (-1, 1):
        x = (s * b.w / 2, s * (b.w / 2 - rim))
        b.box((min(x), max(x)), (b.h - 0.02, b.h), (-b.d / 2, b.d / 2), "ceramic")
    bx, bz = (-b.w / 2 + rim, b.w / 2 - rim), (-b.d / 2 + deck, b.d / 2 - rim)
    b.box(bx, (y0, b.h - 0.02), bz, "ceramic", open_top=True, element="SinkBasin")
    b.surface(
        "basin",
        y0 + 0.01,
        (bx[0] + 0.01, bx[1] - 0.01),
        (bz[0] + 0.01, bz[1] - 0.01),
        clearance=basin_h,
        element="SinkBasin",
    )
    b.surface("top", b.h, (-b.w / 2, b.w / 2), (-b.d / 2, -b.d / 2 + deck))


@register("Toilet", name="toilet")
def toilet(b: ShapeBuilder, info: AssetInfo) -> None:
    """A pedestal, a bowl with seat and lid, a cistern at the back; things go on the cistern."""
    seat = min(0.42, b.h * 0.55)
    tank_d = min(0.2, b.d * 0.3)
    bowl_z = (-b.d / 2 + tank_d * 0.8 + b.d / 2) / 2
    r = min(b.w * 0.45, (b.d - tank_d) * 0.5)
    b.cylinder(0.0, bowl_z, (0.0, seat * 0.6), r * 0.55, rz=r * 0.75, role="ceramic", taper=1.3)
    b.cylinder(
        0.0, bowl_z, (seat * 0.6, seat - 0.03), r * 0.75, rz=r * 0.95, role="ceramic", taper=1.05
    )
    b.torus((0.0, seat - 0.015, bowl_z), 2 * r, 0.03, role="ceramic")
    b.box((-b.w / 2, b.w / 2), (seat + 0.02, b.h), (-b.d / 2, -b.d / 2 + tank_d), "ceramic")
    b.box(
        (-b.w * 0.3, b.w * 0.3),
        (seat - 0.05, seat + 0.02),
        (-b.d / 2 + tank_d * 0.5, -b.d / 2 + tank_d * 1.2),
        "ceramic",
    )
    b.surface("top", b.h, (-b.w / 2, b.w / 2), (-b.d / 2, -b.d / 2 + tank_d))
    b.surface("seat", seat, (-r * 0.6, r * 0.6), (bowl_z - r * 0.6, bowl_z + r * 0.6))


@register("Cart", name="cart")
def cart(b: ShapeBuilder, info: AssetInfo) -> None:
    """A trolley: four posts on wheels and three trays."""
    wheel = 0.04
    for sx in (-1, 1):
        for sz in (-1, 1):
            b.hcylinder(
                "x",
                (sx * (b.w / 2 - 0.04), wheel, sz * (b.d / 2 - 0.04)),
                0.03,
                wheel,
                role="plastic",
            )
            b.cylinder(
                sx * (b.w / 2 - 0.02), sz * (b.d / 2 - 0.02), (wheel, b.h), 0.012, role="metal"
            )
    for k in range(3):
        y = 2 * wheel + 0.02 + (b.h - 2 * wheel - 0.02) * k / 2
        name = b.element(f"Shelf_{3 - k}", "Shelf")
        b.box(
            (-b.w / 2 + 0.01, b.w / 2 - 0.01),
            (y - 0.015, y),
            (-b.d / 2 + 0.01, b.d / 2 - 0.01),
            "primary",
            element=name,
        )
        clear = None if k == 2 else (b.h - 2 * wheel) / 2 - 0.02
        b.surface(
            "shelf",
            y,
            (-b.w / 2 + 0.02, b.w / 2 - 0.02),
            (-b.d / 2 + 0.02, b.d / 2 - 0.02),
            clearance=clear,
            element=name,
        )
