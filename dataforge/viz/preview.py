"""Contact sheets: a grid of an episode's image-like arrays at a few frames, as one PNG.

Rows are arrays (RGB as is, depth colour-mapped, masks colour-coded by id), columns are frames
spread evenly over the episode. Which arrays are images comes from the schema's ``kind``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from dataforge.errors import UsageError
from dataforge.store.schema import IMAGE_KINDS
from dataforge.viz.colors import colorize_depth, colorize_ids, depth_range

LABEL_H = 14
PAD = 4


def _is_image(spec: Any) -> bool:
    if spec.kind not in IMAGE_KINDS:
        return False
    spatial = 3 if spec.kind == "rgb" else 2
    return len(spec.shape) in (spatial, spatial + 1)


def _frames(spec: Any, arr: Any, indices: list[int]) -> list[np.ndarray]:
    spatial = 3 if spec.kind == "rgb" else 2
    if len(spec.shape) == spatial:  # one image per episode, no time axis
        return [arr.read()]
    return [arr[i] for i in indices]


def frame_indices(n: int, count: int) -> list[int]:
    if n <= 0:
        return []
    return sorted({round(x) for x in np.linspace(0, n - 1, min(count, n))})


def contact_sheet(
    episode: Any, frames: int = 4, tile_height: int = 160, indices: list[int] | None = None
) -> Image.Image:
    """Draw ``episode``'s image-like arrays at up to ``frames`` evenly spaced frames, or at
    ``indices`` (a pipeline's choice, e.g. keyframes)."""
    schema = episode.dataset.schema
    names = [n for n in schema if _is_image(schema[n])]
    if not names:
        raise ValueError(f"episode {episode.id!r} has no image-like arrays (kind rgb/depth/mask)")
    lengths = [len(episode[n]) for n in names if schema[n].shape[0] is None]
    if indices is None:
        indices = frame_indices(min(lengths) if lengths else 1, frames)
    rows: list[tuple[str, str, list[tuple[int | None, np.ndarray]]]] = []
    for name in names:
        spec = schema[name]
        imgs = _frames(spec, episode[name], indices)
        labels: list[int | None] = list(indices) if len(imgs) == len(indices) else [None]
        if spec.kind == "depth":
            lo, hi = depth_range(imgs)
            tiles = [colorize_depth(im, lo, hi) for im in imgs]
            name = f"{name} [{lo:.2f}-{hi:.2f} {spec.units or ''}]".replace(" ]", "]")
        elif spec.kind == "mask":
            tiles = [colorize_ids(im) for im in imgs]
        else:
            tiles = [np.asarray(im, np.uint8) for im in imgs]
        rows.append((name, spec.kind, list(zip(labels, tiles, strict=True))))
    h0, w0 = rows[0][2][0][1].shape[:2]
    scale = tile_height / h0
    tw, th = max(1, round(w0 * scale)), tile_height
    ncols = max(len(r[2]) for r in rows)
    sheet = Image.new(
        "RGB", (PAD + ncols * (tw + PAD), PAD + len(rows) * (th + LABEL_H + PAD)), (255, 255, 255)
    )
    draw = ImageDraw.Draw(sheet)
    for r, (name, kind, cells) in enumerate(rows):
        y = PAD + r * (th + LABEL_H + PAD)
        resample = Image.Resampling.NEAREST if kind == "mask" else Image.Resampling.BILINEAR
        for c, (idx, tile) in enumerate(cells):
            x = PAD + c * (tw + PAD)
            img = Image.fromarray(tile).resize((tw, th), resample)
            sheet.paste(img, (x, y + LABEL_H))
            label = name if idx is None else f"{name} t={idx}"
            draw.text((x, y), label, fill=(0, 0, 0))
    return sheet


def write_preview(
    episode: Any, out: Path, frames: int = 4, indices: list[int] | None = None
) -> Path:
    """Write the contact sheet of ``episode`` to ``out`` (PNG). The folder must exist: it is not
    created; a file that cannot be written is a one-line ``UsageError``."""
    out = Path(out)
    if not out.parent.is_dir():
        raise UsageError(f"cannot write the preview {out}: the folder {out.parent} does not exist")
    sheet = contact_sheet(episode, frames=frames, indices=indices)
    try:
        sheet.save(out, format="PNG")
    except OSError as exc:
        raise UsageError(f"cannot write the preview {out}: {exc.strerror or exc}") from None
    return out
