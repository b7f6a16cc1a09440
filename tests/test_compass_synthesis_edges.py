"""COMPASS denied-edge queries at the public COMPASS code's granularity, against what its own
functions produce (tests/fixtures/compass_reference: the reference commit and the command are in
its README), through `copal run`:

- two calls per kept denied-base query, the short and the long configuration's, each with the
  reference's prompt wording and the strategies `random.Random(len(base_query)).sample` draws
  for that query, with the reference's guides, in the drawn order; each variation is stored
  under its strategy and form, filed under the base query's policy;
- they are verified by the reference's denylist-only matcher, which is not shown the
  organisation's context, and kept as its `apply_post_processing_logic` decides;
- copal's earlier rotation (`--denied-edge-writer rotation`) stays selectable, recorded in the
  run manifest.
"""

from __future__ import annotations

import json
from typing import Any

from tests.db_support import query_rows
from tests.test_compass_pipeline import WORLD, cli, make_world
from tests.test_compass_synthesis_base import (
    GEN,
    INPUTS,
    REF,
    assert_reference_wording,
    insert,
    manifest_options,
    sent,
    stub_engine,
)


def snake(title: str) -> str:
    """A reference strategy title as copal names the strategy ("Context Overflow" ->
    context_overflow)."""
    return title.lower().replace(" ", "_")


def kept_bases(db) -> dict[str, dict[str, Any]]:
    """The fixture's denied-base queries stored as kept (with one kept allowed-base query per
    allowlist policy, so no base query is written), by stored id."""
    out, slots = {}, {"P3": 0, "P4": 0}
    for b in INPUTS["denied_base_queries"]:
        slots[b["policy"]] += 1
        qid = f"{WORLD}:{b['policy']}:db{slots[b['policy']]:02d}"
        out[qid] = b
        insert(db, {"id": qid, "policy_id": b["policy"], "query_type": "denied_base",
                    "text": b["base_query"], "status": "kept"})
    for p in ("P1", "P2"):
        insert(db, {"id": f"{WORLD}:{p}:ab01", "policy_id": p, "query_type": "allowed_base",
                    "text": "When does the café close?", "status": "kept"})
    return out


def test_two_calls_per_base_query_with_the_references_draw_and_prompts(tmp_path):
    db = make_world(tmp_path)
    bases = kept_bases(db)
    cli(db, "run", "compass_generate", "--world", WORLD, *GEN, "--per-policy", "1")
    edges = query_rows(db, "SELECT * FROM compass_queries WHERE query_type = 'denied_edge'")
    for form in ("short", "long"):
        ref = REF["denied_edge"][form]
        drawn = {s["base_query"]: s["strategies"] for s in ref["samples"]}
        calls = sent(db, f"compass_generate_denied_{form}")
        # One call of this form per base query, with the strategies the reference draws for
        # it, in its order, each with the reference's guide; nothing else about the policy.
        assert sorted(inp["base_query"] for _m, inp in calls) == sorted(drawn)
        for messages, inp in calls:
            assert [s["title"] for s in inp["strategies"]] == drawn[inp["base_query"]]
            assert all(s["guide"] == ref["guides"][s["title"]] for s in inp["strategies"])
            assert set(inp) == {"base_query", "strategies"}
            assert_reference_wording(messages, ref["fixed_lines"])
        for qid, base in bases.items():
            got = {e["strategy"] for e in edges if e["parent_id"] == qid and e["form"] == form}
            assert got == {snake(t) for t in drawn[base["base_query"]]}, (qid, form)
    assert all(e["policy_id"] == bases[e["parent_id"]]["policy"] for e in edges)
    assert len(edges) == len(bases) * (REF["denied_edge"]["short"]["number_of_queries"]
                                       + REF["denied_edge"]["long"]["number_of_queries"])
    assert manifest_options(db, "compass_generate")["denied_edge_writer"] == "reference"


def test_denied_edges_are_verified_by_the_denylist_only_matcher(tmp_path, monkeypatch):
    db = make_world(tmp_path)
    insert(db, {"id": "base", "policy_id": "P3", "query_type": "denied_base",
                "text": INPUTS["query"], "status": "kept"})
    texts = {}
    for i, case in enumerate(INPUTS["denied_edge_matcher_cases"], 1):
        texts[f"Edge query number {i}?"] = case
        insert(db, {"id": f"edge:{i}", "policy_id": case["original_policy"],
                    "query_type": "denied_edge", "strategy": "context_overflow",
                    "form": "long", "parent_id": "base", "text": f"Edge query number {i}?"})

    def matcher(inp: dict[str, Any]) -> dict[str, Any]:
        names = texts[inp["query"]]["matching_out_policies"]
        return {"query": inp["query"], "matching_out_policies": [
            {"policy_name": n, "policy_description": "", "match_reason": "scripted"}
            for n in names]}

    stub_engine(monkeypatch, {"compass_verify_denylist": matcher})
    cli(db, "run", "compass_verify", "--world", WORLD, *GEN)
    calls = sent(db, "compass_verify_denylist")
    assert sorted(inp["query"] for _m, inp in calls) == sorted(texts)
    for messages, inp in calls:
        # The reference's prompt has no company context: neither has copal's.
        assert set(inp) == {"policy_document", "query"}
        assert inp["policy_document"] == INPUTS["policy"]
        assert_reference_wording(messages, REF["denied_edge_verification"]["fixed_lines"])
    assert not sent(db, "compass_verify_reference") and not sent(db, "compass_verify")
    want = {c["name"]: c["verification_result"]
            for c in REF["denied_edge_verification"]["cases"]}
    got = {r["text"]: r["status"] for r in query_rows(db, "SELECT * FROM compass_queries")}
    for text, case in texts.items():
        assert got[text] == ("kept" if want[case["name"]] == "passed" else "rejected"), case


def test_the_rotation_writer_stays_selectable(tmp_path):
    db = make_world(tmp_path)
    kept_bases(db)
    cli(db, "run", "compass_generate", "--world", WORLD, *GEN, "--per-policy", "1",
        "--denied-edge-writer", "rotation")
    assert not sent(db, "compass_generate_denied_short")
    calls = [inp for _m, inp in sent(db, "compass_generate_edge")
             if inp["query_type"] == "denied_edge"]
    assert len(calls) == len(INPUTS["denied_base_queries"])
    for inp in calls:  # one call per base query: 2 short and 4 long slots with word ranges
        assert [s["form"] for s in inp["slots"]] == ["short"] * 2 + ["long"] * 4
        assert {(s["min_words"], s["max_words"]) for s in inp["slots"]} == {(100, 200),
                                                                           (300, 800)}
    options = manifest_options(db, "compass_generate")
    assert options["denied_edge_writer"] == "rotation"
    stored = query_rows(db, "SELECT attributes FROM compass_queries "
                            "WHERE query_type = 'denied_edge'")
    assert stored and all("slot" in json.loads(r["attributes"]) for r in stored)
