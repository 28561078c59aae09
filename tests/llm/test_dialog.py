"""parse_json_answer and the ask_json retry loop, against the scripted server."""

from __future__ import annotations

import json
import socket

import pytest
from scripted_llm import (  # noqa: F401
    DROP,
    Delay,
    Reply,
    ScriptedServer,
    Status,
    scripted_server_fixture,
)

from dataforge.llm import (
    AnswerError,
    ChatClient,
    DialogResult,
    LLMError,
    LLMSettings,
    LLMUnavailable,
    ReplayClient,
    ask_json,
    parse_json_answer,
    strip_reasoning,
)

pytest.importorskip("jsonschema", reason="the LLM client needs the 'llm' extra (jsonschema)")

SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"enum": ["pick", "place", "done"]},
        "object": {"type": "string"},
    },
    "required": ["action", "object"],
    "additionalProperties": False,
}
PROMPT = [
    {"role": "system", "content": "You control a robot. Answer with one JSON object."},
    {"role": "user", "content": "Pick up the mug."},
]
OBJECTS = {"Mug_1", "Plate_2"}


def exists(value: dict) -> str | None:
    if value["object"] not in OBJECTS:
        return f"object {value['object']} does not exist"
    return None


def client_for(server: ScriptedServer, **kw) -> ChatClient:
    return ChatClient(LLMSettings(url=server.url, model="test-model", **kw))


# -- parse_json_answer ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"action": "pick", "object": "Mug_1"}',
        '  \n{"action": "pick",\n "object": "Mug_1"}\n',
        'Sure! ```json\n{"action": "pick", "object": "Mug_1"}\n```',
        '```\n{"action": "pick", "object": "Mug_1"}\n```\nThat picks the mug.',
        'I will pick the mug: {"action": "pick", "object": "Mug_1"}. Done {really}.',
        '<think>The mug is {"action": "place"}? no: pick it.</think>\n'
        '{"action": "pick", "object": "Mug_1"}',
        '<THINK>\nreasoning\n</THINK>```json\n{"action": "pick", "object": "Mug_1"}\n```',
        'the opening tag was in the prompt</think>{"action": "pick", "object": "Mug_1"}',
        # an example first, the decision last (Think-and-Act): the last valid object wins
        'Format: {"action": "...", "object": "..."}. Answer: {"action": "pick", "object": "Mug_1"}',
        # an object after the answer that breaks the schema does not hide the answer
        '{"action": "pick", "object": "Mug_1"} rather than {"action": "fly", "object": "x"}',
    ],
)
def test_answers_in_every_wrapping_parse(text):
    assert parse_json_answer(text, SCHEMA) == {"action": "pick", "object": "Mug_1"}


def test_braces_inside_strings_do_not_cut_the_object():
    schema = {"type": "object", "required": ["say"]}
    text = 'ok {"say": "a } b { c \\" }"} end'
    assert parse_json_answer(text, schema) == {"say": 'a } b { c " }'}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Your answer was empty."),
        ("<think>only thinking, never answered", "Your answer held only reasoning and no JSON"),
        ("I pick the mug.", "Your answer contained no JSON object."),
        ("{'action': 'pick'}", "Your answer was not valid JSON: Expecting property name enclosed"),
        ('{"action": "pick", "object": "Mug_1"', "Your answer was not valid JSON: Expecting"),
        ('["pick", "Mug_1"]', "Your answer must be one JSON object ({...}), not a JSON array."),
        (
            '{"action": "fly", "object": "Mug_1"}',
            "Your answer did not follow the required format: 'action' must be one of "
            '"pick", "place", "done", not "fly".',
        ),
        (
            '{"action": "pick"}',
            "Your answer did not follow the required format: the answer is missing the "
            "required key(s) 'object'.",
        ),
        (
            '{"action": "pick", "object": 3}',
            "Your answer did not follow the required format: 'object' must be of type "
            "string, not 3.",
        ),
    ],
)
def test_bad_answers_give_a_sentence_for_the_model(text, message):
    with pytest.raises(AnswerError) as err:
        parse_json_answer(text, SCHEMA)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)
    assert err.value.kind == ("schema" if "format" in message else "json")


def test_a_broken_schema_is_the_callers_bug():
    import jsonschema

    with pytest.raises(jsonschema.SchemaError):
        parse_json_answer("{}", {"type": "no-such-type"})


def test_strip_reasoning():
    assert strip_reasoning("<think>a</think> b <think>c</think> d") == "b  d"
    assert strip_reasoning("x <think> unfinished") == "x"


