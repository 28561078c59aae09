"""The evaluation run every benchmark that asks a model shares: items in, one prediction record
per item appended to ``--out``, resumable.

A benchmark brings its items (questions, tasks), the chat messages of one item and the record
of one reply; :func:`evaluate` does the rest, in this order: take ``--out``'s lock (one run per
output: a second would ask everything again), check the server (one line and no work when it is
down or serves another model), drop the items ``--out`` already answers (a torn last line is
repaired: :func:`~dataforge.llm.batch.load_done`), ask the others
(:func:`~dataforge.llm.batch.answer_all`: workers, rate, retries, early stop, Ctrl-C), and fail
in one line, after the others were written, when some got no answer (a rerun asks them).

The run's options and their defaults are stated once, here (:class:`EvalDefaults`), and the
command line's options are built from them (``dataforge.cli.evaluation``). A benchmark departs
from a default only where its upstream fixes another value (FindingDory: 256 new tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataforge.errors import DataforgeError, UsageError
from dataforge.llm.batch import RateGate, answer_all, load_done
from dataforge.llm.client import ChatClient, LLMSettings
from dataforge.store.lock import FileLock

SERVER_HINT = "start one (docs/llm.md) or check --llm-url"
"""What a down server's one-line error suggests."""


@dataclass(frozen=True)
class EvalDefaults:
    """The defaults of an evaluation run's options (``--timeout``, ``--max-tokens``,
    ``--workers``, ``--retries``; ``--rate``: no limit)."""

    timeout_s: float = 300.0  # a reply to dozens of images on a busy server takes minutes
    max_tokens: int = 512  # room for a short reasoning before the JSON answer
    workers: int = 1
    retries: int = 2
    # why a benchmark departs from the defaults above (shown in --help), e.g. "upstream: 256"
    max_tokens_note: str = "raise it for reasoning models"


@dataclass(frozen=True)
class EvalRun:
    """How one evaluation runs: the model and its sampling (``settings``, recorded nowhere but
    in the records' ``raw`` replies), where the records go, and how fast to ask."""

    settings: LLMSettings
    out: Path
    workers: int = EvalDefaults.workers
    rate: float | None = None
    retries: int = EvalDefaults.retries
    quiet: bool = False

    def __post_init__(self) -> None:
        if self.workers < 1 or self.retries < 0 or (self.rate is not None and self.rate <= 0):
            raise UsageError("--workers must be >= 1, --retries >= 0 and --rate > 0")


@dataclass(frozen=True)
class EvalResult:
    """What one run did: ``total`` items selected, of which ``skipped`` were already in ``out``;
    of the others, ``answered`` (a usable answer), ``malformed`` (written with an ``error``,
    scored as the benchmark says) and ``failed`` (no reply: not written, a rerun asks them)."""

    label: str
    noun: str
    total: int
    answered: int
    malformed: int
    skipped: int
    failed: int
    out: str

    def line(self, malformed: str = "malformed") -> str:
        """The summary line (``malformed``: what the benchmark calls a reply it could not use)."""
        return (
            f"{self.label}: {self.total} {self.noun}: {self.answered} answered, "
            f"{self.malformed} {malformed}, {self.skipped} skipped (already in {self.out}), "
            f"{self.failed} failed"
        )


Item = Mapping[str, Any]


def evaluate(
    items: Sequence[Item],
    run: EvalRun,
    *,
    messages: Callable[[Item], list[dict[str, Any]]],
    record: Callable[[Item, str], dict[str, Any]],
    label: str,
    noun: str,
) -> EvalResult:
    """Ask the model of ``run.settings`` every item of ``items`` (each with a unique ``"id"``)
    that ``run.out`` does not answer yet, appending ``record(item, reply text)`` per item (a
    record whose ``error`` is not None counts as malformed). ``label`` names the run in the
    progress bar and the summary (``"spamem evaluate"``); ``noun`` names the items
    (``"questions"``).
    Raises a one-line :class:`DataforgeError` when the server is down (before any work) or when
    some items got no answer (after the others were written)."""
    out = Path(run.out)
    lock = FileLock(out)
    client = ChatClient(run.settings, hint=SERVER_HINT)
    try:
        lock.acquire()
        client.check()
        done = load_done(out)
        todo = [item for item in items if item["id"] not in done]
        result = answer_all(
            todo,
            client=client,
            messages=messages,
            record=record,
            out=out,
            label=label,
            total=len(items),
            workers=run.workers,
            gate=RateGate(run.rate),
            retries=run.retries,
            quiet=run.quiet,
        )
    finally:
        client.close()
        lock.release()
    if result.failed:
        raise DataforgeError(
            f"{result.failed} of {len(todo)} {noun} got no answer from {run.settings.url} "
            f"(last error: {result.last_error or 'none'}); rerun the same command to resume"
        )
    return EvalResult(
        label,
        noun,
        len(items),
        result.answered,
        result.malformed,
        len(items) - len(todo),
        result.failed,
        str(out),
    )
