"""The traffic suite's part of the one annotation queue: a subject is a stored pair
(`traffic_pairs.id`), a label a `TrafficLabel`, what the annotator was shown the pair's context,
query and response (their hash makes a label stale if the text changes, as a purge does).

Order: a seeded random sample. Each pair's place is the sha256 of the campaign's seed and its
id, so the same seed draws the same pairs on any machine, and the first N of the order are a
simple random sample of size N. With `balanced` (a campaign stratified by source) each source
gets its share of the sample in proportion to its pairs (largest remainders), drawn in the same
order within the source. Pairs whose text was purged are never drawn.

Campaigns draw by the world a pair's log is linked to (`--world`) and by source (`--model`: a
deployed chatbot's traffic is split by source, not by model); `copal campaign show` gives the
annotators' agreement on category and on error (copal_tui.services.annotation.traffic).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from copal_tui.services import launch
from copal_tui.services.annotation.suites import (
    WORLD,
    Agreement,
    AgreementRow,
    Draw,
    Filters,
    Rules,
)
from store.annotation.campaigns import Candidate
from store.artifacts import traffic
from store.db import Database, StoreError

if TYPE_CHECKING:
    # The payload model (pydantic) loads with the first label, as the other suites' do: a
    # campaign's draw and a queue's start do without it.
    from copal_tui.domain.traffic import TrafficLabel


def seeded(rows: Sequence[tuple[str, str]], seed: int) -> list[Candidate]:
    """(id, source) rows in the seed's order (sha256 of "seed:id"), as candidates stratified
    by source."""
    # The digests' bytes sort as their hex spellings do. The candidates are made in the rows'
    # order and then reordered: made in the sample's order, each row is a cache miss (at 1M
    # pairs, 2 s against 0.4 s).
    prefix = f"{seed}:".encode()
    sha256 = hashlib.sha256
    places = [sha256(prefix + pid.encode()).digest() for pid, _ in rows]
    made = [Candidate(*row) for row in rows]
    return [made[i] for i in sorted(range(len(made)), key=places.__getitem__)]


def proportional(found: Sequence[Candidate], size: int) -> list[Candidate]:
    """The first `size` of `found` (in its order) with each stratum's count in proportion to
    its share of `found`: floors first, the remaining places to the largest remainders (ties
    to the stratum named first)."""
    if size >= len(found):
        return list(found)
    total = Counter(c.stratum for c in found)
    quota = {s: size * n // len(found) for s, n in total.items()}
    left = size - sum(quota.values())
    by_remainder = sorted(total, key=lambda s: (-(size * total[s] % len(found)), s))
    for s in by_remainder[:left]:
        quota[s] += 1
    taken: Counter[str] = Counter()
    chosen = []
    for c in found:
        if taken[c.stratum] < quota[c.stratum]:
            taken[c.stratum] += 1
            chosen.append(c)
    return chosen


class Traffic(Rules["TrafficLabel"]):
    name = "traffic"
    seeded = True
    draws_by: ClassVar[Mapping[str, Draw]] = {
        "worlds": replace(WORLD, means="the linked world"),
        "models": Draw("the source of an imported traffic log", launch.traffic_sources,
                       means="the source"),
    }

    def agreement(self, db: Database, campaign: str) -> Agreement:
        from copal_tui.services.annotation import traffic as labels

        found = labels.agreement(db, campaign)
        rows = tuple(AgreementRow(f.field, f.n_pairs, f.n_annotators, f.kappa, f.alpha)
                     for f in (found.category, found.error))
        return Agreement("pairs", rows, f"{found.excluded_sensitive} pair(s) flagged sensitive "
                         "left out", found)

    def draw(self, found: list[Candidate], balanced: bool, size: int | None) -> list[Candidate]:
        # The seed's order is already a simple random sample; balanced keeps each source's share.
        if size is None:
            return found
        return proportional(found, size) if balanced else found[:size]

    def candidates(self, db: Database, filters: Filters) -> list[Candidate]:
        # Filters: `worlds` are the linked worlds, `models` the sources (what a deployed bot's
        # traffic is split by). A million pairs are two million objects kept alive: the cyclic
        # collector, walking them again and again while they are made, doubled the time.
        from copal_tui.interchange.strict import paused_gc

        with paused_gc():
            rows = traffic.pair_ids(db, sources=filters.models, worlds=filters.worlds)
            return seeded(rows, filters.seed)

    def unplaced(self, db: Database, campaign: str, judge: str | None) -> list[Candidate]:
        # A queue's every start asks this: when nothing was imported since, it is two index
        # scans instead of every pair read, hashed and sorted.
        new = traffic.unplaced(db, campaign)
        if not new:
            return []
        from copal_tui.interchange.strict import paused_gc

        with paused_gc():
            return seeded(new, Filters().seed)

    def require(self, db: Database, subject: str) -> None:
        found = traffic.pair(db, subject)
        if found is None:
            raise StoreError(f"unknown traffic pair {subject!r}")
        if found.purged_at is not None:
            raise StoreError(f"the text of traffic pair {subject!r} was purged")

    def label(self, db: Database, subject: str,
              label: TrafficLabel) -> tuple[TrafficLabel, str | None]:
        found = traffic.pair(db, subject)
        if found is None:
            raise StoreError(f"unknown traffic pair {subject!r}")
        if found.purged_at is not None:
            raise StoreError(f"the text of traffic pair {subject!r} was purged")
        named = set(label.policies or [])
        if named and found.world_id is None:
            raise StoreError("this pair's log is linked to no world: it names no policy")
        if named:
            known = {str(r[0]) for r in db.execute("SELECT id FROM policies WHERE world_id = ?",
                                                   (found.world_id,))}
            unknown = sorted(named - known)
            if unknown:
                raise StoreError(f"not policies of world {found.world_id}: "
                                 f"{', '.join(unknown)}")
        shown = json.dumps([found.context, found.query, found.response], ensure_ascii=False)
        note = label.note if label.note else None  # an empty note is no note
        stored = label if note == label.note else label.model_copy(update={"note": note})
        return stored, hashlib.sha256(shown.encode("utf-8")).hexdigest()
