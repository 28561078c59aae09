"""Forcing the CPU-dependent code paths that ``dataforge.numerics`` pins, to test the pins on
any machine (docs/development.md, "Byte-identical on other CPUs")."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dataforge import numerics

SHIM_SOURCE = Path(__file__).parent / "mkl_intel_path.c"


def mkl_intel_shim(directory: Path) -> Path:
    """``tests/mkl_intel_path.c`` compiled into ``directory``: preloaded, it makes Intel MKL
    take the code path it takes on an Intel CPU (its AVX-512 one on an AVX-512 CPU, with
    ``MKL_CBWR=AUTO``). Skips without a C compiler or without AVX-512 (both kinds of machine
    this project runs on have them), failing instead under ``DATAFORGE_REQUIRE_SIM=1``."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    reason = None
    if compiler is None:
        reason = "needs a C compiler (cc) to build the MKL path shim"
    elif "avx512f" not in numerics.cpu_flags():
        reason = "needs an AVX-512 CPU: MKL's AVX-512 path is the one recorded"
    if reason is not None:
        if os.environ.get("DATAFORGE_REQUIRE_SIM") == "1":
            raise RuntimeError(f"DATAFORGE_REQUIRE_SIM=1 but {reason}")
        pytest.skip(reason)
    out = directory / "libmkl_intel_path.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", "-o", str(out), str(SHIM_SOURCE)], check=True
    )
    return out


def intel_mkl_env(shim: Path, **extra: str) -> dict[str, str]:
    """The environment of a process on MKL's Intel AVX-512 path: the shim preloaded and the
    MKL pin lifted (``MKL_CBWR=AUTO``); ``extra`` overrides."""
    return {**os.environ, "LD_PRELOAD": str(shim), "MKL_CBWR": "AUTO", **extra}
