"""Assignment of responses to annotators (the label queue) and adjudication decisions.

The rules:
- Order: every eligible response gets a fixed queue position once (`ensure_order`). Responses
  are stratified by (pattern, model): the k-th response of every stratum comes before the
  (k+1)-th of any, so the first few dozen labels already cover every pattern and model. Within a
  stratum and between strata the order follows sha256 of the ids, so it is stable across runs
  and machines. Responses added later are appended; nobody's place moves.
- Overlap: each response is labelled by up to `overlap` annotators. Capacity counts annotators
  with a current label plus annotators holding a live lease.
- Leases: taking a response takes a numbered slot (0..overlap-1) for `lease_minutes`, in one
  `BEGIN IMMEDIATE` transaction, so two annotators working at once never get the same slot. A
  slot stays owned once its holder labels the response; a lease that expires unlabelled frees
  it. The screen renews the lease while the annotator is on the response.
- Resume: on start an annotator gets back their own live, unfinished lease, else the first
  response in order they may take; done = labelled or skipped (an undo reopens it).

Label writes go through copal_tui.labeling (one committed transaction each). Adjudication
decisions and their undo are appended here (rows in `adjudications`; nothing edited in place).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from copal_tui import labeling
from copal_tui.domain.contract import content_sha256, evaluate, item_kinds, unknown_ids
from store import adjudication_sql, queue_sql
from store.db import Database, StoreError, utcnow, write


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stratum_of(pattern: str | None, model: str) -> str:
    return f"{pattern or '-'}|{model}"


def _later(minutes: float) -> str:
    return (datetime.now(UTC) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ensure_order(db: Database) -> int:
    """Give every eligible response without one a queue position; returns how many were added.

    Safe to call from several processes at once: the work happens inside one write
    transaction, so the second caller finds nothing left to do.
    """
    if not queue_sql.unplaced_ids(db):  # the common case: an index scan, no write lock
        return 0
    with write(db):
        new = queue_sql.eligible_among(db, queue_sql.unplaced_ids(db))
        if not new:
            return 0
        sizes = queue_sql.stratum_sizes(db)
        seen: dict[str, int] = {}
        stratum_key: dict[str, str] = {}
        keyed = []
        for row in sorted(new, key=lambda r: _sha(r["response_id"])):
            stratum = stratum_of(row["pattern"], row["model"])
            if stratum not in stratum_key:
                stratum_key[stratum] = _sha(stratum)
            rank = sizes.get(stratum, 0) + seen.get(stratum, 0)
            seen[stratum] = seen.get(stratum, 0) + 1
            keyed.append(((rank, stratum_key[stratum]), row["response_id"], row["item_id"],
                          stratum))
        keyed.sort(key=lambda k: k[0])
        start = queue_sql.max_position(db)
        return queue_sql.insert_order(
            db, ((rid, item, start + n, st) for n, (_, rid, item, st) in enumerate(keyed, 1)))


@dataclass(frozen=True)
class Progress:
    mine: int
    total: int
    filled: int
    slots: int


class LabelQueue:
    """One annotator's view of the queue over one connection (the caller's thread)."""

    queue = "label"

    def __init__(self, db: Database, annotator: str, *, overlap: int = 2,
                 lease_minutes: float = 30) -> None:
        self.db = db
        self.annotator = annotator
        self.overlap = overlap
        self.lease_minutes = lease_minutes

    # -------------------------------------------------------------- taking responses

    def resume(self) -> str | None:
        """Where this annotator left: their live unfinished lease, else the next open slot."""
        mine = queue_sql.open_lease(self.db, self.annotator, utcnow())
        if mine is not None:
            self.renew(mine)
            return mine
        return self.take_next()

    def take_next(self, after: int = 0) -> str | None:
        """Lease the first response after position `after` with a slot open to us."""
        while True:
            # Find candidates with a plain read, then re-check and lease one under the write
            # lock: the lock is held for one response, not for a scan of the queue.
            found = queue_sql.next_open(self.db, self.annotator, self.overlap, utcnow(),
                                        after=after, limit=8)
            if not found:
                return None
            for rid, _pos in found:
                if self._lease(rid, must_fit=True):
                    return rid
            after = found[-1][1]

    def _lease(self, response_id: str, *, must_fit: bool) -> bool:
        with write(self.db):
            now = utcnow()
            if must_fit and queue_sql.holders(self.db, response_id, self.annotator, now) \
                    >= self.overlap:
                return False
            queue_sql.drop_stale_leases(self.db, self.queue, response_id, now)
            mine = queue_sql.lease_of(self.db, self.queue, response_id, self.annotator)
            if mine is not None:
                queue_sql.extend_lease(self.db, self.queue, response_id, self.annotator,
                                       _later(self.lease_minutes))
                return True
            held = queue_sql.held_slots(self.db, self.queue, response_id, now)
            free = [s for s in range(self.overlap) if s not in held]
            if not free:
                return not must_fit
            queue_sql.put_lease(self.db, self.queue, response_id, self.annotator, free[0], now,
                                _later(self.lease_minutes))
            return True

    def renew(self, response_id: str) -> None:
        """Keep (or retake) our slot while we are on the response. Going back to a response
        we labelled never fails: our label already owns a slot or exceeds overlap harmlessly."""
        self._lease(response_id, must_fit=False)

    def release(self, response_id: str) -> None:
        """Give the slot back now unless we labelled the response (quit, skip)."""
        with write(self.db):
            queue_sql.end_lease(self.db, self.queue, response_id, self.annotator, utcnow())

    # -------------------------------------------------------------- label actions

    def submit(self, response_id: str, observed: Sequence[str]) -> labeling.Submitted:
        done = labeling.submit(self.db, response_id, self.annotator, observed)
        self.renew(response_id)  # the label now owns the slot
        return done

    def skip(self, response_id: str) -> None:
        labeling.record(self.db, response_id, self.annotator, "skip")
        self.release(response_id)

    def undo(self) -> tuple[str, list[str]] | None:
        """Retract our latest current label; returns its response and the marks it had."""
        last = queue_sql.last_label_of(self.db, self.annotator)
        rid = labeling.undo_last(self.db, self.annotator)
        if rid is None:
            return None
        self.renew(rid)
        marks = list(last["observed"]) if last is not None and last["response_id"] == rid else []
        return rid, marks

    def label(self, response_id: str) -> dict[str, Any] | None:
        """Our current label on the response (None when we have none)."""
        return queue_sql.label_of(self.db, response_id, self.annotator)

    def note(self, response_id: str, text: str) -> int:
        return labeling.record(self.db, response_id, self.annotator, "note", note=text)

    def flag(self, response_id: str, reason: str, note: str | None = None) -> int:
        return labeling.record(self.db, response_id, self.annotator, "flag", flag=reason,
                               note=note)

    # -------------------------------------------------------------- moving and counting

    def step(self, response_id: str, forward: bool) -> str | None:
        """The neighbour on our trail (responses we labelled or hold), in queue order."""
        pos = queue_sql.position_of(self.db, response_id)
        if pos is None:
            return None
        found = queue_sql.trail_step(self.db, self.annotator, pos, forward, utcnow())
        return None if found is None else found[0]

    def step_last(self) -> str | None:
        """The latest response on our trail (going back from the end of the queue)."""
        found = queue_sql.trail_step(self.db, self.annotator, 2**62, False, utcnow())
        return None if found is None else found[0]

    def mine(self) -> int:
        """How many responses of the queue we hold a current label on (cheap)."""
        return queue_sql.mine_count(self.db, self.annotator)

    def progress(self) -> Progress:
        """Our count and the queue's totals (the totals scan the queue: use a worker)."""
        t = queue_sql.queue_totals(self.db, self.overlap)
        return Progress(self.mine(), t["total"], t["filled"], t["slots"])


