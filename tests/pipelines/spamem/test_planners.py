"""SpaMEM's planners on real ProcTHOR houses: the rules, the heuristic policy and the LLM
planner against a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np
import pytest
from dfhelpers import SHARED
from scripted_llm import DROP, Delay, scripted_server_fixture  # noqa: F401

from dataforge.pipelines.spamem.llm_planner import LLMPlanner, house_text
from dataforge.pipelines.spamem.planner import HeuristicPlanner, PlanState
from dataforge.pipelines.spamem.rules import FORBIDDEN_RECEPTACLES, Action, Rules
from dataforge.world import load_catalogue, load_house
from dataforge.world.graph import world_graph
from dataforge.world.spawnable import SMALL_M

HOUSES = SHARED / "data" / "procthor_houses"
pytestmark = pytest.mark.skipif(
    not (HOUSES / "house_746.json").is_file(), reason="needs ../shared/data/procthor_houses"
)


@pytest.fixture(scope="module")
def world():
    catalogue = load_catalogue()
    graph = world_graph(load_house(HOUSES / "house_746.json", catalogue=catalogue), catalogue)
    return catalogue, graph, Rules(catalogue, "train")


def test_spawnable_types_are_small_pickupable_and_placeable(world) -> None:
    catalogue, _, rules = world
    assert {"Apple", "CellPhone", "Mug"} <= set(rules.spawnable)
    assert not {"BaseballBat", "Footstool", "TennisRacket", "Towel"} & set(rules.spawnable)
    for t in rules.spawnable:
        assert catalogue.type_info(t).pickupable
        sizes = [max(a.size) for a in catalogue.assets_of(t)]
        assert np.median(sizes) <= SMALL_M
        assert any(p.get(t, 0) > 0 for p in rules.pairs.values())
        assert rules.assets(t)
    assert not FORBIDDEN_RECEPTACLES & set(rules.pairs)


def test_check_names_what_is_wrong(world) -> None:
    _, graph, rules = world
    target = rules.targets(graph)[0].id
    movable = rules.movable(graph)[0]
    toilet = next((r.id for r in graph.receptacles if r.object_type == "Toilet"), None)
    assert rules.check(Action("spawn", "Mug", target), graph) is None
    assert "cannot be spawned" in rules.check(Action("spawn", "Sofa", target), graph)
    assert "no object" in rules.check(Action("place", "Mug|404", target), graph)
    assert "no receptacle" in rules.check(Action("spawn", "Mug", "nowhere"), graph)
    assert "needs a 'receptacle'" in rules.check(Action("place", movable, None), graph)
    assert "must be one of" in rules.check(Action("throw", "Mug", target), graph)
    here = graph.object(movable)
    assert "already on" in rules.check(
        Action("place", movable, here.element_id or here.parent_id), graph
    )
    if toilet is not None:
        assert "not a valid target" in rules.check(Action("spawn", "Mug", toilet), graph)
    big = next(o.id for o in graph.objects if o.object_type in ("Sofa", "Bed", "Dresser"))
    assert "cannot be moved" in rules.check(Action("remove", big), graph)


def test_heuristic_planner_balances_actions_and_uses_all_surface_kinds(world) -> None:
    _, graph, rules = world
    planner = HeuristicPlanner(rules)
    planner.begin("seq", np.random.default_rng(7))
    kinds: Counter[str] = Counter()
    surfaces: Counter[str] = Counter()
    types: Counter[str] = Counter()
    for _ in range(1500):
        proposal = planner.propose(PlanState("seq", 1, 25, graph, ()), None)
        action = proposal.action
        assert action is not None and rules.check(action, graph) is None
        kinds[action.action] += 1
        if action.receptacle:
            node = graph.receptacle(action.receptacle)
            types[node.object_type] += 1
            surfaces.update({s.kind for s in node.surfaces if s.usable})
    share = {k: v / 1500 for k, v in kinds.items()}
    assert share["spawn"] == pytest.approx(0.438, abs=0.04)
    assert share["place"] == pytest.approx(0.377, abs=0.04)
    assert share["remove"] == pytest.approx(0.185, abs=0.03)
    assert {"top", "interior", "seat"} <= set(surfaces)
    assert {"Drawer", "DiningTable"} <= {t for t, _ in types.most_common(3)}
    assert not FORBIDDEN_RECEPTACLES & set(types)


def test_heuristic_planner_is_seeded_and_avoids_failed_targets(world) -> None:
    _, graph, rules = world

    def draws(seed: int) -> list[dict]:
        p = HeuristicPlanner(rules)
        p.begin("s", np.random.default_rng(seed))
        return [p.propose(PlanState("s", 1, 5, graph, ()), None).record for _ in range(20)]

    assert draws(3) == draws(3) and draws(3) != draws(4)
    p = HeuristicPlanner(rules)
    p.begin("s", np.random.default_rng(0))
    first = p.propose(PlanState("s", 1, 5, graph, ()), None).action
    for _ in range(30):
        again = p.propose(PlanState("s", 1, 5, graph, (), (first,)), "it failed").action
        assert again != first


def test_house_text_lists_every_target_with_its_free_area(world) -> None:
    _, graph, rules = world
    text = house_text(graph, rules)
    targets = rules.targets(graph)
    assert targets
    for node in targets:
        assert f"- {node.id} [{node.object_type}" in text
    assert "cm2" in text and "Toilet" not in text


def _spawn_answer(body: dict) -> str:
    """A valid Think-and-Act answer: spawn an Apple on the first receptacle the prompt lists."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    first = re.search(r"^- (\S+) \[", user, re.M).group(1)
    return "<think>An apple belongs on a surface.</think>\n" + json.dumps(
        {"action": "spawn", "object": "Apple", "receptacle": first}
    )


def _planner(world, server, attempts: int = 3, timeout: float = 30.0) -> LLMPlanner:
    from dataforge.llm import LLMSettings

    _, _, rules = world
    settings = LLMSettings(url=server.url, model="test-model", timeout_s=timeout)
    planner = LLMPlanner(rules, settings, attempts=attempts)
    planner.begin("house-000000/seq-00", np.random.default_rng(0))
    return planner


def test_llm_planner_retries_malformed_and_impossible_answers(world, scripted_server) -> None:
    _, graph, rules = world
    scripted_server.push(
        '{"action": "spawn", "object": "Apple", ',  # malformed JSON
        '{"action": "place", "object": "Mug|404", "receptacle": "x"}',  # no such object
        _spawn_answer,
    )
    planner = _planner(world, scripted_server)
    proposal = planner.propose(PlanState("s", 1, 3, graph, ()), None)
    assert proposal.action is not None and proposal.action.object == "Apple"
    assert rules.check(proposal.action, graph) is None
    attempts = proposal.record["dialog"]["attempts"]
    assert [a["outcome"] for a in attempts] == ["json", "check", "ok"]
    feedback = list(scripted_server.last_user_messages())
    assert any("JSON" in f for f in feedback) and any("Mug|404" in f for f in feedback)
    body = scripted_server.chat_requests[0]
    assert body["model"] == "test-model" and "seed" in body
    assert "Step 1 of 3" in body["messages"][1]["content"]


def test_llm_planner_recovery_continues_the_conversation(world, scripted_server) -> None:
    _, graph, _ = world
    scripted_server.push(_spawn_answer, _spawn_answer)
    planner = _planner(world, scripted_server)
    first = planner.propose(PlanState("s", 1, 3, graph, ()), None)
    failed = "The spawn of Apple failed: there is no free space for it. Choose another location."
    planner.propose(PlanState("s", 1, 3, graph, (), (first.action,)), failed)
    second = scripted_server.chat_requests[1]["messages"]
    assert (
        second[: len(scripted_server.chat_requests[0]["messages"])]
        == (scripted_server.chat_requests[0]["messages"])
    )
    assert second[-2]["role"] == "assistant" and second[-1]["content"] == failed


def test_llm_planner_gives_up_after_its_attempts(world, scripted_server) -> None:
    _, graph, _ = world
    scripted_server.push("I would rather not.", "Still no.")
    planner = _planner(world, scripted_server, attempts=2)
    proposal = planner.propose(PlanState("s", 1, 3, graph, ()), None)
    assert proposal.action is None and not proposal.record["dialog"]["ok"]
    assert len(proposal.record["dialog"]["attempts"]) == 2


def test_llm_planner_logs_a_timeout_and_asks_again(world, scripted_server) -> None:
    _, graph, _ = world
    scripted_server.push(Delay(3.0, _spawn_answer), _spawn_answer)
    planner = _planner(world, scripted_server, timeout=1.0)
    proposal = planner.propose(PlanState("s", 1, 3, graph, ()), None)
    outcomes = [a["outcome"] for a in proposal.record["dialog"]["attempts"]]
    assert outcomes == ["timeout", "ok"] and proposal.action is not None


def test_a_failed_placement_goes_back_to_the_llm_and_the_sequence_recovers(
    world, scripted_server
) -> None:
    """The recovery loop end to end: the first placement fails in the world, the model hears
    why in the same conversation, and its next answer is executed."""
    from dataforge.pipelines.spamem.capture import CaptureSettings
    from dataforge.pipelines.spamem.sequence import Scene, run_sequence
    from dataforge.simulators import EmbeddedWorld
    from dataforge.world.navigation import house_floor_y, house_nav_grid
    from dataforge.world.placement import PlacementResult
    from dataforge.world.viewpoints import WallSight

    catalogue, _, rules = world
    house = load_house(HOUSES / "house_746.json", catalogue=catalogue)

    class Crowded(EmbeddedWorld):
        failures = 1

        def spawn(self, asset_id, receptacle_id, rng, **kw):  # type: ignore[no-untyped-def]
            if self.failures:
                self.failures -= 1
                return PlacementResult("no_free_space", "x", receptacle_id, message="full")
            return super().spawn(asset_id, receptacle_id, rng, **kw)

    backend = Crowded(house, catalogue, width=32, height=24)
    grid = house_nav_grid(house, catalogue)
    scene = Scene(grid, WallSight(house), house_floor_y(house), grid.largest_component())
    scripted_server.push(_spawn_answer, _spawn_answer)
    planner = _planner(world, scripted_server)
    run = run_sequence(
        backend,
        scene,
        planner,
        rules,
        CaptureSettings(32, 24, 90.0, 2, 1.5),
        sequence="s",
        steps=1,
        recoveries=3,
        place_rng=np.random.default_rng(0),
    )
    backend.close()
    assert run.ended_early is None and len(run.captures) == 2
    attempts = run.steps[1]["attempts"]
    assert [a["status"] for a in attempts] == ["no_free_space", "placed"]
    second = scripted_server.chat_requests[1]["messages"]
    assert "no free space" in second[-1]["content"] and second[-2]["role"] == "assistant"
    assert [rec["decision"] for rec in run.log] == [0, 1]


def test_each_draw_of_a_sequence_takes_its_own_pair_of_the_sequence_stream() -> None:
    """Draw 0 is the sequence stream's first two children (what generation always used), draw
    k its children 2k and 2k+1, rebuilt without spawning the others (as a replay does)."""
    from dataforge.pipelines.spamem.generate import attempt_streams

    def state(ss: np.random.SeedSequence) -> list[int]:
        return ss.generate_state(4).tolist()

    child = np.random.SeedSequence(1234).spawn(3)[2]
    spawned = np.random.SeedSequence(1234).spawn(3)[2].spawn(6)
    for k in range(3):
        assert [state(s) for s in attempt_streams(child, k)] == [
            state(spawned[2 * k]),
            state(spawned[2 * k + 1]),
        ]
    assert child.n_children_spawned == 0


def test_a_sequence_whose_actions_never_execute_fails_after_its_redraws(
    world, scripted_server
) -> None:
    """Every answer is a valid spawn, and every spawn finds the receptacle full: each draw's
    step 1 takes its 2 decisions (2 answers), captures the initial state and no action. After
    the one redraw the house fails with "no executable action" and the attempts by status."""
    from dataforge.errors import UnitFailedError
    from dataforge.pipelines.spamem.capture import CaptureSettings
    from dataforge.pipelines.spamem.config import SpamemConfig
    from dataforge.pipelines.spamem.generate import HouseRun, draw_sequence
    from dataforge.pipelines.spamem.sequence import Scene
    from dataforge.simulators import EmbeddedWorld
    from dataforge.world.navigation import house_floor_y, house_nav_grid
    from dataforge.world.placement import PlacementResult
    from dataforge.world.viewpoints import WallSight

    catalogue, _, rules = world
    house = load_house(HOUSES / "house_746.json", catalogue=catalogue)

    class Full(EmbeddedWorld):
        def spawn(self, asset_id, receptacle_id, rng, **kw):  # type: ignore[no-untyped-def]
            return PlacementResult("no_free_space", "x", receptacle_id, message="full")

    class Session:
        opened = 0

        def open(self, house):  # type: ignore[no-untyped-def]
            self.opened += 1
            return Full(house, catalogue, width=32, height=24)

    grid = house_nav_grid(house, catalogue)
    scene = Scene(grid, WallSight(house), house_floor_y(house), grid.largest_component())
    cfg = SpamemConfig(houses=(0, 1), steps=1, recoveries=2, redraws=1)
    session = Session()
    scripted_server.push(*[_spawn_answer] * 4)
    h = HouseRun(
        cfg,
        session,
        house,
        scene,
        _planner(world, scripted_server),
        rules,
        CaptureSettings(32, 24, 90.0, 2, 1.5),
    )
    with pytest.raises(UnitFailedError) as failed:
        draw_sequence(h, "s", np.random.SeedSequence(0), None)
    assert str(failed.value) == (
        "sequence s: no executable action in 2 draws (--redraws 1); the last ended at step 1: "
        "no executable action in 2 decisions (2 no_free_space)"
    )
    assert session.opened == 2 and len(scripted_server.chat_requests) == 4


def test_heuristic_planner_revisits_what_the_sequence_acted_on(world) -> None:
    # REVISIT = 0.5: a place or remove draws among the objects the sequence spawned or placed
    # half of the time, else among all n movable ones, so one such object is drawn with
    # probability 0.5 + 0.5 / n per place/remove, far above the 1 / n of no history
    _, graph, rules = world
    movable = rules.movable(graph)
    mine = movable[len(movable) // 2]
    history = ({"action": "place", "object": mine},)
    planner = HeuristicPlanner(rules)
    planner.begin("s", np.random.default_rng(11))
    hits = moves = 0
    for _ in range(1500):
        action = planner.propose(PlanState("s", 2, 5, graph, history), None).action
        assert action is not None
        if action.action != "spawn":
            moves += 1
            hits += action.object == mine
    want = 0.5 + 0.5 / len(movable)
    assert moves > 600 and hits / moves == pytest.approx(want, abs=0.06)
    # an object the sequence removed is not in the revisit pool: drawn at about 1 / n only
    gone = ({"action": "remove", "object": mine},)
    planner.begin("s", np.random.default_rng(11))
    picks = [planner.propose(PlanState("s", 2, 5, graph, gone), None).action for _ in range(300)]
    assert sum(a.object == mine for a in picks if a and a.action != "spawn") < 30
