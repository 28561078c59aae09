"""The FindingDory paper's constants, pinned at what a run gets without flags (issue 35).

Values are read where a default run takes them: the configs that ``dataforge findingdory
episodes``, ``collect`` and ``tasks`` build from their defaults (``Pipeline.job`` is
intercepted, so nothing runs), the clock ``collect`` builds from its config, the templates and
predicate thresholds ``tasks`` and ``score`` use, and the defaults of ``evaluate``. Sources:
``../shared/papers/findingdory.txt`` (§3, appendix B.1-B.3 and the low-level policy appendix),
``../shared/specs/findingdory.md`` and upstream's code as docs/findingdory_upstream.md records
it (the spec: where upstream and the paper differ, the code wins).
"""

from __future__ import annotations

from collections import Counter

from clihelpers import cli_config

from dataforge.pipelines.findingdory import metrics
from dataforge.pipelines.findingdory.cli import findingdory
from dataforge.pipelines.findingdory.config import CollectConfig, EpisodesConfig, TasksConfig
from dataforge.pipelines.findingdory.habitat_scene import stretch_agent
from dataforge.pipelines.findingdory.log import Clock
from dataforge.pipelines.findingdory.templates import ATTRIBUTES, load_templates


def episodes_defaults() -> EpisodesConfig:
    cfg = cli_config(findingdory.commands["episodes"])
    assert isinstance(cfg, EpisodesConfig)
    return cfg


def collect_defaults() -> CollectConfig:
    cfg = cli_config(findingdory.commands["collect"], "episodes-dir")
    assert isinstance(cfg, CollectConfig)
    return cfg


def test_2_to_11_rearrangements_per_episode() -> None:
    assert episodes_defaults().rearrangements == (2, 11), (
        "paper §3 / B.2: 2 to 11 object pick-and-place interactions"
    )


def test_episode_creation_defaults() -> None:
    cfg = episodes_defaults()
    assert cfg.split == "val", "paper: attribute tasks are built for the val split only"
    assert cfg.agent_radius == 0.25, "paper (low-level policy appendix) / spec: Stretch base 0.25 m"
    assert cfg.min_coverage == 0.001, "paper B.3: the mask covers at least 0.1 % of the pixels"
    assert cfg.walk_away_m == 3.0, "paper B.2: the agent ends 3 m away from the last interaction"
    assert cfg.min_start_distance == 1.5, "upstream config/task/findingdory.yaml (fact sheet §4)"


def test_the_stretch_head_camera() -> None:
    # upstream config/agents/stretch.yaml (fact sheet §5, §7 row 1): portrait 480 x 640, HFOV
    # 43 degrees, 1.31 m up, tilted 30 degrees down; paper appendix: sensor at 1.31 m, HFOV 43
    for cam in (episodes_defaults().camera, collect_defaults().camera):
        assert (cam.width, cam.height) == (480, 640), "upstream: height 640 x width 480"
        assert cam.hfov_deg == 43.0 and cam.height_m == 1.31 and cam.tilt_deg == 30.0
    assert collect_defaults().resolution == (480, 640)


def test_the_stretch_navmesh_agent() -> None:
    agent = stretch_agent(episodes_defaults().agent_radius)  # what habitat_scene.open_scene builds
    assert (agent.radius, agent.height) == (0.25, 1.41), (
        "paper (low-level policy appendix) / spec: Stretch 1.41 m tall, base radius 0.25 m"
    )
    # upstream config/agents/stretch.yaml (docs/habitat_world.md §2 "Navmesh")
    assert (agent.max_climb, agent.max_slope) == (0.01, 5.0)


def test_discrete_actions_and_the_frame_cap() -> None:
    cfg = collect_defaults()
    # upstream config/benchmark/findingdory*.yaml (fact sheet §5): forward 0.25 m, turns 10 deg
    assert cfg.forward_m == 0.25 and cfg.turn_deg == 10.0
    # upstream: num_steps_daily 4,000 is also the collection's hard cap (fact sheet §3, §7 row 4)
    assert cfg.max_frames == 4000


