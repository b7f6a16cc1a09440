"""Dialogue stages with the offline engine, through the CLI: `dialogue_judge` stores N attempts
with a verdict per assistant turn, each attempt is its own request and a re-run makes no call;
`--binary` stores verdict-only attempts; `dialogue_variants` records every round, keeps a
variant only when the two judges say so and never runs more than three rounds per turn (a kept
variant's dialogue is checked with forced verdicts in test_dialogue_pipeline_http)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.pipeline.dialogue_variants import MAX_ROUNDS
from copal_tui.services.report import dialogue_judging
from store.db import connect
from tests.db_support import query_dicts

C1 = "Category 1: Universal Compliance"
C2 = "Category 2: Intent Triggered Guidelines"
C3 = "Category 3: Condition Triggered Guidelines"
DOC = {
    C1: {"closing": "End the conversation by asking whether there is anything else you can "
                    "help with."},
    C2: {"return_item": {
        "Phase 1": "Ask for the order number and the email address used for the order.",
        "Phase 2": "State the refund amount and that the refund takes 5 working days."}},
    C3: {"damaged": "If the user says the item arrived damaged, ask for a photo of the damage "
                    "and apologise."},
}
REFUND = "Thanks. Your refund amount is £40 and the refund takes 5 working days."
SLIPPED = "Thanks, your money is on its way back to you."  # c2 turn 5: no amount, no timing


def conversation(reply5: str = REFUND, violation: bool = False) -> dict[str, Any]:
    def a(i: int, text: str, cat: str, key: str, phase: str | None = None) -> dict[str, Any]:
        return {"turn_index": i, "role": "assistant", "content": text, "category": cat,
                "key": key, "phase": phase}

    def u(i: int, text: str) -> dict[str, Any]:
        return {"turn_index": i, "role": "user", "content": text}

    data: dict[str, Any] = {"assistant_guidelines": DOC, "message_list": [
        u(0, "I want to return a jacket."),
        a(1, "Sure. Could you give me the order number and the email address used for the "
             "order?", C2, "return_item", "Phase 1"),
        u(2, "Order 5521, ana@example.com. It arrived damaged, the zip is broken."),
        a(3, "I'm sorry it arrived damaged. Could you send a photo of the damage?", C3,
          "damaged"),
        u(4, "Sent the photo."),
        a(5, reply5, C2, "return_item", "Phase 2"),
        u(6, "Great."),
        a(7, "Is there anything else I can help with?", C1, "closing")]}
    if violation:
        data["mistakes"] = [{"turn_index": 5, "guidance category": C2,
                             "guidance key": "return_item", "guideline_phase": "Phase 2",
                             "guideline": "Say the refund is on its way, without an amount.",
                             "evidence": "no amount, no timing"}]
    return data


def bench(root: Path) -> Path:
    for rel, data in (("shop/c1.json", conversation()),
                      ("shop/c2.json", conversation(SLIPPED, violation=True)),
                      ("other/c3.json", conversation())):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(data), encoding="utf-8")
    return root


def cli(db: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def make_store(tmp: Path) -> Path:
    db = tmp / "dialogues.db"
    cli(db, "init")
    cli(db, "import", "--from", "complibench", str(bench(tmp / "bench")))
    return db


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return make_store(tmp_path)


def last_run(db: Path) -> dict[str, Any]:
    return query_dicts(db, "SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1")[0]


# ------------------------------------------------------------------ dialogue_judge


def test_judge_stores_attempts_each_its_own_request_and_rerun_is_free(store):
    out = cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--attempts", "3",
              "--domain", "shop")
    assert "6/6 units, 0 failures, 6 calls" in out
    attempts = query_dicts(store, "SELECT * FROM dialogue_attempts ORDER BY dialogue_id, attempt")
    assert [(a["dialogue_id"], a["attempt"]) for a in attempts] == [
        (d, k) for d in ("shop/c1", "shop/c2") for k in (1, 2, 3)]  # other/c3 filtered out
    assert all(a["source"] == "run" and a["failure"] is None and a["binary_verdicts"] == 0
               and a["judge"] == "offline/judge" and a["run_id"] for a in attempts)
    per = query_dicts(store, "SELECT dialogue_id, attempt, group_concat(turn_index) AS turns, "
                             "min(category) AS cat FROM dialogue_predictions "
                             "GROUP BY dialogue_id, attempt")
    assert len(per) == 6 and {p["turns"] for p in per} == {"1,3,5,7"} and \
        all(p["cat"] is not None for p in per)
    calls = query_dicts(store, "SELECT request_hash, request FROM llm_calls WHERE cached = 0")
    assert len(calls) == 6 and len({c["request_hash"] for c in calls}) == 6
    c1 = [c["request"] for c in calls if "arrived damaged" in c["request"]
          and "refund amount is" in c["request"]]
    # The attempt number goes as the request's seed, as CompliBench sends it.
    assert len(c1) == 3 and all(f'"seed":{k}' in " ".join(c1) for k in (1, 2, 3))

    again = cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--attempts", "3",
                "--domain", "shop")
    assert "0/0 units, 0 failures, 0 calls" in again and last_run(store)["calls"] == 0
    more = cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--attempts", "4")
    # Attempt 4 of the two shop dialogues is asked, and attempts 1-4 of other/c3: its text is
    # shop/c1's, but the judge is given the conversation id (the file stem, as CompliBench
    # gives it), so its requests are its own.
    assert "6/6 units, 0 failures, 6 calls, 0 cache hits" in more


def test_judge_metrics_come_from_the_stored_predictions(store):
    cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--attempts", "2")
    got = {(r.judge, r.domain): r.to_dict() for r in dialogue_judging(connect(store)).rows}
    row = got[("offline/judge", "all")]
    # c2's turn 5 is the one violation; every other tagged turn (1, 3, 5 and the universal 7)
    # is compliant: 3 conversations x 4 tagged turns - 1.
    assert row["attempts"] == 2 and row["conversations"] == 3
    assert row["violation_turns"] == 1 and row["compliant_turns"] == 11
    preds = query_dicts(store, "SELECT violation FROM dialogue_predictions WHERE dialogue_id = "
                               "'shop/c2' AND turn_index = 5")
    # The heuristic flags the reply that left out the amount and the 5 working days.
    assert [p["violation"] for p in preds] == [1, 1]
    assert row["violation_detection_accuracy"] == 1.0


def test_binary_judge_stores_verdicts_only_under_its_own_name(store):
    cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--binary", "--attempts", "2",
        "--dialogue", "shop/c2")
    attempts = query_dicts(store, "SELECT judge, binary_verdicts FROM dialogue_attempts")
    assert attempts == [{"judge": "offline/judge+binary", "binary_verdicts": 1}] * 2
    preds = query_dicts(store, "SELECT * FROM dialogue_predictions")
    assert len(preds) == 8 and all(p["category"] is None and p["key"] is None for p in preds)
    [row] = [r.to_dict() for r in dialogue_judging(connect(store)).rows if r.domain == "all"]
    assert row["binary"] is True and row["strict_violation_detection_accuracy"] is None
    # The same model judged with guidelines is a separate judge, not a replay; without
    # --attempts it is judged four times, as the CompliBench paper prompts each model.
    out = cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--dialogue", "shop/c2")
    assert "4/4 units" in out


def test_judge_needs_a_judge_and_known_dialogues(store):
    cli(store, "run", "dialogue_judge", code=2)
    cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--dialogue", "shop/nope",
        code=2)
    assert not query_dicts(store, "SELECT * FROM dialogue_attempts")
    assert not query_dicts(store, "SELECT * FROM runs WHERE stage = 'dialogue_judge'")


# ------------------------------------------------------------------ dialogue_variants


def check_rounds(db: Path) -> list[dict[str, Any]]:
    """Round invariants that must hold whatever the judges said; returns the rounds."""
    rounds = query_dicts(db, "SELECT * FROM dialogue_variants "
                             "ORDER BY dialogue_id, turn_index, round")
    by_turn: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rounds:
        by_turn.setdefault((r["dialogue_id"], r["turn_index"]), []).append(r)
    for (did, turn), rs in by_turn.items():
        assert [r["round"] for r in rs] == list(range(1, len(rs) + 1))
        assert len(rs) <= MAX_ROUNDS
        for r in rs:
            assert r["failure"] is None and r["modified_guideline"] and r["new_reply"]
            assert r["kept"] == int(bool(r["behaviour_changed"]) and
                                    not r["violation_detected"])
            assert r["reason"].startswith("kept" if r["kept"] else "not kept")
        assert not any(r["kept"] for r in rs[:-1])  # the loop stops at a kept round
        if not rs[-1]["kept"]:
            assert len(rs) == MAX_ROUNDS
        variant = query_dicts(db, "SELECT * FROM dialogues WHERE id = ?", (f"{did}~v{turn}",))
        assert bool(variant) == bool(rs[-1]["kept"])
    return rounds


def test_variants_offline_rounds_and_kept_variants(store):
    out = cli(store, "run", "dialogue_variants", "--judge", "offline/judge", "--per-dialogue",
              "2", "--domain", "shop")
    assert "0 failures" in out
    rounds = check_rounds(store)
    # Eligible turns: Category 2 or 3, not a violation -> c1: 1, 3, 5; c2: 1, 3 (5 is one).
    turns = {(r["dialogue_id"], r["turn_index"]) for r in rounds}
    assert {t for t in turns if t[0] == "shop/c1"} <= {("shop/c1", i) for i in (1, 3, 5)}
    assert {t for t in turns if t[0] == "shop/c2"} == {("shop/c2", 1), ("shop/c2", 3)}
    assert len({t for t in turns if t[0] == "shop/c1"}) == 2
    assert all(r["original_guideline"] in json.dumps(DOC, ensure_ascii=False) for r in rounds)

    again = cli(store, "run", "dialogue_variants", "--judge", "offline/judge",
                "--per-dialogue", "2", "--domain", "shop")
    assert "0/0 units, 0 failures, 0 calls" in again
    assert len(query_dicts(store, "SELECT id FROM dialogue_variants")) == len(rounds)


def test_report_json_includes_judged_dialogues(store):
    cli(store, "run", "dialogue_judge", "--judge", "offline/judge", "--attempts", "2")
    report = json.loads(cli(store, "report", "--json"))
    got = {(r["judge"], r["domain"]): r for r in report["dialogue_judging"]}
    assert set(got) == {("offline/judge", d) for d in ("shop", "other", "all")}
    assert got[("offline/judge", "all")]["conversations"] == 3
    assert got[("offline/judge", "all")]["attempts"] == 2
