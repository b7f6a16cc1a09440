"""Interchange round trip: export, import into a new database, export again: identical bytes."""

from __future__ import annotations

import json
from pathlib import Path

from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.suites import copal_label
from store.db import connect


def test_export_import_export_is_byte_identical(cli, initialised, samples, tmp_path):
    assert cli("import", str(samples)).exit_code == 0
    # Add state that only the store produces: an undo (must not resurrect) and a new label.
    db = connect(initialised)
    rid = db.execute("SELECT id FROM responses ORDER BY id LIMIT 1").fetchone()[0]
    zoe, yan = (AnnotationQueue(db, "copal", who) for who in ("zoe", "yan"))
    zoe.submit(rid, copal_label(db, rid, []))
    yan.submit(rid, copal_label(db, rid, []))
    yan.undo()
    db.conn.close()

    first = tmp_path / "one.jsonl"
    assert cli("export", "--format", "jsonl", "--out", str(first)).exit_code == 0
    other = tmp_path / "other.db"
    assert cli("init", db=other).exit_code == 0
    assert cli("import", str(first), db=other).exit_code == 0, "re-import of own export failed"
    second = tmp_path / "two.jsonl"
    assert cli("export", "--format", "jsonl", "--out", str(second), db=other).exit_code == 0
    assert first.read_bytes() == second.read_bytes()

    records = [json.loads(line) for line in first.read_text().splitlines()]
    labels = [r for r in records if r["type"] == "label" and r["response_id"] == rid]
    assert {r["annotator"] for r in labels} >= {"zoe"}
    assert "yan" not in {r["annotator"] for r in labels}  # the undone label stays undone
    types = [r["type"] for r in records]
    assert types.index("world") < types.index("policy") < types.index("clause")
    assert types.index("item") < types.index("response") < types.index("label")


def test_export_to_stdout_matches_file(cli, initialised, samples, tmp_path: Path):
    cli("import", str(samples / "meridian_bank.yaml"), str(samples / "meridian_bank.jsonl"))
    out = tmp_path / "x.jsonl"
    cli("export", "--out", str(out))
    assert cli("export", "--out", "-").stdout == out.read_text()
