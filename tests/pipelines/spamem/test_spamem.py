"""End-to-end SpaMEM generations on real ProcTHOR houses: what the views, masks, boxes, graphs
and logs hold, house sources, replay, the LLM planner through the command line."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from dfhelpers import SHARED, run_cli
from scripted_llm import ScriptedServer

from dataforge.pipelines.spamem.capture import CAMERA_HEIGHTS_M
from dataforge.pipelines.spamem.checks import stats
from dataforge.pipelines.spamem.episode import graph_at, graphs_by_step, instance_keys
from dataforge.render import intrinsics, project
from dataforge.store import open_dataset
from dataforge.validation import validate
from dataforge.world import load_catalogue, load_house
from dataforge.world.navigation import house_nav_grid
from dataforge.world.settle import settle

HOUSES = SHARED / "data" / "procthor_houses"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not HOUSES.is_dir(), reason="needs ../shared/data/procthor_houses"),
]
SMALL = ["--sequences-per-house", "1", "--resolution", "96x72", "--quiet"]


def generate(out: Path, *args: str, seed: int = 5) -> Path:
    res = run_cli("spamem", "generate", "--out", str(out), "--seed", str(seed), *args)
    assert res.returncode == 0, res.stderr
    return out


def shard_digests(root: Path) -> dict[str, str]:
    files = json.loads((root / "manifest.json").read_text())["files"]
    return {k: v["sha256"] for k, v in files.items() if k.startswith("shards/")}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spamem") / "ds"
    return generate(out, "--houses", "1", "--house-source", str(HOUSES), "--steps", "4", *SMALL)


def test_dataset_validates_and_records_its_house_file(dataset: Path) -> None:
    report = validate(dataset)
    assert report.ok, [p.line() for p in report.problems]
    manifest = json.loads((dataset / "manifest.json").read_text())
    first = sorted(p.name for p in HOUSES.glob("*.json"))[0]
    assert list(manifest["inputs"]["files"]) == [f"house-source:{first}"]
    assert manifest["config"]["houses_from"] == "dir"
    # house_3703: 7 objects hover 5-23 cm above the archetypes' surfaces; stored settled
    cat = load_catalogue()
    read = load_house(HOUSES / first, catalogue=cat)
    settled, report = settle(read, cat)
    with open_dataset(dataset) as ds:
        ep = ds["house-000000/seq-00"]
        stored = json.loads(ep["house_json"].read().tobytes())
        origin = ep.metadata["house_origin"]
    assert stored == json.loads(json.dumps(settled.to_json_dict(), sort_keys=True))
    assert origin["settled"] == report.to_dict()
    assert (origin["settled"]["dropped"], origin["settled"]["removed"]) == (7, 0)
    assert origin["settled"]["moved_m"]["Egg|surface|2|12"] < -0.2  # into the fridge


def test_a_child_off_its_surface_fails_validate(dataset: Path, tmp_path) -> None:
    """A child that no step moves, lifted 10 cm in every state's 3D boxes, is caught."""
    from sealing import edit_episode

    root = tmp_path / "lifted"
    shutil.copytree(dataset, root)
    with open_dataset(root) as ds:
        ep = ds["house-000000/seq-00"]
        meta = ep.metadata
        graph = graphs_by_step(ep["graphs"].read(), ep["graph_index"].read())[0]
    acted = {rec.get("object") for rec in meta["steps"]}
    child = next(o["id"] for o in graph["objects"] if o["parent_id"] and o["id"] not in acted)
    instance = {k: i for i, k in instance_keys(meta).items()}[child]

    def lift(a: dict[str, np.ndarray], meta: dict) -> None:
        a["box3d"][a["box3d"][:, 1] == instance, 3] += 0.1

    edit_episode(root, "house-000000/seq-00", lift)
    lines = [p.line() for p in validate(root).problems]
    assert any("rests-on-surface" in x and f"{child}'s bottom is +0.1" in x for x in lines)
    # its pixels stayed where they were: at most depth-on-surface besides
    assert all("rests-on-surface" in x or "depth-on-surface" in x for x in lines), lines


