"""The report's `controls` (error by active clauses, by query-length quartile, and on the
non-interacting controls) on a small store built through the public import, against values
worked out by hand in the comments.

The store: one world; compositions K2 (2 clauses), K3 (3), K4 (4); eight selected composed
items I1..I8 with queries of known length; two selected non-interacting controls X1 (2 clauses)
and X2 (3), one unselected control X3; target models A and B, the reference bot
offline/refuse-all; primary judge J1 (contract), a second judge J2 that must not be used.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.metrics.options import ReportOptions
from store.db import connect
from tests.test_metrics_fixture import build_fixture, report_json

W = "w1"
R1 = {"id": "R1", "text": "does the licensed part", "clause_id": "C1"}
F1 = {"id": "F1", "text": "does the restricted part", "clause_id": "C2"}
COMPOSITIONS = {"K2": ["C1", "C2"], "K3": ["C1", "C2", "C4"], "K4": ["C1", "C2", "C3", "C4"]}
# item -> (composition, query length in characters). I2 and I3 tie at 20 (id breaks the tie).
COMPOSED = {"I1": ("K2", 10), "I2": ("K2", 20), "I3": ("K3", 20), "I4": ("K3", 40),
            "I5": ("K4", 50), "I6": ("K2", 60), "I7": ("K3", 70), "I8": ("K2", 80)}
CONTROLS = {"X1": ["C1", "C5"], "X2": ["C3", "C5", "C1"], "X3": ["C1", "C5"]}
OK, MISS, LEAK = ["R1"], [], ["R1", "F1"]  # correct, R1 missing (error), F1 present (error)
J1 = {
    "A": {"I1": OK, "I2": MISS, "I3": OK, "I4": LEAK, "I5": MISS, "I6": OK, "I7": OK,
          "I8": LEAK, "X1": ["R1", "R2"], "X2": ["R1", "R2"], "X3": []},
    "B": {"I1": MISS, "I2": OK, "I3": OK, "I4": OK, "I5": OK, "I6": MISS, "I7": OK,
          "X1": ["R1", "R2"], "X2": ["R1", "R2", "R3"]},
    "offline/refuse-all": {"I1": MISS, "X1": []},
}
# J2 judges everything of A as wrong; it has fewer judgments, so J1 is primary.
J2 = {"A": {"I1": MISS, "X1": []}}


def records() -> list[dict]:
    recs: list[dict] = [{"type": "world", "id": W, "name": "W", "industry": "test",
                         "use_case": "test", "risk_tier": "low", "context": "A test world."}]
    effects = ["PERMIT", "PROHIBIT", "DISCLOSE", "WITHHOLD", "PERMIT"]
    for n, effect in enumerate(effects, 1):
        recs.append({"type": "policy", "id": f"P{n}", "world_id": W, "kind": "allow",
                     "text": f"policy {n}"})
        recs.append({"type": "clause", "id": f"C{n}", "world_id": W, "policy_ids": [f"P{n}"],
                     "trigger": "t", "scope": "s", "effect": effect, "source_span": "span"})
    for cid, ids in COMPOSITIONS.items():
        recs.append({"type": "composition", "id": cid, "world_id": W, "clause_ids": ids,
                     "pattern": "scope_restriction"})
    base = {"type": "item", "world_id": W, "parent_item_id": None, "facet": None}
    for iid, (comp, length) in COMPOSED.items():
        recs.append({**base, "id": iid, "composition_id": comp, "pattern": "scope_restriction",
                     "query": "q" * length, "required": [R1], "forbidden": [F1],
                     "method": "copal", "selected": True})
    for iid, clauses in CONTROLS.items():
        required = [{"id": f"R{k}", "text": f"gives part {k}", "clause_id": c}
                    for k, c in enumerate(clauses, 1)]
        recs.append({**base, "id": iid, "composition_id": None, "pattern": None,
                     "query": "control query", "required": required, "forbidden": [],
                     "method": "control", "selected": iid != "X3"})
    for model, marks in J1.items():
        for iid in marks:
            recs.append({"type": "response", "id": f"{model}:{iid}", "item_id": iid,
                         "model": model, "text": "answer"})
    for judge, table in (("J1", J1), ("J2", J2)):
        for model, marks in table.items():
            for iid, observed in marks.items():
                recs.append({"type": "judgment", "id": f"{judge}/{model}:{iid}",
                             "response_id": f"{model}:{iid}", "judge": judge,
                             "mode": "contract", "observed": observed})
    return recs


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    db = connect(build_fixture(tmp_path_factory.mktemp("controls"), records()))
    return report_json(db, ReportOptions(bootstrap=0))


def fig(node: dict) -> tuple:
    return node["n"], node["errors"]


def test_the_primary_judge_and_the_pool(report):
    c = report["controls"]
    assert c["judge"] == {"judge": "J1", "mode": "contract"}
    assert c["pooled_models"] == ["A", "B"]  # the reference bot is shown, never pooled


def test_error_by_active_clauses(report):
    by = report["controls"]["by_active_clauses"]
    # 2 clauses (I1, I2, I6, I8): A 1 ok, 2 err, 6 ok, 8 err -> 4, 2; B 1 err, 2 ok, 6 err
    # (I8 unanswered) -> 3, 2; pooled 7, 4.
    assert fig(by["pooled"]["2"]) == (7, 4)
    assert by["pooled"]["2"]["error_rate"] == pytest.approx(4 / 7)
    # Wilson 95% of 4/7 worked out by hand: 0.25046 .. 0.84178.
    assert by["pooled"]["2"]["ci_low"] == pytest.approx(0.250458, abs=1e-5)
    assert by["pooled"]["2"]["ci_high"] == pytest.approx(0.841780, abs=1e-5)
    # 3 clauses (I3, I4, I7): A 3 ok, 4 err, 7 ok; B all ok -> pooled 6, 1.
    assert fig(by["pooled"]["3"]) == (6, 1)
    # more (I5, 4 clauses): A err, B ok -> 2, 1.
    assert fig(by["pooled"]["more"]) == (2, 1)
    assert fig(by["by_model"]["A"]["2"]) == (4, 2) and fig(by["by_model"]["B"]["3"]) == (3, 0)
    bot = by["by_model"]["offline/refuse-all"]
    assert fig(bot["2"]) == (1, 1)
    # An empty group is undefined (NaN here, null in the JSON) with a reason, never 0.
    assert bot["3"]["n"] == 0 and math.isnan(bot["3"]["error_rate"])
    assert "3 active clauses" in bot["3"]["error_rate_reason"]
    assert by["unknown_active_clauses"] == 0


def test_error_by_query_length_quartile(report):
    q = report["controls"]["by_query_length"]
    assert q["unit"] == "characters" and q["items"] == 8
    rows = {r["quartile"]: r for r in q["quartiles"]}
    # Ranks by (length, id): I1 10, I2 20, I3 20, I4 40 | I5 50, I6 60, I7 70, I8 80;
    # two items per quartile: Q1 = I1, I2; Q2 = I3, I4; Q3 = I5, I6; Q4 = I7, I8.
    assert [(rows[k]["items"], rows[k]["min_length"], rows[k]["max_length"])
            for k in ("Q1", "Q2", "Q3", "Q4")] == [(2, 10, 20), (2, 20, 40), (2, 50, 60),
                                                  (2, 70, 80)]
    # Q1: A I1 ok, I2 err; B I1 err, I2 ok -> 4, 2. Q2: A I3 ok, I4 err; B ok, ok -> 4, 1.
    # Q3: A I5 err, I6 ok; B I5 ok, I6 err -> 4, 2. Q4: A I7 ok, I8 err; B I7 ok -> 3, 1.
    assert [fig(rows[k]) for k in ("Q1", "Q2", "Q3", "Q4")] == [(4, 2), (4, 1), (4, 2),
                                                                (3, 1)]
    a = {r["quartile"]: r for r in q["by_model"]["A"]}
    assert fig(a["Q4"]) == (2, 1)


def test_non_interacting_controls(report):
    ni = report["controls"]["non_interacting"]
    # X1 and X2 are selected (X3 is not); X1 names 2 clauses, X2 names 3.
    assert ni["items"] == 2
    assert ni["items_by_active_clauses"] == {"2": 1, "3": 1, "more": 0}
    # A: X1 ok, X2 R3 missing (err); B: both ok -> pooled 4, 1.
    assert fig(ni["pooled"]) == (4, 1) and ni["pooled"]["error_rate"] == pytest.approx(0.25)
    # Wilson 95% of 1/4 worked out by hand: 0.04559 .. 0.69936.
    assert ni["pooled"]["ci_low"] == pytest.approx(0.045587, abs=1e-5)
    assert ni["pooled"]["ci_high"] == pytest.approx(0.699358, abs=1e-5)
    assert fig(ni["by_model"]["offline/refuse-all"]) == (1, 1)
    # Composed over the same pool: A 4 of 8 (I2, I4, I5, I8), B 2 of 7 (I1, I6) -> 15, 6.
    assert fig(ni["composed_pooled"]) == (15, 6)


def test_controls_are_never_counted_in_the_suite_or_the_ablation(report):
    rows = {r["model"]: r for r in report["error_rates"]}
    assert fig(rows["A"]) == (8, 4) and fig(rows["B"]) == (7, 2)
    assert "control" not in {r["method"] for r in report["ablation"]}


def test_a_store_without_controls_reports_them_null_with_a_reason(tmp_path):
    recs = [r for r in records() if not str(r.get("id", "")).startswith("X")
            and not str(r.get("item_id", "")).startswith("X")
            and ":X" not in str(r.get("response_id", ""))]
    db = build_fixture(tmp_path, recs)
    result = CliRunner().invoke(main, ["--db", str(db), "report", "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    ni = json.loads(result.stdout)["controls"]["non_interacting"]
    assert ni["items"] == 0 and ni["pooled"]["n"] == 0
    assert ni["pooled"]["error_rate"] is None and ni["pooled"]["ci_low"] is None
    assert "no non-interacting control items" in ni["pooled"]["error_rate_reason"]
