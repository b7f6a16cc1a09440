"""The textual-serve subclass behind `copal serve`: every request is checked, every app runs as
the user of the token that opened it.

textual-serve serves one fixed shell command to anyone who can reach the port. Here a middleware
refuses any request (page, static file, download, websocket, unknown path) that carries neither
a valid `token` query parameter nor the session cookie set from one (401 without, 403 with a
wrong one), refuses a foreign Origin on any request and a missing Origin on a websocket upgrade
or a state-changing request, and the websocket handler builds the app command from the token's
grant (`copal label --annotator=NAME`...), never from anything else in the request.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlencode

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from copal_tui.serve.auth import Grant, TokenStore, allowed_origins, url_host

log = logging.getLogger("copal.serve")

TEMPLATES = Path(__file__).resolve().parent / "templates"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
QUIT_GRACE_S = 10

# Headers on every response we build: no framing by another site (the cookie would not be sent
# cross-site anyway, but a framed page is a clickjacking surface), no Referer carrying a URL.
HARDENING = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}

_TOKEN_IN_URL = re.compile(r"(token=)[^&\s\"]*")


class RedactTokens(logging.Filter):
    """Blanks `token=...` in log records: aiohttp's access log prints every request line, and
    a user's first request carries the token."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = _TOKEN_IN_URL.sub(r"\1<redacted>", record.msg)
        line = getattr(record, "first_request_line", None)
        if isinstance(line, str):
            record.first_request_line = _TOKEN_IN_URL.sub(r"\1<redacted>", line)
        return True


class AppSession(AppService):
    """textual-serve's AppService, which also waits for its app process to end.

    The base class asks the app to quit and reads its output to the end, but never reaps the
    process: each closed session would leave a zombie, and an app that ignores the request
    would keep running with the user's database open. Here it gets a grace period, then a kill.
    """

    async def run(self) -> None:
        # The base class closes the browser's websocket only when the app reports its exit, so
        # an app that ends without starting (a database that needs `copal migrate`, a missing
        # database) left the page on its splash screen for good. Closing the socket whenever
        # the process ends shows the page's "Session ended." instead.
        try:
            await super().run()
        finally:
            await self.remote_close()

    async def stop(self) -> None:
        await super().stop()
        process = self._process
        if process is None or process.returncode is not None:
            return
        try:
            await asyncio.wait_for(process.wait(), QUIT_GRACE_S)
        except TimeoutError:
            process.kill()
            await process.wait()


class CopalServer(Server):
    """textual-serve's Server with per-user tokens, Origin checks and a command per grant."""

    def __init__(self, db_path: str | os.PathLike[str], *, mode: str, suite: str = "copal",
                 host: str = "127.0.0.1", port: int = 8000,
                 public_url: str | None = None) -> None:
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
        return shlex.join(args)

    def grant_of(self, request: web.Request) -> Grant | None:
        """The grant of the request's token: the query parameter if given, else the cookie."""
        if "token" in request.query:
            return self.tokens.check(request.query["token"])
        return self.tokens.check(request.cookies.get(self.cookie_name))

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

    def initialize_logging(self) -> None:
        super().initialize_logging()
        logging.getLogger("aiohttp.access").addFilter(RedactTokens())

    async def on_startup(self, app: web.Application) -> None:
        self.console.print(f"copal serve: {self.mode} on {self.public_url} "
                           f"({len(self.tokens)} URL(s) valid until Ctrl+C stops the server)")

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        # Our template: relative URLs (the page works through 127.0.0.1, localhost or a
        # tunnel) and only the packaged font, nothing from another host.
        context = {"font_size": to_int(request.query.get("fontsize", "16"), 16),
                   "static_url": "/static/", "title": self.title}
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's handler, with the command of the request's grant."""
        grant = self.grant_of(request)
        if grant is None:  # the guard refused it already; checked again so this stands alone
            raise web.HTTPForbidden(text="invalid token")
        command = self.command_for(grant)
        log.info("session for %s: %s", grant.user or "the operator", grant.mode)

        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        app_service: AppSession | None = None

        async def close() -> None:
            await websocket.close()

        try:
            await websocket.prepare(request)
            app_service = AppSession(command, write_bytes=websocket.send_bytes,
                                     write_str=websocket.send_str, close=close,
                                     download_manager=self.download_manager, debug=self.debug)
            await app_service.start(width, height)
            try:
                await self._process_messages(websocket, app_service)
            finally:
                await app_service.stop()
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # noqa: BLE001 - one broken session must not stop the server
            log.exception(error)
        finally:
            if app_service is not None:
                await app_service.stop()
        return websocket


def _refuse(status: int, reason: str) -> web.Response:
    return web.Response(status=status, text=f"copal serve: {reason}\n", headers=HARDENING)
