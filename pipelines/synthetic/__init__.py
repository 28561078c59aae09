"""Synthetic pipeline: sphere scenes that exercise the store and run machinery (test and demo).

Not a benchmark. See ``generate.py`` for inputs, seeds, outputs and invariants.
"""

from dataforge.pipelines.synthetic.config import SyntheticConfig
from dataforge.registry import Example, Pipeline, register

PIPELINE = register(
    Pipeline(
        name="synthetic",
        summary="Synthetic sphere scenes (store and run machinery test and demo)",
        config=SyntheticConfig,
        build_job="dataforge.pipelines.synthetic.generate:build_job",
        cli="dataforge.pipelines.synthetic.cli:synthetic",
        checks="dataforge.pipelines.synthetic.checks",
        tiny=Example("--scenes 2 --episodes-per-scene 2 --frames 3 --resolution 48x36"),
    )
)
