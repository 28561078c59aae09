"""Embedded world: rendering frames/s per core and geodesic queries/s.

Rendering: all four outputs (RGB, depth, instance, semantic) at 640x480 from the 16 SpaMEM-style
views (8 yaws x 2 heights) of every room of ``procthor_train_1.json``, one EGL context on Mesa
llvmpipe, pinned to one core with ``LP_NUM_THREADS=1`` (set before the driver loads).
Geodesics: distance queries per second between random reachable points from a cached distance
field (``NavGrid.distances``), and the time to build one field.

Rendering is measured twice: with the shaped archetypes, materials and lighting (issue 18) and
with every object as its bounding box (``house_scene(shapes=False)``, the look before), with the
triangle count of each. Scene building (archetypes to meshes) is timed too.

Targets: >= 40 frames/s/core with the shaped geometry (issue 18; issue 5's was >= 30 with boxes);
>= 1,000 geodesic queries/s from a cached field.
Usage: python benchmarks/bench_render.py [--house PATH] [--frames 160]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("LP_NUM_THREADS", "1")

import numpy as np
from shapely.geometry import Polygon

from dataforge.render import Renderer, thor_camera_pose
from dataforge.world import load_catalogue, load_house
from dataforge.world.scene import house_scene

DEFAULT_HOUSE = Path(__file__).resolve().parents[1].parent / "shared/data/procthor_houses"


def bench_render(house, catalogue, frames: int, shapes: bool = True) -> tuple[float, int, float]:
    t0 = time.perf_counter()
    scene = house_scene(house, catalogue, shapes=shapes).scene
    build = time.perf_counter() - t0
    poses = []
    for room in house.rooms:
        c = Polygon(room.polygon_xz).representative_point()
        for height in (0.9, 1.5):
            for k in range(8):
                poses.append(thor_camera_pose([c.x, height, c.y], 45.0 * k, 0.0))
    with Renderer(640, 480, vfov_deg=90) as r:
        r.set_scene(scene)
        r.render(poses[0])
        t0 = time.perf_counter()
        for i in range(frames):
            f = r.render(poses[i % len(poses)])
            assert f.depth.dtype == np.float32
        dt = time.perf_counter() - t0
    return frames / dt, scene.triangle_count, build


def bench_geodesic(house, catalogue, queries: int) -> tuple[float, float] | None:
    try:
        from dataforge.world.navigation import house_nav_grid
    except ImportError:
        return None
    grid = house_nav_grid(house, catalogue)
    pts = grid.reachable_positions()
    rng = np.random.default_rng(0)
    source = pts[rng.integers(len(pts))]
    t0 = time.perf_counter()
    grid.distances([source], [pts[0]])
    build = time.perf_counter() - t0
    targets = pts[rng.integers(len(pts), size=queries)]
    t0 = time.perf_counter()
    for t in targets:
        grid.distances([source], [t])
    return queries / (time.perf_counter() - t0), build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--house", type=Path, default=DEFAULT_HOUSE / "procthor_train_1.json")
    ap.add_argument("--frames", type=int, default=160)
    ap.add_argument("--queries", type=int, default=2000)
    args = ap.parse_args()
    catalogue = load_catalogue()
    house = load_house(args.house, catalogue=catalogue)
    for shapes, label in ((False, "boxes"), (True, "shaped")):
        fps, tris, build = bench_render(house, catalogue, args.frames, shapes)
        print(
            f"render ({label}): {fps:.1f} frames/s on one core (640x480, 4 outputs, "
            f"{tris:,} triangles; scene built in {build:.2f} s)"
        )
    geo = bench_geodesic(house, catalogue, args.queries)
    if geo is None:
        print("geodesics: dataforge.nav.grid not available")
    else:
        qps, build = geo
        print(f"geodesics: {qps:,.0f} queries/s from a cached field; first field {build:.3f} s")


if __name__ == "__main__":
    main()
