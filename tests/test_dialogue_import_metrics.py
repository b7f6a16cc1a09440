"""CompliBench import into the store and the `dialogue_judging` rows computed from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copal_tui.interchange.complibench_import import import_conversations, import_judge_outputs
from copal_tui.services.report import dialogue_judging
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
    # Every output also judges the universal turn 1 rightly (CompliBench scores tagged Category 1
    # turns like the others).
    turns = ((1, 1, "tone", -1, False), *turns)
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
    rows = {(r.judge, r.domain): r.to_dict() for r in dialogue_judging(db).rows}
    a = rows[("J", "airlines")]
    # Each attempt of each conversation is one file; files pooled, turns micro-averaged.
    # c1 attempt 1: turns 1, 3, 5 right (3/3), file right. c2 attempt 1: 1 and 5 right (2/2),
    # violation 3 flagged (1/1) under the wrong phase (strict 0/1), file right. c1 attempt 2:
    # 1 and 3 right, 5 a false alarm (2/3), file wrong. Airlines: 7/8, 1/1, 0/1, files 2/3.
    assert a["attempts"] == 2 and a["conversations"] == 2 and a["files"] == 3
    assert a["compliant_turn_accuracy"] == pytest.approx(7 / 8)
    assert a["violation_detection_accuracy"] == 1.0
    assert a["strict_violation_detection_accuracy"] == 0.0
    assert a["conversation_accuracy"] == pytest.approx(2 / 3)
    r = rows[("J", "retail")]
    # retail, attempt 1 only: 1 and 3 right (2/2), violation 5 missed (0/1), file wrong.
    assert (r["attempts"], r["compliant_turn_accuracy"], r["violation_detection_accuracy"],
            r["conversation_accuracy"]) == (1, 1.0, 0.0, 0.0)
    al = rows[("J", "all")]
    # all four files: compliant 9/10, violations 1/2, files 2/4.
    assert al["compliant_turn_accuracy"] == pytest.approx(9 / 10)
    assert al["violation_detection_accuracy"] == 0.5
    assert al["conversation_accuracy"] == pytest.approx(2 / 4)
    # tagged turns of the three conversations: c1 three compliant, c2 and c3 two each.
    assert al["compliant_turns"] == 7 and al["violation_turns"] == 2
