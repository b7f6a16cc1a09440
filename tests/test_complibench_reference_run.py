"""copal's dialogue judge against what CompliBench's own code did on the same inputs.

tests/fixtures/complibench_reference/reference_outputs.json was written by CompliBench's code
(the commit and the command are in that folder's README.md; copal never writes it) from two
invented conversations with a 12-phase workflow and six scripted judge answers:
- the judge's messages are exactly the ones `_evaluate_one` builds (system prompt, guideline
  document with its phases in numeric order, `index | ROLE: content` lines, conversation id);
- the report's headline figures are what `evaluate_file` and `summarize` score on the first
  answers as `extract_first_json` reads them (an object followed by prose is unreadable, only
  the first fenced block counts, an object inside a top-level array is sliced out, a bare `42`
  is never scored), while copal's parser and repair round give the `repaired_*` figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copal_tui.pipeline.base import DialogueOptions, Options
from copal_tui.pipeline.runner import run_stages
from copal_tui.services.report import dialogue_judging
from store.db import connect
from tests.db_support import query_dicts
from tests.http_stub_support import JsonHandler, chat_completion, serve_http
from tests.test_dialogue_pipeline import cli

HERE = Path(__file__).parent / "fixtures" / "complibench_reference"
REFERENCE = json.loads((HERE / "reference_outputs.json").read_text(encoding="utf-8"))
SCRIPTED: dict[str, dict[str, dict[str, str | None]]] = json.loads(
    (HERE / "scripted_answers.json").read_text(encoding="utf-8"))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "library.db"
    cli(db, "init")
    cli(db, "import", "--from", "complibench", str(HERE / "library"))
    return db


def test_the_judge_is_sent_the_reference_messages(store: Path):
    [p] = run_stages(store, ["dialogue_judge"], Options(
        judges=["offline/judge"], dialogue=DialogueOptions(attempts=1)))
    assert p.status == "done" and p.failures == 0
    sent = {}
    for row in query_dicts(store, "SELECT request FROM llm_calls"):
        request = json.loads(row["request"])
        stem = request["messages"][1]["content"].rsplit("CONVERSATION_ID: ", 1)[1].strip()
        sent[stem] = request["messages"]
    assert sent == REFERENCE["messages"]
    # The workflow reads Phase 1, 2, ..., 12, never 1, 10, 11, 12, 2 as a string sort has it.
    user = sent["conversation_00001"][1]["content"]
    phases = [line.split(" — ")[0].strip() for line in user.splitlines()
              if line.startswith("  Phase ")]
    assert phases == [f"Phase {n}" for n in range(1, 13)]


def scripted_judge(calls: list[tuple[str, Any, bool]]) -> type[JsonHandler]:
    """A chat endpoint answering each (conversation, seed) with its scripted first answer, and
    a repair round (a longer message list) with its scripted repair answer."""

    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            messages = body["messages"]
            stem = messages[1]["content"].rsplit("CONVERSATION_ID: ", 1)[1].strip()
            repair = len(messages) > 2
            calls.append((stem, body.get("seed"), repair))
            scripted = SCRIPTED[stem][str(body.get("seed"))]
            text = scripted["repair" if repair else "first"]
            self.send_json(200, chat_completion(text or ""))

    return Handler


def test_headline_figures_are_the_reference_reading_and_repair_is_its_own_set(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    calls: list[tuple[str, Any, bool]] = []
    monkeypatch.setenv("COPAL_TEST_KEY", "sk-scripted")
    with serve_http(scripted_judge(calls)) as url:
        models = tmp_path / "models.yaml"
        models.write_text(f"scripted:\n  model: openai/scripted\n  api_base: {url}\n"
                          "  api_key_env: COPAL_TEST_KEY\n  timeout: 5\n  max_retries: 0\n",
                          encoding="utf-8")
        [p] = run_stages(store, ["dialogue_judge"], Options(
            judges=["scripted"], models_file=models, dialogue=DialogueOptions(attempts=3),
            backoff_base=0.01))
    assert p.status == "done" and p.failures == 0
    # The attempt number went as the seed (each attempt its own request), and only the
    # answers copal's parser could not read got a repair round.
    assert sorted(calls) == sorted(
        [(stem, int(k), False) for stem, by in SCRIPTED.items() for k in by]
        + [(stem, int(k), True) for stem, by in SCRIPTED.items() for k, a in by.items()
           if a["repair"] is not None])

    [row] = [r for r in dialogue_judging(connect(store)).rows if r.domain == "all"]
    ref = REFERENCE["summary"]
    written = sum(v == "written" for v in REFERENCE["attempts"].values())
    assert (row.files, row.not_scored) == (written, len(REFERENCE["attempts"]) - written)
    assert row.compliant_turn_accuracy == pytest.approx(ref["micro_correct_accuracy_strict"],
                                                        abs=5e-5)
    assert row.violation_detection_accuracy == pytest.approx(
        ref["micro_accuracy_violation_detect"], abs=5e-5)
    assert row.strict_violation_detection_accuracy == pytest.approx(
        ref["micro_correct_accuracy_violation_strict"], abs=5e-5)
    assert row.conversation_accuracy == pytest.approx(ref["file_correct_accuracy_strict"],
                                                      abs=5e-5)
    # copal's reading, counted by hand from scripted_answers.json: every attempt pooled, the
    # repair answers read where the first could not be; five answers read otherwise than
    # the reference reads them (all but the prose-then-object one both parsers cut out).
    assert (row.repaired_files, row.repaired_attempts, row.changed_by_repair) == (6, 3, 5)
    assert row.repaired_compliant_turn_accuracy == pytest.approx(20 / 24)
    assert row.repaired_violation_detection_accuracy == pytest.approx(4 / 6)
    assert row.repaired_strict_violation_detection_accuracy == pytest.approx(3 / 6)
    assert row.repaired_conversation_accuracy == pytest.approx(2 / 6)

    # The stored rows say the same: the bare `42` is kept as the first answer (the reference
    # never scores it) while its repaired predictions are stored.
    [dropped] = query_dicts(store, "SELECT * FROM dialogue_attempts WHERE dialogue_id = "
                                   "'library/conversation_00002' AND attempt = 2")
    assert dropped["first_answer"] == "42" and dropped["repaired"] == 1
    [run] = query_dicts(store, "SELECT manifest FROM runs WHERE id = ?", (p.run_id,))
    assert json.loads(run["manifest"])["counts"]["not_scored_by_reference"] == 1


def test_the_copal_prompt_is_its_own_judge_and_named_in_the_provenance(store: Path):
    out = cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--attempts", "1",
              "--judge-prompt", "copal")
    assert "2/2 units" in out
    judges = {r["judge"] for r in query_dicts(store, "SELECT judge FROM dialogue_attempts")}
    assert judges == {"offline/judge+copal-prompt"}
    [request] = {json.loads(r["request"])["task"] for r in query_dicts(
        store, "SELECT request FROM llm_calls")}
    assert request == "dialogue_judge_copal"
    cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--attempts", "1")
    report = json.loads(cli(store, "report", "--json"))
    assert report["scope"]["provenance"]["dialogue"]["options"] == {
        "judge_prompt": ["copal", "reference"]}
    assert {r["judge"] for r in report["dialogue_judging"]} == {
        "offline/judge", "offline/judge+copal-prompt"}
    assert "judge prompt: copal, reference" in cli(store, "report")
