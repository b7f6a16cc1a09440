"""The COMPASS sections of `copal report` (PAS, failure modes, the contrast with composed
testing, the judge against human labels) through the public CLI, on a store built with
`store.artifacts.compass` inserts on top of the composed metrics fixture, against values worked out by
hand in the comments.

The suite: world w1 (which also has the composed fixture's items, judged by J1 and J2) and a
COMPASS-only world `org`. Target A (base) is judged by J1 on everything and by J2 on the four
allowed-base queries of w1; A (pre-filter) once; B (base) in org only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.artifacts import compass
from store.db import connect, write
from tests.test_metrics_fixture import build_fixture, fixture_records

# query id -> (world, query type, J1's (refused, compliant, aligned), J1's failure mode)
J1 = {
    "ab1": ("w1", "allowed_base", (0, 1, 1), None),
    "ab2": ("w1", "allowed_base", (0, 1, 1), None),
    "ab3": ("w1", "allowed_base", (0, 1, 1), None),
    "ab4": ("w1", "allowed_base", (1, 1, 0), None),
    "ae1": ("w1", "allowed_edge", (0, 1, 1), None),
    "ae2": ("w1", "allowed_edge", (1, 1, 0), None),
    "db1": ("w1", "denied_base", (0, 1, 0), None),
    "db2": ("w1", "denied_base", (0, 0, 0), None),
    "de1": ("w1", "denied_edge", (1, 1, 1), None),
    "de2": ("w1", "denied_edge", (0, 0, 0), "direct_violation"),
    "de3": ("w1", "denied_edge", (0, 0, 0), "direct_violation"),
    "de4": ("w1", "denied_edge", (1, 0, 0), "refusal_answer_hybrid"),
    "de5": ("w1", "denied_edge", (0, 0, 0), None),
    "oa1": ("org", "allowed_base", (0, 1, 1), None),
    "oa2": ("org", "allowed_base", (0, 1, 1), None),
    "ode1": ("org", "denied_edge", (0, 0, 0), "direct_violation"),
}
# Current labels: response -> {annotator: (refused, compliant)}.
LABELS = {
    "A:ab1": {"ana": (0, 1), "ben": (0, 1)},
    "A:ab4": {"ana": (1, 1), "ben": (0, 1)},  # refused and aligned tied; compliant 1
    "A:db1": {"ana": (1, 1), "ben": (1, 1)},
    "A:de1": {"ana": (1, 1)},                 # ben's label on it is undone below
    "A:de2": {"ana": (0, 0), "ben": (0, 0), "cat": (1, 1)},
}


def _query(db, qid, world, qtype, status="kept"):
    compass.insert_query(db, {"id": qid, "world_id": world, "policy_id": "P",
                                  "query_type": qtype, "text": f"query {qid}",
                                  "strategy": "educational_context" if qtype == "denied_edge"
                                  else None, "status": status})


def _answer(db, qid, model="A", variant="base", **kw):
    rid = f"{model}:{qid}" if variant == "base" else f"{model}/{variant}:{qid}"
    compass.insert_response(db, {"id": rid, "query_id": qid, "model": model,
                                     "variant": variant, "text": kw.pop("text", "answer"), **kw})
    return rid


def _judge(db, rid, judge, verdict, mode=None, failure=None):
    refused, compliant, aligned = verdict if verdict else (None, None, None)
    compass.insert_judgment(db, {"id": f"{judge}/{rid}", "response_id": rid, "judge": judge,
                                     "refused": refused, "compliant": compliant,
                                     "aligned": aligned, "failure_mode": mode,
                                     "failure": failure})


def build_compass(tmp_path: Path, compass_judge: str = "J1",
                  records: list[dict] | None = None) -> Path:
    path = build_fixture(tmp_path, records)
    db = connect(path)
    with write(db):
        db.execute("INSERT INTO worlds (id, name, industry, use_case, risk_tier, context, "
                   "created_at) VALUES ('org', 'Org', 'x', 'y', 'low', 'c', 'now')")
        for qid, (world, qtype, verdict, mode) in J1.items():
            _query(db, qid, world, qtype)
            _judge(db, _answer(db, qid), compass_judge, verdict, mode)
        for qid in ("ab1", "ab2", "ab3", "ab4"):
            _judge(db, f"A:{qid}", "J2", (0, 1, 1))
        # J1's call failed on one denied-edge response; A's call failed on one query.
        _query(db, "de6", "w1", "denied_edge")
        _judge(db, _answer(db, "de6"), compass_judge, None, failure="timeout")
        _query(db, "ae3", "w1", "allowed_edge")
        _answer(db, "ae3", text=None, failure="HTTP 500")
        # Judged, but verification rejected the query afterwards.
        _query(db, "rq1", "w1", "allowed_base", status="rejected")
        _judge(db, _answer(db, "rq1"), compass_judge, (0, 1, 1))
        # Other variant and other model: never pooled with A (base).
        _judge(db, _answer(db, "ab1", variant="pre-filter", prefilter="DENY"),
               compass_judge, (1, 1, 0))
        _query(db, "ob1", "org", "denied_base")
        _judge(db, _answer(db, "ob1", model="B"), compass_judge, (1, 1, 1))
        for rid, by_annotator in LABELS.items():
            for annotator, (refused, compliant) in by_annotator.items():
                _label(db, rid, annotator, "label", refused, compliant)
        _label(db, "A:de1", "ben", "label", 0, 0)
        _label(db, "A:de1", "ben", "undo", None, None)
    db.close()
    return path


def _label(db, rid, annotator, action, refused, compliant):
    # Straight into the annotation log, as a label of the COMPASS payload (an undo has none).
    payload = None if action != "label" else json.dumps(
        {"refused": bool(refused), "compliant": bool(compliant), "failure_mode": None,
         "note": None})
    db.execute("INSERT INTO annotations (suite, subject, annotator, action, payload, "
               "created_at) VALUES ('compass', ?, ?, ?, ?, 'now')",
               (rid, annotator, action, payload))


@pytest.fixture
def compass_db(tmp_path: Path) -> Path:
    return build_compass(tmp_path)


def _report(cli, db: Path, *args: str) -> dict:
    result = cli("report", "--json", "--bootstrap", "0", *args, db=db)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _pas(doc, judge="J1", model="A", variant="base"):
    return {(r["world"], r["query_type"]): r for r in doc["pas"]
            if (r["judge"], r["model"], r["variant"]) == (judge, model, variant)}


def test_pas_rows_keys_arithmetic_and_wilson(cli, compass_db):
    doc = _report(cli, compass_db)
    for row in doc["pas"]:
        assert set(row) - {"pas_reason", "ci_low_reason", "ci_high_reason"} == {
            "judge", "model", "variant", "world", "query_type", "n", "aligned", "pas",
            "ci_low", "ci_high"}
    a = _pas(doc)
    # w1 allowed-base: ab1-ab3 aligned, ab4 refused -> 3 of 4 = 0.75. Wilson with
    # z = 1.9599640, z^2 = 3.8414588: centre (0.75 + z^2/8) / (1 + z^2/4)
    # = 1.2301824 / 1.9603647 = 0.6275273, half-width
    # z / 1.9603647 * sqrt(0.75*0.25/4 + z^2/64) = 0.3268854 -> [0.3006419, 0.9544127].
    ab = a[("w1", "allowed_base")]
    assert (ab["n"], ab["aligned"], ab["pas"]) == (4, 3, 0.75)
    assert ab["ci_low"] == pytest.approx(0.3006419, abs=1e-7)
    assert ab["ci_high"] == pytest.approx(0.9544127, abs=1e-7)
    # Per type in w1: allowed-edge 1/2, denied-base 0/2 (PAS 0, a real zero), denied-edge
    # 1/5 (de6's failed judgment is left out); all types 5/13.
    assert (a[("w1", "allowed_edge")]["n"], a[("w1", "allowed_edge")]["aligned"]) == (2, 1)
    assert (a[("w1", "denied_base")]["n"], a[("w1", "denied_base")]["pas"]) == (2, 0.0)
    assert (a[("w1", "denied_edge")]["n"], a[("w1", "denied_edge")]["aligned"]) == (5, 1)
    assert (a[("w1", "all")]["n"], a[("w1", "all")]["aligned"]) == (13, 5)
    # Pooled over worlds: allowed-base 3/4 + 2/2 = 5/6, denied-edge 1/5 + 0/1 = 1/6,
    # everything 5/13 + 2/3 = 7/16.
    assert (a[("all", "allowed_base")]["n"], a[("all", "allowed_base")]["aligned"]) == (6, 5)
    assert (a[("all", "denied_edge")]["n"], a[("all", "denied_edge")]["aligned"]) == (6, 1)
    assert (a[("all", "all")]["n"], a[("all", "all")]["aligned"]) == (16, 7)
    assert a[("all", "all")]["pas"] == pytest.approx(7 / 16)
    # Rows: 2 worlds + 'all', each with 4 types + 'all'.
    # Rows: each world, then 'all', each with the four types in order, then 'all'.
    assert list(a) == [(w, t) for w in ("org", "w1", "all") for t in (
        "allowed_base", "allowed_edge", "denied_base", "denied_edge", "all")]


def test_wilson_bounds_match_scipy(cli, compass_db):
    from scipy.stats import binomtest  # test-only dependency

    for row in _report(cli, compass_db)["pas"]:
        if row["n"]:
            ci = binomtest(row["aligned"], row["n"]).proportion_ci(method="wilson")
            assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high),
                                                                    abs=1e-9)


def test_n_zero_is_null_with_a_reason_never_zero(cli, compass_db):
    a = _pas(_report(cli, compass_db))
    empty = a[("org", "allowed_edge")]  # org has no allowed-edge queries
    assert empty["n"] == 0 and empty["pas"] is None and empty["ci_low"] is None
    assert empty["pas_reason"] == "no judged responses to queries of this type"


def test_judges_variants_and_models_are_never_pooled(cli, compass_db):
    doc = _report(cli, compass_db)
    j2 = _pas(doc, judge="J2")
    assert (j2[("w1", "allowed_base")]["n"], j2[("w1", "allowed_base")]["pas"]) == (4, 1.0)
    assert set(j2) == {(w, t) for w in ("w1", "all") for t in (
        "allowed_base", "allowed_edge", "denied_base", "denied_edge", "all")}
    pf = _pas(doc, variant="pre-filter")
    assert (pf[("w1", "allowed_base")]["n"], pf[("w1", "allowed_base")]["pas"]) == (1, 0.0)
    b = _pas(doc, model="B")
    assert set(w for w, _t in b) == {"org", "all"}
    assert (b[("org", "denied_base")]["n"], b[("org", "denied_base")]["pas"]) == (1, 1.0)
    # J1 on A (base) is unchanged by the other variant, model and judge.
    assert _pas(doc)[("w1", "allowed_base")]["n"] == 4


def test_failed_skipped_and_rejected_are_excluded_and_listed(cli, compass_db):
    doc = _report(cli, compass_db)
    ex = {(e["section"], e["what"], e["reason"]): e["count"] for e in doc["exclusions"]}
    assert ex[("pas", "COMPASS judgments by J1 of A (base)",
               "the judge call failed or gave no verdict")] == 1
    assert ex[("pas", "COMPASS judgments by J1 of A (base)",
               "the query was not kept by verification")] == 1
    assert ex[("pas", "COMPASS responses of A (base)",
               "the target model's call failed (no answer to judge)")] == 1
    # J2 judged 4 of A's 17 answered responses to kept queries (14 in w1, 3 in org).
    assert ex[("pas", "COMPASS responses of A (base) for J2",
               "not judged by this judge (skipped)")] == 13
    # J2 never judged A (pre-filter) or B: not counted as skipping them.
    assert not [k for k in ex if k[0] == "pas" and "for J2" in k[1] and "A (base)" not in k[1]]


def test_failure_modes_of_misaligned_denied_edge(cli, compass_db):
    rows = {(r["judge"], r["model"], r["variant"], r["world"]): r
            for r in _report(cli, compass_db)["pas_failure_modes"]}
    w1 = rows[("J1", "A", "base", "w1")]
    # de1 aligned; de2, de3 direct; de4 hybrid; de5 misaligned without a mode; de6 failed.
    assert {k: w1[k] for k in ("n_denied_edge", "n_misaligned", "direct_violation",
                               "refusal_answer_hybrid", "indirect_violation",
                               "unclassified")} == {
        "n_denied_edge": 5, "n_misaligned": 4, "direct_violation": 2,
        "refusal_answer_hybrid": 1, "indirect_violation": 0, "unclassified": 1}
    pooled = rows[("J1", "A", "base", "all")]
    assert (pooled["n_misaligned"], pooled["direct_violation"]) == (5, 3)  # + org's ode1
    assert ("J2", "A", "base", "w1") not in rows  # J2 judged no denied-edge response


def test_contrast_with_composed_error_same_judge(cli, compass_db):
    doc = _report(cli, compass_db)
    [row] = doc["pas_vs_composed"]  # w1 has both suites; org has no composed items
    assert (row["world"], row["model"]) == ("w1", "A")
    # Both J1 and J2 judged both sides; J1 is the report's primary, so J1 on both sides.
    assert (row["compass_judge"], row["composed_judge"], row["same_judge"]) == (
        "J1", "J1", True)
    # Single-policy: 5/13; allowed (ab1-4, ae1-2) 4/6; denied (db1-2, de1-5) 1/7.
    assert (row["n"], row["aligned"]) == (13, 5)
    assert (row["allowed_n"], row["allowed_pas"]) == (6, pytest.approx(4 / 6))
    assert (row["denied_n"], row["denied_pas"]) == (7, pytest.approx(1 / 7))
    # Composed (the fixture's J1 on A): 3 errors of 4, the Wilson interval worked out above.
    assert (row["composed_n"], row["composed_errors"], row["composed_error_rate"]) == (
        4, 3, 0.75)
    assert row["composed_ci_low"] == pytest.approx(0.3006419, abs=1e-7)
    ex = {(e["section"], e["what"]): e for e in doc["exclusions"]}
    # B answered composed items of w1 (J1, the primary, judged 4) but no COMPASS query there.
    assert ex[("pas_vs_composed", "composed judgments of B in w1 by J1")]["count"] == 4


def test_contrast_names_both_judges_when_none_judged_both_sides(cli, tmp_path):
    doc = _report(cli, build_compass(tmp_path, compass_judge="J9"))
    [row] = [r for r in doc["pas_vs_composed"] if r["model"] == "A"]
    # A's COMPASS responses in w1: J9 (13) and J2 (4); composed: J1 (primary), J2. J2 judged
    # both sides, so it is used on both.
    assert (row["compass_judge"], row["composed_judge"], row["same_judge"]) == (
        "J2", "J2", True)
    assert (row["n"], row["pas"], row["composed_n"], row["composed_errors"]) == (4, 1.0, 3, 2)


def test_contrast_counts_base_variant_composed_judgments_only(cli, tmp_path):
    # As above, plus a system-prompt variant of A on composed item I1 that J2 judged an
    # error: J2's composed side of A stays 3 and 2, and the contrast (base variants, as
    # COMPASS's side is) neither pairs the variant nor lists it as unpaired.
    records = fixture_records()
    records.append({"type": "response", "id": "A2:I1", "item_id": "I1", "model": "A",
                    "variant": "terse", "text": "another system prompt"})
    records.append({"type": "judgment", "id": "J2/A2:I1", "response_id": "A2:I1",
                    "judge": "J2", "mode": "contract", "observed": ["F1"]})
    doc = _report(cli, build_compass(tmp_path, compass_judge="J9", records=records))
    [row] = [r for r in doc["pas_vs_composed"] if r["model"] == "A"]
    assert (row["composed_judge"], row["composed_n"], row["composed_errors"]) == ("J2", 3, 2)
    assert not [e for e in doc["exclusions"] if "A#terse" in e["what"]
                and e["section"] == "pas_vs_composed"]


def test_contrast_different_judges(cli, tmp_path):
    path = build_compass(tmp_path, compass_judge="J9")
    db = connect(path)
    with write(db):
        db.execute("DELETE FROM compass_judgments WHERE judge = 'J2'")
    db.close()
    [row] = [r for r in _report(cli, path)["pas_vs_composed"] if r["model"] == "A"]
    assert (row["compass_judge"], row["composed_judge"], row["same_judge"]) == (
        "J9", "J1", False)


def test_judge_validity_against_human_majority(cli, compass_db):
    from sklearn.metrics import cohen_kappa_score  # test-only dependency

    doc = _report(cli, compass_db)
    v = {e["judge"]: e for e in doc["pas_judge_validity"]}
    j1 = v["J1"]
    # Majorities: ab1 (0,1,1), ab4 (tie, 1, tie), db1 (1,1,1), de1 (1,1,1: ben's label undone),
    # de2 (0,0,0: 2 of 3). J1 said ab1 (0,1,1), ab4 (1,1,0), db1 (0,1,0), de1 (1,1,1),
    # de2 (0,0,0).
    assert j1["n_responses"] == 5
    judge_refused, human_refused = [0, 0, 1, 0], [0, 1, 1, 0]  # ab1, db1, de1, de2
    assert j1["refused"]["n"] == 4 and j1["refused"]["agreement"] == 0.75
    # po = 3/4, pe = (1*2 + 3*2)/16 = 1/2 -> kappa = (3/4 - 1/2) / (1/2) = 0.5
    assert j1["refused"]["kappa"] == pytest.approx(0.5)
    assert j1["refused"]["kappa"] == pytest.approx(cohen_kappa_score(judge_refused,
                                                                     human_refused))
    assert (j1["compliant"]["n"], j1["compliant"]["agreement"]) == (5, 1.0)
    assert j1["compliant"]["kappa"] == pytest.approx(1.0)
    assert (j1["aligned"]["n"], j1["aligned"]["agreement"]) == (4, 0.75)
    assert j1["aligned"]["kappa"] == pytest.approx(
        cohen_kappa_score([1, 0, 1, 0], [1, 1, 1, 0]))
    # J2 judged ab1 and ab4 only: on refused only ab1 (no tie), one class on both sides.
    j2 = v["J2"]
    assert (j2["n_responses"], j2["refused"]["n"]) == (2, 1)
    assert j2["refused"]["kappa"] is None and "one class only" in j2["refused"]["kappa_reason"]
    ex = {(e["section"], e["what"], e["reason"]): e["count"] for e in doc["exclusions"]}
    assert ex[("pas_judge_validity", "labelled COMPASS responses",
               "annotators split evenly on refused (tie)")] == 1
    assert ex[("pas_judge_validity", "human-labelled COMPASS responses for J2",
               "the judge did not judge them (skipped or failed)")] == 3


def test_world_filter_restricts_compass_sections(cli, compass_db):
    doc = _report(cli, compass_db, "--world", "org")
    assert {r["world"] for r in doc["pas"]} == {"org", "all"}
    assert doc["pas_vs_composed"] == [] and doc["pas_judge_validity"] == []
    a = _pas(doc)
    assert a[("all", "all")]["n"] == a[("org", "all")]["n"] == 3


def _nulls_have_reasons(node):
    if isinstance(node, dict):
        for key, value in node.items():
            assert value is not None or f"{key}_reason" in node, key
            _nulls_have_reasons(value)
    elif isinstance(node, list):
        for value in node:
            _nulls_have_reasons(value)


def test_every_compass_null_has_a_reason(cli, compass_db):
    doc = _report(cli, compass_db)
    for key in ("pas", "pas_failure_modes", "pas_vs_composed", "pas_judge_validity"):
        _nulls_have_reasons(doc[key])


def test_store_without_a_suite_gives_the_report_it_always_gave(cli, tmp_path):
    doc = _report(cli, build_fixture(tmp_path))
    assert not [k for k in doc if k.startswith("pas")]
    md = cli("report", "--format", "md", "--bootstrap", "0", db=tmp_path / "fixture.db")
    assert "Policy Alignment" not in md.stdout
    terminal = cli("report", "--bootstrap", "0", db=tmp_path / "fixture.db")
    assert "Policy Alignment" not in terminal.stdout


def test_terminal_and_exports_show_the_compass_tables(cli, compass_db, tmp_path):
    terminal = cli("report", "--bootstrap", "0", db=compass_db).stdout
    assert "Policy Alignment Score, judge J1" in terminal
    assert "0.750 (3/4)" in terminal  # w1 allowed-base of A (base)
    assert "Failure modes of misaligned denied-edge" in terminal
    assert "beside the composed error rate" in terminal
    md = cli("report", "--format", "md", "--bootstrap", "0", db=compass_db).stdout
    assert "## PAS by world and query type" in md and "| A (base) |" in md
    out = tmp_path / "csv"
    assert cli("export", "--format", "csv", "--out", str(out), "--bootstrap", "0",
               db=compass_db).exit_code == 0
    names = {p.name for p in out.iterdir()}
    assert {"pas.csv", "pas_pivot.csv", "pas_failure_modes.csv", "pas_vs_composed.csv",
            "pas_judge_validity.csv"} <= names
    header, *rows = (out / "pas.csv").read_text().splitlines()
    assert header.startswith("judge,model,variant,world,query_type,n,aligned,pas,ci_low")
    empty = [r for r in rows if r.startswith("J1,A,base,org,allowed_edge,")]
    assert empty == ["J1,A,base,org,allowed_edge,0,0,,,,no judged responses to queries of "
                     "this type"]
    latex = cli("report", "--format", "latex", "--bootstrap", "0", db=compass_db).stdout
    assert "Single-policy PAS" in latex and "\\begin{longtable}" in latex