# -- ask_json --------------------------------------------------------------------------------


def test_a_valid_answer_is_one_attempt(scripted_server):
    scripted_server.push('{"action": "pick", "object": "Mug_1"}')
    result = ask_json(client_for(scripted_server), PROMPT, SCHEMA, check=exists)
    assert result.ok and result.value == {"action": "pick", "object": "Mug_1"}
    [attempt] = result.attempts
    assert attempt.outcome == "ok" and attempt.problem is None
    assert attempt.new_messages == PROMPT
    assert attempt.usage["total_tokens"] > 0 and attempt.latency_s > 0
    assert result.messages == [
        *PROMPT,
        {"role": "assistant", "content": '{"action": "pick", "object": "Mug_1"}'},
    ]


def test_malformed_json_is_fixed_after_feedback(scripted_server):
    scripted_server.push(
        "{'action': 'pick', 'object': 'Mug_1'}",
        '<think>double quotes then</think>{"action": "pick", "object": "Mug_1"}',
    )
    result = ask_json(client_for(scripted_server), PROMPT, SCHEMA)
    assert result.ok and result.value == {"action": "pick", "object": "Mug_1"}
    assert [a.outcome for a in result.attempts] == ["json", "ok"]
    feedback = list(scripted_server.last_user_messages())[1]
    assert feedback.startswith("Your answer was not valid JSON: Expecting property name")
    assert feedback.endswith("Answer again with one JSON object only.")
    second = scripted_server.chat_requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "{'action': 'pick', 'object': 'Mug_1'}"}
    assert result.attempts[1].new_messages == [second[-1]]  # only the new turn is logged


def test_a_schema_violation_is_fixed_after_feedback(scripted_server):
    scripted_server.push(
        '{"action": "grab", "object": "Mug_1"}', '{"action": "pick", "object": "Mug_1"}'
    )
    result = ask_json(client_for(scripted_server), PROMPT, SCHEMA)
    assert result.ok
    assert [a.outcome for a in result.attempts] == ["schema", "ok"]
    assert result.attempts[0].value == {"action": "grab", "object": "Mug_1"}
    feedback = list(scripted_server.last_user_messages())[1]
    assert '\'action\' must be one of "pick", "place", "done", not "grab".' in feedback


def test_a_failed_check_is_retried(scripted_server):
    scripted_server.push(
        '{"action": "pick", "object": "Mug_3"}', '{"action": "pick", "object": "Mug_1"}'
    )
    result = ask_json(client_for(scripted_server), PROMPT, SCHEMA, check=exists)
    assert result.ok and result.value["object"] == "Mug_1"
    first = result.attempts[0]
    assert (first.outcome, first.problem) == ("check", "object Mug_3 does not exist")
    assert first.value == {"action": "pick", "object": "Mug_3"}
    assert list(scripted_server.last_user_messages())[1] == (
        "Your answer cannot be carried out: object Mug_3 does not exist. "
        "Answer again with one JSON object only."
    )


def test_running_out_of_attempts_logs_them_all(scripted_server):
    scripted_server.push(
        "no idea", '{"action": "fly", "object": "Mug_1"}', '{"action": "pick", "object": "Cup"}'
    )
    result = ask_json(client_for(scripted_server), PROMPT, SCHEMA, check=exists, max_attempts=3)
    assert not result.ok and result.value is None
    assert [a.outcome for a in result.attempts] == ["json", "schema", "check"]
    assert len(scripted_server.chat_requests) == 3
    # the conversation ends with the last answer: no feedback is sent after the last attempt
    assert result.messages[-1] == {
        "role": "assistant",
        "content": '{"action": "pick", "object": "Cup"}',
    }
    assert len(result.messages) == len(PROMPT) + 3 + 2
    assert result.attempts[-1].new_messages[0]["content"].startswith("Your answer did not follow")


def test_a_cut_off_answer_is_told_so(scripted_server):
    scripted_server.push(
        Reply("<think>first I need to think about the mug, which is", "length"),
        '{"action": "pick", "object": "Mug_1"}',
    )
    result = ask_json(client_for(scripted_server), PROMPT, SCHEMA)
    assert result.ok
    assert result.attempts[0].finish_reason == "length"
    assert result.attempts[0].problem == (
        "Your answer held only reasoning and no JSON object. It was cut off at the token "
        "limit: answer shorter."
    )


