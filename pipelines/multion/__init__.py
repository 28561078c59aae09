"""MultiON: m-ON episodes in ProcTHOR houses (or Habitat scenes) in the challenge's episode
format, oracle trajectories with egocentric observations, and the paper's metrics. See
``generate.py`` and ``oracle.py`` for inputs, seeds, outputs and invariants, and docs/multion.md.
"""

from dataforge.pipelines.multion.config import MultionConfig, OracleConfig
from dataforge.registry import Example, InputLocation, Pipeline, register

PIPELINE = register(
    Pipeline(
        name="multion",
        summary="MultiON m-ON episodes (challenge format: start, ordered goal cylinders)",
        config=MultionConfig,
        build_job="dataforge.pipelines.multion.generate:build_job",
        extras="dataforge.pipelines.multion.generate:extras",
        cli="dataforge.pipelines.multion.cli:multion",
        tools=("score",),
        checks="dataforge.pipelines.multion.checks",
        extra="procthor",
        inputs=(
            InputLocation(
                "scenes",
                "Scenes: generate:K (K new houses from procthor's generator), a folder of "
                "ProcTHOR house *.json, a .jsonl(.gz) of houses, or habitat:SCENES_DIR "
                "(<scene>.glb + <scene>.navmesh, e.g. Matterport3D; needs habitat-sim). One "
                "scene is one work unit.",
                file=None,
                default="generate:1",
            ),
            InputLocation(
                "data-dir",
                "Where multion/objects/cylinder_<colour>.glb are (the challenge's goal meshes, "
                "read with trimesh); default: cylinders built from the same facts.",
            ),
        ),
        tiny=Example(
            "--m 2 --split val --episodes-per-scene 40 --scenes generate:2 --room-spec kitchen"
        ),
    )
)

ORACLE = register(
    Pipeline(
        name="multion-oracle",
        summary="MultiON oracle trajectories (actions, poses, egocentric RGB-D and semantics)",
        config=OracleConfig,
        build_job="dataforge.pipelines.multion.oracle:build_job",
        extras="dataforge.pipelines.multion.oracle:extras",
        checks="dataforge.pipelines.multion.oracle_checks",
        extra="procthor",
        stage_of="multion",
        command="oracle",
        argument="episodes",
        inputs=(
            InputLocation(
                "episodes", "The MultiON dataset to follow (dataforge multion generate)."
            ),
            InputLocation(
                "data-dir",
                "Where multion/objects/cylinder_<colour>.glb are, to render the challenge's own "
                "goal meshes; default: cylinders built from the same facts.",
            ),
        ),
        tiny=Example(
            "--render rgb,depth,semantic --resolution 64x64 --limit 2",
            reads=(("episodes", "multion"),),
        ),
        # llvmpipe rasterises for the CPU's vector width: with SSE4.1 only, a few edge pixels of
        # the semantic mask (0.02%) and 1 mm of depth differed (docs/development.md), so golden
        # tests compare the frames' per-frame means
        golden_tolerance={"rgb": 0.5, "depth": 0.5, "semantic": 0.5},
    )
)
