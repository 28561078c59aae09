"""A helper process that runs procthor's house generator with ``PYTHONHASHSEED=0``.

procthor's generator draws random numbers while iterating over sets of strings, so its houses
depend on Python's string hashing (randomized per process unless ``PYTHONHASHSEED`` is set, and
it can only be set before the interpreter starts). :func:`worker` starts this module once per
process with the variable fixed and sends it one JSON request per line; it answers one JSON line
per request on its own copy of stdout (procthor's prints go to stderr).
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
from typing import IO, Any

from dataforge.errors import DataforgeError, UsageError
from dataforge.world.procgen import GenerationFailed


class WorkerProcess:
    """One generator process; :meth:`generate` sends a request and waits for the house."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dataforge.world.procgen_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )

    def generate(self, seed: int, split: str, room_spec: str | None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"seed": seed, "split": split, "room_spec": room_spec}
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            code = self.proc.poll()
            raise DataforgeError(f"the house generator process stopped (exit code {code})")
        reply = json.loads(line)
        if "house" in reply:
            return reply["house"]
        kind, message = reply.get("kind"), reply.get("error", "unknown error")
        if kind == "usage":
            raise UsageError(message)
        if kind == "missing":
            from dataforge.errors import MissingDependencyError

            raise MissingDependencyError(message)
        raise GenerationFailed(message)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


_WORKER: WorkerProcess | None = None


def worker() -> WorkerProcess:
    """This process's generator process (started on first use, stopped at exit)."""
    global _WORKER
    if _WORKER is None or _WORKER.proc.poll() is not None:
        _WORKER = WorkerProcess()
        atexit.register(_WORKER.close)
    return _WORKER


def serve(requests: IO[str], replies: IO[str]) -> None:
    from dataforge.errors import MissingDependencyError
    from dataforge.world.procgen import generate_or_fail

    for line in requests:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            house = generate_or_fail(int(req["seed"]), req["split"], req.get("room_spec"))
            reply: dict[str, Any] = {"house": house}
        except MissingDependencyError as exc:
            reply = {"kind": "missing", "error": str(exc)}
        except UsageError as exc:
            reply = {"kind": "usage", "error": str(exc)}
        except GenerationFailed as exc:  # the caller tries the next seed
            reply = {"kind": "failed", "error": str(exc)}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main() -> None:
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr  # procthor prints; keep the reply channel clean
    serve(sys.stdin, replies)


if __name__ == "__main__":
    main()
