"""``dataforge findingdory export``: tasks and the days they were made from, written as the
authors' fine-tuning code reads them (``--format findingdory-train``: the QA set and videos of
``findingdory-benchmark/findingdory-train``'s ``sft_video_llm.py`` and
``evaluate_video_llm.py``; the facts, with file:line, are in docs/findingdory_upstream.md §9).

Layout of ``--out`` (a Hugging Face dataset folder and its video cache in one; pass it as both
``--dataset_name`` and ``--video_cache_dir``, and keep "findingdory" in its path, which their
scripts assert)::

    README.md                         dataset card; its YAML ``configs`` name the splits' files
    train.jsonl, validation.jsonl     one row per task: FIELDS, in that order
    videos/train/ep_id_<episode>.mp4  days of --split train
    videos/val/ep_id_<episode>.mp4    days of --split val
    export.json                       how it was made: sources, kept frames, rows, dropped tasks

Each day's video holds K frames (``--frames``, 96 as the authors' release
``yali30/findingdory-subsampled-96``) taken ``linspace(0, N - 1, K)`` cast to int (upstream's
VLM agent's subsampling, :func:`.evaluate.sample_frames`), each stamped with its clock and its
index 0..K-1 (:func:`.stamps.stamp_frame`), at 1 frame per second, so that qwen_vl_utils
reading it at ``fps: 1.0`` keeps every frame. A day shorter than K keeps an even number of its
frames (all of them, less one when odd): their reader rounds a frame count to a multiple of 2.
``answer`` is the task's valid frames of each subgoal, re-indexed to the kept frames (paper
D.5: the index j of every kept frame that is valid), written as a Python list of lists
(``"[[3, 4], [17]]"``; one list for a single-goal task). A task with no valid frame, or none
among the kept frames for one of its subgoals, is left out (``export.json`` lists it with its
reason). The same inputs and options write byte-identical files; ``--out`` appears complete or
not at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataforge.errors import DatasetError, UsageError

if TYPE_CHECKING:
    from dataforge.store.reader import StoredEpisode

FORMATS = ("findingdory-train",)
FRAMES = 96  # yali30/findingdory-subsampled-96 (findingdory-train's README)
FPS = 1.0  # the video message's "fps": 1.0 (sft_video_llm.py:133, evaluate_video_llm.py:121)
MIN_FRAMES, MAX_FRAMES = 4, 768  # qwen_vl_utils' FPS_MIN_FRAMES, FPS_MAX_FRAMES
# our split -> (the Hugging Face split their scripts load, the folder of its videos)
SPLITS = {"train": ("train", "train"), "val": ("validation", "val")}
FIELDS = (
    "ep_id",
    "video",
    "question",
    "answer",
    "task_id",
    "high_level_category",
    "low_level_category",
    "num_interactions",
)
VIDEOS_DIR = "videos"
CARD, PROVENANCE = "README.md", "export.json"
UNSOLVABLE = "unsolvable (a subgoal has no valid frame)"
NOT_KEPT = "no valid frame of a subgoal among the kept frames"


@dataclass(frozen=True)
class ExportResult:
    out: Path
    rows: dict[str, int]  # Hugging Face split -> rows
    videos: int
    dropped: dict[str, int]  # reason -> tasks


def kept_frames(n: int, k: int) -> list[int]:
    """The frames of an ``n``-frame day a ``k``-frame video keeps: ``linspace(0, n - 1, k)``
    cast to int; a day shorter than ``k`` keeps an even number of frames (all but one when
    ``n`` is odd). Fewer than 4 is a ``DatasetError`` (their reader's minimum)."""
    from dataforge.pipelines.findingdory.evaluate import sample_frames

    m = min(k, n - n % 2)
    if m < MIN_FRAMES:
        raise DatasetError(
            f"a day of {n} frames is too short: findingdory-train's video reader "
            f"needs at least {MIN_FRAMES}"
        )
    return sample_frames(n, m)


def reindex(
    valid: Sequence[Sequence[int]], kept: Sequence[int]
) -> tuple[list[list[int]] | None, str | None]:
    """(per subgoal the indices j of the kept frames that are valid, None) or (None, why the
    task has no answer in the video)."""
    if not valid or any(not v for v in valid):
        return None, UNSOLVABLE
    out = []
    for v in valid:
        ok = set(int(f) for f in v)
        out.append([j for j, f in enumerate(kept) if f in ok])
    if any(not j for j in out):
        return None, NOT_KEPT
    return out, None


def answer_text(answer: list[list[int]]) -> str:
    """The answer as findingdory-train's rows hold it: the list of lists as Python prints it
    (``evaluate_llm_outputs.py:11-50`` reads it with ``ast.literal_eval``)."""
    return "[" + ", ".join("[" + ", ".join(str(int(j)) for j in sub) + "]" for sub in answer) + "]"


def video_path(split: str, episode: str) -> str:
    """``videos/<train|val>/ep_id_<episode>.mp4`` (their layout, ``sft_video_llm.py:92-93,
    116``)."""
    return f"{VIDEOS_DIR}/{SPLITS[split][1]}/ep_id_{episode}.mp4"


@dataclass
class _Source:
    tasks_dir: Path
    tasks_sha256: str
    experience: Path
    experience_sha256: str
    split: str
    clean: bool
    episodes: list[tuple[str, dict[str, Any]]]  # (episode id, its tasks metadata)


def _read_source(tasks_dir: Path, data_root: Path | None) -> _Source:
    from dataforge.pipelines.findingdory.evaluate import experience_root
    from dataforge.pipelines.findingdory.stamps import rgb_is_clean
    from dataforge.pipelines.findingdory.tasks import EXPERIENCE
    from dataforge.pipelines.findingdory.tasks import PIPELINE as TASKS_PIPELINE
    from dataforge.store import open_dataset
    from dataforge.store.manifest import manifest_sha256, read_manifest

    manifest = read_manifest(tasks_dir, verify=True)
    if manifest.pipeline != TASKS_PIPELINE:
        raise UsageError(f"{tasks_dir} is not a tasks dataset (dataforge findingdory tasks)")
    root = experience_root(manifest.inputs, EXPERIENCE, data_root)
    exp = read_manifest(root, verify=True)
    split = str(exp.config.get("split"))
    if split not in SPLITS:
        raise DatasetError(f"{root}: split {split!r} is none of {', '.join(SPLITS)}")
    with open_dataset(tasks_dir) as ds:
        episodes = [(eid, dict(ds[eid].metadata)) for eid in ds.episode_ids]
    return _Source(
        tasks_dir=tasks_dir,
        tasks_sha256=manifest_sha256(tasks_dir),
        experience=root,
        experience_sha256=manifest_sha256(root),
        split=split,
        clean=rgb_is_clean(exp.config),
        episodes=episodes,
    )


def _check_out(out: Path, inputs: Sequence[Path]) -> None:
    from dataforge.outputs import check_apart

    check_apart(out, "--out", inputs)
    if os.path.lexists(out) and (not out.is_dir() or out.is_symlink() or any(out.iterdir())):
        raise UsageError(
            f"--out {out} exists and is not an empty folder; remove it or choose another --out"
        )
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: the folder {out.parent} does not exist")


def run_export(
    tasks_dirs: Sequence[str | Path],
    out: str | Path,
    *,
    fmt: str = "findingdory-train",
    frames: int = FRAMES,
    data_root: str | Path | None = None,
) -> ExportResult:
    """Write the tasks of ``tasks_dirs`` (one or more tasks datasets, of either split) and the
    days they were made from to ``out`` in ``fmt`` (module doc)."""
    if fmt not in FORMATS:
        raise UsageError(f"--format is one of {', '.join(FORMATS)}, got {fmt!r}")
    if not MIN_FRAMES <= frames <= MAX_FRAMES or frames % 2:
        raise UsageError(
            f"--frames must be even and in {MIN_FRAMES}..{MAX_FRAMES} (their video "
            f"reader keeps a multiple of 2 frames), got {frames}"
        )
    dirs = [Path(d) for d in tasks_dirs]
    if not dirs:
        raise UsageError("name at least one tasks dataset (dataforge findingdory tasks) to export")
    if data_root is not None and len(dirs) != 1:
        raise UsageError("--data-root is the experience of one tasks dataset: give one TASKS_DIR")
    out = Path(out)
    _check_out(out, dirs)
    sources = [_read_source(d, Path(data_root) if data_root else None) for d in dirs]
    _check_out(out, [*dirs, *(s.experience for s in sources)])
    seen: dict[tuple[str, str], Path] = {}
    for s in sources:
        for eid, _ in s.episodes:
            key = (s.split, eid)
            if key in seen:
                raise UsageError(
                    f"episode {eid} of split {s.split} is in both {seen[key]} and "
                    f"{s.tasks_dir}; export datasets of distinct days"
                )
            seen[key] = s.tasks_dir
    from dataforge.store.atomic import TMP_PREFIX

    tmp = out.parent / f"{TMP_PREFIX}{out.name}.{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        result = _write(tmp, sources, frames)
        _commit(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ExportResult(out=out, rows=result[0], videos=result[1], dropped=result[2])


def _write(
    root: Path, sources: Sequence[_Source], k: int
) -> tuple[dict[str, int], int, dict[str, int]]:
    from dataforge.store import open_dataset

    root.mkdir()
    rows: dict[str, list[str]] = {}
    ids: dict[str, list[str]] = {}
    dropped: dict[str, list[str]] = {}
    episodes: dict[str, dict[str, Any]] = {}  # split -> episode -> its video
    videos = 0
    for s in sources:
        hf_split = SPLITS[s.split][0]
        with open_dataset(s.experience) as exp:
            for eid, meta in s.episodes:
                if eid not in exp.episode_ids:
                    raise DatasetError(f"{s.experience} has no episode {eid} of {s.tasks_dir}")
                n = len(exp[eid]["rgb"])
                if n != int(meta["frames"]):
                    raise DatasetError(
                        f"{s.tasks_dir}: episode {eid} has {meta['frames']} "
                        f"frames, its experience {n}"
                    )
                kept = kept_frames(n, k)
                lines = []
                for t in meta["tasks"]:
                    answer, why = reindex(t["valid_frames"], kept)
                    if answer is None:
                        dropped.setdefault(str(why), []).append(t["id"])
                        continue
                    row = {
                        "ep_id": eid,
                        "video": video_path(s.split, eid),
                        "question": t["text"],
                        "answer": answer_text(answer),
                        "task_id": t["template"],
                        "high_level_category": t["group"],
                        "low_level_category": t["category"],
                        "num_interactions": int(meta["interactions"]),
                    }
                    lines.append(json.dumps({f: row[f] for f in FIELDS}, ensure_ascii=False))
                    ids.setdefault(hf_split, []).append(t["id"])
                if not lines:
                    continue
                rows.setdefault(hf_split, []).extend(lines)
                _write_video(root / video_path(s.split, eid), exp[eid], kept, s.clean)
                videos += 1
                episodes.setdefault(hf_split, {})[eid] = {
                    "video": video_path(s.split, eid),
                    "frames": n,
                    "kept": kept,
                }
    order = [v[0] for v in SPLITS.values() if v[0] in rows]
    if not order:
        raise DatasetError(
            "nothing to export: no task has a valid frame among the kept frames "
            f"({sum(len(v) for v in dropped.values())} tasks left out)"
        )
    for split in order:
        (root / f"{split}.jsonl").write_text("".join(x + "\n" for x in rows[split]), "utf-8")
    (root / CARD).write_text(_card(order, {s: len(rows[s]) for s in order}, k), "utf-8")
    provenance = {
        "format": "findingdory-train",
        "frames": k,
        "fps": FPS,
        "sampling": "linspace(0, N - 1, K) cast to int; K even",
        "answer": "per subgoal, the index in the video of every kept frame that is valid",
        "sources": [
            {
                "tasks_manifest_sha256": s.tasks_sha256,
                "experience_manifest_sha256": s.experience_sha256,
                "split": s.split,
            }
            for s in sources
        ],
        "rows": {s: ids[s] for s in order},
        "episodes": episodes,
        "dropped": dropped,
    }
    (root / PROVENANCE).write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n", "utf-8")
    return {s: len(rows[s]) for s in order}, videos, {r: len(v) for r, v in dropped.items()}


def _write_video(path: Path, ep: StoredEpisode, kept: Sequence[int], clean: bool) -> None:
    from dataforge.pipelines.findingdory.stamps import stamp_frame
    from dataforge.viz.video import Mp4Writer

    rgb, minutes = ep["rgb"], ep["clock"].read()
    h, w = rgb.shape[1:3]
    path.parent.mkdir(parents=True, exist_ok=True)
    with Mp4Writer(path, w, h, fps=FPS) as video:
        for j, f in enumerate(kept):
            video.write(stamp_frame(rgb[f], int(minutes[f]), j, clock_drawn=not clean))


def _card(splits: Sequence[str], counts: Mapping[str, int], k: int) -> str:
    files = "".join(f"  - split: {s}\n    path: {s}.jsonl\n" for s in splits)
    sizes = ", ".join(f"{s} {counts[s]}" for s in splits)
    return (
        "---\nconfigs:\n- config_name: default\n  data_files:\n" + files + "---\n"
        "# FindingDory tasks for findingdory-train\n\n"
        "Written by `dataforge findingdory export --format findingdory-train` "
        f"(rows: {sizes}). Each row: {', '.join(f'`{f}`' for f in FIELDS)}. Each day's video, "
        f"`videos/<train|val>/ep_id_<episode>.mp4`, holds {k} frames of the day (fewer for a "
        "shorter day) at 1 frame per second, stamped with the clock (top left) and the frame's "
        "index in the video (top right); `answer` lists, per subgoal, the indices of the "
        "frames that solve it. Use this folder as both `--dataset_name` and "
        "`--video_cache_dir`. How it was made: `export.json`.\n"
    )


def _commit(tmp: Path, out: Path) -> None:
    from dataforge.store.atomic import fsync_dir, fsync_tree

    fsync_tree(tmp)
    if out.is_dir():
        with contextlib.suppress(OSError):
            out.rmdir()  # an empty folder: replaced
    os.replace(tmp, out)
    fsync_dir(out.parent)
