"""Rich tables for ``inspect``, ``stats`` and ``validate`` output."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from rich.table import Table


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def dataset_table(ds: Any) -> Table:
    m = ds.manifest
    t = Table(title=f"{m.name}  ({ds.root})", show_header=False, title_justify="left")
    t.add_column("field", style="bold")
    t.add_column("value")
    total = sum(f.size for f in m.files.values())
    rows = [
        ("pipeline", m.pipeline),
        (
            "format",
            f"{m.format} (dataforge format v{m.format_version}, "
            f"written by dataforge {m.dataforge_version})",
        ),
        ("seed", str(m.seed)),
        ("episodes", str(len(m.episodes))),
        ("shards", str(len(m.shards))),
        ("files", f"{len(m.files)} ({human_bytes(total)})"),
        ("config", json.dumps(dict(m.config), sort_keys=True)),
        ("command", " ".join(m.command) or "-"),
    ]
    for k, v in rows:
        t.add_row(k, v)
    return t


def schema_table(schema: Any) -> Table:
    t = Table(title="arrays", title_justify="left")
    for col in ("name", "dtype", "shape", "kind", "units", "chunks", "codec", "description"):
        t.add_column(col)
    for name, s in schema.items():
        t.add_row(
            name,
            s.dtype,
            s.shape_str(),
            s.kind,
            s.units or "",
            str(s.chunks),
            s.codec,
            s.description,
        )
    return t


def episode_table(ep: Any) -> Table:
    t = Table(title=f"episode {ep.id}  (shard {ep.location.shard})", title_justify="left")
    for col in ("array", "shape", "dtype", "min", "max", "mean"):
        t.add_column(col)
    for name in ep:
        a = ep[name].read()
        if a.size:
            stats = (a.min(), a.max(), a.astype(np.float64).mean())
            cells = [f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v) for v in stats]
        else:
            cells = ["-", "-", "-"]
        t.add_row(name, str(a.shape), str(a.dtype), *cells)
    return t


def stats_table(stats: dict[str, Any]) -> Table:
    t = Table(title=f"{stats['dataset']['name']} statistics", title_justify="left")
    t.add_column("quantity")
    t.add_column("value")
    for k, v in {**stats["dataset"], **stats["counts"]}.items():
        t.add_row(str(k), human_bytes(v) if k == "bytes" else str(v))
    for name, d in stats["distributions"].items():
        if d.get("count"):
            t.add_row(
                name,
                f"n={d['count']} mean={d['mean']:.3g} sd={d['sd']:.3g} "
                f"min={d['min']:.3g} median={d['median']:.3g} max={d['max']:.3g}",
            )
    return t
