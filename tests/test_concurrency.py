"""Eight processes appending label events at once: nothing lost, never "database is locked"."""

from __future__ import annotations

import multiprocessing as mp

from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.suites import copal_label
from store.db import connect

PROCESSES = 8
LABELS_EACH = 40


def _worker(db_path: str, annotator: str, response_ids: list[str], barrier, errors) -> None:
    db = connect(db_path)  # own connection in its own process
    queue = AnnotationQueue(db, "copal", annotator)
    barrier.wait()
    for i in range(LABELS_EACH):
        rid = response_ids[i % len(response_ids)]
        try:
            queue.submit(rid, copal_label(db, rid, []))
            if i % 10 == 9:
                queue.undo()
        except Exception as exc:  # noqa: BLE001 - collected and asserted on below
            errors.put(f"{annotator}: {type(exc).__name__}: {exc}")
    db.conn.close()


def test_eight_processes_label_concurrently(cli, initialised, samples):
    cli("import", str(samples / "meridian_bank.yaml"), str(samples / "meridian_bank.jsonl"))
    db = connect(initialised)
    rids = [r[0] for r in db.execute("SELECT id FROM responses ORDER BY id")]
    start = db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0]
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    errors = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(str(initialised), f"ann{n}", rids, barrier, errors))
        for n in range(PROCESSES)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert found == []
    assert all(p.exitcode == 0 for p in procs)
    undos = LABELS_EACH // 10
    expected = PROCESSES * (LABELS_EACH + undos)
    total = db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0]
    assert total - start == expected
    for n in range(PROCESSES):
        labels = db.execute(
            "SELECT COUNT(*) FROM annotations WHERE annotator = ? AND action = 'label'",
            (f"ann{n}",)).fetchone()[0]
        assert labels == LABELS_EACH
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