# ------------------------------------------------------------------ adjudication

FLAG_REASONS = ("contract defect", "unnatural query", "ambiguous")


def adjudicate(db: Database, response_id: str, adjudicator: str, observed: Sequence[str],
               note: str | None = None) -> labeling.Submitted:
    """Record the adjudicated reference marks for a response (one committed transaction)."""
    with write(db):
        content = queue_sql.response_context(db, response_id)
        if content is None:
            raise StoreError(f"unknown response {response_id!r}")
        req = [c["id"] for c in content["required"]]
        forb = [c["id"] for c in content["forbidden"]]
        bad = unknown_ids(req, forb, observed)
        if bad:
            raise StoreError(f"not contract items of this response: {', '.join(bad)}")
        verdict = evaluate(req, forb, observed, item_kinds(content["required"]))
        sha = content_sha256(content["query"], content["required"], content["forbidden"],
                             content["response"] or "")
        event = adjudication_sql.append_adjudication(
            db, response_id=response_id, adjudicator=adjudicator, action="decide",
            observed=list(observed), error=verdict.error, direction=verdict.direction.value,
            note=note, content_sha256=sha)
        queue_sql.end_lease(db, "adjudicate", response_id, adjudicator, utcnow())
    return labeling.Submitted(event, verdict.error, verdict.direction.value)


def undo_adjudication(db: Database, adjudicator: str) -> tuple[str, list[str]] | None:
    """Retract the adjudicator's latest decision that is still current (appends an undo row)."""
    with write(db):
        last = adjudication_sql.latest_adjudication_by(db, adjudicator)
        if last is None:
            return None
        adjudication_sql.append_adjudication(db, response_id=last["response_id"],
                                      adjudicator=adjudicator, action="undo")
        return str(last["response_id"]), list(last["observed"] or [])


def lease_adjudication(db: Database, response_id: str, adjudicator: str,
                       minutes: float) -> bool:
    """Hold a response while deciding it, so two adjudicators do not decide it at once.
    Returns False when another adjudicator holds it (the caller may still show it)."""
    with write(db):
        now = utcnow()
        queue_sql.drop_stale_leases(db, "adjudicate", response_id, now)
        mine = queue_sql.lease_of(db, "adjudicate", response_id, adjudicator)
        if mine is None and queue_sql.held_slots(db, "adjudicate", response_id, now):
            return False
        queue_sql.put_lease(db, "adjudicate", response_id, adjudicator, 0, now,
                            _later(minutes))
        return True


def release_adjudication(db: Database, response_id: str, adjudicator: str) -> None:
    with write(db):
        queue_sql.end_lease(db, "adjudicate", response_id, adjudicator, utcnow())
