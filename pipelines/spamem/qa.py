"""SpaMEM question sets: the tasks, their answer types, and the record formats that
``spamem tasks`` writes, ``spamem evaluate`` and ``spamem baseline`` answer, and ``spamem score``
scores. One place for all of them (docs/spamem.md, "Tasks").

Levels and horizons (paper §3, spec notes):

- L1 (static, T = 0): one topology cluster (the objects resting on one receptacle, seen in one
  view of step 0): SOR, VGL, DPE, RSR, CC, IC. Horizon ``static``.
- L2 (text-conditioned) and L3 (visual-conditioned): the ten memory tasks, ``short`` (a query
  after every step t over t-1 -> t; CSR accumulates over 0 -> t) and ``long`` (queries at T over
  0 -> T). SED is step-wise by definition: it has no long-term form (the paper's long-term tables
  leave it empty).

A question record (one JSON object per line of ``questions/L<level>/<task>.<horizon>.<modality>
.jsonl``)::

    {"id": str, "level": 1|2|3, "task": str, "horizon": "static"|"short"|"long",
     "modality": "rgb"|"rgbd", "episode": str, "step": int (the query step),
     "prompt": str, "frames": [{"dataset": str, "episode": str, "step": int, "view": int,
                                "modality": "rgb"|"depth"}, ...],
     "answer_type": str, "answer": <typed, below>, "labels": [str, ...] (the names the answer
     may use, when it names objects), "context": {...} (how the answer was derived)}

``frames[*].dataset`` is ``sequences``: the tasks dataset's input location, whose path its
manifest records (``inputs.locations.sequences``), so the files are the same wherever the
directories are (``spamem evaluate --data-root`` points elsewhere). A prediction record
(``preds.jsonl``)::

    {"id": str, "answer": <typed> | null, "error": str | null, "raw": str | null}

``answer: null`` (with ``error`` saying why: unparseable, wrong type, no answer) is scored as
wrong, never dropped.

Answer types (``check_answer`` validates one, ``canonical`` normalises it):

=============  ================================================================  =============
type           value                                                             metrics
=============  ================================================================  =============
``set``        list of category names (``canonical``: sorted, each once)        F1, P, R (Eq. 1)
``boxes``      list of ``[x0, y0, x1, y1]`` inclusive pixel boxes                mIoU (Eq. 2)
``distances``  ``{label: metres}``                                               AbsRel (Eq. 3),
                                                                                 rho, delta<1.25
``neighbours`` ``{label: "left"|"right"|"behind"}``, at most 3 entries            R@3, Dir.
``count``      non-negative integer                                              AE, MAPE, Acc@0/1
``interval``   ``{"first": int, "last": int}`` (steps, first <= last)             tIoU (Eq. 5)
``sequence``   list of receptacle type names in visiting order                  NES (Eq. 6)
=============  ================================================================  =============
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LEVELS = (1, 2, 3)
MEMORY_HORIZONS = ("short", "long")
HORIZONS = ("static", *MEMORY_HORIZONS)
MODALITIES = ("rgb", "rgbd")
DIRECTIONS = ("left", "right", "behind")
K_NEIGHBOURS = 3
QUESTIONS_DIR = "questions"


@dataclass(frozen=True)
class TaskSpec:
    name: str
    levels: tuple[int, ...]
    horizons: tuple[str, ...]
    answer_type: str
    metrics: tuple[str, ...]  # in the paper's column order
    group: str  # the paper's column group (L1 dimension, SI / STL / RT / SED / CSR)
    summary: str
    # the one metric a baseline is judged by (issue 37): one of ``metrics``, in [0, 1], higher
    # is better, so one threshold fits every task
    headline: str


_L1 = (1,)
_MEM = (2, 3)
_BOTH = MEMORY_HORIZONS
TASKS: dict[str, TaskSpec] = {
    t.name: t
    for t in (
        TaskSpec(
            "SOR",
            _L1,
            ("static",),
            "set",
            ("F1", "P", "R"),
            "SOR",
            "object categories resting on the receptacle",
            headline="F1",
        ),
        TaskSpec(
            "VGL",
            _L1,
            ("static",),
            "boxes",
            ("mIoU",),
            "VGL",
            "2D boxes of the objects resting on the receptacle",
            headline="mIoU",
        ),
        TaskSpec(
            "DPE",
            _L1,
            ("static",),
            "distances",
            ("AbsRel", "rho", "delta<1.25"),
            "DPE",
            "distance (m) from the camera to each object",
            headline="delta<1.25",
        ),
        TaskSpec(
            "RSR",
            _L1,
            ("static",),
            "neighbours",
            ("R@3", "Dir"),
            "RSR",
            "the 3 nearest neighbours of an anchor and their egocentric direction",
            headline="R@3",
        ),
        TaskSpec(
            "CC",
            _L1,
            ("static",),
            "count",
            ("AE", "MAPE", "Acc@0"),
            "CC",
            "number of distinct object categories on the receptacle",
            headline="Acc@0",
        ),
        TaskSpec(
            "IC",
            _L1,
            ("static",),
            "count",
            ("AE", "Acc@0", "Acc@1", "MAPE"),
            "IC",
            "number of instances of one category on the receptacle",
            headline="Acc@0",
        ),
        TaskSpec(
            "SOR-M",
            _MEM,
            _BOTH,
            "set",
            ("F1",),
            "SI",
            "object categories on a receptacle at a past step",
            headline="F1",
        ),
        TaskSpec(
            "LOR",
            _MEM,
            _BOTH,
            "set",
            ("F1",),
            "SI",
            "every object category on the receptacles in focus over the window",
            headline="F1",
        ),
        TaskSpec(
            "VGL-M",
            _MEM,
            _BOTH,
            "boxes",
            ("mIoU",),
            "STL",
            "the 2D box, in the current image, of an object named by where it was at a past step",
            headline="mIoU",
        ),
        TaskSpec(
            "TL",
            _MEM,
            _BOTH,
            "interval",
            ("tIoU",),
            "STL",
            "first and last step an object exists within the window",
            headline="tIoU",
        ),
        TaskSpec(
            "RSR-M",
            _MEM,
            _BOTH,
            "neighbours",
            ("R@3", "Dir"),
            "RT",
            "the 3 nearest neighbours of an acted-on object at the step it was put down",
            headline="R@3",
        ),
        TaskSpec(
            "STT",
            _MEM,
            _BOTH,
            "sequence",
            ("NES",),
            "RT",
            "the receptacles an object rested on, in order",
            headline="NES",
        ),
        TaskSpec(
            "SED-Add",
            _MEM,
            ("short",),
            "set",
            ("F1",),
            "SED",
            "categories added to a receptacle by step t",
            headline="F1",
        ),
        TaskSpec(
            "SED-Rem",
            _MEM,
            ("short",),
            "set",
            ("F1",),
            "SED",
            "categories removed from a receptacle by step t",
            headline="F1",
        ),
        TaskSpec(
            "CSR-Add",
            _MEM,
            _BOTH,
            "set",
            ("F1",),
            "CSR",
            "categories on a receptacle now that were not there at step 0",
            headline="F1",
        ),
        TaskSpec(
            "CSR-Rem",
            _MEM,
            _BOTH,
            "set",
            ("F1",),
            "CSR",
            "categories on a receptacle at step 0 that are not there now",
            headline="F1",
        ),
    )
}
ANSWER_TYPES = ("set", "boxes", "distances", "neighbours", "count", "interval", "sequence")
METRICS = {  # metric -> True where higher is better
    "F1": True,
    "P": True,
    "R": True,
    "mIoU": True,
    "AbsRel": False,
    "rho": True,
    "R@3": True,
    "Dir": True,
    "AE": False,
    "MAPE": False,
    "Acc@0": True,
    "Acc@1": True,
    "tIoU": True,
    "NES": True,
    "delta<1.25": True,
}


def _paper_row(level: int, horizon: str, scores: tuple[float | None, ...]) -> dict:
    order = ("SOR-M", "LOR", "VGL-M", "TL", "RSR-M", "STT", "SED-Add", "SED-Rem", "CSR-Add")
    return {
        (level, t, horizon): v
        for t, v in zip((*order, "CSR-Rem"), scores, strict=True)
        if v is not None
    }


PAPER_INTERNVL3: dict[tuple[int, str, str], float] = {
    (1, "SOR", "static"): 0.36,  # Table 1 (RGB): F1
    (1, "VGL", "static"): 0.00,  # mIoU
    (1, "RSR", "static"): 0.13,  # R@3
    (1, "IC", "static"): 0.20,  # Acc@0 (DPE and CC report AbsRel 0.66 and AE 1.83: no headline)
    **_paper_row(2, "short", (0.90, 0.65, 0.00, 0.68, 0.29, 0.16, 0.63, 0.68, 0.39, 0.47)),
    **_paper_row(2, "long", (0.90, 0.64, 0.00, 0.68, 0.29, 0.15, None, None, 0.39, 0.47)),
    **_paper_row(3, "short", (0.13, 0.19, 0.00, 0.42, 0.07, 0.00, 0.43, 0.61, 0.19, 0.35)),
    **_paper_row(3, "long", (0.13, 0.19, 0.00, 0.42, 0.07, 0.00, None, None, 0.18, 0.35)),
}
"""The paper's best overall model, InternVL3, on each (level, task, horizon)'s headline metric
where the paper reports it (RGB; Tables 1, 3, 4, 5, 7; columns SOR-M .. CSR-Rem), beside which
the docs put the baselines."""


def file_name(level: int, task: str, horizon: str, modality: str) -> str:
    """Where one level x task x horizon x modality's questions go, relative to the tasks dir."""
    return f"{QUESTIONS_DIR}/L{level}/{task}.{horizon}.{modality}.jsonl"


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: object) -> bool:
    """A finite JSON number (an integer too long for a float is not one)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return abs(v) < 1e300 if isinstance(v, int) else math.isfinite(v)


def check_answer(answer_type: str, value: Any) -> str | None:
    """None when ``value`` is a well-formed answer of ``answer_type``, else what is wrong."""
    if answer_type == "set" or answer_type == "sequence":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"a {answer_type} answer is a list of names"
        return None
    if answer_type == "boxes":
        if not isinstance(value, list):
            return "a boxes answer is a list of [x0, y0, x1, y1]"
        for b in value:
            if not (isinstance(b, list) and len(b) == 4 and all(_is_num(x) for x in b)):
                return f"not a box [x0, y0, x1, y1]: {b!r}"
            if b[2] < b[0] or b[3] < b[1]:
                return f"box corners out of order: {b!r}"
        return None
    if answer_type == "distances":
        if not isinstance(value, Mapping):
            return "a distances answer maps each object's name to metres"
        for k, v in value.items():
            if not (isinstance(k, str) and _is_num(v) and v >= 0):
                return f"not a distance in metres: {k!r}: {v!r}"
        return None
    if answer_type == "neighbours":
        if not isinstance(value, Mapping):
            return "a neighbours answer maps each neighbour's name to left / right / behind"
        if len(value) > K_NEIGHBOURS:
            return f"at most {K_NEIGHBOURS} neighbours, got {len(value)}"
        for k, v in value.items():
            if not (isinstance(k, str) and v in DIRECTIONS):
                return f"not a neighbour and direction: {k!r}: {v!r}"
        return None
    if answer_type == "count":
        if not (_is_int(value) and value >= 0):
            return f"a count is a non-negative integer, got {value!r}"
        return None
    if answer_type == "interval":
        if not (isinstance(value, Mapping) and set(value) == {"first", "last"}):
            return 'an interval is {"first": step, "last": step}'
        if not (_is_int(value["first"]) and _is_int(value["last"])):
            return "interval steps are integers"
        if value["first"] > value["last"]:
            return "the interval's first step is after its last"
        return None
    raise ValueError(f"unknown answer type {answer_type!r}")


def canonical(answer_type: str, value: Any) -> Any:
    """The one spelling of a valid answer (sets sorted and deduplicated, numbers as floats)."""
    if answer_type == "set":
        return sorted(set(value))
    if answer_type == "boxes":
        return [[float(x) for x in b] for b in value]
    if answer_type == "distances":
        return {str(k): float(v) for k, v in sorted(value.items())}
    if answer_type == "neighbours":
        return {str(k): str(v) for k, v in sorted(value.items())}
    if answer_type == "interval":
        return {"first": int(value["first"]), "last": int(value["last"])}
    if answer_type == "count":
        return int(value)
    return list(value)
