"""The annotation queue, one implementation for every suite (COPAL responses, COMPASS
responses, judge mistakes on dialogue turns); suite differences are in
copal_tui.services.annotation.suites.

The rules:
- Campaign: a queue walks one campaign's frozen list of subjects
  (store/annotation/campaigns.py). With `--campaign NAME` it is that sample, all of it. Without
  one it is the suite's default campaign (`default:<suite>`, `default:dialogue:<judge>` for one
  judge's mistakes), an append-only order: `prepare` appends subjects that became annotatable
  since, and the annotator's queue is the prefix that existed when they first started (their
  cutoff). New subjects (a pipeline run, an import) join it only when the annotator refreshes
  (`copal label --refresh`); so nobody's queue, place or denominator moves under them.
- Overlap: each subject is labelled by up to `overlap` annotators (COPAL_OVERLAP). Capacity
  counts annotators with a current label plus annotators holding a live lease.
- Leases: taking a subject takes a numbered slot (0..overlap-1) for `lease_minutes`
  (COPAL_LEASE_MINUTES) in one `BEGIN IMMEDIATE` transaction, so two annotators working at once
  never get the same slot. A slot stays owned once its holder labels the subject; a lease that
  expires unlabelled frees it. The screens renew the lease while the annotator is on it.
- Done: labelled or skipped, and not undone since. Undo retracts the annotator's latest label
  that is still current (in a named campaign: among its subjects; else in the suite, or among
  one judge's mistakes) by appending an undo event, and reopens its subject.
- Resume: an annotator gets back their own live, unfinished lease, else the first subject in
  order they may take.

Writes take what they record as its payload model (copal_tui.domain.annotation.payloads: the
suite's label model, a Remark for a note or flag), built by the caller, and refuse any other
type before anything is written. Every write is one committed transaction, so a label survives
a killed process the moment the call returns.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from copal_tui.domain.annotation.subjects import check
from copal_tui.services.annotation.suites import Rules, rules
from store.annotation import annotations as log
from store.annotation import campaigns, queue
from store.annotation.annotations import ANNOTATOR, Annotation
from store.db import Database, StoreError, utcnow, write

if TYPE_CHECKING:
    from copal_tui.domain.annotation.payloads import LabelPayload, Payload, Remark

DEFAULT_PREFIX = "default:"


def default_campaign(suite: str, judge: str | None = None) -> str:
    """The name of a suite's default campaign (one per judge for judge mistakes)."""
    return f"{DEFAULT_PREFIX}{suite}" + (f":{judge}" if judge else "")


