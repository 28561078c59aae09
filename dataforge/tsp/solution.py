"""The result of one open-path solve."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PathSolution:
    """An open Hamiltonian path and what is known about its quality.

    ``order``: item indices in visiting order, a permutation of ``range(n)``.
    ``cost``: sum of ``costs[order[k], order[k + 1]]``, recomputed from ``order``.
    ``solver``: the solver that found it (``"elkai"``, ``"lkh"``, ``"exact"``; ``"trivial"`` for
    n <= 2).
    ``optimal``: True when proven optimal, False when an exact solver stopped without a proof,
    None when unknown (heuristics).
    ``bound``: a proven lower bound on the optimal cost when known (equals ``cost`` when optimal).
    """

    order: tuple[int, ...]
    cost: int
    solver: str
    optimal: bool | None
    bound: int | None
