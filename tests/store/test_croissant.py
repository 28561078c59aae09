"""croissant.json is valid Croissant (checked by mlcroissant) and its records are the episodes."""

from __future__ import annotations

import hashlib
import json

import pytest

mlc = pytest.importorskip("mlcroissant", reason="mlcroissant is a dev dependency")


@pytest.mark.parametrize("fmt", ["zarr", "hdf5"])
def test_mlcroissant_loads_metadata_and_episode_records(synthetic_dataset, fmt):
    root = synthetic_dataset(fmt)
    doc = json.loads((root / "croissant.json").read_text())
    assert doc["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    index = next(d for d in doc["distribution"] if d["@id"] == "episodes.csv")
    assert index["sha256"] == hashlib.sha256((root / "episodes.csv").read_bytes()).hexdigest()
    ds = mlc.Dataset(jsonld=str(root / "croissant.json"))  # raises on validation errors
    assert ds.metadata.name == doc["name"]
    records = list(ds.records("episodes"))
    ids = [r["episodes/episode_id"].decode() for r in records]
    manifest = json.loads((root / "manifest.json").read_text())
    assert ids == list(manifest["episodes"])
    for r in records:
        loc = manifest["episodes"][r["episodes/episode_id"].decode()]
        assert r["episodes/shard"].decode() == loc["shard"]
        assert [r["episodes/rgb_start"], r["episodes/rgb_stop"]] == loc["rows"]["rgb"]
