"""`copal cases --suite traffic`: the pairs behind every cell of the real-traffic figures. Each
cell of Table 11 lists as many pairs as the report's JSON counts (its `cases`, its `errors` with
`--erroneous yes`), over the human reference labels or, without them, the automatic
labeller's; the labeller's confusion cells hold its sample; bad values exit 2 naming the
closest names; an empty cell is no error.

The labelled store: six pairs of two sources, two annotators, one adjudication, the offline
labeller over the whole log; which pairs Table 11 counts is written out by hand below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.traffic import CATEGORIES, TrafficLabel
from copal_tui.services.annotation.adjudication import decide
from store.db import connect
from tests import test_traffic_report as report_tests
from tests.test_import_malformed import digest
from tests.traffic_support import build_traffic_db, cli

JUDGE = "offline/judge"
ANSWERS = ("either", "yes", "no")


def invoke(db: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def listed(db: Path, *args: str) -> list[dict[str, Any]]:
    result = invoke(db, "cases", "--suite", "traffic", "--format", "jsonl", *args)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def report(db: Path) -> dict[str, Any]:
    return json.loads(cli(db, "report", "--json", "--bootstrap", "0").stdout)


# The six labelled pairs of test_traffic_report (the fixture is shared, not copied).
labelled = report_tests.labelled


@pytest.fixture()
def judged(labelled: tuple[Path, list[str]]) -> tuple[Path, dict[str, str]]:
    """test_traffic_report's labels (web 1: single/erroneous by both annotators; web 2:
    none/correct by both; web 3: multi/erroneous by both; web 4: split; app 1: flagged
    sensitive by one annotator; app 2: multi/correct by both), web 4 adjudicated
    multi/erroneous, then the offline labeller over the whole log. Pair names -> ids."""
    db, ids = labelled
    app, web = ids[:2], ids[2:]
    conn = connect(db)
    try:
        decide(conn, "traffic", web[3], "chief", TrafficLabel(category="multi", erroneous=True))
    finally:
        conn.conn.close()
    cli(db, "run", "traffic_judge", "--judge", JUDGE)
    return db, {"app1": app[0], "app2": app[1], **{f"web{k + 1}": p for k, p in enumerate(web)}}


@pytest.fixture()
def offline_only(tmp_path: Path) -> Path:
    """The log labelled by the offline labeller alone."""
    db = build_traffic_db(tmp_path, campaign=None)
    cli(db, "run", "traffic_judge", "--judge", JUDGE)
    return db


def _table11_cells(doc: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    """Every cell of the report's Table 11 with the pairs it counts: (source, category,
    erroneous, count)."""
    out = []
    for row in doc["traffic_audit"]["rows"]:
        cases, errors = row["cases"], row["errors"]
        for answer, n in zip(ANSWERS, (cases, errors, cases - errors), strict=True):
            out.append((row["source"], row["category"], answer, n))
    return out


def _check_table11(db: Path, doc: dict[str, Any], *extra: str) -> None:
    cells = _table11_cells(doc)
    assert len(cells) == 3 * 4 * 3  # all, app, web x three categories and the total
    for source, category, answer, n in cells:
        rows = listed(db, "--source", source, "--category", category, "--erroneous", answer,
                      *extra)
        assert len(rows) == n, (source, category, answer)
        assert len({r["pair"] for r in rows}) == n
        for r in rows:
            assert source in ("all", r["source"]) and category in ("total", r["category"])
            assert answer == "either" or r["erroneous"] == (answer == "yes")


def test_every_cell_of_table11_lists_the_pairs_the_report_counts(judged):
    db, names = judged
    doc = report(db)
    assert doc["traffic_audit"]["labels"] == "human"
    _check_table11(db, doc)
    # By hand: five reference labels (app 1 is flagged sensitive), web 4's adjudicated.
    rows = {r["pair"]: r for r in listed(db)}
    assert set(rows) == {names[k] for k in ("web1", "web2", "web3", "web4", "app2")}
    assert rows[names["web4"]]["labels"] == "adjudicated"
    assert (rows[names["web4"]]["category"], rows[names["web4"]]["erroneous"]) == ("multi", True)
    assert {rows[names[k]]["labels"] for k in ("web1", "web2", "web3", "app2")} == {"majority"}
    assert [r["line"] for r in listed(db, "--source", "web")] == [1, 2, 3, 4]
    assert listed(db, "--source", "app")[0]["turn"] == 3  # the transcript's second answer


def test_without_human_labels_the_cells_are_the_labellers_over_the_whole_log(offline_only):
    db = offline_only
    doc = report(db)
    assert doc["traffic_audit"]["labels"] == JUDGE and doc["traffic_audit"]["pairs"] == 6
    _check_table11(db, doc)
    _check_table11(db, doc, "--judge", JUDGE)
    assert {r["labels"] for r in listed(db)} == {JUDGE}
    result = invoke(db, "cases", "--suite", "traffic")
    assert "by the automatic labeller offline/judge" in result.stderr
    assert "HEURISTIC" in result.stderr


def test_a_labellers_cells_over_the_whole_log_are_its_corrected_rows_counts(judged):
    """Beside human labels, `--judge J` reads J's predictions over the whole log: per category,
    the pairs and errors its `traffic_corrected` rows count (the observed ones)."""
    db, names = judged
    rows = [r for r in report(db)["traffic_corrected"] if r["judge"] == JUDGE]
    assert [r["category"] for r in rows] == [*CATEGORIES, "total"]
    for r in rows:
        listed_cases = listed(db, "--judge", JUDGE, "--category", r["category"])
        assert len(listed_cases) == r["pairs"], r["category"]
        assert len(listed(db, "--judge", JUDGE, "--category", r["category"],
                          "--erroneous", "yes")) == r["errors"]
        assert {c["labels"] for c in listed_cases} <= {JUDGE}
    # The whole log but app 1, which an annotator flagged as still holding sensitive content.
    everything = {c["pair"] for c in listed(db, "--judge", JUDGE)}
    assert everything == set(names.values()) - {names["app1"]}


def test_the_labellers_confusion_cells_hold_its_sample(judged):
    db, _names = judged
    [row] = report(db)["traffic_labeller"]
    assert row["judge"] == JUDGE and row["sample"] == 5
    cells = {c: listed(db, "--judge", JUDGE, "--cell", c) for c in ("tp", "fp", "fn", "tn")}
    assert sum(len(rows) for rows in cells.values()) == row["sample"]
    assert len({r["pair"] for rows in cells.values() for r in rows}) == row["sample"]
    tp, fp, fn = (len(cells[c]) for c in ("tp", "fp", "fn"))
    assert tp + fn == 3  # web 1, web 3, web 4 are erroneous by the reference
    assert row["error_recall"] == tp / (tp + fn)
    for c, rows in cells.items():
        for r in rows:
            assert r["cell"] == c and r["judge"] == JUDGE
            assert (r["erroneous"], r["judge_erroneous"]) == {
                "tp": (True, True), "fp": (False, True), "fn": (True, False),
                "tn": (False, False)}[c]
    for i, ref in enumerate(CATEGORIES):
        for j, pred in enumerate(CATEGORIES):
            rows = listed(db, "--judge", JUDGE, "--category-cell", f"{ref}:{pred}")
            assert len(rows) == row["confusion"][i][j], (ref, pred)
            assert all((r["category"], r["judge_category"]) == (ref, pred) for r in rows)
    both = listed(db, "--judge", JUDGE, *(a for c in ("tp", "fp", "fn", "tn")
                                          for a in ("--cell", c)))
    assert len(both) == row["sample"]


BAD = [
    (["--source", "wbe"], "--source wbe: not a source with pairs in scope, or all (did you "
                          "mean web?)"),
    (["--category", "mult"], "(did you mean multi?)"),
    (["--judge", "offline/jduge"], "(did you mean offline/judge?)"),
    (["--judge", JUDGE, "--category-cell", "multi:singel"], "--category-cell singel: not a "
                                                            "policy category (did you mean "
                                                            "single?)"),
    (["--judge", JUDGE, "--category-cell", "multi"], "give REF:PRED"),
    (["--cell", "fp"], "need --judge"),
    (["--judge", JUDGE, "--cell", "fp", "--erroneous", "yes"], "--erroneous names a cell of "
                                                               "Table 11"),
    (["--world", "harbour-clinics"], "(did you mean harbor-clinics?)"),
    (["--erroneous", "maybe"], "'maybe' is not one of"),
]


def test_a_bad_value_exits_2_naming_the_closest_names(judged):
    db, _names = judged
    before = digest(db)
    for args, named in BAD:
        result = invoke(db, "cases", "--suite", "traffic", *args)
        assert result.exit_code == 2 and named in result.stderr, (args, result.output)
        assert result.stdout == ""
    assert digest(db) == before


def test_an_empty_cell_prints_no_rows_and_says_so(judged):
    db, _names = judged
    assert [r["cases"] for r in report(db)["traffic_audit"]["rows"]
            if (r["source"], r["category"]) == ("app", "single")] == [0]
    for fmt, out in (("table", ""), ("jsonl", ""), ("csv", "pair,source,line,turn")):
        result = invoke(db, "cases", "--suite", "traffic", "--source", "app", "--category", "single",
                        "--format", fmt)
        assert result.exit_code == 0
        assert result.stdout.startswith(out) and len(result.stdout.splitlines()) <= 1
        assert "0 pair(s)" in result.stderr and "the cell is empty" in result.stderr


def test_the_table_names_each_pair_with_its_deidentified_query(judged):
    db, names = judged
    result = invoke(db, "cases", "--suite", "traffic", "--source", "web", "--category", "single")
    assert result.exit_code == 0
    assert names["web1"] in result.stdout and "<EMAIL_1>" in result.stdout
    assert "zora.quill" not in result.stdout
    assert result.stderr.startswith("1 pair(s) of Table 11 by human reference labels: "
                                    "source web, category single, erroneous either")


def test_a_store_without_traffic_says_what_adds_it(tmp_path):
    db = tmp_path / "empty.db"
    cli(db, "init")
    result = invoke(db, "cases", "--suite", "traffic")
    assert result.exit_code == 0 and result.stdout == ""
    assert "copal traffic import" in result.stderr
