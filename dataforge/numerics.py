"""The numeric code paths dataforge pins, so that its data files do not depend on the CPU.

Two libraries choose their kernels from the CPU at run time, and those kernels round
differently in the last bit (docs/development.md, "Byte-identical on other CPUs"):

- **Intel MKL**, linked into torch's CPU wheels, serves ``torch.sqrt``, ``torch.sin``, ... on
  CPU tensors (``at::vml`` calls ``vsSqrt`` etc. in its high-accuracy mode) and picks a code
  path by CPU vendor and instruction set: on an Intel CPU with AVX-512 its AVX-512 path, on an
  Intel CPU with AVX2 its AVX2 path, on any AMD CPU its *compatible* path. Their float32
  square roots differ in the last bit for about a fifth of all inputs (the compatible path is
  not correctly rounded). ``MKL_CBWR=COMPATIBLE`` (MKL's conditional numerical
  reproducibility) makes every x86-64 CPU take the compatible path. RoboMME's upstream code
  turns yaw angles into quaternions through ``torch.sqrt``, and one float32 bit of a
  quaternion decides how its rejection samplers see a cube (docs/robomme_upstream.md, "CPU-
  dependent layouts"), so the pin decides which scene a seed gives. The released RoboMME data
  hold the compatible path's scenes.
- **OpenBLAS** (inside numpy's and scipy's wheels) picks its kernels by CPU model
  (``Haswell``, ``SkylakeX``, ``Cooperlake``, ``Zen``, ...); their sums of products round
  differently (about 1e-15 in RoboMME's planned joint actions). ``OPENBLAS_CORETYPE=Haswell``
  (AVX2 and FMA, present on both kinds of machine this project runs on) gives every such CPU
  the same kernels.

numpy's own loops are the third such choice (AVX-512 on a CPU that has it, else AVX2): its
``arctan2``, ``arccos``, ``sin`` ... differ in the last bit between the two. Nothing pins them:
RoboMME's upstream layouts go through them too (trimesh's box fit), and the released data were
made with the AVX-512 loops, which a CPU without AVX-512 cannot run. :func:`numpy_avx512` tells
whether this process has them (both kinds of machine this project runs on do).

OpenBLAS reads its variable when the library loads (the first ``import numpy``) and MKL on its
first call, so :func:`pin` runs when the ``dataforge`` package is imported, before either.
Worker processes inherit the environment; Ray workers get it through the runtime env
(``run.executors``). A variable the user has set is left as it is.
"""

from __future__ import annotations

import functools
import os
from collections.abc import MutableMapping
from pathlib import Path

MKL_PIN = ("MKL_CBWR", "COMPATIBLE")
OPENBLAS_PIN = ("OPENBLAS_CORETYPE", "Haswell")
OPENBLAS_NEEDS = frozenset({"avx2", "fma"})  # what the Haswell kernels execute

# float32 inputs whose square root MKL's compatible path rounds one unit in the last place
# above the correctly rounded value, where its AVX2 and AVX-512 paths (and IEEE) do not
# (measured by calling MKL's vsSqrt kernels of torch 2.13.0's MKL 2024.2 one by one)
SQRT_PROBE = (2.125, 2.625, 3.875)
# numpy 1.26's AVX-512 dispatch targets: NPY_DISABLE_CPU_FEATURES with these gives its AVX2 loops
NUMPY_AVX512_FEATURES = (
    "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
)


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags (Linux), empty where they cannot be read."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's model name (Linux), or None."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return None


def pins(flags: frozenset[str] | None = None) -> dict[str, str]:
    """The environment variables :func:`pin` sets (OpenBLAS's only where the CPU runs them)."""
    have = cpu_flags() if flags is None else flags
    out = dict([MKL_PIN])
    if have.issuperset(OPENBLAS_NEEDS):
        out.update([OPENBLAS_PIN])
    return out


def pin(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set the pinned variables that are not set yet; returns the values now in ``environ``."""
    env = os.environ if environ is None else environ
    for name, value in pins().items():
        env.setdefault(name, value)
    return {name: env[name] for name in (MKL_PIN[0], OPENBLAS_PIN[0]) if name in env}


def environment() -> dict[str, str | bool | None]:
    """What a manifest records of the numeric setup: the CPU, the pinned variables and
    whether numpy runs its AVX-512 loops."""
    return {
        "cpu": cpu_model(),
        MKL_PIN[0]: os.environ.get(MKL_PIN[0]),
        OPENBLAS_PIN[0]: os.environ.get(OPENBLAS_PIN[0]),
        "numpy_avx512": numpy_avx512(),
    }


@functools.cache
def torch_sqrt_path() -> str:
    """Which square root ``torch.sqrt`` computes on float32 CPU tensors in this process.

    ``"mkl-compatible"``: MKL's compatible path (what the pin asks for); ``"ieee"``: correctly
    rounded (MKL's AVX2 or AVX-512 path, or a torch without MKL); ``"other"``: neither. The
    answer is fixed at MKL's first call, so it is computed once.
    """
    import numpy as np
    import torch

    x = np.array(SQRT_PROBE, dtype=np.float32)
    got = torch.sqrt(torch.from_numpy(x)).numpy().view(np.int32).astype(np.int64)
    ieee = np.sqrt(x).view(np.int32).astype(np.int64)
    if np.array_equal(got, ieee + 1):
        return "mkl-compatible"
    if np.array_equal(got, ieee):
        return "ieee"
    return "other"


def numpy_avx512() -> bool:
    """Whether numpy runs its AVX-512 (Skylake-X level) loops in this process."""
    try:
        # numpy 2; numpy's stubs do not declare this private table
        from numpy._core._multiarray_umath import (  # type: ignore[attr-defined]
            __cpu_features__ as features,
        )
    except ImportError:
        from numpy.core._multiarray_umath import __cpu_features__ as features  # numpy 1
    return bool(features.get("AVX512_SKX"))
