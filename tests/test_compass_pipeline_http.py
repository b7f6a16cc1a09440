"""compass_judge over real HTTP: a local OpenAI-compatible stub answers schema-invalid JSON;
one repair round rescues an answer, two bad answers record the failure with the raw text, and
a re-run asks again for exactly that judgment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copal_tui.pipeline.base import CompassOptions, Options
from copal_tui.pipeline.runner import run_stages
from tests.db_support import query_rows
from tests.stub_server import Stub, serve
from tests.test_compass_pipeline import WORLD, make_world


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    db = make_world(tmp_path, system_prompt=None)
    opts = Options(worlds=[WORLD], models=["offline/comply-all"],
                   compass=CompassOptions(per_policy=1),
                   backoff_base=0.01, concurrency=4, generator="offline/heuristic")
    done = run_stages(db, ["compass_generate", "compass_verify", "compass_respond"], opts)
    assert all(p.status == "done" and p.failures == 0 for p in done)
    stub = Stub()
    monkeypatch.setenv("COPAL_TEST_KEY", "sk-compass-test")
    with serve(stub) as url:
        models = tmp_path / "models.yaml"
        models.write_text(f"stub-judge:\n  model: openai/stub-judge\n  api_base: {url}\n"
                          "  api_key_env: COPAL_TEST_KEY\n  timeout: 2\n  max_retries: 1\n",
                          encoding="utf-8")
        yield db, stub, Options(worlds=[WORLD], judges=["stub-judge"], models_file=models,
                                backoff_base=0.01, concurrency=4)


def test_judge_repairs_bad_json_records_failures_and_refills(setup):
    db, stub, opts = setup
    texts = [r["text"] for r in query_rows(db, "SELECT text FROM compass_responses ORDER BY id")]
    # Markers: the opening words of single responses (the judge sees them inside its input).
    marks = [m for m in (" ".join(t.split()[:12]) for t in texts)
             if sum(m in t for t in texts) == 1 and json.dumps(m)[1:-1] == m][:2]
    assert len(marks) == 2
    stub.once[marks[0]] = [("raw", '{"refused": "perhaps"}')]  # repaired on the second call
    stub.once[marks[1]] = [("raw", '{"refused": "perhaps"}'), ("raw", "not json at all")]

    [progress] = run_stages(db, ["compass_judge"], opts)
    assert progress.status == "done" and progress.failures == 1
    js = query_rows(db, "SELECT j.*, r.text FROM compass_judgments j JOIN compass_responses r "
                        "ON r.id = j.response_id")
    assert len(js) == len(texts)
    [bad] = [j for j in js if j["failure"]]
    assert bad["text"].startswith(marks[1]) and bad["aligned"] is None
    assert "invalid after one repair" in bad["failure"] and "not json at all" in bad["failure"]
    [repaired] = [j for j in js if j["text"].startswith(marks[0])]
    assert repaired["failure"] is None and repaired["aligned"] in (0, 1)
    logged = query_rows(db, "SELECT COUNT(*) AS n FROM llm_calls WHERE model = 'stub-judge' AND "
                            "cached = 0 AND instr(request, ?) > 0", (marks[0],))
    assert logged[0]["n"] == 2  # the first answer and the repair round

    before = stub.calls
    [again] = run_stages(db, ["compass_judge"], opts)
    assert again.failures == 0 and stub.calls - before == 1  # only the failed judgment
    assert not query_rows(db, "SELECT id FROM compass_judgments WHERE failure IS NOT NULL")
    assert len(query_rows(db, "SELECT id FROM compass_judgments")) == len(texts)
