"""FindingDory: episodes of pick-and-place rearrangements in ProcTHOR houses (experience
collection, the 60 templated tasks, evaluation and scores build on them). See ``generate.py``
for inputs, seeds, outputs and invariants, and docs/findingdory.md.
"""

from dataforge.pipelines.findingdory.config import CollectConfig, EpisodesConfig, TasksConfig
from dataforge.registry import Example, InputLocation, Pipeline, register

PIPELINE = register(
    Pipeline(
        name="findingdory",
        summary="FindingDory episodes (rearrangements, distractors, pick/place spots)",
        config=EpisodesConfig,
        build_job="dataforge.pipelines.findingdory.generate:build_job",
        cli="dataforge.pipelines.findingdory.cli:findingdory",
        command="episodes",
        tools=("evaluate", "score", "baseline", "export"),
        checks="dataforge.pipelines.findingdory.checks",
        extra="procthor",
        inputs=(
            InputLocation(
                "scenes",
                "Scenes: generate:K (K new houses from procthor's generator), a folder of "
                "ProcTHOR house *.json or a .jsonl(.gz) of houses, or habitat:DIR (HSSD scenes "
                "with OVMM objects through habitat-sim; DIR laid out like upstream's data/: "
                "hssd-hab/, objects/). One scene is one work unit.",
                file=None,
                default="generate:1",
            ),
        ),
        tiny=Example(
            "--scenes generate:2 --room-spec kitchen-living-room --episodes 2 --rearrangements 2-3"
        ),
    )
)

COLLECT = register(
    Pipeline(
        name="findingdory-collect",
        summary="FindingDory oracle experience (time-stamped RGB-D, masks, poses, actions, log)",
        config=CollectConfig,
        build_job="dataforge.pipelines.findingdory.collect:build_job",
        extras="dataforge.pipelines.findingdory.collect:extras",
        checks="dataforge.pipelines.findingdory.collect_checks",
        extra="procthor",
        stage_of="findingdory",
        command="collect",
        argument="episodes",
        inputs=(
            InputLocation(
                "episodes", "The FindingDory episodes to play (dataforge findingdory episodes)."
            ),
        ),
        tiny=Example(
            "--resolution 48x64 --limit 1 --video mp4",
            reads=(("episodes", "findingdory"),),
        ),
        # llvmpipe rasterises for the CPU's vector width: edge pixels of masks and depth may
        # differ between CPUs (docs/development.md), so golden tests compare per-frame means
        golden_tolerance={"rgb": 0.5, "depth": 0.5, "instance": 0.5, "semantic": 0.5},
        golden_derived=("videos/*.mp4",),
    )
)

TASKS = register(
    Pipeline(
        name="findingdory-tasks",
        summary="FindingDory tasks (60 templates, goal entities, predicates, valid goal frames)",
        config=TasksConfig,
        build_job="dataforge.pipelines.findingdory.tasks:build_job",
        extras="dataforge.pipelines.findingdory.tasks:extras",
        exports={"hf": "dataforge.pipelines.findingdory.export_hf:hf_export"},
        checks="dataforge.pipelines.findingdory.tasks_checks",
        extra="procthor",
        stage_of="findingdory",
        command="tasks",
        argument="experience",
        inputs=(
            InputLocation(
                "experience", "The collected days to make tasks of (dataforge findingdory collect)."
            ),
        ),
        tiny=Example("", reads=(("experience", "findingdory-collect"),)),
    )
)
