"""A weighted directed navigation graph over named nodes with 3D positions.

Shortest paths use ``scipy.sparse.csgraph`` (Dijkstra from many sources at once); ``to_networkx``
gives the same graph to code that prefers networkx (drawing, components).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra


@dataclass(frozen=True, eq=False)
class NavGraph:
    """Nodes ``ids`` at ``positions`` (N x 3, metres); directed edges ``(i, j, weight)``.

    An undirected edge is two directed ones. Unreachable pairs have distance ``inf``.
    """

    ids: tuple[str, ...]
    positions: np.ndarray
    edges: tuple[tuple[int, int, float], ...]
    _index: dict[str, int] = field(init=False, repr=False)
    _matrix: csr_matrix = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = len(self.ids)
        pos = np.asarray(self.positions, dtype=np.float64)
        if pos.shape != (n, 3):
            raise ValueError(f"positions must be {n} x 3, got {pos.shape}")
        index = {v: i for i, v in enumerate(self.ids)}
        if len(index) != n:
            raise ValueError("node ids must be unique")
        if self.edges:
            src, dst, w = (np.asarray(c) for c in zip(*self.edges, strict=True))
        else:
            src = dst = np.zeros(0, np.int64)
            w = np.zeros(0)
        if len(w) and (np.any(w < 0) or not np.all(np.isfinite(w))):
            raise ValueError("edge weights must be finite and non-negative")
        # csgraph treats an explicit 0 as "no edge"; a tiny positive weight keeps co-located
        # nodes connected without changing any distance measurably.
        w = np.where(w == 0, 1e-12, w)
        matrix = csr_matrix((w, (src, dst)), shape=(n, n))
        object.__setattr__(self, "positions", pos)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_matrix", matrix)

    @classmethod
    def from_edges(
        cls,
        positions: Mapping[str, Sequence[float]],
        edges: Iterable[tuple[str, str]],
        *,
        directed: bool = False,
    ) -> NavGraph:
        """Nodes from ``{id: xyz}``; edges by id, weighted by Euclidean distance."""
        ids = tuple(positions)
        pos = np.array([positions[v] for v in ids], dtype=np.float64).reshape(len(ids), 3)
        index = {v: i for i, v in enumerate(ids)}
        out: dict[tuple[int, int], float] = {}
        for a, b in edges:
            i, j = index[a], index[b]
            # math.dist, not np.linalg.norm: BLAS kernels differ between CPUs in the last bit,
            # and datasets must be byte-identical everywhere (docs/development.md)
            d = math.dist(pos[i], pos[j])
            out[(i, j)] = d
            if not directed:
                out[(j, i)] = d
        return cls(ids, pos, tuple((i, j, d) for (i, j), d in sorted(out.items())))

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, node: object) -> bool:
        return node in self._index

    def index(self, node: str) -> int:
        try:
            return self._index[node]
        except KeyError:
            raise KeyError(f"node {node!r} is not in the graph") from None

    def position(self, node: str) -> np.ndarray:
        return self.positions[self.index(node)]

    def distances(self, sources: Sequence[str], targets: Sequence[str] | None = None) -> np.ndarray:
        """Shortest-path distances, ``len(sources) x len(targets)`` (all nodes if None)."""
        src = np.array([self.index(s) for s in sources], dtype=np.int64)
        if len(src) == 0:
            return np.zeros((0, len(self) if targets is None else len(targets)))
        unique, inverse = np.unique(src, return_inverse=True)
        d = dijkstra(self._matrix, directed=True, indices=unique)[inverse]
        if targets is not None:
            d = d[:, [self.index(t) for t in targets]]
        return np.where(d < 1e-9, 0.0, d)

    def shortest_path(self, a: str, b: str) -> list[str]:
        """Node ids from ``a`` to ``b`` inclusive; ``[]`` when ``b`` is unreachable."""
        i, j = self.index(a), self.index(b)
        _, pred = dijkstra(self._matrix, directed=True, indices=i, return_predecessors=True)
        if i != j and pred[j] < 0:
            return []
        path = [j]
        while path[-1] != i:
            path.append(int(pred[path[-1]]))
        return [self.ids[k] for k in reversed(path)]

    def to_networkx(self):  # -> networkx.DiGraph (imported lazily)
        import networkx as nx

        g = nx.DiGraph()
        for i, v in enumerate(self.ids):
            g.add_node(v, position=tuple(self.positions[i]))
        for i, j, w in self.edges:
            g.add_edge(self.ids[i], self.ids[j], weight=w)
        return g
