"""The traffic suite's human labels, for the interfaces: how well the annotators agree (over a
campaign's pairs or every pair), each pair's reference label, and the pairs an adjudicator
decides.

A pair needs adjudication when two or more annotators' current labels differ on its policy
category or on its error verdict. A pair flagged as still holding sensitive content leaves the
figures whatever is decided, and a purged pair has no text to read: neither is a candidate.
Candidates go by pair id; the adjudicator's screen walks them with `next_pending` (undecided,
not held by another adjudicator) and `step` (any). Decisions, their undo and the adjudicator's
lease are the one adjudication path every suite shares (`adjudication` beside this module, with
suite "traffic").

The automatic labeller's predictions are not read here: the human reference is what the
labeller is measured against, so nothing about it reaches the annotators or the adjudicator.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from copal_tui.domain.traffic_rows import Vote
from copal_tui.metrics.traffic_agreement import (
    Reference,
    TrafficAgreement,
    references,
    traffic_agreement,
)
from store.annotation import queue, traffic_labels
from store.annotation.adjudication import Counts
from store.annotation.annotations import ADJUDICATOR
from store.db import Database, utcnow

SUITE = "traffic"


def agreement(db: Database, campaign: str | None = None) -> TrafficAgreement:
    """Agreement on category and on error among the current labels (of a campaign's pairs)."""
    found = traffic_labels.votes(db, campaign=campaign)
    return traffic_agreement([v for v in found if not v.decision])


def reference_labels(db: Database, campaign: str | None = None) -> list[Reference]:
    """Each labelled pair's reference label: its decision, else its annotators' majority."""
    found = traffic_labels.votes(db, campaign=campaign)
    return references([v for v in found if not v.decision], [v for v in found if v.decision])


@dataclass(frozen=True)
class Candidate:
    """A pair whose annotators disagree, why, and whether it is decided."""

    pair: str
    source: str
    reason: str
    decided: bool


def _reason(labels: list[Vote]) -> str | None:
    given = [r for r in labels if r.category is not None and r.erroneous is not None]
    if len({r.category for r in given}) > 1:
        return "annotators differ on category"
    if len({r.erroneous for r in given}) > 1:
        return "annotators differ on error"
    return None


def candidates(db: Database, search: str = "") -> list[Candidate]:
    """The pairs needing a decision, by id; `search` matches the id, source or reason."""
    by_pair: dict[str, list[Vote]] = {}
    decided: dict[str, Vote] = {}
    for vote in traffic_labels.votes(db):  # purged pairs are left out
        if vote.decision:
            decided[vote.pair] = vote
        else:
            by_pair.setdefault(vote.pair, []).append(vote)
    needle = search.strip().lower()
    out = []
    for pair, rows in by_pair.items():
        decision = decided.get(pair)
        if any(r.sensitive for r in rows) or (decision and decision.sensitive):
            continue
        why = _reason(rows)
        if why is None:
            continue
        if needle and not any(needle in s.lower() for s in (pair, rows[0].source, why)):
            continue
        out.append(Candidate(pair, rows[0].source, why, decision is not None))
    return sorted(out, key=lambda c: c.pair)


def next_pending(db: Database, after: str, search: str, adjudicator: str,
                 skip: Collection[str] = ()) -> str | None:
    """The next undecided candidate after `after`, wrapping round to the start, never one in
    `skip` (a decision still waiting for the database) nor one another adjudicator holds."""
    held = {lease.subject for lease in queue.live_leases(db, SUITE, ADJUDICATOR, utcnow())
            if lease.annotator != adjudicator}
    open_ = [c.pair for c in candidates(db, search)
             if not c.decided and c.pair not in skip and c.pair not in held]
    return next((p for p in open_ if p > after), open_[0] if open_ else None)


def step(db: Database, after: str, forward: bool, search: str) -> str | None:
    """The neighbouring candidate, decided or not."""
    pairs = [c.pair for c in candidates(db, search)]
    if forward:
        return next((p for p in pairs if p > after), None)
    return next((p for p in reversed(pairs) if p < after), None)


def counts(db: Database, search: str = "") -> Counts:
    found = candidates(db, search)
    return Counts(len(found), sum(c.decided for c in found))


def reason(db: Database, pair: str) -> str | None:
    """Why the pair is a candidate (None when it is not one)."""
    return next((c.reason for c in candidates(db) if c.pair == pair), None)
