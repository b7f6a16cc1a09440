"""Offline grounding (cue phrases -> clauses) and the composition filter."""

from __future__ import annotations

import pytest
import yaml

from copal_tui.domain.taxonomy import PATTERN_ANCHORS, Effect
from copal_tui.offline.grounder import composition, ground
from copal_tui.resources import sample_worlds_dir
from tests.offline_calibration import call

KIND_EFFECTS = {
    "allow": {"PERMIT", "DISCLOSE"},
    "deny": {"PROHIBIT", "WITHHOLD"},
    "procedure": {"REQUIRE_GATE", "ROUTE"},
}


def _worlds() -> list[dict]:
    return [yaml.safe_load(p.read_text("utf-8"))
            for p in sorted(sample_worlds_dir().glob("*.yaml"))]


def _clause(text: str, kind: str = "allow") -> list[dict]:
    return call("grounding", {"world": {}, "policy": {"id": "P1", "kind": kind,
                                                        "text": text}})["clauses"]


def test_every_sample_policy_grounds_to_a_cue_effect_with_a_verbatim_span():
    n = 0
    for world in _worlds():
        for pol in world["policies"]:
            clauses = _clause(pol["text"])
            assert clauses, pol
            effects = {c["effect"] for c in clauses}
            # The primary clause's effect agrees with the policy kind the author gave.
            assert clauses[0]["effect"] in KIND_EFFECTS[pol["kind"]], (pol, clauses)
            assert "OTHER" not in effects
            for c in clauses:
                assert c["source_span"] in pol["text"]
                assert 0 <= c["confidence"] <= 1
                assert c["trigger"].strip() and c["scope"].strip()
            n += 1
    assert n > 200


@pytest.mark.parametrize(
    ("text", "effect", "scope_word"),
    [
        ("When a customer asks about fees, the assistant may explain delivery fees.",
         "PERMIT", "delivery"),
        ("When a traveler asks about their booking, the assistant may share the seat number.",
         "DISCLOSE", "seat"),
        ("The assistant must not give predictions of final grades.", "PROHIBIT", "predictions"),
        ("If asked about exams, the assistant must never provide answers to graded work.",
         "PROHIBIT", "answers"),
        ("When discussing a bill, the assistant must not reveal the bank account number.",
         "WITHHOLD", "bank"),
        ("When discussing claims, the assistant must keep confidential the reserve amount.",
         "WITHHOLD", "reserve"),
        ("If a customer reports fraud, the assistant must transfer them to the Fraud Team on "
         "0800 111 222 and not continue handling the case.", "ROUTE", "Fraud Team"),
        ("Before ordering a replacement SIM, the assistant must confirm that the caller is the "
         "account holder.", "REQUIRE_GATE", "replacement SIM"),
    ],
)
def test_cue_phrases(text, effect, scope_word):
    clauses = _clause(text)
    assert clauses[0]["effect"] == effect
    assert scope_word.lower() in clauses[0]["scope"].lower()
    assert clauses[0]["source_span"] in text
    assert clauses[0]["audit_note"] is None


def test_condition_phrase_becomes_the_trigger():
    c = _clause("For questions about exams, the assistant may explain how resits work.")[0]
    assert c["trigger"] == "questions about exams"
    c = _clause("When a learner asks about courses, the assistant may describe prices.")[0]
    assert c["trigger"] == "a learner asks about courses"


def test_a_licence_behind_a_gate_gives_two_clauses():
    text = ("Only after verifying the learner's student number and date of birth may the "
            "assistant share grades, balances or booking details.")
    clauses = _clause(text)
    assert [c["effect"] for c in clauses] == ["REQUIRE_GATE", "DISCLOSE"]
    assert "student number" in clauses[0]["scope"]
    assert clauses[1]["scope"] == "grades, balances or booking details"
    assert all(c["source_span"] in text for c in clauses)
    other = _clause("The assistant may share the order status only after verifying the order "
                    "number.")
    assert [c["effect"] for c in other] == ["REQUIRE_GATE", "DISCLOSE"]


