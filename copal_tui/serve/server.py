"""The textual-serve subclass behind `copal serve`: every request is checked, every app runs as
the user of the token that opened it.

textual-serve serves one fixed shell command to anyone who can reach the port. Here a middleware
refuses any request (page, static file, download, websocket, unknown path) that carries neither
a valid `token` query parameter nor the session cookie set from one (401 without, 403 with a
wrong one), refuses a foreign Origin on any request and a missing Origin on a websocket upgrade
or a state-changing request, and the websocket handler builds the app command from the token's
grant (`copal label --annotator=NAME`...), never from anything else in the request.

The server is bounded (`ServeLimits`): sessions per token and in total (beyond them the page
says why and no process starts), sessions closed after a while without input, terminal sizes
clamped, and the listening socket behind `ConnectionGate` (open connections capped, request
heads on a deadline). Its log lines go through `RedactTokens`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import urlencode

import aiohttp_jinja2
import jinja2
from aiohttp import WSCloseCode, web
from textual_serve.server import Server, to_int

from copal_tui.serve import ServeConfigError
from copal_tui.serve.auth import Grant, TokenMatch, TokenStore, allowed_origins, url_host
from copal_tui.serve.connections import ConnectionGate
from copal_tui.serve.limits import Full, ServeLimits, Sessions
from copal_tui.serve.log_filter import RedactTokens
from copal_tui.serve.session import MAX_COLUMNS, MAX_ROWS, AppSession, cells, relay

log = logging.getLogger("copal.serve")

TEMPLATES = Path(__file__).resolve().parent / "templates"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Headers on every response we build: no framing by another site (the cookie would not be sent
# cross-site anyway, but a framed page is a clickjacking surface), no Referer carrying a URL.
HARDENING = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


class CopalServer(Server):
    """textual-serve's Server with per-user tokens, Origin checks, a command per grant and
    bounds on what any client can make it hold."""

    def __init__(self, db_path: str | os.PathLike[str], *, mode: str, suite: str = "copal",
                 host: str = "127.0.0.1", port: int = 8000, public_url: str | None = None,
                 limits: ServeLimits | None = None) -> None:
        public = (public_url or f"http://{url_host(host)}:{port}").rstrip("/")
        # The base class's fixed command is never run (handle_websocket is replaced below);
        # `false` keeps it harmless should any base code path reach it.
        super().__init__("false", host=host, port=port, title="copal", public_url=public,
                         templates_path=TEMPLATES)
        self.db_path = Path(db_path)
        self.mode = mode
        self.suite = suite
        self.tokens = TokenStore()
        self.origins = allowed_origins(self.public_url)
        self.limits = limits or ServeLimits()
        self.sessions = Sessions(self.limits)
        self._sockets: set[web.WebSocketResponse] = set()
        # Cookies are per host, not per port: the port in the name keeps two servers on one
        # machine from overwriting each other's session.
        self.cookie_name = f"copal_session_{port}"
        self._secure_cookie = self.public_url.startswith("https:")

    # -- tokens and commands ---------------------------------------------------------------

    def issue(self, grant: Grant) -> str:
        """A new token for `grant`, returned inside the URL to hand to its user (only here)."""
        if grant.mode != self.mode:
            raise ValueError(f"a {grant.mode} grant on a {self.mode} server")
        return f"{self.public_url}/?{urlencode({'token': self.tokens.issue(grant)})}"

    def command_for(self, grant: Grant) -> str:
        """The shell command textual-serve starts for a websocket opened with this grant."""
        args = [sys.executable, "-m", "copal_tui", "--db", str(self.db_path)]
        if grant.mode == "browse":
            args.append("tui")
        elif grant.mode == "label":
            # `--opt=value` so that no name can be read as another option.
            args += ["label", f"--annotator={grant.user}"]
            if self.suite != "copal":
                args += ["--suite", self.suite]
        else:
            args.append("adjudicate")
            if grant.user is not None:
                args.append(f"--adjudicator={grant.user}")
            if self.suite != "copal":
                args += ["--suite", self.suite]
        return shlex.join(args)

    def token_of(self, request: web.Request) -> TokenMatch | None:
        """The request's issued token: the query parameter if given, else the cookie."""
        if "token" in request.query:
            return self.tokens.match(request.query["token"])
        return self.tokens.match(request.cookies.get(self.cookie_name))

    def grant_of(self, request: web.Request) -> Grant | None:
        """The grant of the request's token, or None."""
        found = self.token_of(request)
        return None if found is None else found.grant

    # -- the guard -------------------------------------------------------------------------

    def refusal(self, request: web.Request) -> web.Response | None:
        """Why this request is refused (a 401/403 response), or None to let it through."""
        origin = request.headers.get("Origin")
        upgrade = request.headers.get("Upgrade", "").lower() == "websocket"
        if origin is not None and origin.lower() not in self.origins:
            return _refuse(403, "origin not allowed")
        if origin is None and (upgrade or request.method not in SAFE_METHODS):
            # A browser always sends Origin on these; its absence is a script or a proxy
            # stripping it, and the check is only worth anything if it cannot be skipped.
            return _refuse(403, "origin required")
        if self.grant_of(request) is not None:
            return None
        if "token" in request.query or self.cookie_name in request.cookies:
            return _refuse(403, "invalid token")
        return _refuse(401, "open the URL with your token that `copal serve` printed")

    @web.middleware
    async def guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        refused = self.refusal(request)
        if refused is not None:
            return refused
        if request.path == "/" and request.method == "GET" and "token" in request.query:
            return self._enter(request)
        response = await handler(request)
        if not response.prepared:
            response.headers.update(HARDENING)
        return response

    def _enter(self, request: web.Request) -> web.Response:
        """Trade a valid URL token for the session cookie, and drop it from the address bar.

        The page's scripts then open the websocket and fetch static files with the cookie alone
        (textual-serve's JavaScript cannot add a token to the websocket URL).
        """
        rest = [(k, v) for k, v in request.query.items() if k != "token"]
        response = web.Response(status=303, headers={
            "Location": "/" + (f"?{urlencode(rest)}" if rest else ""),
            "Cache-Control": "no-store", **HARDENING})
        response.set_cookie(self.cookie_name, request.query["token"], path="/", httponly=True,
                            samesite="Strict", secure=self._secure_cookie or None)
        return response

    # -- the aiohttp application -----------------------------------------------------------

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/ws", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.static("/static", self.statics_path, show_index=False, name="static"),
        ])
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    @contextlib.asynccontextmanager
    async def listening(self) -> AsyncIterator[asyncio.AbstractServer]:
        """The app on `host:port` behind the connection gate, until the block ends.

        aiohttp's keep-alive timeout is the header deadline: it is how long a kept-alive
        connection may take to deliver its next request head.
        """
        runner = web.AppRunner(await self._make_app(), handle_signals=False,
                               keepalive_timeout=self.limits.header_timeout_s)
        await runner.setup()
        try:
            assert runner.server is not None
            gate = ConnectionGate(runner.server, max_connections=self.limits.max_connections,
                                  head_timeout_s=self.limits.header_timeout_s)
            try:
                listener = await asyncio.get_running_loop().create_server(gate, self.host,
                                                                          self.port)
            except OSError as exc:  # the port is taken, the host is not this machine's...
                raise ServeConfigError(f"cannot listen on {url_host(self.host)}:{self.port}: "
                                       f"{exc.strerror or exc}") from None
            try:
                yield listener
            finally:
                listener.close()
        finally:
            await runner.cleanup()

    def serve(self, debug: bool = False) -> None:
        """Serves until Ctrl+C or SIGTERM (textual-serve's `serve`, on `listening`)."""
        self.debug = debug
        self.initialize_logging()
        asyncio.run(self._serve_until_stopped())

    async def _serve_until_stopped(self) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signum, stop.set)
        async with self.listening():
            await stop.wait()

    def initialize_logging(self) -> None:
        super().initialize_logging()
        # On the handlers, not a logger: every record printed passes, whichever logger
        # (aiohttp's access log, its server log, textual-serve's) wrote it.
        for handler in logging.getLogger().handlers:
            handler.addFilter(RedactTokens())

    async def on_startup(self, app: web.Application) -> None:
        self.console.print(f"copal serve: {self.mode} on {self.public_url} "
                           f"({len(self.tokens)} URL(s) valid until Ctrl+C stops the server)")

    async def on_shutdown(self, app: web.Application) -> None:
        # Open sessions end with the server (their handlers then stop the app processes)
        # rather than holding the shutdown until its timeout.
        for websocket in list(self._sockets):
            await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"server stopped")

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        found = self.token_of(request)
        full = None if found is None else self.sessions.refusal(found.digest)
        if full is not None:
            raise _full(request, full)
        # Our template: relative URLs (the page works through 127.0.0.1, localhost or a
        # tunnel) and only the packaged font, nothing from another host.
        context = {"font_size": to_int(request.query.get("fontsize", "16"), 16),
                   "static_url": "/static/", "title": self.title}
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's handler, with the command of the request's grant, in a session
        slot of its token (none free: refused before any process starts)."""
        found = self.token_of(request)
        if found is None:  # the guard refused it already; checked again so this stands alone
            raise web.HTTPForbidden(text="invalid token")
        full = self.sessions.open(found.digest)
        if full is not None:
            log.info("session refused for %s: %s", found.grant.user or "the operator",
                     full.title)
            raise _full(request, full)
        try:
            return await self._run_session(request, found.grant)
        finally:
            self.sessions.close(found.digest)

    async def _run_session(self, request: web.Request, grant: Grant) -> web.WebSocketResponse:
        command = self.command_for(grant)
        log.info("session for %s: %s", grant.user or "the operator", grant.mode)

        websocket = web.WebSocketResponse(heartbeat=15)
        width = cells(request.query.get("width"), 80, MAX_COLUMNS)
        height = cells(request.query.get("height"), 24, MAX_ROWS)
        app_service: AppSession | None = None

        async def close() -> None:
            await websocket.close()

        self._sockets.add(websocket)
        try:
            await websocket.prepare(request)
            app_service = AppSession(command, write_bytes=websocket.send_bytes,
                                     write_str=websocket.send_str, close=close,
                                     download_manager=self.download_manager, debug=self.debug)
            await app_service.start(width, height)
            await relay(websocket, app_service, idle_close_s=self.limits.idle_close_s)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # noqa: BLE001 - one broken session must not stop the server
            log.exception(error)
        finally:
            self._sockets.discard(websocket)
            if app_service is not None:
                await app_service.stop()
        return websocket


def _full(request: web.Request, full: Full) -> web.HTTPException:
    """The page that says why no session can open (also the answer to a refused websocket)."""
    page = aiohttp_jinja2.render_string("full.html", request,
                                        {"title": full.title, "message": full.message})
    kind = web.HTTPTooManyRequests if full.status == 429 else web.HTTPServiceUnavailable
    headers = {**HARDENING, "Retry-After": "60"}
    return kind(text=page, content_type="text/html", headers=headers)


def _refuse(status: int, reason: str) -> web.Response:
    return web.Response(status=status, text=f"copal serve: {reason}\n", headers=HARDENING)