def test_a_timeout_is_an_attempt_and_retried(scripted_server):
    scripted_server.push(
        Delay(3, '{"action": "pick", "object": "Mug_1"}'), '{"action": "done", "object": "Mug_1"}'
    )
    result = ask_json(client_for(scripted_server, timeout_s=0.3), PROMPT, SCHEMA)
    assert result.ok and result.value["action"] == "done"
    timeout, ok = result.attempts
    assert timeout.outcome == "timeout" and timeout.text is None
    assert (
        timeout.problem
        == f"LLM server at {scripted_server.url} did not answer within 0.3 s (timeout_s)"
    )
    assert timeout.latency_s >= 0.3
    assert timeout.new_messages == PROMPT and ok.new_messages == []  # the same request again
    assert [r["messages"] for r in scripted_server.chat_requests] == [PROMPT, PROMPT]


def test_only_timeouts_end_not_ok(scripted_server):
    scripted_server.push(Delay(2), Delay(2))
    result = ask_json(client_for(scripted_server, timeout_s=0.2), PROMPT, SCHEMA, max_attempts=2)
    assert not result.ok
    assert [a.outcome for a in result.attempts] == ["timeout", "timeout"]
    assert result.messages == PROMPT


def test_server_down_raises_with_the_dialog_so_far(scripted_server):
    scripted_server.push("not json", DROP)
    with pytest.raises(LLMUnavailable) as err:
        ask_json(client_for(scripted_server), PROMPT, SCHEMA)
    assert [a.outcome for a in err.value.dialog.attempts] == ["json"]


def test_http_errors_raise(scripted_server):
    scripted_server.push(Status(400, "This model's maximum context length is 2048 tokens"))
    with pytest.raises(LLMError, match="HTTP 400: This model's maximum context length"):
        ask_json(client_for(scripted_server), PROMPT, SCHEMA)


def test_nothing_listening_raises():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = ChatClient(LLMSettings(url=f"http://127.0.0.1:{port}/v1", model="m"))
    with pytest.raises(LLMUnavailable, match="connection refused"):
        ask_json(client, PROMPT, SCHEMA)


def test_a_dialog_goes_on_and_logs_only_new_messages(scripted_server):
    scripted_server.push(
        '{"action": "pick", "object": "Mug_1"}',
        '{"action": "place", "object": "Sink"}',  # fails the check
        '{"action": "place", "object": "Plate_2"}',
    )
    client = client_for(scripted_server)
    first = ask_json(client, PROMPT, SCHEMA, check=exists)
    followup = first.then("The placement failed: choose another receptacle.")
    second = ask_json(client, followup, SCHEMA, check=exists, logged=len(first.messages))
    assert second.ok and second.value == {"action": "place", "object": "Plate_2"}
    assert second.attempts[0].new_messages == [followup[-1]]
    sent = scripted_server.chat_requests[1]["messages"]
    assert sent == followup
    # the two logs rebuild the whole conversation
    log1 = json.loads(json.dumps(first.to_dict()))
    log2 = json.loads(json.dumps(second.to_dict()))
    again1 = DialogResult.from_dict(log1)
    again2 = DialogResult.from_dict(log2, earlier=again1.messages)
    assert again1.messages == first.messages
    assert again2.messages == second.messages
    assert again2.to_dict() == second.to_dict()


def test_the_log_is_json_and_replays_without_a_server(scripted_server):
    scripted_server.push(Delay(2), "nope", '{"action": "pick", "object": "Mug_1"}')
    live = ask_json(client_for(scripted_server, timeout_s=0.2), PROMPT, SCHEMA, check=exists)
    log = json.loads(json.dumps(live.to_dict()))
    assert set(log) == {"ok", "value", "logged", "attempts"}
    assert set(log["attempts"][0]) >= {
        "new_messages",
        "text",
        "value",
        "problem",
        "outcome",
        "latency_s",
        "usage",
    }
    replay = ReplayClient.from_dialogs([log])
    again = ask_json(replay, PROMPT, SCHEMA, check=exists)
    assert again.value == live.value and again.messages == live.messages
    assert [a.outcome for a in again.attempts] == ["timeout", "json", "ok"]
    assert replay.remaining == 0
    # a changed generator (another prompt) is caught, not silently replayed
    other = ReplayClient.from_dialogs([log])
    with pytest.raises(LLMError, match="replay diverged at answer 1"):
        ask_json(other, [{"role": "user", "content": "Pick up the plate."}], SCHEMA)


def test_max_attempts_must_be_positive(scripted_server):
    from dataforge.errors import UsageError

    with pytest.raises(UsageError):
        ask_json(client_for(scripted_server), PROMPT, SCHEMA, max_attempts=0)
