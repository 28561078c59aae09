"""Running generation work: units, seeds, executors (local processes, Ray), resume, locks.

A pipeline builds a :class:`Job` (its units, schema and a picklable ``produce(unit, rng)``);
:func:`run_job` does the rest. See ``docs/architecture.md``.
"""

from dataforge.run.job import Job
from dataforge.run.options import EXECUTORS, ExecutionOptions
from dataforge.run.runner import RunReport, plan_job, run_job
from dataforge.run.units import WorkUnit, unit_rng, unit_seed, unit_seed_sequence
from dataforge.store.lock import DirLock

__all__ = [
    "EXECUTORS",
    "DirLock",
    "ExecutionOptions",
    "Job",
    "RunReport",
    "WorkUnit",
    "plan_job",
    "run_job",
    "unit_rng",
    "unit_seed",
    "unit_seed_sequence",
]
