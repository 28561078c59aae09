"""IR2R-CE: tours over VLN-CE episodes through the geodesic-oracle interface."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import run_cli
from ir2rhelpers import WalledOracle, build, write_vlnce

from dataforge.errors import MissingDependencyError
from dataforge.pipelines.ir2r import generate
from dataforge.validation import validate


def test_ce_tours_use_episode_ids_and_drop_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(generate, "scene_oracle", lambda cfg, params: WalledOracle())
    monkeypatch.setattr(generate, "require_navmesh_backend", lambda name: None)
    out = tmp_path / "ce"
    episodes = write_vlnce(tmp_path / "val_seen.json.gz")
    where = {"episodes": episodes, "scenes-dir": tmp_path / "scenes"}
    result = build(out, None, fmt="hdf5", continuous=True, inputs=where)
    assert result.job.notes == ("dropped 1 scenes with fewer than 2 paths (1 paths): sceneB",)
    assert result.job.inputs.to_dict()["files"].keys() == {"episodes"}
    doc = json.loads((out / "tours_val_seen.json").read_text())
    tours = doc["val_seen"]["sceneA"]
    assert len(tours) == 2  # n = min(3, 3, 2) for the set {1, 2, 3}
    traj_of = {100 + k: t for k, t in enumerate([1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4])}
    for tour in tours:
        assert all(isinstance(e, int) for e in tour)
        assert sorted(traj_of[e] for e in tour) == [1, 2, 3]
    assert len({e for t in tours for e in t}) == 6
    report = validate(out)
    assert report.ok, report.problems
    from dataforge.store import open_dataset

    with open_dataset(out) as ds:
        first = ds["sceneA/set-00/tour-0"]
        assert first.metadata["dropped_paths"] == [4]
        np.testing.assert_allclose(first["start_position"].read()[0], [0, 0, 0])


def test_ce_without_habitat_is_one_clear_error(tmp_path: Path) -> None:
    try:
        import habitat_sim  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("habitat-sim is installed here")
    with pytest.raises(MissingDependencyError, match="habitat-sim"):
        generate.require_navmesh_backend("habitat")
    r = run_cli(
        "ir2r",
        "tours",
        "--split",
        "val_seen",
        "--continuous",
        "--episodes",
        str(write_vlnce(tmp_path / "e.json.gz")),
        "--scenes-dir",
        str(tmp_path),
        "--out",
        str(tmp_path / "out"),
    )
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("\n") == 1 and "conda install habitat-sim" in r.stderr
