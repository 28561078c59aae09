"""Starting ManiSkill for RoboMME: check the extra, choose the Vulkan driver, make task envs."""

from __future__ import annotations

import gc
import importlib
from typing import Any

from dataforge.errors import DataforgeError, missing_dependency
from dataforge.manip.vulkan import INSTALL_HINT, ensure_vulkan

EXTRA = "robomme"


class VulkanUnavailable(DataforgeError):
    """SAPIEN found no usable Vulkan device."""


def require_sim() -> None:
    """Fail with one line unless ManiSkill, SAPIEN, mplib and torch import (choosing the
    Vulkan driver first, as SAPIEN reads it at import) and torch computes square roots as the
    released layouts need (``layouts.require_release_sqrt``); warns when numpy lacks its
    AVX-512 loops."""
    ensure_vulkan()
    for module in ("torch", "sapien", "mani_skill", "mplib"):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            if exc.name and exc.name.split(".")[0] != module:
                raise
            raise missing_dependency(module, EXTRA, "RoboMME generation") from None
    from dataforge.pipelines.robomme.layouts import require_release_sqrt, warn_without_numpy_avx512

    require_release_sqrt()
    warn_without_numpy_avx512()


_frozen = False
_cpu_renderer: Any = None
_shared: dict[bool, tuple[tuple[str, str, int], Any]] = {}


def _freeze_imports() -> None:
    """Move everything alive now (torch, SAPIEN and ManiSkill's modules) out of the cyclic
    garbage collector's sight, once per process: ManiSkill calls ``gc.collect()`` on every
    scene rebuild (every reset here), which otherwise walks all of them each time."""
    global _frozen
    if not _frozen:
        gc.collect()
        gc.freeze()
        _frozen = True


def _pin_cpu_renderer() -> None:
    """Make SAPIEN's CPU (lavapipe) device the process's render device before any env exists.
    A physics-only env has no renderer, yet building its actors creates render materials;
    without a device chosen each of those costs ~2 ms (measured), with it ~0."""
    global _cpu_renderer
    if _cpu_renderer is None:
        import sapien

        _cpu_renderer = sapien.render.RenderSystem(sapien.Device("cpu"))


def make_env(task: str, difficulty: str, *, render: bool, size: int = 256) -> Any:
    """A single-env CPU ManiSkill env of ``task``: physics only (``render=False``: no renderer,
    no cameras) or with the front and wrist cameras at ``size`` x ``size`` (RGB and depth).
    Both have the same state vector, so pass 2 can replay pass 1's states."""
    ensure_vulkan()
    require_sim()
    import gymnasium as gym

    from dataforge.pipelines.robomme import tasks

    tasks.register_all()
    _pin_cpu_renderer()
    _freeze_imports()
    kwargs: dict[str, Any] = {"difficulty": difficulty, "obs_mode": "state_dict"}
    if not render:
        kwargs["render_backend"] = "none"
    else:
        kwargs["obs_mode"] = "rgb+depth"
        kwargs["sensor_configs"] = {"width": size, "height": size}
    try:
        return gym.make(tasks.env_id(task), **kwargs)
    except RuntimeError as exc:
        if "vulkan" in str(exc).lower() or "physical device" in str(exc).lower():
            raise VulkanUnavailable(
                f"ManiSkill found no usable Vulkan driver ({exc}); install one: {INSTALL_HINT}"
            ) from None
        raise


def shared_env(task: str, difficulty: str, *, render: bool, size: int = 256) -> Any:
    """:func:`make_env`, kept for the next episode of the same task, difficulty and size in this
    process (one physics env and one camera env at most; every reset rebuilds the scene from
    the episode's seed, so nothing carries over).
    They live as long as the worker process."""
    key = (task, difficulty, size if render else 0)
    held = _shared.get(render)
    if held is not None and held[0] == key:
        return held[1]
    if held is not None:
        held[1].close()
    env = make_env(task, difficulty, render=render, size=size)
    _shared[render] = (key, env)
    return env
