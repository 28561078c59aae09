"""``dataforge findingdory evaluate``: the paper's high-level protocol for video-language
models (B.3; upstream ``policies/llm/vlm_agent.py``, docs/findingdory_upstream.md §6) against
any OpenAI-compatible vision server.

Per task, one chat request: the experience video subsampled to ``--frames K`` frames
(``linspace(0, N - 1, K)`` cast to int, as upstream; all frames when N <= K), relabelled
0..K-1, each sent as a PNG (longest side ``--max-side`` pixels) preceded by the text ``Frame k
(HH:MM)``, with the clock drawn top-left and the relabelled number top-right
(:func:`.stamps.stamp_frame`, from the stored clean frame and clock), then
``templates/findingdory/eval_prompt.txt`` with the instruction. The reply is read as
``--parse`` says (:data:`PARSE_MODES`), and each index mapped back to the day's frame number:

- ``upstream`` (default): as upstream's VLM agent reads it (``policies/llm/vlm_agent.py``
  144-169, 284-321, 110-112): a JSON5 or Python-literal object, ``int()`` of each index (4.5 is
  4, "3" is 3, "4.5" unusable), and an unusable answer or an index outside 0..K-1 clipped to
  frame 0, which is scored; ``error`` says what was clipped;
- ``strict``: one JSON object whose ``frame_indices`` are integers (a number as text is read as
  one); an index outside 0..K-1 becomes -1 (scored as out of bounds), an unusable reply is
  written as ``frame_indices: [-1]`` with ``error: "malformed: ..."`` (scored as wrong).

Every record says its ``parse``. A task whose requests all failed is not written, so a rerun
resumes.

Before anything is sent, the experience dataset (where the tasks manifest or ``--data-root``
says it is) must have the manifest sha256 the tasks manifest recorded
(:func:`dataforge.inputs.check_source_dataset`); one run at a time writes ``--out``
(:class:`dataforge.store.lock.FileLock`).
"""

from __future__ import annotations

import ast
import base64
import io
import threading
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import json5
import numpy as np

from dataforge.errors import DatasetError, UsageError
from dataforge.inputs import Inputs, check_source_dataset
from dataforge.llm.answers import AnswerError, parse_json_answer, strip_reasoning
from dataforge.llm.evaluate import EvalDefaults, EvalRun, evaluate

RAW_LIMIT = 2000
_SCHEMA = {"type": "object", "required": ["frame_indices"]}
EPISODE_CACHE = 2  # episodes whose encoded frames are kept (tasks come episode by episode)
PARSE_MODES = ("upstream", "strict")
"""How ``evaluate`` reads a reply: upstream's VLM agent's way (the default), or strictly."""
CLIPPED = "scored as frame 0, as upstream"


def sample_frames(n: int, k: int) -> list[int]:
    """Upstream's subsampling: ``linspace(0, n - 1, k)`` cast to int (all frames when n <= k)."""
    if n <= k:
        return list(range(n))
    return [int(v) for v in np.linspace(0, n - 1, k)]


@lru_cache(maxsize=1)
def prompt_template() -> str:
    path = resources.files("dataforge.templates") / "findingdory" / "eval_prompt.txt"
    return path.read_text("utf-8")


def prompt(task: Mapping[str, Any], k: int) -> str:
    """The instruction after the frames: the same for every task but its goal text. It does not
    say how many frames a task needs nor whether their order matters (upstream's
    ``policies/llm/prompts/qwen_prompt.txt`` neither: a wrong count is its
    ``num_targets_error``); the multi-goal sentence is upstream's."""
    return prompt_template().format(k=k, goal=task["text"])


