"""Generation settings as the papers state them: role defaults, models-file overrides, the
reasoning effort, and what the manifests and the report record of them.

The reference rules, restated:
- COPAL paper, Appendix A.2: "All reported calls use no tools, an 8,000-token output limit, and
  provider-default sampling with temperature 1.0": a construction (generator) call, a target's
  answer and COPAL's response judge are sent temperature 1.0 and max_tokens 8000 unless the
  models file says otherwise for that model.
- COMPASS (scripts/config/response_judge.yaml): the judge runs gpt-5-mini with
  `reasoning_effort: "high"`; a models-file entry reproduces it, and the effort reaches the
  provider call. A model litellm does not list as supporting a reasoning effort is not sent
  one (litellm refuses the call otherwise), and that is recorded.
- A request differing only in the reasoning effort is another cache entry; a request without
  one has the payload fields it always had.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copal_tui.domain.outputs import TASK_OUTPUTS
from copal_tui.llm.client import LLMClient
from copal_tui.llm.models import TASK_ROLES, ModelConfigError, ModelSpec, resolve
from copal_tui.llm.request import request_payload
from store.db import connect
from store.migrations.apply import migrate
from tests.batch_stub import BatchStub
from tests.batch_stub import serve as serve_batches
from tests.http_stub_support import serve_http
from tests.test_llm_http import Stub, stub_handler

MESSAGES = [{"role": "system", "content": "You are a test."}, {"role": "user", "content": "hi"}]
PAPER_TEMPERATURE, PAPER_MAX_TOKENS = 1.0, 8000  # COPAL Appendix A.2
# The fields a request payload had before reasoning efforts and schemas were sent.
PLAIN_FIELDS = {"model", "api_base", "messages", "temperature", "max_tokens", "task",
                "template_version"}


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
    d.conn.close()
    return path


def models(tmp_path: Path, entries: dict[str, dict[str, Any]]) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(json.dumps(entries), encoding="utf-8")  # JSON is YAML
    return path


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def test_reasoning_effort_reaches_the_call_and_keys_the_cache(stub, db, tmp_path):
    server, url = stub
    path = models(tmp_path, {
        "judge-high": {"model": "openai/gpt-5-mini", "api_base": url, "reasoning_effort": "high"},
        "judge-plain": {"model": "openai/gpt-5-mini", "api_base": url}})
    high, plain = resolve("judge-high", path), resolve("judge-plain", path)
    async with LLMClient(db, None) as c:
        first = await c.complete(high, MESSAGES, task="compass_judge", template_version="v1")
        other = await c.complete(plain, MESSAGES, task="compass_judge", template_version="v1")
        again = await c.complete(high, MESSAGES, task="compass_judge", template_version="v1")
        record = c.settings_record()
    assert server.requests[0]["reasoning_effort"] == "high"
    assert "reasoning_effort" not in server.requests[1]
    # Two requests differing only in the effort: two cache entries, each replayed by its own.
    assert not first.cached and not other.cached and again.cached
    assert len(server.requests) == 2 and first.key != other.key
    assert rows(db, "SELECT COUNT(*) FROM llm_cache") == [(2,)]
    logged = [json.loads(r) for (r,) in rows(db, "SELECT request FROM llm_calls WHERE cached = 0"
                                                 " ORDER BY rowid")]
    assert logged[0]["reasoning_effort"] == "high" and "reasoning_effort" not in logged[1]
    assert set(request_payload(plain, MESSAGES, task="compass_judge",
                               template_version="v1")) == PLAIN_FIELDS
    assert record["judge-high"]["judge"]["reasoning_effort"] == "high"
    assert record["judge-high"]["judge"]["reasoning_effort_sent"] is True


async def test_a_model_without_reasoning_support_is_not_sent_it(stub, db, tmp_path):
    server, url = stub
    path = models(tmp_path, {
        "mini-high": {"model": "openai/gpt-4o-mini", "api_base": url, "reasoning_effort": "high"},
        "mini": {"model": "openai/gpt-4o-mini", "api_base": url},
        "offline-high": {"model": "offline/comply-all", "reasoning_effort": "high"}})
    async with LLMClient(db, None) as c:
        asked = await c.complete(resolve("mini-high", path), MESSAGES, task="chatbot",
                                 template_version="v1")
        plain = await c.complete(resolve("mini", path), MESSAGES, task="chatbot",
                                 template_version="v1")
        offline = await c.complete(resolve("offline-high", path), MESSAGES, task="chatbot",
                                   template_version="v1")
        record = c.settings_record()
    # The call succeeds, without the effort; what it sends is the plain model's request.
    assert asked.text and "reasoning_effort" not in server.requests[0]
    assert plain.cached and asked.key == plain.key and len(server.requests) == 1
    assert offline.text  # the offline engine answers as before
    for name in ("mini-high", "offline-high"):
        assert record[name]["target"]["reasoning_effort"] == "high"
        assert record[name]["target"]["reasoning_effort_sent"] is False


def test_reasoning_effort_values_and_http_targets(tmp_path):
    with pytest.raises(ModelConfigError, match="reasoning_effort"):
        resolve("m", models(tmp_path, {"m": {"model": "openai/x", "reasoning_effort": "huge"}}))
    with pytest.raises(ModelConfigError, match="reasoning_effort"):
        resolve("bot", models(tmp_path, {"bot": {"kind": "http", "url": "https://b.example/c",
                                                  "body": {"q": "{query}"}, "answer": "$.a",
                                                  "reasoning_effort": "high"}}))
    for effort in ("low", "medium", "high"):
        spec = resolve("m", models(tmp_path, {"m": {"model": "openai/x",
                                                    "reasoning_effort": effort}}))
        assert spec.reasoning_effort == effort


async def test_generator_and_target_calls_get_the_papers_settings(stub, db):
    server, url = stub
    spec = ModelSpec(name="plain", model="openai/stub", api_base=url)
    async with LLMClient(db, None) as c:
        for task in ("grounding", "chatbot", "judge_contract", "compass_judge"):
            await c.complete(spec, MESSAGES, task=task, template_version="v1")
        record = c.settings_record()
    sent = [(r.get("temperature"), r.get("max_tokens")) for r in server.requests]
    paper = (PAPER_TEMPERATURE, PAPER_MAX_TOKENS)
    # Generator, target and COPAL's judge: the paper's settings; COMPASS's judge: none sent.
    assert sent == [paper, paper, paper, (None, None)]
    assert (record["plain"]["generator"]["temperature"],
            record["plain"]["generator"]["max_tokens"]) == paper


async def test_a_models_file_value_wins_over_the_role_default(stub, db, tmp_path):
    server, url = stub
    path = models(tmp_path, {"tuned": {"model": "openai/stub", "api_base": url,
                                       "temperature": 0.2, "max_tokens": 512},
                             "cold": {"model": "openai/stub", "api_base": url,
                                      "temperature": 0}})
    async with LLMClient(db, None) as c:
        await c.complete(resolve("tuned", path), MESSAGES, task="generation",
                         template_version="v1")
        await c.complete(resolve("cold", path), MESSAGES, task="chatbot", template_version="v1")
    assert (server.requests[0]["temperature"], server.requests[0]["max_tokens"]) == (0.2, 512)
    assert (server.requests[1]["temperature"], server.requests[1]["max_tokens"]) == (
        0, PAPER_MAX_TOKENS)


def test_every_prompt_task_has_a_role():
    # A new task without a role would silently get no defaults.
    assert set(TASK_OUTPUTS) | {"chatbot"} <= set(TASK_ROLES)


def test_manifests_and_report_record_the_settings(cli, initialised, samples, tmp_path):
    path = models(tmp_path, {"gen": {"model": "offline/heuristic", "temperature": 0.5},
                             "bot": {"model": "offline/keyword-guard",
                                     "reasoning_effort": "high"}})
    mf = ("--models-file", str(path))
    assert cli("import", str(samples / "skyline_air.yaml")).exit_code == 0
    for args in (("run", "ground", "compose", "generate", "select", "--all", "--generator",
                  "gen", *mf),
                 ("run", "respond", "--all", "--model", "bot", *mf),
                 ("run", "judge", "--all", "--judge", "offline/judge", *mf)):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    manifests = {stage: json.loads(m)["model_settings"] for stage, m in rows(
        initialised, "SELECT stage, manifest FROM runs")}
    assert manifests["ground"]["gen"]["generator"] == {
        "litellm_model": "offline/heuristic", "temperature": 0.5,
        "max_tokens": PAPER_MAX_TOKENS, "reasoning_effort": None, "reasoning_effort_sent": False}
    bot = manifests["respond"]["bot"]["target"]
    assert (bot["temperature"], bot["max_tokens"]) == (PAPER_TEMPERATURE, PAPER_MAX_TOKENS)
    assert bot["reasoning_effort"] == "high" and bot["reasoning_effort_sent"] is False
    judge = manifests["judge"]["offline/judge"]["judge"]
    assert (judge["temperature"], judge["max_tokens"]) == (PAPER_TEMPERATURE, PAPER_MAX_TOKENS)
    # The calls carried them (the call log's request is what was sent).
    sent = rows(initialised, "SELECT DISTINCT json_extract(request, '$.temperature'), "
                             "json_extract(request, '$.max_tokens') FROM llm_calls "
                             "WHERE model = 'bot'")
    assert sent == [(PAPER_TEMPERATURE, PAPER_MAX_TOKENS)]

    doc = json.loads(cli("report", "--json").stdout)
    settings = doc["scope"]["provenance"]["copal"]["settings"]
    by = {(s["model"], s["role"]): s for s in settings}
    assert by[("gen", "generator")]["temperature"] == 0.5
    assert by[("bot", "target")]["reasoning_effort"] == "high"
    assert by[("bot", "target")]["reasoning_effort_sent"] is False
    assert by[("offline/judge", "judge")]["max_tokens"] == PAPER_MAX_TOKENS
    terminal = " ".join(cli("report").stdout.split())
    assert "gen (generator): temperature 0.5, max_tokens 8000" in terminal
    assert "bot (target): temperature 1, max_tokens 8000, reasoning_effort high (not sent" \
        in terminal
    # The exported provenance carries them too (csv: one row per suite, model and role).
    out = tmp_path / "audit"
    assert cli("export", "--format", "csv", "--out", str(out)).exit_code == 0
    with (out / "provenance_settings.csv").open(newline="") as f:
        exported = {(r["suite"], r["model"], r["role"]): r for r in csv.DictReader(f)}
    assert float(exported[("copal", "gen", "generator")]["temperature"]) == 0.5
    assert int(exported[("copal", "bot", "target")]["max_tokens"]) == PAPER_MAX_TOKENS
    assert exported[("copal", "bot", "target")]["reasoning_effort"] == "high"
    assert exported[("copal", "bot", "target")]["reasoning_effort_sent"] == "no"


def test_batch_lines_carry_the_same_settings_as_live_calls(cli, initialised, samples,
                                                           tmp_path, monkeypatch):
    monkeypatch.setenv("COPAL_BATCH_POLL", "0.05")
    monkeypatch.setenv("COPAL_TEST_KEY", "sk-batch-settings")
    assert cli("import", str(samples / "meridian_bank.yaml"),
               str(samples / "meridian_bank.jsonl")).exit_code == 0
    s = BatchStub()
    with serve_batches(s) as url:
        path = models(tmp_path, {"bot": {"model": "openai/gpt-5-mini", "api_base": url,
                                         "api_key_env": "COPAL_TEST_KEY",
                                         "reasoning_effort": "low", "max_retries": 0}})
        result = cli("run", "respond", "--world", "meridian-bank", "--model", "bot",
                     "--models-file", str(path), "--batch")
        assert result.exit_code == 0, result.output
        with sqlite3.connect(initialised) as conn:
            conn.execute("DELETE FROM responses WHERE model = 'bot'")
        live = cli("run", "respond", "--world", "meridian-bank", "--model", "bot",
                   "--models-file", str(path))
        assert live.exit_code == 0, live.output
    inputs = [s.files[b["input_file_id"]] for b in s.batches.values()]
    lines = [json.loads(x) for f in inputs for x in f.decode().splitlines()]
    assert lines and s.live_calls == 0  # the live run was answered from the batch's cache
    for line in lines:
        body = line["body"]
        assert (body["temperature"], body["reasoning_effort"]) == (PAPER_TEMPERATURE, "low")
        assert PAPER_MAX_TOKENS in (body.get("max_tokens"), body.get("max_completion_tokens"))
