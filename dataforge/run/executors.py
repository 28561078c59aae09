"""Executors: run unit tasks and yield their results as they finish (order does not matter).

- ``LocalExecutor``: ``workers == 1`` runs in this process; more uses a pool of spawned processes
  (spawn, not fork: zarr keeps an event-loop thread). Workers ignore SIGINT (the driver handles
  Ctrl-C and terminates them) and die with the driver (PR_SET_PDEATHSIG on Linux).
- ``RayExecutor``: one Ray task per unit, on a local Ray instance with ``workers`` CPUs or on the
  cluster at ``ray_address``. Ray is imported only here. With a multi-node cluster the output
  directory must be on a file system every node mounts at the same path: workers write their
  shards into its staging folder and the driver renames them into place. A unit whose worker
  or node dies is run again (``RAY_MAX_RETRIES`` times, on any node); a unit that raises is not.
  Its workers get the thread limits, the numeric pins and the driver's ``DATAFORGE_GL_DEVICE``
  (when it has one; else each node's own) through the job's runtime env.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from dataforge import numerics
from dataforge.errors import DataforgeError, UnitFailedError, missing_dependency
from dataforge.render.device import ENV as GL_DEVICE_ENV
from dataforge.run.options import ExecutionOptions

_TRACKER_FILTER = "ignore:resource_tracker:UserWarning"

# How often Ray reruns a unit whose worker process or node died (Ray's own default). Only such
# system failures are retried (retry_exceptions=False): a unit that raises fails the run at once.
# A rerun is safe: it rewrites the same bytes at the same staging path, and only the driver
# commits a unit, once, from the one result ray.get returns.
RAY_MAX_RETRIES = 3

Task = Any
Fn = Callable[[Task], Any]


class Executor:
    def imap_unordered(self, fn: Fn, tasks: Sequence[Task]) -> Iterator[Any]:
        raise NotImplementedError

    def close(self, cancel: bool = False) -> None:
        pass


# Parallel workers each get one thread for chunk encoding, OpenMP, BLAS and Mesa's llvmpipe
# rasteriser (which by default starts a thread per core in every worker: N workers would then
# fight over the cores).
THREAD_LIMITS = {
    "DATAFORGE_ENCODE_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "LP_NUM_THREADS": "1",
}


def _limit_threads() -> None:
    """Set :data:`THREAD_LIMITS` (where not set already) for the workers this process spawns."""
    for key, value in THREAD_LIMITS.items():
        os.environ.setdefault(key, value)


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the driver
    try:
        import numcodecs.blosc

        numcodecs.blosc.set_nthreads(1)
    except ImportError:  # pragma: no cover
        pass


class RemoteTraceback(Exception):
    """A worker's traceback as text: the cause of the error a driver re-raises, so that
    ``dataforge --debug`` shows where in the worker it happened (multiprocessing's pool does the
    same for local workers)."""

    def __str__(self) -> str:
        return "\n" + (self.args[0] if self.args else "")


class LocalExecutor(Executor):
    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._pool: Any = None

    def imap_unordered(self, fn: Fn, tasks: Sequence[Task]) -> Iterator[Any]:
        if self.workers == 1 or len(tasks) <= 1:
            for task in tasks:
                yield fn(task)
            return
        _limit_threads()
        # After Ctrl-C the terminated pool's queue semaphores are still registered when the
        # driver exits; multiprocessing's resource tracker then removes them and warns. The
        # clean-up is right, the warning is noise on an interrupted run: the tracker (started
        # with the pool) inherits this filter.
        if _TRACKER_FILTER not in sys.warnoptions:
            sys.warnoptions.append(_TRACKER_FILTER)
        ctx = multiprocessing.get_context("spawn")
        self._pool = ctx.Pool(min(self.workers, len(tasks)), initializer=_worker_init)
        yield from self._pool.imap_unordered(fn, tasks, chunksize=1)

    def close(self, cancel: bool = False) -> None:
        if self._pool is None:
            return
        if cancel:
            self._pool.terminate()
        else:
            self._pool.close()
        self._pool.join()
        self._pool = None


class RayExecutor(Executor):
    def __init__(self, workers: int = 1, address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise missing_dependency("ray", "ray", "--executor ray") from None
        self._ray = ray
        self.workers = workers
        self.address = address
        self._pending: list[Any] = []
        self._started = False

    def _init(self) -> None:
        import logging

        ray = self._ray
        if ray.is_initialized():
            return
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "logging_level": logging.ERROR,
            "log_to_driver": False,
            "configure_logging": True,
        }
        if self.address:
            kwargs["address"] = self.address
        else:
            kwargs["num_cpus"] = self.workers
        # Ray workers (on any node) get the thread limits and the numeric pins through the
        # job's runtime env: a worker process may load numpy before it imports dataforge
        wanted = {**THREAD_LIMITS, **numerics.pins()}
        env_vars = {k: os.environ.get(k, v) for k, v in wanted.items()}
        # the OpenGL device (--gl-device) only when the driver has one: else each node keeps
        # its own (DATAFORGE_GL_DEVICE in the environment its `ray start` ran in)
        if (gl_device := os.environ.get(GL_DEVICE_ENV)) is not None:
            env_vars[GL_DEVICE_ENV] = gl_device
        kwargs["runtime_env"] = {"env_vars": env_vars}
        try:
            ray.init(**kwargs)
        except ConnectionError as exc:
            raise DataforgeError(f"cannot connect to Ray at {self.address}: {exc}") from None
        self._started = True

    def imap_unordered(self, fn: Fn, tasks: Sequence[Task]) -> Iterator[Any]:
        if not tasks:
            return
        ray = self._ray
        self._init()
        remote = ray.remote(num_cpus=1, max_retries=RAY_MAX_RETRIES, retry_exceptions=False)(fn)
        units = {remote.remote(t): getattr(getattr(t, "unit", None), "id", "?") for t in tasks}
        self._pending = list(units)
        while self._pending:
            done, self._pending = ray.wait(self._pending, num_returns=1)
            unit = units.pop(done[0])
            try:
                yield ray.get(done[0])
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                remote = RemoteTraceback(str(getattr(exc, "traceback_str", "") or exc))
                if isinstance(cause, BaseException):
                    # the worker's own error, with its traceback for --debug (Ray sends the
                    # exception without it)
                    raise cause from remote
                raise DataforgeError(str(exc).splitlines()[0]) from remote
            except ray.exceptions.RayError as exc:
                # retries used up (workers or nodes kept dying), the result lost, ...
                first = str(exc).splitlines()[0] if str(exc) else ""
                raise UnitFailedError(
                    f"unit {unit} failed on Ray ({RAY_MAX_RETRIES} retries): "
                    f"{type(exc).__name__}: {first}"
                ) from None

    def close(self, cancel: bool = False) -> None:
        ray = self._ray
        if cancel:
            for ref in self._pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
        self._pending = []
        if self._started:
            ray.shutdown()
            self._started = False


def make_executor(options: ExecutionOptions) -> Executor:
    if options.executor == "ray":
        return RayExecutor(options.workers, options.ray_address)
    return LocalExecutor(options.workers)
