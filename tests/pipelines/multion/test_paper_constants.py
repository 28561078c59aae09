"""The MultiON paper's constants, pinned at what a run gets without flags (issue 35).

Every value is read where a default run takes it: the config the click command builds from its
defaults (``Pipeline.job`` is intercepted, so nothing runs), then the objects ``generate`` and
``oracle`` derive from that config. Sources: ``../shared/papers/multion.txt`` (§3 the task, §5.1
the datasets, §5.3 the step limit), ``../shared/specs/multion.md`` and, where the paper is
silent, the challenge's config as docs/multion.md records it.
"""

from __future__ import annotations

import click
import pytest
from clihelpers import cli_config

from dataforge.inputs import Inputs
from dataforge.pipelines.multion import agent
from dataforge.pipelines.multion.cli import multion
from dataforge.pipelines.multion.cli import score as score_command
from dataforge.pipelines.multion.config import MultionConfig
from dataforge.pipelines.multion.cylinders import CATEGORIES, cylinders
from dataforge.pipelines.multion.generate import resolve_cylinders, rules_of
from dataforge.pipelines.multion.sampling import CATEGORY_COUNT
from dataforge.pipelines.multion.score import ScoreSettings


def generate_defaults(*args: str) -> MultionConfig:
    """The generation config of ``dataforge multion generate`` (+ ``args``), with the goal
    meshes resolved as ``build_job`` resolves them without ``--data-dir``."""
    cfg = cli_config(multion.commands["generate"], *args)
    assert isinstance(cfg, MultionConfig)
    return resolve_cylinders(cfg, Inputs())


def option(command: click.Command, name: str) -> click.Parameter:
    return next(p for p in command.params if p.name == name)


def test_leg_geodesic_bounds_are_the_papers_2_to_20_m() -> None:
    rules = rules_of(generate_defaults())  # what the sampler is given
    assert (rules.min_geodesic, rules.max_geodesic) == (2.0, 20.0), (
        "paper §5.1: the geodesic from the start to the first goal and between successive "
        "goals is between 2 m and 20 m"
    )


def test_m_defaults_to_3_on_and_the_papers_1_2_3_on_are_accepted() -> None:
    cfg = generate_defaults()
    assert cfg.m == 3 and rules_of(cfg).m == 3, "paper §5: the hardest task studied is 3-ON"
    m = option(multion.commands["generate"], "m").type
    assert isinstance(m, click.IntRange) and m.min == 1 and m.max is not None and m.max >= 3, (
        "paper §5.1: datasets for 1-ON, 2-ON and 3-ON"
    )
    for k in (1, 2, 3):
        assert rules_of(generate_defaults("--m", str(k))).m == k


def test_episodes_per_scene_are_the_papers_counts_per_split() -> None:
    # paper §5.1 and Fig. 5: 50,000 episodes per scene for train, 12,500 for val and test
    assert generate_defaults().split == "train"
    assert generate_defaults().episodes == 50_000, "paper §5.1: 50,000 train episodes per scene"
    for split in ("val", "test"):
        assert generate_defaults("--split", split).episodes == 12_500, f"paper §5.1 ({split})"


def test_agent_body_radius_is_the_papers_0_1_m() -> None:
    cfg = generate_defaults()
    assert cfg.agent_radius == 0.1, "paper §3: a cylindrical body of radius 0.1 m"
    assert rules_of(cfg).agent_radius == 0.1


def test_goal_cylinders_are_the_challenge_meshes_size() -> None:
    cfg = generate_defaults()
    # spec notes: the paper's text says 0.75 m / 0.05 m, the shipped meshes span
    # +-0.1 x +-0.75 x +-0.1 m (1.5 m tall, 0.1 m radius): render and collide with those
    assert cfg.cylinders == "built-in"
    assert (cfg.cylinder_radius, cfg.cylinder_height) == (0.1, 1.5), "spec: mesh size"
    assert rules_of(cfg).cylinder_radius == 0.1
    for name, mesh in cylinders(None).items():
        assert mesh.radius == pytest.approx(0.1) and mesh.height == pytest.approx(1.5), name


def test_eight_goal_colours_with_the_released_category_ids() -> None:
    # paper §3: m goals drawn without replacement from 8 coloured cylinders; spec notes: the
    # released minival's category_to_task_category_id (pink is the paper's "magenta")
    assert CATEGORIES == {
        "cylinder_red": 0,
        "cylinder_green": 1,
        "cylinder_blue": 2,
        "cylinder_yellow": 3,
        "cylinder_white": 4,
        "cylinder_pink": 5,
        "cylinder_black": 6,
        "cylinder_cyan": 7,
    }, "spec notes: category ids of 3_ON_minival_val.json.gz"
    assert CATEGORY_COUNT == 8, "paper §3: a set of 8 cylinder objects"


def test_the_four_actions_in_the_challenge_order() -> None:
    # paper §3: {FORWARD, TURN-LEFT, TURN-RIGHT, FOUND}; ids as the challenge (docs/multion.md)
    assert agent.ACTIONS == ("FOUND", "MOVE_FORWARD", "TURN_LEFT", "TURN_RIGHT")
    assert (agent.FOUND, agent.MOVE_FORWARD, agent.TURN_LEFT, agent.TURN_RIGHT) == (0, 1, 2, 3)


def test_oracle_defaults_are_the_papers_and_the_challenges() -> None:
    cfg = cli_config(multion.commands["oracle"], "episodes-dir")
    assert cfg.forward_step == 0.25, "paper §3: FORWARD moves forward by 0.25 m"
    assert cfg.turn_angle == 30.0, "paper §3: turns are by 30 degrees"
    assert cfg.max_steps == 2500, "paper §5.3 / Table 2: maximum 2,500 steps"
    assert cfg.success_distance == 1.5, "spec notes: the challenge config's 1.5 m"
    assert cfg.resolution == (256, 256), "spec notes: RGB 256x256x3 and depth 256x256x1"
    assert cfg.hfov == 79.0, "spec notes: 79 degree horizontal FOV (paper §4: 79 degrees)"
    assert cfg.camera_height == 0.88, "docs/multion.md: the challenge config's sensor height"
    # the registration's command is this one (the oracle is a stage of multion)
    from dataforge.registry import get_pipeline

    oracle = get_pipeline("multion-oracle")
    assert oracle is not None and oracle.generation_command() is multion.commands["oracle"]


def test_score_defaults_are_the_oracles() -> None:
    params = {p.name: p.default for p in score_command.params}
    expected = {
        "success_distance": 1.5,
        "max_steps": 2500,
        "forward_step": 0.25,
        "turn_angle": 30.0,
    }
    # paper §3 (0.25 m, 30 degrees), §5.3 (2,500 steps); spec notes (1.5 m success distance)
    assert {k: params[k] for k in expected} == expected
    assert ScoreSettings().to_dict() == expected
