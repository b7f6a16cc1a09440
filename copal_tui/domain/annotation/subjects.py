"""What an annotation is: the roles and actions of the one append-only annotation log
(store/annotation/annotations.py), how each suite names the subject of an annotation, and what
each kind of event carries.

Subjects (the log's `subject` column; unique within a suite):
- copal: a response id (`responses.id`);
- compass: a COMPASS response id (`compass_responses.id`);
- dialogues: one judge attempt's prediction on one dialogue turn, written as the compact JSON
  array `[dialogue_id, judge, attempt, turn_index]` (`dialogue_subject`). Dialogue ids and judge
  names may contain any separator ("airline/d1"), JSON quotes them unambiguously, and SQLite
  reads the parts back with json_extract.

Events: `label` (an annotator's label, or with role `adjudicator` a decision: the reference
label of the subject), `undo` (retracts the same person's current label; an adjudicator's undo
retracts the subject's current decision), `skip`, `note` and `flag`. An annotator's current
label on a subject is their latest label/undo event there when it is a label; a subject's
current decision is the latest adjudicator label/undo event there when it is a label.

Payloads are the pydantic models of `copal_tui.domain.annotation.payloads`, built by whoever
writes (a label screen, an import) and handed as they are to the log, which checks that an
event carries the model it takes (`check`) and stores it as a JSON object. Only writers load
that module: reading the log, and so starting the label screens, never loads pydantic. A
decision carries the same payload as the suite's label. Derived fields are stored as the
domain computed them at write time (a COPAL label's error and direction from its marks on the
contract as stored then, see copal_tui.domain.contract), as they were before the log existed:
the report reads them in bulk from SQL, a label imported with an error but no marks has
nothing to derive them from, and a change of the rule is a migration (as m009 was). A COMPASS
label's `aligned` is not stored: it follows from the query type on read, as it always did.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from copal_tui.domain.suites import suite as suite_named

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import Payload

ANNOTATOR: Final = "annotator"
ADJUDICATOR: Final = "adjudicator"
ROLES: Final = (ANNOTATOR, ADJUDICATOR)
ACTIONS: Final = ("label", "undo", "skip", "note", "flag")
# Why an annotator or adjudicator flags a subject's item (the flag screen's 1-3).
FLAG_REASONS: Final = ("contract defect", "unnatural query", "ambiguous")


def dialogue_subject(dialogue_id: str, judge: str, attempt: int, turn_index: int) -> str:
    """The subject of a review of one judge attempt's prediction on one turn."""
    return json.dumps([dialogue_id, judge, int(attempt), int(turn_index)], ensure_ascii=False,
                      separators=(",", ":"))


def dialogue_parts(subject: str) -> tuple[str, str, int, int]:
    """(dialogue_id, judge, attempt, turn_index) of a dialogue subject."""
    d, j, a, t = json.loads(subject)
    return str(d), str(j), int(a), int(t)


def check(suite: str, role: str, action: str, payload: Payload | None) -> None:
    """Refuse an event before anything is written: ValueError naming an unknown suite, role or
    action, or a note (flag) whose remark is a flag (note); TypeError when the payload is not
    the model the event takes (the suite's label model for a label or decision, a Remark for
    a note or flag, nothing for an undo or skip)."""
    suite_named(suite)  # ValueError naming the registered suites
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r} (one of {', '.join(ROLES)})")
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r} (one of {', '.join(ACTIONS)})")
    if action in ("undo", "skip"):
        if payload is not None:
            article = "an" if action == "undo" else "a"
            raise TypeError(f"{article} {action} carries no payload, not a "
                            f"{type(payload).__name__}")
        return
    # Imported here, not at the top, for start-up speed: only a write reaches this line, and
    # reading the log (so starting a label screen) must not load pydantic.
    from copal_tui.domain.annotation.payloads import Remark, model_for

    expected = model_for(suite, action)
    if type(payload) is not expected:
        raise TypeError(f"a {suite} {action} carries a {expected.__name__}, not a "
                        f"{type(payload).__name__}")
    if isinstance(payload, Remark) and payload.action != action:
        raise ValueError(f"a {action} event given a {payload.action}")
