"""The machinery behind the report's speed: the threaded bulk reads against reads on the
caller's connection, the frame's handling of rows one read saw and another did not, and the
vectorised paths (dense GROUP BY, shared bootstrap draws, batched percentiles) against their
one-at-a-time versions."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from copal_tui.domain.report_rows import Read, ReportReads
from copal_tui.metrics import arrays
from copal_tui.metrics.intervals import CONFIDENCE, percentile_intervals, resample_tables
from store.db import Database, connect
from store.report import reads as q
from tests.test_metrics_fixture import build_fixture


def values(reads: ReportReads) -> dict[str, Any]:
    """Every read of `reads` by name, once all are done."""
    return {name: reads.value(name) for name, attribute in vars(ReportReads).items()
            if isinstance(attribute, Read)}


def read_all(db: Database, worlds: list[str] | None = None) -> ReportReads:
    """Every read of a report over `worlds`, complete (the threaded reader's workers done)."""
    bulk = q.BulkReads(db, worlds)
    try:
        return ReportReads(values(bulk))
    finally:
        bulk.close()


@pytest.fixture
def db(tmp_path: Path):
    return connect(build_fixture(tmp_path))


def test_threaded_reads_equal_reads_on_the_callers_connection(db):
    threaded = read_all(db)
    with db.atomic():  # inside a transaction the reads stay on this connection
        own = read_all(db)
    assert values(threaded) == values(own)
    assert threaded.judgments.settings == [("J1", "contract"), ("J1", "full_policy"),
                                           ("J2", "contract")]
    assert threaded.corpus == q.corpus_counts(db, None)


def test_reads_inside_a_transaction_see_its_uncommitted_writes(db):
    db.execute("BEGIN")
    db.execute("DELETE FROM judgments WHERE judge = 'J2'")
    during = read_all(db)
    db.execute("ROLLBACK")
    assert during.judgments.settings == [("J1", "contract"), ("J1", "full_policy")]
    assert ("J2", "contract") in read_all(db).judgments.settings


def test_a_failing_read_raises_in_the_caller(db, monkeypatch):
    def broken(_db):
        raise RuntimeError("boom")

    monkeypatch.setattr(q, "label_rows", broken)
    with pytest.raises(RuntimeError, match="boom"):
        read_all(db)


def test_judge_settings_match_a_group_by(db):
    expected = [tuple(r) for r in db.execute(
        "SELECT judge, mode FROM judgments GROUP BY judge, mode ORDER BY judge, mode")]
    assert q.judge_settings(db) == expected
    db.execute("DELETE FROM judgments")
    assert q.judge_settings(db) == []


@pytest.mark.parametrize("weighted", [False, True])
def test_dense_and_sorting_group_by_agree(monkeypatch, weighted):
    rng = np.random.default_rng(4)
    cols = [rng.integers(0, 3, 500), rng.integers(0, 7, 500), rng.integers(0, 2, 500)]
    weights = rng.integers(0, 2, 500).astype(np.float64) if weighted else None
    dense = arrays.group(cols, [3, 7, 2], weights)
    monkeypatch.setattr(arrays, "_DENSE_KEYS", 0)
    assert arrays.group(cols, [3, 7, 2], weights) == dense
    assert sum(row[-1] for row in dense) == (weights.sum() if weighted else 500)
    assert sum(row[3] for row in dense) == 500  # after the three keys: the rows counted


def test_tables_of_one_size_share_draws_and_match_separate_resamples():
    rng = np.random.default_rng(5)
    tables = []
    for n_items in (30, 30, 17):
        counts = rng.integers(0, 4, size=(n_items, 4))
        tables.append((counts, [rng.random(n_items) < 0.5, rng.random(n_items) < 0.3]))
    together = resample_tables(tables, 400, seed=9)
    for (counts, masks), got in zip(tables, together, strict=True):
        [alone] = resample_tables([(counts, masks)], 400, seed=9)
        assert len(got) == len(alone) == 3
        assert all(np.array_equal(a, b) for a, b in zip(got, alone, strict=True))


def test_batched_percentiles_equal_one_row_at_a_time():
    rng = np.random.default_rng(6)
    values = rng.random((12, 300))
    values[3, ::7] = np.nan  # some resamples undefined
    values[5] = np.nan  # none defined
    values[8, 0] = np.inf
    batched = percentile_intervals(values)
    tail = (1 - CONFIDENCE) / 2 * 100  # as a float, not exactly 2.5
    for row, got in zip(values, batched, strict=True):
        finite = row[np.isfinite(row)]
        want = (*np.percentile(finite, [tail, 100 - tail]), finite.size) if finite.size else \
            (math.nan, math.nan, 0)
        assert got[2] == want[2]
        assert all((math.isnan(a) and math.isnan(b)) or a == b
                   for a, b in zip(got[:2], want[:2], strict=True))


@pytest.mark.parametrize("known", [[1, 2, 4, 5], [5, 10**9]], ids=["dense", "sparse"])
def test_rowids_are_found_by_position_and_unknown_ones_left_out(known):
    known_rowids = np.array(known, dtype=np.int64)
    asked = np.array([known[-1], -1, 3, known[0], 10**10, known[1]], dtype=np.int64)
    idx, found = arrays.find(known_rowids, asked)
    assert found.tolist() == [True, False, False, True, False, True]
    assert idx.tolist() == [len(known) - 1, 0, 1]


def test_the_latest_label_of_an_annotator_on_a_response_counts():
    from copal_tui.metrics.agreement import human_agreement

    out = human_agreement([("r1", "a", 0), ("r1", "b", 1), ("r2", "a", 1), ("r2", "b", 1),
                           ("r1", "a", 1)])  # a changed their mind on r1
    assert out.n_labels == 5 and out.n_responses == 2
    assert out.pairwise[0].n == 2 and out.pairwise[0].agreement.value == 1.0