class Frames:
    """The experience frames a tasks dataset points at, sampled, labelled and PNG-encoded once
    per episode."""

    def __init__(self, root: Path, k: int, max_side: int) -> None:
        from dataforge.pipelines.findingdory.stamps import rgb_is_clean
        from dataforge.store import open_dataset

        self.k, self.max_side = k, max_side
        try:
            self.ds = open_dataset(root)
        except DatasetError as exc:
            raise DatasetError(f"the experience dataset: {exc} (moved? pass --data-root)") from None
        self.clean = rgb_is_clean(self.ds.manifest.config)
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, tuple[list[int], list[str], list[str]]] = OrderedDict()

    def episode(self, eid: str) -> tuple[list[int], list[str], list[str]]:
        """(sampled frame numbers, their clocks HH:MM, base64 PNGs)."""
        with self._lock:
            got = self._cache.get(eid)
            if got is None:
                got = self._encode(eid)
                self._cache[eid] = got
                while len(self._cache) > EPISODE_CACHE:
                    self._cache.popitem(last=False)
            return got

    def _encode(self, eid: str) -> tuple[list[int], list[str], list[str]]:
        from PIL import Image

        from dataforge.pipelines.findingdory.stamps import hhmm, stamp_frame

        try:
            ep = self.ds[eid]
        except KeyError:
            raise DatasetError(f"no episode {eid!r} in {self.ds.root}") from None
        frames = sample_frames(len(ep["rgb"]), self.k)
        minutes = ep["clock"].read()
        clocks = [hhmm(minutes[f]) for f in frames]
        pngs = []
        for j, f in enumerate(frames):
            img = stamp_frame(ep["rgb"][f], int(minutes[f]), j, clock_drawn=not self.clean)
            pil = Image.fromarray(img)
            scale = self.max_side / max(pil.size)
            if scale < 1:
                size = (max(1, round(pil.size[0] * scale)), max(1, round(pil.size[1] * scale)))
                pil = pil.resize(size, Image.Resampling.BILINEAR)
            buf = io.BytesIO()
            pil.save(buf, format="PNG")
            pngs.append(base64.b64encode(buf.getvalue()).decode("ascii"))
        return frames, clocks, pngs

    def close(self) -> None:
        self.ds.close()


def build_messages(task: Mapping[str, Any], frames: Frames) -> list[dict[str, Any]]:
    sampled, clocks, pngs = frames.episode(task["episode"])
    parts: list[dict[str, Any]] = []
    for j, (clock, png) in enumerate(zip(clocks, pngs, strict=True)):
        parts.append({"type": "text", "text": f"Frame {j} ({clock})"})
        parts.append({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}})
    parts.append({"type": "text", "text": prompt(task, len(sampled))})
    return [{"role": "user", "content": parts}]


def parse_indices(
    text: str, sampled: Sequence[int], mode: str = "upstream"
) -> tuple[list[int], list[int], str | None]:
    """(frame numbers of the day, the model's indices, error) of a reply, read as ``mode`` (of
    :data:`PARSE_MODES`) says: :func:`parse_upstream` or :func:`parse_strict`."""
    if mode == "upstream":
        return parse_upstream(text, sampled)
    if mode == "strict":
        return parse_strict(text, sampled)
    raise UsageError(f"--parse is one of {', '.join(PARSE_MODES)}, got {mode!r}")


