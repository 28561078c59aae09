"""dataforge houses generate: real houses from procthor's generator, validated, reproducible."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dfhelpers import needs_house_generator, run_cli

from dataforge.errors import DataforgeError
from dataforge.pipelines.houses.checks import INVARIANTS
from dataforge.world import load_catalogue, load_house

pytestmark = needs_house_generator()


@pytest.fixture(scope="module")
def made(tiny_dataset: Any) -> Path:
    """The pipeline's tiny example: two kitchens (see pipelines/houses/__init__.py)."""
    return tiny_dataset("houses")


@pytest.mark.slow
def test_generate_writes_valid_houses(made: Path) -> None:
    r = run_cli("validate", str(made))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(INVARIANTS)} houses invariants hold" in r.stdout
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


@pytest.mark.slow
def test_bad_options_fail_before_any_work(tmp_path: Path) -> None:
    r = run_cli(
        "houses", "generate", "--count", "1", "--room-spec", "castle", "--out", str(tmp_path / "x")
    )
    assert r.returncode != 0 and "unknown --room-spec 'castle'" in r.stderr
    assert not (tmp_path / "x").exists()
    r = run_cli("houses", "generate", "--count", "0", "--out", str(tmp_path / "y"))
    assert r.returncode != 0 and not (tmp_path / "y").exists()


@pytest.mark.slow
def test_generated_houses_fill_shelves_seats_drawers_and_fridges(tmp_path: Path) -> None:
    """Eight houses of ProcTHOR-10K's sampled specs: procthor's small objects land on every kind
    of support surface, sub-receptacles included, and validate checks where each one rests."""
    out = tmp_path / "houses"
    r = run_cli("houses", "generate", "--count", "8", "--seed", "3", "--out", str(out))
    assert r.returncode == 0, r.stderr
    v = run_cli("validate", str(out))
    assert v.returncode == 0, v.stdout + v.stderr
    from dataforge.store import open_dataset

    totals: dict[str, int] = {}
    with open_dataset(out) as ds:
        for ep in ds.episodes():
            for key, n in ep.metadata["surfaces"].items():
                totals[key] = totals.get(key, 0) + n
    assert {"top", "shelf", "seat", "interior"} <= {k for k, n in totals.items() if n > 0}
    assert totals.get("sub-receptacle Drawer", 0) > 0 and totals.get("sub-receptacle Shelf", 0) > 0
    stats = run_cli("stats", str(out))
    assert stats.returncode == 0 and "objects by support surface" in stats.stdout
    cat = load_catalogue()
    from dataforge.world.boxes import object_box

    hung = 0
    for f in sorted((out / "houses").glob("*.json")):
        for o in load_house(f, catalogue=cat).objects:
            if o.object_type == "Painting":  # settling drops objects on receptacles, not these
                hung += 1
                assert object_box(o, cat).bottom > 0.5, (f.name, o.id)
    assert hung > 0
