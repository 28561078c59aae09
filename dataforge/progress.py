"""Progress reporting for long work: a rich bar on a terminal, plain lines otherwise, or nothing.

Library code takes a :class:`Progress` and calls ``start``/``advance``/``stop``; the CLI chooses
which one with :func:`make_progress`. Plain lines go to stderr at most once per ``interval``
seconds (and always for the last item), so logs of batch jobs stay short.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any


class Progress:
    """No output (``--quiet``); the base of the others."""

    def start(self, description: str, total: int, completed: int = 0) -> None:
        pass

    def advance(self, note: str = "") -> None:
        pass

    def stop(self) -> None:
        pass

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _fmt_eta(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = round(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}"


class PlainProgress(Progress):
    """``dataforge: generate 3/12 (unit-id) 1.5/s ETA 0:00:06`` lines for logs and pipes."""

    def __init__(self, stream: IO[str] | None = None, interval: float = 2.0) -> None:
        self.stream = stream or sys.stderr
        self.interval = interval
        self.total = 0
        self.done = 0
        self._t0 = 0.0
        self._start_done = 0
        self._last = 0.0
        self.description = ""

    def start(self, description: str, total: int, completed: int = 0) -> None:
        self.description, self.total, self.done = description, total, completed
        self._start_done = completed
        self._t0 = self._last = time.monotonic()
        print(f"dataforge: {description}: {completed}/{total} done", file=self.stream, flush=True)

    def advance(self, note: str = "") -> None:
        self.done += 1
        now = time.monotonic()
        if now - self._last < self.interval and self.done < self.total:
            return
        self._last = now
        rate = (self.done - self._start_done) / max(now - self._t0, 1e-9)
        eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        extra = f" ({note})" if note else ""
        print(
            f"dataforge: {self.description} {self.done}/{self.total}{extra} "
            f"{rate:.2f}/s ETA {_fmt_eta(eta)}",
            file=self.stream,
            flush=True,
        )


class RichProgress(Progress):
    """A rich progress bar with units/s and ETA (terminals only)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as _Bar

        self._bar = _Bar(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task: Any = None
        self._t0 = 0.0
        self._start_done = 0

    def start(self, description: str, total: int, completed: int = 0) -> None:
        self._bar.start()
        self._t0 = time.monotonic()
        self._start_done = completed
        self._task = self._bar.add_task(description, total=total, completed=completed, rate="")

    def advance(self, note: str = "") -> None:
        task = self._bar.tasks[0]
        done = task.completed + 1
        rate = (done - self._start_done) / max(time.monotonic() - self._t0, 1e-9)
        self._bar.update(self._task, advance=1, rate=f"{rate:.2f}/s")

    def stop(self) -> None:
        self._bar.stop()


def make_progress(quiet: bool = False, stream: IO[str] | None = None) -> Progress:
    """Rich bar on a terminal, plain lines when stderr is not a TTY, nothing when ``quiet``."""
    if quiet:
        return Progress()
    stream = stream or sys.stderr
    if stream.isatty():
        return RichProgress()
    return PlainProgress(stream)
