"""The annotation log (migration m010): every label, undo, skip, note, flag and adjudication of
every suite, append-only, in one table `annotations`.

What the columns mean (subjects, roles, actions, payloads) is defined once in
copal_tui.domain.annotation.subjects. The rule for "current" lives here, once, as SQL: an
annotator's current label on a subject is their latest label/undo event there when it is a
label; a subject's current decision is the latest adjudicator label/undo event there when it is
a label (`current_annotations` is the same rule as a view). Every reader of labels uses `CURRENT`,
`CURRENT_DECISION` or the functions below, so the rule is written nowhere else.

Writes take the payload as its model (copal_tui.domain.annotation.payloads), check it is the
one the event carries and serialise it once (`append`), refusing text SQLite cannot store (a
lone surrogate in a note) as a StoreError; they never change a row, and callers open the
transaction with `store.db.write`. Reads return `Annotation`s with the payload as the
stored JSON object.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from store.db import Database, StoreError, utcnow

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import Payload

ANNOTATOR, ADJUDICATOR = "annotator", "adjudicator"


def current_sql(alias: str, role: str) -> str:
    """SQL true when event `alias` is a current label (role annotator: its annotator's on its
    subject) or the current decision (role adjudicator: its subject's, whoever made it). Every
    `+x.action` keeps SQLite on the (suite, subject, role, annotator, id) index: left to itself
    it may filter on `action` first."""
    e, u = alias, f"{alias}_later"
    same = f" AND {u}.annotator = {e}.annotator" if role == ANNOTATOR else ""
    return (f"+{e}.action = 'label' AND {e}.role = '{role}' AND NOT EXISTS (SELECT 1 FROM "
            f"annotations {u} WHERE {u}.suite = {e}.suite AND {u}.subject = {e}.subject "
            f"AND {u}.role = '{role}'{same} AND {u}.id > {e}.id "
            f"AND +{u}.action IN ('label', 'undo'))")


# Event `e` is its annotator's current label; event `e` is its subject's current decision.
CURRENT = current_sql("e", ANNOTATOR)
CURRENT_DECISION = current_sql("e", ADJUDICATOR)
_COLUMNS = ("id, suite, subject, annotator, role, action, payload, content_sha256, campaign, "
            "created_at")


@dataclass(frozen=True)
class Annotation:
    """One event of the log; `payload` is the stored JSON object ({} when there is none)."""

    id: int
    suite: str
    subject: str
    annotator: str
    role: str
    action: str
    payload: dict[str, Any] = field(default_factory=dict)
    content_sha256: str | None = None
    campaign: str | None = None
    created_at: str = ""

    def get(self, key: str, default: Any = None) -> Any:
        return self.payload.get(key, default)

    def row(self) -> dict[str, Any]:
        """The event as one flat mapping (the payload's fields beside the event's), the shape
        the screens' widgets read labels in."""
        return {**self.payload, "id": self.id, "suite": self.suite, "subject": self.subject,
                "annotator": self.annotator, "role": self.role, "action": self.action,
                "content_sha256": self.content_sha256, "campaign": self.campaign,
                "created_at": self.created_at}


def _event(row: Any) -> Annotation:
    payload = row["payload"]
    return Annotation(int(row["id"]), row["suite"], row["subject"], row["annotator"],
                      row["role"], row["action"], json.loads(payload) if payload else {},
                      row["content_sha256"], row["campaign"], row["created_at"])


def _one(db: Database, sql: str, params: Any = ()) -> Annotation | None:
    row = db.execute(sql, params).fetchone()
    return None if row is None else _event(row)


def _all(db: Database, sql: str, params: Any = ()) -> list[Annotation]:
    return [_event(r) for r in db.execute(sql, params)]


# ------------------------------------------------------------------ writing


def _stored(suite: str, role: str, action: str, payload: Payload | None) -> str | None:
    """The payload column of an event: its model as one compact JSON object (every field, in
    the model's order), after `check` refused what the event may not carry."""
    # The domain holds the rule and the payload models; imported here only, so that loading
    # the store (and reading the log) never loads them.
    from copal_tui.domain.annotation.subjects import check

    try:
        check(suite, role, action, payload)
    except ValueError as exc:
        raise StoreError(str(exc)) from None
    if payload is None:
        return None
    return _text(json.dumps(payload.model_dump(), ensure_ascii=False, separators=(",", ":")),
                 f"the {action}")


def _text(value: str, what: str) -> str:
    """`value` when SQLite can store it as text. A lone surrogate (half of a UTF-16 pair: a
    pasted fragment, or bytes a terminal could not decode) is no character: refused as a
    StoreError naming it, nothing written, instead of SQLite's encoding error."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StoreError(f"{what} holds U+{ord(value[exc.start]):04X}, a lone surrogate (half "
                         "of a UTF-16 pair, not a character), which text cannot store; "
                         "nothing was saved") from None
    return value


def append(db: Database, *, suite: str, subject: str, annotator: str, action: str,
           role: str = ANNOTATOR, payload: Payload | None = None,
           content_sha256: str | None = None, campaign: str | None = None,
           created_at: str | None = None) -> int:
    """Append one event; returns its id. The payload is the model the event takes (see
    copal_tui.domain.annotation.subjects.check): another type is a TypeError, an unknown suite,
    role or action a StoreError, and nothing is written."""
    cur = db.execute(
        "INSERT INTO annotations (suite, subject, annotator, role, action, payload, "
        "content_sha256, campaign, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
        (suite, subject, _text(annotator, "the annotator's name"), role, action,
         _stored(suite, role, action, payload), content_sha256, campaign,
         created_at or utcnow()))
    return int(cur.lastrowid or 0)


@dataclass(frozen=True, slots=True)
class NewEvent:
    """One event for `append_many`: the arguments of `append`."""

    suite: str
    subject: str
    annotator: str
    action: str
    role: str = ANNOTATOR
    payload: Payload | None = None
    content_sha256: str | None = None
    campaign: str | None = None
    created_at: str | None = None


def append_many(db: Database, events: Iterable[NewEvent]) -> int:
    """Append events in order, as `append` would one by one (same checks, same rows), with
    one statement; returns how many. An event that may not be written refuses the whole
    batch before any of it is."""
    now = utcnow()
    rows = [(e.suite, e.subject, _text(e.annotator, "the annotator's name"), e.role,
             e.action, _stored(e.suite, e.role, e.action, e.payload), e.content_sha256,
             e.campaign, e.created_at or now) for e in events]
    db.conn.executemany(
        "INSERT INTO annotations (suite, subject, annotator, role, action, payload, "
        "content_sha256, campaign, created_at) VALUES (?,?,?,?,?,?,?,?,?)", rows)
    return len(rows)


def get(db: Database, event_id: int) -> Annotation | None:
    return _one(db, f"SELECT {_COLUMNS} FROM annotations WHERE id = ?", (event_id,))


# ------------------------------------------------------------------ one subject


def current(db: Database, suite: str, subject: str, annotator: str) -> Annotation | None:
    """The annotator's current label on the subject, or None."""
    # Direct on the subject index: the newest label/undo event of theirs decides.
    last = _one(db, f"SELECT {_COLUMNS} FROM annotations WHERE suite = ? AND subject = ? "
                "AND role = 'annotator' AND annotator = ? AND +action IN ('label', 'undo') "
                "ORDER BY id DESC LIMIT 1", (suite, subject, annotator))
    return last if last is not None and last.action == "label" else None


def labels_of(db: Database, suite: str, subject: str) -> list[Annotation]:
    """Every annotator's current label on the subject, by annotator."""
    return _all(db, f"SELECT {_COLUMNS} FROM annotations e WHERE e.suite = ? AND e.subject = ? "
                f"AND {CURRENT} ORDER BY e.annotator", (suite, subject))


def decision(db: Database, suite: str, subject: str) -> Annotation | None:
    """The subject's current decision (adjudication), or None."""
    last = _one(db, f"SELECT {_COLUMNS} FROM annotations WHERE suite = ? AND subject = ? "
                "AND role = 'adjudicator' AND +action IN ('label', 'undo') "
                "ORDER BY id DESC LIMIT 1", (suite, subject))
    return last if last is not None and last.action == "label" else None


def remarks(db: Database, suite: str, subject: str) -> list[Annotation]:
    """Notes and flags left on the subject (by annotators and adjudicators), oldest first."""
    return _all(db, f"SELECT {_COLUMNS} FROM annotations WHERE suite = ? AND subject = ? "
                "AND +action IN ('note', 'flag') ORDER BY id", (suite, subject))


def latest_note(db: Database, suite: str, subject: str, annotator: str) -> str | None:
    """The annotator's latest note on the subject (shown again when they come back)."""
    last = _one(db, f"SELECT {_COLUMNS} FROM annotations WHERE suite = ? AND subject = ? "
                "AND role = 'annotator' AND annotator = ? AND +action = 'note' "
                "ORDER BY id DESC LIMIT 1", (suite, subject, annotator))
    return None if last is None else last.get("note")


# ------------------------------------------------------------------ one person


def last_current(db: Database, suite: str, annotator: str, *, role: str = ANNOTATOR,
                 campaign: str | None = None, judge: str | None = None) -> Annotation | None:
    """The person's most recent label (decision) that is still current (what undo retracts);
    with `campaign`, among that campaign's subjects only; with `judge` (judge mistakes), among
    reviews of that judge's predictions only."""
    # Walks their events newest first on the (annotator, suite, role, id) index and stops at
    # the first one still current.
    rule = CURRENT if role == ANNOTATOR else CURRENT_DECISION
    within, params = "", [annotator, suite, role]
    if campaign is not None:
        within += (" AND EXISTS (SELECT 1 FROM campaign_subjects c WHERE c.campaign = ? "
                   "AND c.subject = e.subject)")
        params.append(campaign)
    if judge is not None:  # a dialogue subject is [dialogue, judge, attempt, turn]
        within += " AND json_extract(e.subject, '$[1]') = ?"
        params.append(judge)
    return _one(db, f"SELECT {_COLUMNS} FROM annotations e WHERE e.annotator = ? "
                f"AND e.suite = ? AND e.role = ? AND {rule}{within} ORDER BY e.id DESC LIMIT 1",
                params)


def events_of(db: Database, annotator: str, suite: str | None = None,
              role: str | None = None) -> list[Annotation]:
    """Every event of the person (in one suite, one role), oldest first."""
    return _all(db, f"SELECT {_COLUMNS} FROM annotations WHERE annotator = ? "
                "AND (? IS NULL OR suite = ?) AND (? IS NULL OR role = ?) ORDER BY id",
                (annotator, suite, suite, role, role))


# ------------------------------------------------------------------ whole suites


def iter_current(db: Database, suite: str, role: str = ANNOTATOR) -> Iterator[Annotation]:
    """Every current label (role annotator; by subject, then annotator) or current decision
    (role adjudicator; by subject) of the suite."""
    rule = CURRENT if role == ANNOTATOR else CURRENT_DECISION
    for row in db.execute(f"SELECT {_COLUMNS} FROM annotations e WHERE e.suite = ? AND {rule} "
                          "ORDER BY e.subject, e.annotator", (suite,)):
        yield _event(row)


def count(db: Database, suite: str | None = None, role: str | None = None,
          annotator: str | None = None) -> int:
    """Events (of a suite, a role, a person)."""
    return int(db.execute(
        "SELECT COUNT(*) FROM annotations WHERE (? IS NULL OR suite = ?) AND "
        "(? IS NULL OR role = ?) AND (? IS NULL OR annotator = ?)",
        (suite, suite, role, role, annotator, annotator)).fetchone()[0])


def count_current(db: Database, suite: str, role: str = ANNOTATOR) -> int:
    rule = CURRENT if role == ANNOTATOR else CURRENT_DECISION
    return int(db.execute(f"SELECT COUNT(*) FROM annotations e WHERE e.suite = ? AND {rule}",
                          (suite,)).fetchone()[0])
