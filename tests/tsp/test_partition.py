"""Grouping items by mutual reachability, and metre-to-centimetre cost conversion."""

from __future__ import annotations

import numpy as np
import pytest

from dataforge.errors import UsageError
from dataforge.tsp import mutually_reachable_groups, to_integer_costs


def _reach(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    r = np.zeros((n, n), dtype=bool)
    for i, j in edges:
        r[i, j] = True
    return r


def test_two_disconnected_groups():
    # {0, 2, 4} all reach each other, {1, 3} reach each other, nothing between them.
    r = _reach(5, [(0, 2), (2, 4), (4, 0), (2, 0), (1, 3), (3, 1)])
    assert mutually_reachable_groups(r) == [[0, 2, 4], [1, 3]]


def test_one_way_edge_splits_a_chain():
    # 0 -> 1 -> 2 is a chain, but nothing leads back: each item is its own group.
    r = _reach(3, [(0, 1), (1, 2)])
    assert mutually_reachable_groups(r) == [[0], [1], [2]]
    # One edge back from 2 to 0 closes the cycle: one group.
    r[2, 0] = True
    assert mutually_reachable_groups(r) == [[0, 1, 2]]


def test_one_way_edge_between_groups_keeps_them_apart():
    r = _reach(4, [(0, 1), (1, 0), (2, 3), (3, 2), (1, 2)])
    assert mutually_reachable_groups(r) == [[0, 1], [2, 3]]


def test_groups_are_sorted_and_deterministic():
    rng = np.random.default_rng(7)
    n = 30
    labels = rng.integers(0, 4, size=n)
    r = labels[:, None] == labels[None, :]  # complete within each label, nothing across
    groups = mutually_reachable_groups(r)
    assert groups == mutually_reachable_groups(r.copy())
    assert [g[0] for g in groups] == sorted(g[0] for g in groups)
    assert all(g == sorted(g) for g in groups)
    assert sorted(i for g in groups for i in g) == list(range(n))
    for g in groups:
        assert len({int(labels[i]) for i in g}) == 1
    assert len(groups) == len(set(labels.tolist()))


def test_diagonal_and_empty():
    assert mutually_reachable_groups(np.eye(3, dtype=bool)) == [[0], [1], [2]]
    assert mutually_reachable_groups(np.zeros((0, 0), dtype=bool)) == []
    assert mutually_reachable_groups(np.ones((1, 1), dtype=bool)) == [[0]]


@pytest.mark.parametrize(
    "reach", [np.ones((2, 3), dtype=bool), np.ones(3, dtype=bool), np.ones((2, 2), dtype=int)]
)
def test_bad_reachability_matrix(reach: np.ndarray):
    with pytest.raises(UsageError):
        mutually_reachable_groups(reach)


def test_to_integer_costs_rounds_to_centimetres():
    m = np.array([[0.0, 1.2349, 3.0], [1.2351, 0.0, 0.004], [7.006, 12.0, 0.0]])
    c = to_integer_costs(m)
    assert c.dtype == np.int64
    assert c.tolist() == [[0, 123, 300], [124, 0, 0], [701, 1200, 0]]
    assert to_integer_costs(m, scale=1000.0)[0, 1] == 1235
    assert to_integer_costs(np.zeros((0, 0))).shape == (0, 0)


@pytest.mark.parametrize(
    "m, match",
    [
        (np.zeros((2, 3)), "square"),
        (np.zeros(4), "square"),
        (np.array([[0.0, np.inf], [1.0, 0.0]]), "inf or nan"),
        (np.array([[0.0, np.nan], [1.0, 0.0]]), "inf or nan"),
        (np.array([[0.0, -0.5], [1.0, 0.0]]), "negative"),
        (np.array([[0.0, 1e300], [1.0, 0.0]]), "too large"),
    ],
)
def test_to_integer_costs_errors(m: np.ndarray, match: str):
    with pytest.raises(UsageError, match=match):
        to_integer_costs(m)
