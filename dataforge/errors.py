"""The one place for dataforge's exceptions.

Every error a user can cause or meet derives from :class:`DataforgeError`. The CLI prints its
message as one line and exits with its ``exit_code``; library code raises, never prints or exits.
Errors that refine a built-in also subclass it (a missing input is a ``FileNotFoundError`` too), so
callers can catch what they already know.

Exit codes: 0 success, 1 a failed check or run (validation failed, a unit failed, disk full, a
missing optional dependency), 2 bad usage or bad input (including runs refused because of the
output directory's state), 130 interrupted by Ctrl-C.
"""

from __future__ import annotations


class DataforgeError(Exception):
    """Root of all dataforge errors. ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class UsageError(DataforgeError, ValueError):
    """Bad usage or bad input: wrong option values, malformed files, impossible requests."""

    exit_code = 2


class InputNotFoundError(UsageError, FileNotFoundError):
    """A path the user named does not exist."""


class MalformedInputError(UsageError):
    """An input file exists but cannot be parsed or breaks its expected schema."""


class DatasetError(UsageError):
    """A directory given as a dataset is not one, or its manifest is unreadable or unsupported."""


class FormatVersionError(DatasetError):
    """The dataset was written in a format version this dataforge cannot read."""


class ConfigMismatchError(UsageError):
    """An output directory holds a run with another configuration (use ``--overwrite``)."""


class LockedError(UsageError):
    """Another live run holds the output directory's lock."""


class SchemaError(UsageError):
    """Arrays written do not match the declared schema."""


class MissingDependencyError(DataforgeError, ImportError):
    """An optional dependency is not installed; the message names the extra that provides it."""


class UnitFailedError(DataforgeError):
    """A work unit raised; committed units are intact and a rerun resumes."""


class ValidationFailed(DataforgeError):
    """``dataforge validate`` found problems; the report says which file or episode."""

    exit_code = 1


class ReproductionFailed(DataforgeError):
    """``dataforge reproduce`` rebuilt a dataset and some data files differ."""

    exit_code = 1


def missing_dependency(module: str, extra: str, what: str) -> MissingDependencyError:
    """Build the one-line error for an optional dependency that is not installed."""
    return MissingDependencyError(
        f"{what} needs the Python package '{module}', which is not installed: "
        f"pip install 'dataforge[{extra}]'"
    )


class Interrupted(DataforgeError):
    """Ctrl-C (or SIGTERM) stopped a run; committed shards are intact and a rerun resumes."""

    exit_code = 130
