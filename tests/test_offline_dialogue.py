"""Offline dialogue heuristics: required cues of a guideline, the per-turn judge (guideline by
shared words, workflow phases in order, violation on a missing cue) and the variant steps."""

from __future__ import annotations

from copal_tui.offline import dialogue
from copal_tui.offline.dialogue_cues import (
    drop_item,
    droppable_items,
    missing_items,
    requirements,
)

C2 = "Category 2: Intent Triggered Guidelines"
PHASE1 = "Ask for the order number and the email address used for the order."


def phrases(text: str) -> list[list[list[str]]]:
    return [[[i.phrase for i in alt] for alt in req] for req in requirements(text)]


def test_requirements_skip_conditions_prohibitions_and_nouns():
    assert phrases(PHASE1) == [[["the order number", "the email address used for the order"]]]
    assert phrases("If the user asks for a refund, offer a voucher, and do not mention fees. "
                   "Never ask for a card number.") == [[["a voucher"]]]
    assert phrases("Make one retention offer and ask them to reply with the word 'confirm'.") \
        == [[["one retention offer"]], [["reply with the word 'confirm'"]]]
    # "or" joins alternatives: either way of complying is enough.
    text = "State the fee as an amount, or state that no fee applies."
    assert phrases(text) == [[["the fee as an amount"], ["no fee applies"]]]
    assert missing_items(text, "No fee applies to your line.") == []
    assert droppable_items(text, "No fee applies.") == []  # dropping one would only narrow it


def test_missing_items_names_what_the_reply_leaves_out():
    gaps = missing_items(PHASE1, "Could you give me the order number?")
    assert [i.phrase for i in gaps] == ["the email address used for the order"]
    assert missing_items(PHASE1, "What's the order number and your email address?") == []


def test_dropped_item_is_forbidden_and_regenerate_removes_it():
    reply = "Sure. Could you give me the order number and the email address on it?"
    first, second = droppable_items(PHASE1, reply)
    modified = drop_item(PHASE1, second)
    assert modified == "Ask for the order number. Do not ask for the email address used for " \
                       "the order."
    new = dialogue.regenerate({"guideline": {"text": modified}, "original_reply": reply})
    assert new["reply"] == "Sure. Could you give me the order number?"
    assert dialogue.content_judge({"original_reply": reply, "new_reply": new["reply"]})[
        "behaviour_changed"] is True
    judged = dialogue.compliance_judge({"guideline": {"text": PHASE1}, "turn_index": 1,
                                        "conversation": [{"turn_index": 1, "role": "assistant",
                                                          "content": new["reply"]}]})
    assert judged["violates"] is True
    # Refinement round 2 drops the next cue the reply shows, round 3 cycles back.
    assert "Do not ask for the order number" in dialogue.refine(
        {"guideline": {"text": PHASE1}, "original_reply": reply, "round": 3})[
        "modified_guideline"]
    assert drop_item(PHASE1, first).startswith("Ask for the email address")


def test_judge_follows_phases_in_order_and_flags_a_missing_cue():
    doc = {C2: {"return_item": {"Phase 1": PHASE1,
                                "Phase 2": "State the refund amount and the refund date."}},
           "Category 3: Condition Triggered Guidelines": {
               "damaged": "If the user says the item arrived damaged, ask for a photo."}}
    turns = [
        {"turn_index": 0, "role": "user", "content": "Refund please, the refund amount?"},
        {"turn_index": 1, "role": "assistant", "content": "What is your order number?"},
        {"turn_index": 2, "role": "user", "content": "5521. It arrived damaged."},
        {"turn_index": 3, "role": "assistant", "content": "Sorry! Please send a photo."},
        {"turn_index": 4, "role": "user", "content": "Done."},
        {"turn_index": 5, "role": "assistant",
         "content": "Your refund amount is £40 and the refund date is 3 June."}]
    out = dialogue.judge({"attempt": 1, "guidelines": doc, "conversation": turns})
    got = {v["turn_index"]: v["guideline_used"] for v in out["turn_guidelines"]}
    assert sorted(got) == [1, 3, 5]
    # Turn 1 shares "refund amount" with Phase 2, but a workflow starts at Phase 1.
    # Phases are answered as integers, -1 for Category 3 (CompliBench's judge output).
    assert (got[1]["guidance_key"], got[1]["guideline_phase"]) == ("return_item", 1)
    assert got[1]["is_violation"] is True and "email address" in got[1]["judge_reason"]
    assert (got[3]["guidance_key"], got[3]["guideline_phase"], got[3]["is_violation"]) == \
        ("damaged", -1, False)
    assert (got[5]["guideline_phase"], got[5]["is_violation"]) == (2, False)
    assert got[5]["judge_reason"].startswith("offline heuristic:")
    binary = dialogue.judge_binary({"attempt": 1, "guidelines": doc, "conversation": turns})
    assert [v["guideline_used"]["is_violation"] for v in binary["turn_guidelines"]] == \
        [True, False, False]
    assert "guidance_key" not in binary["turn_guidelines"][0]["guideline_used"]


def test_judge_never_names_a_universal_guideline():
    # CompliBench's judge prompt: "You must choose ONLY from Category 2 (Intent Triggered) or
    # Category 3." A closing turn that only a universal rule describes still gets one of them.
    doc = {"Category 1: Universal Compliance": {
               "closing": "Ask whether there is anything else you can help with."},
           C2: {"return_item": {"Phase 1": PHASE1}}}
    turns = [{"turn_index": 0, "role": "user", "content": "Thanks."},
             {"turn_index": 1, "role": "assistant",
              "content": "Is there anything else I can help with?"}]
    [v] = dialogue.judge({"attempt": 1, "guidelines": doc, "conversation": turns})[
        "turn_guidelines"]
    assert v["guideline_used"]["guidance_category"] == C2
