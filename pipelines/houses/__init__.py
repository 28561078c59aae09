"""Houses: new ProcTHOR houses from procthor's generator, with the embedded world as simulator.

Not a benchmark: the houses that SpaMEM, MultiON and FindingDory start from. See
``generate.py`` for inputs, seeds, outputs and invariants; the generator adapter is
``dataforge/world/procgen.py``.
"""

from dataforge.pipelines.houses.config import HousesConfig
from dataforge.registry import Example, Pipeline, register

PIPELINE = register(
    Pipeline(
        name="houses",
        summary="ProcTHOR houses (procthor's generator on the embedded world)",
        config=HousesConfig,
        build_job="dataforge.pipelines.houses.generate:build_job",
        extras="dataforge.pipelines.houses.generate:house_files",
        cli="dataforge.pipelines.houses.cli:houses",
        tools=("assets", "show"),
        checks="dataforge.pipelines.houses.checks",
        extra="procthor",
        tiny=Example("--count 2 --room-spec kitchen"),
    )
)