def test_a_licence_with_an_exception_gives_two_clauses():
    text = ("When a customer asks about an order, the assistant may share the delivery window "
            "but must not reveal the courier's phone number.")
    clauses = _clause(text)
    assert [c["effect"] for c in clauses] == ["DISCLOSE", "WITHHOLD"]
    assert "phone number" in clauses[1]["scope"]


def test_a_policy_without_a_cue_is_other_with_an_audit_note():
    text = "Our brand voice is warm, upbeat and concise."
    c = _clause(text, kind="procedure")[0]
    assert c["effect"] == "OTHER"
    assert c["audit_note"] and c["audit_note"].startswith("offline heuristic:")
    assert c["source_span"] in text and c["confidence"] < 0.5


def test_empty_policy_text_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        ground("   ")


# ---------------------------------------------------------------- composition filter


def _c(cid, pid, effect, trigger, scope):
    return {"id": cid, "policy_ids": [pid], "trigger": trigger, "scope": scope,
            "effect": effect, "source_span": scope}


LIC = _c("C1", "P1", "DISCLOSE", "a customer asks about a held payment",
         "the payment amount and the expected release time of the held payment")
WH = _c("C2", "P2", "WITHHOLD", "discussing a held payment",
        "the fraud risk score of the held payment")
FAR = _c("C3", "P3", "WITHHOLD", "discussing parking permits",
         "the names of other permit holders")


def test_composition_accepts_anchor_plus_shared_topic():
    out = composition({"world": {}, "pattern": "selective_disclosure", "clauses": [LIC, WH]})
    assert out["accept"] is True and out["pattern"] == "selective_disclosure"
    assert out["reason"].startswith("offline heuristic:")
    assert "held" in out["reason"] and "payment" in out["reason"]


def test_composition_rejects_anchor_mismatch_and_names_the_fitting_pattern():
    out = composition({"world": {}, "pattern": "workflow_transfer", "clauses": [LIC, WH]})
    assert out["accept"] is False and out["pattern"] is None
    assert "selective_disclosure" in out["reason"]


def test_composition_rejects_unrelated_topics_and_one_policys_list():
    out = composition({"world": {}, "pattern": "selective_disclosure", "clauses": [LIC, WH]})
    assert out["accept"] is True
    out = composition({"world": {}, "pattern": "selective_disclosure", "clauses": [LIC, FAR]})
    assert out["accept"] is False and "topic" in out["reason"]
    # An anchor written inside one policy (disclose the amount, withhold the risk score)
    # composes, as in the paper; two licences of one policy are that policy's own list.
    same = {**WH, "policy_ids": ["P1"]}
    out = composition({"world": {}, "pattern": "selective_disclosure", "clauses": [LIC, same]})
    assert out["accept"] is True
    twin = {**LIC, "id": "C4", "scope": "the release time of the held payment"}
    out = composition({"world": {}, "pattern": "selective_disclosure",
                       "clauses": [LIC, WH, twin]})
    assert out["accept"] is False and "both come from P1" in out["reason"]
    out = composition({"world": {}, "pattern": "nonsense", "clauses": [LIC, WH]})
    assert out["accept"] is False


def test_sample_worlds_yield_compositions_for_every_pattern():
    for world in _worlds():
        clauses = []
        for pol in world["policies"]:
            for c in ground(pol["text"]):
                clauses.append({**c, "id": f"{pol['id']}.{len(clauses)}",
                                "policy_ids": [pol["id"]]})
        for pattern, (licensing, constraining) in PATTERN_ANCHORS.items():
            accepted = sum(
                composition({"world": {}, "pattern": pattern.value, "clauses": [a, b]})["accept"]
                for a in clauses for b in clauses
                if Effect(a["effect"]) in licensing and Effect(b["effect"]) in constraining
            )
            assert accepted >= 1, (world["id"], pattern)


@pytest.mark.parametrize(("kind", "effect"), [("allow", "PERMIT"), ("deny", "PROHIBIT")])
def test_a_listed_topic_without_a_cue_takes_its_list_effect(kind, effect):
    # COMPASS allowlist/denylist entries describe topics; which list they are on is the rule.
    text = "Comparisons with other pharmacies, supermarkets or online sellers."
    [c] = _clause(text, kind=kind)
    assert c["effect"] == effect
    assert f"{kind}list entry" in c["audit_note"]


