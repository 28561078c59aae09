"""``dataforge spamem evaluate``: ask a vision-language model, served by any OpenAI-compatible
server (vLLM serving InternVL, LLaVA, Qwen-VL, ...), the questions of a tasks directory and write
its answers as prediction records (``qa.py``) for ``spamem score``.

One chat request per question: the system message ``templates/spamem/eval_system.txt``, then one
user message holding, for each distinct frame (dataset, episode, step, view) in the question's
order, a text part ``Frame t=<step>`` (the time stamp of paper §3.4) and the frame as a PNG
``image_url`` part (``data:image/png;base64,...``), followed by the question's prompt.

Images:

- RGB: the stored colour image, as is.
- Depth: an 8-bit grey image where near is bright, ``255 * (1 - min(d, 10 m) / 10 m)`` rounded
  (:data:`DEPTH_FAR_M`); 0 (no measurement) is black, as is everything at 10 m or beyond.
- RGB-D (a frame referenced both as rgb and as depth): ONE image, the RGB on the left and the
  depth (grey, as above, repeated over three channels) on the right: twice as wide.
- ``--max-images K``: a question with more frames keeps K of them spread uniformly over its
  sequence, always the first and the last (the current observation); the kept frames keep their
  true time stamps.

The answer is the ``"answer"`` of the last JSON object of the reply (after ``<think>`` blocks),
lightly coerced (a count "3" or 3.0 -> 3, a single name -> [name], [a, b] -> an interval, a single
box -> [box], names stripped of surrounding blanks), then checked with ``qa.check_answer`` and
written in ``qa.canonical`` form. An unusable reply is written as ``answer: null`` with
``error: "malformed: ..."`` (scored as wrong). A question whose requests all failed (timeouts,
lost connections, HTTP errors) is not written, so rerunning the same command resumes with it.

Before anything is sent: a frame's ``dataset`` must name an input the tasks manifest recorded
(``sequences``; never a path), and that dataset, where the manifest or ``--data-root`` says it
is, must have the manifest sha256 recorded (:func:`dataforge.inputs.check_source_dataset`); one
run at a time writes ``--out`` (:class:`dataforge.store.lock.FileLock`).
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from dataforge.errors import DatasetError, MalformedInputError, UsageError
from dataforge.inputs import Inputs, check_source_dataset
from dataforge.llm.answers import AnswerError, parse_json_answer, strip_reasoning
from dataforge.llm.evaluate import EvalResult, EvalRun, evaluate
from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.records import load_questions
from dataforge.pipelines.spamem.tasks import PIPELINE as TASKS_PIPELINE
from dataforge.store import open_dataset
from dataforge.store.manifest import read_manifest
from dataforge.store.reader import Dataset

DEPTH_FAR_M = 10.0
"""Depth images: ``255 * (1 - min(d, DEPTH_FAR_M) / DEPTH_FAR_M)``, near is bright, 0 = black."""
RAW_LIMIT = 2000
"""Characters of the model's reply kept in a prediction record's ``raw``."""
IMAGE_CACHE = 128
"""Encoded frames kept in memory (questions of one sequence share most of their frames)."""
_ANSWER_SCHEMA = {"type": "object", "required": ["answer"]}


@dataclass(frozen=True)
class FrameGroup:
    """One image of a question: a view of a captured state, with the modalities it shows."""

    dataset: str
    episode: str
    step: int
    view: int
    rgb: bool
    depth: bool


# -- questions --------------------------------------------------------------------------------


def frame_groups(frames: Sequence[Mapping[str, Any]]) -> list[FrameGroup]:
    """One group per distinct (dataset, episode, step, view), in the order frames name them."""
    order: dict[tuple[str, str, int, int], set[str]] = {}
    for f in frames:
        key = (f["dataset"], f["episode"], int(f["step"]), int(f["view"]))
        order.setdefault(key, set()).add(f["modality"])
    return [FrameGroup(*key, "rgb" in mods, "depth" in mods) for key, mods in order.items()]


def spread(n: int, k: int | None) -> list[int]:
    """``k`` of ``range(n)`` spread uniformly, always with the first and the last; all when
    ``k`` is None or at least ``n``."""
    if k is None or n <= k:
        return list(range(n))
    if k == 1:
        return [n - 1]
    return [round(i * (n - 1) / (k - 1)) for i in range(k)]


# -- images -----------------------------------------------------------------------------------


def depth_to_grey(depth_mm: np.ndarray) -> np.ndarray:
    """uint16 millimetres -> uint8 grey, near bright (see :data:`DEPTH_FAR_M`), 0 -> black."""
    metres = np.minimum(depth_mm.astype(np.float64) / 1000.0, DEPTH_FAR_M)
    grey = np.rint(255.0 * (1.0 - metres / DEPTH_FAR_M))
    grey[depth_mm == 0] = 0
    return grey.astype(np.uint8)


def _png(pixels: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


def tasks_inputs(tasks_dir: Path) -> dict[str, Any]:
    """The inputs the tasks dataset's (verified) manifest records: where its sequences were and
    their manifest's sha256."""
    try:
        manifest = read_manifest(tasks_dir, verify=True)
    except DatasetError as exc:
        raise DatasetError(f"{exc} (make the tasks with dataforge spamem tasks)") from None
    if manifest.pipeline != TASKS_PIPELINE:
        raise UsageError(f"{tasks_dir} is not a tasks dataset (dataforge spamem tasks)")
    return dict(manifest.inputs)


