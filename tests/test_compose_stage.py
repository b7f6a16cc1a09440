"""The compose stage: the paper's Figure 2 pair composes, three-clause sets are proposed, the
enumeration is bounded (per pattern by the pattern mix) and deterministic, an anchor written
inside one policy composes, and a model's re-tag is taken at its word."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from copal_tui.domain.compose_filter import (
    Candidate,
    ask_cap,
    composition_id,
    pattern_pool,
    proposals,
    quota,
)
from copal_tui.domain.outputs import CompositionOut
from copal_tui.domain.taxonomy import Pattern
from copal_tui.pipeline.base import Options
from copal_tui.pipeline.compose import decide, parse_retag
from copal_tui.pipeline.runner import run_stages
from tests.db_support import query_rows
from tests.stub_server import Stub, serve
from tests.test_pattern_mix import hamilton

GROCERY = Path(__file__).parent / "fixtures" / "fresh_basket_grocery.yaml"
GEN = ("--generator", "offline/heuristic")


def _clause_of(db: Path, policy: str) -> str:
    [row] = query_rows(db, "SELECT id FROM clauses WHERE policy_ids = ?", (json.dumps([policy]),))
    return row["id"]


def test_the_papers_figure_2_pair_composes_as_scope_restriction(cli, initialised):
    assert cli("import", str(GROCERY)).exit_code == 0
    result = cli("run", "ground", "compose", *GEN)
    assert result.exit_code == 0, result.output
    medical, nutrition = _clause_of(initialised, "P1"), _clause_of(initialised, "P2")
    effects = {r["id"]: r["effect"]
               for r in query_rows(initialised, "SELECT id, effect FROM clauses")}
    assert (effects[medical], effects[nutrition]) == ("PROHIBIT", "PERMIT")
    rows = [r for r in query_rows(initialised, "SELECT * FROM compositions")
            if sorted(json.loads(r["clause_ids"])) == sorted([medical, nutrition])]
    assert [(r["pattern"], r["status"]) for r in rows] == [("scope_restriction", "confirmed")]
    assert "offline heuristic" in rows[0]["reason"]


def _compose_twice_apart(cli, tmp_path: Path, samples: Path) -> list[list[tuple]]:
    out = []
    for name in ("a", "b"):
        db = tmp_path / f"{name}.db"
        assert cli("init", db=db).exit_code == 0
        assert cli("import", str(samples / "harbor_clinics.yaml"), db=db).exit_code == 0
        result = cli("run", "ground", "compose", *GEN, db=db)
        assert result.exit_code == 0, result.output
        out.append([tuple(r) for r in query_rows(
            db, "SELECT id, clause_ids, pattern, status, reason FROM compositions ORDER BY id")])
    return out


def test_enumeration_is_bounded_deterministic_and_proposes_triples(cli, tmp_path, samples):
    first, second = _compose_twice_apart(cli, tmp_path, samples)
    assert first == second  # same rows, ids and verdicts in two separate stores
    asked: Counter[tuple[str, int]] = Counter()
    confirmed: Counter[tuple[str, int]] = Counter()
    for _id, ids, pattern, status, _reason in first:
        key = (pattern, len(json.loads(ids)))  # the offline filter never re-tags
        asked[key] += 1
        confirmed[key] += status == "confirmed"
    # The default mix: 4 x per_pattern accepted compositions shared among the patterns by
    # their counts among the world's proposed clause sets (largest remainder).
    per_pattern = Options().copal.per_pattern
    clauses = [{**dict(r), "policy_ids": json.loads(r["policy_ids"])} for r in query_rows(
        tmp_path / "a.db", "SELECT id, policy_ids, effect, trigger, scope FROM clauses")]
    pool = {p.value: n for p, n in pattern_pool(proposals(clauses)).items()}
    wanted = hamilton(4 * per_pattern, pool)
    for (pattern, size), n in asked.items():
        assert n <= ask_cap(wanted[pattern], size), (pattern, size)
        assert confirmed[(pattern, size)] <= quota(wanted[pattern], size), (pattern, size)
    assert sum(n for (_p, size), n in confirmed.items() if size == 3) > 0
    assert sum(n for (_p, size), n in confirmed.items() if size == 2) > 0


def _one_policy_gate(tmp_path: Path) -> tuple[Path, Path]:
    """A world of one policy, "You may share the order status once the caller is verified",
    grounded (as the paper grounds it) into a PERMIT and a REQUIRE_GATE clause of that policy:
    its only anchor is inside one policy."""
    world = GROCERY.read_text(encoding="utf-8").split("policies:")[0] + (
        "policies:\n  - id: P1\n    kind: allow\n    text: You may share the order status "
        "once the caller is verified.\n")
    path = tmp_path / "gate.yaml"
    path.write_text(world, encoding="utf-8")
    common = {"type": "clause", "world_id": "fresh-basket", "policy_ids": ["P1"],
              "trigger": "a caller asks about the status of their order", "confidence": 0.9}
    clauses = tmp_path / "gate.jsonl"
    clauses.write_text("\n".join(json.dumps(c) for c in (
        {**common, "id": "fresh-basket:C1", "scope": "the order status", "effect": "PERMIT",
         "source_span": "You may share the order status"},
        {**common, "id": "fresh-basket:C2", "scope": "verify the caller before the order status",
         "effect": "REQUIRE_GATE", "source_span": "once the caller is verified"},
    )) + "\n", encoding="utf-8")
    return path, clauses


def test_an_anchor_inside_one_policy_composes(cli, initialised, tmp_path):
    world, clauses = _one_policy_gate(tmp_path)
    assert cli("import", str(world), str(clauses)).exit_code == 0
    result = cli("run", "compose", *GEN)
    assert result.exit_code == 0, result.output
    rows = query_rows(initialised, "SELECT clause_ids, pattern, status FROM compositions")
    assert [(sorted(json.loads(r["clause_ids"])), r["pattern"], r["status"]) for r in rows] \
        == [(["fresh-basket:C1", "fresh-basket:C2"], "prerequisite_gating", "confirmed")]


def test_a_second_compose_run_asks_nothing(cli, initialised):
    cli("import", str(GROCERY))
    cli("run", "ground", "compose", *GEN)
    before = {r["id"] for r in query_rows(initialised, "SELECT id FROM runs")}
    assert cli("run", "compose", *GEN).exit_code == 0
    [again] = [json.loads(r["manifest"]) for r in query_rows(initialised, "SELECT * FROM runs")
               if r["id"] not in before]
    assert again["progress"]["total"] == 0


# ---------------------------------------------------------------- re-tags


CAND = Candidate(("C1", "C2"), Pattern.SCOPE_RESTRICTION, ("C1", "C2"))


def test_a_retag_is_stored_with_the_models_pattern_and_recorded():
    taken: set = set()
    out = CompositionOut(accept=True, pattern=Pattern.SELECTIVE_DISCLOSURE, reason="fields")
    row = decide("w", CAND, out, taken)
    assert row["id"] == composition_id("w", ("C1", "C2"), "scope_restriction")
    assert (row["pattern"], row["status"]) == ("selective_disclosure", "confirmed")
    assert parse_retag(row["reason"]) == ("scope_restriction", "selective_disclosure")
    assert row["reason"].endswith("fields")
    # The same clauses proposed as selective_disclosure and accepted: a duplicate, rejected.
    other = Candidate(("C1", "C2"), Pattern.SELECTIVE_DISCLOSURE, ("C1", "C2"))
    dup = decide("w", other, CompositionOut(accept=True, reason="ok"), taken)
    assert dup["status"] == "rejected" and "duplicate" in dup["reason"]
    assert parse_retag(dup["reason"]) is None


def test_without_a_retag_the_proposed_pattern_stays_and_rejections_keep_it():
    plain = decide("w", CAND, CompositionOut(accept=True, pattern=None, reason="ok"), set())
    assert (plain["pattern"], plain["status"], parse_retag(plain["reason"])) == \
        ("scope_restriction", "confirmed", None)
    no = decide("w", CAND, CompositionOut(accept=False, reason="two scenarios"), set())
    assert (no["pattern"], no["status"], no["reason"]) == ("scope_restriction", "rejected",
                                                           "two scenarios")


@pytest.fixture
def two_policy_world(tmp_path: Path) -> Path:
    world = GROCERY.read_text(encoding="utf-8").split("policies:")[0] + (
        "policies:\n"
        "  - id: P1\n    kind: deny\n    text: Don't give personal medical advice.\n"
        "  - id: P2\n    kind: allow\n    text: Describe product nutrition when asked.\n")
    path = tmp_path / "two.yaml"
    path.write_text(world, encoding="utf-8")
    return path


def test_a_model_retag_through_the_stage_is_stored_as_answered(cli, initialised, tmp_path,
                                                             two_policy_world, monkeypatch):
    assert cli("import", str(two_policy_world)).exit_code == 0
    assert cli("run", "ground", *GEN).exit_code == 0
    stub = Stub()
    # The one candidate (PERMIT nutrition x PROHIBIT medical advice, proposed as
    # scope_restriction) is answered with another pattern.
    stub.once["COPAL-TASK: composition"] = [("raw", json.dumps(
        {"accept": True, "pattern": "selective_disclosure", "reason": "stub re-tag"}))]
    monkeypatch.setenv("COPAL_TEST_KEY", "sk-test")
    with serve(stub) as url:
        models = tmp_path / "models.yaml"
        models.write_text(f"stub-gen:\n  model: openai/stub-gen\n  api_base: {url}\n"
                          "  api_key_env: COPAL_TEST_KEY\n  timeout: 5\n  max_retries: 1\n",
                          encoding="utf-8")
        opts = Options(generator="stub-gen", models_file=models, backoff_base=0.01)
        run_stages(initialised, ["compose"], opts)
        assert stub.calls == 1
        [row] = query_rows(initialised, "SELECT * FROM compositions")
        ids = json.loads(row["clause_ids"])
        assert sorted(ids) == sorted([_clause_of(initialised, "P1"),
                                      _clause_of(initialised, "P2")])
        assert (row["pattern"], row["status"]) == ("selective_disclosure", "confirmed")
        assert row["id"] == composition_id("fresh-basket", ids, "scope_restriction")
        assert parse_retag(row["reason"]) == ("scope_restriction", "selective_disclosure")
        run_stages(initialised, ["compose"], opts)
        assert stub.calls == 1  # decided: never asked again
