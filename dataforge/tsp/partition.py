"""Split items into groups that can be chained into one open path."""

from __future__ import annotations

import numpy as np

from dataforge.errors import UsageError
from dataforge.tsp.deps import broken_core_dependency


def mutually_reachable_groups(reach: np.ndarray) -> list[list[int]]:
    """Strongly connected components of the "can be followed by" digraph.

    ``reach`` is an n x n bool matrix; ``reach[i, j]`` True means item ``i`` can be followed by
    item ``j`` (e.g. the start of ``j`` is at finite distance from the end of ``i``). The diagonal
    is ignored. Returns the groups, each sorted ascending, ordered by their smallest member, so
    the result depends only on ``reach``.

    Within one group every item can be chained to every other through the group. When
    reachability is transitive (it is when the items are paths on one navigation graph: reaching
    ``j`` from ``i`` and ``k`` from ``j`` gives a way from ``i`` to ``k``), every ordered pair
    inside a group is directly reachable, so every order of the group is a valid open path and
    its cost matrix is finite. Items in different groups cannot all be chained both ways: an
    edge only one way (``i -> j`` but no way back) puts ``i`` and ``j`` in separate groups.
    """
    r = np.asarray(reach)
    if r.ndim != 2 or r.shape[0] != r.shape[1]:
        raise UsageError(f"reachability matrix must be square, got shape {r.shape}")
    if r.dtype != np.bool_:
        raise UsageError(f"reachability matrix must be bool, got {r.dtype}")
    n = r.shape[0]
    if n == 0:
        return []
    try:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components
    except ImportError as exc:
        raise broken_core_dependency("scipy", "grouping items by reachability", exc) from exc
    adjacency = r.copy()
    np.fill_diagonal(adjacency, False)
    _, labels = connected_components(
        csr_matrix(adjacency.astype(np.int8)), directed=True, connection="strong"
    )
    groups: dict[int, list[int]] = {}
    for item, label in enumerate(labels.tolist()):
        groups.setdefault(label, []).append(item)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])
