"""The real HTTP path through the stages: a local OpenAI-compatible server injects faults.

429 with Retry-After, 500, answers slower than the timeout, empty content, truncated and
schema-invalid JSON: each stage finishes, failed units are recorded with their reason, a re-run
fills exactly those, and no API key value is stored anywhere.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from copal_tui.interchange.importer import import_paths
from copal_tui.pipeline.base import CopalOptions, Options
from copal_tui.pipeline.runner import run_stages
from store.db import connect
from store.migrations.apply import migrate
from tests.db_support import query_rows
from tests.stub_server import Stub, serve

SECRET = "sk-stage-SECRET-4242"
WORLD = "meridian-bank"


@pytest.fixture
def setup(tmp_path: Path, samples: Path, monkeypatch: pytest.MonkeyPatch):
    db_path = tmp_path / "http.db"
    db = connect(db_path, create=True)
    migrate(db)
    import_paths(db, [samples / "meridian_bank.yaml", samples / "meridian_bank.jsonl"])
    db.conn.close()
    stub = Stub()
    monkeypatch.setenv("COPAL_TEST_KEY", SECRET)
    with serve(stub) as url:
        models = tmp_path / "models.yaml"
        models.write_text(
            "".join(
                f"{name}:\n  model: openai/{name}\n  api_base: {url}\n"
                "  api_key_env: COPAL_TEST_KEY\n  timeout: 1\n  max_retries: 2\n"
                for name in ("stub-bot", "stub-judge")
            ),
            encoding="utf-8",
        )
        yield db_path, stub, models


def _opts(models_file: Path, **kw) -> Options:
    return Options(worlds=[WORLD], models_file=models_file, backoff_base=0.01, concurrency=4,
                   **kw)


def test_respond_survives_faults_and_refills_only_failures(setup):
    db_path, stub, models = setup
    queries = [r["query"] for r in query_rows(db_path, "SELECT query FROM items ORDER BY id")]
    assert len(queries) == 12
    stub.once[queries[0]] = [("429", 0.3)]
    stub.once[queries[1]] = [("500",)]
    stub.once[queries[2]] = [("slow", 2.5)]
    stub.once[queries[3]] = [("empty",)]
    stub.broken.add(queries[4])

    [progress] = run_stages(db_path, ["respond"], _opts(models, models=["stub-bot"]))
    assert progress.status == "done"
    rows = query_rows(db_path, "SELECT r.*, i.query FROM responses r JOIN items i ON i.id = "
                               "r.item_id WHERE model = 'stub-bot'")
    assert len(rows) == 12
    failed = {r["query"]: r["failure"] for r in rows if r["failure"]}
    assert set(failed) == {queries[3], queries[4]}
    assert "empty" in failed[queries[3]]
    assert "500" in failed[queries[4]] or "upstream" in failed[queries[4]]
    answered = {r["query"] for r in rows if r["text"]}
    assert {queries[0], queries[1], queries[2]} <= answered  # retried until they succeeded
    attempts = query_rows(db_path, "SELECT COUNT(*) AS n FROM llm_calls WHERE cached = 0 AND "
                                   "instr(request, ?) > 0", (json.dumps(queries[4])[1:-1],))
    assert attempts[0]["n"] == 3  # one try and two retries, all logged

    stub.broken.clear()
    before = stub.calls
    [again] = run_stages(db_path, ["respond"], _opts(models, models=["stub-bot"]))
    assert again.status == "done" and again.failures == 0
    assert stub.calls - before == 2  # exactly the two failed items
    rows = query_rows(db_path, "SELECT * FROM responses WHERE model = 'stub-bot'")
    assert len(rows) == 12 and all(r["text"] and r["failure"] is None for r in rows)

    before = stub.calls
    run_stages(db_path, ["respond"], _opts(models, models=["stub-bot"]))
    assert stub.calls == before  # nothing left to do: zero calls


def test_judge_repairs_bad_json_records_failures_and_refills(setup):
    db_path, stub, models = setup
    texts = [r["text"] for r in query_rows(db_path, "SELECT text FROM responses ORDER BY id")]
    # Markers: plain words from the responses (the judge sees them inside its JSON input).
    prefixes = [" ".join(t.split()[:8]) for t in texts]
    marks = [m for m in prefixes
             if sum(m in t for t in texts) == 1 and json.dumps(m)[1:-1] == m][:3]
    assert len(marks) == 3
    stub.once[marks[0]] = [("truncate", 25)]
    stub.once[marks[1]] = [("raw", '{"marks": "none"}'), ("raw", "not json at all")]
    stub.once[marks[2]] = [("empty",)]

    opts = _opts(models, judges=["stub-judge"], copal=CopalOptions(modes=["contract"]))
    [progress] = run_stages(db_path, ["judge"], opts)
    assert progress.status == "done" and progress.failures == 1
    rows = query_rows(db_path, "SELECT j.*, r.text FROM judgments j JOIN responses r "
                               "ON r.id = j.response_id")
    assert len(rows) == 36
    bad = [r for r in rows if r["failure"]]
    assert len(bad) == 1 and bad[0]["text"].startswith(marks[1])
    assert "invalid after one repair" in bad[0]["failure"] and "not json" in bad[0]["failure"]
    good = [r for r in rows if not r["failure"]]
    assert all(r["error"] in (0, 1) and r["observed"] is not None for r in good)
    # Counted per model and task: the truncated and the empty answer were repaired, one stayed
    # unusable, the other 33 were valid at once; `copal runs` and the report say so.
    from click.testing import CliRunner

    from copal_tui.cli import main

    listed = CliRunner().invoke(main, ["--db", str(db_path), "runs", "--json"])
    [judge_run] = [r for r in json.loads(listed.stdout) if r["stage"] == "judge"]
    assert (judge_run["repaired"], judge_run["invalid"]) == (2, 1)
    assert judge_run["outputs"]["stub-judge"]["judge_contract"] == {
        "valid": 33, "repaired": 2, "failed": 1}
    report = json.loads(CliRunner().invoke(main, ["--db", str(db_path), "report",
                                                  "--json"]).stdout)
    assert {"stage": "judge", "model": "stub-judge", "task": "judge_contract", "valid": 33,
            "repaired": 2, "failed": 1} in report["structured_outputs"]

    before = stub.calls
    [again] = run_stages(db_path, ["judge"], opts)
    assert again.failures == 0
    assert stub.calls - before == 1  # only the failed judgment is asked again
    assert len(query_rows(db_path, "SELECT id FROM judgments WHERE failure IS NULL")) == 36


def test_no_key_value_anywhere(setup):
    db_path, stub, models = setup
    stub.once["zzz-never"] = []
    run_stages(db_path, ["respond"], _opts(models, models=["stub-bot"]))
    run_stages(db_path, ["judge"], _opts(models, judges=["stub-judge"]))
    assert any(SECRET in a for a in stub.authorization)  # the key was really sent
    conn = sqlite3.connect(db_path)
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        for row in conn.execute(f"SELECT * FROM [{table}]"):
            assert SECRET not in repr(row), table
    conn.close()
    for f in db_path.parent.glob("http.db*"):
        assert SECRET.encode() not in f.read_bytes()


def test_killed_run_resumes_without_duplicates(setup, tmp_path):
    """kill -9 a `copal run respond` half way; the re-run completes with one row per unit."""
    import os
    import signal
    import subprocess
    import sys
    import time

    db_path, stub, models = setup
    stub.latency = 0.15
    env = {**os.environ, "COPAL_DB": str(db_path)}
    cmd = [sys.executable, "-m", "copal_tui", "run", "respond", "--world", WORLD,
           "--model", "stub-bot", "--concurrency", "1", "--models-file", str(models)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    # Wait until some answers are committed, then kill without warning.
    while time.monotonic() < deadline:
        [(n,)] = query_rows(db_path, "SELECT COUNT(*) FROM responses WHERE model = 'stub-bot'")
        if n >= 3:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = query_rows(db_path, "SELECT COUNT(*) AS n FROM responses WHERE model = 'stub-bot'")
    assert 3 <= partial[0]["n"] < 12
    stub.latency = 0.0
    [progress] = run_stages(db_path, ["respond"], _opts(models, models=["stub-bot"]))
    assert progress.status == "done"
    rows = query_rows(db_path, "SELECT item_id, COUNT(*) AS n FROM responses WHERE model = "
                               "'stub-bot' GROUP BY item_id")
    assert len(rows) == 12 and all(r["n"] == 1 for r in rows)
    runs = query_rows(db_path, "SELECT status FROM runs WHERE stage = 'respond' "
                               "ORDER BY started_at")
    assert [r["status"] for r in runs] == ["interrupted", "done"]
