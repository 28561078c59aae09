"""Asking a model many questions: one chat request per item, appended as JSON lines to an
output file that a rerun resumes (:func:`load_done`), at most ``rate`` requests a second over
``workers`` threads (:class:`RateGate`), with bounded retries of retryable failures
(:func:`answer_all`). Benchmark-free: the caller builds each item's messages and turns each
reply into its record.

Ctrl-C stops a batch at once at any worker count: the workers are daemon threads that the main
thread waits for with a timeout; on an interrupt it stops them from starting requests or writing
and returns without joining them (one blocked in a read of a hung server is abandoned). Every
record is one whole line written under a lock, so the output never holds a torn record."""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataforge.llm.client import ChatClient, LLMError, LLMNoServer, retry_delay
from dataforge.progress import make_progress

RETRY_BACKOFF_S = 1.0
"""Wait before retry n (0-based): ``RETRY_BACKOFF_S * 2**n`` seconds (a 429's ``Retry-After``
instead, at most ``client.RETRY_AFTER_MAX_S``)."""

MAX_CONSECUTIVE_FAILURES = 5
"""After this many items in a row got no reply (each after its retries), the rest are not asked:
a server that accepts and never answers would cost every item its timeouts."""

POLL_S = 0.1
"""How often the main thread looks up from waiting for the workers (Ctrl-C lands at once anyway)."""


def load_done(out: Path) -> set[str]:
    """The ids already answered in ``out``. Lines that are not records (a torn last line after
    a crash) are dropped: the file is rewritten atomically without them."""
    if not out.exists():
        return set()
    raw = out.read_bytes().decode("utf-8", "replace")
    kept: list[str] = []
    done: set[str] = set()
    for line in raw.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        ok = isinstance(rec, dict) and isinstance(rec.get("id"), str)
        if ok and rec["id"] not in done:
            done.add(rec["id"])
            kept.append(line)
    text = "".join(f"{line}\n" for line in kept)
    if text != raw:
        tmp = out.with_name(out.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    return done


class RateGate:
    """At most ``rate`` request starts per second over all threads (None: no limit)."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self, stop: threading.Event | None = None) -> None:
        """Wait for this thread's turn (cut short when ``stop`` is set)."""
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            if stop is not None:
                stop.wait(start - now)
            else:
                time.sleep(start - now)


@dataclass(frozen=True)
class BatchResult:
    answered: int  # written with a usable answer
    malformed: int  # written with an error (scored as wrong)
    failed: int  # no reply from the server, or not asked after a stop: not written (a rerun asks)
    last_error: str | None  # one line; says so when the batch stopped early
    stopped: str | None = None  # why the batch stopped before asking every item, else None


class _Batch:
    """The shared state of one :func:`answer_all` run (the workers' lock, counts, stop)."""

    def __init__(self, total: int) -> None:
        self.lock = threading.Lock()
        self.stop = threading.Event()  # no new requests
        self.closed = False  # no more writes (set under the lock on an interrupt)
        self.counts = {"answered": 0, "malformed": 0, "failed": 0}
        self.in_a_row = 0
        self.total = total
        self.last_error: str | None = None
        self.stopped: str | None = None
        self.crash: BaseException | None = None

    def failed(self, error: LLMError | None) -> None:
        """Count a failed item (under the lock); stop the batch when the server is gone or
        too many items in a row failed."""
        self.counts["failed"] += 1
        if error is None:  # not asked: the batch had stopped
            return
        self.last_error = str(error)
        self.in_a_row += 1
        if self.stopped is not None:
            return
        if isinstance(error, LLMNoServer):
            self.stopped = "the server refused the connection"
        elif self.in_a_row >= MAX_CONSECUTIVE_FAILURES:
            self.stopped = f"{self.in_a_row} items in a row got no reply"
        if self.stopped is not None:
            self.stop.set()

    def summary_error(self) -> str | None:
        if self.stopped is None or self.last_error is None:
            return self.last_error
        c = self.counts
        done = c["answered"] + c["malformed"]
        left = self.total - done - c["failed"]
        return (
            f"stopped early: {self.stopped} ({done} of {self.total} items answered, "
            f"{c['failed'] + left} not; last error: {self.last_error})"
        )


def answer_all(
    todo: Sequence[Mapping[str, Any]],
    *,
    client: ChatClient,
    messages: Callable[[Mapping[str, Any]], list[dict[str, Any]]],
    record: Callable[[Mapping[str, Any], str], dict[str, Any]],
    out: Path,
    label: str,
    total: int,
    workers: int = 1,
    gate: RateGate | None = None,
    retries: int = 2,
    quiet: bool = False,
) -> BatchResult:
    """Ask every item of ``todo`` (``messages(item)``) and append ``record(item, reply text)``
    to ``out`` as one JSON line (an ``error`` key that is not None counts as malformed). A
    request that fails with a retryable :class:`LLMError` (timeout, lost connection, HTTP 5xx or
    429) is retried ``retries`` times after :func:`~dataforge.llm.client.retry_delay` (backoff
    from :data:`RETRY_BACKOFF_S`, or the server's ``Retry-After``); an item still without a
    reply is not written. A refused connection, or :data:`MAX_CONSECUTIVE_FAILURES` items in a
    row without a reply, stops the rest (counted as failed; ``last_error`` says so in one
    line). ``total`` and ``label``: the progress bar's. Ctrl-C (KeyboardInterrupt) is raised at
    once, abandoning the requests in flight; what was written is whole lines."""
    gate = gate or RateGate(None)
    batch = _Batch(len(todo))
    items: queue.SimpleQueue[Mapping[str, Any]] = queue.SimpleQueue()
    for item in todo:
        items.put(item)

    def ask(item: Mapping[str, Any]) -> str | LLMError | None:
        """The reply's text, the last error, or None when the batch stopped first."""
        msgs = messages(item)
        error: LLMError | None = None
        for attempt in range(retries + 1):
            gate.wait(batch.stop)
            if batch.stop.is_set():
                return error
            try:
                return client.chat(msgs).text
            except LLMError as exc:
                error = exc
            delay = retry_delay(error, attempt, RETRY_BACKOFF_S) if attempt < retries else None
            if delay is None or batch.stop.wait(delay):
                break
        return error

    def work(fh: Any, progress: Any) -> None:
        try:
            while True:
                try:
                    item = items.get_nowait()
                except queue.Empty:
                    return
                reply = None if batch.stop.is_set() else ask(item)
                with batch.lock:
                    if batch.closed:
                        return
                    if isinstance(reply, str):
                        rec = record(item, reply)
                        batch.in_a_row = 0
                        batch.counts["malformed" if rec.get("error") else "answered"] += 1
                        fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                        fh.flush()
                    else:
                        batch.failed(reply)
                    progress.advance(str(item.get("id", "")))
        except BaseException as exc:  # a bug or a broken dataset: stop soon, keep what's written
            with batch.lock:
                batch.crash = batch.crash or exc
            batch.stop.set()

    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a", encoding="utf-8") as fh, make_progress(quiet) as progress:
        progress.start(label, total, total - len(todo))
        threads = [
            threading.Thread(target=work, args=(fh, progress), name=f"llm-batch-{i}", daemon=True)
            for i in range(max(1, min(workers, len(todo))))
        ]
        try:
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():
                    t.join(POLL_S)
        except BaseException:  # Ctrl-C: stop at once; don't wait for requests in flight
            batch.stop.set()
            with batch.lock:
                batch.closed = True
            raise
    if batch.crash is not None:
        raise batch.crash
    return BatchResult(last_error=batch.summary_error(), stopped=batch.stopped, **batch.counts)
