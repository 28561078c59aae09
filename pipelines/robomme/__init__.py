"""RoboMME: demonstrations of 16 memory-manipulation tasks on ManiSkill (CPU).

See ``generate.py`` for inputs, seeds, outputs and invariants; the tasks are ManiSkill envs in
``tasks/`` (importing them imports ManiSkill), the tabletop machinery in ``dataforge/manip``.
"""

from dataforge.pipelines.robomme.config import RobommeConfig
from dataforge.registry import Example, InputLocation, Pipeline, register

PIPELINE = register(
    Pipeline(
        name="robomme",
        summary="RoboMME manipulation demos (ManiSkill, keyframe waypoints, noise and recovery)",
        config=RobommeConfig,
        build_job="dataforge.pipelines.robomme.generate:build_job",
        extras="dataforge.pipelines.robomme.generate:task_files",
        viewer="dataforge.pipelines.robomme.view:view",
        cli="dataforge.pipelines.robomme.cli:robomme",
        tools=("tasks",),
        checks="dataforge.pipelines.robomme.checks",
        extra="robomme",
        inputs=(
            InputLocation(
                "metadata-dir",
                "RoboMME's env_metadata/<split>/ folder: generate exactly its (task, seed, "
                "difficulty) episodes, the first --episodes-per-task of each task.",
            ),
        ),
        tiny=Example("--tasks PickXtimes --episodes-per-task 2 --size 32 --format hdf5"),
        # lavapipe's rasteriser rounds differently with other CPU vector widths (measured: up to
        # 2 intensity levels on < 0.1% of pixels, 1 mm of depth; physics is bit-identical), so
        # golden tests compare the camera arrays' per-frame means (docs/development.md)
        golden_tolerance={
            "front_rgb": 0.5,
            "wrist_rgb": 0.5,
            "front_depth": 0.5,
            "wrist_depth": 0.5,
        },
        golden_derived=("record_dataset_*.h5",),
    )
)
