"""Asking a model many questions: one chat request per item, appended as JSON lines to an
output file that a rerun resumes (:func:`load_done`), at most ``rate`` requests a second over
``workers`` threads (:class:`RateGate`), with bounded retries of retryable failures
(:func:`answer_all`). Benchmark-free: the caller builds each item's messages and turns each
reply into its record."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataforge.llm.client import ChatClient, LLMError, LLMNoServer
from dataforge.progress import make_progress

RETRY_BACKOFF_S = 1.0
"""Wait before retry n (0-based): ``RETRY_BACKOFF_S * 2**n`` seconds."""


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

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


@dataclass(frozen=True)
class BatchResult:
    answered: int  # written with a usable answer
    malformed: int  # written with an error (scored as wrong)
    failed: int  # no reply from the server: not written (a rerun asks again)
    last_error: str | None


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
    request that fails with a retryable :class:`LLMError` is retried ``retries`` times with
    backoff; an item still without a reply is not written. A refused connection stops the rest
    soon (counted as failed). ``total`` and ``label``: the progress bar's."""
    gate = gate or RateGate(None)
    lock = threading.Lock()
    stop = threading.Event()
    counts = {"answered": 0, "malformed": 0, "failed": 0}
    last_error: list[str] = []

    def ask(item: Mapping[str, Any], fh: Any, progress: Any) -> None:
        if stop.is_set():  # the server went away: don't wait out every item's retries
            with lock:
                counts["failed"] += 1
                progress.advance()
            return
        msgs = messages(item)
        text: str | None = None
        error: LLMError | None = None
        for attempt in range(retries + 1):
            gate.wait()
            try:
                text = client.chat(msgs).text
                break
            except LLMError as exc:
                error = exc
                if not exc.retryable or attempt == retries:
                    break
                time.sleep(RETRY_BACKOFF_S * 2**attempt)
        with lock:
            if text is None:
                counts["failed"] += 1
                last_error[:] = [str(error)]
                if isinstance(error, LLMNoServer):
                    stop.set()
            else:
                rec = record(item, text)
                counts["malformed" if rec.get("error") else "answered"] += 1
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                fh.flush()
            progress.advance(str(item.get("id", "")))

    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a", encoding="utf-8") as fh, make_progress(quiet) as progress:
        progress.start(label, total, total - len(todo))
        if workers == 1:
            for item in todo:
                ask(item, fh, progress)
        else:
            with ThreadPoolExecutor(workers) as pool:
                futures = [pool.submit(ask, item, fh, progress) for item in todo]
                try:
                    for future in futures:
                        future.result()
                except BaseException:  # a bug or a broken dataset: stop soon, keep what's written
                    for future in futures:
                        future.cancel()
                    raise
    return BatchResult(last_error=last_error[0] if last_error else None, **counts)
