"""Pictures of MultiON episodes: a top-down map with the start, the goal cylinders in order, the
shortest path through them and (for an oracle dataset) the path the oracle walked, beside a
strip of its egocentric frames.

Map colours follow habitat's top-down maps: navigable grey (150, 150, 150), the rest white,
the start blue (0, 0, 200), the shortest path green (0, 200, 0); the oracle's path is orange,
and each goal is drawn in its cylinder's colour with its order number.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dataforge.pipelines.multion.cylinders import NAMES, built_in

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from dataforge.nav.grid import NavGrid

NAVIGABLE = (150, 150, 150)
OFF = (255, 255, 255)
START = (0, 0, 200)
SHORTEST = (0, 200, 0)
WALKED = (255, 140, 0)


def _rgb(c: Sequence[int]) -> tuple[float, float, float]:
    return (c[0] / 255, c[1] / 255, c[2] / 255)


def shortest_route(grid: NavGrid, points: Sequence[Sequence[float]]) -> list[np.ndarray]:
    """A shortest path on ``grid`` through ``points`` in order (goal points that are blocked
    are approached at their nearest free cell)."""
    out: list[np.ndarray] = []
    for a, b in itertools.pairwise(points):
        leg = grid.shortest_path(a, b)
        out.extend(leg if not out else leg[1:])
    return out


def draw_map(
    ax: Axes,
    grid: NavGrid,
    start: Sequence[float],
    yaw_deg: float,
    goals: Sequence[Sequence[float]],
    categories: Sequence[int],
    *,
    shortest: Sequence[Sequence[float] | np.ndarray] = (),
    walked: Sequence[Sequence[float] | np.ndarray] = (),
    cylinder_radius: float = 0.1,
) -> None:
    """One episode on ``ax`` (a matplotlib axes), in plan view (x right, z up)."""
    from matplotlib.patches import Circle

    img = np.where(grid.free[..., None], np.array(NAVIGABLE), np.array(OFF)).astype(np.uint8)
    x0, z0 = grid.origin
    extent = (x0, x0 + grid.shape[1] * grid.cell, z0, z0 + grid.shape[0] * grid.cell)
    ax.imshow(img, origin="lower", extent=extent, interpolation="nearest")
    if len(shortest):
        s = np.asarray(shortest)
        ax.plot(s[:, 0], s[:, 2], color=_rgb(SHORTEST), lw=2, label="shortest path")
    if len(walked):
        w = np.asarray(walked)
        ax.plot(w[:, 0], w[:, 2], color=_rgb(WALKED), lw=1.5, label="oracle")
    for k, (g, c) in enumerate(zip(goals, categories, strict=True)):
        colour = _rgb(built_in(NAMES[int(c)]).color)
        r = max(cylinder_radius, 0.12)
        ax.add_patch(Circle((g[0], g[2]), r, facecolor=colour, edgecolor="black", lw=1, zorder=3))
        ax.annotate(
            str(k + 1),
            (g[0], g[2]),
            xytext=(6, 6),
            textcoords="offset points",
            fontsize=9,
            weight="bold",
            zorder=4,
        )
    ax.plot(start[0], start[2], "s", color=_rgb(START), ms=8, zorder=4, label="start")
    yaw = math.radians(yaw_deg)
    ax.arrow(
        start[0],
        start[2],
        0.6 * math.sin(yaw),
        0.6 * math.cos(yaw),
        width=0.04,
        color=_rgb(START),
        zorder=4,
    )
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")


def episode_figure(
    path: Path,
    grid: NavGrid,
    start: Sequence[float],
    yaw_deg: float,
    goals: Sequence[Sequence[float]],
    categories: Sequence[int],
    *,
    title: str,
    shortest: Sequence[Sequence[float] | np.ndarray] = (),
    walked: Sequence[Sequence[float] | np.ndarray] = (),
    frames: Sequence[np.ndarray] = (),
    frame_titles: Sequence[str] = (),
) -> None:
    """The map of one episode, with ``frames`` (egocentric RGB) beside it, saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = math.ceil(len(frames) / 2)
    fig = plt.figure(figsize=(7 + 2.2 * cols, 6.5))
    grid_spec = fig.add_gridspec(2, 1 + cols, width_ratios=[3.2] + [1] * cols)
    ax = fig.add_subplot(grid_spec[:, 0])
    draw_map(ax, grid, start, yaw_deg, goals, categories, shortest=shortest, walked=walked)
    ax.legend(loc="lower right", fontsize=7)
    ax.set_title(title, fontsize=9)
    for k, frame in enumerate(frames):
        fa = fig.add_subplot(grid_spec[k // cols, 1 + k % cols])
        fa.imshow(frame)
        fa.set_title(frame_titles[k] if k < len(frame_titles) else "", fontsize=7)
        fa.axis("off")
    fig.tight_layout()
    from dataforge.viz.plots import save_figure

    save_figure(fig, path)
