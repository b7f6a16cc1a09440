"""Parsing the public CompliBench layout: conversations, mistakes overriding tags, judge files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copal_tui.domain.dialogue import Guideline
from copal_tui.interchange.complibench import (
    judge_target,
    parse_conversation,
    parse_judge_output,
)
from copal_tui.interchange.errors import ImportFailure

DOC = {
    "Category 1: Universal Compliance": {"tone": "Be polite."},
    "Category 2: Intent Triggered Guidelines": {
        "change_booking": {"Phase 1": "Ask for the booking code.",
                           "Phase 2": "State the change fee before confirming."}},
    "Category 3: Condition Triggered Guidelines": {"minor_travel": "Mention the escort service."},
}


def conversation(**over):
    data = {
        "assistant_guidelines": DOC,
        "message_list": [
            {"turn_index": 0, "role": "user", "content": "I need to move my flight."},
            {"turn_index": 1, "role": "assistant", "content": "Your booking code, please?",
             "category": "Category 2: Intent Triggered Guidelines", "key": "change_booking",
             "phase": "Phase 1"},
            {"turn_index": 2, "role": "user", "content": "AB12CD"},
            {"turn_index": 3, "role": "assistant", "content": "Done, it is changed.",
             "category": "Category 2: Intent Triggered Guidelines", "key": "change_booking",
             "phase": "Phase 2"},
        ],
        "mistakes": [{"turn_index": 3, "guidance category": "Category 2: Intent Triggered "
                      "Guidelines", "guidance key": "change_booking", "guideline_phase":
                      "Phase 2", "guideline": "Confirm without stating any fee.",
                      "evidence": "No fee was stated."}],
        "cat2_overrides": {"change_booking": {"Phase 2": {
            "original": "State the change fee before confirming.",
            "modified": "Confirm without stating any fee."}}},
    }
    data.update(over)
    return data


def write(folder: Path, name: str, data) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return p


def test_conversation_id_domain_and_truth(tmp_path):
    c = parse_conversation(write(tmp_path / "airlines", "conversation_00012.json",
                                 conversation()))
    assert (c.id, c.domain) == ("airlines/conversation_00012", "airlines")
    assert len(c.guidelines) == 4  # 1 universal + 2 phases + 1 condition
    by = {t.turn_index: t for t in c.turns}
    assert by[1].guideline == Guideline(2, "change_booking", 1) and not by[1].violation
    assert by[3].violation and by[3].guideline == Guideline(2, "change_booking", 2)
    assert by[3].evidence == "No fee was stated."
    assert by[0].guideline is None
    assert "cat2_overrides" in c.overrides


def test_mistake_overrides_the_tag_of_its_turn(tmp_path):
    data = conversation(mistakes=[{"turn_index": 3, "guidance category": 3,
                                   "guidance key": "minor_travel", "guideline_phase": None,
                                   "guideline": "x", "evidence": "y"}])
    c = parse_conversation(write(tmp_path / "airlines", "c.json", data))
    t3 = next(t for t in c.turns if t.turn_index == 3)
    # No phase given: -1, as CompliBench reads a Category 3 tag.
    assert t3.guideline == Guideline(3, "minor_travel", -1) and t3.violation


@pytest.mark.parametrize(("data", "needle"), [
    ("{not json", "not JSON"),
    ("", "empty file"),
    ([], "must be an object"),
    ({"message_list": []}, "assistant_guidelines"),
    (conversation(message_list=[]), "non-empty list"),
    (conversation(message_list=[{"turn_index": "1", "role": "user", "content": ""}]),
     "turn_index"),
    (conversation(mistakes=[{"turn_index": 2, "guidance category": 2}]), "not assistant turns"),
    (conversation(message_list=[{"turn_index": 4, "role": "system", "content": "x"}]),
     "turn 4 has the unknown role 'system'"),
    ('{"message_list": [], "message_list": []}', "'message_list' appears twice"),
    (conversation(assistant_guidelines={"Category 9": {}}), "1, 2 or 3"),
    (conversation(message_list=[{"turn_index": 1, "role": "assistant", "content": "x",
                                 "category": 2, "key": "nope", "phase": "Phase 1"}]),
     "not in assistant_guidelines"),
])
def test_malformed_conversations_name_the_problem(tmp_path, data, needle):
    path = write(tmp_path / "d", "bad.json", data)
    with pytest.raises(ImportFailure, match=needle) as err:
        parse_conversation(path)
    assert str(path) in str(err.value)


def test_non_utf8(tmp_path):
    p = tmp_path / "d" / "c.json"
    p.parent.mkdir()
    p.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ImportFailure, match="UTF-8"):
        parse_conversation(p)


def test_judge_file_names():
    assert judge_target(Path("/x/airlines/conversation_00012_usage.json")) == \
        ("airlines/conversation_00012", 1)
    assert judge_target(Path("/x/airlines/conversation_00012_usage_attempt3.json")) == \
        ("airlines/conversation_00012", 3)
    assert judge_target(Path("/x/airlines/conversation_00012.json")) is None


def test_judge_output(tmp_path):
    out = {"turn_guidelines": [
        {"turn_index": 1, "guideline_used": {"guidance_category": "Category 2", "guidance_key":
         "change_booking", "guideline_phase": "Phase 1", "is_violation": False,
         "judge_reason": "asked for the code"}},
        {"turn_index": 3, "guideline_used": {"is_violation": "true", "judge_reason": "no fee"}},
    ]}
    j = parse_judge_output(write(tmp_path / "airlines", "conv_7_usage_attempt2.json", out))
    assert (j.conversation_id, j.attempt) == ("airlines/conv_7", 2)
    assert j.turns[0].guideline == Guideline(2, "change_booking", 1)
    assert j.turns[1].guideline is None and j.turns[1].violation  # a binary verdict


def test_judge_output_needs_a_verdict(tmp_path):
    out = {"turn_guidelines": [{"turn_index": 1, "guideline_used": {"guidance_key": "k"}}]}
    with pytest.raises(ImportFailure, match="is_violation"):
        parse_judge_output(write(tmp_path / "a", "c_usage.json", out))
