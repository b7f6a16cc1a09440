"""Grounding as the paper's prompt P1 and Appendix A.3 say: one call per world with the whole
policy inventory, repeated rules merged into one clause that keeps every source, a clause
whose source span is not in its policy text rejected (and counted), and `copal stats` giving
clauses per policy rule beside the paper's 480 clauses of 882 rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copal_tui import prompts
from copal_tui.offline import engine
from tests.db_support import query_rows

GEN = ("--generator", "offline/heuristic")
GROCERY = Path(__file__).parent / "fixtures" / "fresh_basket_grocery.yaml"

# P1 of the paper (Appendix A.4), sentence by sentence.
P1 = ("Given a company context and its policy inventory, extract a compact set of operational "
      "clauses useful for composed-policy testing.",
      "Merge repeated rules and keep only high-information clauses.",
      "Preserve a short source span so that the grounded clause can be audited against the "
      "policy text.")


def _world(tmp_path: Path, policies: str, name: str = "w.yaml") -> Path:
    head = GROCERY.read_text(encoding="utf-8").split("policies:")[0]
    path = tmp_path / name
    path.write_text(head + "policies:\n" + policies, encoding="utf-8")
    return path


def _counts(db: Path) -> dict[str, int]:
    [row] = query_rows(db, "SELECT manifest FROM runs WHERE stage = 'ground'")
    return json.loads(row["manifest"])["counts"]


def test_the_prompt_carries_p1_and_asks_for_sources():
    system = prompts.render("grounding", {"world": {}, "policies": []})[0]["content"]
    for sentence in P1:
        assert sentence in system
    assert "`also_from`" in system and "`policy_id`" in system


THREE = ("  - id: P1\n    kind: allow\n    text: The assistant may explain the delivery fees.\n"
         "  - id: P2\n    kind: deny\n    text: The assistant must never reveal supplier names.\n"
         "  - id: P3\n    kind: allow\n    text: Describe product nutrition when asked.\n")


def test_one_call_per_world_with_the_whole_inventory(cli, initialised, tmp_path):
    assert cli("import", str(_world(tmp_path, THREE))).exit_code == 0
    assert cli("run", "ground", *GEN).exit_code == 0
    users = [json.loads(r[0])["messages"][1]["content"] for r in query_rows(
        initialised, "SELECT request FROM llm_calls WHERE request LIKE '%COPAL-TASK: grounding%'")]
    assert len(users) == 1
    _, inp = prompts.parse_trailer(users[0]) or ("", {})
    assert [p["id"] for p in inp["policies"]] == ["P1", "P2", "P3"]


def _fake(monkeypatch: pytest.MonkeyPatch, clauses: list[dict[str, Any]]) -> None:
    """The model's grounding answer, whatever the inventory."""
    monkeypatch.setitem(engine.HANDLERS, "grounding", lambda inp: {"clauses": clauses})


def _clause(pid: str, span: str, effect: str = "PERMIT", **kw: Any) -> dict[str, Any]:
    return {"policy_id": pid, "trigger": kw.pop("trigger", "a question about fees"),
            "scope": kw.pop("scope", "delivery fees"), "effect": effect, "source_span": span,
            "confidence": 0.9, "audit_note": None, **kw}


def test_a_span_not_in_its_policy_is_rejected_and_counted(cli, initialised, tmp_path,
                                                          monkeypatch):
    assert cli("import", str(_world(tmp_path, THREE))).exit_code == 0
    _fake(monkeypatch, [
        _clause("P1", "may explain the delivery fees"),
        # A paraphrase: P2 says "must never reveal", not "must not disclose".
        _clause("P2", "must not disclose supplier names", "WITHHOLD",
                trigger="a question about a product", scope="supplier names"),
        # Whitespace differs from the policy text only: licensed, stored as the policy has it.
        _clause("P3", "Describe  product\nnutrition", trigger="a nutrition question",
                scope="product nutrition"),
    ])
    result = cli("run", "ground", *GEN)
    assert result.exit_code == 0, result.output
    rows = {r["id"]: r for r in query_rows(initialised, "SELECT * FROM clauses")}
    assert set(rows) == {"fresh-basket:C:P1:1", "fresh-basket:C:P3:1"}
    assert rows["fresh-basket:C:P3:1"]["source_span"] == "Describe product nutrition"
    for r in rows.values():
        [pid] = json.loads(r["policy_ids"])
        [text] = [p["text"] for p in query_rows(
            initialised, "SELECT text FROM policies WHERE id = ?", (pid,))]
        assert r["source_span"] in text and r["source_span"] != text
    counts = _counts(initialised)
    assert counts["clauses"] == 2 and counts["clauses_rejected"] == 1
    assert counts["policies_without_clause"] == 1  # P2: its only clause was rejected


def test_a_rule_repeated_by_the_model_is_one_clause_with_both_sources(cli, initialised,
                                                                    tmp_path, monkeypatch):
    policies = THREE + "  - id: P4\n    kind: allow\n    text: Explain the delivery fees.\n"
    assert cli("import", str(_world(tmp_path, policies))).exit_code == 0
    _fake(monkeypatch, [
        # The model merged P1 and P4 itself ...
        _clause("P1", "may explain the delivery fees",
                also_from=[{"policy_id": "P4", "source_span": "Explain the delivery fees"},
                           # ... and claims a source whose text does not have the span.
                           {"policy_id": "P3", "source_span": "Explain the delivery fees"}]),
        # ... and states it again in other case and punctuation: the same clause tuple.
        _clause("P4", "Explain the delivery fees.", trigger="A question about fees",
                scope="Delivery fees!"),
        _clause("P2", "must never reveal supplier names", "WITHHOLD",
                trigger="a question about a product", scope="supplier names"),
    ])
    assert cli("run", "ground", *GEN).exit_code == 0
    rows = {r["id"]: json.loads(r["policy_ids"])
            for r in query_rows(initialised, "SELECT id, policy_ids FROM clauses")}
    assert rows == {"fresh-basket:C:P1:1": ["P1", "P4"], "fresh-basket:C:P2:1": ["P2"]}
    counts = _counts(initialised)
    assert counts["clauses_merged"] == 1 and counts["sources_rejected"] == 1


