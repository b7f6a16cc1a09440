"""`copal import --from complibench-judge` checks a judge output's turns against the stored
conversation: only its assistant turns may be judged, and the conversation must be imported."""

from __future__ import annotations

import json
from pathlib import Path

from store.db import connect

C2 = "Category 2: Intent Triggered Guidelines"
DOC = {"Category 1: Universal Compliance": {"tone": "Be polite."},
       C2: {"refund": {"Phase 1": "Ask for the order number."}}}


def put(root: Path, rel: str, data: object) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def conversation() -> dict[str, object]:
    return {"assistant_guidelines": DOC, "message_list": [
        {"turn_index": 0, "role": "user", "content": "hello"},
        {"turn_index": 1, "role": "assistant", "content": "hi", "category": 1, "key": "tone"},
        {"turn_index": 2, "role": "user", "content": "my refund"},
        {"turn_index": 3, "role": "assistant", "content": "order number?", "category": C2,
         "key": "refund", "phase": "Phase 1"}]}


def judged(*turns: int) -> dict[str, object]:
    return {"turn_guidelines": [
        {"turn_index": i, "guideline_used": {"guidance_category": None, "guidance_key": None,
                                             "is_violation": False, "judge_reason": "fine"}}
        for i in turns]}


def attempts(db_path: Path) -> list[tuple[str, str, int]]:
    return [tuple(r) for r in connect(db_path).execute(
        "SELECT dialogue_id, judge, attempt FROM dialogue_attempts ORDER BY dialogue_id")]


def test_judged_user_turn_is_refused_and_nothing_is_stored(cli, initialised, tmp_path):
    root = tmp_path / "bench"
    put(root, "shop/c1.json", conversation())
    assert cli("import", "--from", "complibench", str(root)).exit_code == 0
    out = put(tmp_path / "judge", "shop/c1_usage.json", judged(1, 2, 3))
    result = cli("import", "--from", "complibench-judge", "--judge", "J", str(out))
    assert result.exit_code != 0
    assert "turns [2] are not assistant turns of shop/c1" in result.output
    assert attempts(initialised) == []


def test_judge_output_of_a_conversation_not_imported_is_refused(cli, initialised, tmp_path):
    out = put(tmp_path / "judge", "shop/c9_usage.json", judged(1, 3))
    result = cli("import", "--from", "complibench-judge", "--judge", "J", str(out))
    assert result.exit_code != 0
    assert "conversation shop/c9 is not imported" in result.output
    assert attempts(initialised) == []


def test_judge_output_on_assistant_turns_is_stored(cli, initialised, tmp_path):
    root = tmp_path / "bench"
    put(root, "shop/c1.json", conversation())
    assert cli("import", "--from", "complibench", str(root)).exit_code == 0
    out = put(tmp_path / "judge", "shop/c1_usage.json", judged(1, 3))
    result = cli("import", "--from", "complibench-judge", "--judge", "J", str(out))
    assert result.exit_code == 0, result.output
    assert "imported 1 attempt(s) of J" in result.output
    assert attempts(initialised) == [("shop/c1", "J", 1)]
