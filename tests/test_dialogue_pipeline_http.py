"""Dialogue stages over real HTTP: a local OpenAI-compatible stub (tests/stub_server.py) answers
like the offline engine unless told otherwise. A judge answer unreadable even after the repair
round is a scored attempt with no predictions that a re-run leaves alone, while a failed call is
a `failure` that a re-run retries; stray turns are dropped with a note and unknown guidelines
kept; forced judge verdicts decide which variants are kept; a failed round is redone by a
re-run. How an answer's turns are read is tests/test_dialogue_judge_parsing.py's subject."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copal_tui.pipeline.base import DialogueOptions, Options
from copal_tui.pipeline.dialogue_variants import MAX_ROUNDS
from copal_tui.pipeline.runner import run_stages
from copal_tui.services.report import dialogue_judging
from store.db import connect
from tests.db_support import query_dicts
from tests.stub_server import Stub, serve
from tests.test_dialogue_pipeline import SLIPPED, check_rounds, make_store

CONTENT = "COPAL-TASK: dialogue_content_judge"
COMPLIANCE = "COPAL-TASK: dialogue_compliance_judge"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    db = make_store(tmp_path)
    stub = Stub()
    monkeypatch.setenv("COPAL_TEST_KEY", "sk-dialogue-test")
    with serve(stub) as url:
        models = tmp_path / "models.yaml"
        models.write_text(f"stub-judge:\n  model: openai/stub-judge\n  api_base: {url}\n"
                          "  api_key_env: COPAL_TEST_KEY\n  timeout: 5\n  max_retries: 1\n",
                          encoding="utf-8")
        yield db, stub, Options(judges=["stub-judge"], models_file=models,
                                dialogue=DialogueOptions(domains=["shop"], attempts=1),
                                backoff_base=0.01, concurrency=4,
                                generator="offline/heuristic")


def verdict(turn: int, key: str, violation: bool = False, phase: int = -1) -> dict:
    return {"turn_index": turn, "guideline_used": {
        "guidance_category": "Category 2: Intent Triggered Guidelines", "guidance_key": key,
        "guideline_phase": phase, "is_violation": violation, "judge_reason": "stub"}}


def test_unreadable_answer_is_scored_and_kept_a_failed_call_is_retried(setup):
    db, stub, opts = setup
    # shop/c2 alone carries SLIPPED: both its answers are unusable, so no repair rescues it.
    # CompliBench reads such an answer as no predictions and scores it: a judge cannot do
    # better by failing, so it is no failure and a re-run does not ask again.
    stub.once[SLIPPED] = [("raw", '{"turn_guidelines": "none"}'), ("raw", "not json at all")]
    [p] = run_stages(db, ["dialogue_judge"], opts)
    assert p.status == "done" and p.failures == 0
    attempts = {a["dialogue_id"]: a for a in query_dicts(db, "SELECT * FROM dialogue_attempts")}
    assert attempts["shop/c1"]["failure"] is None and not attempts["shop/c1"]["unparsed"]
    c2 = attempts["shop/c2"]
    assert c2["failure"] is None and c2["unparsed"] == 1 and c2["repaired"] == 0
    assert not query_dicts(db, "SELECT * FROM dialogue_predictions WHERE dialogue_id = 'shop/c2'")
    judged = dialogue_judging(connect(db))
    assert judged.exclusions == []
    [row] = [r.to_dict() for r in judged.rows if r.domain == "all"]
    assert (row["files"], row["unparsed_attempts"]) == (2, 1)

    before = stub.calls
    [again] = run_stages(db, ["dialogue_judge"], opts)
    assert again.total == 0 and stub.calls == before

    # A call that fails (no answer at all) is a failure, listed and asked again by a re-run.
    stub.broken.add(SLIPPED)
    opts.dialogue.attempts = 2
    [broken] = run_stages(db, ["dialogue_judge"], opts)
    assert broken.failures == 1
    [failed] = query_dicts(db, "SELECT * FROM dialogue_attempts WHERE dialogue_id = 'shop/c2' "
                               "AND attempt = 2")
    assert failed["failure"] and not failed["unparsed"]
    excluded = dialogue_judging(connect(db)).exclusions
    assert [(e.dialogue, e.attempt) for e in excluded] == [("shop/c2", 2)]
    stub.broken.clear()
    before = stub.calls
    [retried] = run_stages(db, ["dialogue_judge"], opts)
    assert retried.failures == 0 and stub.calls - before == 1  # only the failed attempt
    [ok] = query_dicts(db, "SELECT * FROM dialogue_attempts WHERE dialogue_id = 'shop/c2' "
                           "AND attempt = 2")
    assert ok["failure"] is None and ok["run_id"] == retried.run_id


def test_stray_turns_dropped_with_a_note_unknown_guidelines_kept(setup):
    db, stub, opts = setup
    answer = {"turn_guidelines": [verdict(0, "return_item", phase=1),  # a user turn
                                  verdict(1, "no_such_intent", phase=1),
                                  verdict(5, "return_item", True, 2),
                                  verdict(99, "return_item", phase=1)]}
    stub.once[SLIPPED] = [("raw", json.dumps(answer))]
    opts.dialogue.dialogues = ["shop/c2"]
    [p] = run_stages(db, ["dialogue_judge"], opts)
    assert p.status == "done" and p.failures == 0
    preds = query_dicts(db, "SELECT turn_index, key, phase, violation FROM dialogue_predictions "
                            "ORDER BY turn_index")
    assert preds == [{"turn_index": 1, "key": "no_such_intent", "phase": 1, "violation": 0},
                     {"turn_index": 5, "key": "return_item", "phase": 2, "violation": 1}]
    manifest = json.loads(query_dicts(db, "SELECT manifest FROM runs WHERE id = ?",
                                      (p.run_id,))[0]["manifest"])
    notes = " ".join(e["reason"] for e in manifest["errors"])
    assert "dropped verdicts for turns [0, 99]" in notes
    assert "no verdict for assistant turns [3, 7]" in notes
    assert manifest["counts"]["dropped_turns"] == 2


def test_variant_kept_when_content_changed_and_compliance_missed(setup):
    db, stub, opts = setup
    stub.once[CONTENT] = [("raw", '{"behaviour_changed": true, "reason": "asks less"}')] * 20
    stub.once[COMPLIANCE] = [("raw", '{"violates": false, "reason": "looks fine"}')] * 20
    opts.dialogue.per_dialogue = 1
    [p] = run_stages(db, ["dialogue_variants"], opts)
    assert p.status == "done" and p.failures == 0
    rounds = check_rounds(db)
    assert len(rounds) == 2 and all(r["round"] == 1 and r["kept"] for r in rounds)
    assert all("looks fine" in r["reason"] and "asks less" in r["reason"] for r in rounds)
    variants = query_dicts(db, "SELECT id, variant_of, domain FROM dialogues WHERE variant_of IS "
                               "NOT NULL ORDER BY id")
    assert [(v["variant_of"], v["domain"]) for v in variants] == [("shop/c1", "shop"),
                                                                  ("shop/c2", "shop")]
    for v, r in zip(variants, sorted(rounds, key=lambda r: r["dialogue_id"]), strict=True):
        assert v["id"] == f"{r['dialogue_id']}~v{r['turn_index']}"
        check_variant(db, v["id"], r)
    # Variants are judged like any dialogue, and never varied again.
    opts.dialogue.per_dialogue = 3
    run_stages(db, ["dialogue_variants", "dialogue_judge"], opts)
    judged = {a["dialogue_id"]
              for a in query_dicts(db, "SELECT dialogue_id FROM dialogue_attempts")}
    assert {v["id"] for v in variants} <= judged
    assert not query_dicts(db, "SELECT * FROM dialogue_variants WHERE dialogue_id LIKE '%~v%'")


def check_variant(db: Path, vid: str, r: dict) -> None:
    """A kept round's dialogue: the original's turns before the varied one, then the new reply
    tagged as a violation of the original guideline with the modified text."""
    [d] = query_dicts(db, "SELECT * FROM dialogues WHERE id = ?", (vid,))
    assert d["variant_of"] == r["dialogue_id"] and d["run_id"] == r["run_id"]
    assert r["modified_guideline"] in json.dumps(json.loads(d["overrides"]), ensure_ascii=False)
    turns = query_dicts(db, "SELECT * FROM dialogue_turns WHERE dialogue_id = ? "
                            "ORDER BY turn_index", (vid,))
    before = query_dicts(db, "SELECT * FROM dialogue_turns WHERE dialogue_id = ? "
                             "AND turn_index < ? ORDER BY turn_index",
                         (r["dialogue_id"], r["turn_index"]))
    assert [t["content"] for t in turns[:-1]] == [t["content"] for t in before]
    last = turns[-1]
    assert (last["turn_index"], last["content"], last["violation"]) == (
        r["turn_index"], r["new_reply"], 1)
    assert (last["category"], last["key"], last["guideline_text"], last["evidence"]) == (
        r["category"], r["key"], r["modified_guideline"], "asks less")
    doc = query_dicts(db, "SELECT category, key, phase, text FROM dialogue_guidelines WHERE "
                          "dialogue_id = ? ORDER BY position", (vid,))
    assert doc == query_dicts(db, "SELECT category, key, phase, text FROM dialogue_guidelines "
                                  "WHERE dialogue_id = ? ORDER BY position", (r["dialogue_id"],))


def test_variant_refined_three_rounds_when_the_judge_always_detects(setup):
    db, stub, opts = setup
    stub.once[COMPLIANCE] = [("raw", '{"violates": true, "reason": "caught it"}')] * 20
    stub.once[CONTENT] = [("raw", '{"behaviour_changed": true, "reason": "changed"}')] * 20
    opts.dialogue.per_dialogue = 1
    run_stages(db, ["dialogue_variants"], opts)
    rounds = check_rounds(db)
    assert len(rounds) == 2 * MAX_ROUNDS and not any(r["kept"] for r in rounds)
    assert not query_dicts(db, "SELECT id FROM dialogues WHERE variant_of IS NOT NULL")
    # Rounds 2 and 3 are refinements that were told what the compliance judge said.
    refines = query_dicts(db, "SELECT request FROM llm_calls WHERE request LIKE "
                              "'%COPAL-TASK: dialogue_refine%'")
    assert len(refines) == 2 * (MAX_ROUNDS - 1) and all("caught it" in r["request"]
                                                        for r in refines)
    before = stub.calls
    [again] = run_stages(db, ["dialogue_variants"], opts)
    assert again.total == 0 and stub.calls == before  # a finished turn is never asked again


def test_a_failed_round_is_redone_by_a_rerun(setup):
    db, stub, opts = setup
    stub.broken.add(CONTENT)
    opts.dialogue.per_dialogue = 1
    [p] = run_stages(db, ["dialogue_variants"], opts)
    assert p.status == "done" and p.failures == 2
    failed = query_dicts(db, "SELECT * FROM dialogue_variants")
    assert len(failed) == 2 and all(r["failure"] and r["round"] == 1 and not r["kept"]
                                    for r in failed)
    stub.broken.clear()
    [again] = run_stages(db, ["dialogue_variants"], opts)
    assert again.failures == 0
    rounds = check_rounds(db)  # no failure left; rounds numbered from 1 again
    assert {(r["dialogue_id"], r["turn_index"]) for r in rounds} == \
        {(r["dialogue_id"], r["turn_index"]) for r in failed}
