"""How durable each queue write is: a lease (taken, handed over, given back) commits without
waiting for the disk (`synchronous=NORMAL` for that one transaction), a label commits with
`synchronous=FULL`, and the connection is back to FULL after every lease write, also when the
write fails. Observed through SQLite's statement trace and `PRAGMA synchronous` (2 = FULL)."""

from __future__ import annotations

import pytest

from copal_tui.domain.annotation.payloads import CompassLabel
from copal_tui.services.annotation.queue import AnnotationQueue
from store.db import connect, write
from tests.compass_tui_support import build_compass_db


@pytest.fixture
def traced(tmp_path):
    conn = connect(build_compass_db(tmp_path))
    seen: list[str] = []
    conn.conn.set_trace_callback(seen.append)
    yield conn, seen
    conn.conn.set_trace_callback(None)
    conn.close()


def _transactions(seen: list[str]) -> list[str]:
    """Each BEGIN IMMEDIATE, labelled by the synchronous setting in force when it began."""
    mode, out = "FULL", []
    for stmt in seen:
        s = " ".join(stmt.split()).upper()
        if s.startswith("PRAGMA SYNCHRONOUS = "):
            mode = s.rsplit(" ", 1)[1]
        elif s.startswith("BEGIN IMMEDIATE"):
            out.append(mode)
    return out


def test_lease_moves_commit_without_sync_and_labels_with_it(traced):
    conn, seen = traced
    q = AnnotationQueue(conn, "compass", "ann", overlap=1)
    q.prepare()
    first = q.resume()
    assert first is not None
    seen.clear()
    second = q.neighbour(first, forward=True)
    assert second is not None and second != first
    q.move(first, second)
    assert _transactions(seen) == ["NORMAL"]  # the hand-over: one transaction, not synced
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    seen.clear()
    q.submit(second, CompassLabel(refused=False, compliant=True))
    assert _transactions(seen) == ["FULL"]  # the label (its lease renewal inside it)
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    held = conn.execute("SELECT subject FROM annotation_leases WHERE annotator = 'ann' "
                        "AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')").fetchall()
    assert [r[0] for r in held] == [second]


def test_a_failed_lease_write_leaves_the_connection_durable(traced):
    conn, _seen = traced
    with pytest.raises(RuntimeError), write(conn, durable=False):
        conn.execute("DELETE FROM annotation_leases")
        raise RuntimeError("boom")
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert not conn.conn.in_transaction
