"""Interchange import at bulk size: items, responses and judgments are checked against
in-memory maps and written by one executemany per type, and a table receiving at least
`writes.BULK_INDEX_ROWS` rows (and no fewer than it holds) has its secondary indexes dropped
and built again at the end of the transaction.

The threshold and the import's chunk are lowered here so a few thousand records take that
path in many chunks. A record that fails late (after chunks were written and indexes dropped)
exits 2 naming its file and line and leaves every row and every index as it was; an id given
twice in chunks far apart is named; a bulk import stores what the same records imported in
small calls store, compared through `copal export`. The import streams: its peak memory,
measured in a subprocess, barely grows with a file four times as large.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from copal_tui.interchange import importer
from store.artifacts import writes

ITEMS = 400
MODELS = ("bot-a", "bot-b")
JUDGES = ("judge-x", "judge-y", "judge-z")


def records(world: str = "bulk-co", items: int = ITEMS) -> list[dict[str, Any]]:
    """A world with ITEMS items, a response per model and a judgment per judge on each, and a
    label on every fifth response (marks chosen by index, so some err and some do not)."""
    out: list[dict[str, Any]] = [
        {"type": "world", "id": world, "name": "Bulk Co", "industry": "shop",
         "use_case": "assistant", "risk_tier": "low", "context": "Bulk Co sells in bulk."},
        {"type": "policy", "id": "P1", "world_id": world, "kind": "allow",
         "text": "The assistant may quote prices."},
    ]
    for i in range(items):
        iid = f"{world}:I{i:04d}"
        out.append({"type": "item", "id": iid, "world_id": world, "composition_id": None,
                    "pattern": None, "facet": None, "query": f"What does thing {i} cost?",
                    "required": [{"id": "R1", "text": "gives the price", "kind": "content"},
                                 {"id": "R2", "text": "asks for the account", "kind": "gate"}],
                    "forbidden": [{"id": "F1", "text": "reveals the discount"}],
                    "method": "manual", "parent_item_id": None, "selected": i % 2 == 0})
        for m, model in enumerate(MODELS):
            rid = f"{iid}@{model}"
            out.append({"type": "response", "id": rid, "item_id": iid, "model": model,
                        "text": f"Thing {i} costs {i + m} pounds."})
            for j, judge in enumerate(JUDGES):
                observed = [["R1", "R2"], ["R1"], ["R1", "F1"], ["R2"]][(i + m + j) % 4]
                out.append({"type": "judgment", "id": f"{rid}+{judge}", "response_id": rid,
                            "judge": judge, "mode": "contract", "observed": observed,
                            "facet": None, "rationale": f"judged {i}"})
            if (i + m) % 5 == 0:
                out.append({"type": "label", "response_id": rid, "annotator": "ana",
                            "observed": ["R1", "R2"], "facet": None, "note": None,
                            "created_at": "2026-01-02T03:04:05Z"})
    return out


def write_jsonl(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def snapshot(db: Path) -> tuple[dict[str, int], str, list[tuple[str, str]]]:
    """Row count per table, a sha256 over every row of every table, and the index list."""
    conn = sqlite3.connect(db)
    try:
        counts: dict[str, int] = {}
        h = hashlib.sha256()
        tables = [t for (t,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for t in tables:
            rows = conn.execute(f"SELECT * FROM [{t}] ORDER BY 1").fetchall()
            counts[t] = len(rows)
            for row in rows:
                h.update(repr((t, row)).encode())
        indexes = conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' "
                               "ORDER BY name").fetchall()
    finally:
        conn.close()
    return counts, h.hexdigest(), indexes


@pytest.fixture
def bulk_threshold(monkeypatch) -> int:
    """Judgments (2,400) and responses (800) above it, items (400) below: both paths in one."""
    monkeypatch.setattr(writes, "BULK_INDEX_ROWS", 500)
    return 500


@pytest.fixture
def small_chunks(monkeypatch) -> int:
    """Records read, checked and written 300 at a time: a few thousand make many chunks."""
    monkeypatch.setattr(importer, "CHUNK", 300)
    return 300


def test_late_failure_in_a_bulk_import_exits_2_and_leaves_rows_and_indexes(
        cli, initialised, tmp_path, bulk_threshold, small_chunks):
    # Something stored already, so "unchanged" is not trivially an empty database.
    first = write_jsonl(tmp_path / "first.jsonl", records("early-co"))
    assert cli("import", str(first)).exit_code == 0
    before = snapshot(initialised)
    assert before[0]["judgments"] == ITEMS * len(MODELS) * len(JUDGES)

    recs = records()
    bad_line = max(n for n, r in enumerate(recs, 1) if r["type"] == "judgment")
    recs[bad_line - 1] = {**recs[bad_line - 1], "observed": ["R1", "R9"]}
    source = write_jsonl(tmp_path / "late.jsonl", recs)
    result = cli("import", str(source))

    assert result.exit_code == 2, result.output
    assert f"{source}:{bad_line}" in result.stderr
    assert "R9" in result.stderr
    assert snapshot(initialised) == before


def test_bad_record_at_line_50000_exits_2_and_leaves_the_store(cli, initialised, tmp_path):
    recs = records()
    filler = [{"type": "policy", "id": f"Q{i:05d}", "world_id": "bulk-co", "kind": "deny",
               "text": f"Rule {i}."} for i in range(50_000 - len(recs) - 1)]
    bad = {"type": "judgment", "id": "broken", "response_id": "bulk-co:I0000@bot-a",
           "judge": "judge-x", "mode": "contract", "observed": "R1"}  # not a list
    source = write_jsonl(tmp_path / "big.jsonl", recs + filler + [bad])
    before = snapshot(initialised)

    result = cli("import", str(source))

    assert result.exit_code == 2, result.output
    assert f"{source}:50000" in result.stderr
    assert "observed" in result.stderr
    assert snapshot(initialised) == before


def test_bulk_import_stores_what_small_imports_store(cli, initialised, tmp_path,
                                                     bulk_threshold):
    recs = records()
    one = write_jsonl(tmp_path / "all.jsonl", recs)
    assert cli("import", str(one)).exit_code == 0

    # The same records into a second database, a few hundred at a time (referents first, as
    # the file has them): every call is far below the bulk threshold.
    small_db = tmp_path / "small.db"
    assert cli("init", db=small_db).exit_code == 0
    for k in range(0, len(recs), 300):
        part = write_jsonl(tmp_path / f"part-{k}.jsonl", recs[k:k + 300])
        assert cli("import", str(part), db=small_db).exit_code == 0, k

    bulk_out, small_out = tmp_path / "bulk-export.jsonl", tmp_path / "small-export.jsonl"
    assert cli("export", "--format", "jsonl", "--out", str(bulk_out)).exit_code == 0
    assert cli("export", "--format", "jsonl", "--out", str(small_out),
               db=small_db).exit_code == 0
    exported = bulk_out.read_text(encoding="utf-8").splitlines()
    assert len(exported) == len(recs)
    assert bulk_out.read_bytes() == small_out.read_bytes()
    # Errors and directions were derived from the marks, not copied: the first response's
    # judgments mark R1+R2 (correct), R1 alone (the gate skipped) and R1+F1 (a forbidden item).
    judged = [json.loads(line) for line in exported if '"type":"judgment"' in line][:3]
    assert [j["error"] for j in judged] == [0, 1, 1]
    conn = sqlite3.connect(initialised)
    try:
        directions = [r[0] for r in conn.execute(
            "SELECT direction FROM judgments WHERE response_id = 'bulk-co:I0000@bot-a' "
            "ORDER BY judge")]
        # The dropped indexes are back, the same as in the database that never dropped them.
        assert snapshot(initialised)[2] == snapshot(small_db)[2]
    finally:
        conn.close()
    assert directions == ["none", "under_enforcement", "under_enforcement"]


def test_importing_the_same_bulk_file_twice_changes_nothing(cli, initialised, tmp_path,
                                                            bulk_threshold):
    source = write_jsonl(tmp_path / "all.jsonl", records())
    assert cli("import", str(source)).exit_code == 0
    before = snapshot(initialised)
    again = cli("import", str(source))
    assert again.exit_code == 0, again.output
    assert snapshot(initialised) == before


@pytest.mark.parametrize("stored_first", [False, True], ids=["empty-store", "stocked-store"])
def test_an_id_given_twice_in_chunks_far_apart_is_named(cli, initialised, tmp_path,
                                                        small_chunks, stored_first):
    # Into an empty store the second copy is found by the insert; into a stocked one by the
    # look-up of stored ids. Either way the error names the second copy's line.
    if stored_first:
        assert cli("import", str(write_jsonl(tmp_path / "first.jsonl",
                                             records("early-co")))).exit_code == 0
    before = snapshot(initialised)
    recs = records()
    first = next(r for r in recs if r["type"] == "judgment")
    source = write_jsonl(tmp_path / "twice.jsonl", [*recs, first])

    result = cli("import", str(source))

    assert result.exit_code == 2, result.output
    assert f"{source}:{len(recs) + 1}: id: duplicate judgment {first['id']!r}" in result.stderr
    assert snapshot(initialised) == before


# Imports a file in a fresh process and prints how far its peak resident memory rose above
# what it held before the import (Linux: /proc/self/status). SQLite's page cache for bulk
# loads (a fixed size, not the file's) and the chunk are made small, so that what the importer
# holds shows and both files span many chunks.
_PEAK = """
import sys
from pathlib import Path
from copal_tui.interchange import importer
from store.artifacts import writes
from store.db import connect
def kib(field):
    return next(int(line.split()[1]) for line in open("/proc/self/status")
                if line.startswith(field + ":"))
writes.BULK_CACHE_KIB = 2048
importer.CHUNK = 1000
db = connect(sys.argv[1])
before = kib("VmRSS")
counts = importer.import_paths(db, [Path(sys.argv[2])])
print(sum(counts.values()), kib("VmHWM") - before)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/self/status")
def test_peak_memory_does_not_grow_with_the_file(cli, tmp_path):
    growth: dict[int, int] = {}
    for items in (1_500, 6_000):
        db = tmp_path / f"{items}.db"
        assert cli("init", db=db).exit_code == 0
        recs = records(items=items)
        source = write_jsonl(tmp_path / f"{items}.jsonl", recs)
        out = subprocess.run([sys.executable, "-c", _PEAK, str(db), str(source)], check=True,
                             capture_output=True, text=True)
        written, grew_kib = map(int, out.stdout.split())
        assert written == len(recs)
        growth[items] = grew_kib
    # Holding the records would make the larger file's growth about four times the smaller's
    # (some 50 MB more); streamed, both hold one chunk (1,000 records here).
    assert growth[6_000] < 2 * growth[1_500] + 10_240, growth