class FrameSource:
    """Reads frames of the sequences datasets the questions name: each dataset checked against
    the tasks manifest and opened once, reads serialised per dataset (the reader's shard cache
    is not thread-safe), encoded images cached."""

    def __init__(self, tasks_dir: Path, data_root: Path | None = None) -> None:
        self.tasks_dir = tasks_dir
        self.data_root = data_root
        self.inputs = tasks_inputs(tasks_dir)
        self.recorded = Inputs.from_dict(self.inputs)
        self._lock = threading.Lock()
        self._datasets: dict[str, tuple[Dataset, threading.Lock]] = {}
        self.png = lru_cache(maxsize=IMAGE_CACHE)(self._png)

    def check_ref(self, ref: str, qid: str) -> None:
        """A frame's ``dataset`` names an input location the tasks manifest recorded (``spamem
        tasks`` writes ``"sequences"``), never a path: one line otherwise."""
        names = ", ".join(sorted(self.recorded.locations)) or "none"
        if Path(ref).is_absolute():
            why = "is an absolute path"
        elif ref in (".", "..") or "/" in ref or "\\" in ref:
            why = "is a path, which could lead outside the recorded inputs"
        elif ref not in self.recorded.locations:
            why = "is not an input the tasks manifest recorded"
        else:
            return
        raise MalformedInputError(
            f"question {qid}: frame dataset {ref!r} {why}; a frame names one of the tasks' "
            f"inputs ({names}), whose place --data-root can change"
        )

    def path_of(self, ref: str) -> Path:
        """Where the input ``ref`` is: with ``data_root``, that dataset itself or the one of the
        recorded folder's name inside it; else the location the tasks manifest records."""
        recorded = self.recorded.locations[ref]
        if self.data_root is None:
            return recorded
        if (self.data_root / "manifest.json").is_file():
            return self.data_root
        return self.data_root / recorded.name

    def dataset(self, ref: str) -> tuple[Dataset, threading.Lock]:
        with self._lock:
            if ref not in self._datasets:
                fix = "pass --data-root" if self.data_root is None else "check --data-root"
                path = check_source_dataset(self.inputs, ref, self.path_of(ref), f"moved? {fix}")
                try:
                    ds = open_dataset(path)
                except DatasetError as exc:
                    raise DatasetError(f"frames' dataset {ref!r}: {exc} ({fix})") from None
                self._datasets[ref] = (ds, threading.Lock())
            return self._datasets[ref]

    def image(self, group: FrameGroup) -> str:
        """:meth:`png` as base64 (a data URL's payload)."""
        return base64.b64encode(self.png(group)).decode("ascii")

    def _png(self, group: FrameGroup) -> bytes:
        """The PNG of one frame group: its RGB, its depth as grey (:func:`depth_to_grey`), or
        both side by side (what the model is shown)."""
        ds, lock = self.dataset(group.dataset)
        with lock:
            try:
                ep = ds[group.episode]
            except KeyError:
                raise DatasetError(f"no episode {group.episode!r} in {ds.root}") from None
            per_state = int(ep.metadata["views_per_state"])
            row = group.step * per_state + group.view
            if not (0 <= group.view < per_state and 0 <= row < len(ep["rgb"])):
                raise DatasetError(
                    f"{ds.root} {group.episode}: no step {group.step} view {group.view}"
                )
            rgb = ep["rgb"][row] if group.rgb else None
            depth = ep["depth"][row] if group.depth else None
        if depth is None:
            assert rgb is not None
            return _png(np.ascontiguousarray(rgb[..., :3]))
        grey = depth_to_grey(depth)
        if rgb is None:
            return _png(grey)
        side = np.concatenate([rgb[..., :3], np.repeat(grey[..., None], 3, axis=2)], axis=1)
        return _png(np.ascontiguousarray(side))

    def close(self) -> None:
        with self._lock:
            for ds, _ in self._datasets.values():
                ds.close()
            self._datasets.clear()


@lru_cache(maxsize=1)
def system_prompt() -> str:
    return (resources.files("dataforge.templates") / "spamem" / "eval_system.txt").read_text(
        "utf-8"
    )


