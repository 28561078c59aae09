"""Colour maps for image-like arrays: depth through a perceptual map, ids through a palette."""

from __future__ import annotations

import numpy as np


def id_palette(n: int) -> np.ndarray:
    """``n`` distinct, deterministic RGB colours (uint8, n×3); id 0 is black (background)."""
    ids = np.arange(n, dtype=np.float64)
    hue = (ids * 0.6180339887498949) % 1.0
    sat = 0.55 + 0.35 * ((ids * 0.37) % 1.0)
    val = 0.65 + 0.35 * ((ids * 0.71) % 1.0)
    h6 = hue * 6.0
    c = val * sat
    x = c * (1 - np.abs(h6 % 2 - 1))
    m = val - c
    zeros = np.zeros_like(c)
    sector = np.floor(h6).astype(int) % 6
    table = [
        (c, x, zeros),
        (x, c, zeros),
        (zeros, c, x),
        (zeros, x, c),
        (x, zeros, c),
        (c, zeros, x),
    ]
    rgb = np.zeros((n, 3))
    for s, (r, g, b) in enumerate(table):
        sel = sector == s
        rgb[sel] = np.stack([r[sel], g[sel], b[sel]], axis=-1)
    out = np.clip(np.rint((rgb + m[:, None]) * 255), 0, 255).astype(np.uint8)
    if n:
        out[0] = 0
    return out


def colorize_ids(ids: np.ndarray) -> np.ndarray:
    """Integer id image (H×W) -> RGB uint8; equal ids get equal colours everywhere."""
    ids = np.asarray(ids).astype(np.int64)
    hashed = np.where(ids == 0, 0, (ids * 2654435761) % 4093 + 1)
    return id_palette(4094)[hashed]


def colorize_depth(depth: np.ndarray, lo: float, hi: float, cmap: str = "turbo") -> np.ndarray:
    """Depth image -> RGB uint8 with ``cmap`` from ``lo`` to ``hi``; invalid (<=0, nan) black."""
    from matplotlib import colormaps

    d = np.asarray(depth, dtype=np.float64)
    valid = np.isfinite(d) & (d > 0)
    scale = max(hi - lo, 1e-9)
    norm = np.clip((d - lo) / scale, 0.0, 1.0)
    rgb = (colormaps[cmap](norm)[..., :3] * 255).astype(np.uint8)
    rgb[~valid] = 0
    return rgb


def depth_range(samples: list[np.ndarray]) -> tuple[float, float]:
    """Robust (1st, 99th percentile) range of the valid depth values in ``samples``."""
    vals = np.concatenate([np.asarray(s, np.float64).ravel() for s in samples]) if samples else []
    vals = np.asarray(vals)
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if vals.size == 0:
        return 0.0, 1.0
    return float(np.percentile(vals, 1)), float(np.percentile(vals, 99))
