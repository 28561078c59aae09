"""MultiON's checks: validate passes on generated episodes, the statistics count what is stored,
the plot is written, and the invariants catch what they describe (directly, on small arrays)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dfhelpers import needs_house_generator

from dataforge.pipelines.multion import checks
from dataforge.pipelines.multion.sampling import yaw_quaternion
from dataforge.stats import compute_stats
from dataforge.store import open_dataset
from dataforge.validation import validate

CONFIG = {
    "m": 2,
    "min_geodesic": 2.0,
    "max_geodesic": 20.0,
    "block": True,
    "cylinder_radius": 0.1,
    "agent_radius": 0.1,
}
META = {"rooms": [["room|1", "Kitchen"], ["room|2", "Bedroom"]], "scene_id": "procthor/x.json"}


# -- a generated dataset -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def dataset(tiny_dataset: Any) -> Path:
    """The pipeline's tiny example (two generated houses, 2-ON)."""
    return tiny_dataset("multion")


@pytest.mark.slow
@needs_house_generator()
def test_validate_passes_on_generated_episodes(dataset: Path) -> None:
    report = validate(dataset)
    assert report.ok, [p.line() for p in report.problems]
    assert report.checked["invariants"] == list(checks.INVARIANTS)


@pytest.mark.slow
@needs_house_generator()
def test_stats_count_what_is_stored(dataset: Path) -> None:
    with open_dataset(dataset) as ds:
        s = checks.stats(ds)
        m = ds.manifest.config["m"]
        totals = np.concatenate([ep["geodesic_distance"].read() for ep in ds.episodes()])
        tallies: dict[str, dict[str, int]] = {"rejected": {}, "abandoned": {}}
        for ep in ds.episodes():
            for what, tally in tallies.items():
                for k, v in ep.metadata["sampling"][what].items():
                    tally[k] = tally.get(k, 0) + v
        rooms = sum(len(ep.metadata["rooms"]) for ep in ds.episodes())
    n = len(totals)
    assert s.counts["episodes"] == n == 2 * 40
    assert s.counts["scenes"] == 2 and s.counts["m"] == m and s.counts["split"] == "val"
    assert s.counts["rejected goal candidates"] == tallies["rejected"]
    assert s.counts["abandoned episodes"] == tallies["abandoned"] and s.counts["rooms"] == rooms
    # goal candidates are rejected (overlap, geodesic, other floor), whole episodes abandoned
    assert set(tallies["rejected"]) <= {"other_floor", "overlap", "geodesic"}
    assert set(tallies["abandoned"]) <= {"no_goal", "blocked"}
    assert sum(tallies["rejected"].values()) > 0  # legs under 2 m are drawn and refused
    d = s.distributions
    assert len(d["geodesic_distance_m"]) == len(d["geodesic_to_euclidean"]) == n
    assert len(d["leg_geodesic_m"]) == len(d["goal_category"]) == n * m
    assert np.allclose(d["geodesic_distance_m"], totals)
    assert min(d["geodesic_to_euclidean"]) >= 1 - 1e-9
    assert set(d["goal_category"]) <= set(range(8))


