"""Construction ablations at the matched budget and screened projections, through the CLI on
one sample world (offline models), plus the baseline selection rule on hand-made candidates.

The suite is built once (ground .. select and ablate, budget 12 as in the method's ablation);
each test works on its own copy, made with SQLite's backup so the call cache holds no
projection calls unless the test makes them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.selection import greedy_select
from copal_tui.pipeline.ablate import baseline_candidates
from store.pipeline.rows import ItemRow
from tests.db_support import copy_db, query_rows

WORLD = "skyline-air"
BUDGET = 12
GEN = ["--generator", "offline/heuristic"]
BOT = "offline/keyword-guard"
BASELINES = ("raw_policy", "clause_only", "no_facet")


def _run(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return result.stdout


def _selected(db: Path, method: str) -> list[str]:
    return [r["id"] for r in query_rows(db, "SELECT id FROM items WHERE method = ? AND selected = "
                                            "1 AND parent_item_id IS NULL ORDER BY id", (method,))]


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    from copal_tui.resources import sample_worlds_dir

    db = tmp_path_factory.mktemp("ablate") / "suite.db"
    _run(db, "init")
    _run(db, "import", str(sample_worlds_dir() / "skyline_air.yaml"))
    _run(db, "run", "ground", "compose", "generate", "select", "ablate", "--world", WORLD,
         "--budget", str(BUDGET), *GEN)
    return db


@pytest.fixture(scope="module")
def judged(suite, tmp_path_factory) -> Path:
    db = copy_db(suite, tmp_path_factory.mktemp("judged") / "judged.db")
    _run(db, "run", "respond", "judge", "--world", WORLD, "--model", BOT, "--judge",
         "offline/judge")
    return db


def test_every_method_reaches_the_matched_budget_and_has_a_figure(judged):
    copal = len(_selected(judged, "copal"))
    assert copal == BUDGET
    for method in BASELINES:
        assert len(_selected(judged, method)) == copal, method
    doc = json.loads(_run(judged, "report", "--json"))
    rows = {r["method"]: r for r in doc["ablation"]}
    for method in (*BASELINES, "copal"):
        row = rows[method]
        assert row["selected_items"] == copal, method
        # One bot answered every selected item once.
        assert row["by_model"][BOT]["n"] == copal, method
        assert row["by_model"][BOT]["error_rate"] is not None, method
    assert not [e for e in doc["exclusions"] if e["section"] == "ablation"]


def test_raw_policy_items_keep_their_policy_ids(suite):
    policies = {r["id"] for r in query_rows(suite, "SELECT id FROM policies WHERE world_id = ?",
                                            (WORLD,))}
    clause_policies = [set(json.loads(r["policy_ids"])) for r in query_rows(
        suite, "SELECT policy_ids FROM clauses WHERE world_id = ?", (WORLD,))]
    raw = query_rows(suite, "SELECT * FROM items WHERE method = 'raw_policy'")
    assert len(raw) == 3 * BUDGET  # the candidate pool: three per final item
    for item in raw:
        planned = json.loads(item["screening"])["planned"]["policy_ids"]
        assert len(planned) >= 2 and set(planned) <= policies
        # The planner saw policies, not clauses: the contract cites none.
        contract = json.loads(item["required"]) + json.loads(item["forbidden"])
        assert all(c["clause_id"] is None for c in contract)
        if item["selected"]:
            # Screened against the clauses behind those policies, at least two of them.
            behind = [c for c in clause_policies if c & set(planned)]
            assert len(behind) >= 2
            assert json.loads(item["screening"])["passed"] is True


def test_baseline_selection_ignores_the_mapping(suite, tmp_path):
    db = copy_db(suite, tmp_path / "remapped.db")
    before = {m: _selected(db, m) for m in BASELINES}
    assert all(len(ids) == BUDGET for ids in before.values())
    conn = sqlite3.connect(db)
    # Pile every selected item into one pattern x facet cell and spread the others over other
    # cells: a rule that covered the grid would now pick differently.
    cells = [("scope_restriction", "over_refusal"), ("selective_disclosure", "all_withholding"),
             ("prerequisite_gating", "pre_gate_leakage"), ("workflow_transfer", "wrong_route")]
    for method in BASELINES:
        conn.execute("UPDATE items SET pattern = 'scope_restriction', facet = "
                     "'boundary_overreach' WHERE method = ? AND selected = 1", (method,))
        others = [r[0] for r in conn.execute("SELECT id FROM items WHERE method = ? AND "
                                             "selected = 0 ORDER BY id", (method,))]
        for n, iid in enumerate(others):
            conn.execute("UPDATE items SET pattern = ?, facet = ? WHERE id = ?",
                         (*cells[n % len(cells)], iid))
    conn.commit()
    conn.close()
    _run(db, "run", "ablate", "--world", WORLD, *GEN)
    assert {m: _selected(db, m) for m in BASELINES} == before


def _cand(iid: str, query: str, confidence: float, naturalness: float, *, passed: bool = True,
          comp: str | None = None, pattern: str | None = None) -> ItemRow:
    return ItemRow(id=iid, world_id="w", composition_id=comp, pattern=pattern, facet=None,
                   query=query, required=(), forbidden=(), method="no_facet",
                   parent_item_id=None, selected=0, trap=None,
                   screening={"passed": passed, "confidence": confidence,
                              "naturalness": naturalness},
                   run_id="r", created_at="2026-01-01T00:00:00Z", gate=None, route=None)


def test_baseline_selection_rule_by_hand():
    items = [
        _cand("a", "short query about bags", 0.9, 0.8, comp="K1"),
        _cand("b", "a longer query about refunds and the fare rules", 0.9, 0.9, comp="K1"),
        _cand("c", "a question about seats and upgrades", 0.5, 0.5, comp="K2"),
        _cand("d", "a question about pets", 1.0, 1.0, passed=False, comp="K3"),
        _cand("e", "a question about lounges", 0.9, 0.8, comp="K1"),
    ]
    # Screening first: d failed. Then b (same confidence as a and e, more natural); then the
    # other composition (c) before a second K1 item; then a before e (shorter query).
    assert greedy_select(baseline_candidates(items), 3) == ["b", "c", "a"]
    assert greedy_select(baseline_candidates(items), 10) == ["b", "c", "a", "e"]
    # A mapping on the items changes nothing.
    mapped = [replace(i, pattern="workflow_transfer", facet="wrong_route") if i.id == "c"
              else i for i in items]
    assert baseline_candidates(mapped) == baseline_candidates(items)


def _leaky(original: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[..., Any]:
    """A projection writer that, for licensing clauses, leaves the first other clause in:
    its trigger and its scope are written into the query."""

    def handler(inp: dict[str, Any]) -> dict[str, Any]:
        out = original(inp)
        other = inp["neutralise"][0]
        if inp["keep"]["effect"] in ("PERMIT", "DISCLOSE"):
            out["query"] += (f" Also, {other['trigger']}: what about {other['scope']}?")
        return out

    return handler


def test_projection_screening_rejects_and_the_contrast_drops_the_parent(suite, tmp_path,
                                                                        monkeypatch):
    from copal_tui.offline import engine

    db = copy_db(suite, tmp_path / "projected.db")
    monkeypatch.setitem(engine.HANDLERS, "projection",
                        _leaky(engine.HANDLERS["projection"]))
    _run(db, "run", "project", "--world", WORLD, *GEN)
    projections = query_rows(db, "SELECT * FROM items WHERE method = 'projection'")
    verdicts = {p["id"]: json.loads(p["screening"]) for p in projections}
    rejected = {i for i, v in verdicts.items() if v["passed"] is False}
    assert rejected and len(rejected) < len(projections)
    leaked = [i for i in rejected if "activates_other_clause" in verdicts[i]["reasons"]]
    assert leaked
    for iid in leaked:
        v = verdicts[iid]
        assert v["still_active"] and set(v["still_active"]) <= set(v["neutralised"])
        assert v["kept_clause"] not in v["still_active"]
    # Every selected composed item has one stored projection per clause of its composition.
    for item in query_rows(db, "SELECT i.id, c.clause_ids FROM items i JOIN compositions c ON "
                               "c.id = i.composition_id WHERE i.method = 'copal' "
                               "AND i.selected = 1"):
        n = len(query_rows(db, "SELECT id FROM items WHERE parent_item_id = ?", (item["id"],)))
        assert n == len(json.loads(item["clause_ids"]))

    _run(db, "run", "respond", "judge", "--world", WORLD, "--model", BOT, "--judge",
         "offline/judge")
    answered = {r["item_id"] for r in query_rows(db, "SELECT item_id FROM responses")}
    assert not rejected & answered
    assert set(verdicts) - rejected <= answered
    parents = {r["parent_item_id"] for r in query_rows(
        db, "SELECT parent_item_id FROM items WHERE method = 'projection' AND "
            "json_extract(screening, '$.passed') = 0")}
    doc = json.loads(_run(db, "report", "--json"))
    row = next(r for r in doc["paired_contrast"] if r["model"] == BOT)
    assert row["excluded_rejected_projections"] == len(parents)
    assert row["composed_items"] == BUDGET
    assert row["n"] == BUDGET - len(parents)
    assert row["excluded_unanswered"] == row["excluded_unjudged"] == 0
    # Paired items' projections only: every accepted projection of a kept parent.
    kept = [p for p in projections if p["parent_item_id"] not in parents]
    assert row["n_projections"] == len(kept)
    ex = [e for e in doc["exclusions"] if e["section"] == "paired_contrast"]
    assert [e["count"] for e in ex if "rejected" in e["reason"]] == [len(parents)]


def test_a_short_pool_is_reported_not_silently_under_filled(suite, tmp_path):
    db = copy_db(suite, tmp_path / "short.db")
    keep = [r["id"] for r in query_rows(db, "SELECT id FROM items WHERE method = 'raw_policy' "
                                            "AND json_extract(screening, '$.passed') = 1 "
                                            "ORDER BY id")][:5]
    conn = sqlite3.connect(db)
    # Only five raw-policy candidates survive screening.
    conn.execute("UPDATE items SET screening = json_set(screening, '$.passed', json('false')) "
                 f"WHERE method = 'raw_policy' AND id NOT IN ({','.join('?' * len(keep))})",
                 keep)
    conn.commit()
    conn.close()
    # ablate matches the selected suite's size (--budget is select's, refused here).
    result = CliRunner().invoke(main, ["--db", str(db), "run", "ablate", "--world", WORLD,
                                       *GEN], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"raw_policy in {WORLD}: 5 of {BUDGET}" in result.output
    assert _selected(db, "raw_policy") == keep
    manifest = json.loads(query_rows(db, "SELECT manifest FROM runs WHERE stage = 'ablate' "
                                         "ORDER BY started_at DESC LIMIT 1")[0]["manifest"])
    assert manifest["counts"]["short_raw_policy"] == BUDGET - 5
    assert "short_clause_only" not in manifest["counts"]
    doc = json.loads(_run(db, "report", "--json"))
    short = [e for e in doc["exclusions"] if e["section"] == "ablation"]
    assert [(e["what"], e["count"]) for e in short] == [("selected raw_policy items",
                                                         BUDGET - 5)]
