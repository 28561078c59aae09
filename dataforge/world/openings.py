"""Doors and windows in their wall holes: frames, panes and door leaves.

An opening's asset (``Doorway_*``, ``Doorframe_*``, ``Window_*``) is drawn with its archetype,
centred on the hole (along ``wall0``, local x along the wall, local z across it) and sitting on
the hole's bottom for doors. Door leaves (``Doorway_*`` assets; a ``Doorframe`` has none) turn
about their hinges by ``openness`` × 90° (AI2-THOR's default openness for ProcTHOR doors is the
house's ``openness`` field: 1 for open interior doors, 0 for the closed front door), toward the
local -z side. A window keeps its glass panes, drawn as the window itself (its own instance
id, finite depth): an opaque pane rather than a hole onto the renderer's background (depth 0,
no instance); a thin pane filling the wall's hole on the wall's centre line closes any gap
between the asset's frame and the hole, so every pixel of a window's hole belongs to it. A
door's glass insets are left out (a glazed leaf keeps its solid slab behind them). Navigation
treats a door as passable unless its leaf is closed (:mod:`dataforge.world.navigation`).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from dataforge.render.mesh import Mesh
from dataforge.world.archetypes import shape_of
from dataforge.world.assets import AssetCatalogue, AssetInfo
from dataforge.world.boxes import rotation_matrix
from dataforge.world.house import House, Opening
from dataforge.world.materials import asset_palette
from dataforge.world.shape_mesh import ElementGeometry, shape_geometry

PANE_M = 0.01  # thickness of the pane that fills a window's hole


def opening_class(catalogue: AssetCatalogue, opening: Opening) -> str:
    """The semantic class of an opening's asset (``Doorway``, ``Doorframe``, ``Window``)."""
    return catalogue.asset(opening.asset_id).object_type


def opening_pose(house: House, opening: Opening, info: AssetInfo) -> tuple[np.ndarray, float]:
    """World centre of the opening asset's box and its yaw (local +x along ``wall0``)."""
    a, b = (np.asarray(p, dtype=np.float64) for p in house.opening_segment(opening))
    direction = b - a
    length = float(np.linalg.norm(direction))
    d = direction / length if length > 0 else np.array([1.0, 0.0])
    mid = (a + b) / 2.0
    y0, y1 = opening.y_range
    floor = house.wall(opening.wall_ids[0]).y_min
    cy = floor + y0 + info.size[1] / 2.0 if opening.kind == "door" else floor + (y0 + y1) / 2.0
    yaw = math.degrees(math.atan2(-d[1], d[0]))
    return np.array([mid[0], cy, mid[1]]), yaw


@functools.lru_cache(maxsize=1024)
def opening_geometry(info: AssetInfo, openness: float) -> dict[str | None, ElementGeometry]:
    """The opening asset's geometry, door leaves turned open by ``openness``; a window keeps its
    glass panes (module docstring), a door drops its glass insets."""
    from dataforge.world.archetypes.fixtures import swung_door_shape

    shape = swung_door_shape(info, openness) if info.object_type == "Doorway" else shape_of(info)
    if info.object_type == "Window":
        return shape_geometry(shape, asset_palette(info)) if shape.parts else {}
    frame = dataclasses.replace(shape, parts=tuple(p for p in shape.parts if p.role != "glass"))
    return shape_geometry(frame, asset_palette(info)) if frame.parts else {}


def opening_meshes(house: House, opening: Opening, catalogue: AssetCatalogue) -> list[Mesh]:
    """The opening's meshes in world coordinates (ids are set by the caller)."""
    info = catalogue.asset(opening.asset_id)
    centre, yaw = opening_pose(house, opening, info)
    rot = rotation_matrix((0.0, yaw, 0.0))
    openness = 1.0 if opening.openness is None else min(max(float(opening.openness), 0.0), 1.0)
    meshes = [
        Mesh(g.vertices @ rot.T + centre, g.faces, g.normals @ rot.T, g.colors)
        for g in opening_geometry(info, openness).values()
    ]
    if info.object_type == "Window":
        pane = hole_pane(house, opening, asset_palette(info)["glass"])
        meshes.append(Mesh(pane.vertices @ rot.T + centre, pane.faces, color=pane.color))
    return meshes


def hole_pane(house: House, opening: Opening, color: tuple[int, int, int]) -> Mesh:
    """A pane ``PANE_M`` thick filling the opening's hole, in the frame of
    :func:`opening_pose` (a window's pose is centred on its hole)."""
    a, b = (np.asarray(p, dtype=np.float64) for p in house.opening_segment(opening))
    hx = float(np.linalg.norm(b - a)) / 2.0
    hy = (opening.y_range[1] - opening.y_range[0]) / 2.0
    hz = PANE_M / 2.0
    corners = np.array(
        [(x, y, z) for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)], dtype=np.float64
    )
    quads = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3))
    faces = np.array([t for q in quads for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))])
    return Mesh(corners, faces.astype(np.int32), color=color)
