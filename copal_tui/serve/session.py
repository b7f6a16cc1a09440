"""One browser session of `copal serve`: its app process and the websocket relay to it.

`AppSession` is textual-serve's AppService that also reaps its process. `relay` is
textual-serve's message loop with bounds: a session without input for the idle limit is closed
(its process then stops), terminal sizes are clamped, and a malformed message is ignored rather
than ending the session with a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import to_int

log = logging.getLogger("copal.serve")

QUIT_GRACE_S = 10
# A browser terminal's size, in cells: the app allocates its screen from these, so a request
# cannot ask for a billion columns.
MAX_COLUMNS = 500
MAX_ROWS = 200
IDLE_CLOSED = "closed after {minutes} minutes without input (reload the page to start again)"
_ENDED = frozenset({WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR})


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


async def relay(websocket: web.WebSocketResponse, app_service: AppService, *,
                idle_close_s: float) -> None:
    """Passes the browser's messages to the app until the socket closes or the session has
    had no input for `idle_close_s`. A ping is not input: an abandoned tab sends them too."""
    loop = asyncio.get_running_loop()
    last_input = loop.time()
    while True:
        try:
            message = await websocket.receive(timeout=last_input + idle_close_s - loop.time())
        except TimeoutError:
            minutes = f"{idle_close_s / 60:g}"
            log.info("session closed after %s minutes without input", minutes)
            await websocket.close(code=WSCloseCode.GOING_AWAY,
                                  message=IDLE_CLOSED.format(minutes=minutes).encode())
            return
        if message.type in _ENDED:
            return
        if message.type != WSMsgType.TEXT:
            continue
        kind, data = _envelope(message.data)
        if kind == "ping":
            await websocket.send_json(["pong", data])
            continue
        last_input = loop.time()
        if kind == "stdin" and isinstance(data, str):
            await app_service.send_bytes(data.encode("utf-8"))
        elif kind == "resize" and isinstance(data, dict):
            await app_service.set_terminal_size(cells(data.get("width"), 80, MAX_COLUMNS),
                                                cells(data.get("height"), 24, MAX_ROWS))
        elif kind == "blur":
            await app_service.blur()
        elif kind == "focus":
            await app_service.focus()


def _envelope(text: str) -> tuple[str | None, Any]:
    """A browser message `[kind, data]`; (None, None) for anything else."""
    try:
        envelope = json.loads(text)
    except ValueError:
        return None, None
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        return None, None
    return envelope[0], envelope[1] if len(envelope) > 1 else None


def cells(value: object, default: int, most: int) -> int:
    """A terminal dimension from the browser, within 1..most (the default if not a number)."""
    number = to_int(value, default) if isinstance(value, str) else value
    if not isinstance(number, int) or isinstance(number, bool):
        number = default
    return max(1, min(number, most))
