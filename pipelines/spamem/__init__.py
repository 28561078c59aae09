"""SpaMEM: LLM- or heuristic-planned spawn / place / remove sequences in ProcTHOR houses,
captured from 16 views per state. See ``generate.py`` for inputs, seeds, outputs and
invariants, and docs/spamem.md.
"""

from dataforge.pipelines.spamem.config import SpamemConfig, TasksConfig
from dataforge.registry import Example, InputLocation, Pipeline, register

PIPELINE = register(
    Pipeline(
        name="spamem",
        summary="SpaMEM interaction sequences (16-view RGB-D, masks, world graphs)",
        config=SpamemConfig,
        build_job="dataforge.pipelines.spamem.generate:build_job",
        cli="dataforge.pipelines.spamem.cli:spamem",
        tools=("evaluate", "score", "baseline"),
        checks="dataforge.pipelines.spamem.checks",
        extra="procthor",
        inputs=(
            InputLocation(
                "house-source",
                "Houses: 'generate' (default: procthor's generator, as 'dataforge houses "
                "generate'), a folder of ProcTHOR house *.json, or a .jsonl(.gz) of houses "
                "(ProcTHOR-10K's format, one per line).",
                file=None,
            ),
        ),
        tiny=Example(
            "--houses 2 --room-spec kitchen --sequences-per-house 2 --steps 2 "
            "--views-per-step 4 --resolution 64x48"
        ),
        # llvmpipe JIT-compiles its rasteriser for the CPU: made for SSE4.1 only, 1 colour
        # level and 1 mm of depth differ at single pixels (frame means within 3e-4; masks are
        # identical), so golden tests compare the images' per-frame means (docs/development.md)
        golden_tolerance={"rgb": 0.05, "depth": 0.05},
    )
)

TASKS = register(
    Pipeline(
        name="spamem-tasks",
        summary="SpaMEM question sets (L1-L3, short/long, RGB/RGB-D) with computed answers",
        config=TasksConfig,
        build_job="dataforge.pipelines.spamem.tasks:build_job",
        extras="dataforge.pipelines.spamem.tasks:question_files",
        exports={"hf": "dataforge.pipelines.spamem.export_hf:hf_export"},
        checks="dataforge.pipelines.spamem.tasks_checks",
        extra="procthor",
        stage_of="spamem",
        command="tasks",
        argument="sequences",
        inputs=(
            InputLocation(
                "sequences", "The SpaMEM sequences dataset to question (dataforge spamem generate)."
            ),
        ),
        tiny=Example("", reads=(("sequences", "spamem"),)),
    )
)
