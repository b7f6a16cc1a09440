"""Deployed chatbots over HTTP (`kind: http` in the models file), through `copal run`.

A local stub bot on 127.0.0.1 records every request and answers in its own JSON shape
(`{"reply": {"text": ...}}`); faults are planned per query. A small suite of a sample world is
built once (offline generator) and copied for each test. Checked: what is sent (the query and
the conversation, never copal's system prompt), the answer read by its path, the header secret
reaching the bot but nothing stored, the cache, retries, recorded failures, exit codes, and the
models-file errors.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.llm import http_target
from copal_tui.llm.models import ModelConfigError, load_models_file
from copal_tui.llm.request import REDACTED, request_hash, request_payload
from copal_tui.llm.retry import is_fatal, is_retryable, retry_after
from copal_tui.resources import sample_worlds_dir
from tests.db_support import copy_db, query_rows
from tests.http_stub_support import JsonHandler, serve_http

WORLD = "riverton-city"
SECRET = "city-token-SECRET-5150"
ENV = "CITY_BOT_TOKEN"


# ------------------------------------------------------------------ the stub bot


@dataclass
class Bot:
    once: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)  # marker -> faults
    always: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    seen: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def plan(self, message: str) -> tuple[Any, ...]:
        with self.lock:
            queue = self.once.get(message) or []
            return self.always.get(message) or (queue.pop(0) if queue else ("ok",))

    def asked(self, message: str) -> int:
        return sum(r["body"].get("message") == message for r in self.seen)


def _handler(bot: Bot) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            with bot.lock:
                bot.seen.append({"method": self.command, "path": self.path,
                                 "headers": dict(self.headers), "body": body})
            message = str(body.get("message"))
            act = bot.plan(message)
            reply = {"reply": {"text": f"City answer: {message}"}, "id": len(bot.seen)}
            if act[0] == "status":  # ("status", code, retry-after or None)
                extra = {"Retry-After": str(act[2])} if act[2] is not None else {}
                self.send_json(act[1], b'{"error": "busy"}', headers=extra)
            elif act[0] == "html":
                self.send_json(200, b"<html><body>Maintenance</body></html>",
                               content_type="text/html")
            elif act[0] == "shape":
                self.send_json(200, {"answer": "elsewhere"})
            else:
                if act[0] == "echo":  # a bot that repeats the credentials it was sent
                    reply["reply"]["text"] = f"You sent {self.headers.get('Authorization')}"
                self.send_json(200, reply)

    return Handler


def serving(bot: Bot) -> AbstractContextManager[str]:
    return serve_http(_handler(bot), "/api/chat")


# ------------------------------------------------------------------ fixtures and helpers


def invoke(db: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sample world with a small built suite and COMPASS queries (offline generator)."""
    db = tmp_path_factory.mktemp("suite") / "suite.db"
    for args in (("init",), ("import", str(sample_worlds_dir() / "riverton_city.yaml")),
                 ("run", "ground", "compose", "generate", "select", "--all", "--generator",
                  "offline/heuristic", "--budget", "4"),
                 ("run", "compass_generate", "compass_verify", "--world", WORLD,
                  "--generator", "offline/heuristic", "--per-policy", "1")):
        result = invoke(db, *args)
        assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def db(suite: Path, tmp_path: Path) -> Path:
    return copy_db(suite, tmp_path / "copal.db")


@pytest.fixture
def bot(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Bot, Path]]:
    monkeypatch.setenv(ENV, SECRET)
    b = Bot()
    with serving(b) as url:
        models = tmp_path / "models.yaml"
        models.write_text(
            f"city-bot:\n  kind: http\n  url: {url}\n  method: POST\n"
            f'  headers: {{Authorization: "Bearer ${{{ENV}}}", X-Client: copal}}\n'
            '  body: {"message": "{query}", "history": "{conversation}"}\n  answer: "$.reply.text"\n'
            "  timeout: 10\n  rpm: 60000\n  max_concurrency: 4\n  max_retries: 1\n", "utf-8")
        yield b, models


