"""Histograms of a dataset's distributions (``dataforge stats --plot``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from dataforge.errors import UsageError


def plot_distributions(
    distributions: Mapping[str, Sequence[float]], out: Path, title: str = ""
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = [(k, v) for k, v in distributions.items() if len(v)]
    if not items:
        raise UsageError("nothing to plot: the dataset has no distributions with values")
    ncols = min(3, len(items))
    nrows = math.ceil(len(items) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
    for ax, (name, values) in zip(axes.ravel(), items, strict=False):
        ax.hist(values, bins=min(40, max(5, int(math.sqrt(len(values))))), color="#3b75af")
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("count", fontsize=8)
        ax.tick_params(labelsize=8)
    for ax in axes.ravel()[len(items) :]:
        ax.axis("off")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
