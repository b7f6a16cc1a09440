"""Labels travel from the screens to the annotation log as their suite's payload model
(copal_tui.domain.annotation.payloads), never as a dict: the queue, adjudication and the log
refuse any other type, or another suite's model, with a clear error before anything is written;
the row is the model serialised once, its derived fields as the stored contract gives them.

The response used is the showcase item harbor-clinics I01's extra response: one required
content item R1 and two forbidden content items F1, F2. The paper's rule: the response errs
(e = 1) when a required item is missing or a forbidden one is present; a missing required
content item is over-enforcement (it withheld what it should give), a forbidden item present
is under-enforcement.
"""

from __future__ import annotations

import pytest

from copal_tui.domain.annotation.payloads import CompassLabel, CopalLabel, Remark
from copal_tui.services.annotation import adjudication
from copal_tui.services.annotation.queue import AnnotationQueue
from copal_tui.services.annotation.views import copal_context
from store.annotation import annotations as log
from store.db import connect
from tests.tui_label_support import build_db

RID = "harbor-clinics:I01:extra0"


@pytest.fixture
def queue(tmp_path):
    conn = connect(build_db(tmp_path, extra_responses=1, judge=False))
    q = AnnotationQueue(conn, "copal", "ann", overlap=2)
    q.prepare()
    # Every showcase response has two labels already: with overlap 2 only the extra is open.
    assert q.resume() == RID
    yield q
    conn.close()


def _events(q: AnnotationQueue) -> list[tuple[str, str | None]]:
    return [(r[0], r[1]) for r in q.db.execute(
        "SELECT action, payload FROM annotations WHERE subject = ? ORDER BY id", (RID,))]


def test_a_dict_or_another_suites_model_is_refused_before_anything_is_written(
        queue: AnnotationQueue) -> None:
    # Annotated, so mypy checks the calls: each wrong type below needs its ignore.
    with pytest.raises(TypeError, match="a copal label carries a CopalLabel, not a dict"):
        queue.submit(RID, {"observed": [], "facet": None})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="carries a CopalLabel, not a CompassLabel"):
        queue.submit(RID, CompassLabel(refused=True, compliant=True))
    with pytest.raises(TypeError, match="a copal note carries a Remark, not a dict"):
        queue.remark(RID, {"note": "odd"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a copal label carries a CopalLabel, not a dict"):
        adjudication.decide(queue.db, "copal", RID, "lead",
                            {"observed": ["R1"]})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a copal flag carries a Remark, not a dict"):
        log.append(queue.db, suite="copal", subject=RID, annotator="ann", action="flag",
                   payload={"flag": "ambiguous"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="an undo carries no payload"):
        log.append(queue.db, suite="copal", subject=RID, annotator="ann", action="undo",
                   payload=Remark(note="x"))
    assert _events(queue) == []


def test_the_row_is_the_screens_model_with_what_the_stored_contract_gives(
        queue: AnnotationQueue) -> None:
    ctx = copal_context(queue.db, RID)
    assert ctx is not None
    # What the label screen builds: no mark on the contract it shows (R1 missing).
    label = CopalLabel.from_marks(ctx.required, ctx.forbidden, [], facet="over_refusal")
    assert (label.error, label.direction) == (1, "over_enforcement")
    queue.submit(RID, label)
    # A model whose derived fields disagree with its marks (R1 given, F2 present: an
    # under-enforcing error, not "correct") is stored as the stored contract says, and the
    # facet goes with the error.
    queue.submit(RID, CopalLabel(observed=["R1", "F2"], error=0, direction="none",
                                 facet="over_refusal"))
    queue.remark(RID, Remark(note="odd wording \u00e9"))
    queue.remark(RID, Remark(flag="ambiguous"))
    adjudication.decide(queue.db, "copal", RID, "lead",
                        CopalLabel.from_marks(ctx.required, ctx.forbidden, ["R1"], note="ok"))
    assert _events(queue) == [
        ("label", '{"observed":[],"error":1,"direction":"over_enforcement",'
                  '"facet":"over_refusal","note":null}'),
        ("label", '{"observed":["R1","F2"],"error":1,"direction":"under_enforcement",'
                  '"facet":"over_refusal","note":null}'),
        ("note", '{"note":"odd wording \u00e9","flag":null}'),
        ("flag", '{"note":null,"flag":"ambiguous"}'),
        ("label", '{"observed":["R1"],"error":0,"direction":"none","facet":null,'
                  '"note":"ok"}'),
    ]
