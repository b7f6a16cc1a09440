"""The traffic suite's automatic labeller, `copal run traffic_judge`, through the CLI: a row per
pair and judge with the run's id, nothing asked twice, a judge's answer stored as read (ids it
invented dropped), a bad answer recorded as a failure and asked again, the scope options, and
what the offline heuristic answers.

The log is a deployed Lumen Telecom support bot's (the sample world `lumen-telecom`), linked to
the world as source `web`, and two pairs of an unlinked source `app`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from copal_tui.prompts import parse_trailer
from tests.db_support import query_rows
from tests.stub_server import Stub, serve

WORLD = "lumen-telecom"
HELLO = {"query": "Hi there!", "response": "Hello! How can I help you today?"}
# A balance asked for and given at once: the bill's disclosure policy and the passcode gate
# both apply (multi), and the gate was skipped (erroneous).
BALANCE = {"query": "What is my current balance and the itemised charges on my bill?",
           "response": "Your current balance is £42.10, including £6 of roaming charges."}
# A cancellation handed to the team its route policy names: single, handled correctly.
CANCEL = {"query": "I want to cancel my contract and leave Lumen",
          "response": "I'll transfer you to our Loyalty and Contracts Team on 0306 999 0133, "
                      "who handle cancellations."}
# Comparing the plans is allowed; refusing it is an over-refusal.
PLANS = {"query": "Can you compare the broadband plans for me?",
         "response": "I'm sorry, I can't help with that."}
WEB = [HELLO, BALANCE, CANCEL, PLANS,
       {"query": "When is my bill issued and when is the Direct Debit collected?",
        "response": "Bills are issued on the 1st and Direct Debits are collected on the 10th."},
       {"query": "Can you order me a replacement eSIM? Mine stopped working.",
        "response": "Sure, I've ordered a new eSIM for you; it will activate within 2 hours."}]
APP = [{"query": "Good morning", "response": "Good morning! What can I do for you?"},
       {"query": "Where is my parcel tracking number? Also can I change my delivery address?",
        "response": "Your parcel is on its way."}]


def _log(path: Path, records: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def store(cli, initialised: Path, samples: Path, tmp_path: Path) -> Path:
    for args in (("import", str(samples / "lumen_telecom.yaml")),
                 ("traffic", "import", str(_log(tmp_path / "web.jsonl", WEB)), "--source",
                  "web", "--world", WORLD),
                 ("traffic", "import", str(_log(tmp_path / "app.jsonl", APP)), "--source",
                  "app")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    return initialised


def _pair(db: Path, record: dict[str, str]) -> str:
    [row] = query_rows(db, "SELECT id FROM traffic_pairs WHERE query = ?", (record["query"],))
    return str(row["id"])


def _judgments(db: Path, judge: str) -> dict[str, dict]:
    return {r["pair_id"]: dict(r) for r in query_rows(
        db, "SELECT * FROM traffic_judgments WHERE judge = ?", (judge,))}


# ------------------------------------------------------------------ the offline judge


def test_offline_judge_writes_a_row_per_pair_and_a_rerun_does_nothing(cli, store):
    result = cli("run", "traffic_judge", "--judge", "offline/judge")
    assert result.exit_code == 0, result.output
    rows = _judgments(store, "offline/judge")
    pairs = {r["id"] for r in query_rows(store, "SELECT id FROM traffic_pairs")}
    assert set(rows) == pairs and len(pairs) == len(WEB) + len(APP)
    [run] = query_rows(store, "SELECT id, status FROM runs WHERE stage = 'traffic_judge'")
    assert run["status"] == "done"
    assert all(r["run_id"] == run["id"] and r["failure"] is None for r in rows.values())
    assert all(r["reason"].startswith("offline heuristic:") for r in rows.values())
    # The documented heuristics, on pairs read by hand.
    hello, balance = rows[_pair(store, HELLO)], rows[_pair(store, BALANCE)]
    assert (hello["category"], hello["erroneous"], json.loads(hello["policies"])) == \
        ("none", 0, [])
    assert (balance["category"], balance["erroneous"]) == ("multi", 1)
    assert {"P06", "P17"} <= set(json.loads(balance["policies"]))
    cancel, plans = rows[_pair(store, CANCEL)], rows[_pair(store, PLANS)]
    assert (cancel["category"], cancel["erroneous"], json.loads(cancel["policies"])) == \
        ("single", 0, ["P24"])
    assert (plans["category"], plans["erroneous"], json.loads(plans["policies"])) == \
        ("single", 1, ["P01"])
    # Unlinked pairs are judged with no policy list: the category from the text, no policy.
    app = [rows[_pair(store, r)] for r in APP]
    assert [(r["category"], json.loads(r["policies"])) for r in app] == \
        [("none", []), ("multi", [])]

    calls = query_rows(store, "SELECT COUNT(*) AS n FROM llm_calls")[0]["n"]
    again = cli("run", "traffic_judge", "--judge", "offline/judge")
    assert again.exit_code == 0, again.output
    assert "0/0 units" in again.output
    assert _judgments(store, "offline/judge") == rows  # nothing replaced
    assert query_rows(store, "SELECT COUNT(*) AS n FROM llm_calls")[0]["n"] == calls


def test_purged_pairs_are_not_judged_and_sources_and_samples_scope_the_run(cli, store):
    purged = _pair(store, PLANS)
    assert cli("traffic", "purge", "--pair", purged, "--yes").exit_code == 0
    assert cli("campaign", "create", "s1", "--suite", "traffic", "--size", "3").exit_code == 0
    sampled = {r["subject"] for r in query_rows(store, "SELECT subject FROM campaign_subjects "
                                                       "WHERE campaign = 's1'")}
    result = cli("run", "traffic_judge", "--judge", "offline/judge", "--sampled")
    assert result.exit_code == 0, result.output
    assert set(_judgments(store, "offline/judge")) == sampled - {purged}
    result = cli("run", "traffic_judge", "--judge", "offline/judge", "--source", "app")
    assert result.exit_code == 0, result.output
    app = {_pair(store, r) for r in APP}
    assert set(_judgments(store, "offline/judge")) == (sampled - {purged}) | app


def test_the_offline_heuristic_gives_a_mix_on_the_sample_traffic(cli, initialised, samples):
    logs = samples / "traffic"
    for args in (("import", str(samples / "lumen_telecom.yaml")),
                 ("traffic", "import", str(logs / "lumen_telecom_web.ndjson"), "--source", "web",
                  "--world", WORLD),
                 ("traffic", "import", str(logs / "lumen_telecom_app.ndjson"), "--source", "app",
                  "--world", WORLD),
                 ("run", "traffic_judge", "--judge", "offline/judge")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    rows = query_rows(initialised, "SELECT category, erroneous FROM traffic_judgments")
    n = len(rows)
    assert n == query_rows(initialised, "SELECT COUNT(*) AS n FROM traffic_pairs")[0]["n"] > 300
    for category in ("none", "single", "multi"):
        assert sum(r["category"] == category for r in rows) >= 0.1 * n, category
    assert 0.1 * n <= sum(r["erroneous"] for r in rows) <= 0.5 * n


@pytest.mark.parametrize(("args", "says"), [
    (("--source", "webb"), "--source webb: not the source of a stored traffic pair (did you "
                           "mean web?)"),
    (("--world", WORLD), "--world is read by"),
])
def test_bad_scope_exits_2_and_writes_nothing(cli, store, args, says):
    result = cli("run", "traffic_judge", "--judge", "offline/judge", *args)
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert query_rows(store, "SELECT COUNT(*) AS n FROM runs")[0]["n"] == 0
    assert query_rows(store, "SELECT COUNT(*) AS n FROM traffic_judgments")[0]["n"] == 0


def test_batch_labels_every_pair_live_for_a_model_without_a_batch_api(cli, store):
    # --batch sends the labeller's calls through a provider's batch API; the offline engine
    # has none, so they go live and every pair is labelled as without it.
    result = cli("run", "traffic_judge", "--judge", "offline/judge", "--batch")
    assert result.exit_code == 0, result.output
    assert query_rows(store, "SELECT COUNT(*) AS n FROM traffic_judgments WHERE failure IS "
                             "NULL")[0]["n"] == \
        query_rows(store, "SELECT COUNT(*) AS n FROM traffic_pairs")[0]["n"]


def test_nothing_to_label_exits_2(cli, store, initialised):
    result = cli("run", "traffic_judge", "--judge", "offline/judge", "--sampled")
    assert result.exit_code == 2
    assert "no traffic pair is in a traffic campaign" in result.output
    empty = initialised.parent / "empty.db"
    assert cli("init", db=empty).exit_code == 0
    result = cli("run", "traffic_judge", "--judge", "offline/judge", db=empty)
    assert result.exit_code == 2
    assert "no traffic pair is stored" in result.output


# ------------------------------------------------------------------ a model judge


@pytest.fixture
def judge(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
          ) -> Iterator[tuple[Stub, Path]]:
    stub = Stub()
    monkeypatch.setenv("COPAL_TEST_KEY", "sk-test")
    with serve(stub) as url:
        models = tmp_path / "models.yaml"
        models.write_text(f"stub-judge:\n  model: openai/stub-judge\n  api_base: {url}\n"
                          "  api_key_env: COPAL_TEST_KEY\n  timeout: 5\n  max_retries: 0\n",
                          "utf-8")
        yield stub, models


def test_a_judges_answer_is_stored_as_read(cli, store, judge):
    stub, models = judge
    stub.once["current balance and the itemised"] = [("raw", json.dumps({
        "category": "multi", "erroneous": True, "policies": ["P06", "P17", "P99"],
        "reason": "scripted: the gate was skipped"}))]
    stub.once["Good morning"] = [("raw", '{"category": "No clear policy", '
                                         '"erroneous": false, "reason": "scripted"}')]
    # A category that contradicts the policies named goes to the repair round.
    stub.once["I want to cancel my contract"] = [
        ("raw", '{"category": "none", "erroneous": false, "policies": ["P24"]}'),
        ("raw", '{"category": "single", "erroneous": false, "policies": ["P24"], '
                '"reason": "repaired"}')]
    result = cli("run", "traffic_judge", "--judge", "stub-judge", "--models-file", str(models))
    assert result.exit_code == 0, result.output
    rows = _judgments(store, "stub-judge")
    cancel = rows[_pair(store, CANCEL)]
    assert (cancel["category"], json.loads(cancel["policies"]), cancel["reason"]) == \
        ("single", ["P24"], "repaired")
    [repair] = query_rows(store, "SELECT request FROM llm_calls WHERE model = 'stub-judge' AND "
                                 "instr(request, 'names no policy') > 0")
    assert "I want to cancel my contract" in repair["request"]
    assert len(rows) == len(WEB) + len(APP)
    balance = rows[_pair(store, BALANCE)]
    assert (balance["category"], balance["erroneous"], json.loads(balance["policies"]),
            balance["reason"]) == ("multi", 1, ["P06", "P17"], "scripted: the gate was skipped")
    morning = rows[_pair(store, APP[0])]
    assert (morning["category"], morning["erroneous"], json.loads(morning["policies"])) == \
        ("none", 0, [])
    # What the judge was sent: the linked world's policies for a web pair, none for an app one.
    sent = [json.loads(r["request"]) for r in query_rows(
        store, "SELECT request FROM llm_calls WHERE model = 'stub-judge'")]
    inputs = {i["query"]: i for i in (_input(s) for s in sent)}
    assert [p["id"] for p in inputs[BALANCE["query"]]["policies"]][:2] == ["P01", "P02"]
    assert inputs[BALANCE["query"]]["organisation"]["name"] == "Lumen Telecom"
    assert (inputs[APP[0]["query"]]["policies"], inputs[APP[0]["query"]]["organisation"]) == \
        ([], None)


def _input(request: dict) -> dict:
    # The task's own message (a repair request adds an answer and an instruction after it).
    found = parse_trailer(next(m["content"] for m in request["messages"] if m["role"] == "user"))
    assert found is not None and found[0] == "traffic_judge"
    return found[1]


def test_a_bad_answer_is_a_failure_that_a_rerun_asks_again(cli, store, judge):
    stub, models = judge
    stub.once["Good morning"] = [("raw", "not json at all"),
                                 ("raw", '{"category": "maybe", "erroneous": false}')]
    result = cli("run", "traffic_judge", "--judge", "stub-judge", "--models-file", str(models))
    assert result.exit_code == 3, result.output
    failed = _judgments(store, "stub-judge")[_pair(store, APP[0])]
    assert failed["category"] is None and failed["erroneous"] is None
    assert "invalid after one repair" in failed["failure"] and "maybe" in failed["failure"]
    [run] = query_rows(store, "SELECT failures FROM runs WHERE stage = 'traffic_judge'")
    assert run["failures"] == 1

    before = stub.calls
    again = cli("run", "traffic_judge", "--judge", "stub-judge", "--models-file", str(models))
    assert again.exit_code == 0, again.output
    assert stub.calls - before == 1  # only the failed pair
    redone = _judgments(store, "stub-judge")[_pair(store, APP[0])]
    assert redone["failure"] is None and redone["category"] in ("none", "single", "multi")
