"""The responses behind a figure: `copal cases` on the hand-made store of test_metrics_fixture
(its cells are worked out by hand there), the export's `validity_cases` file against the
report's judge validity, the one confusion-matrix convention in the JSON, the tables and the
plots, and the reference rule the item screen shares with the report."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from copal_tui.metrics.options import ReportOptions
from copal_tui.services.report import build_document
from store.db import connect
from tests.test_metrics_fixture import build_fixture, fixture_records

# By hand, from test_metrics_fixture's marks and labels (error = positive; the arithmetic is in
# its test_reference_labels_ties_and_judge_validity): the reference is the adjudication (A:I3),
# else the majority; A:I4 is a 1-1 tie and counted nowhere. J1 in contract mode:
J1 = {"tp": ["A:I2", "A:I3"], "fp": ["B:I4"], "fn": ["B:I2"], "tn": ["A:I1", "B:I1", "B:I3"]}
# J2 judged four labelled responses only.
J2 = {"tp": ["A:I2"], "fp": ["A:I1"], "fn": ["A:I3"], "tn": ["B:I1"]}


@pytest.fixture
def fixture_db(tmp_path: Path) -> Path:
    return build_fixture(tmp_path)


def _ok(result: Any) -> Any:
    assert result.exit_code == 0, result.output
    return result


def _listed(cli: Any, db: Path, *args: str) -> list[dict[str, Any]]:
    out = _ok(cli("cases", "--format", "jsonl", *args, db=db)).stdout
    return [json.loads(line) for line in out.splitlines()]


def _validity(db: Path) -> dict[tuple[str, str], dict[str, Any]]:
    doc = build_document(connect(db), ReportOptions(bootstrap=0)).to_dict()
    return {(v["judge"], v["mode"]): v for v in doc["judge_validity"]}


@pytest.mark.parametrize(("judge", "cells"), [("J1", J1), ("J2", J2)])
def test_each_cell_lists_the_hand_worked_responses_and_the_reports_count(
        cli, fixture_db, judge, cells):
    validity = _validity(fixture_db)[(judge, "contract")]
    for cell, expected in cells.items():
        rows = _listed(cli, fixture_db, "--judge", judge, "--cell", cell)
        assert [r["response_id"] for r in rows] == expected, cell
        assert len(rows) == validity[cell], cell
        assert {r["cell"] for r in rows} == {cell}


def test_disagree_is_fp_and_fn_and_filters_narrow(cli, fixture_db):
    rows = _listed(cli, fixture_db, "--judge", "J1", "--disagree")
    assert sorted(r["response_id"] for r in rows) == sorted(J1["fp"] + J1["fn"])
    only_b = _listed(cli, fixture_db, "--judge", "J1", "--disagree", "--model", "B")
    assert sorted(r["response_id"] for r in only_b) == ["B:I2", "B:I4"]
    scope = _listed(cli, fixture_db, "--judge", "J1", "--cell", "tp", "--pattern",
                    "selective_disclosure")
    assert [r["response_id"] for r in scope] == ["A:I3"]
    facet = _listed(cli, fixture_db, "--judge", "J1", "--cell", "tn", "--facet",
                    "boundary_overreach")
    assert [r["response_id"] for r in facet] == ["A:I1", "B:I1"]
    # The default judge is the report's primary (J1 contract, most usable judgments).
    assert [r["response_id"] for r in _listed(cli, fixture_db, "--cell", "fp")] == J1["fp"]


def test_each_row_says_how_its_reference_was_formed(cli, fixture_db):
    rows = {r["response_id"]: r for r in _listed(cli, fixture_db, "--judge", "J1")}
    # A:I3: ana 0, ben 1 and the lead's decision 1.
    a3 = rows["A:I3"]
    assert (a3["reference"], a3["reference_source"], a3["adjudicator"]) == (1, "adjudicated",
                                                                            "lead")
    assert a3["annotators"] == [{"annotator": "ana", "error": 0},
                                {"annotator": "ben", "error": 1}]
    # A:I4: ana 1 (F1 present), ben 0: a tie, no reference, no cell.
    a4 = rows["A:I4"]
    assert (a4["reference"], a4["reference_source"], a4["cell"]) == (None, "tie", None)
    # Projections and ablation items nobody labelled are listed without a reference.
    assert rows["A:X1"]["reference_source"] == "none"
    sha = a3["content_sha256"]
    assert len(sha) == 1 and len(sha[0]) == 64


def test_csv_and_table_formats_and_bad_options(cli, fixture_db):
    text = _ok(cli("cases", "--judge", "J1", "--cell", "fp", "--format", "csv",
                   db=fixture_db)).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["response_id"], r["cell"], r["annotators"]) for r in rows] == [
        ("B:I4", "fp", "ben:0; cat:0")]
    table = _ok(cli("cases", "--judge", "J1", "--cell", "fn", db=fixture_db))
    assert "B:I2" in table.stdout and "1 response(s) of J1@contract" in table.stderr
    for args in (["--judge", "nobody"], ["--world", "nope"], ["--cell", "xx"]):
        result = cli("cases", *args, db=fixture_db)
        assert result.exit_code == 2, args
        assert "Traceback" not in result.stderr


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(("fmt", "name"), [("csv", "validity_cases.csv"),
                                           ("json", "validity_cases.jsonl"),
                                           ("md", "validity_cases.csv")])
def test_export_lists_every_counted_response_and_the_manifest_checksums_it(
        cli, fixture_db, tmp_path, fmt, name):
    out = tmp_path / fmt
    _ok(cli("export", "--format", fmt, "--out", f"{out}/", "--bootstrap", "0", db=fixture_db))
    path = out / name
    if name.endswith(".csv"):
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    else:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    validity = _validity(fixture_db)
    assert len(rows) == sum(v["n"] for v in validity.values())
    for (judge, mode), v in validity.items():
        mine = [r for r in rows if (r["judge"], r["mode"]) == (judge, mode)]
        assert len(mine) == v["n"]
        for cell in ("tp", "fp", "fn", "tn"):
            assert sum(r["cell"] == cell for r in mine) == v[cell], (judge, mode, cell)
        assert {r["reference_source"] for r in mine} <= {"adjudicated", "majority"}
    fp = [r["response_id"] for r in rows if r["judge"] == "J1" and r["mode"] == "contract"
          and r["cell"] == "fp"]
    assert fp == J1["fp"]
    listed = {f["path"]: f for f in json.loads((out / "manifest.json").read_text())["files"]}
    assert listed[name]["sha256"] == _sha(path)


def test_json_report_states_the_matrix_convention(cli, fixture_db):
    doc = json.loads(_ok(cli("report", "--json", "--bootstrap", "0", db=fixture_db)).stdout)
    j1 = next(v for v in doc["judge_validity"] if (v["judge"], v["mode"]) == ("J1", "contract"))
    cm = j1["confusion_matrix"]
    assert (cm["rows"], cm["columns"], cm["positive"]) == ("human reference", "judge", "error")
    assert cm["labels"] == ["no error", "error"]
    # Rows: reference no error (tn 3, fp 1), reference error (fn 1, tp 2), by hand above.
    assert cm["matrix"] == [[3, 1], [1, 2]]
    assert cm["cells"] == [["tn", "fp"], ["fn", "tp"]]


def test_tables_carry_the_matrix_in_the_same_layout(cli, fixture_db, tmp_path):
    out = tmp_path / "csv"
    _ok(cli("export", "--format", "csv", "--out", f"{out}/", "--bootstrap", "0", db=fixture_db))
    rows = list(csv.DictReader(io.StringIO((out / "confusion_matrix.csv").read_text())))
    j1 = [(r["human_reference"], r["judge_no_error"], r["judge_error"]) for r in rows
          if (r["judge"], r["mode"], r["pattern"]) == ("J1", "contract", "all")]
    assert j1 == [("no error", "3", "1"), ("error", "1", "2")]
    md = _ok(cli("report", "--format", "md", "--bootstrap", "0", db=fixture_db)).stdout
    assert "rows: human reference \u00b7 columns: judge \u00b7 positive: error" in md


def test_plot_rows_are_the_human_reference(fixture_db, monkeypatch):
    from copal_tui.export import plots

    figures: list[Any] = []
    monkeypatch.setattr(plots, "_save", lambda plt, fig, stem: figures.append(fig) or {})
    doc = build_document(connect(fixture_db), ReportOptions(bootstrap=0))
    [entry] = [v for v in doc.judge_validity if (v.judge, v.mode) == ("J1", "contract")]
    plt = plots._pyplot()
    plots.confusion(plt, entry)
    ax = figures[0].axes[0]
    assert ax.get_ylabel() == "human reference" and ax.get_xlabel() == "judge"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["no error", "error"]
    # Each cell's text sits at (x = judge class, y = reference class).
    at = {(round(t.get_position()[0]), round(t.get_position()[1])): t.get_text()
          for t in ax.texts}
    assert at == {(0, 0): "tn 3", (1, 0): "fp 1", (0, 1): "fn 1", (1, 1): "tp 2"}
    assert "rows: human reference" in ax.get_title()
    plt.close("all")


def test_the_item_screen_uses_the_reports_reference_rule():
    from copal_tui.tui.widgets.marks_table import Source, reference

    def human(name: str, error: int) -> Source:
        return Source(name, "human", None, error, None)

    # Two of three annotators say error: the majority decides (the report counts it).
    assert reference([human("a", 1), human("b", 1), human("c", 0)]) == (1, "annotators")
    assert reference([human("a", 1), human("b", 0)]) == (None, "none")  # a tie
    decided = Source("adj.", "adjudication", None, 0, None)
    assert reference([human("a", 1), human("b", 1), decided]) == (0, "adjudication")


def test_a_world_filter_keeps_the_lists_equal_to_the_report(cli, tmp_path):
    records = fixture_records()
    records += [
        {"type": "world", "id": "w2", "name": "W2", "industry": "t", "use_case": "t",
         "risk_tier": "low", "context": "Another world."},
        {"type": "item", "id": "Z1", "world_id": "w2", "composition_id": None,
         "pattern": "scope_restriction", "facet": "over_refusal", "query": "q",
         "required": [{"id": "R1", "text": "r"}], "forbidden": [], "method": "copal",
         "parent_item_id": None, "selected": True},
        {"type": "response", "id": "A:Z1", "item_id": "Z1", "model": "A", "text": "t"},
        {"type": "judgment", "id": "J1/A:Z1", "response_id": "A:Z1", "judge": "J1",
         "mode": "contract", "observed": []},
        {"type": "label", "response_id": "A:Z1", "annotator": "dan", "observed": ["R1"]},
    ]
    db = build_fixture(tmp_path, records)
    # A:Z1: the judge says R1 missing (error), dan says present (no error): an fp in w2 only.
    # Rows come in item order (I4 before Z1).
    assert [r["response_id"] for r in _listed(cli, db, "--judge", "J1", "--cell", "fp")] == [
        "B:I4", "A:Z1"]
    only = _listed(cli, db, "--judge", "J1", "--cell", "fp", "--world", "w1")
    assert [r["response_id"] for r in only] == J1["fp"]


def test_every_dashboard_cell_lists_as_many_responses_as_it_counts(fixture_db):
    from copal_tui.services import cases
    from copal_tui.tui.widgets import dashboard_sections as sections
    from copal_tui.tui.widgets.paged_table import parse_filter

    db = connect(fixture_db)
    typed = build_document(db, ReportOptions(bootstrap=0))
    doc = typed.to_dict()

    def listed(table: str, key: str, column: int) -> int:
        found = sections.cases_behind(typed, table, key, column)
        assert found is not None, (table, key, column)
        spec = cases.apply_filters(found.spec, parse_filter(found.filter_text)[1])
        return len(cases.find(db, spec))

    # Composed items by hand: A and B each answered I1-I4 (two scope_restriction, two
    # selective_disclosure); J1 says A erred on I2, I3, I4 and B on I4.
    assert listed("errors", "A", 0) == 4 and listed("errors", "B", 0) == 4
    assert listed("errors", "(all models)", 0) == 8
    patterns = sections.patterns_of(typed)
    errors_col = len(patterns) + 2
    assert listed("errors", "A", errors_col) == 3 and listed("errors", "B", errors_col) == 1
    for row in doc["error_rates"]:
        for k, pattern in enumerate(patterns, 1):
            cell = row["by_pattern"].get(pattern)
            assert listed("errors", row["model"], k) == (cell["n"] if cell else 0)
    for facet, a in doc["facet_atlas"].items():
        assert listed("facets", facet, 2) == a["n"]
        assert listed("facets", facet, 3) == a["errors"]
        assert listed("facets", facet, 4) == a["under_enforcement"]
        assert listed("facets", facet, 5) == a["over_enforcement"]
        assert listed("facets", facet, 6) == a["mixed"]
    for v in doc["judge_validity"]:
        key = f"{v['judge']}@{v['mode']}"
        assert listed("validity", key, 1) == v["n"]
        for column, cell in enumerate(("tp", "fp", "fn", "tn"), 2):
            assert listed("validity", key, column) == v[cell]
        assert listed("confusion", f"{key}\tno error", 3) == v["fp"]
        assert listed("confusion", f"{key}\terror", 2) == v["fn"]