def queries(db: Path) -> list[str]:
    """Queries of the selected items (each is answered by `respond`)."""
    found = [r["query"] for r in query_rows(db, "SELECT DISTINCT query FROM items WHERE world_id = "
                                                "? AND selected = 1 ORDER BY id", (WORLD,))]
    assert len(found) >= 4
    return found


def respond(db: Path, models: Path) -> Any:
    return invoke(db, "run", "respond", "--all", "--model", "city-bot", "--models-file",
                  str(models))


def responses(db: Path) -> dict[str, sqlite3.Row]:
    return {r["query"]: r for r in query_rows(
        db, "SELECT r.*, i.query FROM responses r JOIN items i ON i.id = r.item_id "
            "WHERE r.model = 'city-bot'")}


def stored_anywhere(db: Path, needle: str) -> list[str]:
    """Every table.column of the store holding `needle`, and any store file with its bytes."""
    hits = []
    for (table,) in query_rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'"):
        for row in query_rows(db, f'SELECT * FROM "{table}"'):
            hits += [f"{table}.{k}" for k, v in dict(row).items() if needle in str(v)]
    for path in db.parent.glob(db.name + "*"):
        if needle.encode() in path.read_bytes():
            hits.append(path.name)
    return hits


# ------------------------------------------------------------------ copal run respond


def test_respond_sends_the_query_alone_and_stores_the_answer_at_the_path(db, bot):
    b, models = bot
    qs = queries(db)
    b.once[qs[0]] = [("echo",)]
    result = respond(db, models)
    assert result.exit_code == 0, result.output
    stored = responses(db)
    assert set(qs) <= set(stored)  # selected items, and projections of them
    for query in set(stored) - {qs[0]}:
        assert stored[query]["text"] == f"City answer: {query}" and not stored[query]["failure"]
    # The deployed bot has its own system prompt: copal sends only the query (no earlier turns).
    assert len(b.seen) == len(stored)
    for req in b.seen:
        assert (req["method"], req["path"], req["body"]["history"]) == ("POST", "/api/chat", [])
        assert set(req["body"]) == {"message", "history"}
        assert {k: req["headers"][k] for k in ("Authorization", "X-Client", "Content-Type")} == {
            "Authorization": f"Bearer {SECRET}", "X-Client": "copal",
            "Content-Type": "application/json"}
    # The bot echoed the token: what is stored is scrubbed, and the token is nowhere.
    assert stored[qs[0]]["text"] == f"You sent Bearer {REDACTED}"
    assert stored_anywhere(db, SECRET) == []
    [logged] = query_rows(db, "SELECT request FROM llm_calls WHERE model = 'city-bot' AND "
                              "instr(request, ?) > 0", (json.dumps(qs[1])[1:-1],))
    request = json.loads(logged["request"])
    assert request["headers"] == ["Authorization", "X-Client"]
    assert request["body"] == {"message": qs[1], "history": []}
    assert "Bearer" not in logged["request"] and ENV not in logged["request"]


def test_identical_rerun_makes_no_request_and_the_cache_answers(db, bot):
    b, models = bot
    assert respond(db, models).exit_code == 0
    first, asked = {q: r["text"] for q, r in responses(db).items()}, len(b.seen)
    assert respond(db, models).exit_code == 0
    assert len(b.seen) == asked  # nothing left to do
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("DELETE FROM responses WHERE model = 'city-bot'")
    result = respond(db, models)
    assert result.exit_code == 0, result.output
    assert len(b.seen) == asked  # every answer came from the cache
    assert {q: r["text"] for q, r in responses(db).items()} == first
    [run] = query_rows(db, "SELECT * FROM runs WHERE stage = 'respond' ORDER BY started_at DESC, "
                           "rowid DESC LIMIT 1")
    assert run["calls"] == 0 and run["cache_hits"] == len(first)


