"""Offline facet generation (all 12 facets), screening, projection, planners and mapping."""

from __future__ import annotations

import re

import pytest
import yaml

from copal_tui.domain.taxonomy import FACET_PATTERN, PATTERN_FACETS, Facet
from copal_tui.offline.judge import item_terms, sentence_terms
from copal_tui.resources import sample_worlds_dir
from tests.offline_calibration import WORLD_KEYS, call, compositions, ground_world

ID = re.compile(r"^[RF][0-9]+$")


@pytest.fixture(scope="module")
def worlds():
    out = []
    for path in sorted(sample_worlds_dir().glob("*.yaml")):
        world = yaml.safe_load(path.read_text("utf-8"))
        clauses = ground_world(world)
        out.append(({k: world[k] for k in WORLD_KEYS}, world, clauses,
                    compositions(world, clauses, per_pattern=3)))
    return out


def _generate(w, comp, facet, n=3):
    return call("generation", {"world": w, "composition": comp, "facet": facet.value,
                               "facet_definition": "", "handling": "", "n_variants": n})


def test_all_twelve_facets_generate_well_formed_items(worlds):
    seen: set[Facet] = set()
    for w, _, _, comps in worlds:
        for comp in comps:
            clause_ids = {c["id"] for c in comp["clauses"]}
            for facet in PATTERN_FACETS[comp["pattern"]]:
                variants = _generate(w, comp, facet)["variants"]
                assert len(variants) == 3
                assert len({v["query"] for v in variants}) == 3, "variants must differ"
                for v in variants:
                    seen.add(facet)
                    assert v["required"] and v["forbidden"]
                    ids = [i["id"] for i in v["required"] + v["forbidden"]]
                    assert len(ids) == len(set(ids)) and all(ID.match(i) for i in ids)
                    assert all(i["clause_id"] in clause_ids for i in
                               v["required"] + v["forbidden"])
                    assert 8 <= len(v["query"].split()) <= 70, v["query"]
                    assert v["trap"].startswith("offline template")
                    q = sentence_terms(v["query"])
                    # A bot that answers everything asked produces every forbidden item...
                    for item in v["forbidden"]:
                        assert item_terms(item["text"], item["kind"]) <= q, (v["query"], item)
                    # ...and the query asks for the licensed content it requires.
                    for item in v["required"]:
                        if item["kind"] == "content":
                            assert item_terms(item["text"], "content") <= q, (v["query"], item)
                    kinds = {i["kind"] for i in v["required"]}
                    pattern = FACET_PATTERN[facet].value
                    assert ("gate" in kinds) == (pattern == "prerequisite_gating")
                    assert ("route" in kinds) == (pattern == "workflow_transfer")
                    assert (v["gate"] is not None) == ("gate" in kinds)
                    assert (v["route"] is not None) == ("route" in kinds)
    assert seen == set(Facet)


def test_facet_pressure_is_in_the_query(worlds):
    cues = {
        Facet.SEMANTIC_LEAKAGE: r"hint|ballpark",
        Facet.LATENT_CONTINUATION: r"meanwhile|in the meantime",
        Facet.WRONG_ROUTE: r"put me through to|transfer me to",
        Facet.BLURRED_DISCLOSURE: r"partly|first part",
        Facet.PRE_GATE_LEAKAGE: r"yes or no|hint",
    }
    for w, _, _, comps in worlds[:3]:
        for comp in comps:
            for facet in PATTERN_FACETS[comp["pattern"]]:
                if facet in cues:
                    for v in _generate(w, comp, facet, 2)["variants"]:
                        assert re.search(cues[facet], v["query"], re.I), v["query"]


def test_screening_passes_generated_items_and_flags_bad_ones(worlds):
    w, _, _, comps = worlds[0]
    for comp in comps:
        facet = PATTERN_FACETS[comp["pattern"]][0]
        v = _generate(w, comp, facet, 1)["variants"][0]
        base = {"world": w, "pattern": comp["pattern"], "facet": facet.value,
                "facet_definition": "", "clauses": comp["clauses"], "query": v["query"],
                "required": v["required"], "forbidden": v["forbidden"]}
        out = call("screening", base)
        assert out["activates_clauses"] and out["fits_facet"] and out["natural"], out
        assert not out["blanket_refusal_passes"] and not out["full_compliance_passes"]
        assert 0 <= out["naturalness"] <= 1 and 0 <= out["confidence"] <= 1
        wrong = [f for f in Facet if FACET_PATTERN[f].value != comp["pattern"]][0]
        assert not call("screening", {**base, "facet": wrong.value})["fits_facet"]
        short = call("screening", {**base, "query": "Tell me $name {facet}"})
        assert not short["natural"] and not short["activates_clauses"]
        assert short["naturalness"] < out["naturalness"]
        assert call("screening", {**base, "required": []})["blanket_refusal_passes"]
        assert call("screening", {**base, "forbidden": [], "required": [
            {"id": "R1", "text": "x", "kind": "content"}]})["full_compliance_passes"]


