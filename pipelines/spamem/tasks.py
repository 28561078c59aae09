"""SpaMEM question sets (``dataforge spamem tasks DIR --out TASKS_DIR``): the L1-L3 questions of
every sequence of a SpaMEM dataset, with answers computed from its stored arrays.

Inputs
    the sequences dataset DIR (``dataforge spamem generate``; its manifest is recorded with its
    sha256, its path as the input location ``sequences``).
Randomization and seeds
    one work unit per house of DIR; each sequence gets the child stream of its index in the
    house. The seed draws the RSR anchors, the absent category of each cluster's IC questions
    and the past steps of long-term SOR-M and RSR-M; everything else follows from the data.
Outputs
    one episode per sequence (same id) holding its question records (``questions``: JSONL
    bytes) and per-task counts; beside the shards, one JSONL file per level x task x horizon x
    modality (``questions/L<level>/<task>.<horizon>.<modality>.jsonl``, records in episode
    order; formats in :mod:`.qa`). A record's ``frames[*].dataset`` is ``sequences``: the input
    location, whose path is in the manifest (``inputs.locations.sequences``), so the files do
    not depend on where the directories are.
Invariants checked by validate
    see ``tasks_checks.INVARIANTS``.
Where it departs from the paper
    the paper publishes neither its prompts nor its question sampling: the rules are in
    docs/spamem.md ("Tasks").
"""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import DatasetError, UsageError
from dataforge.inputs import Inputs
from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.config import TasksConfig
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema
from dataforge.store.atomic import remove_path
from dataforge.store.layout import CONTROL_DIR

if TYPE_CHECKING:
    import io

    from dataforge.pipelines.spamem.questions import Settings
    from dataforge.pipelines.spamem.rules import Rules
    from dataforge.store.reader import Dataset, StoredEpisode


PIPELINE = "spamem-tasks"
SEQUENCES = "sequences"


def schema() -> Schema:
    return Schema(
        {
            "questions": ArraySpec(
                "uint8",
                (None,),
                codec="blosc-zstd",
                description="the sequence's question records (JSONL, spamem qa formats)",
            ),
        }
    )


@functools.lru_cache(maxsize=1)
def rules() -> Rules:
    """The generator's rules: the small pickupable types it may spawn (the IC absent-category
    pool) and procthor's receptacle statistics (how IC draws the absent category)."""
    from dataforge.pipelines.spamem.rules import Rules
    from dataforge.world.assets import load_catalogue

    return Rules(load_catalogue())


def settings(cfg: TasksConfig) -> Settings:
    from dataforge.pipelines.spamem.questions import Settings

    return Settings(
        levels=cfg.levels,
        horizons=cfg.horizons,
        modalities=cfg.modalities,
        stream_view=cfg.stream_view,
        dataset=SEQUENCES,
        frames=cfg.frames,
    )