def test_sixteen_views_per_state_on_navigable_positions(dataset: Path) -> None:
    with open_dataset(dataset) as ds:
        ep = ds["house-000000/seq-00"]
        meta, view = ep.metadata, ep["view"].read()
        house = load_house(json.loads(ep["house_json"].read().tobytes()))
        poses, K = ep["pose"].read(), ep["intrinsics"].read()
    grid = house_nav_grid(house, load_catalogue())
    assert meta["views_per_state"] == 16 and len(view) == 16 * meta["states"]
    assert meta["states"] == meta["actions"] + 1
    heights = sorted(CAMERA_HEIGHTS_M.values(), reverse=True)
    for s, vps in enumerate(meta["viewpoints"]):
        assert [vp["azimuth_deg"] for vp in vps] == [a for a in range(0, 360, 45) for _ in (0, 1)]
        assert [vp["height"] for vp in vps] == ["standing", "crouching"] * 8
        for k, vp in enumerate(vps):
            assert grid.navigable(vp["position"])  # never inside a wall or furniture
            assert view[s * 16 + k, 1] == pytest.approx(heights[k % 2], abs=1e-5)
            assert 0.5 - 1e-6 <= vp["radius_m"] <= 3.0 + 1e-6
            d = np.asarray(vp["position"])[[0, 2]] - view[s * 16 + k, [5, 7]]
            bearing = np.degrees(np.arctan2(d[0], d[1])) % 360
            # the stored bearing is the camera's (column 8, as the metadata); usable (column 9)
            assert view[s * 16 + k, 8] == pytest.approx(bearing, abs=0.01)
            assert vp["bearing_deg"] == pytest.approx(bearing, abs=0.01)
            assert view[s * 16 + k, 9] == float(vp["usable"])
            if vp["on_bearing"]:
                assert (
                    min(abs(bearing - vp["azimuth_deg"]), 360 - abs(bearing - vp["azimuth_deg"]))
                    < 0.5
                )
    # no two cameras of a state within 20 cm
    for s in range(meta["states"]):
        eyes = poses[s * 16 : (s + 1) * 16, :3, 3].astype(np.float64)
        gaps = np.linalg.norm(eyes[:, None] - eyes[None], axis=-1)[np.triu_indices(16, 1)]
        assert gaps.min() >= 0.2 - 1e-4
    # every camera looks at its target: the target projects to the image centre
    targets = view[:, 5:8].astype(np.float64)
    for row in range(len(view)):
        uv, z = project(targets[row][None], K, poses[row].astype(np.float64))
        assert z[0] > 0 and np.allclose(uv[0], [48, 36], atol=0.5)
    assert np.allclose(K, intrinsics(96, 72, 90.0))


def test_masks_boxes_and_graphs_agree_with_the_actions(dataset: Path) -> None:
    with open_dataset(dataset) as ds:
        ep = ds["house-000000/seq-00"]
        meta = ep.metadata
        graphs = graphs_by_step(ep["graphs"].read(), ep["graph_index"].read())
        instance = ep["instance"].read()
        box3d = ep["box3d"].read()
        assert graph_at(ep, len(graphs) - 1) == graphs[-1]
    keys = instance_keys(meta)
    seen = {keys[int(i)] for i in np.unique(instance) if i}
    assert any(k.startswith("wall") for k in seen) and any(k.startswith("floor:") for k in seen)
    structure = {n["kind"] for n in graphs[0]["structure"]}
    assert {"floor", "ceiling", "wall"} <= structure
    for rec in meta["steps"][1:]:
        s, oid = rec["step"], rec["object"]
        ids = {o["id"] for o in graphs[s]["objects"]}
        before = {o["id"] for o in graphs[s - 1]["objects"]}
        if rec["action"] == "spawn":
            assert oid in ids and oid not in before
        elif rec["action"] == "place":
            old = next(o for o in graphs[s - 1]["objects"] if o["id"] == oid)
            new = next(o for o in graphs[s]["objects"] if o["id"] == oid)
            assert new["position"] != old["position"]
        else:
            assert oid not in ids and oid in before
        n_objects = int(np.sum(box3d[:, 0] == s))
        assert n_objects == len(graphs[s]["objects"])