def test_faults_are_retried_or_recorded_and_the_run_exits_3(db, bot):
    b, models = bot
    qs = queries(db)
    b.once[qs[0]] = [("status", 429, 0)]
    b.always.update({qs[1]: ("status", 500, 0), qs[2]: ("html",), qs[3]: ("shape",)})
    result = respond(db, models)
    assert result.exit_code == 3, result.output
    stored = responses(db)
    assert stored[qs[0]]["text"] == f"City answer: {qs[0]}"
    assert b.asked(qs[0]) == 2  # the 429, then one retry after the asked wait
    assert b.asked(qs[1]) == 2  # one try and max_retries: 1
    assert b.asked(qs[2]) == 1 and b.asked(qs[3]) == 1  # not retried: same answer again
    assert "HTTP 500" in stored[qs[1]]["failure"] and "after 2 attempts" in stored[qs[1]]["failure"]
    assert "not JSON" in stored[qs[2]]["failure"] and "text/html" in stored[qs[2]]["failure"]
    assert "answer path $.reply.text: no key 'reply' at $" in stored[qs[3]]["failure"]
    assert all(stored[q]["text"] is None for q in qs[1:4])
    calls = query_rows(db, "SELECT attempt, error, response FROM llm_calls WHERE model = "
                           "'city-bot' AND instr(request, ?) > 0 ORDER BY attempt",
                       (json.dumps(qs[0])[1:-1],))
    assert [c["attempt"] for c in calls] == [1, 2]
    assert "HTTP 429" in calls[0]["error"] and calls[1]["error"] is None
    [run] = query_rows(db, "SELECT failures FROM runs WHERE stage = 'respond'")
    assert run["failures"] == 3

    b.always.clear()
    before = len(b.seen)
    result = respond(db, models)
    assert result.exit_code == 0, result.output
    assert len(b.seen) - before == 3  # exactly the failed units
    assert all(r["text"] and not r["failure"] for r in responses(db).values())


def test_retry_after_of_the_bot_is_read_and_auth_failures_are_fatal(bot):
    b, models = bot
    spec = load_models_file(models)["city-bot"]
    messages = [{"role": "system", "content": "not sent"}, {"role": "user", "content": "hi"}]
    b.always["hi"] = ("status", 429, 7)
    with pytest.raises(http_target.HttpStatusError) as info:
        asyncio.run(http_target.acall(spec, messages))
    assert retry_after(info.value) == 7.0 and is_retryable(info.value)
    b.always["hi"] = ("status", 401, None)
    with pytest.raises(http_target.HttpStatusError) as info:
        asyncio.run(http_target.acall(spec, messages))
    assert is_fatal(info.value) and not is_retryable(info.value)


# ------------------------------------------------------------------ roles and compass


def test_http_target_as_judge_or_generator_exits_2(db, bot, tmp_path):
    b, models = bot
    assert respond(db, models).exit_code == 0
    asked = len(b.seen)
    result = invoke(db, "run", "judge", "--all", "--judge", "city-bot", "--models-file",
                    str(models))
    assert result.exit_code == 2, result.output
    assert "'city-bot' is an http target" in result.output and "judge" in result.output
    fresh = tmp_path / "fresh.db"
    assert invoke(fresh, "init").exit_code == 0
    assert invoke(fresh, "import", str(sample_worlds_dir() / "riverton_city.yaml")).exit_code == 0
    result = invoke(fresh, "run", "ground", "--all", "--generator", "city-bot", "--models-file",
                    str(models))
    assert result.exit_code == 2, result.output
    assert "'city-bot' is an http target" in result.output
    assert len(b.seen) == asked  # neither reached the bot


