"""The figures of docs/world.md: the asset gallery and a room, with boxes (before issue 18) and
with shaped archetypes, materials and lighting (after).

Usage: python scripts/world_figures.py [--houses ../shared/data/procthor_houses] [--out docs/images]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image

from dataforge.render import Renderer, thor_camera_pose
from dataforge.world import load_catalogue, load_house
from dataforge.world.gallery import gallery_records, render_gallery
from dataforge.world.materials import SKY_COLOR
from dataforge.world.scene import house_scene

ROOT = Path(__file__).resolve().parents[1]
# house_746's kitchen seen from a corner: a C-shaped counter with drawers and cupboards, a fridge,
# a microwave, a dining table and chairs, doors and a window.
VIEW = ("house_746.json", (0.6, 1.6, 7.0), 53.0, 20.0)


def save(rgb: np.ndarray, path: Path, width: int) -> None:
    img = Image.fromarray(rgb)
    if img.width > width:
        img = img.resize((width, round(img.height * width / img.width)), Image.LANCZOS)
    img.save(path, optimize=True)
    print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--houses", type=Path, default=ROOT.parent / "shared/data/procthor_houses")
    ap.add_argument("--out", type=Path, default=ROOT / "docs/images")
    args = ap.parse_args()
    catalogue = load_catalogue()
    entries = gallery_records(catalogue)
    for boxes, name in ((True, "before"), (False, "after")):
        save(render_gallery(entries, boxes=boxes), args.out / f"gallery_{name}.png", 1000)
    name, eye, yaw, horizon = VIEW
    house = load_house(args.houses / name, catalogue=catalogue)
    pose = thor_camera_pose(eye, yaw, horizon)
    frames = []
    for shapes in (False, True):
        background = SKY_COLOR if shapes else (0, 0, 0)
        with Renderer(640, 480, vfov_deg=90, background=background) as r:
            r.set_scene(house_scene(house, catalogue, shapes=shapes).scene)
            frames.append(r.render(pose).rgb)
    save(np.hstack(frames), args.out / "room_before_after.png", 1280)


if __name__ == "__main__":
    main()