def test_replay_reexecutes_the_logged_decisions_byte_for_byte(dataset: Path, tmp_path) -> None:
    out = generate(
        tmp_path / "replay",
        "--houses",
        "1",
        "--planner",
        f"replay:{dataset}",
        "--steps",
        "4",
        *SMALL,
    )
    assert shard_digests(out) == shard_digests(dataset)
    bad = tmp_path / "bad"
    res = run_cli(
        "spamem",
        "generate",
        "--houses",
        "1",
        "--planner",
        f"replay:{dataset}",
        "--steps",
        "4",
        *SMALL,
        "--seed",
        "6",
        "--out",
        str(bad),
    )
    assert res.returncode != 0 and "--seed 5" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_jsonl_gz_source_and_index_ranges(tmp_path) -> None:
    names = sorted(p.name for p in HOUSES.glob("*.json"))
    lines = [json.dumps(json.loads((HOUSES / n).read_text())) for n in names]
    src = tmp_path / "houses.jsonl.gz"
    with gzip.open(src, "wt") as f:
        f.write("\n".join(lines) + "\n")
    out = generate(
        tmp_path / "ds",
        "--houses",
        "1:2",
        "--house-source",
        str(src),
        "--steps",
        "1",
        "--views-per-step",
        "2",
        *SMALL,
    )
    with open_dataset(out) as ds:
        assert ds.episode_ids == ["house-000001/seq-00"]
        house = json.loads(ds["house-000001/seq-00"]["house_json"].read().tobytes())
        origin = ds["house-000001/seq-00"].metadata["house_origin"]
    settled, report = settle(load_house(json.loads(lines[1])), load_catalogue())
    assert house == json.loads(json.dumps(settled.to_json_dict(), sort_keys=True))
    assert origin["source"] == "jsonl" and origin["index"] == 1
    assert origin["settled"] == report.to_dict() and origin["settled"]["dropped"] == 12
    res = run_cli(
        "spamem",
        "generate",
        "--houses",
        "2:9",
        "--house-source",
        str(src),
        "--out",
        str(tmp_path / "x"),
        "--quiet",
    )
    assert res.returncode != 0 and "holds 3 houses" in res.stderr


def _spawn_answer(body: dict) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    first = re.search(r"^- (\S+) \[", user, re.M).group(1)
    return "<think>fine</think>" + json.dumps(
        {"action": "spawn", "object": "Apple", "receptacle": first}
    )


def test_llm_planned_dataset_is_logged_and_reproduced_without_the_server(tmp_path) -> None:
    with ScriptedServer([_spawn_answer] * 40) as server:
        out = generate(
            tmp_path / "llm",
            "--houses",
            "1",
            "--house-source",
            str(HOUSES),
            "--planner",
            "llm",
            "--llm-url",
            server.url,
            "--llm-model",
            "test-model",
            "--steps",
            "2",
            "--views-per-step",
            "2",
            *SMALL,
        )
        asked = len(server.chat_requests)
    assert asked >= 2
    report = validate(out)
    assert report.ok, [p.line() for p in report.problems]
    with open_dataset(out) as ds:
        ep = ds["house-000000/seq-00"]
        log = json.loads(ep["planner_log"].read().tobytes())
        planner = ep.metadata["planner"]
    assert planner["planner"] == "llm" and planner["llm"]["model"] == "test-model"
    sent = {body["seed"] for body in server.chat_requests}  # the seed the server was asked to use
    assert sent == {planner["llm"]["seed"]} and isinstance(planner["llm"]["seed"], int)
    assert all(rec["dialog"]["attempts"][0]["text"] for rec in log)
    # the server is gone: reproduce replays the logged answers
    res = run_cli("reproduce", str(out), "--quiet")
    assert res.returncode == 0, res.stderr + res.stdout