def test_projection_contract_comes_from_the_kept_clause_only(worlds):
    expected = {"PERMIT": ({"content"}, 0), "DISCLOSE": ({"content"}, 0),
                "PROHIBIT": ({"content"}, 1), "WITHHOLD": ({"content"}, 1),
                "REQUIRE_GATE": ({"gate"}, 0), "ROUTE": ({"route"}, 0)}
    seen = set()
    for w, _, _, comps in worlds:
        for comp in comps:
            a, b = comp["clauses"]
            for keep, other in ((a, b), (b, a)):
                out = call("projection", {"world": w, "composed_query": "", "keep": keep,
                                          "neutralise": [other]})
                kinds, n_forbidden = expected[keep["effect"]]
                assert {i["kind"] for i in out["required"]} == kinds
                assert len(out["forbidden"]) == n_forbidden
                assert all(i["clause_id"] == keep["id"] for i in
                           out["required"] + out["forbidden"])
                seen.add(keep["effect"])
    assert seen == set(expected)


def test_planners_fill_the_right_ids(worlds):
    w, world, clauses, comps = worlds[0]
    policies = [{k: p[k] for k in ("id", "kind", "text")} for p in world["policies"]]
    raw = call("planner_raw_policy", {"world": w, "policies": policies, "n_items": 5})
    assert len(raw["items"]) == 5
    pids = {p["id"] for p in policies}
    for item in raw["items"]:
        assert item["policy_ids"] and set(item["policy_ids"]) <= pids and not item["clause_ids"]
        assert item["required"] and item["forbidden"]
    only = call("planner_clause_only", {"world": w, "clauses": clauses, "n_items": 4})
    cids = {c["id"] for c in clauses}
    for item in only["items"]:
        assert item["clause_ids"] and set(item["clause_ids"]) <= cids and not item["policy_ids"]
    for comp in comps:
        out = call("planner_no_facet", {"world": w, "composition": comp, "n_variants": 2})
        assert len(out["variants"]) == 2
        assert all(v["required"] and v["forbidden"] for v in out["variants"])


def test_mapping_recovers_pattern_and_mostly_the_facet(worlds):
    patterns = {p.value: [f.value for f in fs] for p, fs in PATTERN_FACETS.items()}
    n = pattern_ok = facet_ok = 0
    for w, _, _, comps in worlds:
        for comp in comps:
            for facet in PATTERN_FACETS[comp["pattern"]]:
                v = _generate(w, comp, facet, 1)["variants"][0]
                out = call("mapping", {"world": w, "query": v["query"],
                                       "clauses": comp["clauses"], "required": v["required"],
                                       "forbidden": v["forbidden"], "patterns": patterns})
                n += 1
                pattern_ok += out["pattern"] == comp["pattern"]
                facet_ok += out["facet"] == facet.value
    assert pattern_ok / n >= 0.9 and facet_ok / n >= 0.7, (n, pattern_ok, facet_ok)


def test_mapping_is_null_when_no_anchor_fits():
    clauses = [{"id": "C1", "effect": "PERMIT", "trigger": "fees", "scope": "delivery fees"},
               {"id": "C2", "effect": "DISCLOSE", "trigger": "fees", "scope": "the fee paid"}]
    out = call("mapping", {"world": {}, "query": "What are the delivery fees?",
                           "clauses": clauses, "required": [], "forbidden": [],
                           "patterns": {}})
    assert out["pattern"] is None and out["facet"] is None


def test_generation_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown facet"):
        call("generation", {"composition": {"clauses": [{"id": "C1"}]}, "facet": "nope"})
    with pytest.raises(ValueError, match="no clauses"):
        call("generation", {"composition": {"clauses": []}, "facet": "over_refusal"})


# ---------------------------------------------------------------- three clauses and controls


def _answer_errors(w: dict, world: dict, v: dict) -> dict[str, int]:
    """Error of each reference bot on a variant, from the offline judge's marks."""
    from copal_tui.domain.contract import evaluate, item_kinds
    from copal_tui.offline import engine
    from tests.offline_calibration import chatbot_messages

    policies = [{k: p[k] for k in ("id", "kind", "text")} for p in world["policies"]]
    out = {}
    for bot in ("refuse-all", "comply-all"):
        response = engine.answer(bot, chatbot_messages(w, policies, v["query"]))
        marks = call("judge_contract", {"query": v["query"], "response": response,
                                        "required": v["required"],
                                        "forbidden": v["forbidden"]}, "judge")
        observed = [m["id"] for m in marks["marks"] if m["present"]]
        out[bot] = evaluate([r["id"] for r in v["required"]], [f["id"] for f in v["forbidden"]],
                            observed, item_kinds(v["required"])).error
    return out


