"""What an annotation is: the suites, roles and actions of the one append-only annotation log
(store/annotation/annotations.py), how each suite names the subject of an annotation, and what each kind
of event carries.

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

Payloads are JSON objects checked on every write by the pydantic models of
`copal_tui.domain.annotation_payloads` (`validate`), which are imported only then: reading the
log, and so starting the label screens, never loads pydantic. A decision carries the same
payload as the suite's label. Derived fields are stored as the domain computed them at write
time (a COPAL label's error and direction from its marks, see copal_tui.domain.contract), as
they were before the log existed: the report reads them in bulk from SQL, a label imported
with an error but no marks has nothing to derive them from, and a change of the rule is a
migration (as m009 was). A COMPASS label's `aligned` is not stored: it follows from the query
type on read, as it always did.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

SUITES: Final = ("copal", "compass", "dialogues")
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


def validate(suite: str, role: str, action: str,
             payload: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The payload as stored (every field of its model, in the model's order), or ValueError
    naming what is wrong. Undo and skip carry nothing."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r} (one of {', '.join(SUITES)})")
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r} (one of {', '.join(ROLES)})")
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r} (one of {', '.join(ACTIONS)})")
    if action in ("undo", "skip"):
        if payload:
            raise ValueError(f"a {action} carries no payload")
        return None
    from pydantic import ValidationError

    from copal_tui.domain.annotation_payloads import model_for

    try:
        return model_for(suite, action).model_validate(dict(payload or {})).model_dump()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "payload"
        raise ValueError(f"{suite} {action}: {where}: {first['msg']}") from None
