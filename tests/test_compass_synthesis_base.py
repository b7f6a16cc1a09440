"""COMPASS base queries at the public COMPASS code's granularity, against what its own functions
produce (tests/fixtures/compass_reference: the reference commit and the command are in its
README), through `copal run`:

- one call per organisation covering every policy, with the reference's prompt wording, its
  count per policy and the same data (the organisation's context and its policy document); an
  answer leaving a policy out is refused as the reference's validation refuses it;
- the reference's base matcher sees the organisation's context and the policy document, and a
  query is kept or not as `apply_post_processing_logic` decides, a policy name the organisation
  does not have being no reason to reject it;
- copal's earlier writer (`--base-writer per-policy`) and matcher (`--matcher copal`) stay
  selectable, and the run manifest records every choice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from copal_tui import prompts
from copal_tui.commands.run_cmds import EXIT_UNITS_FAILED
from copal_tui.domain.outputs import TASK_OUTPUTS
from copal_tui.offline import engine
from store.artifacts import compass
from store.db import connect, write
from tests.db_support import query_rows
from tests.test_compass_pipeline import WORLD, cli, make_world

FIXTURES = Path(__file__).parent / "fixtures" / "compass_reference"
REF = json.loads((FIXTURES / "reference_outputs.json").read_text(encoding="utf-8"))
INPUTS = json.loads((FIXTURES / "inputs.json").read_text(encoding="utf-8"))
GEN = ("--generator", "offline/heuristic")


def sent(db: Path, task: str) -> list[tuple[list[dict[str, str]], dict[str, Any]]]:
    """Every request of `task` in the call log (cache hits and repair rounds included): its
    messages and input (the task's own message is the first user message)."""
    out = []
    for (request,) in query_rows(db, "SELECT request FROM llm_calls"):
        req = json.loads(request)
        if req["task"] == task:
            parsed = prompts.parse_trailer(req["messages"][1]["content"])
            assert parsed is not None
            out.append((req["messages"], parsed[1]))
    return out


def assert_reference_wording(messages: list[dict[str, str]], fixed: list[str]) -> None:
    """The reference template's fixed lines, each a whole line of what copal sends, in the
    reference's order (copal's own lines may come between them)."""
    lines = [ln.strip() for m in messages for ln in m["content"].splitlines()]
    at = 0
    for want in fixed:
        try:
            at = lines.index(want, at) + 1
        except ValueError:
            raise AssertionError(f"missing, or out of the reference's order: {want!r}") from None


def manifest_options(db: Path, stage: str) -> dict[str, Any]:
    rows = query_rows(db, "SELECT manifest FROM runs WHERE stage = ? ORDER BY started_at",
                      (stage,))
    return json.loads(rows[-1]["manifest"])["options"]["compass"]


def insert(db: Path, *queries: dict[str, Any]) -> None:
    conn = connect(db)
    with write(conn):
        for q in queries:
            compass.insert_query(conn, {"world_id": WORLD, **q})
    conn.conn.close()


def stub_engine(monkeypatch: pytest.MonkeyPatch, answers: dict[str, Any]) -> None:
    """The offline engine, except for the tasks in `answers`: a function of the task's input
    returning the answer (a dict, sent as JSON, or a text sent as it is), the repair round's
    answer included (the task's message is then the first user message, not the last)."""
    real = engine.answer

    def answer(name: str, messages: list) -> str:
        parsed = prompts.parse_trailer(messages[1]["content"]) if len(messages) > 1 else None
        if parsed and parsed[0] in answers:
            out = answers[parsed[0]](parsed[1])
            return out if isinstance(out, str) else json.dumps(out)
        return real(name, messages)

    monkeypatch.setattr(engine, "answer", answer)


# ------------------------------------------------------------------ one call per organisation


def test_base_queries_come_from_one_call_per_organisation_as_the_reference_asks(tmp_path):
    db = make_world(tmp_path)
    cli(db, "run", "compass_generate", "--world", WORLD, *GEN, "--per-policy", "3")
    [(messages, inp)] = sent(db, "compass_generate_org")
    assert not sent(db, "compass_generate_base")
    # The reference's data: the organisation's context and its whole policy document.
    assert inp["company_context"].strip() == INPUTS["context"].strip()
    assert inp["policy_document"] == INPUTS["policy"]
    assert inp["queries_per_policy"] == 3
    assert_reference_wording(messages, REF["base_synthesis"]["fixed_lines"])
    rows = query_rows(db, "SELECT policy_id, query_type, attributes FROM compass_queries "
                          "WHERE query_type IN ('allowed_base', 'denied_base')")
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        counts[r["policy_id"], r["query_type"]] = counts.get((r["policy_id"],
                                                              r["query_type"]), 0) + 1
        assert json.loads(r["attributes"])["writer"] == "organisation"
    assert counts == {("P1", "allowed_base"): 3, ("P2", "allowed_base"): 3,
                      ("P3", "denied_base"): 3, ("P4", "denied_base"): 3}
    assert manifest_options(db, "compass_generate")["base_writer"] == "organisation"


def test_the_count_per_policy_is_the_references_unless_asked(tmp_path):
    # The reference asks for exactly 10 per policy item: its template's own words.
    assert ("Generate exactly 10 distinct test queries for each policy item in both the "
            "allowlist and denylist categories. These queries should:"
            in REF["base_synthesis"]["fixed_lines"])
    db = make_world(tmp_path)
    cli(db, "run", "compass_generate", "--world", WORLD, *GEN)
    [(_messages, inp)] = sent(db, "compass_generate_org")
    assert inp["queries_per_policy"] == 10
    assert len(query_rows(db, "SELECT id FROM compass_queries WHERE policy_id = 'P1' "
                              "AND query_type = 'allowed_base'")) == 10


@pytest.mark.parametrize("case", sorted(REF["base_synthesis"]["valid"]))
def test_an_answer_is_checked_as_the_references_validation_checks_it(case):
    answer = {"allowlist_test_queries": {"P1": ["q"], "P2": ["q"]},
              "denylist_test_queries": {"P3": ["q"], "P4": ["q"]}}
    if case == "without P4":
        del answer["denylist_test_queries"]["P4"]
    elif case == "P2 empty":
        answer["allowlist_test_queries"]["P2"] = []
    context = {"allowlist": ["P1", "P2"], "denylist": ["P3", "P4"]}
    try:
        TASK_OUTPUTS["compass_generate_org"].model_validate(answer, context=context)
        valid = True
    except ValidationError:
        valid = False
    assert valid is REF["base_synthesis"]["valid"][case]


def test_an_answer_without_a_policy_writes_nothing_and_is_asked_again(tmp_path, monkeypatch):
    db = make_world(tmp_path)

    def without_p4(inp: dict[str, Any]) -> dict[str, Any]:
        return {"allowlist_test_queries": {p: ["A question?"] for p in
                                           inp["policy_document"]["allowlist"]},
                "denylist_test_queries": {"P3": ["Will it sail?"]}}

    stub_engine(monkeypatch, {"compass_generate_org": without_p4})
    cli(db, "run", "compass_generate", "--world", WORLD, *GEN, code=EXIT_UNITS_FAILED)
    assert not query_rows(db, "SELECT id FROM compass_queries")
    assert len(sent(db, "compass_generate_org")) == 2  # the answer and the repair round
    monkeypatch.undo()
    cli(db, "run", "compass_generate", "--world", WORLD, *GEN, "--per-policy", "1")
    assert len(query_rows(db, "SELECT id FROM compass_queries WHERE query_type LIKE "
                              "'%_base'")) == 4


def test_the_per_policy_writer_stays_selectable(tmp_path):
    db = make_world(tmp_path)
    cli(db, "run", "compass_generate", "--world", WORLD, *GEN, "--per-policy", "2",
        "--base-writer", "per-policy")
    assert not sent(db, "compass_generate_org")
    calls = sent(db, "compass_generate_base")
    assert sorted(inp["policy"]["id"] for _m, inp in calls) == ["P1", "P2", "P3", "P4"]
    assert all(len(inp["slots"]) == 2 for _m, inp in calls)
    assert manifest_options(db, "compass_generate")["base_writer"] == "per-policy"


# ------------------------------------------------------------------ the reference's matcher


BASE_CASES = {c["name"]: c for c in INPUTS["base_matcher_cases"]}


def test_the_base_matcher_sees_the_context_and_keeps_as_the_reference(tmp_path, monkeypatch):
    db = make_world(tmp_path)
    texts = {}
    for i, case in enumerate(INPUTS["base_matcher_cases"], 1):
        qtype = "allowed_base" if case["category_type"] == "in-policy" else "denied_base"
        texts[f"Query number {i}?"] = case
        insert(db, {"id": f"case:{i}", "policy_id": case["original_policy"],
                    "query_type": qtype, "text": f"Query number {i}?"})

    def matcher(inp: dict[str, Any]) -> dict[str, Any]:
        case = texts[inp["query"]]
        return {"query": inp["query"], "matching_policies": {
            key: [{"policy_name": n, "policy_description": "", "match_reason": "scripted"}
                  for n in case[key]] for key in ("allowlist_matches", "denylist_matches")}}

    stub_engine(monkeypatch, {"compass_verify_reference": matcher})
    cli(db, "run", "compass_verify", "--world", WORLD, *GEN)
    calls = sent(db, "compass_verify_reference")
    assert len(calls) == len(texts) and not sent(db, "compass_verify")
    for messages, inp in calls:
        assert inp["company_context"].strip() == INPUTS["context"].strip()
        assert inp["policy_document"] == INPUTS["policy"]
        assert_reference_wording(messages, REF["base_verification"]["fixed_lines"])
    got = {r["text"]: r for r in query_rows(db, "SELECT * FROM compass_queries")}
    want = {c["name"]: c["verification_result"] for c in REF["base_verification"]["cases"]}
    for text, case in texts.items():
        status = got[text]["status"]
        assert status == ("kept" if want[case["name"]] == "passed" else "rejected"), case
        assert "unknown" not in got[text]["reason"]
        named = case["allowlist_matches"] + case["denylist_matches"]
        assert json.loads(got[text]["matched"]) == list(dict.fromkeys(named))
    assert manifest_options(db, "compass_verify")["matcher"] == "reference"
