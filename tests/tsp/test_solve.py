"""Open asymmetric TSP solvers against brute force, each other, and a fake LKH executable."""

from __future__ import annotations

import itertools
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from dataforge.errors import DataforgeError, MissingDependencyError, UsageError
from dataforge.tsp import SOLVERS, PathSolution, solve_open_path
from dataforge.tsp.costs import LKH_MAX_COST, order_from_tour, path_cost
from dataforge.tsp.exact import solve_exact
from dataforge.tsp.lkh_binary import parse_tour


def brute_force(costs: np.ndarray) -> int:
    """Optimal open-path cost by trying every order."""
    c = costs.tolist()
    n = len(c)
    return min(
        sum(c[p[k]][p[k + 1]] for k in range(n - 1)) for p in itertools.permutations(range(n))
    )


def random_costs(n: int, seed: int, high: int = 1000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.integers(0, high, size=(n, n), dtype=np.int64)
    np.fill_diagonal(c, 0)
    return c


def planar_costs(n: int, seed: int) -> np.ndarray:
    """Points on a plane (metres) plus a random asymmetric penalty, in centimetres."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 30, size=(n, 2))
    d = np.linalg.norm(p[:, None] - p[None], axis=-1)
    c = np.rint(100 * (d + rng.uniform(0, 5, size=(n, n)))).astype(np.int64)
    np.fill_diagonal(c, 0)
    return c


def check(sol: PathSolution, costs: np.ndarray) -> None:
    assert sorted(sol.order) == list(range(costs.shape[0]))
    assert sol.cost == path_cost(costs, sol.order)
    assert isinstance(sol.cost, int)


@pytest.mark.parametrize("n", range(3, 9))
@pytest.mark.parametrize("seed", [0, 1])
def test_elkai_and_exact_match_brute_force(n: int, seed: int):
    costs = random_costs(n, seed)
    best = brute_force(costs)
    for solver in ("elkai", "exact"):
        sol = solve_open_path(costs, solver)
        check(sol, costs)
        assert sol.cost == best, solver
        assert sol.solver == solver
    exact = solve_open_path(costs, "exact")
    assert exact.optimal is True and exact.bound == best
    heur = solve_open_path(costs, "elkai")
    assert heur.optimal is None and heur.bound is None


def test_reduction_is_open_not_a_cut_closed_tour():
    # The best closed tour costs 13; dropping its dearest edge leaves a path of 9. The best open
    # path 2 -> 1 -> 0 -> 3 costs 5, and closing it (3 -> 2 costs 9) gives 14 > 13: a solver
    # that cut a closed tour over the items alone could not find it.
    costs = np.array([[0, 4, 7, 1], [1, 0, 4, 4], [9, 3, 0, 3], [2, 6, 9, 0]], dtype=np.int64)
    tours = [(0, *p, 0) for p in itertools.permutations(range(1, 4))]
    closed = min(path_cost(costs, t) for t in tours)
    cut = min(
        path_cost(costs, t) - max(costs[a, b] for a, b in itertools.pairwise(t))
        for t in tours
        if path_cost(costs, t) == closed
    )
    assert (closed, cut, brute_force(costs)) == (13, 9, 5)
    for solver in ("elkai", "exact"):
        sol = solve_open_path(costs, solver)
        check(sol, costs)
        assert (sol.order, sol.cost) == ((2, 1, 0, 3), 5)
        assert sol.cost + costs[sol.order[-1], sol.order[0]] > closed


def test_elkai_is_deterministic():
    costs = planar_costs(60, seed=3)
    a = solve_open_path(costs, "elkai", runs=3)
    b = solve_open_path(costs.copy(), "elkai", runs=3)
    assert a == b


@pytest.mark.slow
def test_exact_proves_optimum_on_40_items():
    costs = planar_costs(40, seed=0)
    exact = solve_open_path(costs, "exact", time_limit_s=60)
    heur = solve_open_path(costs, "elkai")
    check(exact, costs)
    assert exact.optimal is True
    assert exact.bound == exact.cost == heur.cost


def test_exact_with_tiny_time_limit_still_gives_a_path_and_a_bound():
    costs = planar_costs(90, seed=1)
    sol = solve_open_path(costs, "exact", time_limit_s=0.05)
    check(sol, costs)
    assert sol.optimal in (True, False)
    assert sol.bound is not None and 0 <= sol.bound <= sol.cost


def test_exact_hint():
    costs = random_costs(6, seed=5)
    sol = solve_exact(costs, hint=[5, 4, 3, 2, 1, 0])
    assert sol.cost == brute_force(costs) and sol.optimal
    with pytest.raises(UsageError, match="hint"):
        solve_exact(costs, hint=[0, 1, 2])


def test_tiny_instances():
    one = solve_open_path(np.zeros((1, 1), dtype=np.int64))
    assert one == PathSolution((0,), 0, "trivial", True, 0)
    two = solve_open_path(np.array([[0, 9], [4, 0]]), "exact")
    assert (two.order, two.cost, two.optimal, two.bound) == ((1, 0), 4, True, 4)
    tie = solve_open_path(np.array([[0, 4], [4, 0]]))
    assert tie.order == (0, 1)


def test_symmetric_matrix():
    # elkai switches to TYPE TSP for symmetric input; the dummy reduction still holds.
    rng = np.random.default_rng(11)
    c = rng.integers(0, 100, size=(7, 7))
    c = c + c.T
    np.fill_diagonal(c, 0)
    assert solve_open_path(c, "elkai").cost == brute_force(c)


@pytest.mark.parametrize(
    "costs, match",
    [
        (np.zeros((2, 3), dtype=np.int64), "square"),
        (np.zeros(3, dtype=np.int64), "square"),
        (np.array([[0, -1, 2], [1, 0, 2], [1, 1, 0]]), "negative"),
        (np.array([[0.0, np.inf, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]), "integer"),
        (np.zeros((3, 3), dtype=np.float64), "integer"),
        (np.zeros((0, 0), dtype=np.int64), "zero items"),
    ],
)
def test_bad_costs(costs: np.ndarray, match: str):
    with pytest.raises(UsageError, match=match):
        solve_open_path(costs)


def test_unknown_solver_lists_choices():
    with pytest.raises(UsageError, match="elkai, lkh, exact"):
        solve_open_path(random_costs(4, 0), "concorde")
    assert SOLVERS == ("elkai", "lkh", "exact")


def test_costs_beyond_lkh_range_are_refused_not_crashing():
    costs = random_costs(5, 0)
    costs[0, 1] = LKH_MAX_COST + 1
    with pytest.raises(UsageError, match="exact"):
        solve_open_path(costs, "elkai")
    assert solve_open_path(costs, "exact").cost == brute_force(costs)


def test_order_from_tour():
    assert order_from_tour([2, 3, 0, 1, 2], 3) == (0, 1, 2)
    assert order_from_tour([0, 1, 3, 2], 3) == (2, 0, 1)
    with pytest.raises(DataforgeError):
        order_from_tour([0, 1, 1, 3], 3)


# --- the external LKH binary, with a fake executable on PATH ---------------------------------

FAKE_LKH = """\
import itertools, pathlib, sys

par = pathlib.Path(sys.argv[1])
(pathlib.Path(__file__).parent / "seen.par").write_text(par.read_text())
params = dict(
    (k.strip(), v.strip()) for k, v in (line.split("=", 1) for line in par.read_text().splitlines())
)
lines = pathlib.Path(params["PROBLEM_FILE"]).read_text().splitlines()
assert "TYPE : ATSP" in lines and "EDGE_WEIGHT_FORMAT : FULL_MATRIX" in lines
n = int(next(line for line in lines if line.startswith("DIMENSION")).split(":")[1])
start = lines.index("EDGE_WEIGHT_SECTION") + 1
c = [[int(v) for v in line.split()] for line in lines[start : start + n]]
assert lines[start + n] == "EOF"
tour = min(
    ((0, *p) for p in itertools.permutations(range(1, n))),
    key=lambda t: sum(c[t[k]][t[(k + 1) % n]] for k in range(n)),
)
out = ["NAME : fake", "TYPE : TOUR", f"DIMENSION : {n}", "TOUR_SECTION"]
out += [str(i + 1) for i in tour] + ["-1", "EOF"]
pathlib.Path(params["OUTPUT_TOUR_FILE"]).write_text("\\n".join(out) + "\\n")
print("fake LKH done")
"""


def _install_fake(bin_dir: Path, body: str) -> Path:
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "LKH"
    exe.write_text(f"#!{sys.executable}\n{body}")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return exe


def test_lkh_missing_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MissingDependencyError, match="--solver elkai") as err:
        solve_open_path(random_costs(4, 0), "lkh")
    assert isinstance(err.value, ImportError)
    assert "\n" not in str(err.value)
    with pytest.raises(MissingDependencyError):
        solve_open_path(random_costs(4, 0), "lkh", lkh_binary=tmp_path / "nope")


@pytest.mark.parametrize("n", [3, 5, 7])
def test_lkh_fake_binary_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, n: int):
    bin_dir = tmp_path / "bin"
    _install_fake(bin_dir, FAKE_LKH)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    costs = random_costs(n, seed=n)
    sol = solve_open_path(costs, "lkh", runs=4)
    check(sol, costs)
    assert sol.cost == brute_force(costs)
    assert (sol.solver, sol.optimal, sol.bound) == ("lkh", None, None)
    seen = (bin_dir / "seen.par").read_text()
    assert "RUNS = 4" in seen and "SEED = 1" in seen and "PROBLEM_FILE = " in seen


def test_lkh_explicit_binary_and_failure(tmp_path: Path):
    good = _install_fake(tmp_path / "good", FAKE_LKH)
    costs = random_costs(5, seed=2)
    assert solve_open_path(costs, "lkh", lkh_binary=good).cost == brute_force(costs)
    bad = _install_fake(
        tmp_path / "bad", "import sys\nprint('boom', file=sys.stderr)\nsys.exit(3)\n"
    )
    with pytest.raises(DataforgeError, match="boom"):
        solve_open_path(costs, "lkh", lkh_binary=bad)


def test_parse_tour():
    text = "NAME : x\nCOMMENT : y\nTYPE : TOUR\nDIMENSION : 3\nTOUR_SECTION\n2\n3 1\n-1\nEOF\n"
    assert parse_tour(text) == [1, 2, 0]
    with pytest.raises(DataforgeError, match="TOUR_SECTION"):
        parse_tour("NAME : x\n")


def test_broken_core_solver_libraries_name_a_reinstall_not_an_extra(
    monkeypatch: pytest.MonkeyPatch,
):
    """elkai and scipy are core dependencies: when they do not import, the install is broken
    (reinstall them); only OR-tools (--solver exact) comes from the ir2r extra."""
    from dataforge.tsp import mutually_reachable_groups, require_solver

    monkeypatch.setitem(sys.modules, "elkai", None)
    monkeypatch.setitem(sys.modules, "elkai._elkai", None)
    for fail in (lambda: require_solver("elkai"), lambda: solve_open_path(random_costs(4, 0))):
        with pytest.raises(MissingDependencyError) as err:
            fail()
        text = str(err.value)
        assert "\n" not in text and "dataforge[" not in text, text
        assert "core dependency" in text and "pip install --force-reinstall 'elkai==2.0.1'" in text
    monkeypatch.setitem(sys.modules, "scipy.sparse.csgraph", None)
    with pytest.raises(MissingDependencyError) as err:
        mutually_reachable_groups(np.ones((2, 2), dtype=bool))
    assert "pip install --force-reinstall 'scipy" in str(err.value), str(err.value)
    assert "dataforge[" not in str(err.value)
    monkeypatch.setitem(sys.modules, "ortools.sat.python", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'dataforge\[ir2r\]'"):
        require_solver("exact")