@pytest.mark.slow
@needs_house_generator()
@pytest.mark.parametrize("reference", [True, False])
def test_plot_writes_a_png(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: bool
) -> None:
    """Beside the released minival file's histogram when found, else alone."""
    if not reference:
        monkeypatch.setenv("DATAFORGE_DATA", str(tmp_path))
        assert checks.minival_path() is None
    with open_dataset(dataset) as ds:
        stats = compute_stats(ds)
    out = tmp_path / "fig5.png"
    checks.plot(stats, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # as Fig. 5: each panel's bars are fractions of its episodes (they sum to 1), and the
    # title fits the figure (it used to run off a one-panel figure's edges)
    fig = checks.fig5(stats)
    axes = fig.axes
    assert len(axes) == (2 if reference else 1)
    for ax in axes:
        assert sum(p.get_height() for p in ax.patches) == pytest.approx(1.0)
        assert ax.get_ylabel() == "fraction of episodes"
    fig.canvas.draw()
    box = fig._suptitle.get_window_extent()
    assert box.x0 >= 0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1
    assert ("KS vs the minival" in fig._suptitle.get_text()) == reference


# -- the invariants, directly ------------------------------------------------------------------


def scene(n: int = 3) -> dict[str, np.ndarray]:
    """``n`` valid 2-ON episodes on an open floor (see :class:`OpenFloor`)."""
    start = np.array([[0.0, 0.0, 0.0]] * n)
    goals = np.array([[[3.0, 0.0, 0.0], [3.0, 0.0, 4.0]]] * n)
    legs = np.array([[3.0, 4.0]] * n)
    return {
        "episode_id": np.arange(10, 10 + n, dtype=np.int64),
        "start_position": start,
        "start_rotation": np.array([yaw_quaternion(0.3 * k) for k in range(n)]),
        "goal_position": goals,
        "goal_category": np.array([[2, 5]] * n, dtype=np.int8),
        "leg_geodesic": legs,
        "geodesic_distance": legs.sum(axis=1),
        "start_room": np.zeros(n, np.int16),
        "goal_room": np.array([[0, 1]] * n, np.int16),
    }


class OpenFloor:
    """An empty floor: straight-line geodesics; x < 0 is a wall; z > 2 is room 1. Its own
    ``nav`` (the NavSpace members the checks ask: distance, navigable)."""

    kind = "embedded"
    house = None

    def __init__(self, reachable: bool = True) -> None:
        self.reachable = reachable
        self.nav = self

    def distance(self, a: Any, b: Any) -> float:
        return math.hypot(b[0] - a[0], b[2] - a[2])

    def navigable(self, p: Any) -> bool:
        return p[0] >= 0

    def room_indices(self, points: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(points)[:, 2] > 2, 1, 0)

    def reachable_with(self, start: Any, goals: Any, radius: float) -> bool:
        return self.reachable


def problems(arrays: dict[str, np.ndarray], space: Any = None, **config: Any) -> dict[str, str]:
    found = list(checks.check_scene(arrays, META, {**CONFIG, **config}, space or OpenFloor()))
    keys = [k for k, _ in found]
    assert len(keys) == len(set(keys)), "one problem per key per scene"
    assert set(keys) <= set(checks.INVARIANTS)
    return dict(found)


def test_valid_episodes_pass() -> None:
    assert problems(scene()) == {}
    assert problems(scene(), block=False) == {}
    assert list(checks.check_scene(scene(), META, CONFIG, None)) == []


def test_geodesics() -> None:
    a = scene()
    a["leg_geodesic"][1, 1] += 0.02
    a["geodesic_distance"] = a["leg_geodesic"].sum(axis=1)
    assert set(problems(a)) == {"geodesics"} and "episode 11" in problems(a)["geodesics"]
    b = scene()
    b["geodesic_distance"][0] += 1e-6
    assert set(problems(b)) == {"geodesics"}
    assert [k for k, _ in checks.check_scene(b, META, CONFIG, None)] == ["geodesics"]
    assert set(problems(scene(), max_geodesic=3.5)) == {"geodesics"}  # a 4 m leg


def test_a_point_that_is_not_a_number_is_reported_not_a_crash() -> None:
    a = scene()
    a["start_position"][0, 0] = np.nan
    assert set(problems(a)) == {"navigable", "geodesics"}


def test_navigable_goals_separation_rotation_rooms() -> None:
    a = scene()
    a["goal_position"][0, 0, 1] = 1.0  # another floor
    assert set(problems(a)) == {"navigable"}
    b = scene()
    b["goal_category"][2] = [5, 5]
    assert set(problems(b)) == {"goals"}
    b["goal_category"][2] = [5, 8]
    assert set(problems(b)) == {"goals"}
    c = scene()
    c["start_rotation"][0] = [0.1, 0.0, 0.0, math.sqrt(0.99)]  # unit, but not about +y
    c["start_rotation"][1] *= 2
    msg = problems(c)["rotation"]
    assert set(problems(c)) == {"rotation"} and "episodes 10, 11 (2)" in msg
    d = scene()
    d["goal_room"][0] = [0, 0]
    assert set(problems(d)) == {"rooms"}
    d = scene()
    d["start_room"][0] = 2  # past the 2 rooms
    assert set(problems(d, space=OpenFloor())) == {"rooms"}


def test_separation_and_reachable() -> None:
    a = scene(12)
    # goal 2 at 0.15 m from goal 1 would shorten its leg: move the start instead
    a["start_position"][:] = [3.0, 0.0, 4.15]
    a["leg_geodesic"][:, 0] = 4.15
    a["geodesic_distance"] = a["leg_geodesic"].sum(axis=1)
    a["start_room"][:] = 1
    msg = problems(a)["separation"]
    assert set(problems(a)) == {"separation"}
    assert "episodes 10, 11, 12 and 9 more (12)" in msg
    assert set(problems(scene(), space=OpenFloor(reachable=False))) == {"reachable"}
    assert problems(scene(), space=OpenFloor(reachable=False), block=False) == {}


def test_minival_comparison_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Totals 10, 20, 35, 36 m against a minival of 10, 20, 40 m: empirical CDFs 1/4 vs 1/3 at
    10, 2/4 vs 2/3 at 20, 3/4 vs 2/3 at 35, 1 vs 2/3 at 36, so KS D = 1/3; over 30 m 1/2 vs
    1/3; means 25.25 and 23.33 (by hand)."""
    import gzip
    import json

    path = tmp_path / "minival.json.gz"
    eps = [{"start_rotation": [0, 0, 0, 1], "info": {"geodesic_distance": v}} for v in (10, 20, 40)]
    path.write_bytes(gzip.compress(json.dumps({"episodes": eps}).encode()))
    c = checks.minival_comparison([10.0, 20.0, 35.0, 36.0], path)
    assert isinstance(c, dict)
    assert c["KS statistic"] == pytest.approx(1 / 3, abs=1e-4)
    assert 0 < c["KS p-value"] <= 1
    assert c["episodes (ours, minival)"] == [4, 3]
    assert c["mean m (ours, minival)"] == [25.25, 23.33]
    assert c["over 30 m (ours, minival)"] == [0.5, 0.333]
    monkeypatch.setenv("DATAFORGE_DATA", str(tmp_path / "nowhere"))
    assert "not found" in str(checks.minival_comparison([1.0]))


def test_the_minival_path_follows_dataforge_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATAFORGE_DATA", str(tmp_path))
    assert checks.minival_path() is None
    (tmp_path / "multion").mkdir()
    (tmp_path / checks.MINIVAL).write_bytes(b"")
    assert checks.minival_path() == tmp_path / checks.MINIVAL
