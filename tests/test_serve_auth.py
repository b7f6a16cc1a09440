"""`copal serve` refuses strangers: the real aiohttp app on a free loopback port, probed with
aiohttp's client. No token, a wrong token, a foreign or missing Origin: 401/403 on the page, the
static files, unknown paths and the websocket. A valid token becomes an HttpOnly SameSite=Strict
cookie; tokens are stored only as digests; each websocket's app command names that token's user,
whatever else the request says. (The end-to-end label session is in test_serve_e2e.py.)
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import re
import shlex
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from yarl import URL

import copal_tui.serve.server as serve_server
from copal_tui.serve.auth import Grant, allowed_origins
from copal_tui.serve.log_filter import RedactTokens
from copal_tui.serve.server import CopalServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def token_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["token"][0]


@asynccontextmanager
async def running(server: CopalServer) -> AsyncIterator[str]:
    """The server listening on its loopback port as `copal serve` runs it (behind its
    connection gate); yields the base URL, stops on exit."""
    async with server.listening():
        yield f"http://127.0.0.1:{server.port}"


def client(cookies: dict[str, str] | None = None) -> aiohttp.ClientSession:
    # unsafe=True: the jar keeps cookies for an IP address host (browsers do), so the session
    # cookie set by 127.0.0.1 comes back like it would from a browser.
    jar = aiohttp.CookieJar(unsafe=True)
    session = aiohttp.ClientSession(cookie_jar=jar, timeout=aiohttp.ClientTimeout(total=30))
    if cookies:
        jar.update_cookies(cookies, URL("http://127.0.0.1/"))
    return session


class FakeAppService:
    """Stands in for the server's AppSession: records what it is asked, starts no process."""

    commands: list[str] = []
    sizes: list[tuple[int, int]] = []  # the start size, then each resize
    stdin: list[bytes] = []
    stopped = 0

    def __init__(self, command: str, **kwargs: object) -> None:
        FakeAppService.commands.append(command)

    async def start(self, width: int, height: int) -> None:
        FakeAppService.sizes.append((width, height))

    async def send_bytes(self, data: bytes) -> bool:
        FakeAppService.stdin.append(data)
        return True

    async def set_terminal_size(self, width: int, height: int) -> None:
        FakeAppService.sizes.append((width, height))

    async def blur(self) -> None:
        pass

    async def focus(self) -> None:
        pass

    async def stop(self) -> None:
        FakeAppService.stopped += 1


@pytest.fixture
def fake_apps(monkeypatch):
    FakeAppService.commands, FakeAppService.sizes, FakeAppService.stdin = [], [], []
    FakeAppService.stopped = 0
    monkeypatch.setattr(serve_server, "AppSession", FakeAppService)
    return FakeAppService.commands


@pytest.fixture
def label_server(initialised: Path) -> tuple[CopalServer, dict[str, str]]:
    server = CopalServer(initialised, mode="label", port=free_port())
    urls = {name: server.issue(Grant("label", name)) for name in ("ana", "b o")}
    return server, {name: token_of(url) for name, url in urls.items()}


STRANGER_PATHS = ["/", "/static/js/textual.js", "/static/css/xterm.css",
                  "/static/fonts/RobotoMono-VariableFont_wght.ttf", "/download/abc", "/nope",
                  "/ws"]


@pytest.mark.parametrize("path", STRANGER_PATHS)
async def test_no_token_no_wrong_token_gets_nothing(label_server, path):
    server, _ = label_server
    async with running(server) as base:
        async with client() as http:
            async with http.get(base + path) as r:
                assert r.status == 401
            async with http.get(f"{base}{path}?token=not-a-token") as r:
                assert r.status == 403
        async with client({server.cookie_name: "forged"}) as http, \
                http.get(base + path) as r:
            assert r.status == 403
            assert "textual" not in (await r.text()).lower()


async def test_the_url_token_becomes_a_strict_httponly_cookie(label_server):
    server, tokens = label_server
    async with running(server) as base, client() as http:
        async with http.get(f"{base}/?token={tokens['ana']}&fontsize=18",
                            allow_redirects=False) as r:
            assert r.status == 303
            assert r.headers["Location"] == "/?fontsize=18"  # the token leaves the address bar
            cookie = r.headers["Set-Cookie"]
            assert cookie.startswith(f"{server.cookie_name}={tokens['ana']};")
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        async with http.get(f"{base}/?token={tokens['ana']}") as r:  # follows, with the cookie
            assert r.status == 200 and 'id="terminal"' in await r.text()
            assert r.headers["X-Frame-Options"] == "DENY"
        async with http.get(base + "/static/js/textual.js") as r:
            assert r.status == 200 and "WebSocket" in await r.text()
        async with http.get(base + "/static/fonts/RobotoMono-VariableFont_wght.ttf") as r:
            assert r.status == 200 and len(await r.read()) > 10_000


async def test_the_page_loads_nothing_from_another_host(label_server):
    server, tokens = label_server
    async with running(server) as base, client() as http, \
            http.get(f"{base}/?token={tokens['ana']}") as r:
        page = await r.text()
    # The only absolute URL left is the SVG namespace, which is a name, not a fetch.
    assert re.findall(r"[a-z]+://[^\s\"')]*", page) == ["http://www.w3.org/2000/svg"]
    assert "googleapis" not in page and 'src="/static/js/textual.js"' in page
    assert "fonts/RobotoMono-VariableFont_wght.ttf" in page


async def test_websocket_without_a_token_is_refused(label_server, fake_apps):
    server, _ = label_server
    async with running(server) as base, client() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(base + "/ws", origin=base)
    assert refused.value.status == 401 and fake_apps == []


@pytest.mark.parametrize("origin", [None, "http://evil.example", "null",
                                    "http://127.0.0.1:1", "https://127.0.0.1:{port}",
                                    "http://evil.example:{port}"])
