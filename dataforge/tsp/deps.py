"""One-line errors for the solvers' libraries.

elkai (LKH-3) and scipy are core dependencies of dataforge: when one cannot be imported the
install is broken, and the fix is to reinstall it (no extra provides it). OR-tools, for
``--solver exact``, is the one in the ``ir2r`` extra (:func:`dataforge.errors.missing_dependency`).
"""

from __future__ import annotations

import re
from importlib import metadata

from dataforge.errors import MissingDependencyError

FALLBACK_PINS = {"elkai": "elkai==2.0.1", "scipy": "scipy>=1.11,<2"}  # pyproject.toml's


def broken_core_dependency(module: str, what: str, exc: BaseException) -> MissingDependencyError:
    """``what`` needs ``module``, a core dependency that did not import (``exc``)."""
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return MissingDependencyError(
        f"{what} needs the Python package '{module}', a core dependency of dataforge, which "
        f"cannot be imported ({reason}): the install is broken; reinstall it with "
        f"pip install --force-reinstall '{core_pin(module)}' (or reinstall dataforge)"
    )


def core_pin(module: str) -> str:
    """The requirement dataforge's installed metadata gives for ``module`` (e.g.
    ``elkai==2.0.1``), or pyproject.toml's pin when the metadata cannot be read."""
    try:
        requirements = metadata.requires("dataforge") or []
    except metadata.PackageNotFoundError:
        requirements = []
    for req in requirements:
        name = re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0]
        if ";" not in req and name.lower().replace("_", "-") == module.lower():
            return req.replace(" ", "")
    return FALLBACK_PINS.get(module, module)
