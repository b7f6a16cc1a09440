"""store/annotation/dialogue_reviews.py and store/browse/dialogue.py: which predictions are wrong (and
that the queue covers what the metrics in copal_tui.domain.dialogue count wrong on the sample
set: the same turns scored, the same judges binary), the append-only review events
(the annotation log, through the one queue of copal_tui.services.annotation.queue), the
queue's order and resume, the error-type counts for the report, and the dialogue list's
filters."""

from __future__ import annotations

from collections import defaultdict

import pytest

from copal_tui.domain import dialogue as domain
from copal_tui.domain.annotation import subjects as log_domain
from copal_tui.domain.annotation.payloads import DialogueReview
from copal_tui.interchange.complibench_import import import_conversations, import_judge_outputs
from copal_tui.services.annotation.queue import AnnotationQueue
from store.annotation import dialogue_reviews as reviews
from store.annotation.dialogue_reviews import ReviewKey
from store.artifacts import dialogue
from store.browse import dialogue as browse
from store.browse.lists import FilterError, PageRequest
from store.db import StoreError, connect
from tests.dialogue_tui_support import D1, D3, MISTAKES, V1, build_dialogue_db, events


@pytest.fixture
def db(tmp_path):
    conn = connect(build_dialogue_db(tmp_path))
    yield conn
    conn.close()


def metric_mistakes(db) -> dict[tuple[str, int], int]:
    """Wrong predictions per (judge, attempt) as the domain metrics count them."""
    truth: dict[str, list[domain.TurnTruth]] = defaultdict(list)
    for t in dialogue.truth_turns(db):
        truth[t.dialogue_id].append(domain.TurnTruth(
            t.turn_index, domain.Guideline.of(t.category, t.key, t.phase), bool(t.violation),
            t.role))
    preds: dict[tuple[str, int, str], list[domain.TurnPrediction]] = defaultdict(list)
    for p in dialogue.predictions(db):
        g = None if p.category is None and p.key is None else \
            domain.Guideline.of(p.category, p.key, p.phase)
        preds[(p.judge, p.attempt, p.dialogue_id)].append(
            domain.TurnPrediction(p.turn_index, g, bool(p.violation)))
    facts: dict[str, list[tuple[bool, str | None]]] = defaultdict(list)
    scored: dict[tuple[str, int], list[str]] = defaultdict(list)
    for a in dialogue.attempts(db):
        facts[a.judge].append((bool(a.binary_verdicts), a.failure))
        if domain.scored_attempt(a.failure):
            scored[(a.judge, a.attempt)].append(a.dialogue_id)
    out = {}
    for (judge, attempt), dids in scored.items():
        s = domain.score_files([(truth[d], preds.get((judge, attempt, d), [])) for d in dids],
                               binary=domain.judge_is_binary(facts[judge]))
        right_c = round((s.compliant_turn_accuracy or 0) * s.compliant_turns)
        flagged = round((s.violation_detection_accuracy or 0) * s.violation_turns)
        out[(judge, attempt)] = (s.compliant_turns - right_c) + (s.violation_turns - flagged)
    return out


def queue(db, who="ana", judge=None):
    # Overlap 5: these tests are about order and "done", not about sharing mistakes.
    q = AnnotationQueue(db, "dialogue", who, judge=judge, overlap=5)
    q.prepare()
    return q


def subject(key: ReviewKey) -> str:
    return reviews.subject_of(key)


def review(q, key, error_type, note=None):
    return q.submit(subject(key), DialogueReview(error_type=error_type, note=note))


def key_after(q, key=None):
    """The reviewer's next open mistake after `key` (from the start when None)."""
    found = q.candidate(0 if key is None else q.position(subject(key)) or 0)
    return None if found is None else reviews.key_of(found)


def per_attempt(keys: list[ReviewKey]) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = defaultdict(int)
    for k in keys:
        out[(k.judge, k.attempt)] += 1
    return out


def test_mistakes_in_queue_order_with_their_kinds(db):
    assert reviews.mistakes(db) == [k for k, _ in MISTAKES]
    assert [reviews.mistake(db, k).kind for k, _ in MISTAKES] == [kind for _, kind in MISTAKES]
    assert reviews.mistakes(db, "judge-b") == [k for k, _ in MISTAKES if k.judge == "judge-b"]
    # Flagged under another guideline is right for violation detection: not in the queue.
    assert reviews.mistake(db, ReviewKey(D3, "judge-a", 1, 3)).kind == "flagged_elsewhere"
    # Category 1 turns are scored like the others (right here); failed attempts are not.
    assert reviews.mistake(db, ReviewKey(D1, "judge-a", 1, 1)).kind == "right"
    assert reviews.mistake(db, ReviewKey(D3, "judge-a", 2, 1)) is None
    assert reviews.queue_total(db) == 5 and reviews.queue_total(db, "judge-a") == 3


def test_the_queue_agrees_with_the_metrics_on_the_sample_set(initialised, samples):
    db = connect(initialised)
    root = samples / "complibench"
    import_conversations(db, root)
    import_judge_outputs(db, root, "sample-judge")
    found = reviews.mistakes(db)
    # The sample README plants 11 mistakes; two are violations flagged under another
    # guideline, which count against strict detection only.
    assert len(found) == 9
    assert dict(per_attempt(found)) == {k: v for k, v in metric_mistakes(db).items() if v}


