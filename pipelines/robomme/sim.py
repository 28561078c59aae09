"""Starting ManiSkill for RoboMME: check the extra, choose the Vulkan driver, make task envs."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from dataforge.errors import DataforgeError, missing_dependency
from dataforge.manip.vulkan import INSTALL_HINT, ensure_vulkan

EXTRA = "robomme"


class VulkanUnavailable(DataforgeError):
    """SAPIEN found no usable Vulkan device."""


def require_sim() -> None:
    """Fail with one line unless ManiSkill, SAPIEN, mplib and torch import."""
    # SAPIEN falls back to its bundled Vulkan loader (what we want) with a UserWarning.
    warnings.filterwarnings("ignore", message="Failed to find system libvulkan")
    for module in ("torch", "sapien", "mani_skill", "mplib"):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            if exc.name and exc.name.split(".")[0] != module:
                raise
            raise missing_dependency(module, EXTRA, "RoboMME generation") from None


def make_env(task: str, difficulty: str, *, render: bool, size: int = 256) -> Any:
    """A single-env CPU ManiSkill env of ``task``: physics only (``render=False``) or with the
    front and wrist cameras at ``size`` x ``size`` (RGB and depth)."""
    ensure_vulkan()
    require_sim()
    import gymnasium as gym

    from dataforge.pipelines.robomme import tasks

    tasks.register_all()
    kwargs: dict[str, Any] = {"difficulty": difficulty, "obs_mode": "state_dict"}
    if render:
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
