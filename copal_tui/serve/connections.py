"""The listening socket's guard: a cap on open connections and a deadline for a request's head.

aiohttp holds a connection for as long as its client trickles header bytes, and accepts as
many connections as the operating system hands it, so a few thousand slow sockets (slowloris)
hold the server's file descriptors and memory without ever sending a request. `ConnectionGate`
is the protocol factory the listening socket uses instead of aiohttp's: past the cap a new
connection gets a 503 and is closed at once, and a connection that has not finished its first
request head within the deadline gets a 408 and is closed. The heads of later requests on a
kept-alive connection are bounded by aiohttp's keep-alive timeout, which `CopalServer` sets to
the same deadline.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

# The blank line that ends a request head (a bare LF is accepted too: never cut off a request
# that the parser would take).
_HEAD_END = re.compile(rb"\r?\n\r?\n")


def _plain(status: str, text: str, *extra: str) -> bytes:
    body = text.encode()
    head = [f"HTTP/1.1 {status}", "Content-Type: text/plain; charset=utf-8",
            f"Content-Length: {len(body)}", "Connection: close", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


BUSY = _plain("503 Service Unavailable", "copal serve: too many open connections\n",
              "Retry-After: 5")
TOO_SLOW = _plain("408 Request Timeout", "copal serve: the request headers took too long\n")


class ConnectionGate:
    """Wraps aiohttp's protocol factory: at most `max_connections` open, heads on a deadline."""

    def __init__(self, factory: Callable[[], asyncio.Protocol], *, max_connections: int,
                 head_timeout_s: float) -> None:
        self._factory = factory
        self.max_connections = max_connections
        self.head_timeout_s = head_timeout_s
        # Counted when the protocol is made, not when aiohttp registers the connection: the
        # event loop accepts a burst of connections before any of them is registered.
        self.open = 0

    def __call__(self) -> asyncio.Protocol:
        if self.open >= self.max_connections:
            return _Refused(BUSY)
        self.open += 1
        return _Gated(self, self._factory())

    def _closed(self) -> None:
        self.open -= 1


class _Refused(asyncio.Protocol):
    """Answers one fixed response and closes, reading nothing."""

    def __init__(self, answer: bytes) -> None:
        self._answer = answer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(self._answer)
        transport.close()


class _Gated(asyncio.Protocol):
    """aiohttp's protocol for one connection, which must finish its first head in time."""

    def __init__(self, gate: ConnectionGate, inner: asyncio.Protocol) -> None:
        self._gate = gate
        self._inner = inner
        self._transport: asyncio.Transport | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._tail = b""  # the last bytes seen, in case the blank line is split across reads
        self._counted = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._deadline = asyncio.get_running_loop().call_later(self._gate.head_timeout_s,
                                                               self._too_slow)
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._deadline is not None:
            seen = self._tail + data
            if _HEAD_END.search(seen):
                self._deadline.cancel()
                self._deadline = None
                self._tail = b""
            else:
                self._tail = seen[-3:]
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if self._counted:
            self._counted = False
            self._gate._closed()
        self._inner.connection_lost(exc)

    def _too_slow(self) -> None:
        self._deadline = None
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(TOO_SLOW)
            self._transport.close()