def test_label_skip_undo_append_and_resume(db):
    first, second, third = (k for k, _ in MISTAKES[:3])
    ana = queue(db)
    assert key_after(ana) == first
    review(ana, first, "scope_misattribution", note="phase two wording")
    ana.skip(subject(second))
    assert key_after(ana, first) == third
    assert key_after(queue(db, "ben")) == first  # another reviewer's place is their own
    assert ana.current(subject(first)).get("error_type") == "scope_misattribution"
    assert ana.mine() == 1
    undone = ana.undo()
    assert reviews.key_of(undone.subject) == first and undone.get("note") == "phase two wording"
    assert ana.current(subject(first)) is None
    assert key_after(ana) == first  # the undo reopened it
    assert ana.undo() is None  # the skip is not a review to undo
    assert [e[4:6] for e in events(db_path(db), "ana")] == [
        ("label", "scope_misattribution"), ("skip", None), ("undo", None)]
    # `after` walks on from a position; past the end there is nothing.
    assert key_after(ana, first) == third
    assert key_after(queue(db, "ana", "judge-a"), third) is None


def db_path(db):
    return db.execute("PRAGMA database_list").fetchone()["file"]


def test_neighbours_walk_the_queue_done_or_not(db):
    keys = [k for k, _ in MISTAKES]
    q, only_a = queue(db), queue(db, judge="judge-a")

    def step(queue_, key, forward):
        found = queue_.neighbour(None if key is None else subject(key), forward)
        return None if found is None else reviews.key_of(found)

    assert step(q, keys[0], True) == keys[1]
    assert step(q, keys[0], False) is None
    assert step(q, None, False) == keys[-1]
    assert step(q, None, True) is None
    assert step(only_a, keys[2], True) is None


def test_only_wrong_predictions_and_known_types_can_be_reviewed(db):
    ana = queue(db)
    with pytest.raises(StoreError, match="not a wrong prediction"):
        review(ana, ReviewKey(D1, "judge-a", 1, 7), "other")  # right
    with pytest.raises(StoreError, match="not a wrong prediction"):
        ana.skip(subject(ReviewKey(D3, "judge-a", 1, 3)))  # flagged elsewhere
    # The review's model refuses a type outside the taxonomy when it is built.
    with pytest.raises(ValueError, match="unknown error type"):
        review(ana, MISTAKES[0][0], "sloppy")
    assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0


def test_error_type_counts_have_a_row_for_every_type(db):
    keys = [k for k, _ in MISTAKES]
    ana, ben = queue(db), queue(db, "ben")
    review(ana, keys[0], "scope_misattribution")
    review(ben, keys[0], "scope_misattribution")
    review(ana, keys[1], "non_equivalent")
    review(ana, keys[2], "overly_strict")
    ana.undo()  # the overly_strict review is retracted
    review(ana, keys[3], "ignored_evidence")
    rows = reviews.error_type_rows(db)
    got = {(r.judge, r.domain, r.error_type): r.count for r in rows}
    pairs = [("judge-a", "airline"), ("judge-a", "retail"), ("judge-a", "all"),
             ("judge-b", "airline"), ("judge-b", "all")]
    assert len(rows) == len(pairs) * len(reviews.ERROR_TYPES)
    assert set(got) == {(j, d, t) for j, d in pairs for t in reviews.ERROR_TYPES}
    assert {k: v for k, v in got.items() if v} == {
        ("judge-a", "airline", "scope_misattribution"): 2,
        ("judge-a", "all", "scope_misattribution"): 2,
        ("judge-a", "airline", "non_equivalent"): 1, ("judge-a", "all", "non_equivalent"): 1,
        ("judge-b", "airline", "ignored_evidence"): 1, ("judge-b", "all", "ignored_evidence"): 1,
    }
    assert all(r.domain != "all" for r in reviews.error_type_rows(db, totals=False))


def test_the_review_payload_accepts_the_taxonomy_and_nothing_else(db):
    for et in reviews.ERROR_TYPES:
        assert DialogueReview(error_type=et).model_dump()["error_type"] == et
    with pytest.raises(ValueError, match="unknown error type"):
        DialogueReview(error_type="sloppy")


def test_subjects_are_written_alike_by_the_store_and_the_domain():
    key = ReviewKey("d/\u00e9\"1", "judge:a", 2, 7)
    assert reviews.subject_of(key) == log_domain.dialogue_subject(*key)
    assert log_domain.dialogue_parts(reviews.subject_of(key)) == tuple(key)


def page_ids(db, text_filters: dict[str, str] | None = None, search: str = "") -> list[str]:
    page = browse.dialogues_page(db, PageRequest(search=search, filters=text_filters or {}))
    return [r["id"] for r in page.rows]


def test_dialogue_list_counts_and_filters(db):
    page = browse.dialogues_page(db, PageRequest())
    row = {r["id"]: r for r in page.rows}[D1]
    assert (row["turns"], row["violations"], row["judges"], row["attempts"]) == (8, 1, 2, 3)
    assert browse.wrong_counts(db, [D1, V1, D3]) == {D1: 5, V1: 0, D3: 0}
    assert page_ids(db, {"domain": "air"}) == [D1, V1]
    assert page_ids(db, {"judge": "judge-b"}) == [D1]
    assert page_ids(db, {"violation": "yes"}) == [D1, D3]
    assert page_ids(db, {"violation": "no"}) == [V1]
    assert page_ids(db, {"variant": "yes"}) == [V1]
    assert page_ids(db, {"wrong": "yes"}) == [D1]
    assert page_ids(db, search="shopped") == [D3]  # free words reach the turns' text
    assert page_ids(db, {"domain": "airline", "variant": "no"}, "refund") == [D1]
    with pytest.raises(FilterError, match="this list knows"):
        page_ids(db, {"model": "x"})


def test_the_store_modules_import_only_the_domain_of_copal():
    import subprocess
    import sys

    code = ("import sys\nimport store.annotation.dialogue_reviews, store.browse.dialogue\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('textual', 'litellm', 'rich', 'copal_tui') and not "
            "m.startswith('copal_tui.domain'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "copal_tui"  # the package itself, for its domain
