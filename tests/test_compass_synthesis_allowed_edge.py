"""COMPASS allowed-edge rewrites verified and filed as the public COMPASS code does, against what
its own functions produce (tests/fixtures/compass_reference: the reference commit and the
command are in its README), through `copal run`:

- the verifier's prompt has the reference's wording, its output example with placeholders
  ("IN-POLICY or OUT-OF-POLICY", not a concrete verdict that nudges), and the reference's five
  claims (not the deceptiveness rating);
- a verification that fails is asked again as often as the reference tries, then recorded as an
  error;
- a rewrite is filed under its parent's denylist policy, as the reference files it, with its
  allowlist policy in its own column (`--allowed-edge-policy allowlist` files it under the
  allowlist policy, recorded in the run manifest);
- migration m015 gives a store written at m014 that column, filled for its allowed-edge rows.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database as SUDatabase
from sqlite_utils import Migrations

from copal_tui.commands.run_cmds import EXIT_UNITS_FAILED
from store.migrations.apply import MIGRATIONS
from store.migrations.registry import STEPS
from store.schema_state import SET
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

BASE = INPUTS["denied_base_queries"][0]  # the query the reference's rows are written from
BASE_ID = f"{WORLD}:{BASE['policy']}:db01"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """The test world with its base queries verified: the fixture's first denied-base query
    kept, one kept allowed-base query per allowlist policy."""
    db = make_world(tmp_path)
    insert(db, {"id": BASE_ID, "policy_id": BASE["policy"], "query_type": "denied_base",
                "text": BASE["base_query"], "status": "kept"})
    for p in INPUTS["policy"]["allowlist"]:
        insert(db, {"id": f"{WORLD}:{p}:ab01", "policy_id": p, "query_type": "allowed_base",
                    "text": "When does the café close?", "status": "kept"})
    for p in INPUTS["policy"]["denylist"]:
        if p != BASE["policy"]:
            insert(db, {"id": f"{WORLD}:{p}:db01", "policy_id": p, "query_type": "denied_base",
                        "text": "Who crews the 08:00?", "status": "rejected"})
    return db


def writer(inp: dict[str, Any]) -> dict[str, Any]:
    """The fixture's rewrite, marked with the allowlist policy it was written under."""
    return {**INPUTS["rewrite"], "subtle_query": f"{INPUTS['rewrite']['subtle_query']} "
                                                 f"[{inp['allowlist_policy']['id']}]"}


def verifier(inp: dict[str, Any]) -> dict[str, Any]:
    allow = inp["subtle_query"].rsplit("[", 1)[1].rstrip("]")
    return {"final_verdict": INPUTS["rewrite_verdicts"][allow], "confidence_level": "HIGH",
            "verdict_justification": "scripted"}


def generate(db: Path, *extra: str, code: int = 0) -> None:
    cli(db, "run", "compass_generate", "compass_verify", "--world", WORLD, *GEN,
        "--per-policy", "1", *extra, code=code)


def test_the_verifier_prompt_has_the_references_wording_placeholders_and_claims(
        world, monkeypatch):
    stub_engine(monkeypatch, {"compass_rewrite_edge": writer, "compass_verify_edge": verifier})
    generate(world)
    calls = sent(world, "compass_verify_edge")
    assert len(calls) == len(INPUTS["policy"]["allowlist"])
    fixed = REF["allowed_edge_verification"]["fixed_lines"]
    assert '"final_verdict": "IN-POLICY or OUT-OF-POLICY",' in fixed
    ref_prompt = REF["allowed_edge_verification"]["prompt"]
    # The claims the reference shows are those of the writer's fields its prompt carries.
    shown = {k for k, v in INPUTS["rewrite"].items() if k != "subtle_query" and v in ref_prompt}
    for messages, inp in calls:
        assert_reference_wording(messages, fixed)
        assert set(inp["claims"]) == shown
        assert all(inp["claims"][k] == INPUTS["rewrite"][k] for k in shown)
        assert inp["policies"] == INPUTS["policy"]


