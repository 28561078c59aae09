"""What a pipeline hands to the runner: a :class:`Job`.

``produce(unit, rng)`` yields the unit's episodes; it runs in a worker process (or Ray task), so it
must be picklable: a module-level function, or ``functools.partial`` of one with a frozen config.
``extra_files(dataset)`` (optional) runs once after every unit is committed and returns files to
write beside the shards (``{relative path: bytes}``, or a function writing the file at a
given path for files too large for memory), e.g. a tour file in a released format.
``inputs`` records the external files the job read (``dataforge.inputs.Inputs``): their digests
go into the manifest and the config hash. ``preflight()`` (optional) runs before any work of a
real run (not a dry run), to fail in one line when a simulator or extra is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dataforge.inputs import Inputs
from dataforge.run.units import WorkUnit
from dataforge.store.builder import DatasetHeader, ExtraFile
from dataforge.store.episode import Episode
from dataforge.store.schema import Schema

Produce = Callable[[WorkUnit, np.random.Generator], Iterable[Episode]]


@dataclass(frozen=True)
class Job:
    pipeline: str
    name: str
    config: Mapping[str, Any]
    seed: int
    format: str
    schema: Schema
    units: tuple[WorkUnit, ...]
    produce: Produce
    extra_files: Callable[[Any], Mapping[str, ExtraFile]] | None = None
    description: str = ""
    license_url: str | None = None
    url: str | None = None
    citation: str | None = None
    inputs: Inputs = field(default_factory=Inputs)
    preflight: Callable[[], None] | None = None
    notes: tuple[str, ...] = ()  # what the generation command prints after the run
    curation: Mapping[str, Any] = field(default_factory=dict)  # a curated dataset's (curate)

    def header(self) -> DatasetHeader:
        return DatasetHeader(
            name=self.name,
            pipeline=self.pipeline,
            format=self.format,
            seed=self.seed,
            config=dict(self.config),
            schema=self.schema,
            units=tuple(u.id for u in self.units),
            description=self.description,
            license_url=self.license_url,
            url=self.url,
            citation=self.citation,
            inputs=self.inputs.to_dict(),
            curation=dict(self.curation),
        )