def test_the_clock_runs_from_06_00_to_22_00_over_4000_frames() -> None:
    cfg = collect_defaults()
    # spec notes: the authors' code maps step n to 06:00 + n / 4000 x 16 h (fact sheet §3)
    assert (cfg.day_start, cfg.day_end, cfg.day_steps) == ("06:00", "22:00", 4000)
    clock = Clock(cfg.day_start, cfg.day_end, cfg.day_steps)  # as collect.py builds it
    assert clock(0) == "06:00" and clock(4000) == "22:00"
    assert clock(250) == "07:00", "14.4 s per frame: 250 frames are an hour"
    assert clock.minutes(4) == 6 * 60 and clock.minutes(5) == 6 * 60 + 1, "0.24 min per frame"


def test_one_task_per_template_per_episode() -> None:
    cfg = cli_config(findingdory.commands["tasks"], "experience-dir")
    assert isinstance(cfg, TasksConfig)
    assert cfg.per_template == 1, "paper: 5,876 val tasks in 100 episodes ~ one per template"


def test_the_60_templates_of_table_3() -> None:
    ts = load_templates()
    assert len(ts) == 60, "paper Table 3 / spec notes: 60 templates"
    assert [t.id for t in ts] == [f"T{k:02d}" for k in range(1, 61)]
    assert Counter((t.group, t.category) for t in ts) == {
        ("spatial", "object_recall"): 2,
        ("spatial", "interaction"): 6,
        ("spatial", "conditional_interaction"): 7,
        ("spatial", "object_attributes"): 5,
        ("spatial", "spatial_relationship"): 5,
        ("spatial", "room_visitation"): 5,
        ("temporal", "interaction_order"): 16,
        ("temporal", "time_based"): 2,
        ("temporal", "duration_tracking"): 3,
        ("multi_goal", "unordered_revisitation"): 6,
        ("multi_goal", "ordered_revisitation"): 3,
    }, "spec notes: Spatial 30, Temporal 21, Multi-goal 9"
    assert sum(not t.multi_goal for t in ts) == 51, "spec: 51 single-goal templates"
    ordered = {t.category for t in ts if t.ordered}
    assert ordered == {"ordered_revisitation"} and sum(t.ordered for t in ts) == 3
    assert ATTRIBUTES == ("shape", "color", "print_or_design", "material", "functionality"), (
        "spec notes: shape, colour, print/design, material, functionality"
    )


def test_goal_predicate_thresholds() -> None:
    # paper B.3 and spec notes "Predicates": objects 2.0 m / 45 deg, receptacles 0.1 m / 90 deg,
    # coverage >= 0.1 % (not §5's 1.0 m, the ImageNav stop radius)
    o = metrics.THRESHOLDS["robot_at_object"]
    r = metrics.THRESHOLDS["robot_at_receptacle"]
    assert o is not None and r is not None
    assert (o.max_distance_m, o.max_angle_deg, o.min_coverage) == (2.0, 45.0, 0.001)
    assert (r.max_distance_m, r.max_angle_deg, r.min_coverage) == (0.1, 90.0, 0.001)
    assert metrics.THRESHOLDS["robot_in_room"] is None, "paper B.3: a room region check"


def test_success_rates_and_the_low_level_budget() -> None:
    # spec notes "Scoring": DTG-SR = HL-SR without coverage, SC-SR = HL-SR without distance
    assert metrics.RELAXATIONS == {"HL-SR": (), "DTG-SR": ("coverage",), "SC-SR": ("distance",)}
    assert metrics.LL_MAX_STEPS == 1000, "paper / spec: the low level stops within 1,000 steps"
    assert metrics.EXACT_TOUR_LIMIT == 6, "upstream LL-SPL: brute-force tours of <= 6 goals"


def test_evaluate_defaults_are_upstreams() -> None:
    params = {p.name: p.default for p in findingdory.commands["evaluate"].params}
    # fact sheet §6: K = chunk_size 96 in upstream's yaml (paper 24-768); <= 256 new tokens
    assert params["frames"] == 96
    assert params["max_tokens"] == 256