def later(minutes: float) -> str:
    return (datetime.now(UTC) + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Progress:
    mine: int  # subjects of the queue with the annotator's current label
    total: int  # subjects in the queue (the denominator)
    filled: int  # label slots filled, capped at `overlap` per subject
    slots: int  # total * overlap


def tally(mine: int, total: int | None, campaign: str | None, done: str = "labelled") -> str:
    """The progress words of a status line: "3/72 labelled", or "12/200 of campaign NAME"."""
    shown = "?" if total is None else str(total)
    return f"{mine}/{shown} of campaign {campaign}" if campaign else f"{mine}/{shown} {done}"


class AnnotationQueue:
    """One annotator's view of one queue over one connection (the caller's thread)."""

    def __init__(self, db: Database, suite: str, annotator: str, *, campaign: str | None = None,
                 judge: str | None = None, overlap: int = 2, lease_minutes: float = 30) -> None:
        self.db = db
        self.suite = suite
        self.rules: Rules[Any] = rules(suite)  # StoreError for an unknown suite
        self.annotator = annotator
        self.sample = campaign  # a named campaign, or None for the default queue
        self.judge = judge
        self.campaign = campaign or default_campaign(suite, judge)
        self.overlap = overlap
        self.lease_minutes = lease_minutes
        self._cutoff: int | None = None

    @classmethod
    def of_campaign(cls, db: Database, name: str, annotator: str,
                    **options: Any) -> AnnotationQueue:
        """The queue of a named campaign (its suite follows from it)."""
        found = campaigns.get(db, name)
        if found is None or found.kind != campaigns.SAMPLE:
            raise StoreError(f"no campaign named {name!r} (`copal campaign list` shows them)")
        return cls(db, found.suite, annotator, campaign=name, **options)

    # -------------------------------------------------------------- the frozen list

    def prepare(self, *, refresh: bool = False) -> int:
        """Append newly annotatable subjects to the default campaign and freeze this
        annotator's queue at its first start (or again, with `refresh`). Returns how many
        subjects were appended. Safe from several processes at once: the work happens in one
        write transaction, so the second caller finds nothing left to do."""
        self._cutoff = None
        if self.sample is not None:
            return 0
        exists = campaigns.get(self.db, self.campaign) is not None
        # An annotator who started on an empty queue has nothing frozen to keep.
        frozen = bool(campaigns.cutoff_of(self.db, self.campaign, self.annotator))
        # Read first: the common case (nothing new, already frozen) takes no write lock.
        if exists and frozen and not refresh and \
                not self.rules.unplaced(self.db, self.campaign, self.judge):
            return 0
        with write(self.db):
            if campaigns.get(self.db, self.campaign) is None:
                campaigns.create(self.db, self.campaign, self.suite, campaigns.DEFAULT,
                                 {"judge": self.judge} if self.judge else {})
            new = self.rules.unplaced(self.db, self.campaign, self.judge)
            added = campaigns.add_subjects(self.db, self.campaign,
                                           ((c.subject, c.stratum) for c in new))
            if refresh or not campaigns.cutoff_of(self.db, self.campaign, self.annotator):
                campaigns.freeze(self.db, self.campaign, self.annotator,
                                 campaigns.last_position(self.db, self.campaign))
        return added

    @property
    def cutoff(self) -> int:
        """The last position of the campaign in this annotator's queue."""
        if self._cutoff is not None:
            return self._cutoff
        if self.sample is not None:
            self._cutoff = campaigns.ALL
            return self._cutoff
        frozen = campaigns.cutoff_of(self.db, self.campaign, self.annotator)
        if frozen is None:  # not started yet (the database was busy): what is there now
            return campaigns.last_position(self.db, self.campaign)
        self._cutoff = frozen
        return frozen

    def reload(self) -> None:
        """Forget the cached cutoff (another connection froze or refreshed it)."""
        self._cutoff = None

    # -------------------------------------------------------------- taking subjects

    def resume(self, skip: Collection[str] = ()) -> str | None:
        """Where this annotator left: their live unfinished lease, else the next open one."""
        mine = queue.open_lease(self.db, self.suite, self.campaign, self.cutoff,
                                    self.annotator, utcnow())
        if mine is not None and mine not in skip:
            self.renew(mine)
            return mine
        return self.take_next(skip=skip)

    def take_next(self, after: int = 0, skip: Collection[str] = ()) -> str | None:
        """Lease the first subject after position `after` with a slot open to us (never one in
        `skip`: a subject whose label still waits for the database)."""
        while True:
            # Find candidates with a plain read, then re-check and lease one under the write
            # lock: the lock is held for one subject, not for a scan of the queue.
            found = self._open(after, 8)
            if not found:
                return None
            for place in found:
                if place.subject not in skip and self._lease(place.subject, must_fit=True):
                    return place.subject
            after = found[-1].position

    def candidate(self, after: int = 0, skip: Collection[str] = ()) -> str | None:
        """What `resume`/`take_next` would give, found with reads only (for when the database
        is busy: the lease follows once it is free)."""
        if after == 0:
            mine = queue.open_lease(self.db, self.suite, self.campaign, self.cutoff,
                                        self.annotator, utcnow())
            if mine is not None and mine not in skip:
                return mine
        while True:
            found = self._open(after, 8)
            if not found:
                return None
            for place in found:
                if place.subject not in skip:
                    return place.subject
            after = found[-1].position

    def _open(self, after: int, limit: int) -> list[queue.Place]:
        return queue.next_open(self.db, self.suite, self.campaign, self.cutoff,
                                   self.annotator, self.overlap, utcnow(), after=after,
                                   limit=limit)

    def _lease(self, subject: str, *, must_fit: bool) -> bool:
        # Leases are committed without waiting for the disk: one lost in a power cut expires
        # anyway, and a label (durable) that renews one syncs it with itself.
        with write(self.db, durable=False):
            now = utcnow()
            if must_fit and queue.holders(self.db, self.suite, subject, self.annotator,
                                              now) >= self.overlap:
                return False
            queue.drop_stale_leases(self.db, self.suite, ANNOTATOR, subject, now)
            if queue.has_lease(self.db, self.suite, ANNOTATOR, subject, self.annotator):
                queue.extend_lease(self.db, self.suite, ANNOTATOR, subject,
                                       self.annotator, later(self.lease_minutes))
                return True
            held = queue.held_slots(self.db, self.suite, ANNOTATOR, subject, now)
            free = [s for s in range(self.overlap) if s not in held]
            if not free:
                return not must_fit
            queue.put_lease(self.db, self.suite, ANNOTATOR, subject, self.annotator,
                                free[0], now, later(self.lease_minutes))
            return True

    def renew(self, subject: str) -> None:
        """Keep (or retake) our slot while we are on the subject. Going back to a subject we
        labelled never fails: our label already owns a slot or exceeds overlap harmlessly."""
        self._lease(subject, must_fit=False)

    def release(self, subject: str) -> None:
        """Give the slot back now unless we labelled the subject (quit, skip, moving on)."""
        with write(self.db, durable=False):
            queue.end_lease(self.db, self.suite, ANNOTATOR, subject, self.annotator,
                                utcnow())

    def move(self, old: str | None, new: str | None) -> None:
        """Give `old`'s slot back and keep (or take) one on `new`, in one transaction: one
        commit per move through the queue instead of two, not waiting for the disk."""
        with write(self.db, durable=False):
            if old is not None:
                self.release(old)
            if new is not None:
                self.renew(new)

    # -------------------------------------------------------------- writing

    def _append(self, subject: str, action: str, payload: Payload | None = None,
                sha: str | None = None) -> int:
        return log.append(self.db, suite=self.suite, subject=subject, annotator=self.annotator,
                          action=action, payload=payload, content_sha256=sha,
                          campaign=self.sample)

    def submit(self, subject: str, label: LabelPayload) -> Annotation:
        """Record the annotator's label (the suite's payload model: a CopalLabel, a
        CompassLabel, a DialogueReview) as their current label; returns the stored event.
        Another model, or a dict, is a TypeError before anything is written."""
        check(self.suite, ANNOTATOR, "label", label)
        # One transaction with the lease renewal (the label now owns the slot): a write the
        # screens retry while the database is busy must never land twice.
        with write(self.db):
            stored, sha = self.rules.label(self.db, subject, label)
            event = log.get(self.db, self._append(subject, "label", stored, sha))
            self.renew(subject)
        assert event is not None
        return event

    def skip(self, subject: str) -> int:
        """Pass the subject over (done for us until an undo) and give its slot back."""
        with write(self.db):
            self.rules.require(self.db, subject)
            event_id = self._append(subject, "skip")
            self.release(subject)
        return event_id

    def undo(self) -> Annotation | None:
        """Retract our latest label that is still current (appends an undo): in a named
        campaign, among its subjects; in the default queue, in the suite (of one judge, for
        one judge's mistakes). Returns the retracted label, or None when there is none."""
        with write(self.db):
            last = log.last_current(self.db, self.suite, self.annotator,
                                    campaign=self.sample, judge=self.judge)
            if last is None:
                return None
            self._append(last.subject, "undo")
            self.renew(last.subject)
        return last

    def remark(self, subject: str, remark: Remark) -> int:
        """Leave a note, or a flag (a remark with a reason), on the subject."""
        # A dict has no action: checked as a note, it is refused for not being a Remark.
        check(self.suite, ANNOTATOR, getattr(remark, "action", "note"), remark)
        with write(self.db):
            self.rules.require(self.db, subject)
            return self._append(subject, remark.action, remark)

    # -------------------------------------------------------------- reading

    def current(self, subject: str) -> Annotation | None:
        """Our current label on the subject (None when we have none)."""
        return log.current(self.db, self.suite, subject, self.annotator)

    def position(self, subject: str | None) -> int | None:
        return None if subject is None else \
            queue.position_of(self.db, self.campaign, subject)

    def neighbour(self, subject: str | None, forward: bool) -> str | None:
        """The next (previous) subject of the queue, done or not; from past the end (None)
        going back, the last one."""
        if subject is None:
            if forward:
                return None
            pos = campaigns.ALL
        else:
            pos = self.position(subject) or 0
        found = queue.neighbour(self.db, self.campaign, self.cutoff, pos, forward)
        return None if found is None else found.subject

    def step(self, subject: str, forward: bool) -> str | None:
        """The neighbour on our trail (subjects we labelled or hold), in queue order."""
        pos = self.position(subject)
        if pos is None:
            return None
        found = queue.trail_step(self.db, self.suite, self.campaign, self.cutoff,
                                     self.annotator, pos, forward, utcnow())
        return None if found is None else found.subject

    def step_last(self) -> str | None:
        """The latest subject on our trail (going back from the end of the queue)."""
        found = queue.trail_step(self.db, self.suite, self.campaign, self.cutoff,
                                     self.annotator, campaigns.ALL, False, utcnow())
        return None if found is None else found.subject

    def mine(self) -> int:
        """How many subjects of the queue we hold a current label on (cheap)."""
        return queue.mine_count(self.db, self.suite, self.campaign, self.cutoff,
                                    self.annotator)

    def progress(self) -> Progress:
        """Our count and the queue's totals (the totals scan the queue: use a worker)."""
        t = queue.totals(self.db, self.suite, self.campaign, self.cutoff, self.overlap)
        return Progress(self.mine(), t.total, t.filled, t.slots)

    def tally(self, mine: int | None = None, total: int | None = None,
              done: str = "labelled") -> str:
        return tally(self.mine() if mine is None else mine, total, self.sample, done)