def test_compass_respond_sends_demonstrations_as_the_conversation(db, bot):
    b, models = bot
    result = invoke(db, "run", "compass_respond", "--world", WORLD, "--model", "city-bot",
                    "--variant", "base", "--variant", "few-shot", "--models-file", str(models))
    assert result.exit_code == 0, result.output
    stored = query_rows(db, "SELECT r.variant, r.text, q.text AS query FROM compass_responses r "
                            "JOIN compass_queries q ON q.id = r.query_id "
                            "WHERE r.model = 'city-bot'")
    kept = query_rows(db, "SELECT COUNT(*) AS n FROM compass_queries WHERE status = 'kept'")[0]["n"]
    assert len(stored) == 2 * kept
    assert all(r["text"] == f"City answer: {r['query']}" for r in stored)
    histories = [r["body"]["history"] for r in b.seen]
    assert sum(h == [] for h in histories) == kept  # base: the query alone
    shots = [h for h in histories if h]
    assert len(shots) == kept
    for history in shots:
        assert len(history) == 16  # eight demonstrations: a user turn and an answer each
        assert [t["role"] for t in history] == ["user", "assistant"] * 8
    result = invoke(db, "run", "compass_respond", "--world", WORLD, "--model", "city-bot",
                    "--variant", "explicit-refusal", "--models-file", str(models))
    assert result.exit_code == 2, result.output
    assert "explicit-refusal" in result.output and "keeps its own" in result.output


def test_compass_probes_reach_a_deployed_bot_de_identified(db, bot):
    """A COMPASS query carrying a customer's e-mail is sent to a deployed bot with the typed
    placeholder instead, and what was changed is kept with the response; a target that is not
    a live endpoint is sent the query as it is, with nothing recorded."""
    b, models = bot
    email = "zora.quill@example.com"
    [first] = query_rows(db, "SELECT id, text FROM compass_queries WHERE status = 'kept' "
                             "ORDER BY id LIMIT 1")
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE compass_queries SET text = ? WHERE id = ?",
                     (f"{first['text']} Write to me at {email}.", first["id"]))
    result = invoke(db, "run", "compass_respond", "--world", WORLD, "--model", "city-bot",
                    "--model", "offline/comply-all", "--variant", "base", "--models-file",
                    str(models))
    assert result.exit_code == 0, result.output
    sent = [r["body"]["message"] for r in b.seen]
    assert all(email not in m for m in sent)
    assert f"{first['text']} Write to me at <EMAIL_1>." in sent
    rows = {(r["query_id"], r["model"]): r["redactions"] for r in query_rows(
        db, "SELECT query_id, model, redactions FROM compass_responses")}
    assert json.loads(rows[(first["id"], "city-bot")]) == {"EMAIL": 1}
    others = [json.loads(v) for (q, m), v in rows.items() if m == "city-bot" and q != first["id"]]
    assert others and all(v == {} for v in others)
    assert {v for (_q, m), v in rows.items() if m == "offline/comply-all"} == {None}


# ------------------------------------------------------------------ the models file


def test_missing_url_exits_2_naming_the_file_and_field(db, tmp_path):
    bad = tmp_path / "bad-models.yaml"
    bad.write_text('city-bot:\n  kind: http\n  body: {"message": "{query}"}\n'
                   "  answer: $.reply.text\n", encoding="utf-8")
    result = invoke(db, "run", "respond", "--all", "--model", "city-bot", "--models-file",
                    str(bad))
    assert result.exit_code == 2, result.output
    [line] = [x for x in result.output.splitlines() if x.startswith("copal: error:")]
    assert "bad-models.yaml" in line and "'city-bot'" in line and "url: Field required" in line


GOOD = ('  url: https://bot.example.org/chat\n  body: {"message": "{query}"}\n'
        "  answer: $.reply.text\n")


