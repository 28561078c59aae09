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
    return save_figure(fig, out)


def save_figure(fig: object, out: Path | str, dpi: int = 110) -> Path:
    """Write a matplotlib figure to ``out`` and close it; a missing folder (the user's mistake,
    not created) or a failed write is a one-line ``UsageError``."""
    import matplotlib.pyplot as plt

    out = Path(out)
    try:
        if not out.parent.is_dir():
            raise UsageError(f"cannot write the plot {out}: the folder {out.parent} does not exist")
        fig.savefig(out, dpi=dpi)  # type: ignore[attr-defined]
    except OSError as exc:
        raise UsageError(f"cannot write the plot {out}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)  # type: ignore[arg-type]
    return out