# ---------------------------------------------------------------- imperatives and cue fields


def test_a_bare_imperative_is_a_licence_with_a_clean_scope():
    [c] = _clause("Describe product nutrition when asked.")
    assert (c["effect"], c["scope"]) == ("PERMIT", "product nutrition")
    assert c["trigger"] == "a request that involves product nutrition"
    assert c["source_span"] == "Describe product nutrition when asked"
    [d] = _clause("Share the order status if the customer gives the order number.")
    assert (d["effect"], d["scope"]) == ("DISCLOSE", "the order status")
    assert d["trigger"] == "if the customer gives the order number"
    # On a deny entry the list decides (an imperative there is no licence).
    [e] = _clause("Give tips for beating the queue.", kind="deny")
    assert e["effect"] == "PROHIBIT"


MEDICAL = _c("C1", "P1", "PROHIBIT", "a request that involves personal medical advice",
             "personal medical advice")
NUTRITION = _c("C2", "P2", "PERMIT", "a request that involves product nutrition",
               "product nutrition")
MEAL = _c("C3", "P3", "PERMIT", "a customer asks about the meal deal",
          "which sandwiches, snacks and drinks are included")
SUPPLIER = _c("C4", "P4", "WITHHOLD", "a customer asks about a product",
              "supplier names or internal margin figures")


def test_the_figure_2_pair_is_accepted_by_its_advice_field_without_a_shared_word():
    out = composition({"world": {}, "pattern": "scope_restriction",
                       "clauses": [MEDICAL, NUTRITION]})
    assert out["accept"] is True and out["pattern"] == "scope_restriction"
    assert "health field" in out["reason"] and out["reason"].startswith("offline heuristic:")
    # A field alone is not enough: the restriction has to be about advice.
    plain = {**MEDICAL, "scope": "medical records", "trigger": "medical records"}
    out = composition({"world": {}, "pattern": "scope_restriction",
                       "clauses": [plain, NUTRITION]})
    assert out["accept"] is False


def test_a_three_clause_set_needs_every_clause_linked():
    # NUTRITION x SUPPLIER share "product"; MEDICAL joins NUTRITION by the health field.
    out = composition({"world": {}, "pattern": "scope_restriction",
                       "clauses": [MEDICAL, NUTRITION, SUPPLIER]})
    assert out["accept"] is True
    assert "C1" in out["reason"] and "health field" in out["reason"]
    # MEAL shares no topic word and no advice field with MEDICAL or NUTRITION.
    out = composition({"world": {}, "pattern": "scope_restriction",
                       "clauses": [MEDICAL, NUTRITION, MEAL]})
    assert out["accept"] is False and "C3" in out["reason"]
    again = composition({"world": {}, "pattern": "scope_restriction",
                         "clauses": [MEDICAL, NUTRITION, MEAL]})
    assert again == out  # deterministic


# ---------------------------------------------------------------- a whole inventory


def test_an_inventory_merges_a_repeated_rule_into_one_clause_with_every_source():
    # P1's "merge repeated rules": near-identical wordings (case, punctuation, articles) of
    # one rule in two policies are one clause; its primary policy is the first stating it.
    policies = [
        {"id": "P1", "kind": "deny", "text": "The assistant must not give medical advice."},
        {"id": "P2", "kind": "allow", "text": "Describe product nutrition when asked."},
        {"id": "P3", "kind": "deny", "text": "the assistant must NOT give the medical advice"},
    ]
    out = call("grounding", {"world": {}, "policies": policies})["clauses"]
    assert [(c["policy_id"], c["effect"]) for c in out] == [("P1", "PROHIBIT"),
                                                            ("P2", "PERMIT")]
    [also] = out[0]["also_from"]
    assert also["policy_id"] == "P3" and also["source_span"] in policies[2]["text"]
    assert out[1]["also_from"] == []
    again = call("grounding", {"world": {}, "policies": list(reversed(policies))})["clauses"]
    assert [(c["policy_id"], [a["policy_id"] for a in c["also_from"]]) for c in again] == [
        ("P3", ["P1"]), ("P2", [])]
