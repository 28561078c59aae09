"""One entry point for every open-path solver."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from dataforge.errors import DataforgeError, UsageError
from dataforge.tsp.costs import check_costs, path_cost
from dataforge.tsp.solution import PathSolution

SOLVERS = ("elkai", "lkh", "exact")


def solve_open_path(
    costs: np.ndarray,
    solver: str = "elkai",
    *,
    runs: int = 10,
    time_limit_s: float = 60.0,
    lkh_binary: str | Path | None = None,
) -> PathSolution:
    """Cheapest order visiting every item once (free first and last item) for ``costs``.

    ``costs`` is a square non-negative integer matrix; ``costs[i, j]`` is the cost of item ``j``
    right after item ``i`` (the diagonal is ignored). ``solver`` is one of :data:`SOLVERS`;
    ``runs`` applies to ``elkai`` and ``lkh``, ``time_limit_s`` to ``exact``, ``lkh_binary``
    (default: ``LKH`` on PATH) to ``lkh``. One or two items are solved directly (optimal).
    The returned cost is always recomputed from the returned order.
    """
    if solver not in SOLVERS:
        raise UsageError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    c = check_costs(costs)
    n = c.shape[0]
    if n == 0:
        raise UsageError("cannot order zero items")
    if n == 1:
        return PathSolution((0,), 0, "trivial", True, 0)
    if n == 2:
        order: tuple[int, ...] = (0, 1) if c[0, 1] <= c[1, 0] else (1, 0)
        cost = path_cost(c, order)
        return PathSolution(order, cost, "trivial", True, cost)

    if solver == "elkai":
        from dataforge.tsp.elkai_solver import solve_elkai

        sol = solve_elkai(c, runs=runs)
    elif solver == "lkh":
        from dataforge.tsp.lkh_binary import solve_lkh

        sol = solve_lkh(c, runs=runs, binary=lkh_binary)
    else:
        from dataforge.tsp.exact import solve_exact

        sol = solve_exact(c, time_limit_s=time_limit_s)

    order = tuple(int(i) for i in sol.order)
    if sorted(order) != list(range(n)):
        raise DataforgeError(f"solver {solver!r} returned an order that is not a permutation")
    cost = path_cost(c, order)
    if sol.bound is not None and sol.bound > cost:
        raise DataforgeError(f"solver {solver!r} reported bound {sol.bound} above cost {cost}")
    bound = cost if sol.optimal else sol.bound
    return dataclasses.replace(sol, order=order, cost=cost, bound=bound)


def require_solver(solver: str) -> None:
    """Fail fast (before any work) when ``solver``'s library or binary is missing."""
    if solver not in SOLVERS:
        raise UsageError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    from dataforge.errors import missing_dependency

    if solver == "lkh":
        from dataforge.tsp.lkh_binary import find_lkh

        find_lkh()
    elif solver == "elkai":
        try:  # the extension solve_elkai calls
            from elkai import _elkai  # noqa: F401
        except ImportError as exc:
            from dataforge.tsp.deps import broken_core_dependency

            raise broken_core_dependency("elkai", "the LKH-3 ATSP solver", exc) from None
    else:
        try:
            from ortools.sat.python import cp_model  # noqa: F401
        except ImportError:
            raise missing_dependency("ortools", "ir2r", "the exact CP-SAT ATSP solver") from None
