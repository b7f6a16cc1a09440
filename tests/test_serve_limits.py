"""`copal serve` stays bounded whatever a client does: sessions per URL and in total (one more
gets a page saying why and starts no app), sessions closed after a while without input (pings
are not input), terminal sizes clamped, open connections capped and request heads on a deadline.

The server listens on a free loopback port exactly as `copal serve` runs it (`running`, behind
its connection gate), with small limits so each test takes seconds. App processes are replaced
by `FakeAppService`, which records what each session was asked. Waits are bounded polls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import aiohttp
import pytest

from copal_tui.serve.auth import Grant
from copal_tui.serve.limits import ServeLimits
from copal_tui.serve.server import CopalServer
from tests.test_serve_auth import (  # noqa: F401 - fake_apps is a fixture
    FakeAppService,
    client,
    fake_apps,
    free_port,
    running,
    token_of,
)

DEADLINE_S = 20


def limited(db, **limits: float) -> tuple[CopalServer, dict[str, str]]:
    """A label server with these limits and a URL each for ana and ben; name -> token."""
    server = CopalServer(db, mode="label", port=free_port(), limits=ServeLimits(**limits))
    return server, {n: token_of(server.issue(Grant("label", n))) for n in ("ana", "ben")}


async def until(what: str, ready: Callable[[], bool]) -> None:
    end = time.monotonic() + DEADLINE_S
    while not ready():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def session(http: aiohttp.ClientSession, base: str, token: str,
                  query: str = "") -> aiohttp.ClientWebSocketResponse:
    """A websocket session opened with `token`, once the server answers on it."""
    ws = await http.ws_connect(f"{base}/ws?token={token}{query}", origin=base)
    await ws.send_json(["ping", "up"])
    assert await ws.receive_json(timeout=DEADLINE_S) == ["pong", "up"]
    return ws


async def refused(http: aiohttp.ClientSession, base: str, token: str) -> int:
    with pytest.raises(aiohttp.WSServerHandshakeError) as refusal:
        await http.ws_connect(f"{base}/ws?token={token}", origin=base)
    return refusal.value.status


async def page(http: aiohttp.ClientSession, base: str, token: str) -> tuple[int, str]:
    async with http.get(f"{base}/?token={token}") as r:
        return r.status, await r.text()


async def test_a_url_gets_its_share_of_sessions_and_a_page_saying_why(initialised, fake_apps):  # noqa: F811
    server, tokens = limited(initialised, sessions_per_token=2, sessions_total=3)
    async with running(server) as base, client() as http:
        ana = [await session(http, base, tokens["ana"]) for _ in range(2)]
        assert await refused(http, base, tokens["ana"]) == 429
        status, text = await page(http, base, tokens["ana"])
        assert status == 429 and "This URL already has 2 sessions open" in text
        assert 'id="terminal"' not in text  # not the app's page: no websocket is tried

        ben = await session(http, base, tokens["ben"])  # another URL still gets its session
        assert await refused(http, base, tokens["ben"]) == 503  # but then the server is full
        status, text = await page(http, base, tokens["ben"])
        assert status == 503 and "The server already runs 3 sessions" in text
        assert len(fake_apps) == 3  # no app was started for any refused session

        await ana[0].close()  # a closed tab gives its slot back
        await until("ana's slot back", lambda: server.sessions.of(
            server.tokens.match(tokens["ana"]).digest) == 1)
        ana[0] = await session(http, base, tokens["ana"])
        assert len(fake_apps) == 4
        for ws in (*ana, ben):
            await ws.close()
    assert all("--annotator=ana" in c for c in fake_apps[:2] + fake_apps[3:])


async def test_a_session_without_input_is_closed_and_its_app_stopped(initialised, fake_apps):  # noqa: F811
    server, tokens = limited(initialised, sessions_per_token=1, idle_close_s=0.5)
    async with running(server) as base, client() as http:
        ws = await session(http, base, tokens["ana"])  # a ping only: not input
        closing = await ws.receive(timeout=DEADLINE_S)
        assert closing.type == aiohttp.WSMsgType.CLOSE
        assert "without input" in closing.extra
        await until("the app stopped", lambda: FakeAppService.stopped == 1)
        assert server.sessions.total() == 0
        again = await session(http, base, tokens["ana"])  # the slot is free again
        await again.close()
    assert len(fake_apps) == 2


async def test_input_keeps_a_session_open(initialised, fake_apps):  # noqa: F811
    idle_s = 1.5
    server, tokens = limited(initialised, idle_close_s=idle_s)
    async with running(server) as base, client() as http:
        ws = await session(http, base, tokens["ana"])
        typed = 0
        # Keys for more than twice the idle limit: the session stays.
        end = time.monotonic() + 2.5 * idle_s
        while time.monotonic() < end:
            await ws.send_json(["stdin", "j"])
            typed += 1
            await asyncio.sleep(0.2)
        await ws.send_json(["ping", "still"])
        assert await ws.receive_json(timeout=DEADLINE_S) == ["pong", "still"]
        assert not ws.closed and FakeAppService.stopped == 0
        await until("the keys at the app", lambda: len(FakeAppService.stdin) == typed)
        closing = await ws.receive(timeout=DEADLINE_S)  # then none: closed
        assert closing.type == aiohttp.WSMsgType.CLOSE
    assert FakeAppService.stdin == [b"j"] * typed


async def test_terminal_sizes_are_clamped_and_bad_messages_ignored(initialised, fake_apps):  # noqa: F811
    server, tokens = limited(initialised)
    async with running(server) as base, client() as http:
        ws = await session(http, base, tokens["ana"], "&width=100000000&height=-5")
        for bad in ("not json", "[]", "{}", '[5, "x"]', '["stdin", 5]', '["resize", "big"]'):
            await ws.send_str(bad)
        await ws.send_json(["resize", {"width": 10**12, "height": "many"}])
        await ws.send_json(["ping", "alive"])  # the session survived all of them
        assert await ws.receive_json(timeout=DEADLINE_S) == ["pong", "alive"]
        await ws.close()
    assert FakeAppService.sizes == [(500, 1), (500, 24)]
    assert FakeAppService.stdin == []


async def read_all(reader: asyncio.StreamReader) -> bytes:
    return await asyncio.wait_for(reader.read(), DEADLINE_S)


async def test_open_connections_are_capped(initialised):
    server, _ = limited(initialised, sessions_total=2, max_connections=40,
                        header_timeout_s=DEADLINE_S * 2)
    async with running(server):
        idle = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(40)]
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            answer = await read_all(reader)  # answered and closed without a request
            writer.close()
            assert answer.startswith(b"HTTP/1.1 503 ") and b"too many open connections" in answer

            idle.pop()[1].close()  # one leaves: a new connection is served again

            async def served() -> bytes:
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                try:
                    return await read_all(reader)
                finally:
                    writer.close()

            end = time.monotonic() + DEADLINE_S
            while (answer := await served()).startswith(b"HTTP/1.1 503 "):
                assert time.monotonic() < end, "the closed connection was never counted out"
                await asyncio.sleep(0.05)
            assert answer.startswith(b"HTTP/1.1 401 ")
        finally:
            for _, writer in idle:
                writer.close()


async def trickle(port: int, first: bytes) -> bytes:
    """Sends `first`, then one header line every 0.1 s and never the blank line ending the
    head; returns what the server sent before closing (the loop stops at the deadline)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(first)
    received = b""
    end = time.monotonic() + DEADLINE_S
    try:
        while time.monotonic() < end:
            try:
                chunk = await asyncio.wait_for(reader.read(4096), 0.1)
            except TimeoutError:
                writer.write(b"X-Slow: 1\r\n")
                continue
            if not chunk:
                return received
            received += chunk
        raise AssertionError(f"still open after {DEADLINE_S} s; received {received!r}")
    finally:
        writer.close()


