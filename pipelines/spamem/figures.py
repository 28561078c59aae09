"""Pictures of SpaMEM datasets: one step's views (``inspect --preview``) and the paper's Fig. 14
panels beside the dataset's (``stats --plot``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image, ImageDraw
from scipy import ndimage

from dataforge.errors import UsageError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from dataforge.stats import DatasetStats
    from dataforge.store.reader import StoredEpisode

# The paper's statistics (§10, Fig. 14): actions, and the top receptacles its text names.
PAPER_ACTIONS = {"spawn": 14536, "place": 12540, "remove": 6144}
PAPER_RECEPTACLES = {
    "Drawer": 31029,
    "Shelf": 18621,
    "DiningTable": 15695,
    "Bed": 9246,
    "Dresser": 6275,
}
OUTLINE = (255, 40, 40)
TILE_W = 256
TITLE_H, LABEL_H, PAD = 34, 14, 4


def _target_key(steps: list[dict[str, Any]], s: int) -> str | None:
    """The element a step is about: the acted object (spawn, place), the receptacle a removed
    object left; step 0: what the first action will act on."""
    if s == 0:
        if len(steps) < 2:
            return None
        first = steps[1]
        return first["object"] if first["action"] == "remove" else first["receptacle"]
    rec = steps[s]
    return rec.get("from") if rec["action"] == "remove" else rec["object"]


def _title(steps: list[dict[str, Any]], s: int, eid: str) -> str:
    rec = steps[s]
    if s == 0:
        return f"{eid}  step 0: the initial state (cameras on the first action's target)"
    where = rec.get("receptacle") or rec.get("from")
    rtype = rec.get("receptacle_type") or rec.get("from_type")
    arrow = "into/onto" if rec["action"] != "remove" else "from"
    what = f"{rec['action']} {rec['object_type']} ({rec['object']})"
    return f"{eid}  step {s}: {what} {arrow} {rtype} ({where})"


def outline(rgb: np.ndarray, mask: np.ndarray, width: int = 2) -> np.ndarray:
    """``rgb`` with the boundary of ``mask`` drawn in red."""
    out = rgb.copy()
    if mask.any():
        inner = ndimage.binary_erosion(mask, iterations=width, border_value=0)
        out[mask & ~inner] = OUTLINE
    return out


def step_sheet(ep: StoredEpisode, step: int | None = None) -> Image.Image:
    """The views of ``step`` (default: the first action) as rows of heights x columns of
    azimuths, the step's target outlined, the action written above."""
    meta = ep.metadata
    views, states = int(meta["views_per_state"]), int(meta["states"])
    s = (1 if states > 1 else 0) if step is None else step
    if not 0 <= s < states:
        raise UsageError(f"--step {s}: episode {ep.id} has steps 0..{states - 1}")
    rgb = ep["rgb"][s * views : (s + 1) * views]
    inst = ep["instance"][s * views : (s + 1) * views]
    key = _target_key(meta["steps"], s)
    ids = {k: int(i) for i, k in meta["instances"]}
    target = ids.get(key) if key else None
    vps = meta["viewpoints"][s]
    heights = list(dict.fromkeys(vp["height"] for vp in vps))
    azimuths = list(dict.fromkeys(vp["azimuth_deg"] for vp in vps))
    h, w = rgb.shape[1:3]
    tw = max(TILE_W // 2, min(TILE_W, w * 2))
    th = round(h * tw / w)
    sheet = Image.new(
        "RGB",
        (PAD + len(azimuths) * (tw + PAD), TITLE_H + len(heights) * (th + LABEL_H + PAD)),
        (255, 255, 255),
    )
    draw = ImageDraw.Draw(sheet)
    draw.text((PAD, 4), _title(meta["steps"], s, ep.id), fill=(0, 0, 0))
    note = "target outlined" if target else "target not in the masks' table"
    draw.text((PAD, 18), f"{note}; rows: camera heights, columns: azimuths", fill=(90, 90, 90))
    for v, vp in enumerate(vps):
        r, c = heights.index(vp["height"]), azimuths.index(vp["azimuth_deg"])
        tile = outline(rgb[v], inst[v] == target) if target else rgb[v]
        x, y = PAD + c * (tw + PAD), TITLE_H + r * (th + LABEL_H + PAD)
        sheet.paste(
            Image.fromarray(tile).resize((tw, th), Image.Resampling.BILINEAR), (x, y + LABEL_H)
        )
        flag = "" if vp["on_bearing"] else " (moved)"
        draw.text((x, y), f"{vp['azimuth_deg']:g} deg {vp['height']}{flag}", fill=(0, 0, 0))
    return sheet


def preview(ep: StoredEpisode, path: Path, step: int | None = None) -> None:
    step_sheet(ep, step).save(path)


def plot(stats: DatasetStats, path: Path) -> None:
    """Fig. 14-style panels: action shares, top receptacles, top objects; the paper's beside
    the dataset's where the paper gives numbers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = stats.counts
    actions = counts.get("actions by type") or {}
    recs = counts.get("top receptacles (interactions)") or {}
    objs = counts.get("top objects (interactions)") or {}
    if not sum(actions.values()):
        raise UsageError("nothing to plot: the dataset has no actions")
    fig = plt.figure(figsize=(13, 8))
    grid = fig.add_gridspec(2, 2, height_ratios=[1, 1])
    ax = fig.add_subplot(grid[0, 0])
    names = list(PAPER_ACTIONS)
    _paired(ax, names, [actions.get(k, 0) for k in names], [PAPER_ACTIONS[k] for k in names])
    ax.set_title("Actions (% of all actions)", fontsize=10)
    ax = fig.add_subplot(grid[0, 1])
    names = list(dict.fromkeys([*recs, *PAPER_RECEPTACLES]))[:10]
    _paired(
        ax, names, [recs.get(k, 0) for k in names], [PAPER_RECEPTACLES.get(k, 0) for k in names]
    )
    ax.set_title(
        "Receptacles by interactions (% of the panel; the paper names its top 5)", fontsize=10
    )
    ax = fig.add_subplot(grid[1, :])
    names = list(objs)
    ax.bar(names, [objs[k] for k in names], color="#3b75af")
    ax.set_title(
        "Top objects by interactions (this dataset; the paper gives no numbers)", fontsize=10
    )
    ax.tick_params(axis="x", rotation=45, labelsize=8)
    fig.suptitle(
        f"{stats.dataset['name']}: {counts.get('houses')} houses, "
        f"{counts.get('sequences')} sequences, {counts.get('actions')} actions",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _paired(ax: Axes, names: list[str], ours: list[float], paper: list[float]) -> None:
    x = np.arange(len(names))
    a = 100.0 * np.asarray(ours, float) / max(sum(ours), 1)
    b = 100.0 * np.asarray(paper, float) / max(sum(paper), 1)
    ax.bar(x - 0.2, a, 0.4, label="this dataset", color="#3b75af")
    ax.bar(x + 0.2, b, 0.4, label="SpaMEM paper", color="#e0873a")
    ax.set_xticks(x, names, rotation=30, fontsize=8)
    ax.set_ylabel("%")
    ax.legend(fontsize=8)
