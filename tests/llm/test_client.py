"""ChatClient against the scripted OpenAI-compatible server: requests, replies, one-line errors."""

from __future__ import annotations

import json
import pickle
import socket
import sys
import time

import pytest
from scripted_llm import DROP, Delay, Status, scripted_server_fixture  # noqa: F401

from dataforge.errors import DataforgeError, UsageError
from dataforge.llm import (
    ChatClient,
    LLMError,
    LLMSettings,
    LLMTimeout,
    LLMUnavailable,
    ModelNotServed,
)

pytest.importorskip("jsonschema", reason="the LLM client needs the 'llm' extra (jsonschema)")


def settings(url: str, **kw) -> LLMSettings:
    return LLMSettings(url=url, model=kw.pop("model", "test-model"), **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_settings_are_recorded_without_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    s = LLMSettings(url="http://127.0.0.1:8000/v1/", model="m", seed=3, temperature=0.2)
    client = ChatClient(s)
    d = s.to_dict()
    assert d == {
        "url": "http://127.0.0.1:8000/v1",
        "model": "m",
        "temperature": 0.2,
        "top_p": 1.0,
        "max_tokens": 512,
        "seed": 3,
        "timeout_s": 60.0,
    }
    assert "secret" not in json.dumps(d) and "key" not in " ".join(d)
    assert LLMSettings.from_dict(json.loads(json.dumps(d))) == s
    assert client._api_key == "sk-secret-123"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert ChatClient(s)._api_key == "EMPTY"
    assert ChatClient(s, api_key="given")._api_key == "given"


@pytest.mark.parametrize(
    "kw",
    [
        {"url": "localhost:8000"},
        {"model": ""},
        {"temperature": -1.0},
        {"top_p": 0.0},
        {"max_tokens": 0},
        {"timeout_s": 0.0},
    ],
)
def test_bad_settings_are_usage_errors(kw):
    base = {"url": "http://h/v1", "model": "m"} | kw
    with pytest.raises(UsageError):
        LLMSettings(**base)


def test_unknown_recorded_settings_are_refused():
    with pytest.raises(UsageError, match="unknown LLM settings: api_key"):
        LLMSettings.from_dict({"url": "http://h/v1", "model": "m", "api_key": "x"})


def test_the_client_needs_no_openai_package(monkeypatch, scripted_server):
    # HTTP goes through the standard library (deadline, reply cap): openai is never imported
    monkeypatch.setitem(sys.modules, "openai", None)
    scripted_server.push("hello")
    assert (
        ChatClient(settings(scripted_server.url)).chat([{"role": "user", "content": "hi"}]).text
        == "hello"
    )


def test_request_carries_the_sampling_settings(scripted_server):
    scripted_server.push('{"a": 1}', "plain text")
    s = settings(scripted_server.url, temperature=0.7, top_p=0.9, max_tokens=64, seed=11)
    client = ChatClient(s)
    reply = client.chat([{"role": "user", "content": "hi"}])
    assert reply.text == '{"a": 1}'
    assert reply.finish_reason == "stop"
    assert reply.model == "test-model"
    assert reply.usage["total_tokens"] == reply.usage["prompt_tokens"] + 2
    assert reply.latency_s > 0
    body = scripted_server.chat_requests[0]
    assert body["model"] == "test-model"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (
        0.7,
        0.9,
        64,
        11,
    )
    # no seed set: none sent (servers differ in what they do with one)
    ChatClient(settings(scripted_server.url)).chat([{"role": "user", "content": "x"}])
    assert "seed" not in scripted_server.chat_requests[1]
    assert json.dumps(reply.to_dict())


def test_a_client_pickles_for_spawned_workers(scripted_server):
    scripted_server.push("hello")
    client = ChatClient(settings(scripted_server.url, seed=5), api_key="k", hint="h")
    again = pickle.loads(pickle.dumps(client))
    assert again.settings == client.settings and again.hint == "h"
    assert again.chat([{"role": "user", "content": "hi"}]).text == "hello"


def test_a_wrong_url_path_is_named(scripted_server):
    client = ChatClient(settings(scripted_server.url.removesuffix("/v1")))
    with pytest.raises(LLMError, match=r"HTTP 404: .*\(is the url the server's /v1 base\?\)$"):
        client.check()


def test_check_lists_the_served_models(scripted_server):
    scripted_server.models = ["other", "test-model"]
    info = ChatClient(settings(scripted_server.url)).check()
    assert info["url"] == scripted_server.url
    assert info["models"] == ["other", "test-model"]
    assert info["model_info"]["id"] == "test-model"
    assert json.dumps(info)


def test_check_names_the_served_models_when_ours_is_missing(scripted_server):
    scripted_server.models = ["Qwen/Qwen3-8B", "smol"]
    client = ChatClient(settings(scripted_server.url, model="llama-70b"))
    with pytest.raises(ModelNotServed) as err:
        client.check()
    msg = str(err.value)
    assert "\n" not in msg
    assert "'llama-70b'" in msg and "'Qwen/Qwen3-8B', 'smol'" in msg
    assert err.value.exit_code == 2


def test_check_fails_fast_in_one_line_when_no_server_listens():
    url = f"http://127.0.0.1:{free_port()}/v1"
    client = ChatClient(settings(url))
    start = time.monotonic()
    with pytest.raises(LLMUnavailable) as err:
        client.check()
    assert time.monotonic() - start < 5
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"no LLM server at {url}: connection refused;")
    assert "docs/llm.md" in msg and "--planner heuristic" in msg
    assert isinstance(err.value, DataforgeError) and err.value.__cause__ is not None
    with pytest.raises(LLMUnavailable, match="connection refused"):
        client.chat([{"role": "user", "content": "hi"}])