def sequence_records(
    cfg: TasksConfig, ep: StoredEpisode, rng: np.random.Generator
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Every question record of one stored sequence, and what was skipped (reason -> count)."""
    from dataforge.pipelines.spamem.questions import Builder
    from dataforge.pipelines.spamem.sequence_view import SequenceView

    seq = SequenceView(ep)
    try:
        builder = Builder(seq, settings(cfg), rng, rules().spawnable, rules().pairs)
    except LookupError as exc:
        raise UsageError(
            f"--stream-view {cfg.stream_view[0]:g}:{cfg.stream_view[1]}: {exc}"
        ) from None
    records = list(builder.records())
    return records, builder.skipped


def produce(
    cfg: TasksConfig, root: str, unit: WorkUnit, rng: np.random.Generator
) -> Iterator[Episode]:
    from dataforge.store import open_dataset

    seeds = rng.integers(2**63, size=len(unit.params["episodes"]))
    with open_dataset(root) as ds:
        for eid, s in zip(unit.params["episodes"], seeds, strict=True):
            try:
                records, skipped = sequence_records(cfg, ds[eid], np.random.default_rng(int(s)))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # a chunk damaged in place
                raise DatasetError(
                    f"{root}: episode {eid}'s world graphs do not decode ({exc}); check the "
                    f"dataset with 'dataforge validate {root}'"
                ) from None
            data = b"".join(json_line(r) for r in records)
            counts = Counter(
                qa.file_name(r["level"], r["task"], r["horizon"], r["modality"]) for r in records
            )
            yield Episode(
                eid,
                {"questions": np.frombuffer(data, np.uint8)},
                {
                    "sequence": eid,
                    "questions": len(records),
                    "files": dict(sorted(counts.items())),
                    "skipped": dict(sorted(skipped.items())),
                },
            )


def json_line(record: dict[str, Any]) -> bytes:
    return (
        json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False) + "\n"
    ).encode()


def episode_records(ep: StoredEpisode) -> list[dict[str, Any]]:
    raw = ep["questions"].read().tobytes()
    return [json.loads(line) for line in raw.splitlines() if line]


def question_lines(ds: Dataset) -> Iterator[tuple[str, bytes]]:
    """(question file, JSONL line) of every record, episode by episode: one streaming pass."""
    for eid in ds.manifest.episodes:
        for r in episode_records(ds[eid]):
            yield qa.file_name(r["level"], r["task"], r["horizon"], r["modality"]), json_line(r)


class QuestionFiles:
    """The JSONL files beside the shards (``Job.extra_files``), written in one streaming pass
    over the shards into a scratch folder under the control directory, then each moved into
    place by its writer: memory stays bounded at any dataset size."""

    def __init__(self, ds: Dataset) -> None:
        self.ds = ds
        self.scratch = Path(ds.root) / CONTROL_DIR / "questions"
        self.names = sorted(
            {rel for eid in ds.manifest.episodes for rel in ds[eid].metadata.get("files", {})}
        )
        self._written = False

    def _write_all(self) -> None:
        remove_path(self.scratch)
        handles: dict[str, io.BufferedWriter] = {}
        try:
            for rel, line in question_lines(self.ds):
                if rel not in handles:
                    (self.scratch / rel).parent.mkdir(parents=True, exist_ok=True)
                    handles[rel] = open(self.scratch / rel, "wb")  # noqa: SIM115
                handles[rel].write(line)
        finally:
            for fh in handles.values():
                fh.close()
        self._written = True

    def writer(self, rel: str) -> Callable[[Path], None]:
        def write(tmp: Path) -> None:
            if not self._written:
                self._write_all()
            os.replace(self.scratch / rel, tmp)
            if rel == self.names[-1]:
                remove_path(self.scratch)

        return write

    def files(self) -> dict[str, Callable[[Path], None]]:
        return {rel: self.writer(rel) for rel in self.names}


def question_files(ds: Dataset) -> dict[str, Callable[[Path], None]]:
    return QuestionFiles(ds).files()


def build_job(cfg: TasksConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    inputs = inputs if inputs is not None else Inputs()
    if SEQUENCES not in inputs:
        raise UsageError("spamem tasks needs the SpaMEM sequences dataset (DIR)")
    manifest = inputs.dataset(SEQUENCES, "spamem", "dataforge spamem generate")
    houses: dict[str, list[str]] = {}
    for eid in manifest.episodes:
        houses.setdefault(eid.split("/", 1)[0], []).append(eid)
    if not houses:
        raise DatasetError(f"{inputs.root(SEQUENCES)} holds no sequences")
    units = tuple(WorkUnit(h, {"episodes": eps}) for h, eps in houses.items())
    n = sum(len(v) for v in houses.values())
    return Job(
        pipeline=PIPELINE,
        name=f"spamem-tasks-{manifest.config_hash[:12]}",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(),
        units=units,
        produce=functools.partial(produce, cfg, str(inputs.root(SEQUENCES))),
        extra_files=question_files,
        description=f"SpaMEM questions (levels {','.join(map(str, cfg.levels))}, "
        f"{'/'.join(cfg.horizons)}, {'/'.join(cfg.modalities)}) over the {n} sequences of "
        f"dataset {manifest.config_hash[:12]}.",
        url="https://github.com/allenai/procthor",
        citation="SpaMEM: Benchmarking Spatial Memory of Multimodal Models in Dynamic Embodied "
        "Environments.",
        inputs=inputs,
    )