REPEATED = ("  - id: P6\n    kind: allow\n    text: Describe the product nutrition when asked.\n")


def test_the_offline_grounder_merges_a_repeated_rule_and_the_suite_still_builds(
        cli, initialised, tmp_path):
    policies = GROCERY.read_text(encoding="utf-8").split("policies:\n")[1] + REPEATED
    assert cli("import", str(_world(tmp_path, policies))).exit_code == 0
    result = cli("run", "ground", "compose", "generate", "select", *GEN)
    assert result.exit_code == 0, result.output
    nutrition = [r for r in query_rows(initialised, "SELECT * FROM clauses")
                 if "P2" in json.loads(r["policy_ids"])]
    # P2 "Describe product nutrition when asked." and P6 "Describe the product nutrition when
    # asked." are one rule: one clause, primary P2, both sources.
    assert [(r["id"], json.loads(r["policy_ids"])) for r in nutrition] == [
        ("fresh-basket:C:P2:1", ["P2", "P6"])]
    assert nutrition[0]["source_span"] in "Describe product nutrition when asked."
    assert not query_rows(initialised, "SELECT id FROM clauses WHERE id LIKE '%:P6:%'")
    # The merged clause composes and reaches the items (the paper's Figure 2 pair).
    comps = [json.loads(r["clause_ids"]) for r in query_rows(
        initialised, "SELECT clause_ids FROM compositions WHERE status = 'confirmed'")]
    assert any("fresh-basket:C:P2:1" in ids for ids in comps)
    items = query_rows(initialised, "SELECT i.id FROM items i JOIN compositions c "
                                    "ON c.id = i.composition_id WHERE c.clause_ids LIKE ?",
                       ('%"fresh-basket:C:P2:1"%',))
    assert items
    from copal_tui.services.item_views import item_view
    from store.db import connect

    db = connect(initialised)
    try:
        view = item_view(db, items[0]["id"])
    finally:
        db.conn.close()
    assert view is not None
    assert any(getattr(c, "policy_ids", None) == ("P2", "P6") for c in view.item.clauses)


def test_stats_give_clauses_per_rule_beside_the_paper(cli, initialised, tmp_path, samples):
    # A deny and an allow policy stating one rule: a mixed-source clause (Table 8).
    mixed = ("  - id: P1\n    kind: deny\n    text: The assistant must not give medical advice.\n"
             "  - id: P2\n    kind: allow\n    text: the assistant must not give medical advice\n"
             "  - id: P3\n    kind: allow\n    text: Describe product nutrition when asked.\n")
    assert cli("import", str(_world(tmp_path, mixed))).exit_code == 0
    # A second world, not grounded: its policies are no rule of the grounded inventories.
    assert cli("import", str(samples / "skyline_air.yaml")).exit_code == 0
    assert cli("run", "ground", "--world", "fresh-basket", *GEN).exit_code == 0
    stats = json.loads(cli("stats", "--json").stdout)
    clauses = len(query_rows(initialised, "SELECT id FROM clauses"))
    rules = len(query_rows(initialised, "SELECT id FROM policies WHERE world_id = 'fresh-basket'"))
    assert (stats["clauses"], stats["policy_rules"]) == (clauses, rules) == (2, 3)
    # The ratio is clauses / rules; the paper's is 480 clauses / 882 rules.
    assert stats["clauses_per_rule"] == pytest.approx(clauses / rules, abs=1e-4)
    assert (stats["paper_clauses"], stats["paper_policy_rules"]) == (480, 882)
    assert stats["paper_clauses_per_rule"] == pytest.approx(480 / 882, abs=1e-4)
    assert (stats["clauses_mixed_source"], stats["clauses_allowed_source"],
            stats["clauses_prohibited_source"], stats["clauses_procedure_source"]) == (1, 1, 0, 0)
    text = cli("stats").stdout
    assert "clauses_per_rule" in text and "480/882 = 0.54" in text


def test_a_long_inventory_is_asked_in_chunks_and_merged_across_them(cli, initialised,
                                                                    tmp_path):
    # 121 policies: more than one call's worth (60), so three near-equal chunks; the last
    # repeats the first, and the two land in different chunks yet give one clause.
    texts = [f"The assistant may explain the opening hours of branch {n}." for n in range(120)]
    policies = "".join(f"  - id: P{n:03d}\n    kind: allow\n    text: {t}\n"
                       for n, t in enumerate([*texts, texts[0]]))
    assert cli("import", str(_world(tmp_path, policies))).exit_code == 0
    assert cli("run", "ground", *GEN).exit_code == 0
    users = [json.loads(r[0])["messages"][1]["content"] for r in query_rows(
        initialised, "SELECT request FROM llm_calls WHERE request LIKE '%COPAL-TASK: grounding%'")]
    sizes = sorted(len((prompts.parse_trailer(u) or ("", {}))[1]["policies"]) for u in users)
    assert sizes == [40, 40, 41]
    [first] = query_rows(initialised, "SELECT policy_ids FROM clauses WHERE id LIKE '%:P000:%'")
    assert json.loads(first["policy_ids"]) == ["P000", "P120"]
    assert len(query_rows(initialised, "SELECT id FROM clauses")) == 120