def build_messages(
    question: Mapping[str, Any], frames: FrameSource, max_images: int | None = None
) -> list[dict[str, Any]]:
    """The chat messages of one question (system, then one user message with the images)."""
    groups = frame_groups(question["frames"])
    parts: list[dict[str, Any]] = []
    for i in spread(len(groups), max_images):
        g = groups[i]
        parts.append({"type": "text", "text": f"Frame t={g.step}"})
        url = f"data:image/png;base64,{frames.image(g)}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    parts.append({"type": "text", "text": question["prompt"]})
    return [
        {"role": "system", "content": system_prompt()},
        {"role": "user", "content": parts},
    ]


# -- answers ----------------------------------------------------------------------------------


def _as_int(v: Any) -> Any:
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _name(v: Any) -> Any:
    return v.strip() if isinstance(v, str) else v


def coerce(answer_type: str, value: Any) -> Any:
    """Forgive the usual near misses of a model's answer (see the module docstring)."""
    if answer_type in ("set", "sequence"):
        if isinstance(value, str):
            value = [value]
        return [_name(v) for v in value] if isinstance(value, list) else value
    if answer_type == "count":
        return _as_int(value)
    if answer_type == "interval":
        if isinstance(value, list) and len(value) == 2:
            value = {"first": value[0], "last": value[1]}
        if isinstance(value, dict):
            return {k: _as_int(v) for k, v in value.items()}
        return value
    if answer_type == "boxes":
        one_box = isinstance(value, list) and len(value) == 4
        return [value] if one_box and not any(isinstance(b, list) for b in value) else value
    if answer_type == "distances" and isinstance(value, dict):
        return {_name(k): v for k, v in value.items()}
    if answer_type == "neighbours" and isinstance(value, dict):
        return {_name(k): _name(v).lower() if isinstance(v, str) else v for k, v in value.items()}
    return value


def parse_prediction(answer_type: str, text: str) -> tuple[Any, str | None]:
    """(canonical answer, None), or (None, "malformed: <reason>")."""
    body = strip_reasoning(text or "")
    if not body:
        return None, "malformed: " + ("only reasoning, no answer" if text.strip() else "empty")
    try:
        obj = parse_json_answer(body, _ANSWER_SCHEMA)
    except AnswerError as exc:
        if exc.kind == "schema":
            return None, 'malformed: no JSON object with an "answer" key'
        reason = str(exc).removeprefix("Your answer ").rstrip(".")
        return None, f"malformed: {reason}"
    value = coerce(answer_type, obj["answer"])
    try:
        problem = qa.check_answer(answer_type, value)
        if problem is None:
            return qa.canonical(answer_type, value), None
    except (OverflowError, ValueError, TypeError) as exc:  # e.g. a 400-digit integer
        problem = f"unusable number: {type(exc).__name__}"
    return None, f"malformed: {problem}"


def prediction(question: Mapping[str, Any], text: str) -> dict[str, Any]:
    """The prediction record of one reply."""
    answer, error = parse_prediction(question["answer_type"], text)
    return {"id": question["id"], "answer": answer, "error": error, "raw": text[:RAW_LIMIT]}


# -- the run ----------------------------------------------------------------------------------


def run_evaluate(
    tasks_dir: str | Path,
    run: EvalRun,
    *,
    max_images: int | None = None,
    tasks: Sequence[str] | None = None,
    data_root: str | Path | None = None,
) -> EvalResult:
    """Answer the questions of ``tasks_dir`` not yet in ``run.out`` with the model of
    ``run.settings``, appending one prediction record per question
    (:func:`dataforge.llm.evaluate.evaluate`). Every frame's dataset is checked before the
    server is asked."""
    tasks_dir = Path(tasks_dir)
    if max_images is not None and max_images < 1:
        raise UsageError(f"--max-images must be >= 1, got {max_images}")
    questions = load_questions(tasks_dir, tasks)
    if not questions:
        raise UsageError(
            f"no questions in {tasks_dir / qa.QUESTIONS_DIR}"
            + (f" for tasks {', '.join(tasks)}" if tasks else "")
        )
    frames = FrameSource(tasks_dir, Path(data_root) if data_root is not None else None)
    try:
        refs = {f["dataset"]: q["id"] for q in reversed(questions) for f in q["frames"]}
        for ref in sorted(refs):
            frames.check_ref(ref, refs[ref])
        for ref in sorted(refs):
            frames.dataset(ref)  # a missing or different dataset fails here, in one line
        return evaluate(
            questions,
            run,
            messages=lambda q: build_messages(q, frames, max_images),
            record=prediction,
            label="spamem evaluate",
            noun="questions",
        )
    finally:
        frames.close()