def upstream_object(body: str) -> object:
    """What upstream's ``VLMAgent.response_json_loads`` makes of a reply (``vlm_agent.py``
    144-169, 287-288), None where it gives nothing: only a reply holding "json" or both braces
    is read; "json" and back-ticks are removed everywhere, the text from the first ``{`` to the
    last ``}`` is kept (when there is such a span), and it is read as JSON5, else as a Python
    literal."""
    if "json" not in body and not ("{" in body and "}" in body):
        return None
    cleaned = body.strip().replace("json", "").replace("```", "")
    start, end = cleaned.find("{"), cleaned.rfind("}") + 1
    if 0 <= start < end:
        cleaned = cleaned[start:end]
    try:
        return json5.loads(cleaned)
    except (ValueError, TypeError, RecursionError):  # RecursionError: deep unclosed brackets
        pass
    try:
        with warnings.catch_warnings():  # "invalid escape sequence" in a model's text
            warnings.simplefilter("ignore")
            return ast.literal_eval(cleaned)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def upstream_picks(obj: object) -> tuple[list[int] | None, str | None]:
    """(the indices, None) or (None, why unusable), as upstream's
    ``extract_frame_indices_from_response`` reads ``frame_indices`` (``vlm_agent.py:305-321``):
    ``int()`` of each entry, so 4.5 is 4, " 3 " is 3 and true is 1; an ellipsis, or an entry
    ``int()`` refuses ("4.5", NaN), makes the whole answer unusable. Where upstream raises (not
    a list: a bare number or text; null, a nested list or Infinity in it) it is unusable here."""
    if not isinstance(obj, dict) or "frame_indices" not in obj:
        return None, 'no JSON object with a "frame_indices" key'
    raw = obj["frame_indices"]
    if not isinstance(raw, list | tuple):
        return None, "frame_indices is not a list"
    if any(v is Ellipsis for v in raw):
        return None, "an ellipsis in frame_indices"
    picks = []
    for v in raw:
        try:
            picks.append(int(v))
        except (TypeError, ValueError, OverflowError):
            return None, f"{v!r} is not a frame number"
    return picks, None


def parse_upstream(text: str, sampled: Sequence[int]) -> tuple[list[int], list[int], str | None]:
    """(frame numbers of the day, the model's indices, error), read as upstream's VLM agent
    reads a reply (:func:`upstream_object`, :func:`upstream_picks`) after the
    ``<think>`` blocks are dropped. An unusable answer is frame 0 and an index outside
    0..K-1 is clipped to frame 0 (upstream turns both into -1, ``vlm_agent.py:313``, then
    clips to 0..K-1, ``vlm_agent.py:111-112``, ``qwen_imagenav_agent.py:190-191``), so frame 0
    is scored; ``error`` names what was clipped. The count is not changed: a multi-goal task
    answered with one frame fails (upstream's ``num_targets_error``)."""
    body = strip_reasoning(text or "")
    picks, why = upstream_picks(upstream_object(body)) if body else (None, None)
    if picks is None:
        why = why or ("only reasoning" if (text or "").strip() else "empty")
        return [sampled[0]], [], f"unusable: {why} ({CLIPPED})"
    k = len(sampled)
    out = [p for p in picks if not 0 <= p < k]
    mapped = [sampled[p] if 0 <= p < k else sampled[0] for p in picks]
    error = (
        f"index {out[0]} outside 0..{k - 1} ({CLIPPED})"
        if len(out) == 1
        else (f"indices {out} outside 0..{k - 1} ({CLIPPED})" if out else None)
    )
    return mapped, picks, error


def parse_strict(text: str, sampled: Sequence[int]) -> tuple[list[int], list[int], str | None]:
    """(frame numbers of the day, the model's indices, error): one JSON object with integer
    ``frame_indices``; indices outside the sampled range become -1; an unusable reply gives
    ``[-1]`` and ``malformed: ...``."""
    body = strip_reasoning(text or "")
    if not body:
        return [-1], [], "malformed: " + ("only reasoning" if (text or "").strip() else "empty")
    try:
        obj = parse_json_answer(body, _SCHEMA)
    except AnswerError as exc:
        if exc.kind == "schema":
            return [-1], [], 'malformed: no JSON object with a "frame_indices" key'
        return [-1], [], "malformed: " + str(exc).removeprefix("Your answer ").rstrip(".")
    raw = obj["frame_indices"]
    raw = [raw] if isinstance(raw, int | str) and not isinstance(raw, bool) else raw
    if not isinstance(raw, list) or not raw:
        return [-1], [], "malformed: frame_indices is not a non-empty list"
    picked: list[int] = []
    for v in raw:
        try:
            if isinstance(v, bool):
                raise ValueError
            f = float(str(v).strip()) if isinstance(v, str) else float(v)
            if not f.is_integer():
                raise ValueError
            picked.append(int(f))
        except (TypeError, ValueError, OverflowError):
            return [-1], [], f"malformed: {v!r} is not a frame number"
    mapped = [sampled[i] if 0 <= i < len(sampled) else -1 for i in picked]
    return mapped, picked, None


