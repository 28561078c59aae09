"""The helper process that runs procthor's house generator with ``PYTHONHASHSEED=0``.

procthor's generator draws random numbers while iterating over sets of strings, so its houses
depend on Python's string hashing (randomized per process unless ``PYTHONHASHSEED`` is set, and
it can only be set before the interpreter starts). :class:`dataforge.world.procgen.WorkerProcess`
starts this module (``python -m dataforge.world.procgen_worker``) once per process with the
variable fixed and sends it one JSON request per line; it answers one JSON line per request on
its own copy of stdout (procthor's prints go to stderr).

This module imports :mod:`dataforge.world.procgen`; that one only names this module in the
command line it starts, so the two never import each other.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any

from dataforge.errors import MissingDependencyError, UsageError
from dataforge.world.procgen import GenerationFailed, generate_or_fail


def serve(requests: IO[str], replies: IO[str]) -> None:
    """Answer each request line (``{seed, split, room_spec}``) with one reply line: ``{house}``,
    or ``{kind, error}`` with kind ``missing`` / ``usage`` / ``failed`` (try the next seed)."""
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
