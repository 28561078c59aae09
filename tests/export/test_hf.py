"""`dataforge export hf` on SpaMEM question sets, read back with Hugging Face `datasets`: every
question is a row of its config with the answer, the prompt and the very frames the model is
shown (decoded by `datasets` as images), and the card records the source manifest's sha256."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import run_cli

from dataforge.store import open_dataset

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exported(tiny_dataset: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory):
    tasks = tiny_dataset("spamem-tasks")
    out = tmp_path_factory.mktemp("hf") / "spamem_hf"
    r = run_cli("export", "hf", str(tasks), "--out", str(out), "--quiet", timeout=1800)
    assert r.returncode == 0, r.stderr
    return tasks, out


def questions(tasks: Path) -> list[dict]:
    from dataforge.pipelines.spamem.tasks import episode_records

    with open_dataset(tasks) as ds:
        return [q for eid in ds.manifest.episodes for q in episode_records(ds[eid])]


def test_every_question_is_a_row_of_its_config(exported) -> None:
    datasets = pytest.importorskip("datasets")
    tasks, out = exported
    want = questions(tasks)
    by_config: dict[str, list[dict]] = {}
    for q in want:
        name = f"L{q['level']}-{q['task']}-{q['horizon']}-{q['modality']}"
        by_config.setdefault(name, []).append(q)
    record = json.loads((out / "export.json").read_text())
    assert set(record["tables"]) == set(by_config)
    for name, qs in by_config.items():
        files = sorted(str(p) for p in (out / "data" / name).glob("*.parquet"))
        ds = datasets.load_dataset("parquet", data_files=files, split="train")
        assert ds["id"] == [q["id"] for q in qs]  # every question, in episode order
        assert [json.loads(a) for a in ds["answer"]] == [q["answer"] for q in qs]
        assert ds["prompt"] == [q["prompt"] for q in qs]
        assert ds["step"] == [q["step"] for q in qs]


def test_the_images_are_the_frames_the_model_sees(exported) -> None:
    datasets = pytest.importorskip("datasets")
    from PIL import Image

    from dataforge.pipelines.spamem.evaluate import FrameSource, frame_groups

    tasks, out = exported
    q = next(q for q in questions(tasks) if q["modality"] == "rgbd" and q["level"] == 3)
    name = f"L{q['level']}-{q['task']}-{q['horizon']}-{q['modality']}"
    ds = datasets.load_dataset(str(out), name=name, split="test")  # through the card's configs
    row = ds[ds["id"].index(q["id"])]
    groups = frame_groups(q["frames"])
    assert row["frame_steps"] == [g.step for g in groups]
    assert len(row["images"]) == len(groups)
    frames = FrameSource(tasks)
    try:
        for image, g in zip(row["images"], groups, strict=True):
            assert isinstance(image, Image.Image)
            expected = np.asarray(Image.open(__import__("io").BytesIO(frames.png(g))))
            np.testing.assert_array_equal(np.asarray(image), expected)
            # RGB-D: the RGB beside its depth, so twice the width of a view
            with open_dataset(Path(frames.path_of("sequences"))) as seq:
                view = seq[g.episode]["rgb"][0]
            assert expected.shape[1] == 2 * view.shape[1]
    finally:
        frames.close()


def test_the_card_names_its_configs_and_source(exported) -> None:
    tasks, out = exported
    card = (out / "README.md").read_text()
    head = card.split("---\n")[1]
    sha = hashlib.sha256((tasks / "manifest.json").read_bytes()).hexdigest()
    assert f'manifest_sha256: "{sha}"' in head and 'pipeline: "spamem-tasks"' in head
    record = json.loads((out / "export.json").read_text())
    for name in record["tables"]:
        assert f'- config_name: "{name}"' in head
        assert f'path: "data/{name}/*.parquet"' in head
    assert "license_link:" in head


def test_refusals_are_one_line(exported, tiny_dataset: Callable[..., Path], tmp_path: Path) -> None:
    tasks, out = exported
    again = run_cli("export", "hf", str(tasks), "--out", str(out), "--quiet")
    assert again.returncode != 0 and "not empty" in again.stderr, again.stderr
    seq = tiny_dataset("spamem")
    r = run_cli("export", "hf", str(seq), "--out", str(tmp_path / "x"), "--quiet")
    assert r.returncode == 2 and "has no hf export" in r.stderr and "spamem-tasks" in r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
