"""An in-process OpenAI-compatible chat server whose answers are scripted, for the LLM tests.

``GET /v1/models`` lists ``models``; ``POST /v1/chat/completions`` pops the next item of the
script and answers in the real response shape (id, object, created, model, choices, usage).
Script items:

- a string: the assistant's content;
- ``Reply(text, finish_reason)``: content with another finish reason (``"length"``: cut off);
- ``Delay(seconds, then)``: wait, then answer ``then`` (a string or another item): timeouts;
- ``Status(code, message, headers)``: an HTTP error with an OpenAI-style error body (and
  extra headers, e.g. ``{"Retry-After": "1"}``);
- ``Raw(body, status, content_type)``: these bytes as the body (HTML, not JSON, odd shapes);
- ``DROP``: close the connection without answering;
- a callable ``f(request_body) -> item``: decide from the request.

An exhausted script answers HTTP 500 "script exhausted". Every request is recorded in
``requests`` (method, path, parsed body); ``chat_requests`` are the completion bodies.
Use the ``scripted_server`` fixture (a started server, stopped after the test).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass(frozen=True)
class Delay:
    seconds: float
    then: Any = '{"ok": true}'


@dataclass(frozen=True)
class Reply:
    text: str
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Status:
    code: int
    message: str = "scripted server error"
    headers: dict[str, str] | None = None


@dataclass(frozen=True)
class Raw:
    body: bytes
    status: int = 200
    content_type: str = "application/json"


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


DROP = _Drop()


def completion(model: str, text: str, number: int, finish_reason: str = "stop") -> dict:
    """A chat completion body as vLLM and llama.cpp send it."""
    prompt_tokens, completion_tokens = 7, max(1, len(text.split()))
    return {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class ScriptedServer:
    def __init__(self, script: Iterable[Any] = (), models: Iterable[str] = ("test-model",)):
        self.script: list[Any] = list(script)
        self.models = list(models)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._numbers = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ScriptedServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.handle_error = lambda request, address: None  # clients that left early
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The base URL clients take (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- script and records ----------------------------------------------------------------
    def push(self, *items: Any) -> None:
        with self._lock:
            self.script.extend(items)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def last_user_messages(self) -> Iterator[str]:
        """The content of the last user message of each chat request, in order."""
        for body in self.chat_requests:
            users = [m for m in body.get("messages", []) if m.get("role") == "user"]
            yield users[-1]["content"] if users else ""

    # -- serving -----------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = h.path.split("?", 1)[0]
        with self._lock:
            self.requests.append({"method": method, "path": path, "body": body})
        if method == "GET" and path.rstrip("/") == "/v1/models":
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "scripted"}
                for m in self.models
            ]
            self._send(h, 200, {"object": "list", "data": data})
            return
        if method == "POST" and path == "/v1/chat/completions" and isinstance(body, dict):
            model = body.get("model")
            if model not in self.models:
                self._send_error(h, 404, f"The model `{model}` does not exist.")
                return
            with self._lock:
                item = self.script.pop(0) if self.script else Status(500, "script exhausted")
            self._answer(h, body, item)
            return
        self._send_error(h, 404, f"no route {method} {path}")

    def _answer(self, h: BaseHTTPRequestHandler, body: dict, item: Any) -> None:
        while True:
            if callable(item) and not isinstance(item, _Drop):
                item = item(body)
            elif isinstance(item, Delay):
                if self._stopping.wait(item.seconds):
                    return
                item = item.then
            else:
                break
        if item is DROP:
            h.close_connection = True
            return
        if isinstance(item, Status):
            self._send_error(h, item.code, item.message, item.headers)
            return
        if isinstance(item, Raw):
            self._send_bytes(h, item.status, item.body, item.content_type)
            return
        reply = item if isinstance(item, Reply) else Reply(str(item))
        payload = completion(body["model"], reply.text, next(self._numbers), reply.finish_reason)
        self._send(h, 200, payload)

    @classmethod
    def _send(
        cls,
        h: BaseHTTPRequestHandler,
        code: int,
        payload: dict,
        headers: dict[str, str] | None = None,
    ) -> None:
        cls._send_bytes(h, code, json.dumps(payload).encode(), "application/json", headers)

    @staticmethod
    def _send_bytes(
        h: BaseHTTPRequestHandler,
        code: int,
        data: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        try:
            h.send_response(code)
            h.send_header("Content-Type", content_type)
            h.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                h.send_header(name, value)
            h.end_headers()
            h.wfile.write(data)
        except OSError:  # the client gave up (timeout) before the answer
            pass

    def _send_error(
        self,
        h: BaseHTTPRequestHandler,
        code: int,
        message: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        error = {"message": message, "type": "ScriptedError", "param": None, "code": code}
        self._send(h, code, {"error": error, "object": "error"}, headers)


@pytest.fixture(name="scripted_server")
def scripted_server_fixture() -> Iterator[ScriptedServer]:
    """A started :class:`ScriptedServer` with an empty script (``push`` the answers)."""
    with ScriptedServer() as server:
        yield server


def assert_second_run_locked_out(
    args: list[str], server: ScriptedServer, out: Any, ids: list[str], capsys: Any
) -> None:
    """Run ``dataforge *args`` (an evaluate writing ``out``) in a subprocess and, once it has
    sent its first request to ``server``, the same command in this process: the second exits 2
    in one line naming the first's pid; the first finishes (exit 0) having asked and written
    every id of ``ids`` exactly once, and leaves no lock file."""
    import subprocess

    from dfhelpers import dataforge_cmd

    from dataforge.cli.main import main

    first = subprocess.Popen(dataforge_cmd(*args), stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not server.chat_requests:  # the first run is asking
            assert first.poll() is None and time.monotonic() < deadline, "first run did not ask"
            time.sleep(0.02)
        capsys.readouterr()
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"error: {out} is being written by another dataforge run (pid {first.pid} " in err
        assert first.wait(timeout=60) == 0, first.stderr.read() if first.stderr else ""
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert len(server.chat_requests) == len(ids)  # each asked once, by the first run only
    written = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(written) == sorted(ids)
    assert not out.with_name(out.name + ".lock").exists()
