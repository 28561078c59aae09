"""The function every executor runs for one unit: produce its episodes, write its shard."""

from __future__ import annotations

import dataclasses
import errno
from dataclasses import dataclass
from pathlib import Path

from dataforge.errors import DataforgeError, UnitFailedError
from dataforge.render import device
from dataforge.run.job import Produce
from dataforge.run.units import WorkUnit, unit_rng
from dataforge.store.atomic import disk_error
from dataforge.store.schema import Schema
from dataforge.store.shard import ShardRecord, write_shard


@dataclass(frozen=True)
class UnitTask:
    unit: WorkUnit
    seed: int
    fmt: str
    schema: Schema
    staging: str
    produce: Produce


def run_unit(task: UnitTask) -> ShardRecord:
    """Write one unit's shard into staging (in a worker); the driver commits it. The record
    names the OpenGL contexts the unit rendered with (``dataforge.render.device``), for the
    manifest."""
    unit_id = task.unit.id
    try:
        start = device.mark()
        episodes = task.produce(task.unit, unit_rng(task.seed, unit_id))
        Path(task.staging).mkdir(parents=True, exist_ok=True)
        record = write_shard(Path(task.staging), unit_id, task.fmt, task.schema, episodes)
        return dataclasses.replace(record, opengl=device.used_since(start))
    except DataforgeError as exc:
        if str(exc).startswith(f"unit {unit_id}"):
            raise
        raise type(exc)(f"unit {unit_id}: {exc}") from exc
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise disk_error(exc, f"writing unit {unit_id}") from exc  # type: ignore[misc]
        raise UnitFailedError(f"unit {unit_id} failed: {type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise UnitFailedError(f"unit {unit_id} failed: {type(exc).__name__}: {exc}") from exc
