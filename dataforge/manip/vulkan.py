"""Point SAPIEN at a software Vulkan driver before it is imported.

ManiSkill needs Vulkan even for physics alone. On a machine without a GPU, Mesa's lavapipe works
from version 25 on (Debian 12's own 22.x does not): ``scripts/install_vulkan.sh`` extracts Mesa 25
from bookworm-backports into ``<venv>/share/dataforge/vulkan`` without touching the system and
writes an ICD file whose library path is absolute, so no ``LD_LIBRARY_PATH`` is needed (SAPIEN
ships its own Vulkan loader). :func:`ensure_vulkan` sets ``VK_ICD_FILENAMES`` to that file unless
the user already chose a driver.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

ICD_VARS = ("VK_ICD_FILENAMES", "VK_DRIVER_FILES")
OVERRIDE = "DATAFORGE_VULKAN_ICD"
INSTALL_HINT = "make vulkan (or: apt-get install -t bookworm-backports mesa-vulkan-drivers)"


def bundled_icd() -> Path:
    """Where ``scripts/install_vulkan.sh`` puts the lavapipe ICD file for this environment."""
    return Path(sys.prefix) / "share" / "dataforge" / "vulkan" / "lvp_icd.json"


def ensure_vulkan() -> str | None:
    """Choose the Vulkan driver for this process; returns the ICD file used (None: system's).
    Call it before importing SAPIEN, which then uses its bundled Vulkan loader (as wanted)
    after a warning that is silenced here."""
    warnings.filterwarnings("ignore", message="Failed to find system libvulkan")
    for var in ICD_VARS:
        if os.environ.get(var):
            return os.environ[var]
    candidate = os.environ.get(OVERRIDE) or str(bundled_icd())
    if Path(candidate).is_file():
        os.environ["VK_ICD_FILENAMES"] = candidate
        return candidate
    return None
