"""The real-traffic audit in `copal report`: Table 11 over the human reference labels (the
adjudication, else the annotators' majority), with flagged-sensitive and split pairs left out
and counted; the automatic labeller's Table 11 marked HEURISTIC when no human label exists; what
de-identification removed in the provenance and `copal stats`; the tables in the exports.

Expected values are counted by hand from the labels each test writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.traffic import TrafficLabel
from copal_tui.services.annotation.adjudication import decide
from copal_tui.services.annotation.queue import AnnotationQueue
from store.db import connect
from tests.traffic_support import build_traffic_db, rows


def run(db: Path, *args: str) -> Any:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def _pairs(db: Path) -> dict[str, tuple[str, str]]:
    """Pair id -> (source, query), in a stable order (line, turn)."""
    return {r["id"]: (r["source"], r["query"]) for r in rows(
        db, "SELECT id, source, query FROM traffic_pairs ORDER BY source, line, turn")}


def _label(db: Path, who: str, subject: str, **fields: Any) -> None:
    conn = connect(db)
    try:
        AnnotationQueue(conn, "traffic", who).submit(subject, TrafficLabel(**fields))
    finally:
        conn.conn.close()


def _audit(doc: dict[str, Any], source: str = "all") -> dict[str, dict[str, Any]]:
    return {r["category"]: r for r in doc["traffic_audit"]["rows"] if r["source"] == source}


@pytest.fixture()
def labelled(tmp_path: Path) -> tuple[Path, list[str]]:
    """Six pairs (four web, two app), labelled by two annotators:
    web 1: single/erroneous by both; web 2: none/correct by both; web 3: multi/erroneous by
    both; web 4: multi/erroneous vs single/correct (a split: no reference until decided);
    app 1: flagged sensitive by one annotator; app 2: multi/correct by both."""
    db = build_traffic_db(tmp_path, campaign=None)
    ids = list(_pairs(db))
    app, web = ids[:2], ids[2:]
    assert [_pairs(db)[i][0] for i in ids] == ["app", "app", "web", "web", "web", "web"]
    both = {web[0]: ("single", True), web[1]: ("none", False), web[2]: ("multi", True),
            app[1]: ("multi", False)}
    for who in ("ann", "bob"):
        for pid, (category, erroneous) in both.items():
            _label(db, who, pid, category=category, erroneous=erroneous)
    _label(db, "ann", web[3], category="multi", erroneous=True)
    _label(db, "bob", web[3], category="single", erroneous=False)
    _label(db, "ann", app[0], sensitive=True)
    _label(db, "bob", app[0], category="none", erroneous=False)
    return db, ids


def test_table11_counts_the_reference_labels_and_leaves_out_split_and_sensitive_pairs(labelled):
    db, _ids = labelled
    doc = json.loads(run(db, "report", "--json", "--bootstrap", "0").stdout)
    audit = doc["traffic_audit"]
    assert audit["labels"] == "human" and audit["pairs"] == 4
    assert audit["excluded"] == {"flagged sensitive": 1,
                                 "no reference label (annotators split evenly)": 1}
    table = _audit(doc)
    # none 1 (0 errors), single 1 (1), multi 2 (1): 4 cases, 2 errors.
    assert [(table[c]["cases"], table[c]["errors"]) for c in ("none", "single", "multi")] == \
        [(1, 0), (1, 1), (2, 1)]
    assert table["total"]["cases"] == 4 and table["total"]["errors"] == 2
    assert table["multi"]["error_rate"] == 0.5 and table["multi"]["share_of_cases"] == 0.5
    assert table["multi"]["share_of_errors"] == 0.5
    assert _audit(doc, "app")["multi"]["cases"] == 1
    assert _audit(doc, "web")["total"]["cases"] == 3
    ratio = next(r for r in audit["ratios"] if r["source"] == "all")
    assert ratio["ratio"] == 0.5  # (1/2) / (1/1)
    # Both annotators labelled the five pairs not flagged sensitive (the split one included).
    agreement = doc["traffic_agreement"]
    assert agreement["excluded_sensitive"] == 1 and agreement["category"]["n_pairs"] == 5


def test_an_adjudication_settles_a_split_pair(labelled):
    db, ids = labelled
    conn = connect(db)
    try:
        decide(conn, "traffic", ids[5], "chief", TrafficLabel(category="multi", erroneous=True))
    finally:
        conn.conn.close()
    doc = json.loads(run(db, "report", "--json", "--bootstrap", "0").stdout)
    assert doc["traffic_audit"]["pairs"] == 5
    assert (_audit(doc)["multi"]["cases"], _audit(doc)["multi"]["errors"]) == (3, 2)


def test_without_human_labels_table11_is_the_offline_labellers_and_says_heuristic(tmp_path):
    db = build_traffic_db(tmp_path, campaign=None)
    run(db, "run", "traffic_judge", "--judge", "offline/judge")
    doc = json.loads(run(db, "report", "--json", "--bootstrap", "0").stdout)
    audit = doc["traffic_audit"]
    assert audit["labels"] == "offline/judge" and audit["pairs"] == 6
    assert audit["caveat"].startswith("HEURISTIC")
    assert doc["scope"]["provenance"]["traffic"]["judge"] == ["offline/judge"]
    # The labeller's reading of the log counts both sources' pairs.
    [labeller] = doc["traffic_labeller"]
    assert (labeller["judge"], labeller["pairs"], labeller["sample"]) == ("offline/judge", 6, 0)
    assert sum(r["pairs"] for r in doc["traffic_corrected"] if r["category"] != "total") == 6
    terminal = run(db, "report", "--bootstrap", "0").stdout
    assert "Real traffic (Table 11)" in terminal and "HEURISTIC" in terminal


def test_what_deidentification_removed_is_in_the_provenance_and_stats(labelled):
    db, _ids = labelled
    doc = json.loads(run(db, "report", "--json", "--bootstrap", "0").stdout)
    assert doc["scope"]["provenance"]["traffic"]["removed"] == {"web": {"EMAIL": 1}}
    stats = json.loads(run(db, "stats", "--json").stdout)
    assert stats["redacted:web:EMAIL"] == 1 and stats["traffic_pairs"] == 6


def test_the_exports_carry_table11(labelled, tmp_path):
    db, _ids = labelled
    out = tmp_path / "out"
    run(db, "export", "--format", "csv", "--out", str(out))
    text = (out / "traffic_audit.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith("source,category,cases,errors,error_rate")
    assert "all,multi,2,1,0.5" in text


def test_a_flagged_pair_leaves_the_labellers_table11_too(tmp_path):
    db = build_traffic_db(tmp_path, campaign=None)
    run(db, "run", "traffic_judge", "--judge", "offline/judge")
    _label(db, "ann", next(iter(_pairs(db))), sensitive=True)  # flagged, nothing else labelled
    doc = json.loads(run(db, "report", "--json", "--bootstrap", "0").stdout)
    audit = doc["traffic_audit"]
    assert audit["labels"] == "offline/judge" and audit["pairs"] == 5
    assert audit["excluded"] == {"flagged sensitive": 1}
    assert _audit(doc)["total"]["cases"] == 5