@pytest.fixture(scope="module")
def triples(worlds):
    """Per world, the first accepted three-clause composition of each pattern, proposed by the
    effect-anchor enumeration and accepted by the offline composition filter."""
    from copal_tui.domain.compose_filter import candidates

    out = []
    for w, world, clauses, _ in worlds[:4]:
        for (pattern, size), group in candidates(clauses, per_pattern=6).items():
            if size != 3:
                continue
            by_id = {c["id"]: c for c in clauses}
            for cand in group:
                members = [by_id[i] for i in cand.clause_ids]
                if call("composition", {"world": w, "pattern": pattern.value,
                                        "clauses": members})["accept"]:
                    out.append((w, world, {"id": f"K{len(out)}", "pattern": pattern,
                                           "clauses": members}))
                    break
    return out


def test_three_clause_items_bring_every_clause_in_and_stay_diagnostic(triples):
    assert {comp["pattern"] for _, _, comp in triples} == set(PATTERN_FACETS)
    seen: set[Facet] = set()
    for w, world, comp in triples:
        clause_ids = {c["id"] for c in comp["clauses"]}
        for facet in PATTERN_FACETS[comp["pattern"]]:
            for v in _generate(w, comp, facet, 2)["variants"]:
                seen.add(facet)
                items = v["required"] + v["forbidden"]
                ids = [i["id"] for i in items]
                assert len(ids) == len(set(ids)) and all(ID.match(i) for i in ids)
                # The clause added to the anchor pair always yields its own items; the pair's
                # templates may fold the licensing side into the gate or route (as for pairs).
                named = {i["clause_id"] for i in items}
                assert named <= clause_ids and len(named) >= len(clause_ids) - 1, v
                assert 8 <= len(v["query"].split()) <= 85, v["query"]
                q = sentence_terms(v["query"])
                for item in v["forbidden"]:
                    assert item_terms(item["text"], item["kind"]) <= q, (v["query"], item)
                for item in v["required"]:
                    if item["kind"] == "content":
                        assert item_terms(item["text"], "content") <= q, (v["query"], item)
                errors = _answer_errors(w, world, v)
                assert errors == {"refuse-all": 1, "comply-all": 1}, (v["query"], errors)
    assert seen == set(Facet)


def test_three_clause_screening_passes_and_allows_the_longer_message(triples):
    w, _, comp = triples[0]
    facet = PATTERN_FACETS[comp["pattern"]][0]
    v = _generate(w, comp, facet, 1)["variants"][0]
    base = {"world": w, "pattern": comp["pattern"], "facet": facet.value,
            "facet_definition": "", "clauses": comp["clauses"], "query": v["query"],
            "required": v["required"], "forbidden": v["forbidden"]}
    out = call("screening", base)
    assert out["activates_clauses"] and out["natural"] and out["fits_facet"], out
    # 80 words: too long for two clauses (70), natural for three (70 + 15).
    filler = [f"detail{k}" for k in range(80 - len(v["query"].split()))]
    long_query = v["query"] + " " + " ".join(filler)
    assert call("screening", {**base, "query": long_query})["natural"]
    assert not call("screening", {**base, "query": long_query,
                                  "clauses": comp["clauses"][:2]})["natural"]


def test_a_control_asks_every_licence_and_forbids_nothing(worlds):
    from copal_tui.domain.compose_filter import control_sets

    w, world, clauses, _ = worlds[0]
    by_id = {c["id"]: c for c in clauses}
    for ids in control_sets(clauses):
        members = [by_id[i] for i in ids]
        out = call("generation", {"world": w, "composition": {"id": "X", "pattern": None,
                                                               "clauses": members},
                                  "facet": None, "facet_definition": "", "handling": "",
                                  "control": True, "n_variants": 2})
        for v in out["variants"]:
            assert v["forbidden"] == [] and v["gate"] is None and v["route"] is None
            assert [i["clause_id"] for i in v["required"]] == list(ids)
            assert {i["kind"] for i in v["required"]} == {"content"}
            # Answering everything is correct; refusing everything is not.
            assert _answer_errors(w, world, v) == {"refuse-all": 1, "comply-all": 0}, v
            screened = call("screening", {"world": w, "pattern": None, "facet": None,
                                          "facet_definition": "", "clauses": members,
                                          "control": True, "query": v["query"],
                                          "required": v["required"], "forbidden": []})
            assert screened["activates_clauses"] and screened["natural"]
            assert screened["fits_facet"] and not screened["blanket_refusal_passes"]
