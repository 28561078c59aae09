"""Open-path solve with elkai, the LKH-3 heuristic bundled as a Python extension.

Licence: elkai ships LKH-3, whose author allows use for academic, non-commercial research only
(http://webhotel4.ruc.dk/~keld/research/LKH-3/). Datasets built with it are fine to publish; a
commercial user needs the author's permission or ``--solver exact``.

LKH-3 is deterministic for a given matrix and run count (fixed seed). It aborts the whole
process on cost overflow, so entries are checked against ``LKH_MAX_COST`` first.
"""

from __future__ import annotations

import numpy as np

from dataforge.errors import UsageError
from dataforge.tsp.costs import check_lkh_range, order_from_tour, path_cost, with_dummy
from dataforge.tsp.deps import broken_core_dependency
from dataforge.tsp.lkh_params import atsp_problem_text, lkh_parameters
from dataforge.tsp.solution import PathSolution


def solve_elkai(costs: np.ndarray, runs: int = 10) -> PathSolution:
    """Best open path LKH-3 finds in ``runs`` runs (n >= 2 items; heuristic, ``optimal=None``)."""
    n = costs.shape[0]
    if n < 2:
        raise UsageError("elkai needs at least 2 items")
    if runs < 1:
        raise UsageError(f"runs must be >= 1, got {runs}")
    check_lkh_range(costs)
    try:
        from elkai import _elkai
    except ImportError as exc:
        raise broken_core_dependency("elkai", "the LKH-3 ATSP solver", exc) from exc
    # elkai's extension entry point (what elkai.DistanceMatrix.solve_tsp calls), used directly
    # so that LKH gets our parameters (seed, move type), not only RUNS.
    params = "\n".join(["PROBLEM_FILE = :stdin:", *lkh_parameters(runs)]) + "\n"
    one_based = _elkai.solve_problem(params, atsp_problem_text(with_dummy(costs)))
    order = order_from_tour([int(i) - 1 for i in one_based], n)
    return PathSolution(order, path_cost(costs, order), "elkai", None, None)