async def test_websocket_from_a_foreign_or_missing_origin_is_refused(label_server, fake_apps,
                                                                     origin):
    server, tokens = label_server
    headers = {} if origin is None else {"Origin": origin.format(port=server.port)}
    async with running(server) as base, client() as http:
        for url in (f"{base}/ws?token={tokens['ana']}", f"{base}/ws"):
            http.cookie_jar.update_cookies({server.cookie_name: tokens["ana"]},
                                           URL(base))
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(url, headers=headers)
            assert refused.value.status == 403
    assert fake_apps == []  # no app process was started for any of them


async def test_foreign_origin_and_state_changes_without_origin_are_refused(label_server):
    server, tokens = label_server
    async with running(server) as base, client({server.cookie_name: tokens["ana"]}) as http:
        async with http.get(base + "/", headers={"Origin": "http://evil.example"}) as r:
            assert r.status == 403
        async with http.post(base + "/") as r:
            assert r.status == 403
        async with http.get(base + "/") as r:  # the same cookie, no foreign Origin: served
            assert r.status == 200


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
async def test_websocket_with_token_and_origin_is_accepted(label_server, fake_apps, host):
    server, tokens = label_server
    async with running(server) as base, client({server.cookie_name: tokens["b o"]}) as http, \
            http.ws_connect(base + "/ws?width=100&height=30",
                            origin=f"http://{host}:{server.port}") as ws:
        await ws.send_json(["ping", "42"])
        assert await ws.receive_json(timeout=10) == ["pong", "42"]
    assert fake_apps and "--annotator=b o" in shlex.split(fake_apps[0])


async def test_a_valid_upgrade_is_answered_101(label_server, fake_apps):
    server, tokens = label_server
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode()}
    async with running(server) as base, client() as http:
        async with http.get(f"{base}/ws?token={tokens['ana']}",
                            headers={**upgrade, "Origin": base}) as r:
            assert r.status == 101 and r.headers["Upgrade"].lower() == "websocket"
        async with http.get(f"{base}/ws?token={tokens['ana']}",
                            headers={**upgrade, "Origin": "http://evil.example"}) as r:
            assert r.status == 403
    assert len(fake_apps) == 1


async def test_the_token_alone_chooses_the_user_and_command(label_server, fake_apps):
    server, tokens = label_server
    async with running(server) as base, client() as http:
        for name in ("ana", "b o"):
            url = (f"{base}/ws?token={tokens[name]}&annotator=eve&adjudicator=eve"
                   "&command=sh")
            async with http.ws_connect(url, origin=base,
                                       headers={"X-Annotator": "eve"}) as ws:
                await ws.send_json(["ping", name])
                assert await ws.receive_json(timeout=10) == ["pong", name]
    assert len(fake_apps) == 2
    for name, command in zip(("ana", "b o"), fake_apps, strict=True):
        args = shlex.split(command)
        assert args[1:3] == ["-m", "copal_tui"] and "label" in args
        assert [a for a in args if a.startswith("--annotator")] == [f"--annotator={name}"]
        assert "eve" not in command and "sh" not in args


def test_tokens_are_stored_only_as_sha256_digests(initialised):
    server = CopalServer(initialised, mode="label", port=free_port())
    tokens = [token_of(server.issue(Grant("label", n))) for n in ("ana", "ben")]
    assert len(set(tokens)) == 2 and all(len(t) >= 43 for t in tokens)
    digests = server.tokens.digests()
    assert sorted(digests) == sorted(hashlib.sha256(t.encode()).digest() for t in tokens)
    stored = repr(vars(server.tokens)) + repr(vars(server))
    assert not any(t in stored or t.encode() in b"".join(digests) for t in tokens)
    assert server.tokens.check(tokens[0]) == Grant("label", "ana")
    assert server.tokens.check(tokens[1][:-1]) is None and server.tokens.check("") is None


def test_each_grant_runs_its_own_users_command(initialised):
    compass = CopalServer(initialised, mode="label", suite="compass", port=free_port())
    args = shlex.split(compass.command_for(Grant("label", "ana")))
    assert args[-4:] == ["label", "--annotator=ana", "--suite", "compass"]
    assert str(initialised) in args
    adjudicate = CopalServer(initialised, mode="adjudicate", port=free_port())
    assert shlex.split(adjudicate.command_for(Grant("adjudicate", "dee")))[-2:] == \
        ["adjudicate", "--adjudicator=dee"]
    assert shlex.split(adjudicate.command_for(Grant("adjudicate", None)))[-1] == "adjudicate"
    browse = CopalServer(initialised, mode="browse", port=free_port())
    assert shlex.split(browse.command_for(Grant("browse", None)))[-1] == "tui"
    with pytest.raises(ValueError, match="grant"):
        browse.issue(Grant("label", "ana"))


def test_allowed_origins_are_the_served_host_and_its_loopback_spellings():
    assert allowed_origins("http://127.0.0.1:8000") == {
        "http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"}
    assert allowed_origins("http://10.0.0.5:8000") == {"http://10.0.0.5:8000"}
    assert allowed_origins("https://copal.example") == {"https://copal.example"}


def test_the_access_log_never_shows_a_token():
    record = logging.LogRecord("aiohttp.access", logging.INFO, __file__, 1,
                               '127.0.0.1 "GET /?fontsize=9&token=s3cr3t HTTP/1.1" 303', None,
                               None)
    record.first_request_line = "GET /?token=s3cr3t HTTP/1.1"
    assert RedactTokens().filter(record)
    assert "s3cr3t" not in record.getMessage() and "s3cr3t" not in record.first_request_line
    assert "fontsize=9&token=<redacted>" in record.getMessage()
