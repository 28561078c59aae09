"""Every LLM path survives a misbehaving server (issue 36): HTML or non-JSON 200s, replies of the
wrong shape, 429 with Retry-After, 5xx, a server dripping bytes, one that accepts and never
answers, oversized replies, absurdly nested JSON, and Ctrl-C while requests hang.

Servers on 127.0.0.1 in threads: ``ScriptedServer`` (tests/scripted_llm.py) for HTTP-level
behaviours, :class:`RawServer` below for what needs the raw socket (drips, hangs, 50 MB)."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scripted_llm import Raw, ScriptedServer, Status, completion, scripted_server_fixture  # noqa: F401

from dataforge.llm import (
    AnswerError,
    ChatClient,
    LLMError,
    LLMSettings,
    LLMTimeout,
    ask_json,
    batch,
    client,
    dialog,
    parse_json_answer,
)
from dataforge.llm.batch import answer_all, load_done
from dataforge.llm.client import LLMBadReply

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "RETRY_BACKOFF_S", 0.01)
    monkeypatch.setattr(dialog, "RETRY_BACKOFF_S", 0.01)


def make_client(url: str, timeout_s: float = 5.0) -> ChatClient:
    return ChatClient(LLMSettings(url=url, model="test-model", timeout_s=timeout_s))


def run_batch(url: str, n: int, out: Path, *, timeout_s: float = 5.0, **kw: Any):
    items = [{"id": f"q{i}"} for i in range(n)]
    return answer_all(
        items,
        client=make_client(url, timeout_s),
        messages=lambda it: [{"role": "user", "content": it["id"]}],
        record=lambda it, text: {"id": it["id"], "answer": text, "error": None},
        out=out,
        label="test",
        total=n,
        quiet=True,
        **kw,
    )


def whole_lines(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), "the last record is torn"
    return [json.loads(line) for line in raw.decode().splitlines()]


# -- a raw socket server -----------------------------------------------------------------------


class RawServer:
    """Accepts on 127.0.0.1; per connection, reads one HTTP request, then runs
    ``behave(conn, number)`` (number: 0-based count of requests) in a daemon thread."""

    def __init__(self, behave: Callable[[socket.socket, int], None]) -> None:
        self.behave = behave
        self.stopping = threading.Event()
        self.requests = 0
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.05)
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(body) < length:
                body += conn.recv(65536)
            with self._lock:
                number = self.requests
                self.requests += 1
            self.behave(conn, number)
        except OSError:
            pass

    def close(self) -> None:
        self.stopping.set()
        self._sock.close()
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()


@pytest.fixture
def raw_server() -> Iterator[Callable[[Callable[[socket.socket, int], None]], RawServer]]:
    servers: list[RawServer] = []

    def start(behave: Callable[[socket.socket, int], None]) -> RawServer:
        servers.append(RawServer(behave))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def ok_response(text: str = '{"a": 1}', number: int = 1) -> bytes:
    body = json.dumps(completion("test-model", text, number)).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n" + body


# -- replies that are not chat completions -----------------------------------------------------


@pytest.mark.parametrize(
    ("item", "cause"),
    [
        (
            Raw(b"<html><body><h1>502 Bad Gateway</h1></body></html>", 200, "text/html"),
            "not JSON (text/html): <html><body><h1>502 Bad Gateway</h1></body></html>",
        ),
        (
            Raw(b"this is not json {", 200, "application/json"),
            "not JSON (application/json): this is not json {",
        ),
        (Raw(b"", 200), "not JSON (application/json): an empty body"),
        (Raw(b"[1, 2]"), "a list, not a chat completion object"),
        (Raw(b'{"choices": {"0": 1}}'), "'choices' is an object, not a list"),
        (Raw(b'{"choices": ["text"]}'), "'choices[0].message' is null, not an object"),
        (
            Raw(b'{"choices": [{"message": "hi"}]}'),
            "'choices[0].message' is a string, not an object",
        ),
    ],
)
def test_a_reply_that_is_no_chat_completion_is_a_one_line_llm_error(
    scripted_server: ScriptedServer, item: Raw, cause: str
) -> None:
    scripted_server.push(item)
    with pytest.raises(LLMBadReply) as err:
        make_client(scripted_server.url).chat(HI)
    assert str(err.value) == f"LLM server at {scripted_server.url} sent a malformed reply: {cause}"
    assert not err.value.retryable


def completion_with(content: Any) -> Raw:
    payload = completion("test-model", "x", 1)
    payload["choices"][0]["message"]["content"] = content
    return Raw(json.dumps(payload).encode())


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (["a", "b"], "a list"),
        (42, "a number"),
        (1.5, "a number"),
        ({"text": "hi"}, "an object"),
        (True, "a boolean"),
    ],
)
def test_content_of_the_wrong_type_is_a_malformed_reply(
    scripted_server: ScriptedServer, content: Any, kind: str
) -> None:
    scripted_server.push(completion_with(content))
    with pytest.raises(LLMBadReply, match=f"malformed reply: 'content' is {kind}, not a string$"):
        make_client(scripted_server.url).chat(HI)


def test_null_content_is_an_empty_answer(scripted_server: ScriptedServer) -> None:
    # the OpenAI shape allows null (vLLM sends it when the reasoning took every token)
    scripted_server.push(completion_with(None))
    assert make_client(scripted_server.url).chat(HI).text == ""


def test_malformed_replies_fail_the_item_not_the_run(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    scripted_server.push(
        Raw(b"<html>oops</html>", 200, "text/html"), completion_with([1]), '{"a": 3}'
    )
    out = tmp_path / "out.jsonl"
    result = run_batch(scripted_server.url, 3, out, retries=2)
    assert (result.answered, result.malformed, result.failed) == (1, 0, 2)
    assert len(scripted_server.chat_requests) == 3  # a malformed reply is not asked again
    assert result.last_error == (
        f"LLM server at {scripted_server.url} sent a malformed reply: 'content' is a list, "
        "not a string"
    )
    assert [r["id"] for r in whole_lines(out)] == ["q2"]

    scripted_server.push(Raw(b"<html>oops</html>", 200, "text/html"))
    with pytest.raises(LLMBadReply) as err:
        ask_json(make_client(scripted_server.url), HI, SCHEMA)
    assert err.value.dialog.attempts == []  # type: ignore[attr-defined]


# -- 429 and 5xx -------------------------------------------------------------------------------


def test_429_is_retried_after_retry_after(scripted_server: ScriptedServer, tmp_path: Path) -> None:
    scripted_server.push(Status(429, "slow down", {"Retry-After": "1"}), '{"a": 1}')
    start = time.monotonic()
    result = run_batch(scripted_server.url, 1, tmp_path / "out.jsonl", retries=2)
    elapsed = time.monotonic() - start
    assert (result.answered, result.failed) == (1, 0)
    assert 1.0 <= elapsed < 2.0  # the server's second, not the 0.01 s backoff
    assert len(scripted_server.chat_requests) == 2


def test_retry_after_is_capped_and_read_as_a_date(
    scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client, "RETRY_AFTER_MAX_S", 0.3)
    scripted_server.push(Status(429, "slow down", {"Retry-After": "3600"}), '{"a": 1}')
    start = time.monotonic()
    result = ask_json(make_client(scripted_server.url), HI, SCHEMA)
    assert 0.3 <= time.monotonic() - start < 1.5
    assert result.ok and len(result.attempts) == 1  # the server's failure is no attempt

    date = "Wed, 21 Oct 2015 07:28:00 GMT"  # in the past: send again at once
    assert client._retry_after(date) == 0.0
    assert client._retry_after("2.5") == 2.5
    assert client._retry_after("soon") is None and client._retry_after(None) is None


def test_5xx_then_success_in_a_batch(scripted_server: ScriptedServer, tmp_path: Path) -> None:
    scripted_server.push(Status(503, "loading"), Status(500, "oom"), '{"a": 1}')
    result = run_batch(scripted_server.url, 1, tmp_path / "out.jsonl", retries=2)
    assert (result.answered, result.failed) == (1, 0)
    assert len(scripted_server.chat_requests) == 3


def test_5xx_then_success_in_ask_json(scripted_server: ScriptedServer) -> None:
    scripted_server.push(Status(502, "bad gateway"), Status(429), '{"a": 2}')
    result = ask_json(make_client(scripted_server.url), HI, SCHEMA)
    assert result.ok and result.value == {"a": 2}
    assert [a.outcome for a in result.attempts] == ["ok"]
    assert len(scripted_server.chat_requests) == 3

    scripted_server.push(*[Status(500, "still broken")] * (dialog.SERVER_RETRIES + 1))
    with pytest.raises(LLMError, match=r"HTTP 500: still broken$") as err:
        ask_json(make_client(scripted_server.url), HI, SCHEMA)
    assert err.value.status == 500
    assert len(scripted_server.chat_requests) == 3 + dialog.SERVER_RETRIES + 1


def test_the_spamem_planner_retries_5xx(scripted_server: ScriptedServer) -> None:
    from dataforge.pipelines.spamem.llm_planner import LLMPlanner
    from dataforge.pipelines.spamem.planner import PlanState

    class Rules:
        def check(self, action: Any, graph: Any) -> str | None:
            return None

    planner = LLMPlanner(Rules(), LLMSettings(url=scripted_server.url, model="test-model"))  # type: ignore[arg-type]
    planner.begin("seq", np.random.default_rng(0))
    planner.prompt = lambda state: [{"role": "user", "content": "plan"}]  # type: ignore[method-assign]
    answer = '{"action": "spawn", "object": "Mug", "receptacle": "Table|1"}'
    scripted_server.push(Status(503, "warming up"), Status(500, "oom"), answer)
    proposal = planner.propose(PlanState("seq", 1, 3, None, ()), None)  # type: ignore[arg-type]
    assert proposal.action is not None and proposal.action.object == "Mug"
    assert [a["outcome"] for a in proposal.record["dialog"]["attempts"]] == ["ok"]
    assert len(scripted_server.chat_requests) == 3


# -- deadlines ---------------------------------------------------------------------------------


def drip(
    payload: bytes, every_s: float, after_headers: bool
) -> Callable[[socket.socket, int], None]:
    def behave(conn: socket.socket, number: int) -> None:
        head, _, body = payload.partition(b"\r\n\r\n")
        start = 0
        if after_headers:
            conn.sendall(head + b"\r\n\r\n")
            payload_left = body
        else:
            payload_left = payload
        while start < len(payload_left):
            conn.sendall(payload_left[start : start + 1])
            start += 1
            time.sleep(every_s)

    return behave


@pytest.mark.parametrize("after_headers", [False, True], ids=["status-line", "body"])
def test_a_dripping_server_is_cut_off_at_the_deadline(raw_server, after_headers: bool) -> None:
    server = raw_server(drip(ok_response(), 1.0, after_headers))
    timeout = 1.5  # longer than the gap between bytes: a per-read timeout never fires
    start = time.monotonic()
    with pytest.raises(LLMTimeout) as err:
        make_client(server.url, timeout).chat(HI)
    elapsed = time.monotonic() - start
    assert timeout <= elapsed < timeout + 0.5
    assert str(err.value) == f"LLM server at {server.url} did not answer within 1.5 s (timeout_s)"


def test_check_has_a_deadline_too(raw_server) -> None:
    server = raw_server(drip(ok_response(), 0.3, False))
    start = time.monotonic()
    with pytest.raises(LLMTimeout, match="did not answer GET /models within 1 s"):
        make_client(server.url, 1.0).check()
    assert time.monotonic() - start < 1.5


def never(conn: socket.socket, number: int) -> None:
    while conn.recv(1):  # until the client gives up
        pass


def test_a_server_that_never_answers_stops_the_batch_early(raw_server, tmp_path: Path) -> None:
    server = raw_server(never)
    n, timeout, retries = 40, 0.2, 1
    start = time.monotonic()
    result = run_batch(server.url, n, tmp_path / "out.jsonl", timeout_s=timeout, retries=retries)
    elapsed = time.monotonic() - start
    stop = batch.MAX_CONSECUTIVE_FAILURES
    assert (result.answered, result.malformed, result.failed) == (0, 0, n)
    assert server.requests == stop * (retries + 1)  # the rest was never asked
    assert elapsed < stop * (retries + 1) * timeout + 1.5
    assert result.stopped == f"{stop} items in a row got no reply"
    assert result.last_error == (
        f"stopped early: {stop} items in a row got no reply (0 of {n} items answered, {n} not; "
        f"last error: LLM server at {server.url} did not answer within 0.2 s (timeout_s))"
    )
    assert whole_lines(tmp_path / "out.jsonl") == []


def test_an_early_stop_is_bounded_with_workers(raw_server, tmp_path: Path) -> None:
    server = raw_server(never)
    start = time.monotonic()
    result = run_batch(server.url, 40, tmp_path / "out.jsonl", timeout_s=0.2, retries=0, workers=3)
    assert result.failed == 40 and result.stopped is not None
    # at most the workers' requests in flight when the fifth failure stopped the batch
    assert batch.MAX_CONSECUTIVE_FAILURES <= server.requests < batch.MAX_CONSECUTIVE_FAILURES + 3
    assert time.monotonic() - start < 2.5


def test_only_failures_in_a_row_stop_a_batch(scripted_server: ScriptedServer, tmp_path) -> None:
    below = batch.MAX_CONSECUTIVE_FAILURES - 1
    bad = [Status(400, "bad request")] * below
    scripted_server.push(*bad, '{"a": 1}', *bad, '{"a": 2}')
    result = run_batch(scripted_server.url, 2 * below + 2, tmp_path / "out.jsonl", retries=2)
    assert (result.answered, result.failed, result.stopped) == (2, 2 * below, None)
    assert (
        result.last_error == f"LLM server at {scripted_server.url} answered HTTP 400: bad request"
    )


# -- oversized replies -------------------------------------------------------------------------

FIFTY_MB = 50 * 2**20


def flood(declare: bool, sent: list[int]) -> Callable[[socket.socket, int], None]:
    """50 MB of body, with or without a Content-Length; ``sent`` counts what got out."""

    def behave(conn: socket.socket, number: int) -> None:
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        head += f"Content-Length: {FIFTY_MB}\r\n" if declare else "Connection: close\r\n"
        conn.sendall(head.encode() + b"\r\n")
        block = b'{"choices": ["' + b"x" * (2**20 - 14)
        for _ in range(FIFTY_MB // len(block)):
            conn.sendall(block)
            sent[0] += len(block)

    return behave


@pytest.mark.parametrize("declare", [True, False], ids=["content-length", "streamed"])
def test_an_oversized_reply_is_refused_without_reading_it(raw_server, declare: bool) -> None:
    sent = [0]
    server = raw_server(flood(declare, sent))
    tracemalloc.start()
    try:
        with pytest.raises(LLMBadReply) as err:
            make_client(server.url).chat(HI)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    cap = client.MAX_REPLY_BYTES
    assert cap == 16 * 2**20
    size = f" (Content-Length {FIFTY_MB})" if declare else ""
    assert str(err.value) == (
        f"LLM server at {server.url} sent a reply over 16 MiB{size}; not read (MAX_REPLY_BYTES)"
    )
    # traced in every thread, the server's 1 MiB blocks too: declared, the body is not read;
    # streamed, the client holds at most the cap (and a chunk); never the 50 MB
    assert peak < (cap // 4 if declare else 2 * cap)
    assert sent[0] < FIFTY_MB  # the client stopped reading: the server could not send it all


# -- absurd nesting ----------------------------------------------------------------------------

DEEP = '{"a": ' * 100_000 + "1" + "}" * 100_000


@pytest.mark.parametrize(
    "text",
    [DEEP, "[" * 100_000 + "]" * 100_000, "Sure: " + DEEP, '{"a": ' + "[" * 950 + "]" * 950 + "}"],
)
def test_deep_nesting_is_a_malformed_answer(text: str) -> None:
    with pytest.raises(AnswerError) as err:
        parse_json_answer(text, SCHEMA)
    assert "\n" not in str(err.value)


def test_deep_nesting_through_the_client_and_the_loop(scripted_server: ScriptedServer) -> None:
    scripted_server.push(DEEP, '{"a": 5}')
    result = ask_json(make_client(scripted_server.url), HI, SCHEMA)
    assert [a.outcome for a in result.attempts] == ["json", "ok"]
    assert result.attempts[0].problem == "Your answer was not valid JSON: nested too deeply."

    scripted_server.push(Raw(b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"))
    with pytest.raises(LLMBadReply, match="malformed reply: not JSON"):
        make_client(scripted_server.url).chat(HI)


# -- Ctrl-C ------------------------------------------------------------------------------------

SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from dataforge.llm import ChatClient, LLMSettings
    from dataforge.llm.batch import answer_all

    url, out, workers = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    client = ChatClient(LLMSettings(url=url, model="test-model", timeout_s=60))
    items = [{"id": f"q{i}"} for i in range(20)]
    try:
        answer_all(items, client=client, out=out, label="t", total=20, workers=workers,
                   messages=lambda it: [{"role": "user", "content": it["id"]}],
                   record=lambda it, text: {"id": it["id"], "answer": text, "error": None},
                   retries=2, quiet=True)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    """
)


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_ctrl_c_stops_a_batch_against_a_hung_server_at_once(
    raw_server, tmp_path: Path, workers: int
) -> None:
    answered = 3

    def behave(conn: socket.socket, number: int) -> None:
        if number < answered:
            conn.sendall(ok_response(f"answer {number}", number))
        else:
            never(conn, number)

    server = raw_server(behave)
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, server.url, str(out), str(workers)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        # every worker is in a hung request once the server holds `workers` unanswered ones
        while server.requests < answered + workers or not out.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the batch never reached the hung server"
            time.sleep(0.05)
        time.sleep(0.2)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=10)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert elapsed < 2.0
    assert stderr.decode().strip().splitlines()[-1] == "interrupted"
    records = whole_lines(out)
    assert len(records) == answered and len({r["id"] for r in records}) == answered
    assert load_done(out) == {r["id"] for r in records}  # a rerun resumes from here
