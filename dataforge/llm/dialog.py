"""The bounded ask-validate-retry loop, and its log.

:func:`ask_json` sends a conversation, reads one JSON object out of the answer
(:func:`~dataforge.llm.answers.parse_json_answer`), lets the caller check it against the world
(``check(value) -> problem or None``), and on any problem appends the answer and a feedback
message and asks again, at most ``max_attempts`` calls in all.

The log is small and replayable. Each :class:`Attempt` records only the messages that were new
in its request (the caller's messages for the first one, then the previous answer's feedback),
so a conversation is never stored twice; :attr:`DialogResult.messages` is the whole conversation
in memory, and :meth:`DialogResult.from_dict` rebuilds it from the log. :class:`ReplayClient`
answers from a log instead of a server (``dataforge reproduce`` without an LLM).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Protocol

from dataforge.errors import UsageError
from dataforge.llm.answers import AnswerError, parse_json_answer
from dataforge.llm.client import ChatReply, LLMError, LLMTimeout, retry_delay

Message = dict[str, Any]
Check = Callable[[dict[str, Any]], "str | None"]

SERVER_RETRIES = 2
"""How often :func:`ask_json` sends a request again after an HTTP 5xx or 429 answer (not logged
as attempts: the server failed, not the model) before it raises."""

RETRY_BACKOFF_S = 1.0
"""Wait before server retry n (0-based): ``RETRY_BACKOFF_S * 2**n`` seconds, or the server's
``Retry-After`` (at most ``client.RETRY_AFTER_MAX_S``)."""

OUTCOMES = ("ok", "json", "schema", "check", "timeout")
"""What an attempt came to: a usable answer, no/broken JSON, a schema violation, a problem found
by the caller's check, or no answer within the client's timeout."""


class Chat(Protocol):
    """What :func:`ask_json` needs of a client: :class:`~dataforge.llm.client.ChatClient`,
    :class:`ReplayClient`, or a test double."""

    def chat(self, messages: list[Message]) -> ChatReply: ...


@dataclass(frozen=True)
class Attempt:
    """One request of a dialog and what came of it (all plain JSON values).

    ``new_messages``: the messages added to the conversation since the previous request (for the
    first, the caller's messages from ``logged`` on; empty when a timed-out request is resent).
    ``text``: the raw answer (None after a timeout). ``value``: the parsed object (also for
    ``check`` problems; None for json problems and timeouts). ``problem``: why the answer was not
    used (the feedback sentence of a json/schema problem, the check's text, or the timeout
    message), None when ``outcome == "ok"``.
    """

    new_messages: list[Message]
    text: str | None
    value: dict[str, Any] | None
    problem: str | None
    outcome: str
    latency_s: float
    usage: dict[str, Any]
    finish_reason: str | None = None
    model: str | None = None
    reasoning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attempt:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class DialogResult:
    """What :func:`ask_json` came to.

    ``ok``: the last attempt gave a value that parsed, validated and passed the check; ``value``
    is that object, else None. ``attempts``: every request, in order. ``messages``: the whole
    conversation (ends with the last answer; append a user message to it and call
    :func:`ask_json` again with ``logged=len(result.messages)`` to go on). ``logged``: how many
    leading messages of ``messages`` an earlier log holds (not repeated in ``attempts``).
    """

    value: dict[str, Any] | None
    ok: bool
    attempts: list[Attempt]
    messages: list[Message]
    logged: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The log: ``ok``, ``value``, ``logged`` and the attempts (not ``messages``: they are
        rebuilt from the attempts, see :meth:`from_dict`)."""
        return {
            "ok": self.ok,
            "value": self.value,
            "logged": self.logged,
            "attempts": [a.to_dict() for a in self.attempts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], earlier: Iterable[Message] = ()) -> DialogResult:
        """Rebuild a result from :meth:`to_dict`; ``earlier`` are the ``logged`` messages that an
        earlier dialog's log holds (its :attr:`messages`)."""
        prefix = [dict(m) for m in earlier]
        if len(prefix) != data.get("logged", 0):
            raise UsageError(
                f"dialog log continues {data.get('logged', 0)} earlier messages, "
                f"{len(prefix)} given"
            )
        attempts = [Attempt.from_dict(a) for a in data["attempts"]]
        return cls(
            value=data["value"],
            ok=data["ok"],
            attempts=attempts,
            messages=conversation(attempts, prefix),
            logged=len(prefix),
        )

    def then(self, user_text: str) -> list[Message]:
        """The conversation followed by a new user message (pass with ``logged=len(messages)``)."""
        return [*self.messages, {"role": "user", "content": user_text}]


def conversation(attempts: Iterable[Attempt], earlier: Iterable[Message] = ()) -> list[Message]:
    """The conversation a log stands for: earlier messages, then each attempt's new messages and
    its answer."""
    messages = [dict(m) for m in earlier]
    for attempt in attempts:
        messages.extend(dict(m) for m in attempt.new_messages)
        if attempt.text is not None:
            messages.append({"role": "assistant", "content": attempt.text})
    return messages


def default_feedback(outcome: str, problem: str) -> str:
    """The user message sent after an unusable answer."""
    if outcome == "check":
        return (
            f"Your answer cannot be carried out: {problem.rstrip('.')}. "
            "Answer again with one JSON object only."
        )
    return f"{problem} Answer again with one JSON object only."


def _plain_messages(messages: Iterable[Mapping[str, Any]]) -> list[Message]:
    out = []
    for m in messages:
        if not isinstance(m, Mapping) or "role" not in m:
            raise UsageError(f"a chat message must be a mapping with a 'role', got {m!r}")
        out.append(json.loads(json.dumps(dict(m))))  # a JSON-clean copy the caller can't mutate
    return out


def ask_json(
    client: Chat,
    messages: Iterable[Mapping[str, Any]],
    schema: Mapping[str, Any],
    check: Check | None = None,
    max_attempts: int = 3,
    *,
    logged: int = 0,
    feedback: Callable[[str, str], str] = default_feedback,
) -> DialogResult:
    """Ask until the answer is one JSON object that validates against ``schema`` and passes
    ``check`` (returns a problem sentence or None; it may also raise :class:`AnswerError`), at
    most ``max_attempts`` requests.

    After an unusable answer the answer and ``feedback(outcome, problem)`` (a user message) are
    appended and the model asked again. A timeout is an attempt too (outcome ``"timeout"``): the
    same conversation is sent again. Running out of attempts is not an error: the result has
    ``ok`` False and every attempt. An HTTP 5xx or 429 answer is sent again, at most
    :data:`SERVER_RETRIES` times after a backoff (:data:`RETRY_BACKOFF_S`, doubling) or the
    server's ``Retry-After``; those retries are not attempts.
    :class:`~dataforge.llm.client.LLMUnavailable` and other
    :class:`~dataforge.llm.client.LLMError` (server gone, HTTP errors, malformed replies) are
    raised, with the result so far as the exception's ``dialog`` attribute.
    """
    if max_attempts < 1:
        raise UsageError(f"max_attempts must be >= 1, got {max_attempts}")
    convo = _plain_messages(messages)
    if not 0 <= logged <= len(convo):
        raise UsageError(f"logged={logged} is outside the {len(convo)} messages given")
    result = DialogResult(value=None, ok=False, attempts=[], messages=convo, logged=logged)
    pending = convo[logged:]  # messages not yet in any attempt's log
    for number in range(1, max_attempts + 1):
        start = time.perf_counter()
        try:
            reply = _chat(client, convo)
        except LLMTimeout as exc:
            result.attempts.append(
                Attempt(
                    new_messages=[dict(m) for m in pending],
                    text=None,
                    value=None,
                    problem=str(exc),
                    outcome="timeout",
                    latency_s=round(time.perf_counter() - start, 6),
                    usage={},
                )
            )
            pending = []
            continue
        except LLMError as exc:
            exc.dialog = result  # type: ignore[attr-defined]
            raise
        value: dict[str, Any] | None = None
        problem: str | None = None
        outcome = "ok"
        try:
            value = parse_json_answer(reply.text, schema)
        except AnswerError as exc:
            value, problem, outcome = exc.value, exc.feedback, exc.kind
            if outcome == "json" and reply.finish_reason == "length":
                problem = f"{problem} It was cut off at the token limit: answer shorter."
        else:
            if check is not None:
                try:
                    problem = check(value) or None
                except AnswerError as exc:
                    problem = exc.feedback
                if problem is not None:
                    outcome = "check"
        result.attempts.append(
            Attempt(
                new_messages=[dict(m) for m in pending],
                text=reply.text,
                value=value,
                problem=problem,
                outcome=outcome,
                latency_s=reply.latency_s,
                usage=dict(reply.usage),
                finish_reason=reply.finish_reason,
                model=reply.model,
                reasoning=reply.reasoning,
            )
        )
        convo.append({"role": "assistant", "content": reply.text})
        if outcome == "ok":
            result.value, result.ok = value, True
            return result
        pending = []
        if number < max_attempts:
            pending = [{"role": "user", "content": feedback(outcome, str(problem))}]
            convo.extend(pending)
    return result


def _chat(client: Chat, convo: list[Message]) -> ChatReply:
    """One answer, sending the request again after HTTP 5xx / 429 answers (with backoff or the
    server's Retry-After), at most :data:`SERVER_RETRIES` times. Timeouts are left to the caller
    (an attempt: the wait was the timeout); other errors are raised."""
    for retry in range(SERVER_RETRIES + 1):
        try:
            return client.chat(copy.deepcopy(convo))
        except LLMTimeout:
            raise
        except LLMError as exc:
            if exc.status is None or retry == SERVER_RETRIES:
                raise
            delay = retry_delay(exc, retry, RETRY_BACKOFF_S)
            if delay is None:
                raise
            time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


class ReplayClient:
    """Answers from a dialog log instead of a server: each :meth:`chat` returns the next
    recorded answer (a recorded timeout raises :class:`LLMTimeout` again) after checking that
    the conversation ends with the messages that attempt recorded. Raises :class:`LLMError` when
    the log runs out or the conversation differs (the generator changed)."""

    def __init__(self, attempts: Iterable[Attempt | Mapping[str, Any]]) -> None:
        self._attempts = [a if isinstance(a, Attempt) else Attempt.from_dict(a) for a in attempts]
        self._next = 0

    @classmethod
    def from_dialogs(cls, dialogs: Iterable[DialogResult | Mapping[str, Any]]) -> ReplayClient:
        attempts: list[Attempt | Mapping[str, Any]] = []
        for d in dialogs:
            attempts.extend(d.attempts if isinstance(d, DialogResult) else d["attempts"])
        return cls(attempts)

    @property
    def remaining(self) -> int:
        return len(self._attempts) - self._next

    def check(self) -> dict[str, Any]:
        return {"replay": True, "attempts": len(self._attempts)}

    def chat(self, messages: list[Message]) -> ChatReply:
        if self._next >= len(self._attempts):
            raise LLMError(f"replay log exhausted after {len(self._attempts)} answers")
        attempt = self._attempts[self._next]
        self._next += 1
        new = _plain_messages(attempt.new_messages)
        if new and _plain_messages(messages[-len(new) :]) != new:
            raise LLMError(
                f"replay diverged at answer {self._next}: the conversation does not end with "
                "the recorded messages"
            )
        if attempt.outcome == "timeout" or attempt.text is None:
            raise LLMTimeout(attempt.problem or "recorded timeout")
        return ChatReply(
            text=attempt.text,
            finish_reason=attempt.finish_reason,
            usage=dict(attempt.usage),
            model=attempt.model,
            latency_s=attempt.latency_s,
            reasoning=attempt.reasoning,
        )
