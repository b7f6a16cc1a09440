"""CompliBench import into the store and the `dialogue_judging` rows computed from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copal_tui.interchange.complibench_import import import_conversations, import_judge_outputs
from copal_tui.interchange.errors import ImportFailure
from copal_tui.metrics.dialogue import dialogue_judging
from store.db import connect

C2 = "Category 2: Intent Triggered Guidelines"
DOC = {"Category 1: Universal Compliance": {"tone": "Be polite."},
       C2: {"refund": {"Phase 1": "Ask for the order number.", "Phase 2": "Quote the policy."}},
       "Category 3: Condition Triggered Guidelines": {"angry": "Offer a supervisor."}}


def turn(i, role, cat=None, key=None, phase=None):
    t = {"turn_index": i, "role": role, "content": f"{role} {i}"}
    if role == "assistant":
        t.update(category=cat, key=key, phase=phase)
    return t


def conv(violation_turn=None):
    data = {"assistant_guidelines": DOC, "message_list": [
        turn(0, "user"), turn(1, "assistant", 1, "tone"),
        turn(2, "user"), turn(3, "assistant", C2, "refund", "Phase 1"),
        turn(4, "user"), turn(5, "assistant", 3, "angry")]}
    if violation_turn is not None:
        data["mistakes"] = [{"turn_index": violation_turn, "guidance category": C2,
                             "guidance key": "refund", "guideline_phase": "Phase 2",
                             "guideline": "Skip the policy.", "evidence": "none quoted"}]
    return data


def judge(*turns):
    return {"turn_guidelines": [
        {"turn_index": i, "guideline_used": {"guidance_category": cat, "guidance_key": key,
                                             "guideline_phase": ph, "is_violation": v,
                                             "judge_reason": "r"}} for i, cat, key, ph, v in turns]}


def put(root: Path, rel: str, data) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "bench"
    put(root, "airlines/c1.json", conv())                   # 3: compliant P1, 5: compliant
    put(root, "airlines/c2.json", conv(violation_turn=3))   # 3: violation (P2), 5: compliant
    put(root, "retail/c3.json", conv(violation_turn=5))     # 3: compliant P1, 5: violation
    # attempt 1: c1 all right; c2 turn 3 flagged (wrong phase, right key) and 5 right;
    # c3 turn 3 right, turn 5 missed.
    put(root, "airlines/c1_usage.json", judge((3, 2, "refund", 1, False),
                                              (5, 3, "angry", None, False)))
    put(root, "airlines/c2_usage.json", judge((3, 2, "refund", 1, True),
                                              (5, 3, "angry", None, False)))
    put(root, "retail/c3_usage.json", judge((3, 2, "refund", 1, False),
                                            (5, 2, "refund", 2, False)))
    # attempt 2 judges c1 only, with a false alarm on turn 5.
    put(root, "airlines/c1_usage_attempt2.json", judge((3, 2, "refund", 1, False),
                                                       (5, 3, "angry", None, True)))
    return root


def test_import_and_metrics_by_hand(initialised, corpus):
    db = connect(initialised)
    done = import_conversations(db, corpus)
    assert sorted(done.added) == ["airlines/c1", "airlines/c2", "retail/c3"]
    assert len(import_judge_outputs(db, corpus, "J").added) == 4
    rows = {(r["judge"], r["domain"]): r for r in dialogue_judging(db)["rows"]}
    a = rows[("J", "airlines")]
    # attempt 1 on airlines: compliant turns c1.3 c1.5 c2.5 all right (3/3); violation c2.3
    # flagged (VDA 1/1), under the wrong phase (strict 0/1); conversations c1, c2 right (2/2).
    # attempt 2 on airlines: only c1: c1.3 right, c1.5 a false alarm (1/2); no violation
    # turns (VDA undefined, left out of the mean); conversation wrong (0/1).
    assert a["attempts"] == 2 and a["conversations"] == 2
    assert a["compliant_turn_accuracy"] == pytest.approx((1 + 0.5) / 2)
    assert a["violation_detection_accuracy"] == 1.0
    assert a["strict_violation_detection_accuracy"] == 0.0
    assert a["conversation_accuracy"] == pytest.approx((1 + 0) / 2)
    r = rows[("J", "retail")]
    # retail, attempt 1 only: c3.3 right (1/1), c3.5 violation missed (0/1), conversation wrong.
    assert (r["attempts"], r["compliant_turn_accuracy"], r["violation_detection_accuracy"],
            r["conversation_accuracy"]) == (1, 1.0, 0.0, 0.0)
    al = rows[("J", "all")]
    # all, attempt 1: compliant 4/4, violations c2.3 flagged + c3.5 missed = 1/2, conv 2/3;
    # attempt 2: compliant 1/2, conv 0/1.
    assert al["compliant_turn_accuracy"] == pytest.approx((1 + 0.5) / 2)
    assert al["violation_detection_accuracy"] == 0.5
    assert al["conversation_accuracy"] == pytest.approx((2 / 3 + 0) / 2)
    assert al["compliant_turns"] == 4 and al["violation_turns"] == 2


def test_reimport_is_skipped_and_a_changed_file_is_refused(initialised, corpus):
    db = connect(initialised)
    import_conversations(db, corpus)
    again = import_conversations(db, corpus)
    assert again.added == [] and len(again.skipped) == 3
    put(corpus, "airlines/c1.json", conv(violation_turn=5))
    before = db.execute("SELECT COUNT(*) FROM dialogue_turns WHERE violation = 1").fetchone()[0]
    with pytest.raises(ImportFailure, match="different content"):
        import_conversations(db, corpus)
    after = db.execute("SELECT COUNT(*) FROM dialogue_turns WHERE violation = 1").fetchone()[0]
    assert before == after


def test_judge_output_needs_its_conversation_and_assistant_turns(initialised, corpus, tmp_path):
    db = connect(initialised)
    with pytest.raises(ImportFailure, match="not imported"):
        import_judge_outputs(db, corpus, "J")
    import_conversations(db, corpus)
    put(tmp_path / "other", "airlines/c1_usage_attempt5.json", judge((2, 2, "refund", 1, False)))
    with pytest.raises(ImportFailure, match="not assistant turns"):
        import_judge_outputs(db, tmp_path / "other", "J")
    assert db.execute("SELECT COUNT(*) FROM dialogue_attempts").fetchone()[0] == 0


def test_cli_imports_conversations_then_judge_outputs(cli, initialised, corpus):
    assert cli("import", "--from", "complibench-judge", str(corpus)).exit_code == 2  # no --judge
    bad = corpus / "airlines" / "broken.json"
    bad.write_text("{oops", encoding="utf-8")
    failed = cli("import", "--from", "complibench", str(corpus))
    assert failed.exit_code == 2 and "broken.json" in failed.stderr
    assert connect(initialised).execute("SELECT COUNT(*) FROM dialogues").fetchone()[0] == 0
    bad.unlink()
    done = cli("import", "--from", "complibench", str(corpus))
    assert done.exit_code == 0 and "imported 3 conversation(s)" in done.stdout
    judged = cli("import", "--from", "complibench-judge", "--judge", "J", str(corpus))
    assert judged.exit_code == 0 and "imported 4 attempt(s) of J" in judged.stdout
    again = cli("import", "--from", "complibench-judge", "--judge", "J", str(corpus))
    assert "imported 0" in again.stdout and "4 already stored" in again.stdout
