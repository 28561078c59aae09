"""dataforge houses generate: real houses from procthor's generator, validated, reproducible."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dfhelpers import needs_house_generator, run_cli, tree_digest

from dataforge.errors import DataforgeError
from dataforge.world import load_catalogue, load_house

pytestmark = needs_house_generator()
ARGS = ("houses", "generate", "--count", "2", "--room-spec", "kitchen", "--seed", "3")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("houses") / "ds"
    r = run_cli(*ARGS, "--out", str(out), "--workers", "2", "--quiet", timeout=600)
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.slow
def test_generate_writes_valid_houses(made: Path) -> None:
    r = run_cli("validate", str(made))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "6 houses invariants hold" in r.stdout
    cat = load_catalogue()
    files = sorted((made / "houses").glob("*.json"))
    assert [f.name for f in files] == ["house-000000.json", "house-000001.json"]
    for f in files:
        house = load_house(f, catalogue=cat)
        assert [r.room_type for r in house.rooms] == ["Kitchen"]
        assert any(o.parent_id for o in house.objects)
    from dataforge.store import open_dataset

    with open_dataset(made) as ds:
        seeds = set()
        for ep in ds.episodes():
            pts = ep["reachable"].read()
            # AI2-THOR's lattice: multiples of 0.25 m, all in the kitchen.
            assert len(pts) >= 5 and np.allclose(
                pts[:, [0, 2]] / 0.25, np.round(pts[:, [0, 2]] / 0.25)
            )
            assert (ep["reachable_room"].read() == 0).all()
            seeds.add(ep.metadata["procthor_seed"])
        assert len(seeds) == 2
    stats = run_cli("stats", str(made))
    assert stats.returncode == 0 and "objects on receptacles" in stats.stdout


@pytest.mark.slow
def test_same_seed_same_bytes_with_one_worker(made: Path, tmp_path: Path) -> None:
    out = tmp_path / "again"
    r = run_cli(*ARGS, "--out", str(out), "--quiet", timeout=600)
    assert r.returncode == 0, r.stderr
    a, b = tree_digest(made), tree_digest(out)
    assert {k for k in a if a[k] != b.get(k)} == {"manifest.json"}  # provenance only
    assert a.keys() == b.keys()


@pytest.mark.slow
def test_a_changed_house_file_fails_validation(made: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(made, copy)
    f = copy / "houses" / "house-000001.json"
    raw = json.loads(f.read_text())
    raw["objects"][0]["position"]["y"] += 1.0
    f.write_text(json.dumps(raw))
    r = run_cli("validate", str(copy))
    assert r.returncode != 0 and "houses/house-000001.json" in r.stdout + r.stderr


class FakeEpisode:
    def __init__(self, ep: Any, **arrays: np.ndarray) -> None:
        self.id, self.metadata, self._ep, self._arrays = ep.id, dict(ep.metadata), ep, arrays

    def __getitem__(self, name: str) -> Any:
        if name in self._arrays:
            return type("A", (), {"read": lambda _s, v=self._arrays[name]: v})()
        return self._ep[name]


@pytest.mark.slow
def test_episode_checks_catch_wrong_reachable_and_counts(made: Path) -> None:
    from dataforge.pipelines.houses.checks import check_episode
    from dataforge.store import open_dataset

    with open_dataset(made) as ds:
        ep = next(ds.episodes())
        assert list(check_episode(ep)) == []
        pts = ep["reachable"].read()
        moved = FakeEpisode(ep, reachable=pts + np.float32(0.25))
        assert any("reachable positions differ" in m for m in check_episode(moved))
        fewer = FakeEpisode(ep, reachable=pts[:-1])
        assert any("reachable positions differ" in m for m in check_episode(fewer))
        wrong = FakeEpisode(ep)
        wrong.metadata["counts"] = {**wrong.metadata["counts"], "objects": 0}
        assert any("metadata counts" in m for m in check_episode(wrong))


def test_failed_seeds_are_replaced_then_the_unit_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataforge.pipelines.houses.config import HousesConfig
    from dataforge.pipelines.houses.generate import produce
    from dataforge.run import WorkUnit
    from dataforge.world import procgen
    from dataforge.world.procgen import GenerationFailed

    real = procgen.generate_house
    calls: list[int] = []

    def flaky(seed: int, **kw: Any) -> dict[str, Any]:
        calls.append(seed)
        if len(calls) == 1:
            raise GenerationFailed(f"seed {seed}: Exception: Failed to generate floorplan")
        return real(seed, **kw)

    monkeypatch.setattr(procgen, "generate_house", flaky)
    cfg = HousesConfig(count=1, room_spec="kitchen", max_attempts=3)
    unit = WorkUnit("house-000000", {"index": 0})
    (ep,) = list(produce(cfg, unit, np.random.default_rng(0)))
    assert len(calls) == 2 and ep.metadata["procthor_seed"] == calls[1]
    assert ep.metadata["rejected"][0]["seed"] == calls[0]

    def broken(seed: int, **kw: Any) -> dict[str, Any]:
        raise GenerationFailed(f"seed {seed}: Exception: nope")

    monkeypatch.setattr(procgen, "generate_house", broken)
    with pytest.raises(DataforgeError, match=r"no usable house in 3 attempts.*--max-attempts"):
        list(produce(cfg, unit, np.random.default_rng(0)))


def test_bad_options_fail_before_any_work(tmp_path: Path) -> None:
    r = run_cli("houses", "generate", "--count", "1", "--room-spec", "castle", "--out",
                str(tmp_path / "x"))  # fmt: skip
    assert r.returncode != 0 and "unknown --room-spec 'castle'" in r.stderr
    assert not (tmp_path / "x").exists()
    r = run_cli("houses", "generate", "--count", "0", "--out", str(tmp_path / "y"))
    assert r.returncode != 0 and not (tmp_path / "y").exists()
