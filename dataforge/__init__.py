"""dataforge: generate, curate and verify datasets for benchmarking memory in embodied agents.

The core library (this package) names no benchmark: ``store`` (sharded dataset files, manifest,
validation), ``run`` (work units, seeds, executors, resume, locks), ``viz`` (previews and plots),
``registry`` (the hooks that pipelines register). Benchmarks live in ``dataforge.pipelines``;
command-line commands in ``dataforge.cli``.

Importing this package is cheap: heavy modules (zarr, h5py, ray, simulators) load on use. It
pins the CPU-dependent numeric code paths of MKL and OpenBLAS first (``numerics``: environment
variables read when those libraries load), so data files are the same on every CPU.
"""

from dataforge import numerics

numerics.pin()

from dataforge._version import __version__  # noqa: E402

__all__ = ["__version__"]
