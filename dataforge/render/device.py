"""The OpenGL device that renders, chosen by ``DATAFORGE_GL_DEVICE``, and what rendered.

``DATAFORGE_GL_DEVICE`` is ``auto`` (the default: EGL's first device, as glcontext picks it) or
an EGL device index (0, 1, ...: the order of ``eglQueryDevicesEXT``, which lists the GPUs'
devices and Mesa's software device). The generation commands and ``dataforge reproduce`` set it
with ``--gl-device`` before any worker starts: spawned workers inherit it, and Ray workers get it
through the job's runtime env when the driver has it (``run.executors``); else each Ray node's
own setting (the environment its ``ray start`` ran in) holds.

:func:`dataforge.render.renderer.create_context` opens the device :func:`context_kwargs` names,
turns glcontext's "requested device index N, but found M devices" into a one-line
:class:`UsageError` (:func:`out_of_range`) and records what it opened (:func:`opened`):
:func:`describe` gives ``{"vendor", "renderer", "version", "device"}`` (GL_VENDOR, GL_RENDERER,
GL_VERSION and the device asked for). :func:`dataforge.render.renderer.shared_context` notes each
hand-out of the shared context (:func:`used`).

What rendered reaches the manifest through the units: ``run_unit`` takes a :func:`mark` before a
unit and asks :func:`used_since` after it, which names the contexts created or handed out in
between; the shard record carries them and the builder records the distinct ones
(``environment.opengl``). A process that never created a context reports nothing. A unit that
renders only through a renderer kept from an earlier unit of the same process reports nothing
either, but that earlier unit did, and the manifest records distinct contexts, not units.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from dataforge.errors import UsageError

ENV = "DATAFORGE_GL_DEVICE"
AUTO = "auto"
GLCONTEXT_ENV = "GLCONTEXT_DEVICE_INDEX"  # glcontext's own choice, which overrides its argument
_OUT_OF_RANGE = re.compile(r"requested device index (\d+), but found (\d+) devices?")

_described: dict[int, str] = {}  # id(context) -> its description as canonical JSON
_last_use: dict[str, int] = {}  # description -> the use count when it was last handed out
_uses = 0  # contexts created or handed out in this process


def parse_device(value: str | None, source: str = ENV) -> int | None:
    """The EGL device index ``value`` names; None for ``auto`` (or unset / empty). Anything else
    is a one-line :class:`UsageError` naming ``source`` (where given)."""
    text = (value or "").strip()
    if not text or text.lower() == AUTO:
        return None
    if text.isascii() and text.isdigit():
        return int(text)
    what = f"{source} must be" if source else "must be"
    raise UsageError(f"{what} 'auto' or an EGL device index (0, 1, ...), got {value!r}")


def requested_device(environ: Mapping[str, str] | None = None) -> int | None:
    """The device ``DATAFORGE_GL_DEVICE`` asks for (None: auto)."""
    env = os.environ if environ is None else environ
    return parse_device(env.get(ENV))


def device_label(index: int | None) -> int | str:
    """What a description records as the device asked for: the index, or ``"auto"``."""
    return AUTO if index is None else index


def set_device(value: str, source: str = "--gl-device") -> str:
    """Check ``value`` (``--gl-device``) and set ``DATAFORGE_GL_DEVICE`` to it for this process
    and the workers it starts; returns the value set (``auto`` or the index)."""
    label = str(device_label(parse_device(value, source)))
    os.environ[ENV] = label
    return label


def context_kwargs(environ: Mapping[str, str] | None = None) -> dict[str, int]:
    """The keyword arguments that open the requested device with
    ``moderngl.create_standalone_context(backend="egl", ...)``: ``{"device_index": i}``, or none
    for auto. glcontext lets ``GLCONTEXT_DEVICE_INDEX`` override the argument, so another value
    there is refused rather than silently used."""
    env = os.environ if environ is None else environ
    index = requested_device(env)
    if index is None:
        return {}
    theirs = (env.get(GLCONTEXT_ENV) or "").strip()
    if theirs and theirs != str(index):
        raise UsageError(
            f"{ENV}={index} and {GLCONTEXT_ENV}={theirs} ask for different EGL devices: "
            f"unset {GLCONTEXT_ENV}"
        )
    return {"device_index": index}


def out_of_range(exc: BaseException, index: int | None) -> UsageError | None:
    """The one-line error for glcontext's refusal of an EGL device index beyond those it found;
    None when ``exc`` is not that, or when no index was asked for (auto on a machine without
    EGL devices: a missing driver, not bad usage)."""
    m = _OUT_OF_RANGE.search(str(exc))
    if m is None or index is None:
        return None
    found = int(m.group(2))
    if found == 0:
        return None
    valid = "0" if found == 1 else f"0 to {found - 1}"
    return UsageError(
        f"{ENV}={index} (--gl-device) is out of range: EGL finds {found} "
        f"device{'s' if found != 1 else ''} on this machine; set it to auto or {valid}"
    )


def describe(ctx: Any, device: int | str) -> dict[str, Any]:
    """What rendered: the context's GL_VENDOR, GL_RENDERER and GL_VERSION, and the device asked
    for (an index or ``"auto"``)."""
    info = ctx.info
    return {
        "vendor": str(info.get("GL_VENDOR", "")),
        "renderer": str(info.get("GL_RENDERER", "")),
        "version": str(info.get("GL_VERSION", "")),
        "device": device,
    }


def opened(ctx: Any, index: int | None) -> dict[str, Any]:
    """Record a context this process just created on device ``index`` (None: auto); returns its
    description."""
    description = describe(ctx, device_label(index))
    _described[id(ctx)] = json.dumps(description, sort_keys=True)
    used(ctx)
    return description


def used(ctx: Any) -> None:
    """Note that ``ctx`` was handed out to render with."""
    global _uses
    key = _described.get(id(ctx))
    if key is None:  # a context this module did not see created
        key = json.dumps(describe(ctx, device_label(requested_device())), sort_keys=True)
        _described[id(ctx)] = key
    _uses += 1
    _last_use[key] = _uses


def mark() -> int:
    """A point in this process's rendering, for :func:`used_since`."""
    return _uses


def used_since(point: int) -> tuple[dict[str, Any], ...]:
    """The descriptions of the contexts created or handed out since ``point`` (:func:`mark`),
    distinct and sorted; empty when none was."""
    return tuple(json.loads(key) for key, n in sorted(_last_use.items()) if n > point)
