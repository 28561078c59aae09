"""Run a job into an output directory: lock, resume, execute units, commit, finalize.

    report = run_job(job, "out/", ExecutionOptions(workers=4), command=sys.argv)

Rerunning the same job on the same directory skips committed units and finishes the rest; a
different configuration is refused unless ``overwrite``. Ctrl-C (or SIGTERM) stops cleanly:
workers are terminated, committed shards stay, and :class:`~dataforge.errors.Interrupted` says
how to resume.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataforge.errors import DataforgeError, DatasetError, Interrupted, LockedError, UsageError
from dataforge.outputs import check_apart
from dataforge.progress import Progress
from dataforge.run.executors import make_executor
from dataforge.run.job import Job
from dataforge.run.options import ExecutionOptions
from dataforge.run.task import UnitTask, run_unit
from dataforge.store.atomic import disk_error, remove_path
from dataforge.store.builder import DatasetBuilder, inspect_dir
from dataforge.store.layout import MANIFEST, SHARDS_DIR, entry_kind
from dataforge.store.lock import DirLock, check_control_dir
from dataforge.store.manifest import Manifest


@dataclass
class RunReport:
    root: Path
    total: int
    already_committed: int
    committed_now: int = 0
    manifest: Manifest | None = None
    dry_run: bool = False
    already_complete: bool = False
    stale_lock: dict[str, Any] | None = None
    plan_note: str = ""


def _check_output(out: Path) -> None:
    """Fail early, as bad input, when the output path cannot be a dataset directory.

    ``out`` itself may be a symbolic link to a folder (the user's own choice on the command
    line); nothing inside it may be: a ``.dataforge`` link is refused here (the lock, journal and
    staging would land elsewhere), and the write probe never follows a link."""
    for parent in [out, *out.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"cannot create output directory {out}: {parent} is a file")
            break
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create output directory {out}: {exc.strerror}") from None
    check_control_dir(out)
    probe = out / ".dataforge-write-test"
    if entry_kind(probe) not in (None, "file"):
        raise UsageError(f"refusing to use {out}: {probe.name} is not a regular file; remove it")
    try:
        # O_NOFOLLOW: a probe replaced by a link is never written through
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        os.close(fd)
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"output directory {out} is not writable: {exc.strerror}") from None


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def plan_job(job: Job, out: str | Path, options: ExecutionOptions) -> RunReport:
    """What a run would do (``--dry-run``), without touching the directory."""
    root = Path(out).expanduser().absolute()
    check_apart(out, "--out", job.inputs.read_from())
    header = job.header()
    total = len(job.units)
    state = inspect_dir(root)
    if state.foreign:
        note = f"{root} is not empty and holds no dataforge dataset: the run would be refused"
        return RunReport(root, total, 0, dry_run=True, plan_note=note)
    if state.stored_hash is not None and state.stored_hash != header.config_hash:
        if not options.overwrite:
            note = f"{root} holds another configuration: the run would be refused (--overwrite)"
            return RunReport(root, total, 0, dry_run=True, plan_note=note)
        return RunReport(root, total, 0, dry_run=True, plan_note="would overwrite the dataset")
    done = 0 if options.overwrite else sum(1 for u in job.units if u.id in state.committed)
    note = f"would generate {total - done} of {total} units into {root}"
    if done:
        note += f" ({done} already committed)"
    return RunReport(root, total, done, dry_run=True, plan_note=note)


def run_job(
    job: Job,
    out: str | Path,
    options: ExecutionOptions,
    *,
    command: Sequence[str] = (),
    progress: Progress | None = None,
) -> RunReport:
    """Generate ``job`` into ``out`` (resuming what is there); return what was done."""
    if options.dry_run:
        return plan_job(job, out, options)
    check_apart(out, "--out", job.inputs.read_from())  # before anything is touched
    if job.preflight is not None:
        job.preflight()
    progress = progress or Progress()
    root = Path(out).expanduser().absolute()
    created = _missing_top(root)
    try:
        _check_output(root)
        return _run(job, root, options, command, progress)
    except BaseException as exc:
        # a run that ends before committing a unit leaves no folder it made behind
        if created is not None and not isinstance(exc, LockedError) and _holds_no_data(root):
            remove_path(created)
        raise


def _missing_top(root: Path) -> Path | None:
    """The outermost folder of ``root`` (itself or a parent) that does not exist yet."""
    top = None
    for path in [root, *root.parents]:
        if os.path.lexists(path):
            break
        top = path
    return top


def _holds_no_data(root: Path) -> bool:
    """No manifest and no committed shard in ``root`` (only what a starting run writes)."""
    shards = root / SHARDS_DIR
    if entry_kind(root / MANIFEST) is not None:
        return False
    return entry_kind(shards) != "dir" or not any(shards.iterdir())


def _run(
    job: Job, root: Path, options: ExecutionOptions, command: Sequence[str], progress: Progress
) -> RunReport:
    header = job.header()
    total = len(job.units)
    with DirLock(root) as lock:
        builder = DatasetBuilder.open(root, header, overwrite=options.overwrite)
        todo = [u for u in job.units if u.id not in builder.committed]
        report = RunReport(root, total, total - len(todo), stale_lock=lock.stale)
        if not todo and builder.previous_manifest is not None and not builder.journal_pending:
            report.already_complete = True
            report.manifest = builder.previous_manifest
            return report
        tasks = [
            UnitTask(u, job.seed, job.format, job.schema, str(builder.staging), job.produce)
            for u in todo
        ]
        executor = make_executor(options)
        progress.start(f"{job.pipeline}: units", total=total, completed=report.already_committed)
        try:
            with _sigterm_as_interrupt():
                for record in executor.imap_unordered(run_unit, tasks):
                    builder.commit(record)
                    report.committed_now += 1
                    progress.advance(record.unit)
        except KeyboardInterrupt:
            executor.close(cancel=True)
            progress.stop()
            raise Interrupted(
                f"interrupted: {len(builder.committed)} of {total} units are committed in "
                f"{root}; rerun the same command to resume"
            ) from None
        except BaseException as exc:
            executor.close(cancel=True)
            progress.stop()
            if isinstance(exc, OSError) and (err := disk_error(exc, f"writing {root}")):
                raise err from exc
            if isinstance(exc, DatasetError):
                raise  # a dataset the run reads is damaged: resuming would meet it again
            if isinstance(exc, DataforgeError):
                # bad input (a malformed house, ...) fails again until it is fixed
                then = "fix that input, then " if isinstance(exc, UsageError) else ""
                raise type(exc)(
                    f"{exc} ({len(builder.committed)} of {total} units are committed; "
                    f"{then}rerun the same command to resume)"
                ) from exc
            raise
        try:
            # the finalize stretch (episodes.csv, extra files, croissant.json, manifest.json):
            # every unit is committed, so Ctrl-C or SIGTERM here leaves a run a rerun finishes
            with _sigterm_as_interrupt():
                executor.close()
                progress.stop()
                report.manifest = builder.finalize(
                    command=command, execution=options.to_dict(), extra_files=job.extra_files
                )
        except KeyboardInterrupt:
            executor.close(cancel=True)
            progress.stop()
            raise Interrupted(
                f"interrupted while finishing: all {len(builder.committed)} of {total} units are "
                f"committed in {root} but the dataset's files are not all written; rerun the "
                "same command to resume"
            ) from None
        except OSError as exc:
            if err := disk_error(exc, f"finalizing {root}"):
                raise err from exc
            raise
    return report