def test_check_hint_can_be_replaced():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(LLMUnavailable, match=r"; start vllm first$"):
        ChatClient(settings(url), hint="start vllm first").check()


def test_timeout_is_one_line_and_fast(scripted_server):
    scripted_server.push(Delay(3, "late"))
    client = ChatClient(settings(scripted_server.url, timeout_s=0.3))
    start = time.monotonic()
    with pytest.raises(LLMTimeout) as err:
        client.chat([{"role": "user", "content": "hi"}])
    assert time.monotonic() - start < 2  # no hidden retries
    assert str(err.value) == (
        f"LLM server at {scripted_server.url} did not answer within 0.3 s (timeout_s)"
    )
    assert len(scripted_server.chat_requests) == 1


def test_http_errors_keep_the_cause(scripted_server):
    scripted_server.push(Status(500, "CUDA out of memory\nwhile decoding"))
    client = ChatClient(settings(scripted_server.url))
    with pytest.raises(LLMError) as err:
        client.chat([{"role": "user", "content": "hi"}])
    assert not isinstance(err.value, LLMUnavailable | LLMTimeout)
    assert str(err.value) == (
        f"LLM server at {scripted_server.url} answered HTTP 500: CUDA out of memory while decoding"
    )
    assert len(scripted_server.chat_requests) == 1  # the client never retries by itself


def test_a_dropped_connection_is_unavailable(scripted_server):
    scripted_server.push(DROP)
    client = ChatClient(settings(scripted_server.url))
    with pytest.raises(LLMUnavailable) as err:
        client.chat([{"role": "user", "content": "hi"}])
    msg = str(err.value)
    assert msg.startswith(f"lost the connection to the LLM server at {scripted_server.url}: ")
    assert "\n" not in msg


def test_a_model_the_server_refuses_is_an_http_error(scripted_server):
    client = ChatClient(settings(scripted_server.url, model="nope"))
    with pytest.raises(LLMError, match=r"HTTP 404: The model `nope` does not exist\.$"):
        client.chat([{"role": "user", "content": "hi"}])
