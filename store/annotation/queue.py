"""SQL of the annotation queue, the same for every suite (see
copal_tui.services.annotation.queue for the rules): walking a campaign's frozen list, leases
(`annotation_leases`), and progress.

A queue is one campaign read up to a cutoff (the annotator's frozen prefix of a default
campaign, or all of a sample campaign). Every walk is keyset-paged on the campaign's
(campaign, position) key with LIMIT, and every test of a subject is an index seek on the
annotation log's (suite, subject, role, annotator, id) index, so a 100,000-subject queue costs
a seek per subject looked at, not a load. Timestamps are ISO text from `store.db.utcnow`, so
"live" is a plain string comparison `expires_at > now`. Named parameters: :suite, :campaign,
:cutoff, :who, :now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.annotation.annotations import CURRENT
from store.db import Database


@dataclass(frozen=True)
class Place:
    """A subject at its position in a campaign."""

    subject: str
    position: int


@dataclass(frozen=True)
class Lease:
    suite: str
    subject: str
    role: str
    slot: int
    annotator: str
    leased_at: str
    expires_at: str


@dataclass(frozen=True)
class Totals:
    total: int  # subjects in the queue
    filled: int  # label slots filled, capped at the overlap per subject
    slots: int  # total * overlap

# `:who` is done with subject {s}: labelled or skipped it and did not undo since.
_DONE = (
    "EXISTS (SELECT 1 FROM annotations e WHERE e.suite = :suite AND e.subject = {s} "
    "AND e.role = 'annotator' AND e.annotator = :who AND +e.action IN ('label', 'skip') "
    "AND NOT EXISTS (SELECT 1 FROM annotations u WHERE u.suite = e.suite "
    "AND u.subject = e.subject AND u.role = 'annotator' AND u.annotator = e.annotator "
    "AND +u.action = 'undo' AND u.id > e.id))"
)
# How many others hold subject {s}: a current label, or a live lease of role {role}.
_HOLDERS = (
    "(SELECT COUNT(*) FROM (SELECT e.annotator FROM annotations e WHERE e.suite = :suite "
    "AND e.subject = {s} AND e.role = 'annotator' AND e.annotator != :who AND " + CURRENT +
    " UNION SELECT k.annotator FROM annotation_leases k WHERE k.suite = :suite "
    "AND k.subject = {s} AND k.role = 'annotator' AND k.annotator != :who "
    "AND k.expires_at > :now))"
)
_IN_QUEUE = "c.campaign = :campaign AND c.position <= :cutoff"


def _params(suite: str, campaign: str, cutoff: int, who: str = "", now: str = "",
            **more: Any) -> dict[str, Any]:
    return {"suite": suite, "campaign": campaign, "cutoff": cutoff, "who": who, "now": now,
            **more}


# ------------------------------------------------------------------ walking the campaign


def next_open(db: Database, suite: str, campaign: str, cutoff: int, who: str, overlap: int,
              now: str, after: int = 0, limit: int = 1) -> list[Place]:
    """The first subjects after position `after` that `who` may take: not done by them, and
    fewer than `overlap` others holding a current label or a live lease."""
    sql = (f"SELECT c.subject, c.position FROM campaign_subjects c WHERE {_IN_QUEUE} "
           f"AND c.position > :after AND NOT {_DONE.format(s='c.subject')} "
           f"AND {_HOLDERS.format(s='c.subject')} < :overlap ORDER BY c.position LIMIT :limit")
    return [Place(r[0], int(r[1])) for r in db.execute(sql, _params(
        suite, campaign, cutoff, who, now, after=after, overlap=overlap, limit=limit))]


def neighbour(db: Database, campaign: str, cutoff: int, position: int,
              forward: bool) -> Place | None:
    """The next (previous) subject of the queue, done or not."""
    op, order = (">", "ASC") if forward else ("<", "DESC")
    row = db.execute(f"SELECT c.subject, c.position FROM campaign_subjects c WHERE {_IN_QUEUE} "
                     f"AND c.position {op} :pos ORDER BY c.position {order} LIMIT 1",
                     {"campaign": campaign, "cutoff": cutoff, "pos": position}).fetchone()
    return None if row is None else Place(row[0], int(row[1]))


def position_of(db: Database, campaign: str, subject: str) -> int | None:
    row = db.execute("SELECT position FROM campaign_subjects WHERE campaign = ? AND subject = ?",
                     (campaign, subject)).fetchone()
    return None if row is None else int(row[0])


def trail_step(db: Database, suite: str, campaign: str, cutoff: int, who: str, position: int,
               forward: bool, now: str) -> Place | None:
    """The previous/next subject on `who`'s trail (labelled by them or leased to them live).
    Driven from their own events and leases (few), never by scanning the queue."""
    op, order = (">", "ASC") if forward else ("<", "DESC")
    row = db.execute(
        f"SELECT c.subject, c.position FROM campaign_subjects c WHERE {_IN_QUEUE} "
        "AND c.subject IN (SELECT e.subject FROM annotations e WHERE e.annotator = :who "
        f"AND e.suite = :suite AND {CURRENT} UNION SELECT k.subject FROM annotation_leases k "
        "WHERE k.suite = :suite AND k.role = 'annotator' AND k.annotator = :who "
        f"AND k.expires_at > :now) AND c.position {op} :pos ORDER BY c.position {order} LIMIT 1",
        _params(suite, campaign, cutoff, who, now, pos=position)).fetchone()
    return None if row is None else Place(row[0], int(row[1]))


def open_lease(db: Database, suite: str, campaign: str, cutoff: int, who: str,
               now: str) -> str | None:
    """`who`'s earliest live lease on a subject of the queue they have not finished (resume)."""
    row = db.execute(
        "SELECT k.subject FROM annotation_leases k JOIN campaign_subjects c "
        f"ON c.campaign = :campaign AND c.subject = k.subject WHERE k.suite = :suite "
        "AND k.role = 'annotator' AND k.annotator = :who AND k.expires_at > :now "
        f"AND c.position <= :cutoff AND NOT {_DONE.format(s='k.subject')} "
        "ORDER BY c.position LIMIT 1", _params(suite, campaign, cutoff, who, now)).fetchone()
    return None if row is None else str(row[0])