def test_llm_server_down_is_one_line_before_any_work(tmp_path) -> None:
    out = tmp_path / "down"
    res = run_cli(
        "spamem",
        "generate",
        "--houses",
        "1",
        "--house-source",
        str(HOUSES),
        "--planner",
        "llm",
        "--llm-url",
        "http://127.0.0.1:9/v1",
        "--llm-model",
        "m",
        "--out",
        str(out),
        "--quiet",
    )
    assert res.returncode != 0
    assert len(res.stderr.strip().splitlines()) == 1 and "no LLM server" in res.stderr
    assert not (out / "shards").exists() or not any((out / "shards").iterdir())


PROSE = "I would rather not."
NOTHING_AT_1 = (
    "step 1: the planner gave no valid action in 2 decisions "
    "(2 without an action, 0 impossible; answers: 4 json)"
)


def _llm_args(server: ScriptedServer, *extra: str) -> list[str]:
    """Two steps, 2 decisions per step, 2 answers per decision: a step whose answers are all
    prose takes 4 requests and ends the draw."""
    return [
        "--houses",
        "1",
        "--house-source",
        str(HOUSES),
        "--planner",
        "llm",
        "--llm-url",
        server.url,
        "--llm-model",
        "test-model",
        "--steps",
        "2",
        "--views-per-step",
        "2",
        "--llm-attempts",
        "2",
        "--recoveries",
        "2",
        *extra,
        *SMALL,
    ]


