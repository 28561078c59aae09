"""``spamem evaluate`` against the scripted OpenAI-compatible server: the images and time stamps a
request carries, answer parsing, retries, resuming, workers, one-line errors."""

from __future__ import annotations

import base64
import io
import json
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dfhelpers import run_cli
from scripted_llm import Delay, ScriptedServer, Status, scripted_server_fixture  # noqa: F401

from dataforge.cli.main import main
from dataforge.errors import DataforgeError, DatasetError, InputNotFoundError, UsageError
from dataforge.llm import LLMSettings
from dataforge.llm.evaluate import EvalResult, EvalRun
from dataforge.pipelines.spamem import evaluate as ev
from dataforge.store import open_dataset
from dataforge.store.hashing import sha256_file
from dataforge.store.manifest import read_manifest, write_manifest

pytest.importorskip("jsonschema", reason="the LLM client needs the 'llm' extra (jsonschema)")
pytestmark = pytest.mark.slow  # one small generation per module

EPISODE = "house-000000/seq-00"
VIEWS = 4


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spamem-eval") / "ds"
    res = run_cli(
        "spamem",
        "generate",
        "--out",
        str(out),
        "--seed",
        "3",
        "--houses",
        "1",
        "--room-spec",
        "kitchen",
        "--sequences-per-house",
        "1",
        "--steps",
        "2",
        "--views-per-step",
        str(VIEWS),
        "--resolution",
        "64x48",
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    return out


def frame(step: int, view: int, modality: str = "rgb", dataset: str = "sequences") -> dict:
    return {
        "dataset": dataset,
        "episode": EPISODE,
        "step": step,
        "view": view,
        "modality": modality,
    }


GOLD = {
    "set": ["Apple"],
    "boxes": [[0, 0, 4, 4]],
    "distances": {"Mug": 1.0},
    "neighbours": {"Mug": "left"},
    "count": 1,
    "interval": {"first": 0, "last": 1},
    "sequence": ["Shelf", "Desk"],
}


def question(qid: str, task: str, level: int, answer_type: str, frames: list[dict]) -> dict:
    return {
        "id": qid,
        "level": level,
        "task": task,
        "horizon": "static" if level == 1 else "long",
        "modality": "rgbd" if any(f["modality"] == "depth" for f in frames) else "rgb",
        "episode": EPISODE,
        "step": max(f["step"] for f in frames),
        "prompt": f'[{qid}] What is the answer? Reply with {{"answer": ...}}.',
        "frames": frames,
        "answer_type": answer_type,
        "answer": GOLD[answer_type],
        "labels": [],
        "context": {},
    }


def rgbd(step: int, view: int = 0) -> list[dict]:
    return [frame(step, view, "rgb"), frame(step, view, "depth")]


QUESTIONS = {
    "L1/CC.static.rgb": [question("cc-0", "CC", 1, "count", [frame(0, 1)])],
    "L2/TL.long.rgb": [question("tl-0", "TL", 2, "interval", [frame(s, 2) for s in range(3)])],
    "L3/LOR.long.rgbd": [
        question("lor-0", "LOR", 3, "set", [f for s in range(3) for f in rgbd(s)])
    ],
}
GOOD = {
    "cc-0": '{"answer": "3"}',
    "tl-0": '<think>it shows up at t=0 and is gone after t=2</think>\n{"answer": [0, 2]}',
    "lor-0": 'Here it is:\n```json\n{"answer": " Apple"}\n```',
}


def write_tasks(
    root: Path,
    dataset: Path,
    questions: dict[str, list[dict]] = QUESTIONS,
    location: Path | None = None,
) -> Path:
    """A tasks directory holding ``questions`` and a manifest (the sequences dataset's, made a
    spamem-tasks one) that records ``dataset`` as the input ``sequences`` with its manifest's
    sha256, located at ``location`` (default ``root/ds``, a link to it), as spamem tasks does."""
    tasks = root / "tasks"
    for name, records in questions.items():
        path = tasks / "questions" / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    root.mkdir(exist_ok=True)
    if not (root / "ds").exists():
        (root / "ds").symlink_to(dataset, target_is_directory=True)
    inputs = {
        "files": {"sequences:manifest.json": sha256_file(dataset / "manifest.json")},
        "locations": {"sequences": str(location or root / "ds")},
    }
    sequences = read_manifest(dataset)
    write_manifest(tasks, replace(sequences, pipeline="spamem-tasks", inputs=inputs))
    return tasks


def by_id(answers: dict[str, Any]) -> Callable[[dict], Any]:
    """A script item answering from the question id in the prompt."""

    def answer(body: dict) -> Any:
        prompt = body["messages"][-1]["content"][-1]["text"]
        return answers[prompt[1 : prompt.index("]")]]

    return answer


def settings(server: ScriptedServer, **kw: Any) -> LLMSettings:
    return LLMSettings(url=server.url, model="test-model", **kw)


def run(tasks_dir: Path, server: ScriptedServer, out: Path, **kw: Any) -> EvalResult:
    s = settings(server, timeout_s=kw.pop("timeout_s", 5.0))
    shared = {k: kw.pop(k) for k in ("workers", "rate", "retries") if k in kw}
    return ev.run_evaluate(tasks_dir, EvalRun(s, out, quiet=True, **shared), **kw)


def preds(out: Path) -> dict[str, dict]:
    lines = out.read_text().splitlines()
    recs = [json.loads(line) for line in lines]
    assert len({r["id"] for r in recs}) == len(recs), "an id written twice"
    return {r["id"]: r for r in recs}


def image_of(part: dict) -> np.ndarray:
    from PIL import Image

    url = part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as im:
        assert im.format == "PNG"
        return np.asarray(im)


def request_for(server: ScriptedServer, qid: str) -> list[dict]:
    for body in server.chat_requests:
        if body["messages"][-1]["content"][-1]["text"].startswith(f"[{qid}]"):
            return body["messages"]
    raise AssertionError(f"no request for {qid}")


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataforge.llm import batch

    monkeypatch.setattr(batch, "RETRY_BACKOFF_S", 0.01)


def test_requests_carry_images_and_time_stamps_and_answers_are_typed(
    dataset: Path, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    tasks = write_tasks(tmp_path, dataset)
    scripted_server.push(*[by_id(GOOD)] * 3)
    out = tmp_path / "preds.jsonl"
    summary = run(tasks, scripted_server, out)
    assert (summary.total, summary.answered, summary.malformed, summary.skipped) == (3, 3, 0, 0)
    assert "3 answered, 0 malformed, 0 skipped" in summary.line()
    p = preds(out)
    assert list(p) == ["cc-0", "tl-0", "lor-0"]  # sorted file order with one worker
    assert p["cc-0"] == {"id": "cc-0", "answer": 3, "error": None, "raw": GOOD["cc-0"]}
    assert p["tl-0"]["answer"] == {"first": 0, "last": 2}
    assert p["lor-0"]["answer"] == ["Apple"]

    with open_dataset(dataset) as ds:
        ep = ds[EPISODE]
        rgb, depth = ep["rgb"].read(), ep["depth"].read()

    system, user = request_for(scripted_server, "cc-0")
    assert system == {"role": "system", "content": ev.system_prompt()}
    assert "spatial memory" in system["content"] and '{"answer"' in system["content"]
    parts = user["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text"]
    assert parts[0]["text"] == "Frame t=0"
    assert parts[2]["text"] == QUESTIONS["L1/CC.static.rgb"][0]["prompt"]
    np.testing.assert_array_equal(image_of(parts[1]), rgb[0 * VIEWS + 1])

    _, user = request_for(scripted_server, "lor-0")
    parts = user["content"]
    assert [p["text"] for p in parts[:-1:2]] == ["Frame t=0", "Frame t=1", "Frame t=2"]
    for i, step in enumerate(range(3)):
        img = image_of(parts[2 * i + 1])
        row = step * VIEWS
        assert img.shape == (48, 128, 3)  # RGB | depth: twice as wide
        np.testing.assert_array_equal(img[:, :64], rgb[row])
        grey = img[:, 64:, 0]
        assert (img[:, 64:, 1] == grey).all() and (img[:, 64:, 2] == grey).all()
        d = depth[row]
        np.testing.assert_array_equal(grey, ev.depth_to_grey(d))
        assert (grey[d == 0] == 0).all()
        near = (d > 0) & (d < 1000)  # nearer than 1 m: brighter than 229
        assert (grey[near] > 229).all()


def test_depth_rendering() -> None:
    d = np.array([[0, 1, 1000, 5000, 10000, 20000]], dtype=np.uint16)
    assert ev.depth_to_grey(d).tolist() == [[0, 255, 230, 128, 0, 0]]


def test_max_images_keeps_the_last_frame(
    dataset: Path, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    assert ev.spread(5, 3) == [0, 2, 4] and ev.spread(5, 1) == [4] and ev.spread(2, 3) == [0, 1]
    assert ev.spread(10, 4) == [0, 3, 6, 9]
    tasks = write_tasks(tmp_path, dataset)
    out = tmp_path / "preds.jsonl"
    scripted_server.push(*[by_id(GOOD)] * 3)
    run(tasks, scripted_server, out, max_images=2, tasks=["LOR", "CC"])
    assert set(preds(out)) == {"cc-0", "lor-0"}  # --tasks
    _, user = request_for(scripted_server, "lor-0")
    stamps = [p["text"] for p in user["content"] if p["type"] == "text"][:-1]
    assert stamps == ["Frame t=0", "Frame t=2"]
    scripted_server.requests.clear()
    scripted_server.push(by_id(GOOD))
    run(tasks, scripted_server, tmp_path / "one.jsonl", max_images=1, tasks=["LOR"])
    _, user = request_for(scripted_server, "lor-0")
    assert [p["text"] for p in user["content"][:-1:2]] == ["Frame t=2"]
    assert sum(p["type"] == "image_url" for p in user["content"]) == 1


@pytest.mark.parametrize(
    ("answer_type", "value", "expected"),
    [
        ("count", "3", 3),
        ("count", 3.0, 3),
        ("count", " 4 ", 4),
        ("set", "Apple", ["Apple"]),
        ("set", [" Mug", "Apple", "Mug"], ["Apple", "Mug"]),
        ("sequence", ["Sink", " Fridge"], ["Sink", "Fridge"]),
        ("interval", [1, 3], {"first": 1, "last": 3}),
        ("interval", {"first": "1", "last": 2.0}, {"first": 1, "last": 2}),
        ("boxes", [1, 2, 3, 4], [[1.0, 2.0, 3.0, 4.0]]),
        ("boxes", [[1, 2, 3, 4]], [[1.0, 2.0, 3.0, 4.0]]),
        ("distances", {" Mug ": 1}, {"Mug": 1.0}),
        ("neighbours", {"Mug": "Left"}, {"Mug": "left"}),
    ],
)
def test_near_misses_are_coerced(answer_type: str, value: Any, expected: Any) -> None:
    text = json.dumps({"answer": value})
    assert ev.parse_prediction(answer_type, text) == (expected, None)


@pytest.mark.parametrize(
    ("answer_type", "text", "reason"),
    [
        ("count", "I don't know", "contained no JSON object"),
        ("count", "", "empty"),
        ("count", "<think>hmm", "only reasoning"),
        ("count", '{"count": 3}', 'no JSON object with an "answer" key'),
        ("count", '{"answer": "three"}', "a count is a non-negative integer"),
        ("count", '{"answer": 2.5}', "a count is a non-negative integer"),
        ("set", '{"answer": {"Apple": 1}}', "a set answer is a list of names"),
        ("interval", '{"answer": [3, 1]}', "first step is after its last"),
        ("boxes", '{"answer": [[4, 4, 1, 1]]}', "box corners out of order"),
        ("boxes", '{"answer": [[0, 0, 1%s, 1]]}' % ("0" * 400), "not a box"),
        ("distances", '{"answer": {"Mug": 1%s}}' % ("0" * 400), "not a distance"),
    ],
)
def test_junk_is_malformed(answer_type: str, text: str, reason: str) -> None:
    answer, error = ev.parse_prediction(answer_type, text)
    assert answer is None and error is not None
    assert error.startswith("malformed: ") and reason in error and "\n" not in error


def test_junk_replies_are_recorded_not_dropped(
    dataset: Path, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    tasks = write_tasks(tmp_path, dataset)
    junk = {"cc-0": "I don't know", "tl-0": '{"answer": "soon"}', "lor-0": "x" * 5000}
    scripted_server.push(*[by_id(junk)] * 3)
    out = tmp_path / "preds.jsonl"
    summary = run(tasks, scripted_server, out)
    assert (summary.answered, summary.malformed, summary.failed) == (0, 3, 0)
    p = preds(out)
    assert p["cc-0"] == {
        "id": "cc-0",
        "answer": None,
        "error": "malformed: contained no JSON object",
        "raw": "I don't know",
    }
    assert p["tl-0"]["answer"] is None and p["tl-0"]["error"].startswith("malformed: ")
    assert len(p["lor-0"]["raw"]) == ev.RAW_LIMIT


def test_timeouts_are_retried_then_left_unwritten_and_a_rerun_resumes(
    dataset: Path, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    tasks = write_tasks(tmp_path, dataset)
    out = tmp_path / "preds.jsonl"
    slow = {"cc-0": GOOD["cc-0"], "tl-0": Delay(2.0), "lor-0": Delay(2.0)}
    scripted_server.push(*[by_id(slow)] * 5)  # 1 + 2 questions x (1 + 1 retry)
    with pytest.raises(DataforgeError) as err:
        run(tasks, scripted_server, out, retries=1, timeout_s=0.3)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"2 of 3 questions got no answer from {scripted_server.url}")
    assert "did not answer within 0.3 s" in msg and msg.endswith("rerun the same command to resume")
    assert len(scripted_server.chat_requests) == 5
    assert list(preds(out)) == ["cc-0"]

    scripted_server.requests.clear()
    scripted_server.push(*[by_id(GOOD)] * 2)
    summary = run(tasks, scripted_server, out, retries=1)
    assert (summary.answered, summary.skipped, summary.failed) == (2, 1, 0)
    assert "1 skipped" in summary.line()
    assert len(scripted_server.chat_requests) == 2
    assert list(preds(out)) == ["cc-0", "tl-0", "lor-0"]


def test_http_errors(dataset: Path, tmp_path: Path, scripted_server: ScriptedServer) -> None:
    tasks = write_tasks(tmp_path, dataset)
    out = tmp_path / "preds.jsonl"
    # 5xx: retried; 4xx (e.g. too many images): the same request would fail again
    scripted_server.push(Status(503, "overloaded"), by_id(GOOD), Status(400, "At most 2 images"))
    with pytest.raises(DataforgeError, match=r"1 of 2 questions .*HTTP 400: At most 2 images"):
        run(tasks, scripted_server, out, tasks=["CC", "TL"], retries=3)
    assert len(scripted_server.chat_requests) == 3
    assert list(preds(out)) == ["cc-0"]


def test_a_torn_last_line_is_repaired_on_resume(
    dataset: Path, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    tasks = write_tasks(tmp_path, dataset)
    out = tmp_path / "preds.jsonl"
    done = {"id": "cc-0", "answer": 7, "error": None, "raw": "{}"}
    out.write_text(json.dumps(done) + "\n" + '{"id": "tl-0", "answer": {"fir')
    scripted_server.push(*[by_id(GOOD)] * 2)
    summary = run(tasks, scripted_server, out)
    assert (summary.answered, summary.skipped) == (2, 1)
    assert out.read_text().endswith("\n")
    p = preds(out)  # every line parses
    assert list(p) == ["cc-0", "tl-0", "lor-0"] and p["cc-0"] == done
    assert not out.with_name(out.name + ".tmp").exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_down_or_wrong_model_fails_in_one_line_before_any_work(
    dataset: Path, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    tasks = write_tasks(tmp_path, dataset)
    out = tmp_path / "sub" / "preds.jsonl"
    down = LLMSettings(url=f"http://127.0.0.1:{free_port()}/v1", model="test-model")
    with pytest.raises(DataforgeError, match=r"no LLM server at .*connection refused") as err:
        ev.run_evaluate(tasks, EvalRun(down, out, quiet=True))
    assert "\n" not in str(err.value)
    assert not out.exists()
    wrong = LLMSettings(url=scripted_server.url, model="other")
    with pytest.raises(DataforgeError, match="does not serve model 'other'"):
        ev.run_evaluate(tasks, EvalRun(wrong, out, quiet=True))
    assert not scripted_server.chat_requests and not out.exists()


def test_workers_answer_everything_exactly_once_within_the_rate(
    dataset: Path, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    many = [question(f"cc-{i}", "CC", 1, "count", [frame(i % 3, i % VIEWS)]) for i in range(12)]
    tasks = write_tasks(tmp_path, dataset, {"L1/CC.static.rgb": many})
    answers = {f"cc-{i}": Delay(0.05, f'{{"answer": {i}}}') for i in range(12)}
    scripted_server.push(*[by_id(answers)] * 12)
    out = tmp_path / "preds.jsonl"
    start = time.monotonic()
    summary = run(tasks, scripted_server, out, workers=2, rate=40.0)
    assert time.monotonic() - start >= 11 / 40 * 0.9
    assert (summary.answered, summary.failed) == (12, 0)
    p = preds(out)
    assert sorted(p) == sorted(answers) and all(p[f"cc-{i}"]["answer"] == i for i in range(12))
    assert len(scripted_server.chat_requests) == 12


def test_moved_dataset_and_bad_inputs(
    dataset: Path, tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    # spamem tasks names the input location "sequences"; its manifest says where it was
    one = {"L1/CC.static.rgb": [question("cc-0", "CC", 1, "count", [frame(0, 0)])]}
    tasks = write_tasks(tmp_path, dataset, one, location=tmp_path / "gone")
    out = tmp_path / "preds.jsonl"
    with pytest.raises(DatasetError, match="pass --data-root"):
        run(tasks, scripted_server, out)
    scripted_server.push('{"answer": 1}')
    assert run(tasks, scripted_server, out, data_root=dataset).answered == 1
    copy = tmp_path / "elsewhere" / "gone"
    shutil.copytree(dataset, copy)
    scripted_server.push('{"answer": 1}')
    run(tasks, scripted_server, tmp_path / "p2.jsonl", data_root=copy.parent)
    tasks = write_tasks(tmp_path / "t2", dataset, one)
    scripted_server.push('{"answer": 1}')
    assert run(tasks, scripted_server, tmp_path / "p3.jsonl").answered == 1
    with pytest.raises(UsageError, match="unknown task"):
        run(tasks, scripted_server, out, tasks=["NOPE"])
    with pytest.raises(UsageError, match="no questions"):
        run(tasks, scripted_server, out, tasks=["VGL"])
    with pytest.raises(InputNotFoundError, match="no such directory"):
        run(tmp_path / "nowhere", scripted_server, out)


def test_command_line(
    dataset: Path,
    tmp_path: Path,
    scripted_server: ScriptedServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tasks = write_tasks(tmp_path, dataset)
    out = tmp_path / "preds.jsonl"
    scripted_server.push(*[by_id(GOOD)] * 3)
    args = [
        "spamem",
        "evaluate",
        str(tasks),
        "--llm-url",
        scripted_server.url,
        "--llm-model",
        "test-model",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main([*args, "--tasks", "CC,TL", "--max-images", "2", "--workers", "2"]) == 0
    assert "2 answered, 0 malformed, 0 skipped" in capsys.readouterr().out
    assert main(args) == 0
    assert "1 answered, 0 malformed, 2 skipped" in capsys.readouterr().out
    down = ["--llm-url", f"http://127.0.0.1:{free_port()}/v1"]
    assert main([*args[:3], *down, *args[5:]]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no LLM server at") and err.count("\n") == 1


def test_a_server_that_goes_away_stops_the_run(
    dataset: Path, tmp_path: Path, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    tasks = write_tasks(tmp_path, dataset)
    out = tmp_path / "preds.jsonl"
    asked: list[str] = []
    build = ev.build_messages
    monkeypatch.setattr(ev, "build_messages", lambda q, *a: asked.append(q["id"]) or build(q, *a))

    def answer_then_stop(body: dict) -> str:
        threading.Timer(0.0, scripted_server.stop).start()
        return GOOD["cc-0"]

    scripted_server.push(answer_then_stop)
    with pytest.raises(DataforgeError, match=r"^2 of 3 questions .*connection refused"):
        run(tasks, scripted_server, out, retries=1)
    assert list(preds(out)) == ["cc-0"]
    assert asked == ["cc-0", "tl-0"]  # lor-0 was not tried against a server that is gone
