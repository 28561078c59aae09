"""One HTTP request with a total deadline and a cap on the reply's size (standard library only).

Socket timeouts bound each read, not a request: a server that drips a byte a second never trips
them. Here every socket operation (connect, send, each read of the status line, headers and
body) gets the time left until the request's deadline as its timeout, so a request ends by its
deadline whatever the server does. The body is read in chunks and the request fails as soon as
it exceeds ``max_bytes`` (a declared ``Content-Length`` over the cap fails before any is read).
Each request opens its own connection: the client is safe to share between threads.
"""

from __future__ import annotations

import http.client
import io
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

CHUNK_BYTES = 64 * 1024


class Expired(TimeoutError):
    """The request's deadline passed."""


class TooLarge(Exception):
    """The reply is bigger than ``max_bytes``; ``declared`` is its Content-Length, if sent."""

    def __init__(self, max_bytes: int, declared: int | None = None) -> None:
        super().__init__(f"reply over {max_bytes} bytes")
        self.max_bytes = max_bytes
        self.declared = declared


class ConnectFailed(Exception):
    """No connection could be made (refused, unresolvable, unreachable): nothing was sent."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]  # lower-case names
    body: bytes


class _DeadlineSocket:
    """A connected socket whose every send and read times out at ``deadline`` (monotonic)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def _arm(self) -> None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise Expired("deadline passed")
        self._sock.settimeout(left)

    def sendall(self, data: Any) -> None:
        self._arm()
        self._sock.sendall(data)

    def recv_into(self, buffer: Any) -> int:
        self._arm()
        return self._sock.recv_into(buffer)

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_Reader(self), CHUNK_BYTES)

    def close(self) -> None:
        """Left to :func:`request` (http.client closes the connection of a reply it is still
        reading when the server says ``Connection: close``)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _Reader(io.RawIOBase):
    def __init__(self, sock: _DeadlineSocket) -> None:
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._sock.recv_into(buffer)


class _DeadlineMixin:
    deadline: float = 0.0
    raw: socket.socket | None = None
    sock: Any

    def connect(self) -> None:
        try:
            super().connect()  # type: ignore[misc]
        except TimeoutError:
            raise
        except OSError as exc:
            raise ConnectFailed(str(exc)) from exc
        self.raw = self.sock
        self.sock = _DeadlineSocket(self.sock, self.deadline)


class _HTTP(_DeadlineMixin, http.client.HTTPConnection):
    pass


class _HTTPS(_DeadlineMixin, http.client.HTTPSConnection):
    pass


def request(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    body: bytes | None,
    timeout_s: float,
    max_bytes: int,
) -> Response:
    """Send one request and read the whole reply within ``timeout_s`` seconds in all.

    Raises :class:`Expired` (deadline), :class:`ConnectFailed` (no connection; the cause as
    ``__cause__``), :class:`TooLarge`, ``OSError`` (connection lost) or
    ``http.client.HTTPException`` (not HTTP)."""
    parts = urlsplit(url)
    deadline = time.monotonic() + timeout_s
    cls = _HTTPS if parts.scheme == "https" else _HTTP
    conn = cls(parts.hostname or "", parts.port, timeout=timeout_s)
    conn.deadline = deadline
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request(method, target, body=body, headers=dict(headers))
        resp = conn.getresponse()
        declared = resp.getheader("Content-Length", "")
        if declared.strip().isdigit() and int(declared) > max_bytes:
            raise TooLarge(max_bytes, int(declared))
        data = bytearray()
        while True:
            chunk = resp.read(min(CHUNK_BYTES, max_bytes + 1 - len(data)))
            if not chunk:
                break
            data += chunk
            if len(data) > max_bytes:
                raise TooLarge(max_bytes)
        names = {k.lower(): v for k, v in resp.getheaders()}
        return Response(resp.status, names, bytes(data))
    except TimeoutError as exc:
        raise Expired("deadline passed") from exc
    finally:
        conn.close()
        if conn.raw is not None:
            conn.raw.close()
