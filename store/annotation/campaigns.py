"""Campaigns (migration m010): frozen, ordered lists of subjects of one suite.

A `sample` campaign is drawn once (`copal campaign create`) and never changes. A `default`
campaign (named `default:<suite>` or `default:dialogue:<judge>`) is a suite's queue order:
new subjects are appended when a queue starts, nobody's place moves, and each annotator sees
the prefix that was there when they started (`campaign_starts.cutoff`) until they refresh. So
nothing a pipeline run adds changes an annotator's queue or its denominator.

How a campaign's subjects are chosen and ordered is the service's business
(copal_tui.services.annotation); this module stores and reads them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from store.annotation.annotations import CURRENT
from store.db import Database, utcnow

SAMPLE, DEFAULT = "sample", "default"
# The cutoff of a campaign nobody froze (a sample campaign has no later positions).
ALL = 2**62


@dataclass(frozen=True)
class Campaign:
    name: str
    suite: str
    kind: str
    spec: dict[str, Any]
    created_at: str
    size: int


@dataclass(frozen=True)
class Candidate:
    """A subject that may enter a campaign, with the stratum it balances in."""

    subject: str
    stratum: str


@dataclass(frozen=True)
class Member:
    """One subject of a campaign, at its place."""

    position: int
    subject: str
    stratum: str


@dataclass(frozen=True)
class AnnotatorProgress:
    """What one person did on a campaign's subjects (up to their cutoff, if they froze one)."""

    annotator: str
    labelled: int
    skipped: int
    total: int


def _campaign(row: Any) -> Campaign:
    return Campaign(row["name"], row["suite"], row["kind"], json.loads(row["spec"] or "{}"),
                    row["created_at"], int(row["size"]))


_SELECT = ("SELECT c.*, (SELECT COUNT(*) FROM campaign_subjects s WHERE s.campaign = c.name) "
           "AS size FROM campaigns c")


def get(db: Database, name: str) -> Campaign | None:
    row = db.execute(f"{_SELECT} WHERE c.name = ?", (name,)).fetchone()
    return None if row is None else _campaign(row)


def all_campaigns(db: Database, kind: str | None = None) -> list[Campaign]:
    return [_campaign(r) for r in db.execute(
        f"{_SELECT} WHERE (? IS NULL OR c.kind = ?) ORDER BY c.created_at, c.name",
        (kind, kind))]


def create(db: Database, name: str, suite: str, kind: str, spec: dict[str, Any]) -> None:
    db.execute("INSERT INTO campaigns (name, suite, kind, spec, created_at) VALUES (?,?,?,?,?)",
               (name, suite, kind, json.dumps(spec, sort_keys=True), utcnow()))


def add_subjects(db: Database, name: str, rows: Iterable[tuple[str, str]]) -> int:
    """Append (subject, stratum) rows after the campaign's last position, in the given order;
    a subject already in it keeps its place. Returns how many were added."""
    start = last_position(db, name)
    seen = set(placed(db, name))
    fresh = []
    for subject, stratum in rows:
        if subject not in seen:
            seen.add(subject)
            fresh.append((subject, stratum))
    db.conn.executemany(
        "INSERT INTO campaign_subjects (campaign, position, subject, stratum) VALUES (?,?,?,?)",
        [(name, start + n, s, st) for n, (s, st) in enumerate(fresh, 1)])
    return len(fresh)


def last_position(db: Database, name: str) -> int:
    return int(db.execute("SELECT COALESCE(MAX(position), 0) FROM campaign_subjects "
                          "WHERE campaign = ?", (name,)).fetchone()[0])


def placed(db: Database, name: str) -> list[str]:
    """Every subject of the campaign (an index-only read)."""
    return [r[0] for r in db.execute("SELECT subject FROM campaign_subjects WHERE campaign = ?",
                                     (name,))]


def stratum_sizes(db: Database, name: str) -> dict[str, int]:
    return {r[0]: int(r[1]) for r in db.execute(
        "SELECT stratum, COUNT(*) FROM campaign_subjects WHERE campaign = ? GROUP BY stratum",
        (name,))}


def members(db: Database, name: str, cutoff: int = ALL) -> list[Member]:
    return [Member(int(r[0]), r[1], r[2]) for r in db.execute(
        "SELECT position, subject, stratum FROM campaign_subjects WHERE campaign = ? "
        "AND position <= ? ORDER BY position", (name, cutoff))]


# ------------------------------------------------------------------ frozen starts


def cutoff_of(db: Database, name: str, annotator: str) -> int | None:
    row = db.execute("SELECT cutoff FROM campaign_starts WHERE campaign = ? AND annotator = ?",
                     (name, annotator)).fetchone()
    return None if row is None else int(row[0])


def freeze(db: Database, name: str, annotator: str, cutoff: int) -> None:
    """Set the last position of the campaign the annotator's queue holds."""
    db.execute("INSERT INTO campaign_starts (campaign, annotator, cutoff, frozen_at) "
               "VALUES (?, ?, ?, ?) ON CONFLICT (campaign, annotator) DO UPDATE SET "
               "cutoff = excluded.cutoff, frozen_at = excluded.frozen_at",
               (name, annotator, cutoff, utcnow()))


# ------------------------------------------------------------------ progress


def progress(db: Database, name: str, suite: str) -> list[AnnotatorProgress]:
    """Per person who labelled or skipped any of the campaign's subjects: their current
    labels and their skips (not undone) among them, and the size of their queue (their frozen
    prefix of a default campaign, the whole of a sample one)."""
    done = ("+e.action = 'skip' AND NOT EXISTS (SELECT 1 FROM annotations u WHERE "
            "u.suite = e.suite AND u.subject = e.subject AND u.role = 'annotator' AND "
            "u.annotator = e.annotator AND u.id > e.id AND +u.action IN ('label', 'undo'))")
    rows = db.execute(
        "SELECT e.annotator, COUNT(DISTINCT CASE WHEN " + CURRENT + " THEN e.subject END), "
        "COUNT(DISTINCT CASE WHEN " + done + " THEN e.subject END), "
        "COALESCE((SELECT s.cutoff FROM campaign_starts s WHERE s.campaign = c.campaign "
        "AND s.annotator = e.annotator), ?) FROM campaign_subjects c CROSS JOIN annotations e "
        "WHERE c.campaign = ? AND e.suite = ? AND e.subject = c.subject "
        "AND e.role = 'annotator' AND c.position <= COALESCE((SELECT s.cutoff FROM "
        "campaign_starts s WHERE s.campaign = c.campaign AND s.annotator = e.annotator), ?) "
        "GROUP BY e.annotator HAVING COUNT(DISTINCT CASE WHEN " + CURRENT + " OR " + done +
        " THEN e.subject END) > 0 ORDER BY e.annotator", (ALL, name, suite, ALL)).fetchall()
    out = []
    for who, labelled, skipped, cutoff in rows:
        total = int(db.execute("SELECT COUNT(*) FROM campaign_subjects WHERE campaign = ? "
                               "AND position <= ?", (name, cutoff)).fetchone()[0])
        out.append(AnnotatorProgress(who, int(labelled), int(skipped), total))
    return out
