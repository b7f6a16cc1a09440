"""`copal serve --mode label` end to end: a database built through the public CLI (the sample
worlds imported, then the offline pipeline: ground, compose, generate, select, respond, judge),
the real server on a free loopback port, a browser-like websocket session opened with ana's
token, the label app started by textual-serve for her, a keypress sent as a ["stdin", data]
frame, and a new label by ana in the database.

Waits are bounded polls of the websocket output or the database, never fixed sleeps. The poll
reads through a read-only SQLite connection: an observer that never writes cannot be the
"last connection" that checkpoints the WAL away from under the app's process.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from copal_tui.serve.auth import Grant
from copal_tui.serve.server import CopalServer
from tests.test_serve_auth import client, free_port, running, token_of

DEADLINE_S = 120
WORLD = "harbor-clinics"  # one world keeps the pipeline short; the label app needs no more


@pytest.fixture
def pipeline_db(cli, initialised: Path, samples: Path) -> Path:
    steps = [
        ("import", str(samples)),
        ("run", "ground", "compose", "generate", "select", "--world", WORLD,
         "--generator", "offline/heuristic"),
        ("run", "respond", "--world", WORLD, "--model", "offline/refuse-all"),
        ("run", "judge", "--world", WORLD, "--judge", "offline/judge"),
    ]
    for step in steps:
        result = cli(*step)
        assert result.exit_code == 0, (step, result.output)
    return initialised


def rows(db: Path, sql: str) -> list[dict]:
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def ana_labels(db: Path) -> list[dict]:
    return rows(db, "SELECT action, subject AS response_id, json_extract(payload, '$.error') "
                "AS error FROM annotations WHERE annotator = 'ana' ORDER BY id")


def screen(seen: bytearray) -> str:
    """The text of the app's output, escape sequences dropped (for failure messages)."""
    text = seen.decode("utf-8", "replace")
    return re.sub(r"\x1b(\[[0-9;?$]*[A-Za-z]|\][^\x07]*\x07)", "", text)[-1500:]


async def pump(ws: aiohttp.ClientWebSocketResponse, seen: bytearray) -> None:
    """Collect the app's terminal output until the socket closes (answering pings meanwhile)."""
    async for msg in ws:
        if msg.type == aiohttp.WSMsgType.BINARY:
            seen += msg.data


async def wait_for(what: str, ready: Callable[[], bool], reader: asyncio.Task[None],
                   seen: bytearray, end: float) -> None:
    while not ready():
        assert not reader.done(), f"the app exited before {what}: {screen(seen)}"
        assert time.monotonic() < end, f"timed out waiting for {what}: {screen(seen)}"
        await asyncio.sleep(0.1)


async def test_a_label_session_writes_labels_as_the_tokens_annotator(pipeline_db):
    db = pipeline_db
    before = ana_labels(db)
    others = "SELECT COUNT(*) AS n FROM annotations WHERE annotator != 'ana'"
    others_before = rows(db, others)
    server = CopalServer(db, mode="label", port=free_port())
    ana = token_of(server.issue(Grant("label", "ana")))
    server.issue(Grant("label", "ben"))  # another user's token exists; it must not be used
    end = time.monotonic() + DEADLINE_S

    async with running(server) as base, client() as http:
        async with http.get(f"{base}/?token={ana}") as page:  # the browser's first load
            assert page.status == 200
        async with http.ws_connect(f"{base}/ws?width=120&height=40", origin=base) as ws:
            seen = bytearray()
            reader = asyncio.create_task(pump(ws, seen))
            try:
                await wait_for("the label queue", lambda: b"label as ana" in seen
                               and b"labelled" in seen, reader, seen, end)
                await ws.send_json(["stdin", "c"])  # "c": the response is correct, saved at once
                await wait_for("ana's label", lambda: len(ana_labels(db)) > len(before),
                               reader, seen, end)
            finally:
                reader.cancel()

    new = ana_labels(db)[len(before):]
    assert len(new) == 1 and new[0]["action"] == "label" and new[0]["error"] == 0
    assert new[0]["response_id"] not in {r["response_id"] for r in before}
    assert rows(db, others) == others_before  # nobody else (not ben, not the OS user) labelled