async def test_slow_headers_are_cut_off(initialised, fake_apps):  # noqa: F811
    server, tokens = limited(initialised, header_timeout_s=0.5)
    async with running(server) as base, client() as http:
        # A first request trickled from the start, and a second one after a complete first
        # request on a kept-alive connection: both connections are closed.
        slow = [trickle(server.port, b"GET / HTTP/1.1\r\nHost: x\r\n") for _ in range(60)]
        kept = trickle(server.port, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                                    b"GET / HTTP/1.1\r\nHost: x\r\n")
        answers = await asyncio.gather(*slow, kept)
        assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers[:-1])
        assert answers[-1].startswith(b"HTTP/1.1 401 ")  # the first request was answered
        # A session lives on past the deadline: only request heads are timed.
        ws = await session(http, base, tokens["ana"])
        await asyncio.sleep(1.0)
        await ws.send_json(["ping", "later"])
        assert await ws.receive_json(timeout=DEADLINE_S) == ["pong", "later"]
        await ws.close()


def test_limits_must_be_positive_and_leave_room_for_the_page():
    for bad in ({"sessions_per_token": 0}, {"idle_close_s": float("nan")},
                {"header_timeout_s": -1.0}, {"max_connections": 32}):
        with pytest.raises(ValueError, match="--max|--idle|--header"):
            ServeLimits(**bad)

