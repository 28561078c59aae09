"""dataforge.numerics: the MKL and OpenBLAS code paths pinned when dataforge is imported
(issue 35; docs/development.md, "Byte-identical on other CPUs")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import ray_runtime_env_vars, write_small
from numericshelpers import intel_mkl_env, mkl_intel_shim

from dataforge import numerics
from dataforge.store.manifest import read_manifest

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14 96-Core Processor
flags\t\t: fpu sse2 avx avx2 fma avx512f avx512_bf16
"""


def test_cpu_flags_and_model_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(CPUINFO)
    assert numerics.cpu_flags(info) == {
        "fpu",
        "sse2",
        "avx",
        "avx2",
        "fma",
        "avx512f",
        "avx512_bf16",
    }
    assert numerics.cpu_model(info) == "AMD EPYC 9R14 96-Core Processor"
    assert numerics.cpu_flags(tmp_path / "missing") == frozenset()
    assert numerics.cpu_model(tmp_path / "missing") is None


def test_pins_name_openblas_only_where_the_cpu_runs_its_kernels() -> None:
    assert numerics.pins(frozenset({"avx2", "fma"})) == {
        "MKL_CBWR": "COMPATIBLE",
        "OPENBLAS_CORETYPE": "Haswell",
    }
    # the Haswell kernels execute AVX2 and FMA instructions: without both, OpenBLAS chooses
    assert numerics.pins(frozenset({"avx2"})) == {"MKL_CBWR": "COMPATIBLE"}
    assert numerics.pins(frozenset()) == {"MKL_CBWR": "COMPATIBLE"}


def test_pin_sets_what_is_unset_and_keeps_the_users_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numerics, "cpu_flags", lambda: frozenset({"avx2", "fma"}))
    env: dict[str, str] = {}
    assert numerics.pin(env) == {"MKL_CBWR": "COMPATIBLE", "OPENBLAS_CORETYPE": "Haswell"}
    assert env == {"MKL_CBWR": "COMPATIBLE", "OPENBLAS_CORETYPE": "Haswell"}
    mine = {"MKL_CBWR": "AVX2", "PATH": "/bin"}
    assert numerics.pin(mine) == {"MKL_CBWR": "AVX2", "OPENBLAS_CORETYPE": "Haswell"}
    assert mine["MKL_CBWR"] == "AVX2" and mine["PATH"] == "/bin"


def _openblas_core() -> str:
    """The kernels numpy's OpenBLAS runs in this process."""
    import ctypes
    import glob

    libs = Path(np.__file__).parent.parent / "numpy.libs"
    lib = ctypes.CDLL(glob.glob(str(libs / "libopenblas*"))[0])
    lib.openblas_get_corename64_.restype = ctypes.c_char_p
    return lib.openblas_get_corename64_().decode()


def test_this_test_process_runs_the_pinned_openblas_kernels() -> None:
    """pytest loads dataforge.numerics as a plugin (pyproject.toml) before zarr's plugin loads
    numpy, so in-process tests run the pinned kernels too."""
    if "OPENBLAS_CORETYPE" in numerics.pins():
        assert _openblas_core().lower() == "haswell"


@pytest.mark.slow
def test_importing_dataforge_pins_before_numpy_loads() -> None:
    """In a fresh process: the variables are set by ``import dataforge`` (a user's value
    kept), and OpenBLAS, loaded afterwards by numpy, runs the pinned kernels."""
    code = (
        "import os, dataforge, numpy, ctypes, glob\n"
        "lib = ctypes.CDLL(glob.glob(os.path.join(os.path.dirname(numpy.__file__),"
        " '..', 'numpy.libs', 'libopenblas*'))[0])\n"
        "f = lib.openblas_get_corename64_\n"
        "f.restype = ctypes.c_char_p\n"
        "print(os.environ.get('MKL_CBWR'), os.environ.get('OPENBLAS_CORETYPE'), f().decode())\n"
    )
    env = {
        k: v
        for k, v in __import__("os").environ.items()
        if k not in ("MKL_CBWR", "OPENBLAS_CORETYPE")
    }
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    mkl, coretype, core = out.stdout.split()
    assert mkl == "COMPATIBLE"
    if {"avx2", "fma"} <= numerics.cpu_flags():
        assert (coretype, core.lower()) == ("Haswell", "haswell")
    env["MKL_CBWR"] = "AVX2"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split()[0] == "AVX2"


def test_torch_sqrt_takes_mkls_compatible_path_here() -> None:
    """This test process imported dataforge before torch ran: on any x86-64 CPU, torch's
    float32 square root is MKL's compatible path, one unit in the last place above the
    correctly rounded root for the probe inputs."""
    torch = pytest.importorskip("torch")
    assert numerics.torch_sqrt_path() == "mkl-compatible"
    x = np.array(numerics.SQRT_PROBE, dtype=np.float32)
    got = torch.sqrt(torch.from_numpy(x)).numpy()
    assert (got.view(np.int32) - np.sqrt(x).view(np.int32)).tolist() == [1, 1, 1]


@pytest.mark.slow
def test_torch_sqrt_on_mkls_intel_path_is_correctly_rounded(tmp_path: Path) -> None:
    """Forced onto the path an Intel AVX-512 CPU takes, the same probe gives the correctly
    rounded roots, and ``torch_sqrt_path`` says so: the pin is what makes the difference."""
    pytest.importorskip("torch")
    shim = mkl_intel_shim(tmp_path)
    code = "from dataforge import numerics; print(numerics.torch_sqrt_path())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=intel_mkl_env(shim), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ieee"
    pinned = intel_mkl_env(shim, MKL_CBWR="COMPATIBLE")
    out = subprocess.run([sys.executable, "-c", code], env=pinned, capture_output=True, text=True)
    assert out.stdout.strip() == "mkl-compatible"


def test_manifest_records_the_cpu_and_the_pins(tmp_path: Path) -> None:
    root = write_small(tmp_path / "ds", "zarr")
    numerics_env = read_manifest(root).environment["numerics"]
    assert numerics_env == json.loads(json.dumps(numerics.environment()))
    assert numerics_env["MKL_CBWR"] == "COMPATIBLE"


@pytest.mark.slow
def test_numpy_avx512_follows_numpys_dispatch() -> None:
    code = "from dataforge import numerics; print(numerics.numpy_avx512())"
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    skx = {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}  # numpy's AVX512_SKX
    assert plain.stdout.strip() == str(skx <= numerics.cpu_flags())
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": numerics.NUMPY_AVX512_FEATURES}
    avx2 = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert avx2.stdout.strip() == "False"


def test_robomme_warns_in_one_line_without_numpys_avx512(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataforge.pipelines.robomme import layouts

    monkeypatch.setattr(numerics, "numpy_avx512", lambda: False)
    with pytest.warns(UserWarning, match=r"27 of the 3,200 released RoboMME seeds") as caught:
        layouts.warn_without_numpy_avx512()
    assert "\n" not in str(caught[0].message)
    monkeypatch.setattr(numerics, "numpy_avx512", lambda: True)
    layouts.warn_without_numpy_avx512()  # no warning (pytest fails on none: checked above)


def test_ray_workers_get_the_pins_in_their_runtime_env() -> None:
    """A Ray worker may load numpy before it imports dataforge: the job's runtime env carries
    the pinned values (this process's)."""
    pytest.importorskip("ray")
    env = ray_runtime_env_vars()
    assert env["MKL_CBWR"] == os.environ["MKL_CBWR"] == "COMPATIBLE"
    for name, value in numerics.pins().items():
        assert env[name] == os.environ[name] == value
