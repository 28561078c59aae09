"""``dataforge findingdory export --format findingdory-train`` read back the way the authors'
fine-tuning code reads it (findingdory-benchmark/findingdory-train @ acb30f2, facts in
docs/findingdory_upstream.md §9), by a reader written from that code and not from ours: the
dataset folder as ``datasets.load_dataset`` resolves a card's ``configs``, each row's video
under ``--video_cache_dir``, the video decoded with PyAV and sampled as qwen_vl_utils samples it
at ``fps: 1.0``, the answer parsed as ``evaluate_llm_outputs.py`` parses it. The answers point
at kept frames that are valid frames of the tasks dataset; the same command writes the same
bytes; bad input is one line."""

from __future__ import annotations

import ast
import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from dfhelpers import run_cli

from dataforge.store import open_dataset


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("fdx")
    eps, exp, tasks = base / "episodes", base / "experience", base / "tasks"
    for args in (
        [
            "episodes",
            "--scenes",
            "generate:1",
            "--room-spec",
            "kitchen-living-room",
            "--episodes",
            "1",
            "--rearrangements",
            "3",
            "--seed",
            "11",
            "--out",
            str(eps),
        ],
        ["collect", str(eps), "--resolution", "96x128", "--out", str(exp)],
        ["tasks", str(exp), "--out", str(tasks)],
        ["export", str(tasks), "--out", str(base / "findingdory-train")],
    ):
        r = run_cli(
            "findingdory", *args, "--quiet" if args[0] != "export" else "--frames=96", timeout=900
        )
        assert r.returncode == 0, r.stderr
    return {"experience": exp, "tasks": tasks, "out": base / "findingdory-train", "base": base}


# -- a reader written from findingdory-train's code --------------------------------------------


def load_split(dataset_name: Path, split: str) -> list[dict[str, Any]]:
    """``load_dataset(dataset_name, split=split)`` (``sft_video_llm.py:274-275``,
    ``evaluate_video_llm.py:228``) of a local folder whose card declares ``configs``: the
    default config's ``data_files`` of ``split``, JSON lines."""
    text = (dataset_name / "README.md").read_text("utf-8")
    assert text.startswith("---\n")
    card = yaml.safe_load(text.split("---\n")[1])
    config = next(c for c in card["configs"] if c["config_name"] == "default")
    rows = []
    for entry in config["data_files"]:
        if entry["split"] == split:
            lines = (dataset_name / entry["path"]).read_text("utf-8").splitlines()
            rows += [json.loads(line) for line in lines]
    return rows


def qwen_frames(total: int, video_fps: float, fps: float = 1.0) -> list[int]:
    """Which frames of a ``total``-frame video qwen_vl_utils' ``fetch_video`` keeps when the
    message asks ``fps`` (``"fps": 1.0`` in ``sft_video_llm.py:133``): ``total / video_fps *
    fps`` frames bounded to 4 .. min(768, total) and rounded to a multiple of 2, taken by
    ``linspace(0, total - 1, n).round()``."""
    lo = math.ceil(4 / 2) * 2
    hi = math.floor(min(768, total) / 2) * 2
    n = round(min(max(total / video_fps * fps, lo), hi) / 2) * 2
    assert 2 <= n <= total, "their reader raises here"
    return [int(v) for v in np.linspace(0, total - 1, n).round()]


def relaxed(pred: list[list[int]], gt: list[list[int]]) -> float:
    """``calculate_relaxed_match`` (``evaluate_llm_outputs.py:52-81``)."""
    if len(pred) != len(gt):
        return 0.0
    scores = []
    for p, g in zip(pred, gt, strict=True):
        if p and g:
            scores.append(sum(x in g for x in p) / len(p))
        elif p or g:
            return 0.0  # their loop leaves this sublist out of the product; never met here
    return float(np.prod(scores))


def decode(path: Path) -> tuple[np.ndarray, float]:
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(stream)]
        return np.stack(frames), float(stream.average_rate)