@pytest.mark.parametrize("entry, message", [
    ("  kind: http\n" + GOOD.replace("  answer: $.reply.text\n", ""), "answer: Field required"),
    ("  kind: http\n" + GOOD.replace("{query}", "hello"), "{query} placeholder"),
    ("  kind: http\n" + GOOD.replace("https://", "ftp://"), "url: Value error"),
    ("  kind: http\n" + GOOD.replace("/chat", "/chat?k=${KEY}"), "put secrets in headers"),
    ("  kind: http\n" + GOOD.replace("$.reply.text", "$.reply..text"), "cannot read"),
    ("  kind: http\n  method: GET\n" + GOOD, "method"),
    ("  kind: http\n  model: openai/x\n" + GOOD, "model: Extra inputs"),
    ("  kind: http\n  temperature: 0\n" + GOOD, "temperature: Extra inputs"),
    ("  kind: http\n  rpm: 0\n" + GOOD, "rpm"),
    ("  kind: http\n  headers: {Bad Name: x}\n" + GOOD, "not a valid header name"),
    ("  kind: http\n  headers: {X-Key: \"${1BAD}\"}\n" + GOOD, "malformed"),
    ("  kind: grpc\n" + GOOD, "kind: must be 'http'"),
])
def test_bad_http_entry_is_a_one_line_error(tmp_path, entry, message):
    path = tmp_path / "models.yaml"
    path.write_text("city-bot:\n" + entry, encoding="utf-8")
    with pytest.raises(ModelConfigError) as info:
        load_models_file(path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text and message in text


def spec_with_header(tmp_path: Path) -> Any:
    path = tmp_path / "models.yaml"
    path.write_text('city-bot:\n  kind: http\n  headers: {Authorization: "Bearer ${CITY_X}"}\n'
                    + GOOD, encoding="utf-8")
    return load_models_file(path)["city-bot"]


def test_unset_header_variable_is_a_setup_error(tmp_path, monkeypatch):
    monkeypatch.delenv("CITY_X", raising=False)
    spec = spec_with_header(tmp_path)
    assert spec.http is not None and spec.http.env_names() == ["CITY_X"]
    with pytest.raises(ModelConfigError, match="CITY_X .*is not set"):
        spec.secrets()
    monkeypatch.setenv("CITY_X", "v1")
    assert spec.secrets() == ["v1"] and "v1" not in repr(spec)


# ------------------------------------------------------------------ body, path, cache key


MESSAGES = [{"role": "system", "content": "copal's prompt"},
            {"role": "user", "content": "Earlier?"}, {"role": "assistant", "content": "Yes."},
            {"role": "user", "content": 'Say "{conversation}" now'}]


def test_whole_value_placeholders_insert_json_and_inline_ones_insert_text():
    template = {"q": "{query}", "h": "{conversation}", "n": [1, None, True],
                "text": "Q: {query} | H: {conversation}", "{query}": "key kept"}
    body = http_target.render_body(template, MESSAGES)
    history = [{"role": "user", "content": "Earlier?"}, {"role": "assistant", "content": "Yes."}]
    assert body == {"q": 'Say "{conversation}" now', "h": history, "n": [1, None, True],
                    "text": f'Q: Say "{{conversation}}" now | H: {json.dumps(history)}',
                    "{query}": "key kept"}
    assert "copal's prompt" not in json.dumps(body)


@pytest.mark.parametrize("path, found", [
    ("$.reply.text", "a"), ("reply.text", "a"), ("$.items[1].t", "c"), ("$.items[-1].t", "c"),
    ('$.odd["x.y"]', "d"), ("$['odd']['x.y']", "d"),
    ("$.reply.missing", "!no key 'missing' at $.reply"), ("$.items[5]", "!has 2 item(s)"),
    ("$.reply[0]", "!is an object, not a list"), ("$.items", "!is a list, not text"),
])
def test_answer_path_finds_the_text_or_says_where_it_stopped(path, found):
    data = {"reply": {"text": "a"}, "items": [{"t": "b"}, {"t": "c"}], "odd": {"x.y": "d"}}
    if not found.startswith("!"):
        assert http_target.extract(data, path) == found
        return
    with pytest.raises(http_target.HttpAnswerError, match="answer path") as info:
        http_target.extract(data, path)
    assert found[1:] in str(info.value)


def test_cache_key_holds_header_names_never_values(tmp_path, monkeypatch):
    spec = spec_with_header(tmp_path)
    monkeypatch.setenv("CITY_X", "first-token")
    payload = request_payload(spec, MESSAGES, task="chatbot", template_version="v1")
    monkeypatch.setenv("CITY_X", "second-token")
    again = request_payload(spec, MESSAGES, task="other", template_version="v2")
    assert request_hash(payload) == request_hash(again)  # same bytes on the wire but the secret
    assert payload["headers"] == ["Authorization"] and "token" not in json.dumps(payload)
    other = request_payload(spec, MESSAGES[:2], task="chatbot", template_version="v1")
    assert request_hash(other) != request_hash(payload)
