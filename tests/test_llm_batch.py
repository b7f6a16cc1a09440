"""`copal run ... --batch` through the CLI against a local files + batches stub (tests/batch_stub).

A batch's answers are stored as ordinary calls: responses written by the stage, one call-log
row per request marked with its batch and priced at the model map's batch rates, cache rows
under the live path's keys (a live run afterwards makes no call). A run killed while its batch
is pending is resumed by a re-run without a second submission; a failed batch line goes live;
models without a batch API run live with a one-line notice.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.batch_stub import USAGE, BatchStub, serve

WORLD = "meridian-bank"
SECRET = "sk-batch-SECRET-99"
MODEL = "openai/gpt-4o-mini"  # in litellm's price map, with batch prices
DEADLINE = 120.0  # bounds every polling loop; never reached when things work


@pytest.fixture
def world(cli, initialised: Path, samples: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COPAL_TEST_KEY", SECRET)
    monkeypatch.setenv("COPAL_BATCH_POLL", "0.05")
    result = cli("import", str(samples / "meridian_bank.yaml"),
                 str(samples / "meridian_bank.jsonl"))
    assert result.exit_code == 0, result.output
    return initialised


@pytest.fixture
def stub():
    s = BatchStub()
    with serve(s) as url:
        yield s, url


def models_file(path: Path, url: str) -> Path:
    path.write_text("".join(f"{name}:\n  model: {MODEL}\n  api_base: {url}\n"
                            "  api_key_env: COPAL_TEST_KEY\n  timeout: 10\n  max_retries: 0\n"
                            for name in ("bot", "judge")), encoding="utf-8")
    return path


def q(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def respond(cli, models: Path, *extra: str, model: str = "bot"):
    return cli("run", "respond", "--world", WORLD, "--model", model, "--models-file",
               str(models), *extra)


def batch_price() -> float:
    """One stub answer (10 prompt, 5 completion tokens) at the map's batch rates."""
    import litellm

    rates = litellm.model_cost["gpt-4o-mini"]
    return (USAGE["prompt_tokens"] * rates["input_cost_per_token_batches"]
            + USAGE["completion_tokens"] * rates["output_cost_per_token_batches"])


def test_respond_batch_stores_ordinary_calls_at_the_batch_price(cli, world, stub, tmp_path):
    s, url = stub
    models = models_file(tmp_path / "m.yaml", url)
    result = respond(cli, models, "--batch")
    assert result.exit_code == 0, result.output
    assert "submitted batch batch_1 (12 requests)" in result.output
    assert "batch batch_1 (bot): 0/12 requests, in_progress" in result.output
    assert (s.uploads, s.creates, s.live_calls) == (1, 1, 0)

    rows = q(world, "SELECT text, failure FROM responses WHERE model = 'bot'")
    assert len(rows) == 12 and all(text and failure is None for text, failure in rows)
    calls = q(world, "SELECT request_hash, json_extract(request, '$.batch'), cost, cached, "
                     "prompt_tokens, completion_tokens, error FROM llm_calls WHERE cached = 0")
    assert len(calls) == 12
    assert {c[1] for c in calls} == {"batch_1"}
    assert all(c[2] == pytest.approx(batch_price()) and c[4:] == (10, 5, None) for c in calls)
    [(run_calls, run_cost)] = q(world, "SELECT calls, cost FROM runs")
    assert run_calls == 12 and run_cost == pytest.approx(12 * batch_price())
    assert q(world, "SELECT id, status, requests FROM llm_batches") == [("batch_1", "done", 12)]
    assert not any(SECRET in str(r) for r in q(world, "SELECT request, response FROM llm_calls"))

    # The same requests live: every one is a cache hit (same keys), the provider is not asked.
    batch_keys = {c[0] for c in calls}
    with sqlite3.connect(world) as conn:
        conn.execute("DELETE FROM responses WHERE model = 'bot'")
    live = respond(cli, models)
    assert live.exit_code == 0, live.output
    assert s.live_calls == 0
    hits = q(world, "SELECT request_hash FROM llm_calls WHERE cached = 1 AND run_id = "
                    "(SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1)")
    assert len(hits) == 12 and {h[0] for h in hits} == batch_keys

    # Nothing left to ask: a re-run with --batch submits nothing.
    again = respond(cli, models, "--batch")
    assert again.exit_code == 0, again.output
    assert (s.uploads, s.creates, s.live_calls) == (1, 1, 0)


def test_a_failed_batch_line_goes_live(cli, world, stub, tmp_path):
    s, url = stub
    first = q(world, "SELECT query FROM items WHERE world_id = ? ORDER BY id", (WORLD,))[0][0]
    s.failing.add(first)
    result = respond(cli, models_file(tmp_path / "m.yaml", url), "--batch")
    assert result.exit_code == 0, result.output
    assert (s.creates, s.live_calls) == (1, 1)
    rows = q(world, "SELECT text FROM responses WHERE model = 'bot'")
    assert len(rows) == 12 and all(text for (text,) in rows)
    [(error, marker, response)] = q(world, "SELECT error, json_extract(request, '$.batch'), "
                                           "response FROM llm_calls WHERE error IS NOT NULL")
    assert "upstream failure" in error and marker == "batch_1" and response is None


