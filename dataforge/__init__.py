"""dataforge: generate, curate and verify datasets for benchmarking memory in embodied agents.

The core library (this package) names no benchmark: ``store`` (sharded dataset files, manifest,
validation), ``run`` (work units, seeds, executors, resume, locks), ``viz`` (previews and plots),
``registry`` (the hooks that pipelines register). Benchmarks live in ``dataforge.pipelines``;
command-line commands in ``dataforge.cli``.

Importing this package is cheap: heavy modules (zarr, h5py, ray, simulators) load on use.
"""

from dataforge._version import __version__

__all__ = ["__version__"]
