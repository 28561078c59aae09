"""dataforge.golden: what a golden record compares (issue 35: files holding images that a
library renders differently on another CPU are compared through their decoded arrays, and
``croissant.json``, which lists their sha256, without those digests)."""

from __future__ import annotations

import json
from pathlib import Path

from dataforge import golden


def _croissant(root: Path, sha: str, name: str = "ds") -> None:
    meta = {
        "name": name,
        "distribution": [
            {"@id": "episodes.csv", "contentUrl": "episodes.csv", "sha256": "a" * 64},
            {"@id": "shards", "includes": "shards/*.h5"},
            {"@id": "rec.h5", "contentUrl": "rec.h5", "contentSize": "9 B", "sha256": sha},
        ],
    }
    (root / "croissant.json").write_text(json.dumps(meta))


def test_croissant_is_compared_without_the_tolerant_files_digests(tmp_path: Path) -> None:
    _croissant(tmp_path, "1" * 64)
    first = golden._croissant_digest(tmp_path, {"rec.h5"})
    assert first is not None and first.startswith("croissant-without-tolerant-files:")
    _croissant(tmp_path, "2" * 64)  # the tolerant file's bytes changed: not a croissant change
    assert golden._croissant_digest(tmp_path, {"rec.h5"}) == first
    _croissant(tmp_path, "2" * 64, name="other")  # anything else in it still counts
    assert golden._croissant_digest(tmp_path, {"rec.h5"}) != first


def test_croissant_listing_no_tolerant_file_keeps_its_own_sha256(tmp_path: Path) -> None:
    _croissant(tmp_path, "1" * 64)
    # tolerant arrays inside shards (a FileSet without per-file digests): nothing to leave out
    assert golden._croissant_digest(tmp_path, {"shards/a.h5"}) is None
