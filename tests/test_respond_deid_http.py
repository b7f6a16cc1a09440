"""Probes sent to a deployed chatbot (`kind: http`) pass the traffic suite's de-identifier
first: a planted identifier reaches the endpoint as a typed placeholder, what was changed is
recorded by type in `responses.redactions`, and a target that is not a live endpoint gets the
query as it is."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.db_support import query_rows
from tests.http_stub_support import JsonHandler, serve_http

EMAIL = "zora.quill@example.com"


def _handler(seen: list[str], lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            with lock:
                seen.append(str(body["message"]))
            self.send_json(200, {"reply": {"text": "Thanks, noted."}})

    return Handler


@pytest.fixture
def bot(tmp_path: Path) -> Iterator[tuple[list[str], Path]]:
    seen: list[str] = []
    with serve_http(_handler(seen, threading.Lock()), "/api/chat") as url:
        models = tmp_path / "models.yaml"
        models.write_text(f"bank-bot:\n  kind: http\n  url: {url}\n"
                          '  body: {"message": "{query}"}\n  answer: "$.reply.text"\n'
                          "  timeout: 10\n  rpm: 60000\n  max_retries: 0\n", "utf-8")
        yield seen, models


def test_a_planted_email_reaches_the_deployed_bot_as_a_placeholder(cli, world: Path, bot):
    seen, models = bot
    [first] = query_rows(world, "SELECT id, query FROM items ORDER BY id LIMIT 1")
    planted = f"{first['query']} You can reach me at {EMAIL}."
    # The probe is planted through SQLite, as a suite built with an identifier in it would be.
    with closing(sqlite3.connect(world)) as conn, conn:
        conn.execute("UPDATE items SET query = ? WHERE id = ?", (planted, first["id"]))

    result = cli("run", "respond", "--all", "--model", "bank-bot", "--model",
                 "offline/comply-all", "--models-file", str(models))
    assert result.exit_code == 0, result.output

    sent = [m for m in seen if "You can reach me at" in m]
    assert sent == [f"{first['query']} You can reach me at <EMAIL_1>."]
    assert all(EMAIL not in m for m in seen)
    rows = {(r["item_id"], r["model"]): r for r in query_rows(
        world, "SELECT r.item_id, r.model, r.redactions, i.query FROM responses r "
               "JOIN items i ON i.id = r.item_id")}
    assert json.loads(rows[(first["id"], "bank-bot")]["redactions"]) == {"EMAIL": 1}
    assert len([k for k in rows if k[1] == "bank-bot"]) == len(seen)
    for (item, model), row in rows.items():
        if model != "bank-bot":
            # A target that is no live endpoint is not a probe sent outside: nothing changed.
            assert row["redactions"] is None
        elif json.loads(row["redactions"]) == {}:
            assert row["query"] in seen  # a deployed chatbot's probe sent as it is
        elif item != first["id"]:
            # The sample suite's own references (a loan application's ML-558210) are ids the
            # default rules remove too: recorded, and never sent.
            assert json.loads(row["redactions"]) == {"TICKET": 1}
            assert "ML-558210" in row["query"] and row["query"] not in seen
    assert all("ML-558210" not in m for m in seen)
    # The call log holds the query as it was sent to the bot.
    logged = query_rows(world, "SELECT request FROM llm_calls WHERE model = 'bank-bot' AND "
                               "instr(request, 'You can reach me at') > 0")
    assert len(logged) == 1 and "<EMAIL_1>" in logged[0]["request"]
    assert EMAIL not in logged[0]["request"]


def test_table12_counts_the_deployed_bots_probes(cli, world: Path, bot):
    """Table 12 of the report: the deployed chatbot (an http target) with its world's clauses
    and compositions and its judged composed probes; a target that is not deployed is not a
    row. Expected counts are read from the tables directly."""
    _seen, models = bot
    assert cli("run", "respond", "--all", "--model", "bank-bot", "--model", "offline/comply-all",
               "--models-file", str(models)).exit_code == 0
    assert cli("run", "judge", "--all", "--judge", "offline/judge").exit_code == 0
    doc = json.loads(cli("report", "--json", "--bootstrap", "0").stdout)
    probes = doc["public_probes"]
    assert probes["judge"] == "offline/judge"
    [(w, clauses, compositions)] = [tuple(r) for r in query_rows(
        world, "SELECT w.id, (SELECT COUNT(*) FROM clauses c WHERE c.world_id = w.id), "
               "(SELECT COUNT(*) FROM compositions k WHERE k.world_id = w.id "
               "AND k.status = 'confirmed') FROM worlds w")]
    [judged] = query_rows(
        world, "SELECT COUNT(*) AS n, SUM(j.error) AS errors FROM judgments j "
               "JOIN responses r ON r.id = j.response_id JOIN items i ON i.id = r.item_id "
               "WHERE r.model = 'bank-bot' AND j.judge = 'offline/judge' AND j.mode = "
               "'contract' AND j.error IS NOT NULL AND i.method = 'copal' AND i.selected = 1 "
               "AND i.parent_item_id IS NULL")
    bank, total = probes["rows"]
    assert (bank["deployment"], bank["world"], bank["clauses"], bank["compositions"]) == \
        ("bank-bot", w, clauses, compositions)
    assert (bank["selected"], bank["correct"]) == (judged["n"], judged["n"] - judged["errors"])
    assert total["deployment"] == "total" and total["selected"] == judged["n"]
    assert bank["error_rate"] == judged["errors"] / judged["n"]
