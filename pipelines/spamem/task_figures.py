"""``dataforge inspect TASKS_DIR --preview p.png``: what one sequence's questions look at. Top
row: each L1 cluster's frame with the answer's boxes and labels (VGL, DPE) and the SOR answer;
bottom row: the L2/L3 stream (the stream view of every step, spread over at most 8 tiles) with
each step's action."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image, ImageDraw

from dataforge.pipelines.spamem.tasks import SEQUENCES, episode_records

if TYPE_CHECKING:
    from dataforge.store.reader import StoredEpisode

TILE_W, CAPTION_H, COLS = 256, 30, 4
BOX = (255, 40, 40)


def _tile(
    rgb: np.ndarray, caption: str, boxes: Sequence[tuple[Sequence[float], str]], scale: float
) -> Image.Image:
    img = Image.fromarray(rgb).resize((TILE_W, int(rgb.shape[0] * scale)), Image.Resampling.NEAREST)
    draw = ImageDraw.Draw(img)
    for (x0, y0, x1, y1), label in boxes:
        draw.rectangle(
            [x0 * scale, y0 * scale, (x1 + 1) * scale - 1, (y1 + 1) * scale - 1], outline=BOX
        )
        draw.text((x0 * scale + 2, y0 * scale + 1), label, fill=BOX)
    out = Image.new("RGB", (TILE_W, img.height + CAPTION_H), "white")
    out.paste(img, (0, CAPTION_H))
    d = ImageDraw.Draw(out)
    for i, line in enumerate([caption[k : k + 42] for k in range(0, len(caption), 42)][:2]):
        d.text((3, 2 + 13 * i), line, fill="black")
    return out


def preview(ep: StoredEpisode, path: Path, step: int | None) -> None:
    """Write the picture (``step``: unused: the stream row shows every step)."""
    from dataforge.pipelines.spamem.sequence_view import SequenceView
    from dataforge.store import open_dataset

    root = ep.dataset.manifest.inputs.get("locations", {}).get(SEQUENCES)
    recs = episode_records(ep)
    with open_dataset(root) as ds:
        seq_ep = ds[ep.id]
        seq = SequenceView(seq_ep)
        scale = TILE_W / seq.width
        top = []
        by_id = {q["id"]: q for q in recs}
        for r in recs:
            if r["task"] != "VGL" or r["modality"] != "rgb":
                continue
            view = r["context"]["view"]
            dpe = by_id.get(r["id"].replace("L1/VGL/", "L1/DPE/", 1))
            labels = r["context"]["objects"]
            dist = dpe["answer"] if dpe else {}
            vis = seq.visible(seq.row(0, view))
            boxes = [
                (list(vis[oid][:4]), f"{label} {dist.get(label, 0):.2f}m")
                for label, oid in r["context"]["object_ids"].items()
            ]
            top.append(
                _tile(
                    seq_ep["rgb"][seq.row(0, view)],
                    f"L1 {r['context']['receptacle']['label']}: {', '.join(sorted(set(labels)))}",
                    boxes,
                    scale,
                )
            )
        stream_view = next((r["frames"][0]["view"] for r in recs if r["level"] == 3), None)
        bottom = []
        if stream_view is not None:
            steps = np.unique(np.linspace(0, seq.last, min(8, seq.states)).round().astype(int))
            for s in steps:
                text = "initial state" if s == 0 else seq.action_text(int(s))
                bottom.append(
                    _tile(seq_ep["rgb"][seq.row(int(s), stream_view)], f"t={s}: {text}", [], scale)
                )
    rows = [top[i : i + COLS] for i in range(0, len(top), COLS)] + [
        bottom[i : i + COLS] for i in range(0, len(bottom), COLS)
    ]
    rows = [r for r in rows if r]
    if not rows:
        raise ValueError(f"{ep.id} has no L1 or L3 questions to draw")
    h = max(t.height for row in rows for t in row)
    sheet = Image.new("RGB", (COLS * TILE_W, h * len(rows)), "white")
    for i, row in enumerate(rows):
        for j, t in enumerate(row):
            sheet.paste(t, (j * TILE_W, i * h))
    sheet.save(path)
