"""LLMClient against an in-process OpenAI-compatible HTTP server (real litellm `openai/` route).

The server plays a script of faults (429 with Retry-After, 500, slow answers, dropped
connections, truncated / schema-invalid / empty JSON) and counts requests, so the tests can
assert the retry loop, the repair round, the cache and the call log from the outside.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from copal_tui.domain.outputs import CompositionOut
from copal_tui.llm import retry
from copal_tui.llm.client import LLMClient, LLMError
from copal_tui.llm.models import ModelConfigError, ModelSpec, resolve
from store.db import connect
from store.migrations.apply import migrate
from store.pipeline import llm_log
from tests.http_stub_support import JsonHandler, chat_completion, serve_http

SECRET = "sk-test-SECRET123"
KEY_ENV = "COPAL_TEST_STUB_KEY"
MESSAGES = [{"role": "system", "content": "You are a test."}, {"role": "user", "content": "hi"}]
USAGE = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
GOOD = json.dumps({"accept": True, "pattern": None, "reason": "fine"})


@dataclass
class Stub:
    """Behaviours are popped per request; when the script is empty, `default` answers."""

    script: list[tuple[Any, ...]] = field(default_factory=list)
    default: tuple[Any, ...] = ("ok", "hello")
    requests: list[dict[str, Any]] = field(default_factory=list)
    # time.monotonic() when each request arrived: gaps the client must leave show up here.
    arrived: list[float] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)
    active: int = 0
    max_active: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self) -> tuple[Any, ...]:
        with self.lock:
            return self.script.pop(0) if self.script else self.default


def stub_handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            with stub.lock:
                stub.arrived.append(time.monotonic())
                stub.requests.append(body)
                stub.auth.append(self.headers.get("authorization", ""))
                stub.active += 1
                stub.max_active = max(stub.max_active, stub.active)
            try:
                self._behave(stub.next())
            finally:
                with stub.lock:
                    stub.active -= 1

        def _behave(self, act: tuple[Any, ...]) -> None:
            kind = act[0]
            if kind == "429":
                self.send_json(429, {"error": {"message": "slow down", "type": "rate_limit"}},
                              {"Retry-After": str(act[1])})
            elif kind == "500":
                self.send_json(500, {"error": {"message": "upstream exploded"}})
            elif kind == "401":
                # Like real providers, the error echoes the key it was given.
                given = self.headers.get("authorization", "").removeprefix("Bearer ")
                self.send_json(401, {"error": {"message": f"Incorrect API key provided: {given}"}})
            elif kind == "drop":
                self.close_connection = True
                self.connection.close()
            else:
                if kind == "slow":
                    time.sleep(act[1])
                    act = ("ok", act[2])
                self.send_json(200, chat_completion(
                    act[1], finish_reason=act[2] if len(act) > 2 else "stop", usage=USAGE,
                    completion_id="chatcmpl-1"))

    return Handler


@pytest.fixture
def stub() -> Iterator[tuple[Stub, str]]:
    s = Stub()
    with serve_http(stub_handler(s)) as url:
        yield s, url


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "llm.db"
    d = connect(path, create=True)
    migrate(d)
    d.execute("INSERT INTO runs (id, stage, status, started_at) VALUES ('r1', 'test', 'running', 'x')")
    d.conn.close()
    return path


@pytest.fixture
def spec(stub: tuple[Stub, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModelSpec:
    monkeypatch.setenv(KEY_ENV, SECRET)
    models = tmp_path / "models.yaml"
    models.write_text(
        f"stub:\n  model: openai/stub\n  api_base: {stub[1]}\n  api_key_env: {KEY_ENV}\n"
        "  timeout: 0.5\n  max_retries: 2\n  temperature: 0\n", encoding="utf-8")
    return resolve("stub", models)


def client(db: Path, **kw: Any) -> LLMClient:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("timeout_grace", 0.2)
    return LLMClient(db, "r1", **kw)


def rows(db: Path, table: str = "llm_calls") -> list[dict[str, Any]]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY rowid")]
    finally:
        conn.close()


async def test_success_then_cache_serves_with_zero_http(stub, spec, db):
    server, _ = stub
    async with client(db) as c:
        first = await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
        second = await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
    assert (first.text, first.cached, first.attempts) == ("hello", False, 1)
    assert (first.prompt_tokens, first.completion_tokens) == (11, 3)
    assert first.cost is None  # openai/stub has no price: unknown, not zero
    assert (second.text, second.cached, second.attempts) == ("hello", True, 0)
    assert len(server.requests) == 1
    assert server.auth == [f"Bearer {SECRET}"]
    assert server.requests[0]["temperature"] == 0
    assert c.counters == {"calls": 1, "cache_hits": 1, "failures": 0, "cost": 0.0}
    logged = rows(db)
    assert [(r["cached"], r["attempt"], r["error"]) for r in logged] == [(0, 1, None), (1, 0, None)]
    assert logged[0]["run_id"] == "r1" and logged[0]["model"] == "stub"
    assert json.loads(logged[0]["request"])["messages"] == MESSAGES
    assert logged[0]["prompt_tokens"] == 11 and logged[0]["latency_ms"] > 0
    assert len(rows(db, "llm_cache")) == 1

    # A new client (a re-run) is served from the stored cache; another template version is not.
    async with client(db) as c:
        again = await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
        other = await c.complete(spec, MESSAGES, task="chatbot", template_version="v2")
    assert again.cached and not other.cached
    assert len(server.requests) == 2


async def test_priced_model_cost_is_recorded(stub, db):
    # The cost comes from litellm's own pricing of the response (stamped on it), so a model in
    # its price map costs its tokens at the map's rates, and the cost reaches the log and totals.
    from copal_tui.llm import provider

    server, url = stub
    spec = ModelSpec(name="priced", model="openai/gpt-4o-mini", api_base=url)
    async with client(db) as c:
        answer = await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
    price = provider.get_litellm().model_cost["gpt-4o-mini"]
    expected = 11 * price["input_cost_per_token"] + 3 * price["output_cost_per_token"]
    assert expected > 0
    assert answer.cost == pytest.approx(expected)
    assert c.counters["cost"] == pytest.approx(expected)
    assert rows(db)[0]["cost"] == pytest.approx(expected)


async def test_429_honours_retry_after(stub, spec, db, monkeypatch):
    server, _ = stub
    server.script = [("429", "0.4")]
    delays: list[float] = []
    chosen = LLMClient._delay

    def record(self: LLMClient, exc: BaseException, attempt: int) -> float:
        delays.append(chosen(self, exc, attempt))
        return delays[-1]

    monkeypatch.setattr(LLMClient, "_delay", record)
    async with client(db) as c:
        answer = await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
    assert answer.text == "hello" and answer.attempts == 2
    assert len(server.requests) == 2
    # The server's value, not the 10 ms backoff base; and the retry really waited for it: it
    # reached the server at least that long after the request the 429 answered. (A lower
    # bound between two recorded arrivals: a loaded machine can only make the gap longer.)
    assert delays == [0.4]
    assert server.arrived[1] - server.arrived[0] >= 0.4
    logged = rows(db)
    assert [r["attempt"] for r in logged] == [1, 2]
    assert "RateLimitError" in logged[0]["error"] and logged[1]["error"] is None


async def test_500_and_dropped_connection_are_retried(stub, spec, db):
    server, _ = stub
    server.script = [("500",), ("drop",)]
    async with client(db) as c:
        answer = await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
    assert answer.attempts == 3 and len(server.requests) == 3
    errors = [r["error"] for r in rows(db)]
    assert "InternalServerError" in errors[0] and errors[1] and errors[2] is None


async def test_timeout_is_retried(stub, spec, db):
    server, _ = stub
    server.script = [("slow", 1.5, "late")]
    async with client(db) as c:
        answer = await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
    # The second attempt's answer: the slow first one ("late") was cut off by the timeout
    # and never used, whatever the machine's speed.
    assert answer.text == "hello" and answer.attempts == 2
    first = rows(db)[0]
    assert first["response"] is None and "imeout" in first["error"]


async def test_failure_after_retries_has_a_reason(stub, spec, db):
    server, _ = stub
    server.default = ("500",)
    async with client(db) as c:
        with pytest.raises(LLMError) as info:
            await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
        assert c.failures == 1 and c.calls == 3
    err = info.value
    assert err.attempts == 3 and err.status == 500 and not err.fatal
    assert "InternalServerError" in err.reason and "after 3 attempts" in err.reason
    assert len(server.requests) == 3
    assert [r["attempt"] for r in rows(db)] == [1, 2, 3]
    assert rows(db, "llm_cache") == []  # failures are never cached


async def test_connection_refused_fails_after_retries(db, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    spec = ModelSpec(name="dead", model="openai/stub", api_base="http://127.0.0.1:9/v1",
                     api_key_env=KEY_ENV, timeout=0.5, max_retries=1)
    async with client(db) as c:
        with pytest.raises(LLMError) as info:
            await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
    assert info.value.attempts == 2
    assert len(rows(db)) == 2


async def test_truncated_json_gets_one_repair(stub, spec, db):
    server, _ = stub
    server.script = [("ok", '{"accept": true, "reas', "length"), ("ok", GOOD)]
    async with client(db) as c:
        out = await c.structured(spec, MESSAGES, CompositionOut, task="composition",
                                 template_version="v1")
    assert out.ok and out.value is not None and out.value.accept
    assert (out.calls, out.cached, out.reason) == (2, False, None)
    assert len(server.requests) == 2
    repair = server.requests[1]["messages"]
    assert repair[:2] == MESSAGES
    assert repair[2] == {"role": "assistant", "content": '{"accept": true, "reas'}
    assert repair[3]["role"] == "user" and "invalid because" in repair[3]["content"]
    assert "cut off" in repair[3]["content"]

    # The re-run is free: both the bad answer and the repair come from the cache.
    async with client(db) as c:
        again = await c.structured(spec, MESSAGES, CompositionOut, task="composition",
                                   template_version="v1")
    assert again.ok and again.cached and again.calls == 2
    assert len(server.requests) == 2


async def test_schema_invalid_twice_fails_with_raw_and_reason(stub, spec, db):
    server, _ = stub
    server.default = ("ok", '```json\n{"accept": "maybe"}\n```')
    async with client(db) as c:
        out = await c.structured(spec, MESSAGES, CompositionOut, task="composition",
                                 template_version="v1")
        assert c.failures == 1
    assert out.value is None and not out.ok
    assert out.raw == '```json\n{"accept": "maybe"}\n```'
    assert out.reason is not None and "invalid after one repair" in out.reason
    assert "accept" in out.reason and "reason" in out.reason  # names the bad and missing fields
    assert len(server.requests) == 2 and out.calls == 2  # exactly one repair, never two


async def test_empty_content_is_repaired_then_fails(stub, spec, db):
    server, _ = stub
    server.script = [("ok", ""), ("ok", GOOD)]
    async with client(db) as c:
        out = await c.structured(spec, MESSAGES, CompositionOut, task="composition",
                                 template_version="v1")
        assert out.ok and out.calls == 2
        server.default = ("ok", "")
        bad = await c.structured(spec, [*MESSAGES, {"role": "user", "content": "again"}],
                                 CompositionOut, task="composition", template_version="v1")
        with pytest.raises(LLMError) as info:
            await c.complete(spec, [{"role": "user", "content": "x"}], task="chatbot",
                             template_version="v1")
    assert server.requests[1]["messages"][-1]["content"].startswith("Your answer was empty")
    assert bad.value is None and bad.reason is not None and "empty" in bad.reason
    assert "empty response" in info.value.reason
    assert len(server.requests) == 5
    # Empty answers are logged (with an error) but never cached.
    assert [r["response"] for r in rows(db, "llm_cache")] == [GOOD]


async def test_identical_concurrent_requests_share_one_call(stub, spec, db):
    server, _ = stub
    server.default = ("slow", 0.2, "shared")
    async with client(db) as c:
        a, b = await asyncio.gather(
            c.complete(spec, MESSAGES, task="chatbot", template_version="v1"),
            c.complete(spec, MESSAGES, task="chatbot", template_version="v1"))
    assert a.text == b.text == "shared" and {a.cached, b.cached} == {True, False}
    assert len(server.requests) == 1


async def test_concurrency_cap_and_rpm(stub, spec, db, monkeypatch):
    server, _ = stub
    server.default = ("slow", 0.15, "ok")
    capped = spec.model_copy(update={"max_concurrency": 5})
    async with client(db, concurrency=2) as c:
        await asyncio.gather(*[
            c.complete(capped, [{"role": "user", "content": str(i)}], task="chatbot",
                       template_version="v1") for i in range(6)])
    assert server.max_active == 2  # min(model cap 5, run concurrency 2)

    server.default = ("ok", "fast")
    limited = spec.model_copy(update={"rpm": 600.0})  # one start every 0.1 s
    # The limiter reads a clock frozen at 100 s and records the waits it asks for instead of
    # sleeping: the schedule it builds is then exact, however fast or slow the machine.
    waits: list[float] = []

    async def wait(delay: float) -> None:
        waits.append(delay)
        await asyncio.sleep(0)

    frozen = SimpleNamespace(time=lambda: 100.0)
    monkeypatch.setattr(retry, "asyncio", SimpleNamespace(get_running_loop=lambda: frozen,
                                                          sleep=wait))
    async with client(db) as c:
        await asyncio.gather(*[
            c.complete(limited, [{"role": "user", "content": f"r{i}"}], task="chatbot",
                       template_version="v1") for i in range(4)])
    # The first call starts at once, each later one a further 0.1 s after it: no burst.
    assert sorted(waits) == pytest.approx([0.1, 0.2, 0.3])
    assert len(server.requests) == 6 + 4


async def test_writes_are_batched_and_flushed_at_close(stub, spec, db):
    c = client(db, flush_interval=60, flush_rows=1000)
    await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
    assert rows(db) == [] and rows(db, "llm_cache") == []
    await c.aclose()
    assert len(rows(db)) == 1 and len(rows(db, "llm_cache")) == 1

    c = client(db, flush_interval=0.05)
    await c.complete(spec, [{"role": "user", "content": "timer"}], task="chatbot",
                     template_version="v1")
    # The timer flushes without waiting for close: poll for its write (bounded, so a timer
    # that never fires fails here rather than hanging). On a loaded machine the call may take
    # a retry, which logs one more row: what must be there is the answered "timer" call.
    def answered_timer() -> list[dict]:
        return [r for r in rows(db) if "timer" in r["request"] and r["response"]]

    for _ in range(200):
        if answered_timer():
            break
        await asyncio.sleep(0.05)
    assert len(answered_timer()) == 1
    await c.aclose()


async def test_secret_never_stored(stub, spec, db, tmp_path):
    server, _ = stub
    server.script = [("429", "0"), ("500",), ("ok", "fine")]
    async with client(db) as c:
        await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
        await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")  # cache hit
        server.script = [("ok", '{"broken'), ("ok", GOOD)]
        await c.structured(spec, MESSAGES, CompositionOut, task="composition",
                           template_version="v1")
        server.script = [("401",)]
        with pytest.raises(LLMError) as info:  # fatal: raised even from structured()
            await c.structured(spec, [{"role": "user", "content": "auth"}], CompositionOut,
                               task="composition", template_version="v1")
    assert info.value.fatal and info.value.status == 401
    assert SECRET not in str(info.value) and SECRET not in repr(info.value.reason)
    assert "[redacted]" in rows(db)[-1]["error"]  # the echoed key was scrubbed

    d = connect(db)
    tables = [r[0] for r in d.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    dump = []
    for table in tables:
        for row in d.execute(f"SELECT * FROM {table}"):
            dump.extend(str(v) for v in tuple(row))
    d.conn.close()
    text = "\n".join(dump)
    assert "llm_calls" in tables and "fine" in text
    assert SECRET not in text and "SECRET123" not in text
    for f in tmp_path.iterdir():  # the raw bytes of the database and its WAL, too
        if f.name.startswith("llm.db"):
            assert b"SECRET123" not in f.read_bytes()


async def test_missing_key_variable_is_a_config_error(stub, spec, db, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    async with client(db) as c:
        with pytest.raises(ModelConfigError, match=KEY_ENV):
            await c.complete(spec, MESSAGES, task="chatbot", template_version="v1")
    assert llm_log.calls_for_run(connect(db), "r1") == []