# ------------------------------------------------------------------ leases


def holders(db: Database, suite: str, subject: str, who: str, now: str) -> int:
    """Others holding the subject: a current label or a live annotator lease."""
    return int(db.execute(f"SELECT {_HOLDERS.format(s=':subject')}",
                          {"suite": suite, "subject": subject, "who": who,
                           "now": now}).fetchone()[0])


def held_slots(db: Database, suite: str, role: str, subject: str, now: str) -> set[int]:
    """Slots still owned: a live lease, or (annotators) a holder with a current label."""
    owned = ""
    if role == "annotator":
        owned = (" OR EXISTS (SELECT 1 FROM annotations e WHERE e.suite = k.suite "
                 "AND e.subject = k.subject AND e.role = 'annotator' "
                 f"AND e.annotator = k.annotator AND {CURRENT})")
    return {int(r[0]) for r in db.execute(
        "SELECT k.slot FROM annotation_leases k WHERE k.suite = ? AND k.role = ? "
        f"AND k.subject = ? AND (k.expires_at > ?{owned})", (suite, role, subject, now))}


def drop_stale_leases(db: Database, suite: str, role: str, subject: str, now: str) -> None:
    """Free the slots of expired leases whose holder left without a label."""
    keep = ""
    if role == "annotator":
        keep = (" AND NOT EXISTS (SELECT 1 FROM annotations e WHERE e.suite = "
                "annotation_leases.suite AND e.subject = annotation_leases.subject "
                "AND e.role = 'annotator' AND e.annotator = annotation_leases.annotator "
                f"AND {CURRENT})")
    db.execute("DELETE FROM annotation_leases WHERE suite = ? AND role = ? AND subject = ? "
               f"AND expires_at <= ?{keep}", (suite, role, subject, now))


def has_lease(db: Database, suite: str, role: str, subject: str, who: str) -> bool:
    return db.execute("SELECT 1 FROM annotation_leases WHERE suite = ? AND role = ? AND "
                      "subject = ? AND annotator = ?", (suite, role, subject, who)
                      ).fetchone() is not None


def put_lease(db: Database, suite: str, role: str, subject: str, who: str, slot: int, now: str,
              expires: str) -> None:
    db.execute(
        "INSERT INTO annotation_leases (suite, subject, role, slot, annotator, leased_at, "
        "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (suite, subject, role, annotator) "
        "DO UPDATE SET leased_at = excluded.leased_at, expires_at = excluded.expires_at",
        (suite, subject, role, slot, who, now, expires))


def extend_lease(db: Database, suite: str, role: str, subject: str, who: str,
                 expires: str) -> None:
    db.execute("UPDATE annotation_leases SET expires_at = ? WHERE suite = ? AND role = ? AND "
               "subject = ? AND annotator = ?", (expires, suite, role, subject, who))


def end_lease(db: Database, suite: str, role: str, subject: str, who: str, now: str) -> None:
    """Let a lease lapse now (its slot stays owned if the holder labelled the subject)."""
    db.execute("UPDATE annotation_leases SET expires_at = ? WHERE suite = ? AND role = ? AND "
               "subject = ? AND annotator = ? AND expires_at > ?",
               (now, suite, role, subject, who, now))


def live_leases(db: Database, suite: str, role: str, now: str) -> list[Lease]:
    return [Lease(*r) for r in db.execute(
        "SELECT suite, subject, role, slot, annotator, leased_at, expires_at FROM "
        "annotation_leases WHERE suite = ? AND role = ? AND expires_at > ? "
        "ORDER BY subject, slot", (suite, role, now))]


# ------------------------------------------------------------------ progress


def mine_count(db: Database, suite: str, campaign: str, cutoff: int, who: str) -> int:
    """Subjects of the queue `who` holds a current label on (walks their own events)."""
    return int(db.execute(
        "SELECT COUNT(*) FROM annotations e WHERE e.annotator = :who AND e.suite = :suite "
        f"AND {CURRENT} AND EXISTS (SELECT 1 FROM campaign_subjects c WHERE {_IN_QUEUE} "
        "AND c.subject = e.subject)", _params(suite, campaign, cutoff, who)).fetchone()[0])


def totals(db: Database, suite: str, campaign: str, cutoff: int, overlap: int) -> Totals:
    """Subjects in the queue and label slots filled (capped at `overlap` per subject). Scans
    the queue: call it from a worker on a large database."""
    total = int(db.execute(f"SELECT COUNT(*) FROM campaign_subjects c WHERE {_IN_QUEUE}",
                           _params(suite, campaign, cutoff)).fetchone()[0])
    filled = int(db.execute(
        "SELECT COALESCE(SUM(MIN(n, :k)), 0) FROM (SELECT (SELECT COUNT(*) FROM annotations e "
        f"WHERE e.suite = :suite AND e.subject = c.subject AND {CURRENT}) AS n "
        f"FROM campaign_subjects c WHERE {_IN_QUEUE})",
        _params(suite, campaign, cutoff, k=overlap)).fetchone()[0])
    return Totals(total, filled, total * overlap)
