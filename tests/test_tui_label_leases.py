"""Two label-queue apps at once on one database: leases keep them off each other's slots."""

from __future__ import annotations

from copal_tui.tui.app import make_app
from copal_tui.tui.settings import Settings
from tests.tui_label_support import build_db, current_labels, rows, settle


def _app(db, who, overlap):
    return make_app(db, mode="label", annotator=who, settings=Settings(overlap=overlap))


def _live(db):
    return rows(db, "SELECT subject AS response_id, slot, annotator FROM annotation_leases "
                "WHERE suite = 'copal' AND role = 'annotator' "
                "AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now') ORDER BY subject")


async def test_two_annotators_at_once_never_get_the_same_slot(tmp_path):
    # Overlap 1 and six unlabelled responses: each response has one slot, so the two
    # annotators must be handed different responses while both are working.
    db = build_db(tmp_path, extra_responses=6)
    a, b = _app(db, "ann", 1), _app(db, "bob", 1)
    async with a.run_test(size=(80, 24)) as pa, b.run_test(size=(80, 24)) as pb:
        await settle(pa)
        await settle(pb)
        seen_a, seen_b = [], []
        for _ in range(3):
            assert a.screen.rid is not None and b.screen.rid is not None
            assert a.screen.rid != b.screen.rid
            seen_a.append(a.screen.rid)
            seen_b.append(b.screen.rid)
            live = _live(db)
            assert len({(r["response_id"], r["slot"]) for r in live}) == len(live)
            await pa.press("c")
            await pa.pause()
            await pb.press("1", "enter")
            await pb.pause()
        # Six responses, three each: the queue is now empty for both.
        assert a.screen.rid is None and b.screen.rid is None
    labels = current_labels(db, "annotator IN ('ann', 'bob')")
    assert len(labels) == 6
    assert len({r["response_id"] for r in labels}) == 6  # nobody labelled the same response
    assert {r["response_id"] for r in labels if r["annotator"] == "ann"} == set(seen_a)
    assert {r["response_id"] for r in labels if r["annotator"] == "bob"} == set(seen_b)


async def test_with_overlap_two_annotators_share_a_response_in_different_slots(tmp_path):
    db = build_db(tmp_path, extra_responses=2)
    a, b, c = _app(db, "ann", 2), _app(db, "bob", 2), _app(db, "cid", 2)
    async with a.run_test(size=(80, 24)) as pa, b.run_test(size=(80, 24)) as pb:
        await settle(pa)
        await settle(pb)
        assert a.screen.rid == b.screen.rid  # first open response, two slots
        slots = {r["annotator"]: r["slot"] for r in _live(db)}
        assert sorted(slots.values()) == [0, 1]
        async with c.run_test(size=(80, 24)) as pc:
            await settle(pc)
            # Both slots of the first response are leased: the third annotator gets the next.
            assert c.screen.rid not in (None, a.screen.rid)
            first = a.screen.rid
            await pa.press("c")
            await pa.pause()
            await pb.press("c")
            await pb.pause()
            # ann joins cid on the second response; its two slots are then taken, so bob,
            # done with the first, has nothing open.
            assert a.screen.rid == c.screen.rid != first
            assert b.screen.rid is None
    assert len(current_labels(db, "subject = ?", (first,))) == 2


async def test_an_expired_lease_frees_its_slot(tmp_path):
    db = build_db(tmp_path, extra_responses=1)
    a = _app(db, "ann", 1)
    async with a.run_test(size=(80, 24)) as pa:
        await settle(pa)
        held = a.screen.rid
        assert held is not None
        b = _app(db, "bob", 1)
        async with b.run_test(size=(80, 24)) as pb:
            await settle(pb)
            assert b.screen.rid is None  # the only open response is leased to ann
        # ann's lease runs out (as if she walked away for longer than lease_minutes).
        from store.db import connect

        conn = connect(db)
        conn.execute("UPDATE annotation_leases SET expires_at = '2000-01-01T00:00:00.000000Z'")
        conn.conn.close()
        b2 = _app(db, "bob", 1)
        async with b2.run_test(size=(80, 24)) as pb:
            await settle(pb)
            assert b2.screen.rid == held
        assert [r["annotator"] for r in _live(db)] == ["bob"]


def _annotate(db_path: str, who: str, overlap: int) -> list[str]:
    """One annotator process: take, label, repeat until the queue is empty."""
    from copal_tui.services.annotation.queue import AnnotationQueue
    from copal_tui.services.annotation.suites import copal_label
    from store.db import connect

    conn = connect(db_path)
    queue = AnnotationQueue(conn, "copal", who, overlap=overlap)
    queue.prepare()  # every process races to fill the order: only one may write it
    done = []
    rid = queue.resume()
    while rid is not None:
        queue.submit(rid, copal_label(conn, rid, []))
        done.append(rid)
        rid = queue.resume()
    conn.conn.close()
    return done


def test_annotator_processes_racing_never_share_a_slot(tmp_path):
    import multiprocessing

    db = build_db(tmp_path, extra_responses=40)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        results = pool.starmap(_annotate, [(str(db), f"p{n}", 1) for n in range(4)])
    labelled = [rid for done in results for rid in done]
    # Overlap 1: the 40 open responses were split between the processes, none twice.
    assert len(labelled) == len(set(labelled)) == 40
    got = rows(db, "SELECT subject, COUNT(*) AS n FROM current_annotations WHERE suite = "
               "'copal' AND role = 'annotator' AND annotator LIKE 'p%' GROUP BY subject")
    assert len(got) == 40 and {r["n"] for r in got} == {1}
    assert len(rows(db, "SELECT DISTINCT position FROM campaign_subjects "
                    "WHERE campaign = 'default:copal'")) == 112
