"""Bad inputs that used to be accepted silently or to crash (issue 36), through the real command
line: each is refused with exit 2 and one line on stderr naming the culprit, and nothing is
written (no dataset, no rebuild, no output file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dfhelpers import SHARED, run_cli
from ir2rhelpers import chain, line_positions, r2r_record, write_connectivity, write_r2r

HOUSE = SHARED / "data" / "procthor_houses" / "house_746.json"


def refused(r) -> str:
    """The one line of a refusal with exit 2 (no traceback, no internal error)."""
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    return r.stderr.strip()


def nothing_in(out: Path) -> None:
    assert not out.exists() or not any(out.rglob("*.json")), sorted(out.rglob("*"))


# -- a: a house whose rooms overlap --------------------------------------------------------------

HOUSE_RUNS = {
    "spamem": [
        "spamem",
        "generate",
        "--houses",
        "1",
        "--house-source",
        "{src}",
        "--sequences-per-house",
        "1",
        "--steps",
        "2",
        "--views-per-step",
        "4",
        "--resolution",
        "64x48",
    ],
    "multion": [
        "multion",
        "generate",
        "--m",
        "2",
        "--split",
        "val",
        "--episodes-per-scene",
        "2",
        "--scenes",
        "{src}",
    ],
    "findingdory": ["findingdory", "episodes", "--scenes", "{src}", "--episodes", "1"],
}


@pytest.mark.skipif(not HOUSE.is_file(), reason=f"example ProcTHOR house not present ({HOUSE})")
@pytest.mark.parametrize("pipeline", sorted(HOUSE_RUNS))
def test_a_duplicated_room_is_refused_by_every_house_pipeline(tmp_path: Path, pipeline: str):
    house = json.loads(HOUSE.read_text())
    first = house["rooms"][0]
    house["rooms"].append({**first, "id": "room|copy"})  # the same floor twice
    src = tmp_path / "houses"
    src.mkdir()
    (src / "twice.json").write_text(json.dumps(house))
    out = tmp_path / "out"
    args = [a.replace("{src}", str(src)) for a in HOUSE_RUNS[pipeline]]
    line = refused(run_cli(*args, "--out", str(out), "--quiet"))
    assert f"rooms {first['id']!r} and 'room|copy' overlap" in line
    assert "of shared floor" in line
    assert "fix that input, then rerun" in line or "resume" not in line  # no bare resume hint
    nothing_in(out)


# -- IR2R: tours and predictions --------------------------------------------------------------


@pytest.fixture
def ir2r_inputs(tmp_path: Path) -> dict[str, Path]:
    """A corridor scan with two paths (episodes 10_0 and 11_0), their tours and predictions."""
    data = tmp_path / "data"
    write_connectivity(data, "lineA", line_positions("v", 4), chain(["v0", "v1", "v2", "v3"]))
    reference = write_r2r(
        data,
        "val_seen",
        [r2r_record(10, "lineA", ["v0", "v1"]), r2r_record(11, "lineA", ["v2", "v3"])],
    )
    tours = tmp_path / "tours.json"
    tours.write_text(json.dumps({"val_seen": {"lineA": [["10_0", "11_0"]]}}))
    predictions = tmp_path / "pred.json"
    predictions.write_text(json.dumps({"10_0": ["v0", "v1"], "11_0": ["v2", "v3"]}))
    return {
        "data": data,
        "reference": reference,
        "tours": tours,
        "predictions": predictions,
        "out": tmp_path / "per_episode.json",
    }


def ir2r_score(i: dict[str, Path]):
    return run_cli(
        "ir2r",
        "score",
        "--tours",
        str(i["tours"]),
        "--reference",
        str(i["reference"]),
        "--predictions",
        str(i["predictions"]),
        "--data-dir",
        str(i["data"]),
        "--per-episode",
        str(i["out"]),
    )


def test_ir2r_score_runs_on_the_good_inputs(ir2r_inputs: dict[str, Path]) -> None:
    r = ir2r_score(ir2r_inputs)
    assert r.returncode == 0, r.stderr
    assert json.loads(ir2r_inputs["out"].read_text())["10_0"]["ndtw"] == 1.0


def test_ir2r_episode_in_two_tours(ir2r_inputs: dict[str, Path]) -> None:
    tours = ir2r_inputs["tours"]
    tours.write_text(json.dumps({"val_seen": {"lineA": [["10_0", "11_0"], ["11_0"]]}}))
    line = refused(ir2r_score(ir2r_inputs))
    assert line == f"error: {tours}: episode 11_0 is in lineA tour 0 and lineA tour 1"
    assert not ir2r_inputs["out"].exists()


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_ir2r_non_finite_prediction_point(ir2r_inputs: dict[str, Path], bad: float) -> None:
    preds = ir2r_inputs["predictions"]
    traj = [[0.0, 0.0, 1.5], [1.0, 0.0, 1.5], [bad, 0.0, 1.5]]
    preds.write_text(json.dumps({"10_0": {"trajectory": traj}, "11_0": ["v2", "v3"]}))
    line = refused(ir2r_score(ir2r_inputs))
    assert line.startswith(f"error: {preds}: prediction 10_0: step 2: ")
    assert line.endswith("is not finite")
    assert not ir2r_inputs["out"].exists()


# -- FindingDory: --templates, predictions, trajectories ---------------------------------------


def fd_score(tasks: Path, preds: Path, *extra: str):
    return run_cli("findingdory", "score", str(tasks), "--predictions", str(preds), *extra)


def test_findingdory_unknown_template(tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "a", "frame_indices": [1]}\n')
    line = refused(fd_score(tmp_path, preds, "--templates", "T01,T99"))
    assert line.startswith("error: --templates: unknown template T99 (known: T01, T02, ")
    assert "T60" in line


def test_findingdory_duplicate_prediction(tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    rec = {"id": "ep/T01/0", "frame_indices": [3]}
    preds.write_text("\n".join(json.dumps(r) for r in (rec, {**rec, "id": "b"}, rec)) + "\n")
    line = refused(fd_score(tmp_path, preds))
    assert line == f"error: {preds}:3: duplicate prediction id 'ep/T01/0' (first on line 1)"


@pytest.mark.parametrize("bad", ["NaN", "Infinity"])
def test_findingdory_non_finite_trajectory(tmp_path: Path, bad: str) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "t1", "frame_indices": [3]}\n')
    trajs = tmp_path / "t.jsonl"
    rec = {"id": "t1", "positions": [[0, 0, 0], [1, 0, "BAD"]], "yaws": [0, 90], "stops": [1]}
    trajs.write_text(json.dumps(rec).replace('"BAD"', bad) + "\n")
    line = refused(fd_score(tmp_path, preds, "--trajectories", str(trajs)))
    assert line.startswith(f"error: {trajs}: trajectory t1: step 1: position [1.0, 0.0, ")
    assert line.endswith("is not finite")


# -- MultiON: trajectories -----------------------------------------------------------------------


def test_multion_non_finite_position(tmp_path: Path) -> None:
    trajs = tmp_path / "t.jsonl"
    rec = {"episode_id": "7", "actions": [1, 1], "positions": [[0, 0, 0], [0.25, 0, 0]]}
    text = json.dumps(rec).replace("]]", "], [NaN, 0, 0]]")
    trajs.write_text(text + "\n")
    line = refused(run_cli("multion", "score", str(tmp_path), "--trajectories", str(trajs)))
    assert "episode 7: position 2 (step 2) is not finite: [nan, 0.0, 0.0]" in line


# -- dataforge reproduce --input ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expect"),
    [
        ("metadata-dir=", "--input takes NAME=PATH"),
        ("metadata-dir= ", "--input takes NAME=PATH"),
        ("=/data", "--input takes NAME=PATH"),
        ("metdata-dir=/data", "records no input location 'metdata-dir' (it records: none)"),
    ],
)
def test_reproduce_mistyped_input(synthetic_dataset, tmp_path: Path, value: str, expect: str):
    kept = tmp_path / "kept"
    r = run_cli("reproduce", str(synthetic_dataset("zarr")), "--input", value, "--keep", str(kept))
    assert expect in refused(r)
    assert not kept.exists()