def _record(frames: Frames, task: Mapping[str, Any], text: str, mode: str) -> dict[str, Any]:
    sampled, _, _ = frames.episode(task["episode"])
    mapped, picked, error = parse_indices(text, sampled, mode)
    return {
        "id": task["id"],
        "frame_indices": mapped,
        "sampled_indices": picked,
        "error": error,
        "parse": mode,
        "raw": text[:RAW_LIMIT],
    }


def experience_root(inputs: Mapping[str, Any], location: str, data_root: Path | None) -> Path:
    """Where the experience frames are: ``--data-root``, else the location the tasks manifest
    records; either way the dataset whose manifest sha256 the tasks manifest recorded."""
    fix = "check --data-root" if data_root is not None else "moved? pass --data-root"
    root = data_root if data_root is not None else Inputs.from_dict(inputs).locations.get(location)
    if root is None:
        raise DatasetError(f"the tasks record no {location} dataset (pass --data-root)")
    return check_source_dataset(inputs, location, root, fix)


EVAL_DEFAULTS = EvalDefaults(max_tokens=256, max_tokens_note="upstream: 256 new tokens")
"""The evaluation run's defaults, but upstream's answer length (``max_new_tokens: 256``)."""


def run_evaluate(
    tasks_dir: str | Path,
    run: EvalRun,
    *,
    frames: int = 96,
    max_side: int = 320,
    templates: Sequence[str] | None = None,
    data_root: str | Path | None = None,
    parse: str = "upstream",
) -> str:
    """Ask the model every task of ``tasks_dir`` not yet in ``run.out``
    (:func:`dataforge.llm.evaluate.evaluate`); return a summary line. The experience dataset
    is checked before the server is asked."""
    from dataforge.pipelines.findingdory.tasks import EXPERIENCE
    from dataforge.pipelines.findingdory.tasks import PIPELINE as TASKS_PIPELINE
    from dataforge.store import open_dataset
    from dataforge.store.manifest import read_manifest

    tasks_dir = Path(tasks_dir)
    if frames < 1 or max_side < 16:
        raise UsageError("--frames >= 1, --max-side >= 16")
    if parse not in PARSE_MODES:
        raise UsageError(f"--parse is one of {', '.join(PARSE_MODES)}, got {parse!r}")
    recorded = read_manifest(tasks_dir, verify=True).inputs  # the digests below are the tasks'
    with open_dataset(tasks_dir) as ds:
        if ds.manifest.pipeline != TASKS_PIPELINE:
            raise UsageError(f"{tasks_dir} is not a tasks dataset (dataforge findingdory tasks)")
        items = [
            {**t, "episode": eid}
            for eid in ds.episode_ids
            for t in ds[eid].metadata["tasks"]
            if not templates or t["template"] in templates
        ]
    if not items:
        raise UsageError(
            f"no tasks in {tasks_dir}" + (f" for {', '.join(templates)}" if templates else "")
        )
    root = experience_root(recorded, EXPERIENCE, Path(data_root) if data_root else None)
    source = Frames(root, frames, max_side)
    try:
        result = evaluate(
            items,
            run,
            messages=lambda t: build_messages(t, source),
            record=lambda t, text: _record(source, t, text, parse),
            label="findingdory evaluate",
            noun="tasks",
        )
    finally:
        source.close()
    unusable = "malformed" if parse == "strict" else "unusable or clipped"
    return f"{result.line(unusable)} (--parse {parse})"
