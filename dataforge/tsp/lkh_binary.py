"""Open-path solve with an external LKH-3 executable (``LKH`` on PATH, or a given path).

The problem goes to LKH as a TSPLIB ATSP file (FULL_MATRIX, with the dummy node as the last node)
plus a parameter file in a temporary directory; the best tour comes back as a TSPLIB tour file.
LKH-3 is free for academic, non-commercial research only.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from dataforge.errors import DataforgeError, MissingDependencyError, UsageError
from dataforge.tsp.costs import check_lkh_range, order_from_tour, path_cost, with_dummy
from dataforge.tsp.lkh_params import atsp_problem_text, lkh_parameters
from dataforge.tsp.solution import PathSolution

LKH_URL = "http://webhotel4.ruc.dk/~keld/research/LKH-3/"


def find_lkh(binary: str | Path | None = None) -> str:
    """Path of the LKH executable: ``binary`` if given, else ``LKH`` on PATH."""
    name = str(binary) if binary is not None else "LKH"
    found = shutil.which(name)
    if found is None:
        where = f"at {name!r}" if binary is not None else "on PATH"
        raise MissingDependencyError(
            f"--solver lkh needs the LKH-3 binary {where} ({LKH_URL}); use --solver elkai"
        )
    return found


def write_problem(path: Path, closed: np.ndarray) -> None:
    """Write a TSPLIB ATSP problem with an explicit full matrix."""
    path.write_text("NAME : dataforge_open_path\n" + atsp_problem_text(closed))


def write_params(path: Path, problem: Path, tour: Path, runs: int, seed: int) -> None:
    """Write an LKH parameter file."""
    lines = [f"PROBLEM_FILE = {problem}", f"OUTPUT_TOUR_FILE = {tour}"]
    lines += [*lkh_parameters(runs, seed), "TRACE_LEVEL = 0"]
    path.write_text("\n".join(lines) + "\n")


def parse_tour(text: str) -> list[int]:
    """0-based nodes of a TSPLIB tour file's TOUR_SECTION (ends at -1 or EOF)."""
    nodes: list[int] = []
    in_section = False
    for raw in text.split("\n"):
        line = raw.strip()
        if not in_section:
            in_section = line.upper().startswith("TOUR_SECTION")
            continue
        if not line:
            continue
        for tok in line.split():
            if tok == "-1" or tok.upper() == "EOF":
                return nodes
            try:
                nodes.append(int(tok) - 1)
            except ValueError as exc:
                raise DataforgeError(f"LKH tour file: bad node {tok!r}") from exc
    if not in_section:
        raise DataforgeError("LKH tour file has no TOUR_SECTION")
    return nodes


def solve_lkh(
    costs: np.ndarray,
    runs: int = 10,
    *,
    binary: str | Path | None = None,
    seed: int = 1,
    timeout_s: float | None = None,
) -> PathSolution:
    """Best open path the LKH executable finds in ``runs`` runs (n >= 2; heuristic)."""
    n = costs.shape[0]
    if n < 2:
        raise UsageError("LKH needs at least 2 items")
    if runs < 1:
        raise UsageError(f"runs must be >= 1, got {runs}")
    check_lkh_range(costs)
    exe = find_lkh(binary)
    with tempfile.TemporaryDirectory(prefix="dataforge-lkh-") as tmp:
        d = Path(tmp)
        problem, par, tour = d / "problem.atsp", d / "params.par", d / "best.tour"
        write_problem(problem, with_dummy(costs))
        write_params(par, problem, tour, runs, seed)
        try:
            proc = subprocess.run(
                [exe, str(par)],
                cwd=d,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise DataforgeError(f"LKH did not finish within {timeout_s} s") from exc
        if proc.returncode != 0 or not tour.is_file():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise DataforgeError(
                f"LKH failed (exit {proc.returncode}, no tour file: {not tour.is_file()}): "
                + " | ".join(tail)
            )
        nodes = parse_tour(tour.read_text())
    order = order_from_tour(nodes, n)
    return PathSolution(order, path_cost(costs, order), "lkh", None, None)