def test_judge_batch_answers_structured_calls(cli, world, stub, tmp_path):
    s, url = stub
    models = models_file(tmp_path / "m.yaml", url)
    assert respond(cli, models, "--batch").exit_code == 0
    result = cli("run", "judge", "--world", WORLD, "--judge", "judge", "--models-file",
                 str(models), "--batch")
    assert result.exit_code == 0, result.output
    assert s.creates == 2
    [(responses,)] = q(world, "SELECT COUNT(*) FROM responses")  # the imported ones too
    judged = q(world, "SELECT COUNT(*), SUM(failure IS NULL) FROM judgments "
                      "WHERE judge = 'judge'")
    assert responses > 12 and judged == [(responses, responses)]
    [(n, batch_rows)] = q(world, "SELECT COUNT(*), SUM(json_extract(request, '$.batch') = "
                                 "'batch_2') FROM llm_calls WHERE cached = 0 AND model = 'judge'")
    # Every judge request went in the batch; only a repair (none expected) would go live.
    assert batch_rows == responses and n == responses + s.live_calls


def copal(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "copal_tui", "--db", str(db), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})


def test_a_killed_run_resumes_its_pending_batch_without_resubmitting(cli, world, stub,
                                                                     tmp_path):
    s, url = stub
    models = models_file(tmp_path / "m.yaml", url)
    s.hold = True  # the provider keeps the batch running until the process is gone
    proc = copal(world, "run", "respond", "--world", WORLD, "--model", "bot", "--models-file",
                 str(models), "--batch")
    try:
        end = time.monotonic() + DEADLINE
        while s.polls < 2 and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.05)
        assert s.polls >= 2, proc.stderr.read() if proc.poll() is not None else "no polls"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert q(world, "SELECT id, status, requests FROM llm_batches") == [
        ("batch_1", "pending", 12)]
    assert q(world, "SELECT COUNT(*) FROM llm_batch_requests") == [(12,)]
    assert q(world, "SELECT COUNT(*) FROM responses WHERE model = 'bot'") == [(0,)]

    s.hold = False
    result = respond(cli, models, "--batch")
    assert result.exit_code == 0, result.output
    assert "bot: resuming batch batch_1 (12 requests)" in result.output
    assert (s.uploads, s.creates, s.live_calls) == (1, 1, 0)
    assert q(world, "SELECT COUNT(*), SUM(text IS NOT NULL) FROM responses "
                    "WHERE model = 'bot'") == [(12, 12)]
    assert q(world, "SELECT status FROM llm_batches") == [("done",)]


def test_models_without_a_batch_api_run_live_with_a_notice(cli, world, stub, tmp_path):
    s, _url = stub
    empty = tmp_path / "none.yaml"
    empty.write_text("{}\n", encoding="utf-8")
    result = respond(cli, empty, "--batch", model="offline/comply-all")
    assert result.exit_code == 0, result.output
    notice = [line for line in result.output.splitlines() if "no batch API" in line]
    assert notice == ["copal: respond: offline/comply-all: the offline engine has no batch "
                      "API; its calls go live"]
    assert q(world, "SELECT COUNT(*), SUM(text IS NOT NULL) FROM responses "
                    "WHERE model = 'offline/comply-all'") == [(12, 12)]
    assert q(world, "SELECT COUNT(*) FROM llm_batches") == [(0,)]
    assert s.creates == 0

    local = tmp_path / "ollama.yaml"
    local.write_text("local:\n  model: ollama/llama3\n  api_base: http://127.0.0.1:9\n"
                     "  timeout: 2\n  max_retries: 0\n", encoding="utf-8")
    other = respond(cli, local, "--batch", model="local")
    assert "local: litellm has no batch API for 'ollama/llama3'; its calls go live" \
        in other.output
    assert q(world, "SELECT COUNT(*) FROM llm_calls WHERE model = 'local' AND cached = 0 "
                    "AND json_extract(request, '$.batch') IS NULL") == [(12,)]
    assert s.creates == 0


class ExtraLines(BatchStub):
    """A provider whose output file repeats one answer and adds one for a request it was never
    sent (a custom_id of no batch of this store)."""

    def _finish(self, bid: str) -> None:
        super()._finish(bid)
        fid = self.batches[bid]["output_file_id"]
        lines = self.files[fid].decode().splitlines()
        stranger = json.loads(lines[0]) | {"custom_id": "f" * 64}
        self.files[fid] = "\n".join([*lines, lines[0], json.dumps(stranger)]).encode() + b"\n"


def test_result_lines_not_of_the_batch_are_ignored_and_a_repeat_counts_once(cli, world,
                                                                           tmp_path):
    s = ExtraLines()
    with serve(s) as url:
        result = respond(cli, models_file(tmp_path / "m.yaml", url), "--batch")
    assert result.exit_code == 0, result.output
    assert ("batch batch_1: 1 result line(s) for requests it does not hold ignored, 1 repeated "
            "line(s) counted once") in result.output
    calls = q(world, "SELECT request_hash FROM llm_calls WHERE cached = 0")
    assert len(calls) == len({c[0] for c in calls}) == 12  # one row per request of the batch
    [(run_calls, run_cost)] = q(world, "SELECT calls, cost FROM runs")
    assert run_calls == 12 and run_cost == pytest.approx(12 * batch_price())
    assert q(world, "SELECT COUNT(*) FROM llm_cache WHERE request_hash = ?", ("f" * 64,)) == [(0,)]
    assert q(world, "SELECT COUNT(*) FROM llm_cache") == [(12,)]
    assert s.live_calls == 0
