"""``--planner replay:DIR``: re-execute the decisions a SpaMEM dataset logged, without a planner.

The houses come from DIR's episodes (their stored initial house), the decisions from their
``planner_log`` in order, handed back verbatim (so the new log is byte-identical), and the run
must use DIR's seed: placement draws from the same streams, so the same decisions give the same
poses and images. A sequence DIR drew again (it ended without any action) is replayed from the
draw DIR kept (``attempt``: its streams) only; the dropped draws' decisions were not stored,
their reasons are copied. This is how an LLM-planned dataset is reproduced without its server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import UsageError
from dataforge.pipelines.spamem.planner import PlanState, Proposal
from dataforge.pipelines.spamem.rules import Action

if TYPE_CHECKING:
    from dataforge.pipelines.spamem.config import SpamemConfig
    from dataforge.store.reader import Dataset


SAME_SETTINGS = (
    "sequences_per_house",
    "steps",
    "recoveries",
    "split",
    "resolution",
    "views_per_step",
    "fov",
    "camera_radius",
)


def _open(source: Path | str) -> Dataset:
    from dataforge.store import open_dataset

    return open_dataset(Path(source))


def check_replay_source(source: Path, cfg: SpamemConfig, seed: int) -> None:
    """DIR is a SpaMEM dataset holding the requested houses, made with this seed and these
    settings (one line naming what differs)."""
    with _open(source) as ds:
        m = ds.manifest
        if m.pipeline != "spamem":
            raise UsageError(f"--planner replay:{source}: a {m.pipeline} dataset, not spamem")
        if m.seed != seed:
            raise UsageError(
                f"--planner replay:{source} was made with --seed {m.seed}; "
                f"replay needs the same seed (got {seed})"
            )
        for name in SAME_SETTINGS:
            theirs, ours = m.config.get(name), cfg.to_dict()[name]
            if theirs != ours:
                raise UsageError(
                    f"--planner replay:{source}: its {name} is {theirs!r}, this run's {ours!r}"
                )
        units = {s.unit for s in m.shards}
        missing = [f"house-{k:06d}" for k in cfg.house_indices if f"house-{k:06d}" not in units]
        if missing:
            raise UsageError(f"--planner replay:{source} has no {missing[0]}")


def replay_house(source: Path | str | None, unit_id: str) -> tuple[dict[str, Any], Any]:
    """The unit's house as DIR stored it, and where DIR had it from."""
    with _open(Path(str(source))) as ds:
        ep = ds[f"{unit_id}/seq-00"]
        return json.loads(ep["house_json"].read().tobytes()), ep.metadata["house_origin"]


def kept_draw(source: Path | str, sequence: str) -> tuple[int, list[str]]:
    """The draw of ``sequence`` that DIR kept (its planner and placement streams) and the
    reasons DIR recorded for the draws it dropped (a dataset made before redraws: draw 0)."""
    with _open(Path(str(source))) as ds:
        if sequence not in ds:
            raise UsageError(f"--planner replay:{source} has no episode {sequence}")
        meta = ds[sequence].metadata
        return int(meta.get("attempt", 0)), [str(r) for r in meta.get("redraw_reasons", [])]


class ReplayPlanner:
    name = "replay"

    def __init__(self, source: Path | str | None) -> None:
        self.source = Path(str(source))
        self._records: list[dict[str, Any]] = []
        self._describe: dict[str, Any] = {}

    def begin(self, sequence: str, rng: np.random.Generator) -> None:
        with _open(self.source) as ds:
            if sequence not in ds:
                raise UsageError(f"--planner replay:{self.source} has no episode {sequence}")
            ep = ds[sequence]
            self._records = json.loads(ep["planner_log"].read().tobytes())
            self._describe = dict(ep.metadata["planner"])

    def describe(self) -> dict[str, Any]:
        return self._describe

    def propose(self, state: PlanState, feedback: str | None) -> Proposal:
        if not self._records:
            raise UsageError(f"replay of {state.sequence}: the log ends before step {state.step}")
        rec = dict(self._records.pop(0))
        if rec.get("step") != state.step:
            raise UsageError(
                f"replay of {state.sequence}: the log's next decision is for step "
                f"{rec.get('step')}, not {state.step} (the world differs from the original)"
            )
        body = {k: v for k, v in rec.items() if k not in ("step", "decision")}
        action = body.get("action")
        return Proposal(Action.from_dict(action) if action else None, body)
