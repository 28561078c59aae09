"""``dataforge ir2r plot``: one tour drawn on its scene, and the split's tour lengths."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dataforge.errors import UsageError
from dataforge.nav.graph import NavGraph

if TYPE_CHECKING:
    from dataforge.store.reader import Dataset, StoredEpisode


def top_down(xyz: np.ndarray, continuous: bool) -> np.ndarray:
    """Plan-view coordinates: Matterport3D is z-up (x, y); habitat is y-up (x, -z)."""
    xyz = np.asarray(xyz, dtype=np.float64).reshape(-1, 3)
    return np.stack([xyz[:, 0], -xyz[:, 2]] if continuous else [xyz[:, 0], xyz[:, 1]], axis=1)


def find_tour(ds: Dataset, scene: str, set_index: int, repetition: int) -> StoredEpisode:
    scenes = sorted({ep.metadata["scene"] for ep in ds.episodes()})
    if scene not in scenes:
        raise UsageError(f"scene {scene!r} has no tours here; scenes: {', '.join(scenes)}")
    eid = f"{scene}/set-{set_index:02d}/tour-{repetition}"
    if eid not in ds:
        raise UsageError(f"no tour {eid} (see 'dataforge inspect {ds.root}' for the tours)")
    return ds[eid]


def plot_tour(
    ds: Dataset,
    scene: str,
    out: Path,
    *,
    graph: NavGraph | None = None,
    set_index: int = 0,
    repetition: int = 0,
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    continuous = bool(ds.manifest.config.get("continuous", False))
    tour = find_tour(ds, scene, set_index, repetition)
    arr, meta = tour.read(), tour.metadata
    starts = top_down(arr["start_position"], continuous)
    ends = top_down(arr["end_position"], continuous)
    n = len(starts)
    fig, (ax, hx) = plt.subplots(1, 2, figsize=(13, 6), gridspec_kw={"width_ratios": [2, 1]})
    if graph is not None:
        pos = top_down(graph.positions, continuous)
        segs = [(pos[i], pos[j]) for i, j, _ in graph.edges]
        from matplotlib.collections import LineCollection

        ax.add_collection(LineCollection(segs, colors="#cccccc", linewidths=0.6, zorder=1))
        ax.scatter(pos[:, 0], pos[:, 1], s=3, c="#999999", zorder=2)
    colors = plt.get_cmap("viridis")(np.linspace(0, 1, max(n, 2)))
    for k in range(n):
        route = _route(graph, tour, k, continuous)
        ax.plot(route[:, 0], route[:, 1], "-", color=colors[k], lw=2.2, zorder=4)
        ax.annotate(
            "",
            ends[k],
            route[-2] if len(route) > 1 else starts[k],
            zorder=5,
            arrowprops={"arrowstyle": "-|>", "color": colors[k], "lw": 1.5},
        )
        ax.text(*starts[k], str(k + 1), fontsize=7, zorder=6, ha="center", va="bottom")
        if k + 1 < n:
            hop = _transition(graph, tour, k, continuous)
            ax.plot(hop[:, 0], hop[:, 1], "--", color="#e4572e", lw=1.0, zorder=3)
    ax.plot([], [], "-", color=colors[0], label="episode path (colour = order)")
    ax.plot([], [], "--", color="#e4572e", label="oracle transition")
    ax.legend(loc="best", fontsize=8)
    ax.set_aspect("equal")
    ax.autoscale()
    ax.set_title(
        f"{scene} set {set_index} tour {repetition}: {n} episodes, "
        f"oracle transitions {meta['total_m']:.1f} m",
        fontsize=10,
    )
    ax.set_xlabel("x (m)")
    ax.set_ylabel("-z (m)" if continuous else "y (m)")
    lengths = [len(ep["path_id"]) for ep in ds.episodes()]
    step = max(1, (max(lengths) - min(lengths) + 1) // 30)
    hx.hist(lengths, bins=np.arange(min(lengths) - 0.5, max(lengths) + step, step), color="#3b75af")
    hx.axvline(n, color="#e4572e", lw=1.5, label="this tour")
    hx.set_title(f"tour lengths, split {ds.manifest.config['split']} ({len(lengths)} tours)")
    hx.set_xlabel("episodes per tour")
    hx.set_ylabel("tours")
    hx.legend(fontsize=8)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def _graph_route(graph: NavGraph | None, a: np.ndarray, b: np.ndarray) -> list[str]:
    if graph is None:
        return []
    ia = int(np.argmin(np.linalg.norm(graph.positions - a, axis=1)))
    ib = int(np.argmin(np.linalg.norm(graph.positions - b, axis=1)))
    return graph.shortest_path(graph.ids[ia], graph.ids[ib])


def _polyline(graph: NavGraph | None, a: np.ndarray, b: np.ndarray, continuous: bool) -> np.ndarray:
    nodes = _graph_route(graph, a, b)
    if graph is not None and nodes:
        return top_down(np.array([graph.position(v) for v in nodes]), continuous)
    return top_down(np.array([a, b]), continuous)


def _route(graph: NavGraph | None, tour: StoredEpisode, k: int, continuous: bool) -> np.ndarray:
    return _polyline(graph, tour["start_position"][k], tour["end_position"][k], continuous)


def _transition(
    graph: NavGraph | None, tour: StoredEpisode, k: int, continuous: bool
) -> np.ndarray:
    tip_to_tip = tour.metadata["ordering"] == "tip-to-tip"
    origin = tour["start_position"][k] if tip_to_tip else tour["end_position"][k]
    return _polyline(graph, origin, tour["start_position"][k + 1], continuous)
