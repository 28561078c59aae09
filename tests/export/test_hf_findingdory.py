"""`dataforge export hf` on FindingDory tasks, read back with Hugging Face `datasets` and PyAV:
one row per line of tasks.jsonl (answers and goals as JSON), each naming its day's video in the
folder, which is the experience dataset's own MP4."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from dfhelpers import run_cli

from dataforge.store.manifest import read_manifest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exported(tiny_dataset: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory):
    tasks = tiny_dataset("findingdory-tasks")
    out = tmp_path_factory.mktemp("hf") / "fd_hf"
    r = run_cli("export", "hf", str(tasks), "--out", str(out), "--quiet", timeout=1800)
    assert r.returncode == 0, r.stderr
    return tasks, out


def test_rows_are_the_tasks_file(exported) -> None:
    datasets = pytest.importorskip("datasets")
    tasks, out = exported
    lines = [json.loads(x) for x in (tasks / "tasks.jsonl").read_text().splitlines()]
    ds = datasets.load_dataset(str(out), name="tasks", split="test")
    assert ds["id"] == [t["id"] for t in lines]
    assert [json.loads(a) for a in ds["answer"]] == [t["answer"] for t in lines]
    assert ds["question"] == [t["question"] for t in lines]
    assert ds["solvable"] == [t["solvable"] for t in lines]
    assert ds["video"] == [f"videos/{t['ep_id']}.mp4" for t in lines]


def test_each_day_video_is_the_experience_mp4(exported) -> None:
    av = pytest.importorskip("av")
    tasks, out = exported
    experience = Path(read_manifest(tasks).inputs["locations"]["experience"])
    record = json.loads((out / "export.json").read_text())
    days = {json.loads(x)["ep_id"] for x in (tasks / "tasks.jsonl").read_text().splitlines()}
    assert days
    for eid in days:
        video = out / "videos" / f"{eid}.mp4"
        source = experience / "videos" / f"{eid}.mp4"
        digest = hashlib.sha256(video.read_bytes()).hexdigest()
        assert digest == hashlib.sha256(source.read_bytes()).hexdigest()
        assert record["files"][f"videos/{eid}.mp4"] == digest
        with av.open(str(video)) as container:
            frames = sum(1 for _ in container.decode(video=0))
        assert (
            frames
            == read_manifest(experience).episodes[eid].rows["rgb"][1]
            - (read_manifest(experience).episodes[eid].rows["rgb"][0])
        )
