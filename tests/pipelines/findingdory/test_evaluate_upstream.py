"""``findingdory evaluate`` asks and reads answers as upstream's VLM agent does
(``findingdory-habitat`` 0c8af9a, ``policies/llm/``): the prompt gives neither the number of
frames a task needs nor its order, and says upstream's multi-goal sentence; replies are read
as upstream's own parser reads them (``fixtures/upstream_parse_k8.json``: that parser run on
the same replies), an unusable answer or index scored as frame 0, unless ``--parse strict``."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from dataforge.errors import UsageError
from dataforge.pipelines.findingdory.evaluate import parse_indices, prompt

# upstream policies/llm/prompts/qwen_prompt.txt:19
UPSTREAM_MULTI_GOAL = (
    "If task requires the agent to go to multiple places, output one frame index per "
    "object/place. (Do not use ellipsis)"
)


def _task(n: int, ordered: bool) -> dict:
    return {
        "text": "Navigate to the receptacles in the order you placed objects on them.",
        "goals": [[f"rec_{i}"] for i in range(n)],
        "ordered": ordered,
    }


def test_the_prompt_does_not_give_the_number_of_frames_nor_the_order() -> None:
    texts = {prompt(_task(n, o), 96) for n in (1, 2, 5) for o in (False, True)}
    assert len(texts) == 1  # the same words for every task but its goal
    text = texts.pop()
    assert "exactly" not in text and "in the order the task asks" not in text
    assert not re.search(r"\b[25] frame", text)
    assert UPSTREAM_MULTI_GOAL in " ".join(text.split())
    assert "Below are 96 frames" in text


# -- reading replies (--parse upstream, the default; --parse strict) ----------------------------

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLED = [0, 10, 20, 30, 40, 50, 60, 70]  # 8 sampled frames of an 71-frame day


def _upstream_cases() -> list[dict]:
    doc = json.loads((FIXTURES / "upstream_parse_k8.json").read_text("utf-8"))
    assert doc["k"] == len(SAMPLED)
    return doc["cases"]


@pytest.mark.parametrize("case", _upstream_cases(), ids=lambda c: c["reply"][:40])
def test_replies_are_read_as_upstreams_own_parser_read_them(case: dict) -> None:
    """The frames scored are the frames upstream's parser, run on the same reply, scored (the
    fixture); where upstream raises, the answer is unusable: frame 0."""
    mapped, picked, error = parse_indices(case["reply"], SAMPLED)
    assert mapped == [SAMPLED[i] for i in case.get("clipped", [0])]
    clean = "raises" not in case and case["indices"] == case["clipped"]
    assert (error is None) == clean, error
    if clean:
        assert picked == case["indices"]
    else:
        assert error is not None and error.endswith("(scored as frame 0, as upstream)")


def test_hand_built_replies_upstream_and_strict() -> None:
    """A garbage reply, a JSON5 / Python-dict reply, 4.5 and an out-of-range index: upstream
    scores frame 0 (or the truncated index); strict rejects them as today."""
    cases = {
        "no idea": ([0], "unusable"),
        "{'chain_of_thought': 'mug', 'frame_indices': [5]}": ([50], None),
        "{frame_indices: [5,], // the mug\n}": ([50], None),
        '{"frame_indices": [4.5]}': ([40], None),
        '{"frame_indices": [9]}': ([0], "index 9 outside 0..7"),
        '{"frame_indices": [2, -3]}': ([20, 0], "index -3 outside 0..7"),
    }
    for reply, (frames, err) in cases.items():
        mapped, _, error = parse_indices(reply, SAMPLED, "upstream")
        assert mapped == frames, reply
        assert (error is None) if err is None else (error is not None and error.startswith(err))
        strict, _, strict_error = parse_indices(reply, SAMPLED, "strict")
        assert -1 in strict, reply  # scored as wrong
        assert (strict_error is None) == ("outside" in (err or "")), reply
    with pytest.raises(UsageError, match="--parse"):
        parse_indices("{}", SAMPLED, "lenient")


def test_a_well_formed_reply_reads_the_same_both_ways() -> None:
    reply = '```json\n{"chain_of_thought": "the mug", "frame_indices": [3, 7]}\n```'
    assert parse_indices(reply, SAMPLED, "upstream") == ([30, 70], [3, 7], None)
    assert parse_indices(reply, SAMPLED, "strict") == ([30, 70], [3, 7], None)


def test_a_multi_goal_task_answered_unusably_fails_on_the_count() -> None:
    """Upstream's clip keeps the count: one frame for a two-goal task is num_targets_error."""
    from dataforge.pipelines.findingdory.metrics import prediction_problem

    mapped, _, _ = parse_indices("no idea", SAMPLED)
    task = type("T", (), {"goals": [("a",), ("b",)], "ordered": False, "predicate": "p"})()
    assert mapped == [0] and "expected 2" in (prediction_problem(task, mapped, 71) or "")


def test_any_reply_gives_frames_of_the_day() -> None:
    """Random JSON-ish text, deep unclosed brackets included, never raises: frames of the day
    (frame 0 where unusable)."""
    rng = random.Random(0)
    alphabet = [*'{}[]()":,.-+eE0123456789 ajson\\n`', "frame_indices", "...", "NaN", "[" * 60]
    for _ in range(3000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        reply = '{"frame_indices": ' + s + "}" if rng.random() < 0.5 else s
        mapped, _, error = parse_indices(reply, SAMPLED)
        assert set(mapped) <= set(SAMPLED), reply
        assert error is None or error.endswith("(scored as frame 0, as upstream)")
    deep = '{"frame_indices": ' + "[" * 3000 + "8}"
    assert parse_indices(deep, SAMPLED)[0] == [0]
