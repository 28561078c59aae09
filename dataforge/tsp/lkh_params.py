"""What both LKH-3 front ends (elkai, an LKH binary) send: the TSPLIB problem and parameters.

``MOVE_TYPE = 3`` (3-opt sequential moves instead of LKH's default 5-opt) was measured on the
IR2R validation sets (benchmarks/bench_ir2r.py): one run found every proven optimum, 3x faster
per run than the default, where the default needed 10 runs for one of the 11 val_unseen sets.
"""

from __future__ import annotations

import numpy as np

MOVE_TYPE = 3
SEED = 1


def lkh_parameters(runs: int, seed: int = SEED) -> list[str]:
    """Parameter lines (without PROBLEM_FILE / OUTPUT_TOUR_FILE)."""
    return [f"RUNS = {int(runs)}", f"SEED = {int(seed)}", f"MOVE_TYPE = {MOVE_TYPE}"]


def atsp_problem_text(closed: np.ndarray) -> str:
    """A TSPLIB ATSP problem with an explicit full integer matrix."""
    lines = [
        "TYPE : ATSP",
        f"DIMENSION : {closed.shape[0]}",
        "EDGE_WEIGHT_TYPE : EXPLICIT",
        "EDGE_WEIGHT_FORMAT : FULL_MATRIX",
        "EDGE_WEIGHT_SECTION",
    ]
    lines += [" ".join(str(int(v)) for v in row) for row in closed]
    lines.append("EOF")
    return "\n".join(lines) + "\n"
