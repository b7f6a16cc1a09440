"""The report's bulk reads as integers: the responses coded in SQL (item counts, model codes,
variants), the judgments' setting found by a search on the judge, the rows one read saw and
another did not, and the indexes the two largest reads are answered from (m012)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from copal_tui.cli import main
from copal_tui.domain.report_rows import ReportReads
from copal_tui.metrics import copal_sections
from copal_tui.metrics.options import ReportOptions
from store.db import connect
from store.report import coded
from store.report import reads as q
from tests.test_metrics_fixture import build_fixture, fixture_records
from tests.test_metrics_frame import read_all, values


@pytest.fixture
def db(tmp_path: Path):
    return connect(build_fixture(tmp_path))


@pytest.mark.parametrize("n", range(8))
def test_the_code_tree_finds_each_value_and_nothing_else(n):
    values = [f"m{k:02d}" for k in range(n)]
    sql = f"SELECT {coded.code_tree('x', n)} FROM (SELECT ?{n + 1} AS x)"
    conn = sqlite3.connect(":memory:")
    for k, value in enumerate(values):
        assert conn.execute(sql, [*values, value]).fetchone()[0] == k
    for absent in ("a", "m00a", "zz"):
        assert conn.execute(sql, [*values, absent]).fetchone()[0] is None


def test_responses_are_read_as_counts_per_item_and_model_codes(db):
    cols = coded.response_columns(db)
    # The fixture: targets A and B; B answers with a second system prompt on no item, so
    # no variants. Per item (in id order) the models that answered it, worked out from
    # tests.test_metrics_fixture.J1 (every response there is judged by J1).
    assert cols.models == ["A", "B"]
    assert cols.variants is None
    items = cols.items.split("\x1e")
    counts = dict(zip(items, map(int, cols.counts.split(",")), strict=True))
    assert counts == {"I1": 2, "I1:p1": 2, "I1:p2": 2, "I2": 2, "I2:p1": 2, "I2:p2": 2,
                      "I3": 2, "I3:p1": 1, "I4": 2, "X1": 2, "X2": 2, "X3": 2}
    rowids = list(map(int, cols.rowids.split(",")))
    models = list(map(int, cols.model_codes.split(",")))
    expected = [tuple(r) for r in db.execute(
        "SELECT rowid, CASE model WHEN 'A' THEN 0 ELSE 1 END FROM responses "
        "ORDER BY item_id, model, variant")]
    assert list(zip(rowids, models, strict=True)) == expected


def test_a_variant_is_a_target_of_its_own(tmp_path):
    records = fixture_records()
    records.append({"type": "response", "id": "B:I1:terse", "item_id": "I1", "model": "B",
                    "variant": "terse", "text": "another system prompt"})
    path = build_fixture(tmp_path, records)
    db = connect(path)
    cols = coded.response_columns(db)
    rowid = db.execute("SELECT rowid FROM responses WHERE id = 'B:I1:terse'").fetchone()[0]
    assert cols.variants == f"{rowid}\x1fterse"
    result = CliRunner().invoke(main, ["--db", str(path), "report", "--json", "--bootstrap",
                                       "0"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    # The corpus counts every response under its target: A 12 and B 11 in the fixture (the
    # keys of tests.test_metrics_fixture.J1), and the variant's one response as "B#terse".
    assert doc["corpus"]["responses_by_model"] == {"A": 12, "B": 11, "B#terse": 1}


def test_rows_no_other_read_saw_are_left_out(db):
    reads = read_all(db)
    opts = ReportOptions(bootstrap=50)
    expected = copal_sections.build(reads, None, ["w1"], opts)[0]
    judgments = reads.judgments
    cols = reads.responses
    ghost = 10**6  # a response written after the responses were read
    seen_later = ReportReads({
        **values(reads),
        # A response of an item the items read did not see, one of a model the models'
        # list did not have (-1), and a judgment and labels of a response the responses
        # read did not see.
        "responses": dataclasses.replace(
            cols, items=f"{cols.items}\x1enew-item\x1eI1", counts=f"{cols.counts},1,1",
            rowids=f"{cols.rowids},{ghost + 1},{ghost + 2}",
            model_codes=f"{cols.model_codes},0,-1"),
        "judgments": dataclasses.replace(
            judgments,
            codes=f"{judgments.codes},{(ghost * len(judgments.settings)) * 8 + 1}"),
        "labels": [*reads.labels, (ghost, "ana", 1), (ghost, "ben", 1)],
        "adjudications": [*reads.adjudications, (ghost, "lead", 0)],
    })
    assert copal_sections.build(seen_later, None, ["w1"], opts)[0] == expected


def test_judgments_of_a_judge_with_two_modes_keep_their_setting(db):
    settings = q.judge_settings(db)
    packed, _facets = q.judgment_codes(db, settings)
    codes = list(map(int, packed.split(",")))
    got = sorted((c // 8 // len(settings), settings[c // 8 % len(settings)]) for c in codes)
    expected = sorted((int(r[0]), (r[1], r[2])) for r in db.execute(
        "SELECT r.rowid, j.judge, j.mode FROM judgments j "
        "JOIN responses r ON r.id = j.response_id"))
    assert ("J1", "full_policy") in settings and ("J1", "contract") in settings
    assert got == expected


def test_the_largest_reads_are_answered_from_the_report_indexes(db):
    plan = " | ".join(r[3] for r in db.execute(
        "EXPLAIN QUERY PLAN SELECT group_concat(j.error || j.direction || j.facet "
        "|| j.failure) FROM responses r CROSS JOIN judgments j ON j.response_id = r.id"))
    assert "COVERING INDEX idx_judgments_report" in plan
    plan = " | ".join(r[3] for r in db.execute(
        "EXPLAIN QUERY PLAN SELECT group_concat(rowid) FROM responses "
        "WHERE failure IS NOT NULL OR text IS NULL"))
    assert "idx_responses_unanswered" in plan
