"""Open asymmetric TSP: the cheapest order to visit every item once, free first and last item.

Costs are a square integer matrix, ``costs[i, j]`` = cost of following item ``i`` by item ``j``
(e.g. centimetres from the end of path ``i`` to the start of path ``j``; see
:func:`to_integer_costs`). The open path is reduced to a closed tour by one extra *dummy* node
joined to every item at cost 0 in both directions; the tour's item leaving the dummy is the first
item and the one entering it the last.

Solvers (:data:`SOLVERS`): ``elkai`` (LKH-3 bundled as a Python extension; heuristic, licence
for non-commercial research only), ``lkh`` (an external LKH-3 executable; heuristic), ``exact``
(OR-tools CP-SAT, proves optimality within a time limit). Items that cannot follow each other
at all are split beforehand with :func:`mutually_reachable_groups`.
"""

from __future__ import annotations

from dataforge.tsp.costs import path_cost, to_integer_costs
from dataforge.tsp.partition import mutually_reachable_groups
from dataforge.tsp.solution import PathSolution
from dataforge.tsp.solve import SOLVERS, require_solver, solve_open_path

__all__ = [
    "SOLVERS",
    "PathSolution",
    "mutually_reachable_groups",
    "path_cost",
    "require_solver",
    "solve_open_path",
    "to_integer_costs",
]