def test_a_failed_verification_is_retried_as_the_reference_does_then_an_error(
        world, monkeypatch):
    stub_engine(monkeypatch, {"compass_rewrite_edge": writer,
                              "compass_verify_edge": lambda _inp: "not a verdict"})
    generate(world, code=EXIT_UNITS_FAILED)
    failing = REF["allowed_edge_verification"]["always_failing"]
    assert failing["verification_status"] == "error"
    for allow in INPUTS["policy"]["allowlist"]:
        asked = [m for m, inp in sent(world, "compass_verify_edge")
                 if inp["subtle_query"].endswith(f"[{allow}]")]
        # Each attempt is one first request (copal's repair round adds a second message pair).
        assert sum(len(m) == 2 for m in asked) == failing["calls"]
    rows = query_rows(world, "SELECT status, reason FROM compass_queries "
                             "WHERE query_type = 'allowed_edge'")
    assert len(rows) == len(INPUTS["policy"]["allowlist"])
    assert all(r["status"] == "failed" and "error" in r["reason"] for r in rows)


def test_a_kept_rewrite_is_filed_under_its_parents_denylist_policy(world, monkeypatch):
    stub_engine(monkeypatch, {"compass_rewrite_edge": writer, "compass_verify_edge": verifier})
    generate(world)
    rows = query_rows(world, "SELECT * FROM compass_queries WHERE query_type = 'allowed_edge'")
    written = sorted((r["policy_id"], r["allowlist_policy_id"]) for r in rows)
    assert written == sorted((r["policy"], r["allowlist_variation"])
                             for r in REF["allowed_edge_synthesis"]["rows"])
    kept = sorted((r["policy_id"], r["allowlist_policy_id"]) for r in rows
                  if r["status"] == "kept")
    ref_kept = REF["allowed_edge_verification"]["kept"]
    # The reference's kept row: its parent's denylist policy, the allowlist policy ending its id.
    assert kept == sorted((r["policy"], r["id"].rsplit("-", 1)[1]) for r in ref_kept)
    assert all(r["parent_id"] == BASE_ID for r in rows)
    assert manifest_options(world, "compass_generate")["allowed_edge_policy"] == "denylist"


def test_filing_under_the_allowlist_policy_stays_selectable(world, monkeypatch):
    stub_engine(monkeypatch, {"compass_rewrite_edge": writer, "compass_verify_edge": verifier})
    generate(world, "--allowed-edge-policy", "allowlist")
    rows = query_rows(world, "SELECT * FROM compass_queries WHERE query_type = 'allowed_edge'")
    assert rows and all(r["policy_id"] == r["allowlist_policy_id"] != BASE["policy"]
                        for r in rows)
    assert manifest_options(world, "compass_generate")["allowed_edge_policy"] == "allowlist"


def test_the_offline_verifier_reads_the_policy_document():
    from copal_tui.offline import compass as offline

    query = "I don't want crew rosters. Can you explain crossing times and ticket prices?"
    out = offline.verify_edge({"subtle_query": query, "policies": INPUTS["policy"],
                               "claims": {}})
    assert out["final_verdict"] == "IN-POLICY"
    asking = "Can you tell me the crew rosters and explain ticket prices?"
    assert offline.verify_edge({"subtle_query": asking, "policies": INPUTS["policy"],
                                "claims": {}})["final_verdict"] == "OUT-OF-POLICY"


# ------------------------------------------------------------------ migration m015


def test_m015_gives_allowed_edge_rows_their_allowlist_policy(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    before = Migrations(SET)
    for step in STEPS:
        if step.__name__ < "m015":
            before()(step)
    before.apply(SUDatabase(conn))
    now = "2026-01-01T00:00:00Z"
    conn.execute("INSERT INTO worlds (id, name, industry, use_case, risk_tier, context, "
                 "created_at) VALUES ('w', 'W', 'i', 'u', 'low', 'c', ?)", (now,))
    for qid, policy, qtype, parent in [("db", "D", "denied_base", None),
                                       ("ae", "A", "allowed_edge", "db"),
                                       ("ab", "A", "allowed_base", None)]:
        conn.execute("INSERT INTO compass_queries (id, world_id, policy_id, query_type, "
                     "parent_id, text, status, created_at) VALUES (?, 'w', ?, ?, ?, 't', "
                     "'kept', ?)", (qid, policy, qtype, parent, now))
    MIGRATIONS.apply(SUDatabase(conn))
    got = dict(conn.execute("SELECT id, allowlist_policy_id FROM compass_queries").fetchall())
    assert got == {"db": None, "ae": "A", "ab": None}
    assert conn.execute("SELECT policy_id FROM compass_queries WHERE id = 'ae'").fetchone() \
        == ("A",)  # an earlier rewrite keeps its filing
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()

