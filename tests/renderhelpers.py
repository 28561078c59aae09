"""Test helper for tests that render: an EGL OpenGL context (libEGL + Mesa) must be there.

Rendering tests skip where no EGL context can be created, except with
``DATAFORGE_REQUIRE_SIM=1`` (set by ``make test``): then a missing EGL is an error, so CI cannot
silently skip them (as ``dfhelpers.needs_maniskill`` does for ManiSkill).
"""

from __future__ import annotations

import functools
import os
from typing import Any


@functools.cache
def egl_problem() -> str | None:
    """Why no EGL context can be created in this process (None: it can). Creating one is what
    every renderer of this process does first, and the context is kept for them."""
    from dataforge.errors import MissingDependencyError
    from dataforge.render import shared_context

    try:
        shared_context()
    except MissingDependencyError as exc:
        return f"no EGL OpenGL context on this machine: {exc}"
    return None


def needs_egl() -> Any:
    """A skip mark for tests that render on EGL; with ``DATAFORGE_REQUIRE_SIM=1`` a missing EGL
    raises instead of skipping. In a fixture: ``mark = needs_egl(); if mark.args[0]:
    pytest.skip(mark.kwargs["reason"])``."""
    import pytest

    reason = egl_problem()
    if reason and os.environ.get("DATAFORGE_REQUIRE_SIM") == "1":
        raise RuntimeError(f"DATAFORGE_REQUIRE_SIM=1 but rendering cannot run: {reason}")
    return pytest.mark.skipif(reason is not None, reason=reason or "")