def _spawn_at_step_1(body: dict) -> str:
    """A valid spawn for step 1's prompt, prose for any later step."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return _spawn_answer(body) if user.startswith("Step 1 of") else PROSE


def test_a_planner_that_never_answers_fails_its_house_even_with_keep_short(tmp_path) -> None:
    """A server that answers only prose: each draw's step 1 takes 4 answers, all unparsable, so
    the sequence has no action; it is drawn again once (--redraws 1: 8 answers), then the
    house fails in issue 36's line with the last draw's counts and nothing is committed.
    --keep-short does not keep a sequence without actions."""
    out = tmp_path / "none"
    with ScriptedServer([PROSE] * 12) as server:
        res = run_cli(
            "spamem",
            "generate",
            "--out",
            str(out),
            "--seed",
            "5",
            *_llm_args(server, "--redraws", "1", "--keep-short"),
        )
        seeds = [body["seed"] for body in server.chat_requests]
    assert res.returncode == 1, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert f"ended at {NOTHING_AT_1} in the last of 2 draws (--redraws 1)" in res.stderr
    assert "--keep-short" not in res.stderr
    assert len(seeds) == 8 and len(set(seeds[:4])) == len(set(seeds[4:])) == 1
    assert seeds[0] != seeds[4]  # the second draw has its own planner stream
    assert not (out / "manifest.json").exists()


def test_a_sequence_without_actions_is_drawn_again_and_replayed_byte_for_byte(tmp_path) -> None:
    """The first draw gets 4 prose answers (no action); the second draw's answers are valid
    spawns: one redraw, its reason recorded, and the kept draw holds actions. Replay re-runs
    only the kept draw (its logged decisions, its placement stream) to the same bytes."""
    with ScriptedServer([PROSE] * 4 + [_spawn_answer] * 40) as server:
        out = generate(tmp_path / "redrawn", *_llm_args(server))
        seeds = [body["seed"] for body in server.chat_requests]
    assert validate(out).ok
    with open_dataset(out) as ds:
        ep = ds["house-000000/seq-00"]
        meta = ep.metadata
        log = json.loads(ep["planner_log"].read().tobytes())
        counts = stats(ds).counts
    assert counts["redraws (draws without any action, dropped)"] == 1
    assert meta["redraws"] == 1 and meta["attempt"] == 1
    assert meta["redraw_reasons"] == [NOTHING_AT_1]
    assert meta["actions"] >= 1 and meta["states"] == meta["actions"] + 1
    assert meta["planner"]["llm"]["seed"] == seeds[4] != seeds[0]
    assert len(log) == len(seeds) - 4  # the dropped draw's decisions are not stored
    again = generate(
        tmp_path / "replay",
        "--houses",
        "1",
        "--planner",
        f"replay:{out}",
        "--steps",
        "2",
        "--views-per-step",
        "2",
        "--recoveries",
        "2",
        *SMALL,
    )
    assert shard_digests(again) == shard_digests(out)


def test_a_planner_that_gets_nothing_after_an_action_fails_unless_keep_short(tmp_path) -> None:
    """Step 1 gets a valid spawn, step 2 only prose (4 answers): issue 36's guard fails the
    house in one line naming --keep-short; with it the sequence is kept, ended early at step 2
    after 1 action, with no redraw."""
    out = tmp_path / "short"
    with ScriptedServer([_spawn_at_step_1] * 5) as server:
        res = run_cli("spamem", "generate", "--out", str(out), "--seed", "5", *_llm_args(server))
    assert res.returncode == 1, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert "ended at step 2: the planner gave no valid action in 2 decisions" in res.stderr
    assert "--keep-short" in res.stderr and not (out / "manifest.json").exists()
    with ScriptedServer([_spawn_at_step_1] * 5) as server:
        kept = generate(tmp_path / "kept", *_llm_args(server, "--keep-short"))
    assert validate(kept).ok
    with open_dataset(kept) as ds:
        meta = ds["house-000000/seq-00"].metadata
    assert meta["ended_early"]["step"] == 2 and meta["actions"] == 1
    assert meta["redraws"] == 0 and meta["attempt"] == 0 and meta["redraw_reasons"] == []


def test_llm_needs_url_and_model(tmp_path) -> None:
    res = run_cli(
        "spamem", "generate", "--houses", "1", "--planner", "llm", "--out", str(tmp_path / "x")
    )
    assert res.returncode != 0 and "--llm-url and --llm-model" in res.stderr


def test_generated_houses_match_the_houses_pipeline(tmp_path) -> None:
    """--house-source generate makes the same house as 'dataforge houses generate' with the
    same seed and unit id."""
    sp = generate(
        tmp_path / "sp",
        "--houses",
        "1",
        "--room-spec",
        "kitchen",
        "--steps",
        "1",
        "--views-per-step",
        "2",
        *SMALL,
    )
    res = run_cli(
        "houses",
        "generate",
        "--count",
        "1",
        "--room-spec",
        "kitchen",
        "--seed",
        "5",
        "--out",
        str(tmp_path / "h"),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    made = json.loads((tmp_path / "h" / "houses" / "house-000000.json").read_text())
    with open_dataset(sp) as ds:
        house = json.loads(ds["house-000000/seq-00"]["house_json"].read().tobytes())
    assert house == made
    shutil.rmtree(tmp_path / "h")


def test_llm_planner_against_a_real_local_server(tmp_path) -> None:
    """The whole loop against llama.cpp serving SmolLM2-135M (make llm; skips without it).
    The small model plans poorly: the test checks that real answers were asked for, logged
    and acted on or rejected within the bounds, and that the dataset is valid."""
    from llm_local import llama_server

    with llama_server(tmp_path, n_ctx=8192, max_tokens=160) as (client, _):
        llm = [
            "--planner",
            "llm",
            "--llm-url",
            client.settings.url,
            "--llm-model",
            "smollm2",
            "--llm-max-tokens",
            "160",
            "--llm-attempts",
            "2",
            "--recoveries",
            "2",
        ]
        out = generate(
            tmp_path / "real",
            "--houses",
            "1",
            "--house-source",
            str(HOUSES),
            *llm,
            "--steps",
            "1",
            "--views-per-step",
            "2",
            *SMALL,
        )
    assert validate(out).ok
    with open_dataset(out) as ds:
        ep = ds["house-000000/seq-00"]
        log = json.loads(ep["planner_log"].read().tobytes())
        meta = ep.metadata
    attempts = [a for rec in log for a in rec["dialog"]["attempts"]]
    assert 1 <= len(attempts) <= 4 and attempts[0]["usage"]["completion_tokens"] > 0
    assert meta["actions"] == 1 or meta["ended_early"] is not None
