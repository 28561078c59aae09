"""FindingDory: episodes of pick-and-place rearrangements in ProcTHOR houses (experience
collection, the 60 templated tasks, evaluation and scores build on them). See ``generate.py``
for inputs, seeds, outputs and invariants, and docs/findingdory.md.
"""

from dataforge.pipelines.findingdory.config import EpisodesConfig
from dataforge.registry import Example, InputLocation, Pipeline, register

PIPELINE = register(
    Pipeline(
        name="findingdory",
        summary="FindingDory episodes (rearrangements, distractors, pick/place spots)",
        config=EpisodesConfig,
        build_job="dataforge.pipelines.findingdory.generate:build_job",
        cli="dataforge.pipelines.findingdory.cli:findingdory",
        checks="dataforge.pipelines.findingdory.checks",
        extra="procthor",
        inputs=(
            InputLocation(
                "scenes",
                "Scenes: generate:K (K new houses from procthor's generator), a folder of "
                "ProcTHOR house *.json or a .jsonl(.gz) of houses. One scene is one work unit.",
                file=None,
                default="generate:1",
            ),
        ),
        tiny=Example(
            "episodes --scenes generate:2 --room-spec kitchen-living-room --episodes 2 "
            "--rearrangements 2-3"
        ),
    )
)
