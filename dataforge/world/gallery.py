"""A contact sheet of asset shapes and a JSON of their parts and support surfaces.

Each object type is shown by one asset (the median-sized one, so the sheet shows a typical
asset) standing on a grey floor before a light wall, seen from the front and a little above,
framed to its box. ``fill`` in the JSON is the sum of the parts' primitive volumes ÷ the box
volume (overlapping parts count twice; for a mesh from ``--assets``: the mesh's volume ÷ the box
volume when the mesh is watertight, else its convex hull's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.render.mesh import Scene, box_mesh, box_mesh_from_corners
from dataforge.world.archetypes import archetype_of, shape_of
from dataforge.world.assets import AssetCatalogue, AssetInfo
from dataforge.world.boxes import OrientedBox
from dataforge.world.house import HouseObject
from dataforge.world.scene import type_color
from dataforge.world.shape_mesh import object_meshes

if TYPE_CHECKING:
    from dataforge.world.mesh_assets import MeshLibrary

TILE = 200
LABEL_H = 18
ROOM_COLOR = (200, 200, 196)
FLOOR_COLOR = (120, 118, 112)


@dataclass(frozen=True)
class GalleryEntry:
    object_type: str
    asset: AssetInfo
    record: dict[str, Any]


def representative(catalogue: AssetCatalogue, object_type: str) -> AssetInfo:
    """The type's asset of median box volume (ties: the smaller id)."""
    assets = sorted(
        catalogue.assets_of(object_type),
        key=lambda a: (a.size[0] * a.size[1] * a.size[2], a.asset_id),
    )
    return assets[(len(assets) - 1) // 2]


def shape_record(info: AssetInfo, library: Any = None) -> dict[str, Any]:
    """The JSON record of one asset's shape (archetype, parts, fill, surfaces)."""
    shape = shape_of(info)
    record: dict[str, Any] = {
        "asset_id": info.asset_id,
        "archetype": archetype_of(info.object_type),
        "size_m": [round(v, 4) for v in info.size],
        "parts": len(shape.parts),
        "fill": round(shape.fill(), 4),
        "fill_method": "sum of part volumes / box volume",
        "sub_receptacles": dict(sorted(shape.elements.items())),
        "surfaces": [s.to_dict(info.size[1]) for s in shape.surfaces],
    }
    mesh = library.geometry(info) if library is not None else None
    if mesh is not None:
        record["mesh"] = library.path_of(info.asset_id).name
        record["fill"] = round(library.fill(info), 4)
        record["fill_method"] = library.FILL_METHOD
    return record


def gallery_records(
    catalogue: AssetCatalogue,
    types: Sequence[str] | None = None,
    library: MeshLibrary | None = None,
) -> list[GalleryEntry]:
    chosen = sorted(types) if types else list(catalogue.types())
    out = []
    for t in chosen:
        catalogue.type_info(t)  # a one-line UsageError for an unknown type
        info = representative(catalogue, t)
        out.append(GalleryEntry(t, info, shape_record(info, library)))
    return out


def _tile_scene(
    info: AssetInfo, boxes: bool, library: MeshLibrary | None
) -> tuple[Scene, np.ndarray]:
    """The asset on a floor before a wall, and a camera pose framing it."""
    from dataforge.render import look_at_pose

    w, h, d = info.size
    obj = HouseObject("asset", info.asset_id, info.object_type, (0.0, h / 2.0, 0.0), (0, 0, 0))
    scene = Scene()
    span = max(w, h, d)
    scene.add(box_mesh((0.0, -0.005, 0.0), (span * 6, 0.01, span * 6), color=FLOOR_COLOR))
    scene.add(
        box_mesh(
            (0.0, span * 1.5, -d / 2 - 0.02),
            (span * 6, span * 3, 0.01),
            color=ROOM_COLOR,
            instance_id=2,
        )
    )
    if boxes:
        corners = OrientedBox(obj.position, info.size).corners()
        scene.add(box_mesh_from_corners(corners, color=type_color(info.object_type), instance_id=3))
    else:
        meshes = library.meshes(obj, info) if library is not None else None
        for mesh in (meshes or object_meshes(obj, info)).values():
            mesh.instance_id = 3
            scene.add(mesh)
    radius = 0.5 * math.sqrt(w * w + h * h + d * d)
    dist = radius / math.tan(math.radians(25.0)) * 1.05
    target = np.array([0.0, h / 2.0, 0.0])
    direction = np.array([math.sin(math.radians(25)), 0.45, 1.0])
    eye = target + dist * direction / np.linalg.norm(direction)
    return scene, look_at_pose(eye, target)


def render_gallery(
    entries: Sequence[GalleryEntry],
    *,
    boxes: bool = False,
    library: MeshLibrary | None = None,
    columns: int = 10,
) -> np.ndarray:
    """One RGB contact sheet: a tile per entry with its type's name under it."""
    from PIL import Image, ImageDraw

    from dataforge.render import Renderer

    rows = max(1, math.ceil(len(entries) / columns))
    sheet = Image.new("RGB", (columns * TILE, rows * (TILE + LABEL_H)), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    with Renderer(TILE, TILE, vfov_deg=50.0, background=(235, 235, 235)) as renderer:
        for k, entry in enumerate(entries):
            scene, pose = _tile_scene(entry.asset, boxes, library)
            renderer.set_scene(scene)
            rgb = renderer.render(pose).rgb
            x, y = (k % columns) * TILE, (k // columns) * (TILE + LABEL_H)
            sheet.paste(Image.fromarray(rgb), (x, y))
            draw.text((x + 4, y + TILE + 3), entry.object_type, fill=(0, 0, 0))
    return np.asarray(sheet)
