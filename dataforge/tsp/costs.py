"""Integer cost matrices: from metres, validation, path cost, the dummy-node reduction."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dataforge.errors import DataforgeError, UsageError

# LKH-3 multiplies every cost by PRECISION (100) in 32-bit ints; larger entries make it overflow
# and abort the whole process (an assertion in LinKernighan.c). 5e6 cm = 50 km leaves headroom.
LKH_MAX_COST = 5_000_000

_INT64_SAFE = float(2**62)


def to_integer_costs(cost_m: np.ndarray, scale: float = 100.0) -> np.ndarray:
    """Round a square matrix of non-negative finite costs (metres) to int64 (centimetres).

    ``scale`` multiplies before rounding (100: metres to centimetres). Raises
    :class:`~dataforge.errors.UsageError` for a non-square matrix, inf, nan or negative entries.
    """
    m = np.asarray(cost_m, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise UsageError(f"cost matrix must be square, got shape {m.shape}")
    if not np.isfinite(scale) or scale <= 0:
        raise UsageError(f"scale must be a positive finite number, got {scale}")
    if not np.all(np.isfinite(m)):
        raise UsageError("cost matrix has inf or nan entries (split unreachable items first)")
    if np.any(m < 0):
        raise UsageError("cost matrix has negative entries")
    scaled = np.rint(m * scale)
    if scaled.size and scaled.max() >= _INT64_SAFE:
        raise UsageError(f"cost matrix entries too large for int64 after scaling by {scale}")
    return scaled.astype(np.int64)


def check_costs(costs: np.ndarray) -> np.ndarray:
    """Return ``costs`` as int64 after checking it is a square 2D non-negative integer matrix."""
    c = np.asarray(costs)
    if c.ndim != 2 or c.shape[0] != c.shape[1]:
        raise UsageError(f"cost matrix must be square 2D, got shape {c.shape}")
    if not np.issubdtype(c.dtype, np.integer):
        raise UsageError(f"cost matrix must have an integer dtype, got {c.dtype}")
    if c.size and c.min() < 0:
        raise UsageError("cost matrix has negative entries")
    return c.astype(np.int64, copy=False)


def check_lkh_range(costs: np.ndarray) -> None:
    """Refuse entries LKH-3 cannot handle (it would abort the process, not raise)."""
    if costs.size and int(costs.max()) > LKH_MAX_COST:
        raise UsageError(
            f"cost entries up to {int(costs.max())} exceed LKH-3's safe range ({LKH_MAX_COST}); "
            "use a coarser unit or --solver exact"
        )


def path_cost(costs: np.ndarray, order: Sequence[int]) -> int:
    """Sum of ``costs[order[k], order[k + 1]]`` over consecutive items (0 for 0 or 1 items)."""
    idx = np.asarray(order, dtype=np.int64)
    if idx.size < 2:
        return 0
    return int(np.asarray(costs, dtype=np.int64)[idx[:-1], idx[1:]].sum())


def with_dummy(costs: np.ndarray) -> np.ndarray:
    """The (n+1) x (n+1) closed-tour matrix: node n is the dummy, 0 to and from every item."""
    n = costs.shape[0]
    closed = np.zeros((n + 1, n + 1), dtype=np.int64)
    closed[:n, :n] = costs
    np.fill_diagonal(closed, 0)
    return closed


def order_from_tour(tour: Sequence[int], n: int) -> tuple[int, ...]:
    """Cut a closed tour over ``n`` items plus dummy node ``n`` at the dummy.

    ``tour`` lists each of the n+1 nodes once (a repeated first node at the end is allowed).
    """
    nodes = list(tour)
    if len(nodes) == n + 2 and nodes[0] == nodes[-1]:
        nodes = nodes[:-1]
    if sorted(nodes) != list(range(n + 1)):
        raise DataforgeError(f"solver returned an invalid tour over {n + 1} nodes: {nodes}")
    k = nodes.index(n)
    return tuple(nodes[k + 1 :] + nodes[:k])