def test_findingdory_train_reads_the_export(made: dict[str, Path]) -> None:
    out = made["out"]
    dataset_name = video_cache_dir = out
    assert "findingdory" in str(dataset_name)  # sft_video_llm.py:327
    videos_dir = os.path.join(video_cache_dir, "videos")  # no download when it has content
    assert os.path.exists(videos_dir) and os.listdir(videos_dir)  # sft_video_llm.py:57
    rows = load_split(dataset_name, "validation")  # a val day
    assert rows and load_split(dataset_name, "train") == []
    with open_dataset(made["tasks"]) as ds:
        tasks = {
            (eid, t["template"]): (t, ds[eid].metadata["frames"])
            for eid in ds.episode_ids
            for t in ds[eid].metadata["tasks"]
        }
    videos: dict[str, tuple[np.ndarray, float]] = {}
    for row in rows:
        assert list(row) == [
            "ep_id",
            "video",
            "question",
            "answer",
            "task_id",
            "high_level_category",
            "low_level_category",
            "num_interactions",
        ]
        assert row["video"] == f"videos/val/ep_id_{row['ep_id']}.mp4"
        path = Path(os.path.join(video_cache_dir, row["video"]))  # sft_video_llm.py:117
        assert path.exists()
        if row["video"] not in videos:
            videos[row["video"]] = decode(path)
        frames, video_fps = videos[row["video"]]
        total = len(frames)
        assert qwen_frames(total, video_fps) == list(range(total)), "every frame is seen"
        task, n = tasks[(row["ep_id"], row["task_id"])]
        assert row["question"] == task["text"] and isinstance(row["question"], str)
        assert isinstance(row["answer"], str)
        gt = ast.literal_eval(row["answer"])  # evaluate_llm_outputs.py:18
        assert isinstance(gt, list) and all(isinstance(s, list) and s for s in gt)
        assert str(gt) == row["answer"]  # what a model printing the list writes: exact match
        assert relaxed(gt, gt) == 1.0
        assert len(gt) == len(task["valid_frames"])
        kept = np.linspace(0, n - 1, total, dtype=int).tolist()  # vlm_agent.py:184
        assert total == min(96, n - n % 2)
        for sub, valid in zip(gt, task["valid_frames"], strict=True):
            assert all(isinstance(j, int) and 0 <= j < total for j in sub)
            assert sub == [j for j, f in enumerate(kept) if f in set(valid)]
    # every task with a valid frame among the kept ones is a row
    answerable = []
    for key, (t, n) in tasks.items():
        kept = set(np.linspace(0, n - 1, min(96, n - n % 2), dtype=int).tolist())
        if t["valid_frames"] and all(set(v) & kept for v in t["valid_frames"]):
            answerable.append(key)
    assert sorted((r["ep_id"], r["task_id"]) for r in rows) == sorted(answerable)


def test_the_videos_show_the_kept_frames_with_their_index_and_clock(
    made: dict[str, Path],
) -> None:
    from dataforge.pipelines.findingdory.stamps import stamp_frame

    with open_dataset(made["experience"]) as ds:
        eid = ds.episode_ids[0]
        rgb, minutes = ds[eid]["rgb"], ds[eid]["clock"].read()
        frames, fps = decode(made["out"] / "videos" / "val" / f"ep_id_{eid}.mp4")
        assert fps == 1.0
        kept = np.linspace(0, len(rgb) - 1, len(frames), dtype=int)
        for j in (0, 1, len(frames) // 2, len(frames) - 1):
            f = int(kept[j])
            want = stamp_frame(rgb[f], int(minutes[f]), j).astype(int)
            other = stamp_frame(rgb[f], int(minutes[f]), j + 1).astype(int)
            got = frames[j].astype(int)
            assert np.abs(got - want).mean() < 8.0
            differ = np.any(want != other, axis=2)  # the index's glyphs
            assert np.abs(got - want)[differ].mean() < np.abs(got - other)[differ].mean()


def test_the_same_command_writes_the_same_bytes(made: dict[str, Path]) -> None:
    again = made["base"] / "findingdory-train-again"
    r = run_cli("findingdory", "export", str(made["tasks"]), "--out", str(again))
    assert r.returncode == 0, r.stderr

    def digests(root: Path) -> dict[str, str]:
        return {
            p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }

    assert digests(again) == digests(made["out"])
    assert sorted(digests(again)) == sorted(
        ["README.md", "export.json", "validation.jsonl", f"videos/val/ep_id_{_first(made)}.mp4"]
    )


def _first(made: dict[str, Path]) -> str:
    with open_dataset(made["tasks"]) as ds:
        return ds.episode_ids[0]


@pytest.mark.parametrize(
    "case",
    ["not-tasks", "out-exists", "odd-frames", "out-in-input"],
)
def test_bad_input_is_one_line(made: dict[str, Path], case: str, tmp_path: Path) -> None:
    target = tmp_path / "findingdory-x"
    args = [str(made["tasks"]), "--out", str(target)]
    if case == "not-tasks":
        args[0] = str(made["experience"])
    elif case == "out-exists":
        target.mkdir()
        (target / "file").write_text("x")
    elif case == "odd-frames":
        args += ["--frames", "95"]
    else:
        args[2] = str(made["experience"] / "findingdory-x")
    r = run_cli("findingdory", "export", *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert not (target / "README.md").exists()


def test_hugging_face_datasets_loads_the_folder(made: dict[str, Path]) -> None:
    """Where ``datasets`` is installed: ``load_dataset(<folder>, split=...)`` as their scripts call
    it takes the rows of the card's files, the answer a string (5.2.0 did, docs)."""
    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed")
    ds = datasets.load_dataset(str(made["out"]), name=None, split="validation")
    assert ds.column_names == [
        "ep_id",
        "video",
        "question",
        "answer",
        "task_id",
        "high_level_category",
        "low_level_category",
        "num_interactions",
    ]
    assert [dict(r) for r in ds] == load_split(made["out"], "validation")
