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


# ------------------------------------------------------------- a tiny job that renders (or not)

GL_SIZE = (16, 12)  # width, height of the tiny job's frames


def _gl_schema() -> Any:
    from dataforge.store import ArraySpec, Schema

    w, h = GL_SIZE
    return Schema({"rgb": ArraySpec("uint8", (None, h, w, 3))})


def render_unit(unit: Any, rng: Any) -> Any:
    """A unit that renders one frame of a box (in the worker that runs it)."""
    from dataforge.render import Renderer, Scene, box_mesh, look_at_pose
    from dataforge.store import Episode

    with Renderer(*GL_SIZE, 60.0) as r:
        r.set_scene(Scene([box_mesh((0.0, 0.5, 3.0), (1.0, 1.0, 1.0), color=(200, 40, 40))]))
        frame = r.render(look_at_pose((0.0, 1.0, 0.0), (0.0, 0.5, 3.0)))
    yield Episode(f"{unit.id}/0", {"rgb": frame.rgb[None]}, {"unit": unit.id})


def plain_unit(unit: Any, rng: Any) -> Any:
    """A unit that renders nothing."""
    import numpy as np

    from dataforge.store import Episode

    w, h = GL_SIZE
    rgb = rng.integers(0, 255, size=(1, h, w, 3), dtype=np.uint8)
    yield Episode(f"{unit.id}/0", {"rgb": rgb}, {"unit": unit.id})


def gl_job(render: bool, units: int = 2) -> Any:
    """A two-unit job whose units render a frame each (``render``) or make one up."""
    from dataforge.run import Job, WorkUnit

    return Job(
        pipeline="test-gl",
        name="gl",
        config={"render": render},
        seed=5,
        format="zarr",
        schema=_gl_schema(),
        units=tuple(WorkUnit(f"u{i}", {}) for i in range(units)),
        produce=render_unit if render else plain_unit,
    )


@functools.cache
def gl_config_class() -> Any:
    """A pipeline config for :func:`gl_job` (``render``), for a test pipeline's registration."""
    import dataclasses

    from dataforge.config import PipelineConfig

    return dataclasses.make_dataclass(
        "GLConfig", [("render", bool, True)], bases=(PipelineConfig,), frozen=True
    )


def build_gl_job(config: Any, *, seed: int, fmt: str, inputs: Any) -> Any:
    """The test pipeline's job builder (``renderhelpers:build_gl_job``)."""
    return gl_job(render=config.render)
